"""DeleteRecords: the log start offset moves, and consumers from the beginning start there."""

from __future__ import annotations

import pytest
from confluent_kafka import OFFSET_BEGINNING, OFFSET_END, Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]
from seaway.protocol.messages.delete_records_request import (
    DeleteRecordsPartition,
    DeleteRecordsRequest,
    DeleteRecordsTopic,
)
from seaway.protocol.messages.delete_records_response import DeleteRecordsResponse

from tests.broker.admin.rawclient import call
from tests.support.broker import BrokerProcess
from tests.support.optional import present

pytestmark = pytest.mark.timeout(60)


def _filled(broker: BrokerProcess, topic: str, count: int, config: dict[str, str] | None = None) -> AdminClient:
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1, config=config or {})])[topic].result(timeout=20)
    # One batch: deleting before offset 6 then cuts through a batch, which Kafka allows.
    producer = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 50})
    for i in range(count):
        producer.produce(topic, f"v{i}".encode(), f"k{i}".encode())
    assert producer.flush(20) == 0
    return admin


def _delete(admin: AdminClient, topic: str, offset: int) -> int:
    tp = TopicPartition(topic, 0, offset)
    low: int = admin.delete_records([tp])[tp].result(timeout=20).low_watermark
    return low


def _first_offset(broker: BrokerProcess, topic: str) -> int:
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "unused",
                         "enable.auto.commit": False, "auto.offset.reset": "earliest"})
    try:
        consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
        msg = consumer.poll(15)
        assert msg is not None and msg.error() is None
        offset = present(msg.offset())
        assert msg.value() == f"v{offset}".encode()
        return offset
    finally:
        consumer.close()


def test_delete_records_moves_the_log_start(shared_broker: BrokerProcess, topic_name: str) -> None:
    admin = _filled(shared_broker, topic_name, 10)
    assert _delete(admin, topic_name, 6) == 6
    assert _first_offset(shared_broker, topic_name) == 6
    assert _delete(admin, topic_name, 3) == 6  # behind the start: nothing changes
    tp = TopicPartition(topic_name, 0, 11)
    with pytest.raises(KafkaException) as info:
        admin.delete_records([tp])[tp].result(timeout=20)
    assert info.value.args[0].code() == KafkaError.OFFSET_OUT_OF_RANGE
    assert _delete(admin, topic_name, OFFSET_END) == 10  # -1: up to the high watermark


def test_delete_records_refused_on_compacted_topic(shared_broker: BrokerProcess, topic_name: str) -> None:
    admin = _filled(shared_broker, topic_name, 2, {"cleanup.policy": "compact"})
    tp = TopicPartition(topic_name, 0, 1)
    with pytest.raises(KafkaException) as info:
        admin.delete_records([tp])[tp].result(timeout=20)
    assert info.value.args[0].code() == KafkaError.POLICY_VIOLATION


def test_delete_records_errors_per_partition(shared_broker: BrokerProcess, topic_name: str) -> None:
    _filled(shared_broker, topic_name, 1)
    # librdkafka refuses unknown partitions and negative offsets itself, so ask raw.
    request = DeleteRecordsRequest(topics=[DeleteRecordsTopic(name=topic_name, partitions=[
        DeleteRecordsPartition(partition_index=3, offset=0),
        DeleteRecordsPartition(partition_index=0, offset=-7),
        DeleteRecordsPartition(partition_index=0, offset=1),
    ])])
    answer = call(shared_broker.bootstrap, request, DeleteRecordsResponse, 2).topics[0].partitions
    assert [(p.error_code, p.low_watermark) for p in answer] == [(3, -1), (1, -1), (0, 1)]
