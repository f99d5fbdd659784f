"""WorkerSourceTask: poll -> transformation chain -> converters -> produce (Kafka's ``WorkerSourceTask``).

Offsets are committed only for records the producer acknowledged. Each ``poll()`` result is a
:class:`_Batch` holding the latest offset per source partition. Commits happen every
``offset.flush.interval.ms`` on the task thread (which also serves the delivery callbacks, so
no lock is needed) and on stop, after waiting up to ``offset.flush.timeout.ms``. Records
dropped by an SMT or whose conversion error was tolerated count as done, as in Kafka.

How acknowledgements are tracked depends on the task:

* A task that overrides ``commit_record`` needs each record's metadata, so every record gets
  a delivery callback; batches count down and the longest prefix of fully acknowledged
  batches is committed (Kafka 3's ``SubmittedRecords``), without blocking.
* Otherwise (the common case) the producer reports failures only
  (``delivery.report.only.error``), which saves a Python callback and a Message object per
  record, a third of the cost of ``produce``. A commit then waits for what is in flight
  (``producer.flush`` within ``offset.flush.timeout.ms``, a few milliseconds on a healthy
  cluster) and commits every batch, as Kafka's WorkerSourceTask did before 3.0; if the wait
  times out, nothing is committed this time.

A :class:`SourceRecordBatch` from ``poll`` (records sharing all but value and offset) is
produced straight from its ``values`` when no SMT and no ``commit_record`` needs record
objects and the converters are built-in; otherwise it is iterated like a list.

The hot loop works per batch: positional ``produce`` calls (keyword parsing costs as much
as the rest of the call), one ``producer.poll(0)`` per batch, no per-record logging or
locking, and the error-handling machinery only runs after the fast path raised. A full
producer queue (``BufferError``) is back-pressure: serve callbacks and retry, never drop.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]
from seaway.connect import converters
from seaway.connect.api import (
    BytesRecordBatch,
    ConnectError,
    RecordMetadata,
    RetriableError,
    SourceRecord,
    SourceRecordBatch,
    SourceTask,
    TransactionContext,
)
from seaway.connect.converters import ByteArrayConverter, JsonConverter, StringConverter
from seaway.connect.runtime.config_providers import REDACTOR
from seaway.connect.runtime.connector_config import TopicCreation
from seaway.connect.runtime.errors import Stage, ToleranceExceeded
from seaway.connect.runtime.herder import ConnectorTaskId, TargetState
from seaway.connect.runtime.offsets import OffsetStorageReaderImpl, OffsetStorageWriter
from seaway.connect.runtime.task_setup import TaskSetup
from seaway.connect.runtime.worker_task import TaskStatusListener, WorkerTask
from seaway.kafka_clients import close_producer

__all__ = ["SourceTaskContextImpl", "WorkerSourceTask"]

log = logging.getLogger(__name__)
log.addFilter(REDACTOR)


# Built-in converters that turn a null schema-less key into null bytes: skip the call per record.
_NULL_TO_NULL = frozenset({StringConverter, ByteArrayConverter, JsonConverter})
# Converters known to ignore the headers argument of from_connect_data.
_BUILTIN = frozenset({*_NULL_TO_NULL, *(getattr(converters, name) for name in converters.__all__)})
_FAILED: Any = object()  # a conversion that raised on the short path of send_records
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


class _Batch:
    """One poll's records in flight.

    In per-record mode ``ack`` counts each delivery down: acknowledged when ``pending`` reaches 0
    after ``sealed``. In error-only mode ``fail`` is the callback and only sees failures.
    Failed batches are also appended to the task's shared ``failures`` list, so the loop checks
    for delivery errors in O(1).
    """

    __slots__ = ("error", "failures", "offsets", "pending", "sealed")

    def __init__(self, failures: list[_Batch]) -> None:
        self.pending = 0
        self.sealed = False
        self.error: Any = None
        self.offsets: dict[str, tuple[Any, Any]] = {}
        self.failures = failures

    def ack(self, err: Any, _msg: Any) -> None:
        self.pending -= 1
        if err is not None and self.error is None:
            self.error = err
            self.failures.append(self)

    def fail(self, err: Any, _msg: Any) -> None:
        if err is not None and self.error is None:
            self.error = err
            self.failures.append(self)

    @property
    def done(self) -> bool:
        return self.sealed and self.pending == 0


class _BatchAcks:
    """Delivery reports of one :class:`BytesRecordBatch`: the offset of each record, then ``commit_records``."""

    __slots__ = ("batch", "commit", "committed", "offsets", "records")

    def __init__(self, batch: _Batch, records: BytesRecordBatch,
                 commit: Callable[[BytesRecordBatch, list[int]], None]) -> None:
        self.batch = batch
        self.records = records
        self.commit = commit
        self.offsets: list[int] = []
        self.committed = False

    def ack(self, err: Any, msg: Any) -> None:
        """One delivery report (``_Batch.ack`` and ``check_done`` inlined: this runs once per record)."""
        batch = self.batch
        batch.pending -= 1
        if err is None:
            self.offsets.append(msg.offset())
        else:
            self.offsets.append(-1)
            if batch.error is None:
                batch.error = err
                batch.failures.append(batch)
        if not batch.pending and batch.sealed:
            self.check_done()

    def check_done(self) -> None:
        batch = self.batch
        if batch.done and not self.committed:
            self.committed = True
            if len(self.offsets) == len(self.records):
                self.commit(self.records, self.offsets)


def _partition_key(partition: Any) -> str:
    """A source partition (a dict) as a hashable key."""
    return repr(sorted(partition.items()))


def _last_offsets(records: Sequence[SourceRecord]) -> dict[str, tuple[Any, Any]]:
    """The last (partition, offset) per source partition; cheap when a batch has one partition."""
    out: dict[str, tuple[Any, Any]] = {}
    previous: Any = object()
    for record in reversed(records):
        partition = record.source_partition
        if partition is previous or partition is None or partition == previous:
            continue
        previous = partition
        key = _partition_key(partition)
        if key not in out:
            out[key] = (partition, record.source_offset)
    return out


class WorkerSourceTask(WorkerTask):
    """Runs one :class:`SourceTask` on its own thread with one confluent-kafka producer."""

    def __init__(self, task_id: ConnectorTaskId, task: SourceTask, setup: TaskSetup,
                 producer_config: dict[str, Any], admin_config: dict[str, Any] | None,
                 writer: OffsetStorageWriter, reader: OffsetStorageReaderImpl,
                 listener: TaskStatusListener, target: TargetState,
                 topic_creation: TopicCreation | None = None) -> None:
        super().__init__(task_id, listener, target)
        self.task = task
        self.setup = setup
        self.producer_config = producer_config
        self.admin_config = admin_config
        self.writer = writer
        self.reader = reader
        self.topic_creation = topic_creation
        self.producer: Producer | None = None
        self._batches: deque[_Batch] = deque()
        self._failures: list[_Batch] = []
        self._topics: set[str] = set()
        self._created: set[str] = set()
        self._last_commit = time.monotonic()
        self._wants_commit_records = type(task).commit_records is not SourceTask.commit_records
        overridden = type(task).commit_record is not SourceTask.commit_record or self._wants_commit_records
        self._wants_commit_record = overridden
        # without commit_record, success reports are not needed (see the module docstring)
        self.producer_config = {**producer_config, "delivery.report.only.error": not overridden}

    # -- lifecycle ------------------------------------------------------------------------------
    def initialize_and_start(self) -> None:
        self.producer = Producer(self.producer_config)
        self.task.initialize(SourceTaskContextImpl(self.setup.task_config, self.reader))  # type: ignore[arg-type]
        self.task.start(self.setup.task_config)
        log.info("%s Source task finished initialization and start", self.id)

    def signal_stop(self) -> None:
        try:
            self.task.stop()
        except Exception:
            log.exception("%s Exception while stopping the source task", self.id)

    def close(self) -> None:
        try:
            if self.producer is not None:
                self.commit_offsets(final=True)
        finally:
            try:
                self.setup.close()
            finally:
                if self.producer is not None:
                    producer, self.producer = self.producer, None
                    close_producer(producer)

    def on_pause(self) -> None:
        self.commit_offsets(final=False)

    def while_paused(self) -> None:
        if self.producer is not None:
            self.producer.poll(0)

    # -- the loop -------------------------------------------------------------------------------
    def execute(self) -> None:
        producer = self.producer
        assert producer is not None
        interval = self.setup.offset_flush_interval_ms / 1000
        while not self.stopping.is_set():
            if self.paused and not self.await_unpaused():
                break
            if time.monotonic() - self._last_commit >= interval:
                self.commit_offsets(final=False)
            try:
                records = self.task.poll()
            except RetriableError as e:
                log.warning("%s failed to poll records from SourceTask. Will retry operation.", self.id, exc_info=e)
                records = None
            if records:
                self.send_records(records)
                producer.poll(0)
            else:
                # Nothing to send: a task whose poll() returns None at once would otherwise spin a
                # core. Wait briefly, serving delivery reports meanwhile (poll returns early for them).
                producer.poll(EMPTY_POLL_PAUSE_S)
            self._check_delivery_errors()

    def send_records(self, records: Sequence[SourceRecord]) -> None:
        """Transform, convert and produce one poll's records (the hot path)."""
        metrics = self.metrics
        if metrics is not None:  # once per poll, never per record (runtime/metrics.py)
            metrics.batch(len(records))
            metrics.source_sent(len(records))
        if type(records) is SourceRecordBatch and self._send_batch(records):
            return
        if type(records) is BytesRecordBatch and self._send_bytes_batch(records):
            return
        producer = self.producer
        assert producer is not None
        setup = self.setup
        chain = setup.chain if setup.chain else None
        key_converter, value_converter = setup.key_converter, setup.value_converter
        key_conv = key_converter.from_connect_data
        value_conv = value_converter.from_connect_data
        header_conv = setup.header_converter.from_connect_header
        # built-in converters ignore the headers argument, so records without headers need no
        # Headers object; other converters always get one (they may add to it, as in Kafka)
        builtin = type(key_converter) in _BUILTIN and type(value_converter) in _BUILTIN
        key_null_fast = type(key_converter) in _NULL_TO_NULL
        # StringConverter writes a str as its encoded bytes whatever the schema: inline that
        encoding = value_converter.encoding if type(value_converter) is StringConverter else None
        topics = self._topics
        batch = _Batch(self._failures)
        self._batches.append(batch)
        commit_record = self._wants_commit_record
        callback = batch.fail
        produce = producer.produce
        # no SMTs, no per-record callback, built-in converters: a record without key or headers
        # (most records of most sources) takes the short path at the top of the loop
        plain = chain is None and not commit_record and key_null_fast and builtin
        failed = _FAILED
        for record in records:
            if plain and record._headers is None and record.key is None and record.key_schema is None:
                topic = record.topic
                value = record.value
                try:
                    value = (value.encode(encoding) if encoding is not None and type(value) is str
                             else value_conv(topic, record.value_schema, value, None))
                except Exception:  # redone by the full path below, which reports it
                    value = failed
                if value is not failed and topic in topics:
                    partition = record.kafka_partition
                    try:
                        produce(topic, value, None, -1 if partition is None else partition, callback, None,
                                record.timestamp or 0, None)
                        continue
                    except BufferError:
                        pass  # the full path below waits for room
            topic = ""
            out: SourceRecord | None = None
            try:
                out = chain.apply(record) if chain is not None else record
                if out is None:
                    if commit_record:
                        self.task.commit_record(record, None)
                    continue
                topic = out.topic
                headers = out._headers  # None when the record never had headers (records.py)
                if headers is None and not builtin:
                    headers = out.headers
                if key_null_fast and out.key is None and out.key_schema is None:
                    key = None
                else:
                    key = key_conv(topic, out.key_schema, out.key, headers)
                value = out.value
                if encoding is None or type(value) is not str:
                    value = value_conv(topic, out.value_schema, value, headers)
                else:
                    value = value.encode(encoding)
                kafka_headers: Any = ([(h.key, header_conv(topic, h.key, h.schema, h.value)) for h in headers]
                                      if headers is not None and len(headers) else None)
            except Exception:  # redone step by step below, outside this handler
                topic = ""
            if not topic or out is None:
                converted = self._convert_slow(record)
                if converted is None:
                    if commit_record:
                        self.task.commit_record(record, None)
                    continue
                out, key, value, kafka_headers = converted
                topic = out.topic
            if topic not in topics:
                self._new_topic(topic)
            partition = out.kafka_partition
            if commit_record:
                callback = self._record_callback(batch, record)
                batch.pending += 1
            kafka_partition = -1 if partition is None else partition
            try:
                # positional: topic, value, key, partition, on_delivery, callback, timestamp, headers
                produce(topic, value, key, kafka_partition, callback, None, out.timestamp or 0, kafka_headers)
            except BufferError:
                if not self._produce_when_room((topic, value, key, kafka_partition, callback, None,
                                                out.timestamp or 0, kafka_headers)):
                    if commit_record:
                        batch.pending -= 1
                    return
        batch.offsets = _last_offsets(records)
        batch.sealed = True

    def _send_batch(self, records: SourceRecordBatch) -> bool:
        """Produce a batch from its value column; False (nothing sent) if it needs record objects.

        That is when SMTs or ``commit_record`` need records, a converter is not built-in, or
        a value fails to convert (the per-record path then reports it under the error policy).
        """
        setup = self.setup
        key_converter, value_converter = setup.key_converter, setup.value_converter
        if (setup.chain or self._wants_commit_record or type(key_converter) not in _NULL_TO_NULL
                or type(value_converter) not in _BUILTIN):
            return False
        topic, schema = records.topic, records.value_schema
        encoding = value_converter.encoding if type(value_converter) is StringConverter else None
        conv = value_converter.from_connect_data
        try:
            if encoding is not None:
                values = [v.encode(encoding) if type(v) is str else conv(topic, schema, v, None)
                          for v in records.values]
            elif type(value_converter) is JsonConverter:  # the schema's writer looked up once per batch
                values = value_converter.from_connect_values(topic, schema, records.values)
            else:
                values = [conv(topic, schema, v, None) for v in records.values]
        except Exception:
            return False
        if topic not in self._topics:
            self._new_topic(topic)
        producer = self.producer
        assert producer is not None
        batch = _Batch(self._failures)
        self._batches.append(batch)
        produce, callback = producer.produce, batch.fail
        partition = -1 if records.kafka_partition is None else records.kafka_partition
        timestamp = records.timestamp or 0
        for value in values:
            try:
                produce(topic, value, None, partition, callback, None, timestamp, None)
            except BufferError:
                if not self._produce_when_room((topic, value, None, partition, callback, None, timestamp, None)):
                    return True
        source_partition = records.source_partition
        if source_partition is not None and len(records):
            batch.offsets = {_partition_key(source_partition): (source_partition, records.last_source_offset)}
        batch.sealed = True
        return True

    def _send_bytes_batch(self, records: BytesRecordBatch) -> bool:
        """Produce a :class:`BytesRecordBatch` from its columns; False (nothing sent) if it needs records.

        That is when an SMT runs, a converter is not ByteArrayConverter (keys, values and headers
        would not pass through unchanged), or the task wants ``commit_record`` per record but not
        ``commit_records`` per batch. Per-record delivery reports then go to one bound method that
        fills the batch's offsets (in order: a partition's reports come in produce order).
        """
        setup = self.setup
        if (setup.chain or type(setup.key_converter) is not ByteArrayConverter
                or type(setup.value_converter) is not ByteArrayConverter
                or type(setup.header_converter) is not ByteArrayConverter
                or (self._wants_commit_record and not self._wants_commit_records)):
            return False
        topic, partition = records.topic, records.kafka_partition
        if topic not in self._topics:
            self._new_topic(topic)
        producer = self.producer
        assert producer is not None
        batch = _Batch(self._failures)
        self._batches.append(batch)
        acks = _BatchAcks(batch, records, self._commit_batch_records) if self._wants_commit_records else None
        callback = batch.fail if acks is None else acks.ack
        produce = producer.produce
        columns: Any = zip(records.keys, records.values, records.headers, records.timestamps, strict=True)
        for key, value, headers, timestamp in columns:
            if acks is not None:
                batch.pending += 1
            try:
                produce(topic, value, key, partition, callback, None, timestamp or 0, headers or None)
            except BufferError:
                if not self._produce_when_room((topic, value, key, partition, callback, None, timestamp or 0,
                                                headers or None)):
                    if acks is not None:
                        batch.pending -= 1
                    return True
        source_partition = records.source_partition
        if source_partition is not None and len(records):
            batch.offsets = {_partition_key(source_partition): (source_partition, records.last_source_offset)}
        batch.sealed = True
        if acks is not None:
            acks.check_done()  # every report may have been served while waiting for room
        return True

    def _commit_batch_records(self, records: BytesRecordBatch, offsets: list[int]) -> None:
        """A batch's records all acknowledged: tell the task (the exactly-once task holds this until its commit)."""
        self.task.commit_records(records, offsets)

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

    def _record_callback(self, batch: _Batch, record: SourceRecord) -> Any:
        task = self.task

        def delivered(err: Any, msg: Any) -> None:
            batch.ack(err, msg)
            if err is None:
                ts_type, ts = msg.timestamp()
                task.commit_record(record, RecordMetadata(msg.topic(), msg.partition(), msg.offset(),
                                                          ts if ts_type else None))
            elif self.setup.connector_config.errors.tolerate_all:
                task.commit_record(record, None)

        return delivered

    def _convert_slow(self, record: SourceRecord) -> tuple[SourceRecord, bytes | None, bytes | None, Any] | None:
        """The record's pipeline with each step under the error operator; None if it was skipped."""
        setup, op = self.setup, self.setup.operator
        ok, out = op.execute(lambda: setup.chain.apply(record), Stage.TRANSFORMATION, setup.chain,
                             source_record=record)
        if not ok or out is None:
            return None
        topic = out.topic
        ok, key = op.execute(lambda: setup.key_converter.from_connect_data(topic, out.key_schema, out.key,
                                                                            out.headers),
                             Stage.KEY_CONVERTER, setup.key_converter, source_record=record)
        if not ok:
            return None
        ok, value = op.execute(lambda: setup.value_converter.from_connect_data(topic, out.value_schema, out.value,
                                                                                out.headers),
                               Stage.VALUE_CONVERTER, setup.value_converter, source_record=record)
        if not ok:
            return None
        hc = setup.header_converter
        ok, headers = op.execute(lambda: [(h.key, hc.from_connect_header(topic, h.key, h.schema, h.value))
                                          for h in out.headers] or None,
                                 Stage.HEADER_CONVERTER, hc, source_record=record)
        if not ok:
            return None
        return out, key, value, headers

    def _check_delivery_errors(self) -> None:
        failures = self._failures
        if failures:
            error = failures[0].error
            failures.clear()
            if not self.setup.connector_config.errors.tolerate_all:
                raise ToleranceExceeded(f"Unrecoverable exception from producer send callback: {error}")

    def _new_topic(self, topic: str) -> None:
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
        """Write offsets of acknowledged batches; on the final commit, first wait for acks (flush timeout)."""
        producer = self.producer
        self._last_commit = time.monotonic()
        started = time.perf_counter_ns()
        if producer is None:
            return False
        batches = self._batches
        timeout = self.setup.offset_flush_timeout_ms / 1000
        per_record = self._wants_commit_record
        if final or (batches and not per_record and len(producer)):
            if producer.flush(timeout) and not final:
                log.warning("%s Timed out waiting for the producer to acknowledge records; offsets will "
                            "be committed later", self.id)
        else:
            producer.poll(0)
        all_acked = not per_record and len(producer) == 0
        tolerate = self.setup.connector_config.errors.tolerate_all
        committed_any = False
        while batches and (batches[0].done if per_record else all_acked) and (
                batches[0].error is None or tolerate):
            batch = batches.popleft()
            for partition, offset in batch.offsets.values():
                self.writer.offset(partition, offset)
            committed_any = True
        if not committed_any or not self.writer.begin_flush():
            return False
        try:
            self.writer.do_flush()
        except Exception:
            log.exception("%s Failed to commit offsets", self.id)
            self.writer.cancel_flush()
            if self.metrics is not None:
                self.metrics.commit_done(started, False)
            return False
        if self.metrics is not None:
            self.metrics.commit_done(started, True)
        try:
            self.task.commit()
        except Exception:
            log.exception("%s Exception thrown while calling task.commit()", self.id)
        return True
