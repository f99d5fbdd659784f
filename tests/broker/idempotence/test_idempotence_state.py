"""Producer state in process: snapshots, replay after them, expiry, sequence wrap-around."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from seaway.broker.log.config import LogConfig
from seaway.broker.log.log_manager import LogManager
from seaway.broker.log.partition_log import PartitionLog
from seaway.broker.producer.manager import ProducerStateManager, snapshot_offsets
from seaway.protocol.errors import OutOfOrderSequenceNumberError
from seaway.protocol.records import Record, build_batch

pytestmark = pytest.mark.timeout(30)

T0 = 1_700_000_000_000
HOUR = 3_600_000
YEARS = 100 * 365 * 24 * HOUR  # expiry is measured against the wall clock, T0 is in the past


@pytest.fixture
def logs(tmp_path: Path) -> Iterator[LogManager]:
    manager = LogManager([tmp_path / "logs"], LogConfig())
    manager.load()
    manager.create_topic("t", 1)
    yield manager
    manager.close()


def _batch(pid: int, seq: int, ts: int = T0, n: int = 2) -> bytes:
    return build_batch([Record(i, ts, b"k", b"v") for i in range(n)], producer_id=pid, producer_epoch=0,
                       base_sequence=seq)


def _log(logs: LogManager) -> PartitionLog:
    plog = logs.get_log("t", 0)
    assert plog is not None
    return plog


def test_snapshot_then_replay_rebuilds_the_same_state(logs: LogManager) -> None:
    plog = _log(logs)
    manager = ProducerStateManager(logs, expiration_ms=YEARS)
    for i in range(3):
        manager.append(plog, _batch(5, 2 * i), T0)
    snapshot = manager.take_snapshot(plog)
    assert snapshot is not None and snapshot_offsets(plog.directory) == [6]
    for i in range(3, 5):
        manager.append(plog, _batch(5, 2 * i), T0)
    manager.append(plog, _batch(9, 100), T0)

    rebuilt = ProducerStateManager(logs, expiration_ms=YEARS)  # a restart: snapshot at 6 + replay
    state = rebuilt.state_of(plog)
    assert sorted(state.producers) == [5, 9]
    assert [b.first_offset for b in state.producers[5].batches] == [0, 2, 4, 6, 8]
    assert rebuilt.append(plog, _batch(5, 4), T0).base_offset == 4, "a duplicate from before the snapshot"
    assert rebuilt.append(plog, _batch(5, 10), T0).base_offset == 12
    with pytest.raises(OutOfOrderSequenceNumberError):
        rebuilt.append(plog, _batch(9, 105), T0)


def test_idle_producers_expire_and_snapshots_are_pruned(logs: LogManager) -> None:
    plog = _log(logs)
    manager = ProducerStateManager(logs, expiration_ms=HOUR)
    manager.append(plog, _batch(1, 0, ts=T0), T0)
    manager.append(plog, _batch(2, 0, ts=T0 + HOUR), T0 + HOUR)
    for i in range(1, 4):
        manager.append(plog, _batch(2, 2 * i, ts=T0 + HOUR), T0 + HOUR)
        manager.take_snapshot(plog)
    assert len(snapshot_offsets(plog.directory)) == 2, "the two newest snapshots are kept"
    manager.maintain(T0 + HOUR + 1)
    assert sorted(manager.state_of(plog).producers) == [2]
    # Forgotten, producer 1 may continue at any sequence (as an unknown producer would).
    manager.append(plog, _batch(1, 77), T0)
    assert manager.state_of(plog).producers[1].last_seq == 78


def test_sequence_wraps_after_int32_max(logs: LogManager) -> None:
    plog = _log(logs)
    manager = ProducerStateManager(logs)
    manager.append(plog, _batch(3, 2**31 - 2), T0)
    assert manager.append(plog, _batch(3, 0), T0).base_offset == 2
    with pytest.raises(OutOfOrderSequenceNumberError):
        manager.append(plog, _batch(3, 5), T0)
