"""Issue 27, item 2: an idempotent producer's state after DeleteRecords and kill -9, as steps
any restartable broker can be put through (Seaway's here, Apache Kafka's in tests/peer/).

The steps: produce sequences 0..99 idempotently; stop the broker cleanly (it writes a producer
snapshot at offset 100); start it; produce 100..199; DeleteRecords to 200 and wait until the
log start offset is checkpointed; kill -9; start it; the same producer's next batch (sequence
200). Kafka deletes every snapshot at or below the log start offset when it loads a log
(``ProducerStateManager.truncateAndReload``) and replays from the log start, so the producer
is unknown there and its batch is accepted (KIP-360). A broker that loads the snapshot at 100
and replays only from 200 believes the producer's last sequence is 99 and refuses sequence
200 with OUT_OF_ORDER_SEQUENCE_NUMBER, fatal for a Java producer.

Batches are crafted (``batch``) so the producer id, epoch and sequences are exact, and sent
over a plain socket (``tests.broker.admin.rawclient``), answers decoded by Seaway's codec.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from seaway.protocol.messages.delete_records_request import (
    DeleteRecordsPartition,
    DeleteRecordsRequest,
    DeleteRecordsTopic,
)
from seaway.protocol.messages.delete_records_response import DeleteRecordsResponse
from seaway.protocol.messages.init_producer_id_request import InitProducerIdRequest
from seaway.protocol.messages.init_producer_id_response import InitProducerIdResponse
from seaway.protocol.messages.produce_request import PartitionProduceData, ProduceRequest, TopicProduceData
from seaway.protocol.messages.produce_response import ProduceResponse
from seaway.protocol.records import Record, build_batch

from tests.broker.admin.rawclient import call
from tests.broker.clients.test_confluent_clients import create_topic

__all__ = ["EXPECTED", "Restartable", "StaleSnapshotAnswers", "run_stale_snapshot_steps"]

OUT_OF_ORDER_SEQUENCE_NUMBER = 45
_RETRIABLE = {3, 5, 6, 7, 14, 15, 51}
"""UNKNOWN_TOPIC_OR_PARTITION, LEADER_NOT_AVAILABLE, NOT_LEADER_OR_FOLLOWER, REQUEST_TIMED_OUT,
COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, CONCURRENT_TRANSACTIONS: a broker that
has just started (or created the topic) may answer these for a moment."""

BATCH = 10
"""Records per crafted batch: sequences and offsets advance by ten."""


class Restartable(Protocol):
    """What the steps need of a broker: its address and the three ways to stop and start it."""

    @property
    def bootstrap(self) -> str: ...
    def stop(self) -> None: ...
    def kill(self) -> None: ...
    def start(self) -> Any: ...


@dataclass(frozen=True)
class StaleSnapshotAnswers:
    """What the broker answered, compared between brokers."""

    snapshot_after_clean_stop: bool
    """A producer snapshot at offset 100 was on disk after the clean stop (the setup holds)."""
    next_batch: tuple[int, int]
    """(error code, base offset) of sequence 200 after the crash."""
    same_batch_again: tuple[int, int]
    """The same batch retried: a duplicate, acknowledged with its original offset."""
    gap: int
    """Error code of a batch that skips sequences: the producer is known again."""
    snapshots_at_or_below_log_start: list[int]
    """Producer snapshots at or below the log start offset (200) left on disk at the end."""


EXPECTED = StaleSnapshotAnswers(True, (0, 200), (0, 200), OUT_OF_ORDER_SEQUENCE_NUMBER, [])
"""Apache Kafka 4's answers (tests/peer/test_producer_state_peer.py checks them there)."""


def _retrying(ask: Callable[[], int], what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while (code := ask()) in _RETRIABLE:
        assert time.monotonic() < deadline, f"{what}: still error {code} after {timeout:.0f}s"
        time.sleep(0.1)


def batch(pid: int, seq: int) -> bytes:
    now = int(time.time() * 1000)
    records = [Record(i, now, b"k", f"v{seq + i}".encode()) for i in range(BATCH)]
    return build_batch(records, producer_id=pid, producer_epoch=0, base_sequence=seq)


def produce(bootstrap: str, topic: str, records: bytes) -> tuple[int, int]:
    """(error code, base offset), after waiting out a just-started broker's retriable answers."""
    request = ProduceRequest(acks=-1, timeout_ms=10000, topic_data=[
        TopicProduceData(name=topic, partition_data=[PartitionProduceData(index=0, records=records)])])
    answer: list[tuple[int, int]] = []

    def ask() -> int:
        response: ProduceResponse = call(bootstrap, request, ProduceResponse, 9)
        part = response.responses[0].partition_responses[0]
        answer[:] = [(part.error_code, part.base_offset)]
        return int(part.error_code)

    _retrying(ask, f"produce to {topic}")
    return answer[0]


def init_producer_id(bootstrap: str) -> int:
    found: list[int] = []

    def ask() -> int:
        response = call(bootstrap, InitProducerIdRequest(transactional_id=None, transaction_timeout_ms=60000),
                        InitProducerIdResponse, 4)
        found[:] = [response.producer_id]
        return int(response.error_code)

    _retrying(ask, "InitProducerId")
    return found[0]


def delete_records(bootstrap: str, topic: str, offset: int) -> int:
    """DeleteRecords of partition 0 before ``offset``; the new low watermark."""
    request = DeleteRecordsRequest(topics=[DeleteRecordsTopic(name=topic, partitions=[
        DeleteRecordsPartition(partition_index=0, offset=offset)])], timeout_ms=10000)
    response: DeleteRecordsResponse = call(bootstrap, request, DeleteRecordsResponse, 2)
    part = response.topics[0].partitions[0]
    assert part.error_code == 0, f"DeleteRecords answered {part.error_code}"
    return int(part.low_watermark)


def snapshot_offsets(partition_dir: Path) -> list[int]:
    """Offsets of the producer snapshots (``<offset>.snapshot``, Kafka's and Seaway's name)."""
    return sorted(int(p.name[:20]) for p in partition_dir.glob("*.snapshot") if p.name[:20].isdigit())


def run_stale_snapshot_steps(broker: Restartable, topic: str, partition_dir: Path,
                             log_start_checkpoint: Callable[[], int | None]) -> StaleSnapshotAnswers:
    """The steps of the module docstring on ``broker`` (running, restartable on its data).

    ``partition_dir`` is where the broker keeps partition 0 of ``topic``;
    ``log_start_checkpoint`` reads the log start offset the broker has checkpointed for it.
    """
    create_topic(broker.bootstrap, topic)
    pid = init_producer_id(broker.bootstrap)
    for seq in range(0, 100, BATCH):
        assert produce(broker.bootstrap, topic, batch(pid, seq)) == (0, seq)
    broker.stop()  # clean: a producer snapshot at the log end offset, 100
    snapshot_after_clean_stop = 100 in snapshot_offsets(partition_dir)
    broker.start()
    for seq in range(100, 200, BATCH):
        assert produce(broker.bootstrap, topic, batch(pid, seq)) == (0, seq)
    assert delete_records(broker.bootstrap, topic, 200) == 200
    deadline = time.monotonic() + 60
    while log_start_checkpoint() != 200:
        assert time.monotonic() < deadline, "the log start offset 200 was never checkpointed"
        time.sleep(0.1)
    broker.kill()  # no clean shutdown: no snapshot at 200
    broker.start()
    next_batch = batch(pid, 200)
    return StaleSnapshotAnswers(
        snapshot_after_clean_stop=snapshot_after_clean_stop,
        next_batch=produce(broker.bootstrap, topic, next_batch),
        same_batch_again=produce(broker.bootstrap, topic, next_batch),
        gap=produce(broker.bootstrap, topic, batch(pid, 300))[0],
        snapshots_at_or_below_log_start=[o for o in snapshot_offsets(partition_dir) if o <= 200],
    )
