"""The Kafka-backed stores against a real broker: Kafka Connect's keys and JSON values, read back."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]
from seaway.connect.runtime.distributed.kafka_log import InternalTopicError, ensure_topic
from seaway.connect.runtime.distributed.kafka_stores import (
    KafkaConfigBackingStore,
    KafkaOffsetBackingStore,
    KafkaStatusBackingStore,
    RestartRequest,
)
from seaway.connect.runtime.distributed.signing import generate_key
from seaway.connect.runtime.herder import ConnectorState, ConnectorTaskId, State, TargetState, TaskState

from tests.support.broker import BrokerProcess


@pytest.fixture
def topic(shared_broker: BrokerProcess) -> Iterator[str]:
    name = f"internal-{uuid.uuid4().hex[:10]}"
    ensure_topic({"bootstrap.servers": shared_broker.bootstrap}, name, 1, 1, single_partition=True)
    yield name


def _raw_records(bootstrap: str, topic: str, partitions: int = 1) -> list[tuple[bytes | None, Any]]:
    """Every record of ``topic`` up to each partition's end (read to the end offsets, not until the
    reader sees a second of silence, which a loaded machine can spend before the first fetch)."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "reader", "enable.auto.commit": False})
    tps = [TopicPartition(topic, p) for p in range(partitions)]
    ends = [int(consumer.get_watermark_offsets(tp, timeout=10, cached=False)[1]) for tp in tps]
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    out = []
    deadline = time.monotonic() + 30
    try:
        while any(end > 0 and p.offset < end for p, end in zip(consumer.position(tps), ends, strict=True)):
            assert time.monotonic() < deadline, f"could not read {topic} to its end offsets {ends}"
            message = consumer.poll(0.2)
            if message is not None and message.error() is None:
                value = message.value()
                out.append((message.key(), None if value is None else json.loads(value)))
    finally:
        consumer.close()
    return out


@pytest.mark.timeout(60)
def test_config_records_have_kafka_connects_keys_and_values(shared_broker: BrokerProcess, topic: str) -> None:
    clients = {"bootstrap.servers": shared_broker.bootstrap}
    store = KafkaConfigBackingStore(topic, dict(clients), dict(clients))
    store.start()
    try:
        store.put_connector_config("c1", {"connector.class": "X", "tasks.max": "2"}, TargetState.PAUSED)
        store.put_task_configs("c1", [{"t": "0"}, {"t": "1"}])
        store.put_target_state("c1", TargetState.STOPPED)
        store.put_restart_request(RestartRequest("c1", True, False))
        key = generate_key("HmacSHA256")
        store.put_session_key(key)
        snapshot = store.snapshot()
        assert snapshot.task_ids("c1") == [ConnectorTaskId("c1", 0), ConnectorTaskId("c1", 1)]
        assert snapshot.target_state("c1") is TargetState.STOPPED and snapshot.session_key == key
        store.remove_connector_config("c1")
        assert not store.snapshot().contains("c1")
    finally:
        store.stop()
    records = _raw_records(shared_broker.bootstrap, topic)
    assert records[:6] == [
        (b"target-state-c1", {"state": "PAUSED", "state.v2": "PAUSED"}),
        (b"connector-c1", {"properties": {"connector.class": "X", "tasks.max": "2"}}),
        (b"task-c1-0", {"properties": {"t": "0"}}),
        (b"task-c1-1", {"properties": {"t": "1"}}),
        (b"commit-c1", {"tasks": 2}),
        (b"target-state-c1", {"state": "PAUSED", "state.v2": "STOPPED"}),  # old workers see PAUSED
    ]
    assert records[6] == (b"restart-connector-c1", {"include-tasks": True, "only-failed": False})
    assert records[7][0] == b"session-key" and set(records[7][1]) == {"key", "algorithm", "creation-timestamp"}
    assert records[8:] == [(b"connector-c1", None), (b"target-state-c1", None)]


@pytest.mark.timeout(60)
def test_a_new_reader_rebuilds_the_state_and_defers_uncommitted_task_configs(shared_broker: BrokerProcess,
                                                                            topic: str) -> None:
    clients = {"bootstrap.servers": shared_broker.bootstrap}
    writer = KafkaConfigBackingStore(topic, dict(clients), dict(clients))
    writer.start()
    writer.put_connector_config("c", {"a": "1"})
    writer.put_task_configs("c", [{"t": "0"}])
    writer.log.send_all([(b"task-c-0", b'{"properties":{"t":"new"}}')])  # no commit yet: not applied
    writer.stop()
    reader = KafkaConfigBackingStore(topic, dict(clients), dict(clients))
    reader.start()
    try:
        snapshot = reader.snapshot()
        assert snapshot.connector_config("c") == {"a": "1"}
        assert snapshot.task_configs("c") == [{"t": "0"}]
        assert snapshot.target_state("c") is TargetState.STARTED
        assert snapshot.offset == 4
    finally:
        reader.stop()


@pytest.mark.timeout(60)
def test_offsets_and_statuses_round_trip_through_their_topics(shared_broker: BrokerProcess) -> None:
    clients = {"bootstrap.servers": shared_broker.bootstrap}
    offsets_topic, status_topic = f"off-{uuid.uuid4().hex[:8]}", f"st-{uuid.uuid4().hex[:8]}"
    ensure_topic(clients, offsets_topic, 3, 1)
    ensure_topic(clients, status_topic, 2, 1)
    offsets = KafkaOffsetBackingStore(offsets_topic, dict(clients), dict(clients))
    statuses = KafkaStatusBackingStore(status_topic, dict(clients), dict(clients))
    offsets.start()
    statuses.start()
    key = b'["src",{"filename":"/in.txt"}]'
    offsets.set({key: b'{"position":42}'})
    statuses.generation = 7
    statuses.put("src", ConnectorState(State.RUNNING, "w1:8083", None, "4.3.1"))  # with the plugin version
    statuses.put_task(ConnectorTaskId("src", 0), TaskState(0, State.FAILED, "w1:8083", "boom", "4.3.1"))
    statuses.put_task(ConnectorTaskId("src", 1), TaskState(1, State.RUNNING, "w1:8083"))
    statuses.put_task(ConnectorTaskId("src", 1), TaskState(1, State.DESTROYED, "w1:8083"))
    statuses.log.flush()
    offsets.stop()
    statuses.stop()
    again = KafkaOffsetBackingStore(offsets_topic, dict(clients), dict(clients))
    reread = KafkaStatusBackingStore(status_topic, dict(clients), dict(clients))
    again.start()
    reread.start()
    try:
        assert again.get([key]) == {key: b'{"position":42}'}
        assert again.connector_partitions("src") == [({"filename": "/in.txt"}, {"position": 42})]
        assert reread.get("src") == ConnectorState(State.RUNNING, "w1:8083", None, "4.3.1")
        assert reread.get_all("src") == [TaskState(0, State.FAILED, "w1:8083", "boom", "4.3.1")]
    finally:
        again.stop()
        reread.stop()
    records = dict(_raw_records(shared_broker.bootstrap, status_topic, 2))
    assert records[b"status-connector-src"] == {"state": "RUNNING", "trace": None, "worker_id": "w1:8083",
                                                "generation": 7, "version": "4.3.1"}  # Kafka 4.1+'s fields
    assert records[b"status-task-src-1"] is None  # DESTROYED is a tombstone


@pytest.mark.timeout(30)
def test_an_existing_topic_that_is_not_compacted_is_refused(shared_broker: BrokerProcess) -> None:
    name = f"plain-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": shared_broker.bootstrap})
    admin.create_topics([NewTopic(name, 1, 1)])[name].result(30)
    with pytest.raises(InternalTopicError, match=r"cleanup\.policy=compact"):
        ensure_topic({"bootstrap.servers": shared_broker.bootstrap}, name, 1, 1)
    two = f"two-{uuid.uuid4().hex[:8]}"
    ensure_topic({"bootstrap.servers": shared_broker.bootstrap}, two, 2, 1)
    with pytest.raises(InternalTopicError, match="single partition"):
        ensure_topic({"bootstrap.servers": shared_broker.bootstrap}, two, 1, 1, single_partition=True)
