"""Two more clients' transactions: aiokafka's transactional producer (with a read_committed
aiokafka consumer and send_offsets_to_transaction) and kafka-python's."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from kafka import KafkaConsumer, KafkaProducer

from tests.broker.clients.test_confluent_clients import create_topic, produce_all
from tests.broker.transactions.txn_support import READ_COMMITTED, READ_UNCOMMITTED, read_values
from tests.support.broker import BrokerProcess

pytestmark = pytest.mark.timeout(90)


async def _aiokafka_read(bootstrap: str, topic: str, isolation: str, expected: int) -> list[str]:
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, isolation_level=isolation, enable_auto_commit=False,
                                auto_offset_reset="earliest", group_id=None)
    await consumer.start()
    try:
        consumer.assign([TopicPartition(topic, 0), TopicPartition(topic, 1)])
        await consumer.seek_to_beginning()
        got: list[str] = []
        for _ in range(40):
            batches = await consumer.getmany(timeout_ms=250)
            got += [m.value.decode() for msgs in batches.values() for m in msgs]
            if len(got) >= expected:
                await asyncio.sleep(0.3)  # anything more would show up now
                batches = await consumer.getmany(timeout_ms=250)
                got += [m.value.decode() for msgs in batches.values() for m in msgs]
                break
        return sorted(got)
    finally:
        await consumer.stop()


async def _aiokafka_transactions(bootstrap: str, topic: str, source: str, group: str) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, transactional_id=f"aio-{uuid.uuid4().hex[:8]}",
                                enable_idempotence=True)
    await producer.start()
    try:
        async with producer.transaction():
            for i in range(20):
                await producer.send(topic, f"kept-{i}".encode(), partition=i % 2)
            await producer.send_offsets_to_transaction({TopicPartition(source, 0): 7}, group)
        await producer.begin_transaction()
        for i in range(20):
            await producer.send_and_wait(topic, f"dropped-{i}".encode(), partition=i % 2)
        await producer.abort_transaction()
        async with producer.transaction():
            await producer.send(topic, b"kept-last", partition=0)
    finally:
        await producer.stop()
    committed_view = await _aiokafka_read(bootstrap, topic, READ_COMMITTED, 21)
    assert committed_view == sorted([f"kept-{i}" for i in range(20)] + ["kept-last"])
    everything = await _aiokafka_read(bootstrap, topic, READ_UNCOMMITTED, 41)
    assert len(everything) == 41 and sum(v.startswith("dropped") for v in everything) == 20


def test_aiokafka_transactional_producer(shared_broker: BrokerProcess, topic_name: str) -> None:
    bootstrap = shared_broker.bootstrap
    create_topic(bootstrap, topic_name, 2)
    source, group = f"src-{uuid.uuid4().hex[:8]}", f"g-{uuid.uuid4().hex[:8]}"
    create_topic(bootstrap, source, 1)
    produce_all(bootstrap, source, [(None, b"x", [])] * 10)
    asyncio.run(_aiokafka_transactions(bootstrap, topic_name, source, group))
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False)
    try:
        from kafka import TopicPartition as KpTopicPartition

        assert consumer.committed(KpTopicPartition(source, 0)) == 7, "the offsets committed with the transaction"
    finally:
        consumer.close()


def test_kafka_python_transactional_producer(shared_broker: BrokerProcess, topic_name: str) -> None:
    bootstrap = shared_broker.bootstrap
    create_topic(bootstrap, topic_name, 2)
    producer = KafkaProducer(bootstrap_servers=bootstrap, transactional_id=f"kp-{uuid.uuid4().hex[:8]}")
    try:
        producer.init_transactions()
        producer.begin_transaction()
        for i in range(10):
            producer.send(topic_name, f"c{i}".encode(), partition=i % 2)
        producer.commit_transaction()
        producer.begin_transaction()
        for i in range(10):
            producer.send(topic_name, f"a{i}".encode(), partition=i % 2)
        producer.flush()
        producer.abort_transaction()
    finally:
        producer.close(timeout=5)
    assert sorted(v for _, _, v in read_values(bootstrap, topic_name, 2, READ_COMMITTED)) == sorted(
        f"c{i}" for i in range(10))
    consumer = KafkaConsumer(topic_name, bootstrap_servers=bootstrap, isolation_level="read_committed",
                             auto_offset_reset="earliest", consumer_timeout_ms=3000)
    try:
        assert sorted(m.value.decode() for m in consumer) == sorted(f"c{i}" for i in range(10))
    finally:
        consumer.close()
