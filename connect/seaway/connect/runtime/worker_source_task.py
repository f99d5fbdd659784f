"""WorkerSourceTask: poll -> pipeline -> produce, then offsets (Kafka's ``WorkerSourceTask``).

The task thread's loop: wait while PAUSED, ``poll()`` the task, hand the records to the
task's :class:`~seaway.connect.runtime.pipeline.source.SourcePlan` (SMTs, converters and
``produce``, by a strategy chosen once per batch type), serve delivery reports, check them.
When offsets are written is the task's :class:`~.source_commits.CommitPolicy`:

* :class:`~.source_commits.AtLeastOnce` (the default): the offsets of acknowledged batches
  every ``offset.flush.interval.ms`` and on stop (see :mod:`.submitted` for how
  acknowledgements are tracked);
* :class:`~.source_commits.Transactional` (``exactly.once.source.support=enabled``, KIP-618):
  records and the offsets they reach in one producer transaction, at the
  ``transaction.boundary``.

Records dropped by an SMT or whose conversion error was tolerated count as done, as in Kafka.
The hot loop works per batch: one ``producer.poll(0)`` per batch, no per-record logging or
locking, and the error-handling machinery only runs after a fast path raised.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Sequence
from typing import Any

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]
from seaway.connect.api import (
    BytesRecordBatch,
    ConnectError,
    RecordMetadata,
    RetriableError,
    SourceRecord,
    SourceTask,
    TransactionContext,
)
from seaway.connect.runtime.config_providers import REDACTOR
from seaway.connect.runtime.connector_config import TopicCreation
from seaway.connect.runtime.herder import ConnectorTaskId, TargetState
from seaway.connect.runtime.offsets import OffsetStorageReaderImpl, OffsetStorageWriter
from seaway.connect.runtime.pipeline.source import SourceOutput, SourcePlan
from seaway.connect.runtime.source_commits import AtLeastOnce, CommitPolicy
from seaway.connect.runtime.submitted import SubmittedBatch
from seaway.connect.runtime.task_setup import TaskSetup
from seaway.connect.runtime.worker_task import TaskStatusListener, WorkerTask
from seaway.kafka_clients import close_producer

__all__ = ["EMPTY_POLL_PAUSE_S", "SourceTaskContextImpl", "WorkerSourceTask"]

log = logging.getLogger(__name__)
log.addFilter(REDACTOR)

EMPTY_POLL_PAUSE_S = 0.05
"""How long the task loop waits after a ``poll()`` that returned no records. Kafka's loop relies on
tasks blocking in ``poll``; a Python task that returns None at once would spin the loop on a core
without it, and 50 ms keeps an idle task near 0% CPU while adding at most 50 ms of latency."""


class SourceTaskContextImpl:
    """``SourceTask.context``: the task config, its offsets reader and (exactly-once with
    ``transaction.boundary=connector`` only) its transaction context."""

    def __init__(self, config: dict[str, str], reader: OffsetStorageReaderImpl,
                 transactions: TransactionContext | None = None) -> None:
        self._config = config
        self._reader = reader
        self._transactions = transactions

    def configs(self) -> dict[str, str]:
        return dict(self._config)

    def offset_storage_reader(self) -> OffsetStorageReaderImpl:
        return self._reader

    def transaction_context(self) -> TransactionContext | None:
        return self._transactions


class WorkerSourceTask(WorkerTask):
    """Runs one :class:`SourceTask` on its own thread with one confluent-kafka producer."""

    def __init__(self, task_id: ConnectorTaskId, task: SourceTask, setup: TaskSetup,
                 producer_config: dict[str, Any], admin_config: dict[str, Any] | None,
                 writer: OffsetStorageWriter, reader: OffsetStorageReaderImpl,
                 listener: TaskStatusListener, target: TargetState,
                 topic_creation: TopicCreation | None = None, commits: CommitPolicy | None = None) -> None:
        super().__init__(task_id, listener, target)
        self.task = task
        self.setup = setup
        self.admin_config = admin_config
        self.writer = writer
        self.reader = reader
        self.topic_creation = topic_creation
        self.producer: Producer | None = None
        self.submitted: deque[SubmittedBatch] = deque()
        """In-flight batches, oldest first (the commit policy pops the acknowledged ones)."""
        self.failures: list[SubmittedBatch] = []
        """Batches with a failed delivery since the last check."""
        self._topics: set[str] = set()
        self.wants_commit_records = type(task).commit_records is not SourceTask.commit_records
        self.wants_commit_record = (type(task).commit_record is not SourceTask.commit_record
                                    or self.wants_commit_records)
        self.plan = SourcePlan(setup, commit_record=self.wants_commit_record,
                               commit_records=self.wants_commit_records)
        self.commits: CommitPolicy = commits if commits is not None else AtLeastOnce()
        # without commit_record, success reports are not needed (see runtime/submitted.py)
        self.producer_config = self.commits.producer_config(
            {**producer_config, "delivery.report.only.error": not self.wants_commit_record})
        self._out: SourceOutput | None = None
        self.commits.bind(self)

    # -- lifecycle ------------------------------------------------------------------------------
    def initialize_and_start(self) -> None:
        producer = self.commits.open_producer()
        if producer is None:  # stopped before the producer existed (exactly-once preflight)
            return
        self.producer = producer
        self._out = SourceOutput(producer.produce, self._produce_when_room, self._topics, self._new_topic,
                                 self._open_batch, self.commits.record_callback, self._commit_skipped,
                                 self.commits.commit_records if self.wants_commit_records else None)
        self.task.initialize(SourceTaskContextImpl(self.setup.task_config, self.reader,  # type: ignore[arg-type]
                                                   self.commits.transaction_context()))
        self.task.start(self.setup.task_config)
        self.commits.started()
        log.info("%s Source task finished initialization and start%s", self.id, self.commits.describe())

    def signal_stop(self) -> None:
        try:
            self.task.stop()
        except Exception:
            log.exception("%s Exception while stopping the source task", self.id)

    def close(self) -> None:
        try:
            if self.producer is not None:
                self.commits.close()
        finally:
            try:
                self.setup.close()
            finally:
                if self.producer is not None:
                    producer, self.producer = self.producer, None
                    close_producer(producer)

    def on_pause(self) -> None:
        self.commits.on_pause()

    def while_paused(self) -> None:
        if self.producer is not None:
            self.producer.poll(0)

    # -- the loop -------------------------------------------------------------------------------
    def execute(self) -> None:
        producer = self.producer
        if producer is None:  # stopped before the producer existed
            return
        commits = self.commits
        try:
            while not self.stopping.is_set():
                if self.paused:
                    if not self.await_unpaused():
                        break
                    commits.resumed()
                commits.before_poll()
                try:
                    records = self.task.poll()
                except RetriableError as e:
                    log.warning("%s failed to poll records from SourceTask. Will retry operation.", self.id,
                                exc_info=e)
                    records = None
                if records:
                    commits.send(records)
                    producer.poll(0)
                else:
                    # Nothing to send: a task whose poll() returns None at once would otherwise spin a
                    # core. Wait briefly, serving delivery reports meanwhile (poll returns early for them).
                    producer.poll(EMPTY_POLL_PAUSE_S)
                commits.check_delivery_errors()
                commits.after_poll()
        except Exception as e:
            translated = commits.translate(e)
            if translated is None:
                raise
            raise translated from e

    def send_records(self, records: Sequence[SourceRecord]) -> None:
        """Transform, convert and produce one poll's records (the hot path: see the pipeline)."""
        metrics = self.metrics
        if metrics is not None:  # once per poll, never per record (runtime/metrics.py)
            metrics.batch(len(records))
            metrics.source_sent(len(records))
        out = self._out
        assert out is not None
        self.plan.send(records, out)

    def _open_batch(self) -> SubmittedBatch:
        batch = SubmittedBatch(self.failures)
        self.submitted.append(batch)
        return batch

    def _commit_skipped(self, record: SourceRecord) -> None:
        self.task.commit_record(record, None)

    def _produce_when_room(self, args: tuple[Any, ...]) -> bool:
        """``produce(*args)`` once the producer's queue has room; False if the task was cancelled meanwhile.

        Back-pressure: a full queue (``BufferError``) is waited out by serving delivery reports,
        never answered by dropping the record. ``args`` are ``produce``'s positional arguments:
        topic, value, key, partition, on_delivery, callback, timestamp, headers.
        """
        producer = self.producer
        assert producer is not None
        while True:
            producer.poll(0.05)
            if self.stopping.is_set() and self.cancelled:
                return False
            try:
                producer.produce(*args)
                return True
            except BufferError:
                continue

    def record_metadata(self, msg: Any) -> RecordMetadata:
        """What ``commit_record`` is told about a delivered record."""
        ts_type, ts = msg.timestamp()
        return RecordMetadata(msg.topic(), msg.partition(), msg.offset(), ts if ts_type else None)

    def commit_batch_records(self, records: BytesRecordBatch, offsets: list[int]) -> None:
        """A batch's records all acknowledged: tell the task."""
        self.task.commit_records(records, offsets)

    def _new_topic(self, topic: str) -> None:
        self.commits.check_topic(topic)
        self._topics.add(topic)
        if self.topic_creation is not None and self.admin_config is not None:
            self._create_topic(topic)
        if self.setup.topic_tracking:
            self.listener.on_topic(self.id, topic)

    def _create_topic(self, topic: str) -> None:
        """``topic.creation.*``: create the topic with the matching group's settings if it is missing."""
        assert self.topic_creation is not None and self.admin_config is not None
        settings = self.topic_creation.match(topic)
        if settings is None:
            return
        partitions, replication, configs = settings
        admin = AdminClient(self.admin_config)
        if topic in admin.list_topics(timeout=10).topics:
            return
        futures = admin.create_topics([NewTopic(topic, partitions, replication, config=configs)])
        try:
            futures[topic].result(15)
            log.info("%s Created topic '%s' with %s partitions", self.id, topic, partitions)
        except Exception as e:
            if "TOPIC_ALREADY_EXISTS" not in str(e):
                raise ConnectError(f"Failed to create topic {topic}: {e}") from e

    # -- offsets ----------------------------------------------------------------------------------
    def commit_offsets(self, *, final: bool) -> bool:
        """Commit what the policy allows now (at-least-once: acknowledged batches' offsets)."""
        return self.commits.commit_offsets(final=final)
