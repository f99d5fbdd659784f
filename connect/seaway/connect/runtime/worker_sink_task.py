"""WorkerSinkTask: consume -> pipeline -> put, then offsets (Kafka's ``WorkerSinkTask``).

One confluent-kafka consumer per task, a member of group ``connect-<connector>`` (overridable
with ``consumer.override.group.id``), subscribed to ``topics`` or ``topics.regex``. Rebalance
callbacks become ``SinkTask.open`` / ``close`` (offsets of revoked partitions are committed
first). Offsets are committed every ``offset.flush.interval.ms`` (or on ``request_commit``)
with what ``pre_commit`` returns, after the errant-record reports are acknowledged.

What a poll's messages become (converters, SMTs, a :class:`SinkRecordBatch` or SinkRecords)
is the task's :class:`~seaway.connect.runtime.pipeline.sink.SinkPlan`, compiled when it is
built; consumer error events are judged by :mod:`.consumer_errors` (some fail the task, the
rest are ridden out, as Kafka Connect's sink tasks wait in ``poll``).

``RetriableError`` from ``put`` pauses every partition, waits ``context.timeout(ms)`` while
still polling (to stay in the group) and delivers the same batch again. Every SinkTask call
happens on the task thread, rebalance callbacks included (they run inside ``consume``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from typing import Any

from confluent_kafka import Consumer, KafkaException
from confluent_kafka import TopicPartition as KafkaTopicPartition
from seaway.connect.api import (
    OffsetAndMetadata,
    RetriableError,
    SinkRecord,
    SinkTask,
    SinkTaskContext,
    TopicPartition,
)
from seaway.connect.runtime.config_providers import REDACTOR
from seaway.connect.runtime.consumer_errors import check_consumer_error
from seaway.connect.runtime.errors import RawRecord, WorkerErrantRecordReporter
from seaway.connect.runtime.herder import ConnectorTaskId, TargetState
from seaway.connect.runtime.pipeline.sink import SinkOutput, SinkPlan
from seaway.connect.runtime.task_setup import TaskSetup
from seaway.connect.runtime.worker_task import TaskStatusListener, WorkerTask

__all__ = ["WorkerSinkTask", "WorkerSinkTaskContext"]

log = logging.getLogger(__name__)
log.addFilter(REDACTOR)

MAX_POLL_RECORDS = 500
DEFAULT_RETRY_TIMEOUT_MS = 1000


class WorkerSinkTaskContext(SinkTaskContext):
    """``SinkTask.context`` (task thread only, as the API promises)."""

    def __init__(self, worker: WorkerSinkTask) -> None:
        self._worker = worker

    def configs(self) -> dict[str, str]:
        return dict(self._worker.setup.task_config)

    def reset_offsets(self, offsets: Mapping[TopicPartition, int]) -> None:
        self._worker.rewinds.update(offsets)

    def timeout(self, timeout_ms: int) -> None:
        self._worker.retry_timeout_ms = timeout_ms

    def assignment(self) -> set[TopicPartition]:
        return set(self._worker.assignment)

    def pause(self, *partitions: TopicPartition) -> None:
        self._worker.user_paused.update(partitions)
        self._worker.pause_partitions(partitions)

    def resume(self, *partitions: TopicPartition) -> None:
        self._worker.user_paused.difference_update(partitions)
        if not self._worker.redelivering and not self._worker.paused:
            self._worker.resume_partitions(partitions)

    def request_commit(self) -> None:
        self._worker.commit_requested = True

    def errant_record_reporter(self) -> WorkerErrantRecordReporter | None:
        return self._worker.errant_reporter


class WorkerSinkTask(WorkerTask):
    """Runs one :class:`SinkTask` on its own thread with one consumer-group member."""

    def __init__(self, task_id: ConnectorTaskId, task: SinkTask, setup: TaskSetup,
                 consumer_config: dict[str, Any], listener: TaskStatusListener, target: TargetState,
                 errant_reporter: bool = True) -> None:
        super().__init__(task_id, listener, target)
        self.task = task
        self.setup = setup
        self.consumer_config = consumer_config
        self.consumer: Consumer | None = None
        self.assignment: set[TopicPartition] = set()
        self.user_paused: set[TopicPartition] = set()
        self.rewinds: dict[TopicPartition, int] = {}
        self.current_offsets: dict[TopicPartition, OffsetAndMetadata] = {}
        self.last_committed: dict[TopicPartition, OffsetAndMetadata] = {}
        self.retry_timeout_ms = DEFAULT_RETRY_TIMEOUT_MS
        self.commit_requested = False
        self.redelivering: Sequence[SinkRecord] | None = None
        self._redeliver_at = 0.0
        self._next_commit = 0.0
        self._batch_offsets: dict[tuple[str, int], int] = {}
        self._errors_logged: dict[int, float] = {}  # non-fatal consumer error code -> last WARNING
        self.errant_reporter = (WorkerErrantRecordReporter(setup.operator, task, self._encode)
                                if errant_reporter else None)
        self.plan = SinkPlan(setup)  # how polls become what put receives (runtime/pipeline/sink.py)
        self._out = SinkOutput(self._batch_offsets, self.assignment,
                               lambda msg: check_consumer_error(msg, self.id, self._errors_logged))
        # incremental (cooperative) rebalancing: assignments in callbacks are deltas
        strategy = str(consumer_config.get("partition.assignment.strategy", ""))
        self._cooperative = ("cooperative" in strategy
                             or str(consumer_config.get("group.protocol", "")).lower() == "consumer")

    # -- lifecycle ------------------------------------------------------------------------------
    def initialize_and_start(self) -> None:
        self.consumer = Consumer(self.consumer_config)
        self.task.initialize(WorkerSinkTaskContext(self))
        self.task.start(self.setup.task_config)
        topics, regex = list(self.setup.connector_config.topics), self.setup.connector_config.topics_regex
        subscription = topics if topics else [regex if regex.startswith("^") else "^" + regex]
        self.consumer.subscribe(subscription, on_assign=self._on_assign, on_revoke=self._on_revoke,
                                on_lost=self._on_lost)
        self._next_commit = time.monotonic() + self.setup.offset_flush_interval_ms / 1000
        log.info("%s Sink task finished initialization and start", self.id)

    def signal_stop(self) -> None:
        return None  # the loop sees `stopping` within one poll timeout

    def close(self) -> None:
        consumer = self.consumer
        try:
            if consumer is not None and not self.failed:
                self._close_partitions(set(self.assignment), commit=True)
            elif self.assignment:
                self.task.close([*self.assignment])
            self.task.stop()
        finally:
            try:
                self.setup.close()
            finally:
                if consumer is not None:
                    consumer.close()
                    self.consumer = None

    def on_pause(self) -> None:
        self.pause_partitions(self.assignment)

    def on_resume(self) -> None:
        if self.redelivering is None:
            self.resume_partitions(self.assignment - self.user_paused)

    def pause_wait_s(self) -> float:
        return 0.0

    def while_paused(self) -> None:
        self._poll_held(0.2)  # keeps group membership and rebalance callbacks going

    def _poll_held(self, timeout: float) -> None:
        """Poll while every partition should be paused (task PAUSED, or a batch awaiting redelivery).

        Polling keeps the group membership and runs rebalance callbacks. Should a message come
        back anyway (a partition the consumer fetched before its pause took effect), it is not
        delivered and its offset is not recorded: its partition is paused again and rewound to
        the first such message, so nothing is skipped when the task goes on.
        """
        consumer = self.consumer
        assert consumer is not None
        first: dict[tuple[Any, Any], Any] = {}  # (topic, partition) -> the first offset fetched
        for msg in consumer.consume(MAX_POLL_RECORDS, timeout):
            if msg.error() is None:
                first.setdefault((msg.topic(), msg.partition()), msg.offset())
        if first:
            parts = [KafkaTopicPartition(topic, partition, offset) for (topic, partition), offset in first.items()]
            consumer.pause(parts)
            for part in parts:
                try:
                    consumer.seek(part)
                except KafkaException as e:  # rewound before the next delivery instead
                    log.debug("%s seek while paused failed (%s): rewinding later", self.id, e)
                    self.rewinds[TopicPartition(part.topic, part.partition)] = part.offset

    # -- rebalance callbacks (run inside consume on the task thread) -----------------------------
    def _on_assign(self, consumer: Consumer, partitions: list[KafkaTopicPartition]) -> None:
        assigned = [TopicPartition(p.topic, p.partition) for p in partitions]
        self.assignment.update(assigned)
        self.task.open(assigned)
        hold = self.paused or self.redelivering is not None
        if not hold and not any(tp in self.rewinds for tp in assigned):
            return  # confluent-kafka assigns the partitions itself after this callback
        # pause() and offsets only take effect on partitions that are already assigned (a pause
        # before the library's own assign is silently lost and the partition is fetched), so
        # assign here, in the way the group's rebalance protocol wants, then pause
        for p in partitions:
            tp = TopicPartition(p.topic, p.partition)
            if tp in self.rewinds:
                p.offset = self.rewinds.pop(tp)
        if self._cooperative:
            consumer.incremental_assign(partitions)
        else:
            consumer.assign(partitions)
        if hold:
            consumer.pause(partitions)

    def _on_revoke(self, consumer: Consumer, partitions: list[KafkaTopicPartition]) -> None:
        self._close_partitions({TopicPartition(p.topic, p.partition) for p in partitions}, commit=True)

    def _on_lost(self, consumer: Consumer, partitions: list[KafkaTopicPartition]) -> None:
        self._close_partitions({TopicPartition(p.topic, p.partition) for p in partitions}, commit=False)

    def _close_partitions(self, partitions: set[TopicPartition], *, commit: bool) -> None:
        if not partitions:
            return
        if commit and self.redelivering is None:
            self.commit_offsets(only=partitions)
        self.task.close([*partitions])
        self.assignment -= partitions
        self.user_paused -= partitions
        for tp in partitions:
            self.current_offsets.pop(tp, None)
            self.last_committed.pop(tp, None)

    def pause_partitions(self, partitions: Any) -> None:
        if self.consumer is not None and partitions:
            self.consumer.pause([KafkaTopicPartition(tp.topic, tp.partition) for tp in partitions])

    def resume_partitions(self, partitions: Any) -> None:
        if self.consumer is not None and partitions:
            self.consumer.resume([KafkaTopicPartition(tp.topic, tp.partition) for tp in partitions])

    # -- the loop -------------------------------------------------------------------------------
    def execute(self) -> None:
        while not self.stopping.is_set():
            if self.paused and not self.await_unpaused():
                break
            self.iteration()

    def iteration(self) -> None:
        now = time.monotonic()
        if self.commit_requested or now >= self._next_commit:
            self.commit_offsets()
        if self.redelivering is not None:
            wait = self._redeliver_at - time.monotonic()
            if wait > 0:
                self._poll_held(min(wait, 0.5))
                return
            self.deliver(self.redelivering)
            return
        records = self._poll_consumer(0.5)
        self._apply_rewinds()
        self.deliver(records)

    def _poll_consumer(self, timeout: float) -> Sequence[SinkRecord]:
        consumer = self.consumer
        assert consumer is not None
        messages = consumer.consume(MAX_POLL_RECORDS, timeout)
        if self.setup.operator.pending:
            self.setup.operator.pending = [f for f in self.setup.operator.pending if not f.done()]
        if not messages:
            return []
        if self.metrics is not None:
            self.metrics.batch(len(messages))
        return self.plan.convert(messages, self._out)

    def deliver(self, records: Sequence[SinkRecord]) -> None:
        """``put`` a batch; on RetriableError pause everything and schedule redelivery of the same batch."""
        started = time.perf_counter_ns()
        try:
            self.task.put(records)
        except RetriableError as e:
            log.error("%s RetriableException from SinkTask: %s; will redeliver in %d ms", self.id, e,
                      self.retry_timeout_ms)
            if self.redelivering is None:
                self.pause_partitions(self.assignment)
            self.redelivering = records
            self._redeliver_at = time.monotonic() + self.retry_timeout_ms / 1000
            return
        if self.metrics is not None and records:
            self.metrics.put_done(len(records), started)
        if self.redelivering is not None:
            self.redelivering = None
            if not self.paused:
                self.resume_partitions(self.assignment - self.user_paused)
        for (topic, partition), offset in self._batch_offsets.items():
            tp = TopicPartition(topic, partition)
            if tp in self.assignment:
                self.current_offsets[tp] = OffsetAndMetadata(offset + 1)
        if self.setup.topic_tracking and records:  # the topics consumed (records' original topics)
            for topic in {topic for topic, _ in self._batch_offsets}:
                self.listener.on_topic(self.id, topic)
        self._batch_offsets.clear()

    def _apply_rewinds(self) -> None:
        if not self.rewinds or self.consumer is None:
            return
        for tp in [tp for tp in self.rewinds if tp in self.assignment]:
            offset = self.rewinds.pop(tp)
            try:
                self.consumer.seek(KafkaTopicPartition(tp.topic, tp.partition, offset))
                self.current_offsets[tp] = OffsetAndMetadata(offset)
            except KafkaException as e:
                log.warning("%s Could not rewind %s to %d: %s", self.id, tp, offset, e)

    # -- offsets ------------------------------------------------------------------------------------
    def commit_offsets(self, only: set[TopicPartition] | None = None) -> None:
        """pre_commit, then a synchronous group commit of what it returned (changed partitions only)."""
        self.commit_requested = False
        self._next_commit = time.monotonic() + self.setup.offset_flush_interval_ms / 1000
        started = time.perf_counter_ns()
        consumer = self.consumer
        if consumer is None:
            return
        timeout = self.setup.offset_flush_timeout_ms / 1000
        for reporter in self.setup.operator.reporters:
            flush = getattr(reporter, "flush", None)
            if flush is not None and flush(timeout) > 0:
                log.warning("%s DLQ writes not acknowledged in time; skipping this offset commit", self.id)
                return
        self.setup.operator.pending.clear()
        current = {tp: o for tp, o in self.current_offsets.items() if only is None or tp in only}
        to_commit = self.task.pre_commit(current)
        changed = {tp: o for tp, o in to_commit.items()
                   if tp in self.assignment and self.last_committed.get(tp) != o}
        if not changed:
            if self.metrics is not None:
                self.metrics.commit_skipped()
            return
        try:
            consumer.commit(offsets=[_kafka_tp(tp, o)
                                     for tp, o in changed.items()], asynchronous=False)
            self.last_committed.update(changed)
        except KafkaException as e:
            log.warning("%s Offset commit failed: %s", self.id, e)
            if self.metrics is not None:
                self.metrics.commit_done(started, False)
        else:
            if self.metrics is not None:
                self.metrics.commit_done(started, True)

    def _encode(self, record: SinkRecord) -> RawRecord:
        """A SinkRecord back to bytes with the task's converters (for errant-record reports)."""
        s = self.setup
        topic = record.topic
        headers = [(h.key, s.header_converter.from_connect_header(topic, h.key, h.schema, h.value))
                   for h in record.headers]
        return RawRecord(record.original_topic, record.original_kafka_partition or 0, record.original_kafka_offset,
                         s.key_converter.from_connect_data(topic, record.key_schema, record.key),
                         s.value_converter.from_connect_data(topic, record.value_schema, record.value),
                         headers, record.timestamp, record.timestamp_type.value)


def _kafka_tp(tp: TopicPartition, offset: OffsetAndMetadata) -> KafkaTopicPartition:
    if offset.metadata:
        return KafkaTopicPartition(tp.topic, tp.partition, offset.offset, offset.metadata)
    return KafkaTopicPartition(tp.topic, tp.partition, offset.offset)
