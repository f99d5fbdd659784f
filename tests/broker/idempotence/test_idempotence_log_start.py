"""Issue 27, item 2: producer state never comes from a snapshot at or below the log start offset.

Kafka's rules (``ProducerStateManager.truncateAndReload`` when a log is loaded, and the
in-memory state kept when the log start moves): a snapshot at or below the log start offset,
or above the log end offset, is deleted and never loaded; the state is rebuilt from the
newest remaining snapshot, else from the log start. While the broker runs, DeleteRecords and
retention move the log start without forgetting any producer.

The first test is the report's sequence on a real broker subprocess (kill -9 included); the
same steps run against Apache Kafka in ``tests/peer/test_producer_state_peer.py``. The others
drive the neighbouring cases in process, on the real log and producer state.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from seaway.broker.log.config import LogConfig
from seaway.broker.log.log_manager import LogManager
from seaway.broker.log.partition_log import LOG_START_OFFSET_CHECKPOINT, PartitionLog
from seaway.broker.log.recovery import read_offset_checkpoint
from seaway.broker.producer.manager import ProducerStateManager, snapshot_offsets
from seaway.protocol.errors import OutOfOrderSequenceNumberError
from seaway.protocol.records import Record, build_batch

from tests.broker.idempotence.log_start_steps import EXPECTED, run_stale_snapshot_steps
from tests.support.broker import BrokerProcess

pytestmark = pytest.mark.timeout(180)

T0 = 1_700_000_000_000
YEARS = 100 * 365 * 24 * 3_600_000  # expiry is measured against the wall clock, T0 is in the past

SEAWAY_STEPS_CONFIG = {
    "log.retention.check.interval.ms": "200",  # the log start checkpoint is written by this pass
    "log.flush.offset.checkpoint.interval.ms": "3600000",  # no periodic producer snapshot meanwhile
}


def test_producer_is_unknown_after_delete_records_and_kill(tmp_path: Path, topic_name: str) -> None:
    broker = BrokerProcess(tmp_path / "data", SEAWAY_STEPS_CONFIG).start()
    partition_dir = tmp_path / "data" / f"{topic_name}-0"
    try:
        answers = run_stale_snapshot_steps(
            broker, topic_name, partition_dir,
            lambda: read_offset_checkpoint(partition_dir / LOG_START_OFFSET_CHECKPOINT))
    finally:
        broker.stop()
    assert answers == EXPECTED


# -- in process: the neighbouring cases ----------------------------------------------------


@pytest.fixture
def logs(tmp_path: Path) -> Iterator[LogManager]:
    manager = LogManager([tmp_path / "logs"], LogConfig())
    manager.load()
    manager.create_topic("t", 1)
    yield manager
    manager.close()


def _batch(pid: int, seq: int, n: int = 10) -> bytes:
    return build_batch([Record(i, T0, b"k", b"v") for i in range(n)], producer_id=pid, producer_epoch=0,
                       base_sequence=seq)


def _plain(n: int = 10) -> bytes:
    return build_batch([Record(i, T0, b"k", b"v") for i in range(n)])


def _log(logs: LogManager, topic: str = "t") -> PartitionLog:
    plog = logs.get_log(topic, 0)
    assert plog is not None
    return plog


@pytest.mark.parametrize("snapshot_at", [10, 30], ids=["below-the-log-start", "at-the-log-start"])
def test_a_snapshot_at_or_below_the_log_start_is_deleted_and_not_loaded(logs: LogManager, snapshot_at: int) -> None:
    plog = _log(logs)
    manager = ProducerStateManager(logs, expiration_ms=YEARS)
    for seq in range(0, 30, 10):
        manager.append(plog, _batch(5, seq), T0)
        if seq + 10 == snapshot_at:
            manager.take_snapshot(plog)
    assert snapshot_offsets(plog.directory) == [snapshot_at]
    assert plog.delete_records_before(30) == 30

    restarted = ProducerStateManager(logs, expiration_ms=YEARS)  # what a broker start loads
    # Nothing of producer 5 is left at or after the log start: it is unknown (Kafka drops a
    # snapshot at the log start too). Loaded, the snapshot at 10 would say sequence 9 while
    # the records up to 29 that the replay would need are gone.
    assert restarted.state_of(plog).producers == {}
    assert snapshot_offsets(plog.directory) == [], "snapshots at or below the log start are deleted"
    # So its next batch is accepted (the report's answer was OUT_OF_ORDER_SEQUENCE_NUMBER).
    assert restarted.append(plog, _batch(5, 30), T0).base_offset == 30


def test_a_snapshot_above_the_log_start_is_still_loaded(logs: LogManager) -> None:
    plog = _log(logs)
    manager = ProducerStateManager(logs, expiration_ms=YEARS)
    for seq in range(0, 30, 10):
        manager.append(plog, _batch(5, seq), T0)
    manager.take_snapshot(plog)  # at 30
    plog.delete_records_before(20)
    restarted = ProducerStateManager(logs, expiration_ms=YEARS)
    assert restarted.state_of(plog).producers[5].last_seq == 29
    assert snapshot_offsets(plog.directory) == [30]
    assert restarted.append(plog, _batch(5, 0), T0).base_offset == 0, "a duplicate from before the log start"
    with pytest.raises(OutOfOrderSequenceNumberError):
        restarted.append(plog, _batch(5, 50), T0)


def test_delete_records_without_a_crash_keeps_the_producers_and_deletes_stale_snapshots(logs: LogManager) -> None:
    plog = _log(logs)
    manager = ProducerStateManager(logs, expiration_ms=YEARS)
    for seq in range(0, 20, 10):
        manager.append(plog, _batch(5, seq), T0)
    manager.take_snapshot(plog)  # at 20
    manager.append(plog, _batch(5, 20), T0)
    manager.take_snapshot(plog)  # at 30
    plog.delete_records_before(30)
    manager.maintain()  # the state thread's pass: the log start moved
    assert snapshot_offsets(plog.directory) == [], "both snapshots are at or below the new log start"
    # Kafka keeps every producer in memory when the log start moves (onLogStartOffsetIncremented).
    with pytest.raises(OutOfOrderSequenceNumberError):
        manager.append(plog, _batch(5, 50), T0)
    assert manager.append(plog, _batch(5, 30), T0).base_offset == 30
    assert manager.append(plog, _batch(5, 20), T0).base_offset == 20, "a duplicate below the log start"


def test_retention_moving_the_log_start_deletes_the_snapshots_below_it(tmp_path: Path) -> None:
    logs = LogManager([tmp_path / "logs"], LogConfig())
    logs.load()
    try:
        logs.create_topic("r", 1, {"segment.bytes": "400", "retention.bytes": "800"})
        plog = _log(logs, "r")
        manager = ProducerStateManager(logs, expiration_ms=YEARS)
        for seq in range(0, 200, 10):
            manager.append(plog, _batch(5, seq), T0)
            if seq == 50:
                manager.take_snapshot(plog)  # at 60
        manager.take_snapshot(plog)  # at 200: the state thread has nothing new to write
        assert snapshot_offsets(plog.directory) == [60, 200]
        assert plog.apply_retention(T0) > 0
        assert 60 < plog.log_start_offset < 200, "retention (retention.bytes) moved the log start"
        manager.maintain()
        assert snapshot_offsets(plog.directory) == [200]
        assert manager.append(plog, _batch(5, 200), T0).base_offset == 200, "the producer is still known"
    finally:
        logs.close()


def test_a_snapshot_beyond_the_log_end_is_deleted_at_start_before_appends_reach_it(logs: LogManager) -> None:
    plog = _log(logs)
    manager = ProducerStateManager(logs, expiration_ms=YEARS)
    manager.append(plog, _batch(5, 0), T0)
    snapshot = manager.take_snapshot(plog)  # at 10
    assert snapshot is not None
    # A snapshot written after records that a crash then lost (power cut: the snapshot was
    # fsynced, the log's tail was not): it claims sequences up to 99 and a log end of 60.
    data = json.loads(snapshot.read_bytes())
    data["producers"][0]["batches"] = [[90, 99, 50, 59, T0]]
    lost = plog.directory / f"{60:020d}.snapshot"
    lost.write_bytes(json.dumps(data).encode())

    restarted = ProducerStateManager(logs, expiration_ms=YEARS).start()  # a broker start
    try:
        assert not lost.exists(), "a snapshot beyond the log end offset is deleted when the broker starts"
        for _ in range(7):  # ordinary producers write past offset 60 before producer 5 comes back
            plog.append(_plain(), now_ms=T0)
        assert restarted.append(plog, _batch(5, 10), T0).base_offset == 80
    finally:
        restarted.stop()
