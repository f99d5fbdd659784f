"""KafkaBasedLog: a compacted topic read end to end into memory, plus a producer to append to it.

Kafka's ``KafkaBasedLog``, shared by the config, offset and status stores. A background thread
consumes every partition from the beginning (assigned, no consumer group, no commits) and
hands each record to the store's callback, in order per partition. :meth:`KafkaBasedLog.read_to_end`
blocks until the thread has consumed everything that was in the topic when it was called,
which is how a store makes its own writes (or another worker's) visible before acting.
The end offsets are fetched by the consumer thread itself, so the consumer is never used
from two threads.

:func:`ensure_topic` creates an internal topic with ``cleanup.policy=compact`` when missing and
refuses an existing one that is not compact-only (losing old configs or offsets to time
retention would silently reset connectors).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, KafkaException, Message, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic  # type: ignore[attr-defined]
from seaway.errors import SeawayError

__all__ = ["InternalTopicError", "KafkaBasedLog", "ensure_topic"]

log = logging.getLogger(__name__)


class InternalTopicError(SeawayError):
    """An internal topic is missing and cannot be created, or exists with the wrong settings."""


def ensure_topic(admin_config: dict[str, Any], topic: str, partitions: int, replication_factor: int,
                 configs: dict[str, str] | None = None, *, single_partition: bool = False,
                 timeout: float = 30.0) -> None:
    """Create ``topic`` (compacted) if missing; verify an existing one is compact-only."""
    admin = AdminClient(admin_config)
    wanted = {**(configs or {}), "cleanup.policy": "compact"}
    futures = admin.create_topics([NewTopic(topic, num_partitions=partitions, replication_factor=replication_factor,
                                            config=wanted)], operation_timeout=timeout, request_timeout=timeout)
    try:
        futures[topic].result(timeout)
        log.info("Created internal topic %s (%d partitions, replication factor %d, compacted)", topic, partitions,
                 replication_factor)
    except KafkaException as e:
        error = e.args[0] if e.args else None
        if not (isinstance(error, KafkaError) and error.code() == KafkaError.TOPIC_ALREADY_EXISTS):
            raise InternalTopicError(f"Unable to create internal topic '{topic}': {e}") from e
    metadata = admin.list_topics(topic, timeout=timeout).topics.get(topic)
    if metadata is None or metadata.error is not None:
        raise InternalTopicError(f"Internal topic '{topic}' is not available: {metadata and metadata.error}")
    if single_partition and len(metadata.partitions) != 1:
        raise InternalTopicError(f"Topic '{topic}' supplied via the 'config.storage.topic' property is required to "
                                 f"have a single partition in order to guarantee consistency of connector "
                                 f"configurations, but it has {len(metadata.partitions)} partitions.")
    resource = ConfigResource(ConfigResource.Type.TOPIC, topic)
    described = admin.describe_configs([resource], request_timeout=timeout)[resource].result(timeout)
    entry = described.get("cleanup.policy")
    policy = {p.strip().lower() for p in str(entry.value if entry is not None else "delete").split(",")}
    if policy != {"compact"}:
        raise InternalTopicError(
            f"Topic '{topic}' supplied to Connect as an internal topic must have 'cleanup.policy=compact' (only), "
            f"but has 'cleanup.policy={entry.value if entry is not None else 'delete'}'. Connect would lose "
            f"data when old records expire; change the topic's policy or use another topic.")


class _ReadRequest:
    __slots__ = ("future", "targets")

    def __init__(self) -> None:
        self.future: Future[None] = Future()
        self.targets: dict[int, int] | None = None


class KafkaBasedLog:
    """Producer + background consumer over one topic; ``callback`` sees every record in order."""

    def __init__(self, topic: str, producer_config: dict[str, Any], consumer_config: dict[str, Any],
                 callback: Callable[[Message], None], *, name: str = "") -> None:
        self.topic = topic
        self._producer_config = {"acks": "all", "partitioner": "murmur2_random", "linger.ms": 0,
                                 **producer_config}
        self._consumer_config = {"enable.auto.commit": False, "auto.offset.reset": "earliest",
                                 "enable.partition.eof": False, "group.id": f"seaway-internal-{topic}",
                                 "fetch.wait.max.ms": 50, **consumer_config}
        self._callback = callback
        self._name = name or topic
        self._producer: Producer | None = None
        self._consumer: Consumer | None = None
        self._partitions: list[TopicPartition] = []
        self._requests: list[_ReadRequest] = []
        self._requests_lock = threading.Lock()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self.failure: BaseException | None = None

    def start(self, timeout: float = 60.0) -> None:
        """Connect, start consuming from the beginning and read to the end."""
        self._producer = Producer(self._producer_config)
        consumer = Consumer(self._consumer_config)
        metadata = consumer.list_topics(self.topic, timeout=timeout).topics.get(self.topic)
        if metadata is None or metadata.error is not None or not metadata.partitions:
            consumer.close()
            raise InternalTopicError(f"Internal topic '{self.topic}' has no partitions visible to this worker")
        self._partitions = [TopicPartition(self.topic, p, OFFSET_BEGINNING) for p in sorted(metadata.partitions)]
        consumer.assign(self._partitions)
        self._consumer = consumer
        self._thread = threading.Thread(target=self._run, name=f"kafka-log-{self._name}", daemon=True)
        self._thread.start()
        self.read_to_end(timeout)

    def stop(self) -> None:
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(10)
        if self._producer is not None:
            self._producer.flush(5)
        with self._requests_lock:
            for request in self._requests:
                if not request.future.done():
                    request.future.set_exception(InternalTopicError(f"{self._name} log stopped"))
            self._requests.clear()

    # -- writes ---------------------------------------------------------------------------------
    def send(self, key: bytes | None, value: bytes | None,
             on_delivery: Callable[[KafkaError | None, Message], None] | None = None) -> None:
        assert self._producer is not None, "KafkaBasedLog not started"
        while True:
            try:
                self._producer.produce(self.topic, key=key, value=value, on_delivery=on_delivery)
                break
            except BufferError:
                self._producer.poll(0.05)
        self._producer.poll(0)

    def send_all(self, records: list[tuple[bytes | None, bytes | None]], timeout: float = 30.0) -> None:
        """Produce ``records`` and wait until every one is acknowledged; raises on the first failure."""
        errors: list[KafkaError] = []

        def delivered(err: KafkaError | None, _: Message) -> None:
            if err is not None:
                errors.append(err)

        for key, value in records:
            self.send(key, value, delivered)
        self.flush(timeout)
        if errors:
            raise InternalTopicError(f"Failed to write to {self.topic}: {errors[0]}")

    def flush(self, timeout: float = 30.0) -> None:
        assert self._producer is not None, "KafkaBasedLog not started"
        if self._producer.flush(timeout) > 0:
            raise InternalTopicError(f"Timed out writing to {self.topic}")

    # -- reads ----------------------------------------------------------------------------------
    def read_to_end(self, timeout: float = 30.0) -> None:
        """Block until every record present now has been passed to the callback."""
        if self.failure is not None:
            raise InternalTopicError(f"{self._name} log failed: {self.failure}")
        request = _ReadRequest()
        with self._requests_lock:
            self._requests.append(request)
        try:
            request.future.result(timeout)
        except TimeoutError:
            raise InternalTopicError(f"Timed out reading {self.topic} to the end") from None

    def _run(self) -> None:
        consumer = self._consumer
        assert consumer is not None
        try:
            while not self._stopping.is_set():
                self._plan_reads(consumer)
                for message in consumer.consume(500, 0.05):
                    error = message.error()
                    if error is not None:
                        if error.code() != KafkaError._PARTITION_EOF:
                            log.warning("%s: consumer error %s", self._name, error)
                        continue
                    try:
                        self._callback(message)
                    except Exception:
                        log.exception("%s: failed to apply record at offset %s", self._name, message.offset())
                self._complete_reads(consumer)
        except Exception as e:  # the store is unusable: fail readers instead of hanging them
            log.exception("%s: log reader failed", self._name)
            self.failure = e
        finally:
            consumer.close()

    def _plan_reads(self, consumer: Consumer) -> None:
        with self._requests_lock:
            pending = [r for r in self._requests if r.targets is None]
        if not pending:
            return
        targets = {}
        for tp in self._partitions:
            for attempt in range(3):
                try:
                    _, high = consumer.get_watermark_offsets(TopicPartition(self.topic, tp.partition), timeout=5,
                                                             cached=False)
                    targets[tp.partition] = int(high)
                    break
                except KafkaException:
                    if attempt == 2:
                        raise
                    time.sleep(0.1)
        for request in pending:
            request.targets = dict(targets)

    def _complete_reads(self, consumer: Consumer) -> None:
        with self._requests_lock:
            planned = [r for r in self._requests if r.targets is not None]
        if not planned:
            return
        positions = {tp.partition: tp.offset for tp in consumer.position(
            [TopicPartition(self.topic, tp.partition) for tp in self._partitions])}
        done = []
        for request in planned:
            assert request.targets is not None
            if all(high <= 0 or positions.get(p, -1) >= high for p, high in request.targets.items()):
                done.append(request)
        if done:
            with self._requests_lock:
                self._requests = [r for r in self._requests if r not in done]
            for request in done:
                request.future.set_result(None)
