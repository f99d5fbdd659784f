"""Restarts and crashes: nothing acknowledged is lost, torn tails are repaired."""

from __future__ import annotations

import multiprocessing
import os
import time
from pathlib import Path

import pytest
from confluent_kafka import Producer

from tests.broker.clients.test_confluent_clients import consume_all, create_topic, produce_all
from tests.support.broker import BrokerProcess

pytestmark = pytest.mark.timeout(180)


def test_restart_keeps_everything(broker: BrokerProcess, topic_name: str) -> None:
    create_topic(broker.bootstrap, topic_name, 3, {"segment.bytes": "20000"})
    records = [(f"k{i}".encode(), os.urandom(50), [("n", str(i).encode())]) for i in range(3000)]
    produce_all(broker.bootstrap, topic_name, records)
    broker.restart()
    got = consume_all(broker.bootstrap, topic_name, 3, len(records))
    assert sorted((m.key(), m.value()) for m in got) == sorted((k, v) for k, v, _ in records)  # type: ignore[attr-defined]


def _produce_forever(bootstrap: str, topic: str, acked_path: str) -> None:
    """Child process: produce acks=all and append each acknowledged value to a file."""
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 2,
                         "message.timeout.ms": 5000, "retries": 0})
    with open(acked_path, "a", buffering=1) as acked:
        def on_delivery(err: object, msg: object) -> None:
            if err is None:
                acked.write(msg.value().decode() + "\n")  # type: ignore[attr-defined]

        for i in range(100_000):
            while True:
                try:
                    producer.produce(topic, value=str(i).encode(), on_delivery=on_delivery)
                    break
                except BufferError:
                    producer.poll(0.05)
            producer.poll(0)
        producer.flush(30)


def test_kill_9_during_acks_all_produce_loses_no_acknowledged_record(tmp_path: Path, topic_name: str) -> None:
    broker = BrokerProcess(tmp_path / "data").start()
    try:
        create_topic(broker.bootstrap, topic_name, 1)
        acked_path = tmp_path / "acked.txt"
        ctx = multiprocessing.get_context("spawn")
        child = ctx.Process(target=_produce_forever, args=(broker.bootstrap, topic_name, str(acked_path)))
        child.start()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if acked_path.exists() and acked_path.read_text().count("\n") > 20_000:
                break
            time.sleep(0.05)
        broker.kill()
        child.join(30)
        if child.is_alive():
            child.kill()
        acked = {int(x) for x in acked_path.read_text().split()}
        assert len(acked) > 20_000
        broker.start()
        got = consume_all(broker.bootstrap, topic_name, 1, len(acked), timeout=60)
        values = {int(m.value()) for m in got}  # type: ignore[attr-defined]
        missing = acked - values
        assert not missing, f"{len(missing)} acknowledged records lost, e.g. {sorted(missing)[:5]}"
    finally:
        broker.stop()


def _segment_files(data: Path, topic: str) -> list[Path]:
    return sorted((data / f"{topic}-0").glob("*.log"))


def test_garbage_and_torn_tail_are_repaired_on_start(tmp_path: Path, topic_name: str) -> None:
    data = tmp_path / "data"
    broker = BrokerProcess(data).start()
    try:
        create_topic(broker.bootstrap, topic_name, 1)
        produce_all(broker.bootstrap, topic_name, [(None, f"v{i}".encode(), []) for i in range(100)])
        broker.kill()
        active = _segment_files(data, topic_name)[-1]
        with active.open("ab") as f:
            f.write(os.urandom(333))
        broker.start()
        got = consume_all(broker.bootstrap, topic_name, 1, 100)
        assert [m.value() for m in got] == [f"v{i}".encode() for i in range(100)]  # type: ignore[attr-defined]
        produce_all(broker.bootstrap, topic_name, [(None, b"after", [])])
        broker.kill()
        # tear the last batch in half
        size = active.stat().st_size
        with active.open("r+b") as f:
            f.truncate(size - 5)
        broker.start()
        got = consume_all(broker.bootstrap, topic_name, 1, 100)
        assert [m.value() for m in got][:100] == [f"v{i}".encode() for i in range(100)]  # type: ignore[attr-defined]
        # the torn batch is gone, and the log accepts new writes at the repaired end
        delivered = produce_all(broker.bootstrap, topic_name, [(None, b"again", [])])
        assert delivered == [(0, 100)]
    finally:
        broker.stop()


def test_retention_deletes_old_segments_and_advances_log_start(tmp_path: Path, topic_name: str) -> None:
    broker = BrokerProcess(tmp_path / "data", {"log.retention.check.interval.ms": "200"}).start()
    try:
        create_topic(broker.bootstrap, topic_name, 1, {"segment.bytes": "2000", "retention.bytes": "5000"})
        produce_all(broker.bootstrap, topic_name, [(None, os.urandom(100), []) for _ in range(300)],
                    **{"batch.num.messages": 5})
        from confluent_kafka import Consumer, TopicPartition

        consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "r"})
        try:
            deadline = time.monotonic() + 20
            low = 0
            while time.monotonic() < deadline:
                low, high = consumer.get_watermark_offsets(TopicPartition(topic_name, 0), timeout=5)
                if low > 0:
                    break
                time.sleep(0.2)
            assert low > 0 and high == 300
        finally:
            consumer.close()
        # The log start moves first; the files of deleted segments go in the same pass.
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            size = sum(f.stat().st_size for f in _segment_files(tmp_path / "data", topic_name) if f.exists())
            if size < 5000 + 2 * 2000:
                break
            time.sleep(0.2)
        assert size < 5000 + 2 * 2000
    finally:
        broker.stop()
