"""The ``_schemas`` log on a Kafka topic (confluent-kafka), as Confluent's ``KafkaStore`` keeps it.

* **Topic**: exactly one partition and ``cleanup.policy=compact``. Created so when missing
  (replication factor capped at the number of brokers); an existing topic with more
  partitions or another cleanup policy is refused with :class:`SchemaTopicError`, because a
  ``delete`` policy would silently drop schemas after ``retention.ms``.
* **Writes**: ``acks=all``, one in flight, and ``append`` waits for the acknowledgement, so
  the returned offset is durable. (Not the idempotent producer: it needs InitProducerId,
  which Seaway's broker does not serve, and one write at a time gains nothing from it.)
* **Reads**: manual assignment of partition 0 from the requested offset; never subscribes,
  never commits (librdkafka insists on a ``group.id``; it is never joined). Every instance
  replays the whole topic.
* **End offset**: the high watermark, queried fresh (``ListOffsets``), so a reader that has
  applied everything below it has seen every acknowledged write (read-your-writes).
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from typing import Any

from confluent_kafka import (
    Consumer,
    KafkaError,
    KafkaException,
    Message,
    Producer,
    TopicPartition,
)
from confluent_kafka.admin import AdminClient, ConfigResource  # type: ignore[attr-defined]
from confluent_kafka.cimpl import NewTopic
from seaway.kafka_clients import STREAMING_CONSUMER, close_producer
from seaway.schema_registry.errors import ErrorCode, RegistryError
from seaway.schema_registry.log import LogRecord
from seaway.schema_registry.settings import RegistrySettings

__all__ = ["KafkaSchemaLog", "SchemaTopicError"]

_PARTITION = 0
# librdkafka codes that mean "not yet" while a broker (re)starts, beside those it flags retriable
_TRANSIENT_CODES = frozenset({
    KafkaError._UNKNOWN_PARTITION, KafkaError._TRANSPORT, KafkaError._ALL_BROKERS_DOWN,
    KafkaError._TIMED_OUT, KafkaError.LEADER_NOT_AVAILABLE, KafkaError.NOT_LEADER_FOR_PARTITION,
})
_LIBRDKAFKA_LOG = logging.getLogger("seaway.schema_registry.librdkafka")
_BATCH = 500


class SchemaTopicError(RegistryError):
    """The schemas topic exists but cannot hold registry state (partitions, cleanup policy)."""

    def __init__(self, message: str) -> None:
        super().__init__(ErrorCode.STORE_ERROR, message, retriable=False)


def _store_error(message: str) -> RegistryError:
    return RegistryError(ErrorCode.STORE_ERROR, message, retriable=True)


class KafkaSchemaLog:
    """A :class:`~seaway.schema_registry.log.SchemaLog` on a single-partition compacted topic."""

    def __init__(
        self,
        bootstrap_servers: str,
        topic: str = "_schemas",
        *,
        replication_factor: int = 3,
        timeout: float = 10.0,
        extra_config: dict[str, Any] | None = None,
    ) -> None:
        self.topic = topic
        self.timeout = timeout
        base: dict[str, Any] = {
            "bootstrap.servers": bootstrap_servers,
            "log.connection.close": False,  # idle disconnects are normal, not worth a log line
            "logger": _LIBRDKAFKA_LOG,  # librdkafka's chatter goes to logging, not straight to stderr
            **(extra_config or {}),
        }
        # the admin client serves the start only: not kept, so its threads end once the topic is checked
        self.cluster_id = self._ensure_topic(AdminClient(dict(base)), replication_factor)
        self._producer = Producer(
            {**base, "acks": "all", "linger.ms": 0, "max.in.flight.requests.per.connection": 1}
        )
        reader = {
            **base,
            # librdkafka requires a group id; with assign() only it is never joined nor committed.
            "group.id": f"seaway-schemas-reader-{uuid.uuid4().hex[:8]}",
            "enable.auto.commit": False,
            "enable.auto.offset.store": False,
            "auto.offset.reset": "earliest",
            "fetch.wait.max.ms": 100,
            # librdkafka prefetches up to 64 MB per partition by default; replaying a topic of
            # large schemas then held that much in the client's queue (RSS after a restart).
            "queued.max.messages.kbytes": 8192,
            # ... and without a 1 s pause each time those 8 MiB are full during a replay.
            **STREAMING_CONSUMER,
        }
        self._consumer = Consumer(reader)
        # A second handle for watermark queries: on the reading handle they wait behind poll().
        self._offsets = Consumer(reader)
        self._position: int | None = None
        self._read_lock = threading.Lock()
        self._write_lock = threading.Lock()

    @classmethod
    def from_settings(cls, settings: RegistrySettings, extra_config: dict[str, Any] | None = None) -> KafkaSchemaLog:
        """``extra_config``: the ``kafkastore.*`` security settings, in librdkafka's names."""
        return cls(
            settings.kafkastore_bootstrap_servers,
            settings.kafkastore_topic,
            replication_factor=settings.kafkastore_topic_replication_factor,
            timeout=settings.kafkastore_init_timeout_ms / 1000,
            extra_config=extra_config,
        )

    # -- topic ----------------------------------------------------------------------------

    def _ensure_topic(self, admin: AdminClient, replication_factor: int) -> str:
        try:
            metadata = admin.list_topics(timeout=self.timeout)
        except KafkaException as exc:
            raise _store_error(f"Cannot reach Kafka to find the {self.topic} topic: {exc}") from exc
        topic = metadata.topics.get(self.topic)
        if topic is None or topic.error is not None:
            self._create_topic(admin, max(1, min(replication_factor, len(metadata.brokers))))
            metadata = admin.list_topics(topic=self.topic, timeout=self.timeout)
            topic = metadata.topics.get(self.topic)
        if topic is None or topic.error is not None:
            raise _store_error(f"The schemas topic {self.topic} is not available")
        if len(topic.partitions) != 1:
            raise SchemaTopicError(
                f"The schema topic {self.topic} should have only 1 partition but has {len(topic.partitions)}"
            )
        self._verify_compacted(admin)
        return str(metadata.cluster_id or "")

    def _create_topic(self, admin: AdminClient, replication_factor: int) -> None:
        spec = NewTopic(
            self.topic,
            num_partitions=1,
            replication_factor=replication_factor,
            config={"cleanup.policy": "compact"},
        )
        try:
            admin.create_topics([spec], operation_timeout=self.timeout)[self.topic].result(self.timeout)
        except KafkaException as exc:
            if exc.args[0].code() != KafkaError.TOPIC_ALREADY_EXISTS:  # another instance won the race
                raise _store_error(f"Cannot create the {self.topic} topic: {exc}") from exc

    def _verify_compacted(self, admin: AdminClient) -> None:
        resource = ConfigResource(ConfigResource.Type.TOPIC, self.topic)
        try:
            configs = admin.describe_configs([resource])[resource].result(self.timeout)
        except KafkaException as exc:
            raise _store_error(f"Cannot read the configuration of the {self.topic} topic: {exc}") from exc
        entry = configs.get("cleanup.policy")
        policy = "" if entry is None or entry.value is None else str(entry.value)
        if "compact" not in {p.strip() for p in policy.split(",")}:
            raise SchemaTopicError(
                f"The retention policy of the schema topic {self.topic} is incorrect "
                f"(cleanup.policy={policy or 'unset'}). You must configure the topic to 'compact' "
                "cleanup policy to avoid Kafka deleting your schemas after a week."
            )

    # -- SchemaLog ------------------------------------------------------------------------

    def append(self, key: bytes, value: bytes | None) -> int:
        outcome: dict[str, Any] = {}

        def delivered(err: KafkaError | None, msg: Message) -> None:
            outcome["error"] = err
            outcome["offset"] = None if err is not None else msg.offset()

        with self._write_lock:
            try:
                self._producer.produce(
                    self.topic, value=value, key=key, partition=_PARTITION, on_delivery=delivered
                )
            except (KafkaException, BufferError) as exc:
                raise _store_error(f"Error writing to the schemas topic: {exc}") from exc
            self._producer.flush(self.timeout)
        if "error" not in outcome:
            raise _store_error("Timed out writing to the schemas topic")
        if outcome["error"] is not None:
            raise _store_error(f"Error writing to the schemas topic: {outcome['error']}")
        return int(outcome["offset"])

    def read(self, start: int, timeout: float) -> list[LogRecord]:
        """Wait up to ``timeout`` for the first record, then take whatever else is ready."""
        with self._read_lock:
            if self._position != start:
                self._consumer.assign([TopicPartition(self.topic, _PARTITION, start)])
                self._position = start
            first = self._consumer.poll(timeout)
            if first is None:
                return []
            messages = [first, *self._consumer.consume(num_messages=_BATCH, timeout=0)]
            out = []
            for msg in messages:
                err = msg.error()
                if err is not None:
                    if err.code() == KafkaError._PARTITION_EOF:
                        continue
                    raise _store_error(f"Error reading the schemas topic: {err}")
                out.append(LogRecord(int(msg.offset() or 0), msg.key() or b"", msg.value()))
            if out:
                self._position = out[-1].offset + 1
            return out

    def end_offset(self) -> int:
        """The topic's high watermark.

        Right after a broker restart the client's metadata can lack the partition for a moment
        (``_UNKNOWN_PARTITION``) or the broker is not reachable yet: such transient errors are
        retried until ``timeout``, then answered as a timeout (50002), which clients retry.
        Anything else is a store error (50001) at once.
        """
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                _low, high = self._offsets.get_watermark_offsets(
                    TopicPartition(self.topic, _PARTITION),
                    timeout=max(0.1, deadline - time.monotonic()),
                    cached=False,
                )
                return int(high)
            except KafkaException as exc:
                error = exc.args[0] if exc.args else None
                transient = isinstance(error, KafkaError) and (
                    error.retriable() or error.code() in _TRANSIENT_CODES
                )
                if not transient:
                    raise _store_error(f"Cannot read the end offset of the schemas topic: {exc}") from exc
                if time.monotonic() >= deadline:
                    raise RegistryError(
                        ErrorCode.OPERATION_TIMEOUT,
                        f"Timed out reading the end offset of the schemas topic: {exc}",
                        retriable=True,
                    ) from exc
            time.sleep(0.1)

    def close(self) -> None:
        close_producer(self._producer, self.timeout)
        self._offsets.close()
        with self._read_lock:
            self._consumer.close()
