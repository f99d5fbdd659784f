"""Transactional: a source task's records and their offsets in one transaction (KIP-618).

The commit policy of Kafka's ``ExactlyOnceWorkerSourceTask``, given to a
:class:`~seaway.connect.runtime.worker_source_task.WorkerSourceTask` by a distributed worker
with ``exactly.once.source.support=enabled``. The task's producer is transactional
(``transactional.id = <group.id>-<connector>-<task>``); the records of a transaction and the
source offsets they reach are written by that one producer and committed together, the
offsets to the offsets topic (the connector's ``offsets.storage.topic`` or the worker's). A
``read_committed`` reader sees either both or neither, and the next instance of the task
resumes from the offsets of the last committed transaction: nothing lost, nothing twice.

Before the producer exists, the herder's *preflight* check makes sure every producer of an
older generation of this connector's tasks is fenced (KIP-618's zombie fencing, see
``distributed/fencing.py``); ``init_transactions`` then fences the previous instance of this
very task and aborts its open transaction; the *verify* check re-reads the config topic and
fails the start if the task's configs changed or it was revoked meanwhile. A zombie (an
instance whose worker was cut off, then came back) finds out at its next commit, which the
broker refuses: the task fails, and its records stay invisible.

Transaction boundaries (``transaction.boundary``):

* ``poll`` (default): one transaction per batch returned by ``poll()``;
* ``interval``: a commit every ``transaction.boundary.interval.ms`` (default: the worker's
  ``offset.flush.interval.ms``), checked after each batch and after empty polls;
* ``connector``: when the task asks through ``context.transaction_context()``: commit or
  abort after the current batch, or after a given record (records after it go to the next
  transaction). An abort drops the records but still commits their offsets, so the task
  does not see them again (Kafka's rule).

The records go through the task's pipeline as for any source task; this policy only adds
``begin_transaction`` before a batch, writes the offsets the batch reaches (one record per
source partition, before the batch's records, so the offsets partition joins the transaction
with the data partitions and the commit needs no extra round trip), and commits at the
boundary. A delivery error fails the task whatever ``errors.tolerance`` says: a transaction
with a failed record cannot commit (the "purged" reports of records an abort dropped are not
errors).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from confluent_kafka import KafkaError, KafkaException, Producer
from seaway.connect.api import (
    BytesRecordBatch,
    ConnectError,
    RecordMetadata,
    SourceRecord,
    SourceRecordBatch,
    TransactionBoundary,
    TransactionContext,
)
from seaway.connect.runtime.config_providers import REDACTOR
from seaway.connect.runtime.murmur2 import partition_for
from seaway.connect.runtime.source_commits import CommitPolicy
from seaway.connect.runtime.submitted import SubmittedBatch, batch_offsets

if TYPE_CHECKING:
    from seaway.connect.runtime.worker_source_task import WorkerSourceTask

__all__ = ["ExactlyOnceSetup", "Transactional", "WorkerTransactionContext", "transactional_producer"]

log = logging.getLogger(__name__)
log.addFilter(REDACTOR)

_RETRY_S = 5.0  # each blocking transactional call waits this long, then checks for cancellation
_PURGED = (KafkaError._PURGE_QUEUE, KafkaError._PURGE_INFLIGHT)  # delivery reports of records an abort dropped
_FENCED = (KafkaError._FENCED, KafkaError.PRODUCER_FENCED, KafkaError.INVALID_PRODUCER_EPOCH)


@dataclass(frozen=True, slots=True)
class ExactlyOnceSetup:
    """What the herder gives an exactly-once task: its transactional id, offsets topic and checks.

    ``preflight`` runs on the task thread before the producer exists (zombie fencing of older
    generations, through the leader); ``verify`` after ``init_transactions`` (the task's
    configs and assignment are still current). Both raise to fail the start.
    """

    transactional_id: str
    offsets_topic: str
    preflight: Callable[[], None]
    verify: Callable[[], None]


def transactional_producer(config: dict[str, Any], transactional_id: str) -> dict[str, Any]:
    """A task producer's config made transactional (Kafka's ``exactlyOnceSourceTaskProducerConfigs``).

    Idempotence on (Connect turns it off for ordinary source tasks), the transactional id
    forced, and the framework's infinite ``message.timeout.ms`` dropped: librdkafka requires
    it not to exceed ``transaction.timeout.ms``.
    """
    out = dict(config)
    if str(out.get("enable.idempotence", "false")).lower() == "false" and "enable.idempotence" in out:
        log.debug("enable.idempotence is forced to true for exactly-once source tasks")
    out["enable.idempotence"] = "true"
    out["transactional.id"] = transactional_id
    if str(out.get("message.timeout.ms")) == "0":
        del out["message.timeout.ms"]
    return out


class WorkerTransactionContext(TransactionContext):
    """The task's requests (any thread), consumed by the task thread at each boundary check.

    Records are matched by identity, as Kafka's ``IdentityHashMap``: a record object the task
    returned from ``poll`` (a :class:`SourceRecordBatch` creates its records on access, so
    only batch-level requests make sense with it).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._commit_batch = False
        self._abort_batch = False
        self._commit_records: dict[int, SourceRecord] = {}
        self._abort_records: dict[int, SourceRecord] = {}

    def commit_transaction(self, record: SourceRecord | None = None) -> None:
        with self._lock:
            if record is None:
                self._commit_batch = True
            else:
                self._commit_records[id(record)] = record

    def abort_transaction(self, record: SourceRecord | None = None) -> None:
        with self._lock:
            if record is None:
                self._abort_batch = True
            else:
                self._abort_records[id(record)] = record

    def has_record_requests(self) -> bool:
        with self._lock:
            return bool(self._commit_records or self._abort_records)

    def batch_request(self) -> str | None:
        """``"commit"``, ``"abort"`` or None for the batch just dispatched (and forget the request)."""
        with self._lock:
            commit, abort = self._commit_batch, self._abort_batch
            self._commit_batch = self._abort_batch = False
        if commit and abort:
            raise ConnectError("The connector requested both a commit and an abort of the same transaction")
        return "commit" if commit else "abort" if abort else None

    def record_request(self, record: SourceRecord) -> str | None:
        """``"commit"``, ``"abort"`` or None for ``record`` (and forget the request)."""
        with self._lock:
            commit = self._commit_records.pop(id(record), None) is record
            abort = self._abort_records.pop(id(record), None) is record
        if commit and abort:
            raise ConnectError(f"The connector requested both a commit and an abort of the transaction of the record "
                               f"on topic {record.topic}")
        return "commit" if commit else "abort" if abort else None


class Transactional(CommitPolicy):
    """Records and offsets in producer transactions, committed at the ``transaction.boundary``."""

    def __init__(self, exactly_once: ExactlyOnceSetup, boundary: TransactionBoundary, interval_ms: int) -> None:
        self.eos = exactly_once
        self.boundary = boundary
        self.interval_s = interval_ms / 1000
        self.transactions = WorkerTransactionContext() if boundary is TransactionBoundary.CONNECTOR else None
        self.producer: Producer | None = None
        self._open = False
        self._torn = False  # a batch only partly produced: its transaction must never commit
        self._last_txn_commit = time.monotonic()
        self._offset_partitions = 0
        self._txn_offsets: dict[bytes, bytes | None] = {}  # offsets written in the open transaction
        self._committable: list[tuple[SourceRecord, RecordMetadata | None]] = []
        self._committable_batches: list[tuple[BytesRecordBatch, list[int]]] = []
        self._committable_lock = threading.Lock()

    task_name = "?"
    """The task's id as messages name it (set when the task binds this policy)."""

    def bind(self, task: WorkerSourceTask) -> None:
        super().bind(task)
        self.task_name = str(task.id)

    # -- lifecycle ------------------------------------------------------------------------------
    def producer_config(self, config: dict[str, Any]) -> dict[str, Any]:
        return transactional_producer(config, self.eos.transactional_id)

    def open_producer(self) -> Producer | None:
        self.eos.preflight()
        if self.task.stopping.is_set():  # do not fence a newer generation on our way out
            return None
        producer = self.producer = Producer(self.task.producer_config)
        self._retrying("initialize the transactional producer", producer.init_transactions)
        self.eos.verify()
        self._offset_partitions = self._partitions_of(self.eos.offsets_topic)
        return producer

    def transaction_context(self) -> TransactionContext | None:
        return self.transactions

    def started(self) -> None:
        self._last_txn_commit = time.monotonic()

    def describe(self) -> str:
        return f" (exactly-once, transactional.id {self.eos.transactional_id}, " \
               f"transaction.boundary {self.boundary.value})"

    def _partitions_of(self, topic: str) -> int:
        assert self.producer is not None
        metadata = self.producer.list_topics(topic, timeout=30).topics.get(topic)
        if metadata is None or metadata.error is not None or not metadata.partitions:
            raise ConnectError(f"The offsets topic {topic} is not available: {metadata and metadata.error}")
        return len(metadata.partitions)

    def close(self) -> None:
        if not self._offset_partitions:
            return
        if self.task.failed or self.task.cancelled:
            self._abort_quietly()
        else:
            self._boundary_commit(final=True)

    def on_pause(self) -> None:
        # commit now: a transaction left open while paused would time out, and the task be fenced
        self._boundary_commit(final=False)

    def resumed(self) -> None:
        self._last_txn_commit = time.monotonic()

    # -- the loop -------------------------------------------------------------------------------
    def translate(self, error: Exception) -> Exception | None:
        if isinstance(error, KafkaException | SystemError):  # a fatal producer error, raised from poll or produce
            return self.translated(error, "write records")
        return None

    def fatal_cause(self) -> KafkaError | None:
        """The fatal error librdkafka has queued as an event, if not served yet (``poll`` raises it)."""
        if self.producer is None:
            return None
        try:
            self.producer.poll(0)
        except KafkaException as e:
            error = e.args[0] if e.args else None
            if isinstance(error, KafkaError) and error.fatal():
                return error
        except Exception:  # only looking for the cause: the task fails either way
            log.debug("%s Could not serve the producer's events", self.task_name, exc_info=True)
        return None

    def translated(self, error: BaseException, what: str) -> Exception:
        """A clear ConnectError for a fatal producer error (a SystemError carries it as its context).

        Once librdkafka has a fatal error, ``produce`` answers only ``_FATAL``; the cause (e.g.
        ``_FENCED`` when a newer instance took over) is raised once, by the next ``poll``.
        """
        cause: BaseException | None = error
        while cause is not None and not isinstance(cause, KafkaException):
            cause = cause.__context__
        kafka_error = cause.args[0] if cause is not None and cause.args else None
        if isinstance(kafka_error, KafkaError) and kafka_error.code() == KafkaError._FATAL:
            kafka_error = self.fatal_cause() or kafka_error
        if isinstance(kafka_error, KafkaError) and kafka_error.code() in _FENCED:
            return ConnectError(f"Task {self.task_name} was fenced out while trying to {what}: another instance "
                                f"of this task (or a zombie fencing) has taken over its transactional id "
                                f"{self.eos.transactional_id}")
        return ConnectError(f"Task {self.task_name} failed to {what}: {cause or error}")

    def send(self, records: Sequence[SourceRecord]) -> None:
        """Send one poll's records inside the open transaction, splitting at records the task named."""
        transactions = self.transactions
        if (transactions is None or type(records) is SourceRecordBatch
                or not transactions.has_record_requests()):
            self._send_part(records)
            return
        start = 0
        for i, record in enumerate(records):
            request = transactions.record_request(record)
            if request is not None:
                self._send_part(records[start:i + 1])
                start = i + 1
                self._end_transaction(abort=request == "abort")
        if start < len(records):
            self._send_part(records[start:])

    def _send_part(self, records: Sequence[SourceRecord]) -> None:
        """Write the offsets these records reach, then the records, into the open transaction.

        Offsets first: the offsets partition then joins the transaction together with the data
        partitions (one AddPartitionsToTxn), and the commit is a flush and an EndTxn, with no
        extra round trip for it. Order inside a transaction does not matter to readers: they
        see all of it or none.
        """
        if not self._open:
            self._begin()
        offsets = batch_offsets(records)
        if offsets:
            writer = self.task.writer
            for partition, offset in offsets.values():
                writer.offset(partition, offset)
            if writer.begin_flush():
                pending = writer.flushing()
                writer.flushed()
                self._produce_offsets(pending)
                self._txn_offsets.update(pending)
        task = self.task
        task.send_records(records)
        if any(not batch.sealed for batch in task.submitted):
            self._torn = True  # cancelled mid-batch: part of it is in the transaction
        task.submitted.clear()

    def _produce_offsets(self, offsets: dict[bytes, bytes | None]) -> None:
        producer = self.producer
        assert producer is not None
        topic, partitions = self.eos.offsets_topic, self._offset_partitions
        for key, value in offsets.items():
            producer.produce(topic, value, key, partition_for(key, partitions))

    def _begin(self) -> None:
        assert self.producer is not None
        try:
            self.producer.begin_transaction()
        except KafkaException as e:
            raise ConnectError(f"Task {self.task_name} failed to begin a transaction: {e}") from e
        self._open = True

    def check_delivery_errors(self) -> None:
        """A failed record fails the task (its transaction cannot commit), except the records an abort purged."""
        failures = self.task.failures
        if failures:
            errors = [b.error for b in failures if not (isinstance(b.error, KafkaError) and b.error.code() in _PURGED)]
            failures.clear()
            if errors:
                raise ConnectError(f"Task {self.task_name} failed to write a record, so its transaction cannot "
                                   f"commit: {errors[0]}")

    def check_topic(self, topic: str) -> None:
        if topic == self.eos.offsets_topic:
            # the next poll would read offsets, waiting for the very transaction this record keeps open
            raise ConnectError("Source tasks may not produce to their own offsets topics when exactly-once "
                               "support is enabled")

    def record_callback(self, batch: SubmittedBatch, record: SourceRecord) -> Callable[[Any, Any], None]:
        """``commit_record`` only after the transaction commits (Kafka's ``committableRecords``)."""
        committable, lock = self._committable, self._committable_lock
        metadata = self.task.record_metadata

        def delivered(err: Any, msg: Any) -> None:
            batch.ack(err, msg)
            if err is None:
                with lock:
                    committable.append((record, metadata(msg)))

        return delivered

    def commit_records(self, records: BytesRecordBatch, offsets: list[int]) -> None:
        """``commit_records`` too only after the transaction commits: the mirror's offset syncs must
        never name a downstream offset of an aborted transaction."""
        with self._committable_lock:
            self._committable_batches.append((records, offsets))

    # -- boundaries ----------------------------------------------------------------------------
    def after_poll(self) -> None:
        boundary = self.boundary
        if boundary is TransactionBoundary.POLL:
            self._commit_transaction()
        elif boundary is TransactionBoundary.INTERVAL:
            if time.monotonic() - self._last_txn_commit >= self.interval_s:
                self._commit_transaction()
        else:
            assert self.transactions is not None
            request = self.transactions.batch_request()
            if request is not None:
                self._end_transaction(abort=request == "abort")

    def _boundary_commit(self, *, final: bool) -> None:
        """On stop (``final``) or pause: commit what is open, except a connector-defined transaction nobody
        asked to end: left open on pause (as Kafka), aborted on stop (the next instance reads it again)."""
        if self.boundary is TransactionBoundary.CONNECTOR:
            assert self.transactions is not None
            request = self.transactions.batch_request()
            if request is not None:
                self._end_transaction(abort=request == "abort")
            elif final and self._open:
                log.info("%s Aborting the open transaction the connector did not commit", self.task_name)
                self._abort_quietly()
        else:
            self._commit_transaction()

    def commit_offsets(self, *, final: bool) -> bool:
        """Offsets are only ever committed with their transaction (at the boundaries above)."""
        return False

    def _end_transaction(self, *, abort: bool) -> None:
        if abort:
            if self._open:
                log.info("%s Aborting the transaction as requested by the connector", self.task_name)
                producer = self.producer
                assert producer is not None
                # everything sent first: an abort purges unsent records, and librdkafka's sequence numbers
                # then skip them (OUT_OF_ORDER_SEQUENCE_NUMBER on the next transaction)
                while producer.flush(_RETRY_S) and not self.task.cancelled:
                    pass
                self._retrying("abort the transaction", producer.abort_transaction)
                self._open = False
                with self._committable_lock:
                    self._committable.clear()
                    self._committable_batches.clear()
                if self._txn_offsets:  # the dropped records' offsets are committed: they are not read again
                    self._begin()
                    self._produce_offsets(self._txn_offsets)
            else:
                log.warning("%s Ignoring the connector's request to abort the transaction: it is empty",
                            self.task_name)
        self._commit_transaction()

    def _commit_transaction(self) -> None:
        """Commit the open transaction, records and offsets together (Kafka's ``commitTransaction``)."""
        producer = self.producer
        assert producer is not None
        self._last_txn_commit = time.monotonic()
        if self._torn:
            raise ConnectError(f"Task {self.task_name} was stopped in the middle of a batch; its open transaction "
                               "is abandoned, never committed")
        if self._open:
            self._retrying("commit the transaction", producer.commit_transaction)
            self._open = False
            self._txn_offsets.clear()
        self._commit_task()

    def _commit_task(self) -> None:
        plugin = self.task.task
        with self._committable_lock:
            done, self._committable = self._committable, []
            batches, self._committable_batches = self._committable_batches, []
        for records, offsets in batches:
            try:
                plugin.commit_records(records, offsets)
            except Exception:
                log.exception("%s Exception thrown while calling task.commit_records()", self.task_name)
        for record, metadata in done:
            try:
                plugin.commit_record(record, metadata)
            except Exception:
                log.exception("%s Exception thrown while calling task.commit_record()", self.task_name)
        try:
            plugin.commit()
        except Exception:
            log.exception("%s Exception thrown while calling task.commit()", self.task_name)

    def _abort_quietly(self) -> None:
        if self.producer is None or not self._open:
            return
        try:
            self.producer.abort_transaction(_RETRY_S)
        except KafkaException as e:
            log.info("%s Could not abort the open transaction (%s); the broker aborts it when the task's next "
                     "instance starts or the transaction times out", self.task_name, e)
        self._open = False

    def _retrying(self, what: str, call: Callable[..., None]) -> None:
        """``call(timeout)`` until it succeeds; a retriable timeout is retried unless the task is cancelled.

        A fatal error (``PRODUCER_FENCED``: a newer instance or a fencing took over the
        transactional id) fails the task with a message saying so.
        """
        while True:
            try:
                call(_RETRY_S)
                return
            except KafkaException as e:
                error = e.args[0] if e.args else None
                cancelled = self.task.cancelled
                if isinstance(error, KafkaError) and error.retriable() and not error.fatal() and not cancelled:
                    continue
                if isinstance(error, KafkaError) and error.code() == KafkaError._TIMED_OUT and not cancelled:
                    continue
                raise self.translated(e, what) from e
            except SystemError as e:  # a fatal error raised while a delivery callback ran
                raise self.translated(e, what) from e
