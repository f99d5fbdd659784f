"""When a source task's offsets are written: the commit policy a :class:`WorkerSourceTask` is given.

Kafka's runtime has two task classes for this (``WorkerSourceTask`` and
``ExactlyOnceWorkerSourceTask``); here the task does lifecycle and the loop, and asks its
:class:`CommitPolicy` at the few points where the two differ: how the producer is made, how a
poll's records are sent (inside a transaction or not), what a delivery error means, and when
offsets are written. :class:`AtLeastOnce` is the default; the exactly-once policy is
:class:`~seaway.connect.runtime.exactly_once_commits.Transactional`.

:class:`AtLeastOnce`: offsets are committed only for records the producer acknowledged, every
``offset.flush.interval.ms`` (checked before each poll, on the task thread, which also serves
the delivery callbacks, so no lock is needed) and on stop, after waiting up to
``offset.flush.timeout.ms``. A task that overrides ``commit_record`` gets a callback per
record and the longest prefix of fully acknowledged batches is committed without blocking
(Kafka 3's ``SubmittedRecords``). Otherwise the producer reports failures only, which saves a
Python callback and a Message object per record, a third of the cost of ``produce``: a commit
then waits for what is in flight (``producer.flush`` within ``offset.flush.timeout.ms``, a few
milliseconds on a healthy cluster) and commits every batch, as Kafka's WorkerSourceTask did
before 3.0; if the wait times out, nothing is committed this time.
"""

from __future__ import annotations

import abc
import logging
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from confluent_kafka import Producer
from seaway.connect.api import BytesRecordBatch, SourceRecord, TransactionContext
from seaway.connect.runtime.config_providers import REDACTOR
from seaway.connect.runtime.errors import ToleranceExceeded
from seaway.connect.runtime.submitted import SubmittedBatch

if TYPE_CHECKING:
    from seaway.connect.runtime.worker_source_task import WorkerSourceTask

__all__ = ["AtLeastOnce", "CommitPolicy"]

log = logging.getLogger(__name__)
log.addFilter(REDACTOR)


class CommitPolicy(abc.ABC):
    """What differs between at-least-once and exactly-once source tasks (task thread only, except
    the delivery callbacks, which librdkafka runs from ``producer.poll`` on the task thread too)."""

    task: WorkerSourceTask

    def bind(self, task: WorkerSourceTask) -> None:
        """Called once by the task it belongs to, at the end of the task's construction."""
        self.task = task

    def producer_config(self, config: dict[str, Any]) -> dict[str, Any]:
        """The task producer's config as this policy needs it."""
        return config

    def open_producer(self) -> Producer | None:
        """The task's producer, ready to produce; None: the task is stopping, do not start it."""
        return Producer(self.task.producer_config)

    def transaction_context(self) -> TransactionContext | None:
        """What ``SourceTaskContext.transaction_context()`` returns."""
        return None

    def started(self) -> None:
        """The task's ``start`` returned."""
        return

    def describe(self) -> str:
        """Added to the task's start-up log line."""
        return ""

    def resumed(self) -> None:
        """The task left PAUSED."""
        return

    def before_poll(self) -> None:
        """Before each ``poll()``."""
        return

    def send(self, records: Sequence[SourceRecord]) -> None:
        """Send one poll's records."""
        self.task.send_records(records)

    def after_poll(self) -> None:
        """After each poll's records were sent (or after an empty poll) and delivery errors checked."""
        return

    def check_topic(self, topic: str) -> None:
        """Raise if the task may not write to ``topic`` (called once per topic)."""
        return

    def translate(self, error: Exception) -> Exception | None:
        """The error the task fails with instead of ``error`` raised by the loop; None: ``error`` itself."""
        return None

    @abc.abstractmethod
    def record_callback(self, batch: SubmittedBatch, record: SourceRecord) -> Callable[[Any, Any], None]:
        """The delivery callback of one record of a task that wants ``commit_record``."""

    @abc.abstractmethod
    def commit_records(self, records: BytesRecordBatch, offsets: list[int]) -> None:
        """Every record of ``records`` was acknowledged at ``offsets`` (``commit_records`` tasks)."""

    @abc.abstractmethod
    def check_delivery_errors(self) -> None:
        """Act on the batches whose delivery failed since the last check (``task.failures``)."""

    @abc.abstractmethod
    def commit_offsets(self, *, final: bool) -> bool:
        """Write what may be written now; whether anything was."""

    @abc.abstractmethod
    def on_pause(self) -> None:
        """The task enters PAUSED."""

    @abc.abstractmethod
    def close(self) -> None:
        """The task stops (its producer still exists): the last commit, or an abort."""


class AtLeastOnce(CommitPolicy):
    """Offsets of acknowledged batches, every ``offset.flush.interval.ms`` and on stop (see the module)."""

    def __init__(self) -> None:
        self._last_commit = time.monotonic()

    def before_poll(self) -> None:
        if time.monotonic() - self._last_commit >= self.task.setup.offset_flush_interval_ms / 1000:
            self.commit_offsets(final=False)

    def record_callback(self, batch: SubmittedBatch, record: SourceRecord) -> Callable[[Any, Any], None]:
        task = self.task
        plugin = task.task
        tolerate = task.setup.connector_config.errors.tolerate_all

        def delivered(err: Any, msg: Any) -> None:
            batch.ack(err, msg)
            if err is None:
                plugin.commit_record(record, task.record_metadata(msg))
            elif tolerate:
                plugin.commit_record(record, None)

        return delivered

    def commit_records(self, records: BytesRecordBatch, offsets: list[int]) -> None:
        self.task.commit_batch_records(records, offsets)

    def check_delivery_errors(self) -> None:
        failures = self.task.failures
        if failures:
            error = failures[0].error
            failures.clear()
            if not self.task.setup.connector_config.errors.tolerate_all:
                raise ToleranceExceeded(f"Unrecoverable exception from producer send callback: {error}")

    def on_pause(self) -> None:
        self.commit_offsets(final=False)

    def close(self) -> None:
        self.commit_offsets(final=True)

    def commit_offsets(self, *, final: bool) -> bool:
        """Write offsets of acknowledged batches; on the final commit, first wait for acks (flush timeout)."""
        task = self.task
        producer = task.producer
        self._last_commit = time.monotonic()
        started = time.perf_counter_ns()
        if producer is None:
            return False
        batches = task.submitted
        timeout = task.setup.offset_flush_timeout_ms / 1000
        per_record = task.wants_commit_record
        if final or (batches and not per_record and len(producer)):
            if producer.flush(timeout) and not final:
                log.warning("%s Timed out waiting for the producer to acknowledge records; offsets will "
                            "be committed later", task.id)
        else:
            producer.poll(0)
        all_acked = not per_record and len(producer) == 0
        tolerate = task.setup.connector_config.errors.tolerate_all
        committed_any = False
        writer = task.writer
        while batches and (batches[0].done if per_record else all_acked) and (
                batches[0].error is None or tolerate):
            batch = batches.popleft()
            for partition, offset in batch.offsets.values():
                writer.offset(partition, offset)
            committed_any = True
        if not committed_any or not writer.begin_flush():
            return False
        metrics = task.metrics
        try:
            writer.do_flush()
        except Exception:
            log.exception("%s Failed to commit offsets", task.id)
            writer.cancel_flush()
            if metrics is not None:
                metrics.commit_done(started, False)
            return False
        if metrics is not None:
            metrics.commit_done(started, True)
        try:
            task.task.commit()
        except Exception:
            log.exception("%s Exception thrown while calling task.commit()", task.id)
        return True
