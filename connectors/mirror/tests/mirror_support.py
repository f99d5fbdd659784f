"""Helpers of the MirrorMaker 2 tests: two real Seaway brokers, Connect workers bound to one of them, records.

Everything is real: broker processes (``tests.support.broker``), ``seaway connect distributed``
worker processes (``tests.connect.distributed.dist_support``), confluent-kafka clients.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from confluent_kafka import OFFSET_BEGINNING, Consumer, Message, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]

from tests.connect.distributed.dist_support import WorkerProcess, free_port, wait_for, worker_properties
from tests.support.broker import BrokerProcess

__all__ = ["Clusters", "Rec", "connector_config", "create_topic", "end_offsets", "produce", "put_connector",
           "read_partition", "start_worker", "topics"]

SHORT = {"refresh.topics.interval.seconds": "1", "refresh.groups.interval.seconds": "1",
         "sync.topic.configs.interval.seconds": "1", "emit.checkpoints.interval.seconds": "1",
         "emit.heartbeats.interval.seconds": "1", "sync.group.offsets.interval.seconds": "1"}
"""Intervals of a second, so the tests see refreshes and checkpoints quickly."""
SINGLE_REPLICA = {"replication.factor": "1", "offset-syncs.topic.replication.factor": "1",
                  "checkpoints.topic.replication.factor": "1", "heartbeats.topic.replication.factor": "1"}


@dataclass
class Clusters:
    """Two broker processes with their own data directories: the source ``a`` and the target ``b``."""

    a: BrokerProcess
    b: BrokerProcess

    def bootstrap(self, alias: str) -> str:
        return self.a.bootstrap if alias == "A" else self.b.bootstrap


@dataclass(frozen=True)
class Rec:
    """What must survive mirroring: key, value, headers, timestamp (partition is the list's index)."""

    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...]
    timestamp: int


def create_topic(bootstrap: str, topic: str, partitions: int, config: Mapping[str, str] | None = None) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, partitions, 1, config=dict(config or {}))])[topic].result(30)


def topics(bootstrap: str) -> set[str]:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    return set(admin.list_topics(timeout=10).topics)


def produce(bootstrap: str, topic: str, records: Iterable[tuple[int, Rec]]) -> int:
    """Produce ``(partition, record)`` pairs; the count acknowledged."""
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "enable.idempotence": True})
    errors: list[Any] = []
    count = 0
    for partition, rec in records:
        producer.produce(topic, rec.value, rec.key, partition,
                         lambda err, _msg: errors.append(err) if err else None, None, rec.timestamp,
                         list(rec.headers) or None)
        count += 1
        if count % 5000 == 0:
            producer.poll(0)
    assert producer.flush(30) == 0 and not errors, errors
    return count


def end_offsets(bootstrap: str, topic: str, partitions: int) -> list[int]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "mirror-test-watermarks"})
    try:
        return [int(consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1]) for p in range(partitions)]
    finally:
        consumer.close()


def _headers(message: Message) -> tuple[tuple[str, bytes | None], ...]:
    """A consumed message's headers: librdkafka hands them over as (key, bytes or None) pairs."""
    headers = message.headers() or []
    assert isinstance(headers, list), headers
    out: list[tuple[str, bytes | None]] = []
    for key, value in headers:
        assert not isinstance(value, str), (key, value)
        out.append((key, value))
    return tuple(out)


def read_partition(bootstrap: str, topic: str, partition: int, end: int | None = None) -> list[tuple[int, Rec]]:
    """Every ``(offset, record)`` of one partition up to ``end`` (default: its end offset now)."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"mirror-test-{uuid.uuid4().hex[:6]}",
                         "enable.auto.commit": False})
    out: list[tuple[int, Rec]] = []
    try:
        if end is None:
            end = int(consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=10)[1])
        consumer.assign([TopicPartition(topic, partition, OFFSET_BEGINNING)])
        position = 0
        while position < end:
            for message in consumer.consume(5000, 0.1):
                assert message.error() is None, message.error()
                offset = message.offset()
                assert offset is not None
                out.append((offset, Rec(message.key(), message.value(), _headers(message), message.timestamp()[1])))
                position = offset + 1
    finally:
        consumer.close()
    return out


def start_worker(directory: Path, bootstrap: str, extra: Mapping[str, str] | None = None) -> WorkerProcess:
    """A ``seaway connect distributed`` worker bound to ``bootstrap``, a cluster of one."""
    group = f"mm-{uuid.uuid4().hex[:8]}"
    props = worker_properties(bootstrap, free_port(), group, extra=dict(extra or {}))
    return WorkerProcess(directory, props).start()


def connector_config(connector: str, clusters: Clusters, source: str = "A", target: str = "B",
                     **extra: str) -> dict[str, str]:
    return {"connector.class": f"org.apache.kafka.connect.mirror.{connector}",
            "source.cluster.alias": source, "target.cluster.alias": target,
            "source.cluster.bootstrap.servers": clusters.bootstrap(source),
            "target.cluster.bootstrap.servers": clusters.bootstrap(target),
            **SINGLE_REPLICA, **SHORT, **extra}


def put_connector(worker: WorkerProcess, name: str, config: Mapping[str, str], tasks: int = 1) -> None:
    """PUT the config (retrying while the worker's group settles) and wait for the connector and tasks RUNNING."""
    def put() -> httpx.Response | None:
        reply = worker.request("PUT", f"/connectors/{name}/config", json=dict(config))
        assert reply.status_code != 400, reply.text
        return reply if reply.status_code < 300 else None

    wait_for(put, 60, 0.3, what=f"PUT {name}")

    def running() -> bool:
        status = worker.get(f"/connectors/{name}/status").json()
        states = [status["connector"]["state"], *(t["state"] for t in status.get("tasks", []))]
        assert "FAILED" not in states, status
        return len(status.get("tasks", [])) >= tasks and set(states) == {"RUNNING"}

    wait_for(running, 60, 0.2, what=f"{name} RUNNING")
