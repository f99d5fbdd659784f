"""The log start offset is checkpointed every ``log.flush.start.offset.checkpoint.interval.ms``, as in Kafka.

DeleteRecords moves a partition's log start in memory; Kafka's LogManager writes every log's
start offset to its checkpoint on a schedule of its own (``log.flush.start.offset.checkpoint.
interval.ms``, 60 s) and at shutdown, so deleted records stay deleted across a crash that comes
at least one interval later. Seaway once wrote it only in the retention pass
(``log.retention.check.interval.ms``, 5 minutes): a kill -9 within those minutes brought the
deleted records back.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from confluent_kafka import Consumer, KafkaException, TopicPartition
from seaway.broker.log.config import LogConfig
from seaway.broker.log.log_manager import LogManager
from seaway.broker.log.partition_log import LOG_START_OFFSET_CHECKPOINT
from seaway.broker.log.recovery import read_offset_checkpoint
from seaway.protocol.records import Record, build_batch

from tests.broker.clients.test_confluent_clients import create_topic
from tests.broker.idempotence.log_start_steps import delete_records, produce
from tests.support.broker import BrokerProcess

pytestmark = pytest.mark.timeout(180)

INTERVAL_MS = 200
NO_OTHER_WRITER = {
    "log.retention.check.interval.ms": "3600000",  # the retention pass also writes it: not within the test
    "log.flush.offset.checkpoint.interval.ms": "3600000",
}


def _fill(bootstrap: str, topic: str, batches: int = 10) -> None:
    now = int(time.time() * 1000)
    for i in range(batches):
        records = build_batch([Record(j, now, b"k", f"v{i * 10 + j}".encode()) for j in range(10)])
        assert produce(bootstrap, topic, records) == (0, i * 10)


def _watermarks(bootstrap: str, topic: str) -> tuple[int, int]:
    """(log start, end) of partition 0 as a client sees them (ListOffsets), once the broker answers."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "unused", "enable.auto.commit": False})
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                low, high = consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)
                return int(low), int(high)
            except KafkaException:
                assert time.monotonic() < deadline, "the restarted broker never answered ListOffsets"
                time.sleep(0.2)
    finally:
        consumer.close()


def test_delete_records_survives_kill_after_one_interval(tmp_path: Path, topic_name: str) -> None:
    broker = BrokerProcess(tmp_path / "data", {
        "log.flush.start.offset.checkpoint.interval.ms": str(INTERVAL_MS), **NO_OTHER_WRITER}).start()
    checkpoint = tmp_path / "data" / f"{topic_name}-0" / LOG_START_OFFSET_CHECKPOINT
    try:
        create_topic(broker.bootstrap, topic_name)
        _fill(broker.bootstrap, topic_name)
        assert delete_records(broker.bootstrap, topic_name, 60) == 60
        deadline = time.monotonic() + 30  # 150 intervals: bounds a failure only
        while read_offset_checkpoint(checkpoint) != 60:
            assert time.monotonic() < deadline, (
                f"the log start 60 was not checkpointed within 30 s (interval {INTERVAL_MS} ms): "
                f"{read_offset_checkpoint(checkpoint)}")
            time.sleep(INTERVAL_MS / 4000)
        broker.kill()  # no clean shutdown
        broker.start()
        assert _watermarks(broker.bootstrap, topic_name) == (60, 100)
    finally:
        broker.stop()


def test_delete_records_survives_a_clean_restart_within_the_interval(tmp_path: Path, topic_name: str) -> None:
    broker = BrokerProcess(tmp_path / "data", {
        "log.flush.start.offset.checkpoint.interval.ms": "3600000", **NO_OTHER_WRITER}).start()
    try:
        create_topic(broker.bootstrap, topic_name)
        _fill(broker.bootstrap, topic_name)
        assert delete_records(broker.bootstrap, topic_name, 35) == 35
        broker.stop()  # the shutdown checkpoints it, long before the interval
        broker.start()
        assert _watermarks(broker.bootstrap, topic_name) == (35, 100)
    finally:
        broker.stop()


def test_the_checkpoint_thread_writes_moved_starts_and_stops_at_close(tmp_path: Path) -> None:
    manager = LogManager([tmp_path / "logs"], LogConfig(retention_ms=-1))
    manager.load()
    manager.create_topic("t", 2)
    log0, log1 = manager.get_log("t", 0), manager.get_log("t", 1)
    assert log0 is not None and log1 is not None
    log0.append(build_batch([Record(i, 1_700_000_000_000, None, b"v") for i in range(5)]), now_ms=1_700_000_000_000)
    manager.start_checkpoints(20)
    try:
        assert log0.delete_records_before(3) == 3
        deadline = time.monotonic() + 20
        while read_offset_checkpoint(log0.directory / LOG_START_OFFSET_CHECKPOINT) != 3:
            assert time.monotonic() < deadline, "the checkpoint thread never wrote the moved log start"
            time.sleep(0.01)
        assert read_offset_checkpoint(log1.directory / LOG_START_OFFSET_CHECKPOINT) in (None, 0)  # did not move
        manager.delete_topic("t")  # while the thread runs: nothing is written into the deleted directories
        assert not list((tmp_path / "logs").glob("t-*"))
    finally:
        manager.close()
    assert not any(t.name == "log-start-offset-checkpoint" for t in threading.enumerate())
