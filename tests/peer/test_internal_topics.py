"""The internal topics as clients reach them, on Apache Kafka's broker and on Seaway's (issue 27, item 1).

The same requests go to both brokers and each must get the same answer (error codes; Kafka
sends no message with INVALID_TOPIC_EXCEPTION, Seaway says which topic): Produce to
``__consumer_offsets`` and ``__transaction_state`` is INVALID_TOPIC_EXCEPTION, plain or
transactional into a partition the transaction holds; a transactional batch outside the
transaction fails KIP-890's check first (INVALID_TXN_STATE, TRANSACTION_ABORTABLE from produce
v11); DeleteRecords is INVALID_TOPIC_EXCEPTION; validate-only config changes and partition
increases are allowed; ``__cluster_metadata`` is no topic. DeleteTopics is not sent: Kafka
deletes an internal topic (Seaway refuses, a documented deviation), which would break the
shared Kafka broker for the other peer tests.
"""

from __future__ import annotations

import time
import uuid

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import (  # type: ignore[attr-defined]  # re-exported without __all__
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    NewPartitions,
    NewTopic,
    ResourceType,
)
from seaway.broker.coordinator.offsets_topic import partition_for

from tests.broker.security.internal_support import (
    add_offsets,
    delete_records,
    end_txn,
    init_txn_producer,
    produce,
    record_batch,
)

pytestmark = [pytest.mark.peer, pytest.mark.timeout(180)]

INTERNAL = ("__consumer_offsets", "__transaction_state")
PARTITIONS = 50


def _commit_when_ready(bootstrap: str, topic: str) -> None:
    """A group commit, which makes Kafka create ``__consumer_offsets``; a coordinator that is still
    loading (Kafka right after its start) answers NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS,
    so retry those (the deadline only bounds a failure)."""
    retriable = {KafkaError.NOT_COORDINATOR, KafkaError.COORDINATOR_LOAD_IN_PROGRESS,
                 KafkaError.COORDINATOR_NOT_AVAILABLE}
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"peer-it-{uuid.uuid4().hex[:8]}"})
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                consumer.commit(offsets=[TopicPartition(topic, 0, 0)], asynchronous=False)
                return
            except KafkaException as exc:
                if exc.args[0].code() not in retriable or time.monotonic() > deadline:
                    raise
                time.sleep(0.5)
    finally:
        consumer.close()


@pytest.fixture(scope="module")
def with_internal_topics(bootstraps: dict[str, str]) -> dict[str, str]:
    """Both brokers with both internal topics in place (Kafka creates them on first use)."""
    topic = f"peer-it-{uuid.uuid4().hex[:8]}"
    for bootstrap in bootstraps.values():
        admin = AdminClient({"bootstrap.servers": bootstrap})
        admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(timeout=30)
        _commit_when_ready(bootstrap, topic)
        producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": f"peer-it-{uuid.uuid4().hex[:8]}"})
        try:
            producer.init_transactions(60)
        finally:
            producer.close()
    return bootstraps


async def _answers(bootstrap: str) -> dict[str, int]:
    """Each path's error code on one broker."""
    codes: dict[str, int] = {}
    for topic in INTERNAL:
        codes[f"produce {topic}"] = (await produce(bootstrap, topic, 1, record_batch())).code
        codes[f"produce v9 {topic}"] = (await produce(bootstrap, topic, 1, record_batch(), cap=9)).code
        producer = await init_txn_producer(bootstrap, f"peer-it-{uuid.uuid4().hex[:8]}")
        batch = record_batch(producer=producer)
        for cap in (9, 11):
            codes[f"txn produce outside v{cap} {topic}"] = (await produce(
                bootstrap, topic, 2, batch, transactional_id=producer.transactional_id, cap=cap)).code
        codes[f"delete records {topic}"] = (await delete_records(bootstrap, topic, 0)).code
    producer = await init_txn_producer(bootstrap, f"peer-it-{uuid.uuid4().hex[:8]}")
    group = f"peer-it-{uuid.uuid4().hex[:8]}"
    codes["add offsets"] = await add_offsets(bootstrap, producer, group)
    codes["txn produce inside __consumer_offsets"] = (await produce(
        bootstrap, "__consumer_offsets", partition_for(group, PARTITIONS), record_batch(producer=producer),
        transactional_id=producer.transactional_id)).code
    codes["end txn"] = await end_txn(bootstrap, producer, commit=False)
    codes["produce __cluster_metadata"] = (await produce(bootstrap, "__cluster_metadata", 0, record_batch())).code
    codes["delete records __cluster_metadata"] = (await delete_records(bootstrap, "__cluster_metadata", 0)).code
    return codes


async def test_internal_topic_writes_get_kafkas_answers(with_internal_topics: dict[str, str]) -> None:
    answers = {name: await _answers(bootstrap) for name, bootstrap in with_internal_topics.items()}
    assert answers["seaway"] == answers["kafka"]
    kafka = answers["kafka"]
    for topic in INTERNAL:
        assert kafka[f"produce {topic}"] == kafka[f"produce v9 {topic}"] == 17  # INVALID_TOPIC_EXCEPTION
        assert kafka[f"txn produce outside v9 {topic}"] == 48  # INVALID_TXN_STATE
        assert kafka[f"txn produce outside v11 {topic}"] == 120  # TRANSACTION_ABORTABLE
        assert kafka[f"delete records {topic}"] == 17
    assert kafka["txn produce inside __consumer_offsets"] == 17
    assert kafka["produce __cluster_metadata"] == kafka["delete records __cluster_metadata"] == 3


@pytest.mark.parametrize("topic", INTERNAL)
def test_validate_only_config_and_partition_changes_are_allowed_on_both(
    with_internal_topics: dict[str, str], topic: str,
) -> None:
    for name, bootstrap in with_internal_topics.items():
        admin = AdminClient({"bootstrap.servers": bootstrap})
        resource = ConfigResource(ResourceType.TOPIC, topic, incremental_configs=[
            ConfigEntry("min.compaction.lag.ms", "1000", incremental_operation=AlterConfigOpType.SET)])
        for future in admin.incremental_alter_configs([resource], validate_only=True).values():
            assert future.result(timeout=30) is None, name
        grown = admin.create_partitions([NewPartitions(topic, PARTITIONS + 1)], validate_only=True)
        for future in grown.values():
            assert future.result(timeout=30) is None, name
