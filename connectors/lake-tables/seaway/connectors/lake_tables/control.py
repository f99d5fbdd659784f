"""The control topic: the events the Iceberg sink's tasks and its one committer exchange, and their clients.

As Apache Iceberg's Kafka Connect sink does it, the tasks never commit to a table themselves: a single
committer (the coordinator, in the task that holds the connector's first topic-partition) asks them
through the control topic (``iceberg.control.topic``, default ``control-iceberg``) and commits what they
answer, one snapshot per table per ``iceberg.control.commit.interval-ms``::

    coordinator                         control topic                       each task (worker)
    START_COMMIT(commit id)      ------------------------------------>      closes its open sets, writes
                                                                            their data files
                                 <------------------------------------      DATA_WRITTEN(table, topic-partition,
                                                                            offsets start..next, data files)
                                 <------------------------------------      DATA_COMPLETE(commit id, its
                                                                            partitions and how far it sent)
    every partition answered, or iceberg.control.commit.timeout-ms:
    one snapshot per table, the data files + the offsets in its summary
    COMMIT_COMPLETE(commit id, each table's offsets) ------------------>    checks them against what it sent

Events are JSON (one object per record, keyed by the connector's name), not Iceberg's Avro events: a
Java Iceberg sink and this one must not share a control topic (give them different
``iceberg.control.topic`` names). Several Seaway connectors may share one: each reads only its own.

Kafka clients: ``iceberg.kafka.*`` settings (Kafka's client names, e.g. ``iceberg.kafka.bootstrap.servers``,
``iceberg.kafka.security.protocol``), over the Connect worker's own client settings when the worker was
started from a properties file (as Iceberg's sink reads the worker's properties file from its command line).
"""

from __future__ import annotations

import contextlib
import json
import logging
import sys
import threading
import time
import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from confluent_kafka import OFFSET_END, Consumer, KafkaException, Producer
from confluent_kafka import TopicPartition as KafkaTopicPartition
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]
from seaway.connect.api import ConnectError
from seaway.kafka_clients import STREAMING_CONSUMER, close_producer
from seaway.properties import load_properties_file
from seaway.security.kafka_client import ClientConfigError, librdkafka_config

__all__ = [
    "COMMIT_COMPLETE",
    "DATA_COMPLETE",
    "DATA_WRITTEN",
    "START_COMMIT",
    "ControlChannel",
    "client_settings",
]

log = logging.getLogger(__name__)

START_COMMIT = "START_COMMIT"
DATA_WRITTEN = "DATA_WRITTEN"
DATA_COMPLETE = "DATA_COMPLETE"
COMMIT_COMPLETE = "COMMIT_COMPLETE"
#: worker settings that matter to a Kafka client (the rest of a worker file is Connect's own)
_CLIENT_PREFIXES = ("bootstrap.servers", "security.protocol", "sasl.", "ssl.", "client.dns.lookup")


def _worker_file() -> Path | None:
    """The worker's properties file from this process's command line (``seaway connect standalone|distributed
    FILE ...``), as Iceberg's sink finds the worker's configuration."""
    args = sys.argv[1:]
    for i, arg in enumerate(args):
        if arg in ("standalone", "distributed") and i + 1 < len(args):
            path = Path(args[i + 1])
            return path if path.is_file() else None
    return None


def client_settings(kafka_props: Mapping[str, str]) -> dict[str, Any]:
    """librdkafka settings of the control topic's clients: the worker's, then ``iceberg.kafka.*`` over them."""
    props: dict[str, str] = {}
    worker = _worker_file()
    if worker is not None:
        props.update({k: v for k, v in load_properties_file(worker).items() if k.startswith(_CLIENT_PREFIXES)})
    # iceberg.kafka.* SASL or TLS settings replace the worker's as a group: a username here and the
    # worker's sasl.jaas.config would otherwise be two credentials for one login (refused)
    for group in ("sasl.", "ssl."):
        if any(k.startswith(group) for k in kafka_props):
            props = {k: v for k, v in props.items() if not k.startswith(group)}
    props.update(kafka_props)
    if not props.get("bootstrap.servers"):
        raise ConnectError("The Iceberg sink's control topic needs Kafka: set iceberg.kafka.bootstrap.servers (the "
                           "worker's own settings are used only when it runs from a properties file)")
    try:
        return librdkafka_config(props, "iceberg.kafka.")
    except ClientConfigError as e:
        raise ConnectError(str(e)) from None


class ControlChannel:
    """One task's producer and consumer of the control topic (events of this connector only).

    The consumer reads from the topic's end at the time it starts: what was said before concerns a
    previous run, whose tasks and committer are gone (their data files were never committed, or the
    tables already hold them).
    """

    def __init__(self, settings: Mapping[str, Any], topic: str, connector: str, group_id: str,
                 stopping: threading.Event | None = None) -> None:
        #: set when the owner stops: a flush then gives up at once instead of waiting out its timeout (a
        #: stopping task must finish within the worker's task.shutdown.graceful.timeout.ms)
        self.stopping = stopping or threading.Event()
        self.topic = topic
        self.connector = connector
        self.member = uuid.uuid4().hex
        self._settings = dict(settings)
        _ensure_topic(self._settings, topic)
        self.producer = Producer({**self._settings, "enable.idempotence": True, "acks": "all", "linger.ms": 0})
        self.consumer = Consumer({**self._settings, "group.id": group_id, "enable.auto.commit": False,
                                  "auto.offset.reset": "latest", "fetch.wait.max.ms": 50, **STREAMING_CONSUMER})
        metadata = self.consumer.list_topics(topic, timeout=30)
        partitions = sorted(metadata.topics[topic].partitions) if topic in metadata.topics else [0]
        self.consumer.assign([KafkaTopicPartition(topic, p, OFFSET_END) for p in partitions])

    def send(self, event: Mapping[str, Any], flush: bool = True) -> None:
        """Produce one event (partition 0: one ordered stream per producer); ``flush`` waits until it is
        written (the order of a task's DATA_WRITTEN and DATA_COMPLETE events is what the committer relies on)."""
        body = json.dumps({**event, "connector": self.connector, "member": self.member},
                          separators=(",", ":")).encode()
        errors: list[Any] = []
        self.producer.produce(self.topic, body, key=self.connector.encode(), partition=0,
                              on_delivery=lambda err, _msg: errors.append(err) if err is not None else None)
        if flush:
            self.flush()
            if errors:
                raise ConnectError(f"Could not write to the control topic {self.topic}: {errors[0]}")

    def flush(self, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while self.producer.flush(min(0.5, max(0.0, deadline - time.monotonic()))) > 0:
            if self.stopping.is_set():
                raise ConnectError(f"Stopping: events for the control topic {self.topic} were not written")
            if time.monotonic() >= deadline:
                raise ConnectError(f"The control topic {self.topic} did not take the sink's events within "
                                   f"{timeout} s")

    def poll(self, timeout: float = 0.0, max_events: int = 500) -> Iterator[dict[str, Any]]:
        """This connector's events that arrived (waiting up to ``timeout`` for the first)."""
        for msg in self.consumer.consume(max_events, timeout):
            if msg.error() is not None:
                log.debug("control topic: %s", msg.error())
                continue
            if msg.key() != self.connector.encode():
                continue
            value = msg.value()
            try:
                event = json.loads(value) if value is not None else None
            except ValueError:
                log.warning("Skipping a control-topic record that is not JSON at %s-%s@%s", msg.topic(),
                            msg.partition(), msg.offset())
                continue
            if isinstance(event, dict) and event.get("connector") == self.connector:
                yield event

    def close(self) -> None:
        try:
            close_producer(self.producer, 10.0)
        finally:
            with contextlib.suppress(RuntimeError):  # closed already
                self.consumer.close()


def _ensure_topic(settings: Mapping[str, Any], topic: str) -> None:
    """Create the control topic with one partition if it is missing (Iceberg's docs ask for one)."""
    admin = AdminClient(dict(settings))
    try:
        if topic in admin.list_topics(topic, timeout=30).topics:
            return
        brokers = len(admin.list_topics(timeout=30).brokers) or 1
        futures = admin.create_topics([NewTopic(topic, 1, min(3, brokers))])
        try:
            futures[topic].result(30)
        except KafkaException as e:
            if "TOPIC_ALREADY_EXISTS" not in str(e) and "already exists" not in str(e):
                raise ConnectError(f"Could not create the control topic {topic}: {e}") from None
    finally:
        del admin
