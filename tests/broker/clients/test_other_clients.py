"""kcat, kafka-python and aiokafka against the broker, unchanged."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition

from tests.broker.clients.test_confluent_clients import create_topic
from tests.support.broker import BrokerProcess

pytestmark = pytest.mark.timeout(90)

KCAT = shutil.which("kcat") or "kcat"


def test_kcat_metadata_produce_consume(shared_broker: BrokerProcess, topic_name: str) -> None:
    create_topic(shared_broker.bootstrap, topic_name, 2)
    listing = subprocess.run([KCAT, "-b", shared_broker.bootstrap, "-L", "-J"], capture_output=True, text=True,
                             timeout=30, check=True)
    assert topic_name in listing.stdout
    lines = "".join(f"k{i}:line {i}\n" for i in range(500))
    subprocess.run([KCAT, "-b", shared_broker.bootstrap, "-P", "-t", topic_name, "-K", ":", "-z", "lz4"],
                   input=lines, text=True, timeout=30, check=True)
    out = subprocess.run([KCAT, "-b", shared_broker.bootstrap, "-C", "-t", topic_name, "-e", "-q",
                          "-f", "%k=%s\n"], capture_output=True, text=True, timeout=30, check=True)
    assert sorted(out.stdout.splitlines()) == sorted(f"k{i}=line {i}" for i in range(500))


def test_kafka_python_producer_and_assigned_consumer(shared_broker: BrokerProcess, topic_name: str) -> None:
    create_topic(shared_broker.bootstrap, topic_name, 1)
    producer = KafkaProducer(bootstrap_servers=shared_broker.bootstrap, acks="all", compression_type="gzip")
    futures = [producer.send(topic_name, key=f"k{i}".encode(), value=f"v{i}".encode(),
                             headers=[("h", b"x")]) for i in range(300)]
    producer.flush(30)
    offsets = [f.get(timeout=10).offset for f in futures]
    assert offsets == list(range(300))
    producer.close()

    consumer = KafkaConsumer(bootstrap_servers=shared_broker.bootstrap, enable_auto_commit=False,
                             consumer_timeout_ms=5000)
    tp = TopicPartition(topic_name, 0)
    consumer.assign([tp])
    consumer.seek_to_beginning(tp)
    got = [(m.key, m.value, m.headers) for m in consumer]
    consumer.close()
    assert got == [(f"k{i}".encode(), f"v{i}".encode(), [("h", b"x")]) for i in range(300)]


@pytest.mark.parametrize("compression", ["gzip", "lz4", "zstd"])
async def test_aiokafka_producer_and_assigned_consumer(
    shared_broker: BrokerProcess, topic_name: str, compression: str
) -> None:
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
    from aiokafka.structs import TopicPartition as AioTopicPartition

    create_topic(shared_broker.bootstrap, topic_name, 2)
    producer = AIOKafkaProducer(bootstrap_servers=shared_broker.bootstrap, acks="all",
                                compression_type=compression, linger_ms=5)
    await producer.start()
    try:
        sent = [await producer.send(topic_name, key=f"k{i}".encode(), value=f"v{i}".encode(),
                                    partition=i % 2, headers=[("h", str(i).encode())]) for i in range(200)]
        metadata = [await fut for fut in sent]
    finally:
        await producer.stop()
    assert sorted((m.partition, m.offset) for m in metadata) == sorted(
        (p, o) for p in range(2) for o in range(100)
    )

    consumer = AIOKafkaConsumer(bootstrap_servers=shared_broker.bootstrap, enable_auto_commit=False)
    await consumer.start()
    try:
        parts = [AioTopicPartition(topic_name, p) for p in range(2)]
        consumer.assign(parts)
        await consumer.seek_to_beginning(*parts)
        got: list[tuple[int, int, bytes | None, bytes | None, list[tuple[str, bytes]]]] = []
        while len(got) < 200:
            batches = await consumer.getmany(timeout_ms=2000)
            assert batches, f"no records after {len(got)}"
            for records in batches.values():
                got.extend((r.partition, r.offset, r.key, r.value, list(r.headers)) for r in records)
    finally:
        await consumer.stop()
    expected = [(i % 2, i // 2, f"k{i}".encode(), f"v{i}".encode(), [("h", str(i).encode())]) for i in range(200)]
    assert sorted(got) == sorted(expected)
