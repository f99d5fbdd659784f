"""librdkafka (confluent-kafka) against the broker: produce, fetch, errors, as with Kafka."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]

from tests.support.broker import BrokerProcess
from tests.support.optional import present

pytestmark = pytest.mark.timeout(90)


def create_topic(bootstrap: str, name: str, partitions: int = 1, config: dict[str, str] | None = None) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    fut = admin.create_topics([NewTopic(name, partitions, 1, config=config or {})])[name]
    fut.result(timeout=20)


def produce_all(bootstrap: str, topic: str,
                records: Sequence[tuple[bytes | None, bytes | None, Sequence[tuple[str, bytes]]]],
                **conf: object) -> list[tuple[int, int]]:
    """Produce and wait for every delivery report; returns (partition, offset) per record."""
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, **conf})
    results: list[tuple[int, int] | None] = [None] * len(records)
    errors: list[KafkaError] = []

    def on_delivery(i: int) -> Callable[[KafkaError | None, object], None]:
        def cb(err: KafkaError | None, msg: object) -> None:
            if err is not None:
                errors.append(err)
            else:
                results[i] = (msg.partition(), msg.offset())  # type: ignore[attr-defined]
        return cb

    for i, (key, value, headers) in enumerate(records):
        producer.produce(topic, value=value, key=key, headers=list(headers) or None, on_delivery=on_delivery(i))
        producer.poll(0)
    assert producer.flush(30) == 0
    assert not errors, errors
    assert all(r is not None for r in results)
    return [r for r in results if r is not None]


def consume_all(bootstrap: str, topic: str, partitions: int, expected: int, timeout: float = 30.0) -> list[object]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "unused", "enable.auto.commit": False,
                         "enable.partition.eof": False})
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    out: list[object] = []
    import time

    deadline = time.monotonic() + timeout
    try:
        while len(out) < expected and time.monotonic() < deadline:
            for msg in consumer.consume(1000, timeout=0.5):
                if msg.error():
                    raise KafkaException(msg.error())
                out.append(msg)
    finally:
        consumer.close()
    return out


@pytest.mark.parametrize("acks", ["0", "1", "all"])
def test_acks_levels_round_trip(shared_broker: BrokerProcess, topic_name: str, acks: str) -> None:
    create_topic(shared_broker.bootstrap, topic_name, 3)
    records: list[tuple[bytes | None, bytes | None, list[tuple[str, bytes]]]] = [
        (f"k{i}".encode(), f"value-{i}".encode(), []) for i in range(2000)]
    produce_all(shared_broker.bootstrap, topic_name, records, acks=acks)
    got = consume_all(shared_broker.bootstrap, topic_name, 3, len(records))
    assert sorted((m.key(), m.value()) for m in got) == sorted((k, v) for k, v, _ in records)  # type: ignore[attr-defined]


@pytest.mark.parametrize("codec", ["none", "gzip", "snappy", "lz4", "zstd"])
def test_compression_keys_headers_byte_identical(shared_broker: BrokerProcess, topic_name: str, codec: str) -> None:
    create_topic(shared_broker.bootstrap, topic_name, 2)
    records = [
        (None if i % 7 == 0 else f"key-{i}".encode(),
         None if i % 11 == 0 else (f"payload {i} " * (i % 5 + 1)).encode(),
         [("h1", f"v{i}".encode()), ("h1", b"dup"), ("bin", bytes([i % 256, 0, 255]))])
        for i in range(3000)
    ]
    delivered = produce_all(shared_broker.bootstrap, topic_name, records, **{"compression.type": codec})
    got = consume_all(shared_broker.bootstrap, topic_name, 2, len(records))
    by_pos = {(m.partition(), m.offset()): m for m in got}  # type: ignore[attr-defined]
    assert len(by_pos) == len(records)
    for (key, value, headers), pos in zip(records, delivered, strict=True):
        msg = by_pos[pos]
        assert msg.key() == key  # type: ignore[attr-defined]
        assert msg.value() == value  # type: ignore[attr-defined]
        assert msg.headers() == headers  # type: ignore[attr-defined]
    # offsets are dense per partition, starting at 0
    for p in (0, 1):
        offsets = sorted(o for (pp, o) in by_pos if pp == p)
        assert offsets == list(range(len(offsets)))


def test_message_too_large(shared_broker: BrokerProcess, topic_name: str) -> None:
    create_topic(shared_broker.bootstrap, topic_name, 1, {"max.message.bytes": "10000"})
    producer = Producer({"bootstrap.servers": shared_broker.bootstrap, "message.max.bytes": 1000000,
                         "compression.type": "none"})
    errors: list[KafkaError | None] = []
    producer.produce(topic_name, value=b"x" * 50000, on_delivery=lambda err, msg: errors.append(err))
    producer.flush(20)
    assert errors and errors[0] is not None
    assert errors[0].code() == KafkaError.MSG_SIZE_TOO_LARGE


def test_unknown_topic_when_auto_create_is_off(tmp_path: object) -> None:
    from pathlib import Path

    with BrokerProcess(Path(str(tmp_path)) / "d", {"auto.create.topics.enable": "false"}) as b:
        producer = Producer({"bootstrap.servers": b.bootstrap, "message.timeout.ms": 3000})
        errors: list[KafkaError | None] = []
        producer.produce("does-not-exist", value=b"x", on_delivery=lambda err, msg: errors.append(err))
        producer.flush(10)
        assert errors and errors[0] is not None
        assert errors[0].code() in (KafkaError.UNKNOWN_TOPIC_OR_PART, KafkaError._UNKNOWN_TOPIC,
                                    KafkaError._MSG_TIMED_OUT)
        admin = AdminClient({"bootstrap.servers": b.bootstrap})
        md = admin.list_topics("does-not-exist", timeout=10)
        assert present(md.topics["does-not-exist"].error).code() == KafkaError.UNKNOWN_TOPIC_OR_PART


def test_invalid_topic_name(shared_broker: BrokerProcess) -> None:
    admin = AdminClient({"bootstrap.servers": shared_broker.bootstrap})
    md = admin.list_topics("bad name!", timeout=10)
    assert present(md.topics["bad name!"].error).code() == KafkaError.TOPIC_EXCEPTION


def test_offset_out_of_range_resets(shared_broker: BrokerProcess, topic_name: str) -> None:
    create_topic(shared_broker.bootstrap, topic_name, 1)
    produce_all(shared_broker.bootstrap, topic_name, [(None, b"a", []), (None, b"b", [])])
    consumer = Consumer({"bootstrap.servers": shared_broker.bootstrap, "group.id": "g",
                         "auto.offset.reset": "error", "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic_name, 0, 100)])
    try:
        err = None
        for _ in range(20):
            msg = consumer.poll(0.5)
            if msg is not None and msg.error():
                err = msg.error()
                break
        assert err is not None
        assert err.code() == KafkaError._AUTO_OFFSET_RESET
        assert "out of range" in err.str().lower() or "offset" in err.str().lower()
    finally:
        consumer.close()


def test_list_offsets_earliest_latest_and_by_time(shared_broker: BrokerProcess, topic_name: str) -> None:
    create_topic(shared_broker.bootstrap, topic_name, 1)
    producer = Producer({"bootstrap.servers": shared_broker.bootstrap, "linger.ms": 0})
    for i in range(10):
        producer.produce(topic_name, value=b"v", timestamp=1_000_000 + i * 1000)
        producer.flush(10)
    consumer = Consumer({"bootstrap.servers": shared_broker.bootstrap, "group.id": "lo"})
    try:
        low, high = consumer.get_watermark_offsets(TopicPartition(topic_name, 0), timeout=10)
        assert (low, high) == (0, 10)
        found = consumer.offsets_for_times([TopicPartition(topic_name, 0, 1_000_000 + 4500)], timeout=10)
        assert found[0].offset == 5
        after = consumer.offsets_for_times([TopicPartition(topic_name, 0, 9_000_000_000)], timeout=10)
        assert after[0].offset == -1
    finally:
        consumer.close()
