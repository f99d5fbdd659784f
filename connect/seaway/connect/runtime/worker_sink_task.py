"""WorkerSinkTask: consume -> converters -> transformation chain -> put (Kafka's ``WorkerSinkTask``).

One confluent-kafka consumer per task, a member of group ``connect-<connector>`` (overridable
with ``consumer.override.group.id``), subscribed to ``topics`` or ``topics.regex``. Rebalance
callbacks become ``SinkTask.open`` / ``close`` (offsets of revoked partitions are committed
first). Offsets are committed every ``offset.flush.interval.ms`` (or on ``request_commit``)
with what ``pre_commit`` returns, after the errant-record reports are acknowledged.

``RetriableError`` from ``put`` pauses every partition, waits ``context.timeout(ms)`` while
still polling (to stay in the group) and delivers the same batch again. Every SinkTask call
happens on the task thread, rebalance callbacks included (they run inside ``consume``).

Consumer error events that librdkafka does not flag fatal (the subscribed topic does not exist
yet, a broker is unreachable, all brokers are down) are logged and ridden out, as Kafka
Connect's sink tasks wait in ``poll``: a sink created before its topic starts consuming when
the topic appears (librdkafka looks the missing topic up again within seconds). Fatal errors
(e.g. a fenced or invalid consumer) fail the task, and so do the errors Kafka's consumer
throws from ``poll`` that librdkafka only reports and retries (:data:`FAILS_TASK`): a
principal without READ on the topic or the group, or failed authentication, would otherwise
leave the task RUNNING and idle forever.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from typing import Any

from confluent_kafka import Consumer, KafkaError, KafkaException
from confluent_kafka import TopicPartition as KafkaTopicPartition
from seaway.connect import converters
from seaway.connect.api import (
    ConnectError,
    Header,
    Headers,
    OffsetAndMetadata,
    RetriableError,
    Schema,
    SinkRecord,
    SinkRecordBatch,
    SinkTask,
    SinkTaskContext,
    TimestampType,
    TopicPartition,
)
from seaway.connect.api.records import new_sink_record
from seaway.connect.converters import ByteArrayConverter, JsonConverter, StringConverter
from seaway.connect.runtime.config_providers import REDACTOR
from seaway.connect.runtime.errors import RawRecord, Stage, WorkerErrantRecordReporter
from seaway.connect.runtime.herder import ConnectorTaskId, TargetState
from seaway.connect.runtime.task_setup import TaskSetup
from seaway.connect.runtime.worker_task import TaskStatusListener, WorkerTask

__all__ = ["WorkerSinkTask", "WorkerSinkTaskContext"]

log = logging.getLogger(__name__)
log.addFilter(REDACTOR)

FAILS_TASK: dict[int, str] = {
    KafkaError.TOPIC_AUTHORIZATION_FAILED: "the connector's consumer principal needs READ (and DESCRIBE) on the topic",
    KafkaError.GROUP_AUTHORIZATION_FAILED: "the connector's consumer principal needs READ on its consumer group",
    KafkaError._AUTHENTICATION: "the broker refused the consumer's credentials",
}
"""Consumer errors that fail the task with this hint, as Kafka Connect's ``WorkerSinkTask`` fails on
``TopicAuthorizationException``, ``GroupAuthorizationException`` and ``AuthenticationException``."""
CONSUMER_ERROR_LOG_INTERVAL_S = 30.0
"""How often one kind of non-fatal consumer error is logged at WARNING (the rest go to DEBUG)."""
_TS_TYPES = {0: TimestampType.NO_TIMESTAMP_TYPE, 1: TimestampType.CREATE_TIME, 2: TimestampType.LOG_APPEND_TIME}
_TS_TYPE_BY_CODE = tuple(_TS_TYPES[code] for code in range(len(_TS_TYPES)))  # a tuple index beats a dict get
MAX_POLL_RECORDS = 500
_FAILED: Any = object()
DEFAULT_RETRY_TIMEOUT_MS = 1000
# Deterministic converters whose result for a null key can be reused for the whole batch.
_BUILTIN = frozenset(getattr(converters, name) for name in converters.__all__)


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
        # whether polls become SinkRecordBatches (convert_columns)
        self._columnar = (not setup.chain and type(setup.value_converter) in (StringConverter, ByteArrayConverter)
                          and type(setup.key_converter) in _BUILTIN)
        # whether polls may become SinkRecordBatches of value columns (convert_json_columns)
        self._json_columns = (not setup.chain and type(setup.value_converter) is JsonConverter
                              and type(setup.key_converter) in _BUILTIN)
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
        if self._columnar:
            batch = self.convert_columns(messages)
            if batch is not None:
                return batch
        elif self._json_columns:
            batch = self.convert_json_columns(messages)
            if batch is not None:
                return batch
        return self.convert_messages(messages)

    def convert_json_columns(self, messages: list[Any]) -> SinkRecordBatch | None:
        """Messages to a :class:`SinkRecordBatch` whose values are columns, or None to take the record path.

        Only for connectors without SMTs whose value converter is JsonConverter (``_json_columns``)
        and only when :meth:`JsonConverter.to_connect_columns` takes the whole poll (one STRUCT
        schema, nothing unusual): then no Struct and no SinkRecord is built unless the task asks
        for them, and a task reading :meth:`SinkRecordBatch.record_value_columns` gets each
        field's values as one list. A message with headers or a null value, a key the key
        converter refuses, or a value the columns cannot take sends the whole poll down
        :meth:`convert_messages`, which converts (and reports errors) exactly as before.
        """
        setup = self.setup
        key_converter = setup.key_converter
        key_conv = key_converter.to_connect_data
        null_key = key_conv("", None)
        key_encoding = key_converter.encoding if type(key_converter) is StringConverter else None
        string_schema: Schema | None = Schema.OPTIONAL_STRING_SCHEMA
        topics: list[str] = []
        partitions: list[int] = []
        offsets: list[int] = []
        ts_codes: list[int] = []  # two lists of ints, not a tuple per message: ints are no work for the GC
        stamps: list[int] = []
        key_schemas: list[Schema | None] = []
        keys: list[Any] = []
        raw_values: list[bytes] = []
        last = self._batch_offsets
        runs: dict[tuple[str, int], int] = {}
        try:
            for msg in messages:
                if msg.error() is not None:
                    _check_consumer_error(msg, self.id, self._errors_logged)
                    continue
                raw = msg.value()
                if raw is None or msg.headers():
                    return None
                topic, partition, offset = msg.topic(), msg.partition(), msg.offset()
                key = msg.key()
                if key is None:
                    key_schema, key = null_key.schema, null_key.value
                elif key_encoding is not None:
                    key_schema, key = string_schema, key.decode(key_encoding)
                else:
                    converted = key_conv(topic, key)
                    key_schema, key = converted.schema, converted.value
                topics.append(topic)
                partitions.append(partition)
                offsets.append(offset)
                ts_type, ts = msg.timestamp()
                ts_codes.append(ts_type)
                stamps.append(ts)
                key_schemas.append(key_schema)
                keys.append(key)
                raw_values.append(raw)
                runs[topic, partition] = offset
        except Exception:  # the record path converts (and reports) this poll
            return None
        if not raw_values:
            return None
        converter = setup.value_converter
        assert isinstance(converter, JsonConverter)
        columns = converter.to_connect_columns(topics[0], raw_values)
        if columns is None:
            return None
        last.update(runs)
        schema = columns[0]
        ts_types, make = _TS_TYPE_BY_CODE, new_sink_record
        batch: SinkRecordBatch

        def build() -> list[SinkRecord]:
            return [make(topic, partition, key_schema, key, schema, value, offset, ts if ts_type else None,
                         ts_types[ts_type], None)
                    for topic, partition, offset, ts_type, ts, key_schema, key, value
                    in zip(topics, partitions, offsets, ts_codes, stamps, key_schemas, keys, batch.record_values(),
                           strict=True)]

        batch = SinkRecordBatch(None, keys, build, value_columns=columns, positions=(topics, partitions, offsets))
        return batch

    def convert_columns(self, messages: list[Any]) -> SinkRecordBatch | None:
        """Messages to a :class:`SinkRecordBatch` (no SinkRecord built), or None to take the record path.

        Only for connectors without SMTs whose value converter is StringConverter or
        ByteArrayConverter (``_columnar``): their values decode inline, so each message costs
        a value and a key in two lists. A message with headers, a key only a non-string
        converter can read, or bytes that are not valid in the encoding sends the whole poll
        down :meth:`convert_messages` (which reports errors under the error policy).
        """
        setup = self.setup
        key_converter, value_converter = setup.key_converter, setup.value_converter
        encoding = value_converter.encoding if type(value_converter) is StringConverter else None
        key_encoding = key_converter.encoding if type(key_converter) is StringConverter else None
        keys_pass = type(key_converter) is ByteArrayConverter
        null_key = key_converter.to_connect_data("", None)
        null_key_schema = null_key.schema
        if null_key.value is not None:
            return None
        value_schema = Schema.OPTIONAL_STRING_SCHEMA if encoding is not None else Schema.OPTIONAL_BYTES_SCHEMA
        key_schema = (Schema.OPTIONAL_STRING_SCHEMA if key_encoding is not None
                      else Schema.OPTIONAL_BYTES_SCHEMA if keys_pass else None)
        keys: list[Any] = []
        values: list[Any] = []
        add_key, add_value = keys.append, values.append
        errors = False
        try:
            for msg in messages:
                if msg.error() is not None:
                    _check_consumer_error(msg, self.id, self._errors_logged)
                    errors = True
                    continue
                if msg.headers():
                    return None
                key = msg.key()
                if key is not None:
                    if key_encoding is not None:
                        key = key.decode(key_encoding)
                    elif not keys_pass:
                        return None
                value = msg.value()
                if value is not None and encoding is not None:
                    value = value.decode(encoding)
                add_key(key)
                add_value(value)
        except UnicodeDecodeError:
            return None
        kept = [m for m in messages if m.error() is None] if errors else messages
        # the last offset of each partition: walking back from the end finds every assigned
        # partition's last message after a few messages, instead of tracking runs per message
        last: dict[tuple[str, int], int] = {}
        wanted = len(self.assignment)
        for msg in reversed(kept):
            tp = (msg.topic(), msg.partition())
            if tp not in last:
                last[tp] = msg.offset()
                if len(last) >= wanted:
                    break
        self._batch_offsets.update(last)
        ts_types, make = _TS_TYPE_BY_CODE, new_sink_record

        def build() -> list[SinkRecord]:
            out = []
            for msg, key, value in zip(kept, keys, values, strict=True):
                ts_type, ts = msg.timestamp()
                out.append(make(msg.topic(), msg.partition(), null_key_schema if key is None else key_schema, key,
                                value_schema, value, msg.offset(), ts if ts_type else None, ts_types[ts_type],
                                None))
            return out

        return SinkRecordBatch(values, keys, build)

    def convert_messages(self, messages: list[Any]) -> list[SinkRecord]:
        """Messages to transformed SinkRecords (the hot path); per-batch offsets go to ``_batch_offsets``.

        Built-in converters are deterministic, so a null key converts once per batch, and
        StringConverter keys and StringConverter / ByteArrayConverter values are decoded inline
        (their schema is fixed); anything that raises is redone through the converters under
        the error operator. Records are built with ``new_sink_record`` (no class call), offsets
        are stored once per run of one partition, and every per-message branch tests a local:
        this loop runs once per consumed message.
        """
        setup = self.setup
        chain = setup.chain if setup.chain else None
        key_converter, value_converter = setup.key_converter, setup.value_converter
        key_conv = key_converter.to_connect_data
        value_conv = value_converter.to_connect_data
        header_conv = setup.header_converter.to_connect_header
        null_key = key_conv("", None) if type(key_converter) in _BUILTIN else None
        null_key_schema, null_key_value = (null_key.schema, null_key.value) if null_key is not None else (None, None)
        key_encoding = key_converter.encoding if type(key_converter) is StringConverter else None
        string_schema: Schema | None = Schema.OPTIONAL_STRING_SCHEMA
        encoding = value_converter.encoding if type(value_converter) is StringConverter else None
        passthrough = type(value_converter) is ByteArrayConverter
        value_schema = (Schema.OPTIONAL_STRING_SCHEMA if encoding is not None
                        else Schema.OPTIONAL_BYTES_SCHEMA if passthrough else None)
        generic_value = encoding is None and not passthrough
        offsets = self._batch_offsets
        ts_types = _TS_TYPE_BY_CODE
        make = new_sink_record
        # the last offset of each run of messages from one partition (consume() returns runs)
        last_topic: str | None = None
        last_partition = last_offset = -1
        out: list[SinkRecord] = []
        append = out.append
        for msg in messages:
            if msg.error() is not None:
                _check_consumer_error(msg, self.id, self._errors_logged)
                continue
            topic, partition, offset = msg.topic(), msg.partition(), msg.offset()
            if partition != last_partition or topic != last_topic:  # a run of one partition ends
                if last_topic is not None:
                    offsets[last_topic, last_partition] = last_offset
                last_topic, last_partition = topic, partition
            last_offset = offset
            try:
                raw = msg.key()
                if raw is None and null_key is not None:
                    key_schema, key_value = null_key_schema, null_key_value
                elif raw is not None and key_encoding is not None:
                    key_schema, key_value = string_schema, raw.decode(key_encoding)
                else:
                    key = key_conv(topic, raw)
                    key_schema, key_value = key.schema, key.value
                raw = msg.value()
                if raw is None or generic_value:
                    sv = value_conv(topic, raw)
                    schema, value = sv.schema, sv.value
                elif passthrough:
                    schema, value = value_schema, raw
                else:
                    schema, value = value_schema, raw.decode(encoding)
                raw_headers = msg.headers()
                ts_type, ts = msg.timestamp()
                record: SinkRecord | None = make(
                    topic, partition, key_schema, key_value, schema, value, offset,
                    ts if ts_type else None, ts_types[ts_type],
                    Headers([Header(k, *_sv(header_conv(topic, k, v))) for k, v in raw_headers])
                    if raw_headers else None)
                if chain is not None:
                    record = chain.apply(record)
            except Exception:  # redone step by step below, outside this handler
                record = _FAILED
            if record is _FAILED:
                record = self._convert_slow(msg)
            if record is not None:
                append(record)
        if last_topic is not None:
            offsets[last_topic, last_partition] = last_offset
        return out

    def _convert_slow(self, msg: Any) -> SinkRecord | None:
        setup, op = self.setup, self.setup.operator
        topic, partition, offset = msg.topic(), msg.partition(), msg.offset()
        ts_type, ts = msg.timestamp()
        raw = RawRecord(topic, partition, offset, msg.key(), msg.value(), list(msg.headers() or []),
                        ts if ts_type else None, _TS_TYPES[ts_type].value)
        ok, key = op.execute(lambda: setup.key_converter.to_connect_data(topic, raw.key), Stage.KEY_CONVERTER,
                             setup.key_converter, consumed=raw)
        if not ok or key is None:
            return None
        ok, value = op.execute(lambda: setup.value_converter.to_connect_data(topic, raw.value),
                               Stage.VALUE_CONVERTER, setup.value_converter, consumed=raw)
        if not ok or value is None:
            return None
        hc = setup.header_converter
        ok, headers = op.execute(lambda: Headers([Header(k, *_sv(hc.to_connect_header(topic, k, v)))
                                                  for k, v in raw.headers]),
                                 Stage.HEADER_CONVERTER, hc, consumed=raw)
        if not ok:
            return None
        record = SinkRecord(topic, partition, key.schema, key.value, value.schema, value.value, offset,
                            raw.timestamp, _TS_TYPES[ts_type], headers)
        ok, out = op.execute(lambda: setup.chain.apply(record), Stage.TRANSFORMATION, setup.chain, consumed=raw)
        return out if ok else None

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


def _check_consumer_error(msg: Any, task: object, last_logged: dict[int, float]) -> None:
    """A consumed error event: a fatal one, or one of :data:`FAILS_TASK`, fails the task; any
    other is logged and ridden out.

    librdkafka reports transient trouble (unknown topic, broker down, transport errors) as
    error events and keeps retrying by itself, so failing the task on them would kill a sink
    whose topic is merely not created yet. End-of-partition notices are skipped silently; the
    rest are logged at WARNING at most once per ``CONSUMER_ERROR_LOG_INTERVAL_S`` per error code
    (``last_logged``: the task's code -> when), since they repeat for as long as the condition lasts.
    """
    err = msg.error()
    code = err.code()
    if code == KafkaError._PARTITION_EOF:
        return
    if err.fatal():
        raise KafkaException(err)
    hint = FAILS_TASK.get(code)
    if hint is not None:
        topic = msg.topic()
        raise ConnectError(f"{task} Consumer error {err.name()}{f' on topic {topic}' if topic else ''}: "
                           f"{err.str()} ({hint})") from KafkaException(err)
    now = time.monotonic()
    if code not in last_logged or now - last_logged[code] >= CONSUMER_ERROR_LOG_INTERVAL_S:
        last_logged[code] = now
        topic = msg.topic()
        log.warning("%s Consumer error (not fatal, the consumer retries; waiting): %s: %s%s", task, err.name(),
                    err.str(), f" (topic {topic})" if topic else "")
    else:
        log.debug("%s Consumer error (not fatal): %s: %s", task, err.name(), err.str())


def _sv(sv: Any) -> tuple[Any, Any]:
    return sv.schema, sv.value
