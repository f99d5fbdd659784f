"""Error handling: retries, tolerance, the error log and the dead letter queue (Kafka's ``runtime.errors``).

:class:`RetryWithToleranceOperator` runs one step of a record's pipeline (a converter, an SMT,
``put``...). A :class:`RetriableError` is retried with exponential backoff (300 ms doubling,
capped at ``errors.retry.delay.max.ms`` with jitter) until ``errors.retry.timeout`` passes
(0: no retry, -1: forever). Then, with ``errors.tolerance=none`` the failure becomes
``ConnectError("Tolerance exceeded in error handler")`` and fails the task; with ``all`` the
record is skipped (conversion and SMT errors of any kind; other stages only retriable ones)
and reported: to the log (``errors.log.enable``) and, for sinks, to the dead letter queue
with ``__connect.errors.*`` headers (``errors.deadletterqueue.context.headers.enable``).

The workers call the operator only after a fast path raised, so a healthy pipeline pays
nothing for this machinery.
"""

from __future__ import annotations

import abc
import enum
import logging
import random
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, TypeVar

from confluent_kafka import KafkaException, Producer
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]
from seaway.connect.api import ConnectError, ErrantRecordReporter, RetriableError, SinkRecord, SourceRecord
from seaway.connect.runtime.config_providers import REDACTOR
from seaway.kafka_clients import close_producer

__all__ = [
    "DeadLetterQueueReporter",
    "ErrorReporter",
    "LogReporter",
    "ProcessingContext",
    "RetryWithToleranceOperator",
    "Stage",
    "ToleranceExceeded",
    "WorkerErrantRecordReporter",
    "class_name",
]

log = logging.getLogger(__name__)
log.addFilter(REDACTOR)
T = TypeVar("T")

ERROR_HEADER_PREFIX = "__connect.errors."


class Stage(enum.StrEnum):
    """Where in a record's pipeline an error happened."""

    TASK_POLL = "TASK_POLL"
    TASK_PUT = "TASK_PUT"
    TRANSFORMATION = "TRANSFORMATION"
    KEY_CONVERTER = "KEY_CONVERTER"
    VALUE_CONVERTER = "VALUE_CONVERTER"
    HEADER_CONVERTER = "HEADER_CONVERTER"
    KAFKA_PRODUCE = "KAFKA_PRODUCE"
    KAFKA_CONSUME = "KAFKA_CONSUME"


TOLERABLE_STAGES = frozenset({Stage.TRANSFORMATION, Stage.KEY_CONVERTER, Stage.VALUE_CONVERTER,
                              Stage.HEADER_CONVERTER})


class ToleranceExceeded(ConnectError):
    """``errors.tolerance=none`` (or an intolerable error): the task fails with this."""


def class_name(obj: object) -> str:
    cls = obj if isinstance(obj, type) else type(obj)
    return f"{cls.__module__}.{cls.__qualname__}"


@dataclass(slots=True)
class RawRecord:
    """A consumed record's original bytes and coordinates (what the DLQ re-publishes)."""

    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    headers: list[tuple[str, bytes | None]]
    timestamp: int | None
    timestamp_type: str = "CreateTime"


@dataclass(slots=True)
class ProcessingContext:
    """What failed: the stage, the class executing it, the error and the record."""

    stage: Stage
    executing_class: str
    error: BaseException
    consumed: RawRecord | None = None
    source_record: SourceRecord | None = None


class ErrorReporter(abc.ABC):
    """Receives tolerated failures; returns a future for asynchronous reports (the DLQ)."""

    @abc.abstractmethod
    def report(self, context: ProcessingContext) -> Future[None] | None: ...

    def close(self) -> None:
        return None


class LogReporter(ErrorReporter):
    """``errors.log.enable``: one ERROR line per failure, with the record if ``include.messages``."""

    def __init__(self, task_id: str, include_messages: bool) -> None:
        self.task_id = task_id
        self.include_messages = include_messages
        self.logged = 0  # task-error-metrics total-errors-logged

    def report(self, context: ProcessingContext) -> None:
        self.logged += 1
        message = (f"Error encountered in task {self.task_id}. Executing stage '{context.stage}' "
                   f"with class '{context.executing_class}'")
        if self.include_messages and context.consumed is not None:
            c = context.consumed
            message += (f", where consumed record is {{topic='{c.topic}', partition={c.partition}, "
                        f"offset={c.offset}, timestamp={c.timestamp}, timestampType={c.timestamp_type}}}")
        elif self.include_messages and context.source_record is not None:
            message += f", where source record is = {context.source_record!r}"
        log.error("%s.", message, exc_info=context.error)
        return


class DeadLetterQueueReporter(ErrorReporter):
    """Writes the original consumed record to the DLQ topic (created if missing, 1 partition)."""

    def __init__(self, producer_config: dict[str, Any], admin_config: dict[str, Any], topic: str,
                 replication_factor: int, context_headers: bool, connector: str, task: int) -> None:
        self.topic = topic
        self.context_headers = context_headers
        self.connector = connector
        self.task = task
        self.produce_requests = 0  # task-error-metrics deadletterqueue-produce-requests / -failures
        self.produce_failures = 0
        self._ensure_topic(admin_config, replication_factor)
        self.producer = Producer(producer_config)
        # Delivery callbacks run on a poller thread of our own, so a task may wait on a report's
        # future from inside put() (as Kafka's producer I/O thread allows).
        self._closed = threading.Event()
        self._poller = threading.Thread(target=self._poll_loop, name=f"dlq-poller-{connector}-{task}")
        self._poller.start()

    def _poll_loop(self) -> None:
        while not self._closed.is_set():
            self.producer.poll(0.1)

    def _ensure_topic(self, admin_config: dict[str, Any], replication_factor: int) -> None:
        admin = AdminClient(admin_config)
        metadata = admin.list_topics(timeout=10)
        if self.topic in metadata.topics and metadata.topics[self.topic].error is None:
            return
        futures = admin.create_topics([NewTopic(self.topic, 1, replication_factor)], operation_timeout=10)
        try:
            futures[self.topic].result(15)
        except KafkaException as e:
            if e.args[0].name() != "TOPIC_ALREADY_EXISTS":
                raise ConnectError(f"Could not create dead letter queue topic {self.topic}: {e}") from e

    def report(self, context: ProcessingContext) -> Future[None] | None:
        raw = context.consumed
        if raw is None:
            return None  # source records have no DLQ (as in Kafka)
        headers = list(raw.headers)
        if self.context_headers:
            headers += self._context_headers(context)
        future: Future[None] = Future()

        def delivered(err: Any, _msg: Any) -> None:
            if err is not None:
                self.produce_failures += 1
                future.set_exception(ConnectError(f"Could not produce message to dead letter queue topic "
                                                  f"{self.topic}: {err}"))
            else:
                future.set_result(None)

        kwargs: dict[str, Any] = {"key": raw.key, "value": raw.value, "headers": headers,
                                  "on_delivery": delivered}
        if raw.timestamp is not None and raw.timestamp >= 0:
            kwargs["timestamp"] = raw.timestamp
        self.produce_requests += 1
        while True:
            try:
                self.producer.produce(self.topic, **kwargs)
                break
            except BufferError:
                self._closed.wait(0.05)  # the poller drains the queue
        return future

    def _context_headers(self, context: ProcessingContext) -> list[tuple[str, bytes | None]]:
        raw = context.consumed
        assert raw is not None
        error = context.error
        values = {
            "topic": raw.topic, "partition": str(raw.partition), "offset": str(raw.offset),
            "connector.name": self.connector, "task.id": str(self.task), "stage": context.stage.value,
            "class.name": context.executing_class, "exception.class.name": class_name(error),
            "exception.message": str(error),
            "exception.stacktrace": "".join(traceback.format_exception(error)),
        }
        return [(ERROR_HEADER_PREFIX + k, v.encode("utf-8")) for k, v in values.items()]

    def flush(self, timeout: float) -> int:
        return int(self.producer.flush(timeout))

    def close(self) -> None:
        self._closed.set()
        self._poller.join()
        dropped = close_producer(self.producer, 5)
        if dropped:
            log.warning("%d records for the dead letter queue %s were not acknowledged before close", dropped,
                        self.topic)


class RetryWithToleranceOperator:
    """Retries, tolerates and reports failures of one task's operations (task thread only)."""

    INITIAL_DELAY_MS = 300

    def __init__(self, retry_timeout_ms: int, max_delay_ms: int, tolerate_all: bool,
                 reporters: Sequence[ErrorReporter] = (), stopping: threading.Event | None = None) -> None:
        self.retry_timeout_ms = retry_timeout_ms
        self.max_delay_ms = max_delay_ms
        self.tolerate_all = tolerate_all
        self.reporters = list(reporters)
        self.stopping = stopping or threading.Event()
        self.total_failures = 0
        self.total_skipped = 0  # failures tolerated (task-error-metrics total-records-skipped)
        self.total_retries = 0
        self.last_error_ms = 0  # wall clock of the last failure (last-error-timestamp)
        self.pending: list[Future[None]] = []

    def execute(self, operation: Callable[[], T], stage: Stage, executing: object, *,
                consumed: RawRecord | None = None, source_record: SourceRecord | None = None
                ) -> tuple[bool, T | None]:
        """``(True, result)`` on success, ``(False, None)`` if the failure was tolerated; else raises."""
        deadline = None if self.retry_timeout_ms < 0 else time.monotonic() + self.retry_timeout_ms / 1000
        attempt = 0
        while True:
            try:
                return True, operation()
            except Exception as error:
                attempt += 1
                retriable = isinstance(error, RetriableError) or getattr(error, "retriable", False)
                if retriable and not self.stopping.is_set() and self._backoff(attempt, deadline):
                    self.total_retries += 1
                    continue
                self.fail(stage, executing, error, consumed=consumed, source_record=source_record)
                return False, None

    def fail(self, stage: Stage, executing: object, error: BaseException, *, consumed: RawRecord | None = None,
             source_record: SourceRecord | None = None, any_stage: bool = False) -> None:
        """Report a tolerated failure, or raise :class:`ToleranceExceeded`.

        ``any_stage``: tolerate whatever the stage (the errant record reporter's reports).
        """
        self.total_failures += 1
        self.last_error_ms = time.time_ns() // 1_000_000
        retriable = isinstance(error, RetriableError) or getattr(error, "retriable", False)
        if not self.tolerate_all or not (any_stage or stage in TOLERABLE_STAGES or retriable):
            raise ToleranceExceeded("Tolerance exceeded in error handler") from error
        self.total_skipped += 1
        context = ProcessingContext(stage, class_name(executing), error, consumed, source_record)
        for reporter in self.reporters:
            future = reporter.report(context)
            if future is not None:
                self.pending.append(future)

    def _backoff(self, attempt: int, deadline: float | None) -> bool:
        """Sleep before the next attempt; False when out of time (or retries are disabled)."""
        if self.retry_timeout_ms == 0:
            return False
        delay_ms = float(self.INITIAL_DELAY_MS * (1 << min(attempt - 1, 30)))
        if delay_ms > self.max_delay_ms:
            delay_ms = random.uniform(self.max_delay_ms / 2, self.max_delay_ms)
        else:
            delay_ms *= random.uniform(0.8, 1.2)  # jitter: spread retries of many tasks
        if deadline is not None:
            remaining = (deadline - time.monotonic()) * 1000
            if remaining <= 0:
                return False
            delay_ms = min(delay_ms, remaining)
        return not self.stopping.wait(delay_ms / 1000)

    def close(self) -> None:
        for reporter in self.reporters:
            reporter.close()


class WorkerErrantRecordReporter(ErrantRecordReporter):
    """``SinkTaskContext.errant_record_reporter()``: the record re-encoded with the task's converters, to the DLQ."""

    def __init__(self, operator: RetryWithToleranceOperator, task: object,
                 encode: Callable[[SinkRecord], RawRecord]) -> None:
        self._operator = operator
        self._task = task
        self._encode = encode

    def report(self, record: SinkRecord, error: BaseException) -> Future[None]:
        before = len(self._operator.pending)
        raw = self._encode(record)
        self._operator.fail(Stage.TASK_PUT, self._task, error, consumed=raw, any_stage=True)
        if len(self._operator.pending) > before:
            return self._operator.pending[-1]
        done: Future[None] = Future()
        done.set_result(None)
        return done
