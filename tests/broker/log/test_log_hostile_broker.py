"""Issue 14, items 1 and 2 against a real broker process: crafted batches and decompression bombs.

The attacks arrive as raw ProduceRequests (every header field under the test's control);
the acknowledged records around them are written and read with librdkafka. The broker's
memory is read from ``/proc/<pid>/status`` (``VmHWM``, its peak RSS).
"""

from __future__ import annotations

import os
import resource
import signal
import threading
import time
from pathlib import Path

import cramjam
import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient

from tests.broker.clients.test_confluent_clients import create_topic
from tests.broker.log.hostile import (
    INVALID_RECORD,
    KAFKA_STORAGE_ERROR,
    MESSAGE_TOO_LARGE,
    compressed_batch,
    crafted_attack_batch,
    produce_raw,
    raw_batch,
    records_bytes,
)
from tests.support.broker import BrokerProcess

CLEAN_SHUTDOWN_FILE = ".kafka_cleanshutdown"
MIB = 1024 * 1024


def _produce_acked(bootstrap: str, topic: str, count: int, prefix: str) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 5})
    errors: list[object] = []
    for i in range(count):
        producer.produce(topic, key=f"k{i}".encode(), value=f"{prefix}-{i}".encode(),
                         on_delivery=lambda err, _msg: errors.append(err) if err else None)
    assert producer.flush(30) == 0 and not errors


def _consume_all(bootstrap: str, topic: str, expected: int) -> list[bytes]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"g-{time.monotonic_ns()}",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic, 0, 0)])
    values: list[bytes] = []
    deadline = time.monotonic() + 30
    try:
        while len(values) < expected and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is not None and msg.error() is None:
                value = msg.value()
                assert value is not None
                values.append(value)
    finally:
        consumer.close()
    return values


def _end_offset(bootstrap: str, topic: str) -> int:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "watermarks"})
    try:
        return int(consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)[1])
    finally:
        consumer.close()


def _stop_cleanly(broker: BrokerProcess) -> int:
    """SIGTERM and the exit code (the clean stop an operator does)."""
    assert broker.proc is not None
    broker.proc.send_signal(signal.SIGTERM)
    code = broker.proc.wait(30)
    broker.stop()  # joins the output pump
    return code


def _vm(pid: int, field: str) -> int:
    """``VmRSS``/``VmHWM`` of ``pid`` in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no {field} for {pid}")


@pytest.mark.timeout(120)
def test_crafted_batches_are_refused_and_acked_records_survive_a_clean_restart(
    broker: BrokerProcess, topic_name: str
) -> None:
    create_topic(broker.bootstrap, topic_name)
    _produce_acked(broker.bootstrap, topic_name, 50, "before")
    attack = crafted_attack_batch()
    for records in (attack, attack * 3):  # one, then the three-in-one-request of the issue
        answer = produce_raw(broker.bootstrap, topic_name, records)
        assert (answer.error_code, answer.base_offset) == (INVALID_RECORD, -1), answer
    lying = raw_batch(records_bytes(2) + b"\x00", count=2)  # a trailing byte
    assert produce_raw(broker.bootstrap, topic_name, lying).error_code == INVALID_RECORD
    assert _end_offset(broker.bootstrap, topic_name) == 50  # the offsets did not jump
    _produce_acked(broker.bootstrap, topic_name, 50, "after")  # acknowledged after the attack
    values = _consume_all(broker.bootstrap, topic_name, 100)
    assert values == [f"before-{i}".encode() for i in range(50)] + [f"after-{i}".encode() for i in range(50)]

    assert _stop_cleanly(broker) == 0
    assert (broker.data_dir / CLEAN_SHUTDOWN_FILE).exists()
    broker.start()
    assert _end_offset(broker.bootstrap, topic_name) == 100
    assert _consume_all(broker.bootstrap, topic_name, 100) == values


@pytest.fixture(scope="module")
def zstd_bomb() -> bytes:
    """Issue 14's bomb: 1 GiB of zeros in 32 KB of zstd."""
    return bytes(cramjam.zstd.compress(bytes(1 << 30)))


@pytest.mark.timeout(180)
def test_a_decompression_bomb_is_refused_on_delete_and_compacted_topics_in_bounded_memory(
    broker: BrokerProcess, topic_name: str, zstd_bomb: bytes
) -> None:
    assert len(zstd_bomb) < 40_000
    assert broker.proc is not None
    pid = broker.proc.pid
    topics = {f"{topic_name}-delete": {}, f"{topic_name}-compact": {"cleanup.policy": "compact"}}
    for name, config in topics.items():
        create_topic(broker.bootstrap, name, config=config)
    _produce_acked(broker.bootstrap, f"{topic_name}-delete", 10, "ok")
    baseline = _vm(pid, "VmRSS")

    # Another client keeps producing while the bombs go in: it must keep being served.
    stop = threading.Event()
    worst = [0.0]
    served = [0]

    def other_client() -> None:
        producer = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 0, "acks": 1})
        while not stop.is_set():
            started = time.monotonic()
            producer.produce(f"{topic_name}-delete", value=b"bystander")
            producer.flush(10)
            worst[0] = max(worst[0], time.monotonic() - started)
            served[0] += 1

    bystander = threading.Thread(target=other_client, daemon=True)
    bystander.start()
    try:
        for name in topics:
            for count in (1, 1_000_000):  # the claim sets the cap: 1 MiB, then the 64 MiB ceiling
                answer = produce_raw(broker.bootstrap, name, compressed_batch(zstd_bomb, count=count))
                assert answer.error_code in (MESSAGE_TOO_LARGE, INVALID_RECORD), (name, count, answer)
                assert answer.base_offset == -1
            # a bomb of zeros whose records would be 0-byte: refused as malformed records, or at the cap
            assert produce_raw(broker.bootstrap, name,
                               compressed_batch(zstd_bomb, count=100)).error_code in (MESSAGE_TOO_LARGE,
                                                                                     INVALID_RECORD)
        time.sleep(0.5)
    finally:
        stop.set()
        bystander.join(20)
    peak = _vm(pid, "VmHWM")
    assert peak - baseline < 200 * MIB, f"broker peak RSS grew by {(peak - baseline) // MIB} MiB"
    assert served[0] > 5 and worst[0] < 2.0, (served, worst)
    # nothing of the bombs was stored; the real records were
    assert _end_offset(broker.bootstrap, f"{topic_name}-compact") == 0
    assert _end_offset(broker.bootstrap, f"{topic_name}-delete") == 10 + served[0]
    AdminClient({"bootstrap.servers": broker.bootstrap}).list_topics(timeout=10)  # still answering


@pytest.mark.timeout(120)
def test_a_full_disk_fails_the_produce_and_loses_nothing(tmp_path: Path, topic_name: str) -> None:
    """EFBIG (RLIMIT_FSIZE set on the running broker) mid-write: KAFKA_STORAGE_ERROR, log intact,
    clean stop exits 0 with its marker, every acknowledged record readable after a restart."""
    with BrokerProcess(tmp_path / "data") as broker:
        assert broker.proc is not None
        create_topic(broker.bootstrap, topic_name)
        _produce_acked(broker.bootstrap, topic_name, 20, "ok")
        limit = 256 * 1024
        _, hard = resource.prlimit(broker.proc.pid, resource.RLIMIT_FSIZE)
        resource.prlimit(broker.proc.pid, resource.RLIMIT_FSIZE, (limit, hard))
        big = raw_batch(records_bytes(1, value=b"z" * (limit + 1000)), count=1)
        assert produce_raw(broker.bootstrap, topic_name, big).error_code == KAFKA_STORAGE_ERROR
        assert _end_offset(broker.bootstrap, topic_name) == 20
        resource.prlimit(broker.proc.pid, resource.RLIMIT_FSIZE, (hard, hard))
        assert produce_raw(broker.bootstrap, topic_name, big).error_code == 0
        _produce_acked(broker.bootstrap, topic_name, 20, "after")
        assert _stop_cleanly(broker) == 0
        assert (broker.data_dir / CLEAN_SHUTDOWN_FILE).exists()
        broker.start()
        values = _consume_all(broker.bootstrap, topic_name, 41)
        assert len(values) == 41 and values[-1] == b"after-19" and len(values[20]) == limit + 1000
    assert not [p for p in (tmp_path / "data").rglob("*.log") if os.path.getsize(p) > 10 * MIB]
