"""KafkaBasedLog: a compacted topic read end to end into memory, plus a producer to append to it.

Kafka's ``KafkaBasedLog``, shared by the config, offset and status stores. A background thread
consumes every partition from the beginning (assigned, no consumer group, no commits) and
hands each record to the store's callback, in order per partition. :meth:`KafkaBasedLog.read_to_end`
blocks until the thread has consumed everything that was in the topic when it was called,
which is how a store makes its own writes (or another worker's) visible before acting.
The end offsets are fetched by the consumer thread itself, so the consumer is never used
from two threads.

The consumer reads with ``isolation.level=read_committed``, whatever the worker's
``consumer.*`` settings say: exactly-once source tasks write their offsets inside
transactions, and the leader writes the config topic in transactions when
``exactly.once.source.support`` is ``preparing`` or ``enabled``. Only committed records are
applied, an aborted transaction (a task killed mid-transaction) is never seen, and the end
that :meth:`KafkaBasedLog.read_to_end` waits for is the last stable offset, so an open
transaction cannot hold a reader up. Without transactions this changes nothing.

:class:`TransactionalWriter` is the fenceable writer (KIP-618's transactional leader): each
batch of records is one transaction of a producer with a fixed ``transactional.id``; a newer
holder of that id (a new leader) fences it, and its next write fails with :class:`FencedError`.

:func:`ensure_topic` creates an internal topic with ``cleanup.policy=compact`` when missing and
refuses an existing one that is not compact-only (losing old configs or offsets to time
retention would silently reset connectors).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, KafkaException, Message, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic  # type: ignore[attr-defined]
from seaway.errors import SeawayError
from seaway.kafka_clients import STREAMING_CONSUMER, close_producer

__all__ = ["FencedError", "InternalTopicError", "KafkaBasedLog", "TransactionalWriter", "ensure_topic"]

log = logging.getLogger(__name__)


class InternalTopicError(SeawayError):
    """An internal topic is missing and cannot be created, or exists with the wrong settings."""


class FencedError(InternalTopicError):
    """A transactional write failed: another producer took over the ``transactional.id`` (or it failed fatally)."""


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
    metadata = _wait_for_topic_metadata(admin, topic, timeout)
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


def _wait_for_topic_metadata(admin: AdminClient, topic: str, timeout: float) -> Any:
    """The topic's metadata once a broker lists it without error, retried until ``timeout``.

    A KRaft cluster answers CreateTopics once the controller has committed the topic; the
    brokers' metadata caches catch up a moment later, so a Metadata request right after the
    create can still answer UNKNOWN_TOPIC_OR_PART. Kafka Connect retries until the partitions
    show; so do we, instead of failing the worker's start on that race.
    """
    deadline = time.monotonic() + timeout
    delay = 0.05
    while True:
        remaining = deadline - time.monotonic()
        metadata = admin.list_topics(topic, timeout=max(remaining, 1.0)).topics.get(topic)
        if metadata is not None and metadata.error is None and metadata.partitions:
            return metadata
        if time.monotonic() + delay > deadline:
            raise InternalTopicError(f"Internal topic '{topic}' is not available: {metadata and metadata.error}")
        time.sleep(delay)
        delay = min(delay * 2, 1.0)


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
                                 "fetch.wait.max.ms": 50, **STREAMING_CONSUMER, **consumer_config,
                                 "isolation.level": "read_committed"}
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
            producer, self._producer = self._producer, None
            close_producer(producer, 5)
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


class TransactionalWriter:
    """Writes batches of records to one topic, each batch in one transaction of a fenceable producer.

    :meth:`claim` creates the producer and calls ``init_transactions``, which fences every
    earlier producer with the same ``transactional.id`` (and aborts its open transaction).
    :meth:`send_all` returns the offset just past the last record written, so the caller can
    read its own write back before acting on it: a commit's markers reach the partition after
    ``commit_transaction`` returns, and a ``read_committed`` reader sees the records only then.
    """

    def __init__(self, topic: str, producer_config: dict[str, Any], transactional_id: str) -> None:
        self.topic = topic
        self.transactional_id = transactional_id
        self._config = {**producer_config, "transactional.id": transactional_id, "enable.idempotence": True,
                        "acks": "all", "linger.ms": 0}
        self._config.pop("message.timeout.ms", None)  # must not exceed transaction.timeout.ms
        self._producer: Producer | None = None
        self._lock = threading.Lock()

    @property
    def claimed(self) -> bool:
        return self._producer is not None

    def claim(self, timeout: float = 60.0) -> None:
        """Become the only writer (a no-op if already claimed); raises :class:`FencedError` on failure."""
        with self._lock:
            if self._producer is not None:
                return
            producer = Producer(self._config)
            try:
                producer.init_transactions(timeout)
            except KafkaException as e:
                close_producer(producer)
                raise FencedError(f"Failed to claim write privileges for {self.topic} as "
                                  f"{self.transactional_id}: {e}") from e
            self._producer = producer
            log.info("Claimed write privileges for %s (transactional.id %s)", self.topic, self.transactional_id)

    def relinquish(self) -> None:
        with self._lock:
            producer, self._producer = self._producer, None
        if producer is not None:
            close_producer(producer)

    def send_all(self, records: list[tuple[bytes | None, bytes | None]], timeout: float = 30.0) -> int:
        """Write ``records`` in one transaction; the end offset reached. Raises :class:`FencedError`."""
        with self._lock:
            producer = self._producer
            if producer is None:
                raise FencedError(f"Write privileges for {self.topic} are not claimed (or were lost to a newer "
                                  "leader)")
            ends: list[int] = []
            errors: list[KafkaError] = []

            def delivered(err: KafkaError | None, msg: Message) -> None:
                if err is not None:
                    errors.append(err)
                else:
                    ends.append(int(msg.offset() or 0) + 1)

            try:
                producer.begin_transaction()
                for key, value in records:
                    producer.produce(self.topic, key=key, value=value, on_delivery=delivered)
                producer.flush(timeout)
                if errors:
                    raise KafkaException(errors[0])
                producer.commit_transaction(timeout)
            except Exception as e:  # KafkaException, or (a fatal error raised inside a callback) SystemError
                self._producer = None
                # an abortable error leaves a transaction open; a fatal one (fenced) cannot abort
                with contextlib.suppress(KafkaException):
                    producer.abort_transaction(5)
                close_producer(producer)
                raise FencedError(f"Failed to write to {self.topic} as {self.transactional_id}: {e}") from e
            return max(ends, default=0)
