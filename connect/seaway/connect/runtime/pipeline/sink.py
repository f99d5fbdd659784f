"""The sink pipeline: one poll's consumed messages -> converters -> SMTs -> what ``put`` receives.

A :class:`SinkPlan` is compiled once per task, when it starts, from the task's converters and
transformation chain. It names the strategy each poll tries first; one that declines (returns
``None``, before anything is reported) leaves the poll to ``records``:

================  ============================================================================
strategy          what ``put`` receives, and when the plan uses it
================  ============================================================================
``raw_values``    a :class:`SinkRecordBatch` of decoded values and keys, no record built unless
                  asked: no SMTs, StringConverter or ByteArrayConverter values, built-in key
                  converters; declines a poll with headers, undecodable bytes, or a key only a
                  non-string converter reads
``value_columns`` a :class:`SinkRecordBatch` whose values are columns of one STRUCT schema (no
                  Struct, no SinkRecord built unless asked): no SMTs, JsonConverter values,
                  built-in key converters; declines what ``to_connect_columns`` does not take
``records``       SinkRecords, converted inline (built-in converters' fixed schemas decoded in
                  place) and transformed by the (fused) chain: the general fast path
``reference``     each message step by step under the error operator, SMTs one by one
                  (unfused): the semantics every other strategy must equal
================  ============================================================================

A message that raises on the records path is redone by the reference, which reports it (to
the error log and the dead letter queue) or fails the task, by ``errors.tolerance``. Every
strategy records each partition's last consumed offset of the poll in ``SinkOutput.offsets``
(tolerated failures included: they count as done, as in Kafka). The differential test
(``tests/connect/pipeline/test_sink_strategies.py``) runs every strategy and the reference on
the same generated polls and requires the same records, values, offsets and error reports.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from seaway.connect import converters
from seaway.connect.api import Header, Headers, Schema, SinkRecord, SinkRecordBatch, TimestampType
from seaway.connect.converters import ByteArrayConverter, JsonConverter, StringConverter
from seaway.connect.runtime.errors import RawRecord, Stage

if TYPE_CHECKING:
    from seaway.connect.runtime.task_setup import TaskSetup

__all__ = ["RawValues", "Records", "ReferenceRecords", "SinkOutput", "SinkPlan", "SinkStrategy", "ValueColumns"]

TS_TYPES = {0: TimestampType.NO_TIMESTAMP_TYPE, 1: TimestampType.CREATE_TIME, 2: TimestampType.LOG_APPEND_TIME}
_TS_TYPE_BY_CODE = tuple(TS_TYPES[code] for code in range(len(TS_TYPES)))  # a tuple index beats a dict get
_FAILED: Any = object()
# Deterministic converters whose result for a null key can be reused for the whole batch.
BUILTIN = frozenset(getattr(converters, name) for name in converters.__all__)


class SinkOutput:
    """What a strategy records besides the records: each partition's last offset of the poll
    (``offsets``, ``(topic, partition) -> offset``), the task's ``assignment`` (its size bounds a
    search), and ``check_error(msg)`` for a consumed error event (raises to fail the task)."""

    __slots__ = ("assignment", "check_error", "offsets")

    def __init__(self, offsets: dict[tuple[str, int], int], assignment: set[Any],
                 check_error: Callable[[Any], None]) -> None:
        self.offsets = offsets
        self.assignment = assignment
        self.check_error = check_error


class SinkStrategy(abc.ABC):
    """One way to turn a poll's messages into what ``put`` receives; ``None``: declined."""

    name: ClassVar[str]

    @abc.abstractmethod
    def convert(self, messages: list[Any], out: SinkOutput) -> Sequence[SinkRecord] | None:
        """What ``put`` receives for ``messages``; ``None`` when declined (nothing recorded or reported)."""


def _sv(sv: Any) -> tuple[Any, Any]:
    return sv.schema, sv.value


class ReferenceRecords(SinkStrategy):
    """Each message step by step under the error operator, SMTs one by one: the reference semantics."""

    name = "reference"

    def __init__(self, setup: TaskSetup) -> None:
        self.setup = setup
        self.chain = setup.chain.reference()

    def convert_one(self, msg: Any) -> SinkRecord | None:
        """One message's record, or None when it was skipped (a tolerated failure, or an SMT dropped it)."""
        setup, op, chain = self.setup, self.setup.operator, self.chain
        topic, partition, offset = msg.topic(), msg.partition(), msg.offset()
        ts_type, ts = msg.timestamp()
        raw = RawRecord(topic, partition, offset, msg.key(), msg.value(), list(msg.headers() or []),
                        ts if ts_type else None, TS_TYPES[ts_type].value)
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
                            raw.timestamp, TS_TYPES[ts_type], headers)
        if not chain:
            return record
        ok, result = op.execute(lambda: chain.apply(record), Stage.TRANSFORMATION, chain, consumed=raw)
        return result if ok else None

    def convert(self, messages: list[Any], out: SinkOutput) -> list[SinkRecord]:
        offsets = out.offsets
        records: list[SinkRecord] = []
        for msg in messages:
            if msg.error() is not None:
                out.check_error(msg)
                continue
            offsets[msg.topic(), msg.partition()] = msg.offset()
            record = self.convert_one(msg)
            if record is not None:
                records.append(record)
        return records


class Records(SinkStrategy):
    """SinkRecords converted inline and transformed by the (fused) chain (see :meth:`convert`)."""

    name = "records"

    def __init__(self, setup: TaskSetup, reference: ReferenceRecords) -> None:
        self.setup = setup
        self.reference = reference

    def convert(self, messages: list[Any], out: SinkOutput) -> list[SinkRecord]:
        """Messages to transformed SinkRecords (the hot path); per-batch offsets go to ``out.offsets``.

        Built-in converters are deterministic, so a null key converts once per batch, and
        StringConverter keys and StringConverter / ByteArrayConverter values are decoded inline
        (their schema is fixed); anything that raises is redone by the reference, under the
        error operator. Records are built with ``SinkRecord.consumed`` (no class call), offsets
        are stored once per run of one partition, and every per-message branch tests a local:
        this loop runs once per consumed message.
        """
        setup = self.setup
        chain = setup.chain if setup.chain else None
        key_converter, value_converter = setup.key_converter, setup.value_converter
        key_conv = key_converter.to_connect_data
        value_conv = value_converter.to_connect_data
        header_conv = setup.header_converter.to_connect_header
        null_key = key_conv("", None) if type(key_converter) in BUILTIN else None
        null_key_schema, null_key_value = (null_key.schema, null_key.value) if null_key is not None else (None, None)
        key_encoding = key_converter.encoding if type(key_converter) is StringConverter else None
        string_schema: Schema | None = Schema.OPTIONAL_STRING_SCHEMA
        encoding = value_converter.encoding if type(value_converter) is StringConverter else None
        passthrough = type(value_converter) is ByteArrayConverter
        value_schema = (Schema.OPTIONAL_STRING_SCHEMA if encoding is not None
                        else Schema.OPTIONAL_BYTES_SCHEMA if passthrough else None)
        generic_value = encoding is None and not passthrough
        offsets = out.offsets
        ts_types = _TS_TYPE_BY_CODE
        make = SinkRecord.consumed
        convert_slow = self.reference.convert_one
        check_error = out.check_error
        # the last offset of each run of messages from one partition (consume() returns runs)
        last_topic: str | None = None
        last_partition = last_offset = -1
        records: list[SinkRecord] = []
        append = records.append
        for msg in messages:
            if msg.error() is not None:
                check_error(msg)
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
                record = convert_slow(msg)
            if record is not None:
                append(record)
        if last_topic is not None:
            offsets[last_topic, last_partition] = last_offset
        return records


class RawValues(SinkStrategy):
    """A :class:`SinkRecordBatch` of values decoded in place (String) or passed through (ByteArray)."""

    name = "raw_values"

    def __init__(self, setup: TaskSetup) -> None:
        self.setup = setup

    def convert(self, messages: list[Any], out: SinkOutput) -> SinkRecordBatch | None:
        """Messages to a :class:`SinkRecordBatch` (no SinkRecord built), or None to take the record path.

        Each message costs a value and a key in two lists. A message with headers, a key only a
        non-string converter can read, or bytes that are not valid in the encoding sends the
        whole poll down the records path (which reports errors under the error policy).
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
        check_error = out.check_error
        try:
            for msg in messages:
                if msg.error() is not None:
                    check_error(msg)
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
        wanted = len(out.assignment)
        for msg in reversed(kept):
            tp = (msg.topic(), msg.partition())
            if tp not in last:
                last[tp] = msg.offset()
                if len(last) >= wanted:
                    break
        out.offsets.update(last)
        ts_types, make = _TS_TYPE_BY_CODE, SinkRecord.consumed

        def build() -> list[SinkRecord]:
            records = []
            for msg, key, value in zip(kept, keys, values, strict=True):
                ts_type, ts = msg.timestamp()
                records.append(make(msg.topic(), msg.partition(), null_key_schema if key is None else key_schema,
                                    key, value_schema, value, msg.offset(), ts if ts_type else None,
                                    ts_types[ts_type], None))
            return records

        return SinkRecordBatch(values, keys, build)


class ValueColumns(SinkStrategy):
    """A :class:`SinkRecordBatch` whose values are columns of one STRUCT schema (JsonConverter)."""

    name = "value_columns"

    def __init__(self, setup: TaskSetup) -> None:
        self.setup = setup

    def convert(self, messages: list[Any], out: SinkOutput) -> SinkRecordBatch | None:
        """Messages to a :class:`SinkRecordBatch` whose values are columns, or None to take the record path.

        Only when :meth:`JsonConverter.to_connect_columns` takes the whole poll (one STRUCT
        schema, nothing unusual): then no Struct and no SinkRecord is built unless the task asks
        for them, and a task reading :meth:`SinkRecordBatch.record_value_columns` gets each
        field's values as one list. A message with headers or a null value, a key the key
        converter refuses, or a value the columns cannot take sends the whole poll down the
        records path, which converts (and reports errors) exactly as before.
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
        runs: dict[tuple[str, int], int] = {}
        check_error = out.check_error
        try:
            for msg in messages:
                if msg.error() is not None:
                    check_error(msg)
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
        out.offsets.update(runs)
        schema = columns[0]
        ts_types, make = _TS_TYPE_BY_CODE, SinkRecord.consumed
        batch: SinkRecordBatch

        def build() -> list[SinkRecord]:
            return [make(topic, partition, key_schema, key, schema, value, offset, ts if ts_type else None,
                         ts_types[ts_type], None)
                    for topic, partition, offset, ts_type, ts, key_schema, key, value
                    in zip(topics, partitions, offsets, ts_codes, stamps, key_schemas, keys, batch.record_values(),
                           strict=True)]

        batch = SinkRecordBatch(None, keys, build, value_columns=columns, positions=(topics, partitions, offsets))
        return batch


class SinkPlan:
    """The strategies of one sink task, chosen once from its setup (see the module table)."""

    def __init__(self, setup: TaskSetup) -> None:
        self.reference = ReferenceRecords(setup)
        self.records = Records(setup, self.reference)
        key_builtin = type(setup.key_converter) in BUILTIN
        value_type = type(setup.value_converter)
        self.first: SinkStrategy = self.records
        if not setup.chain and key_builtin and value_type in (StringConverter, ByteArrayConverter):
            self.first = RawValues(setup)
        elif not setup.chain and key_builtin and value_type is JsonConverter:
            self.first = ValueColumns(setup)

    def convert(self, messages: list[Any], out: SinkOutput) -> Sequence[SinkRecord]:
        """What ``put`` receives for one poll's ``messages`` (non-empty)."""
        first = self.first
        if first is not self.records:
            batch = first.convert(messages, out)
            if batch is not None:
                return batch
        return self.records.convert(messages, out)

    def strategies(self) -> list[SinkStrategy]:
        """Every strategy this plan may use, the reference last."""
        return [*([self.first] if self.first is not self.records else []), self.records, self.reference]
