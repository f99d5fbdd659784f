"""The source pipeline: one poll's records -> SMTs -> converters -> ``produce``, by a named strategy.

A :class:`SourcePlan` is compiled once per task, when it starts, from the task's converters,
its transformation chain and what the task declared (an overridden ``commit_record`` or
``commit_records``). It holds a few strategies; which one sends a poll's records is a
dictionary lookup on the batch's type, never a ladder of tests:

============================  ===============================================================
strategy                      what it does, and when the plan uses it
============================  ===============================================================
``bytes_passthrough``         a :class:`BytesRecordBatch` produced straight from its columns:
                              ByteArrayConverter for keys, values and headers, no SMTs, and
                              ``commit_records`` (once per batch) rather than ``commit_record``
``value_columns``             a :class:`SourceRecordBatch` converted as one value column (one
                              JsonConverter writer lookup per batch): built-in converters, no
                              SMTs, no ``commit_record``
``plain_records``             records, each converted inline; records without key or headers
                              take a short path: built-in converters, no SMTs, no
                              ``commit_record``
``records``                   records through the (fused) chain and the converters inline: the
                              general fast path
``reference``                 each record step by step under the error operator, SMTs one by
                              one (unfused): the semantics every other strategy must equal
============================  ===============================================================

A strategy may decline a batch before producing anything (``value_columns`` when a value
does not convert: the records path then reports it under the error policy); the plan then
sends it with its records strategy. Inside the records strategies a record that raises is
redone by the reference, so error reports always come from the reference path. The
differential test (``tests/connect/pipeline/test_source_strategies.py``) runs every strategy
and the reference on the same generated batches and requires the same produced records,
offsets and error reports.

Strategies send through a :class:`SourceOutput`: the producer's ``produce`` (positional
arguments: topic, value, key, partition, on_delivery, callback, timestamp, headers; keyword
parsing costs as much as the rest of the call) and the task's bookkeeping (in-flight batches,
topic tracking and creation, ``commit_record`` callbacks). A full producer queue
(``BufferError``) is back-pressure: ``produce_when_room`` serves callbacks and retries, never
drops; it answers False when the task was cancelled meanwhile, and sending stops there.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from seaway.connect import converters
from seaway.connect.api import BytesRecordBatch, SourceRecord, SourceRecordBatch
from seaway.connect.converters import ByteArrayConverter, JsonConverter, StringConverter
from seaway.connect.runtime.errors import Stage
from seaway.connect.runtime.submitted import BatchAcks, SubmittedBatch, last_offsets, partition_key

if TYPE_CHECKING:
    from seaway.connect.runtime.task_setup import TaskSetup

__all__ = [
    "BytesPassThrough",
    "PlainRecords",
    "Records",
    "ReferenceRecords",
    "SourceOutput",
    "SourcePlan",
    "SourceStrategy",
    "ValueColumns",
]

# Built-in converters that turn a null schema-less key into null bytes: skip the call per record.
NULL_TO_NULL = frozenset({StringConverter, ByteArrayConverter, JsonConverter})
# Converters known to ignore the headers argument of from_connect_data.
BUILTIN = frozenset({*NULL_TO_NULL, *(getattr(converters, name) for name in converters.__all__)})
_FAILED: Any = object()  # a conversion that raised on the short path

Callback = Callable[[Any, Any], None]
Converted = tuple[SourceRecord, "bytes | None", "bytes | None", Any]


class SourceOutput:
    """Where a strategy sends one poll's records: the producer and the task's bookkeeping.

    ``produce``: the producer's ``produce`` (positional arguments, see the module docstring);
    ``produce_when_room(args)``: produce once the queue has room, False if cancelled meanwhile;
    ``topics``: topics already seen, ``new_topic(topic)``: called once for any other;
    ``open_batch()``: a new in-flight batch, registered with the task;
    ``record_callback(batch, record)``: the delivery callback of one record for ``commit_record``;
    ``commit_skipped(record)``: ``commit_record(record, None)`` for a record SMTs or errors dropped;
    ``commit_records``: the task's ``commit_records`` hook, when it overrides it.
    """

    __slots__ = ("commit_records", "commit_skipped", "new_topic", "open_batch", "produce", "produce_when_room",
                 "record_callback", "topics")

    def __init__(self, produce: Callable[..., None], produce_when_room: Callable[[tuple[Any, ...]], bool],
                 topics: set[str], new_topic: Callable[[str], None], open_batch: Callable[[], SubmittedBatch],
                 record_callback: Callable[[SubmittedBatch, SourceRecord], Callback],
                 commit_skipped: Callable[[SourceRecord], None],
                 commit_records: Callable[[BytesRecordBatch, list[int]], None] | None) -> None:
        self.produce = produce
        self.produce_when_room = produce_when_room
        self.topics = topics
        self.new_topic = new_topic
        self.open_batch = open_batch
        self.record_callback = record_callback
        self.commit_skipped = commit_skipped
        self.commit_records = commit_records


class SourceStrategy(abc.ABC):
    """One way to send a poll's records; ``send`` returns False when it declines (nothing sent)."""

    name: ClassVar[str]

    @abc.abstractmethod
    def send(self, records: Sequence[SourceRecord], out: SourceOutput) -> bool:
        """Produce ``records`` and seal their in-flight batch; False: declined, nothing produced."""


class ReferenceRecords(SourceStrategy):
    """Each record step by step under the error operator, SMTs one by one: the reference semantics."""

    name = "reference"

    def __init__(self, setup: TaskSetup, commit_record: bool) -> None:
        self.setup = setup
        self.chain = setup.chain.reference()
        self.commit_record = commit_record

    def convert(self, record: SourceRecord) -> Converted | None:
        """The record's pipeline with each step under the error operator; None if it was skipped."""
        setup, op, chain = self.setup, self.setup.operator, self.chain
        ok, out = op.execute(lambda: chain.apply(record), Stage.TRANSFORMATION, chain, source_record=record)
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

    def send(self, records: Sequence[SourceRecord], out: SourceOutput) -> bool:
        batch = out.open_batch()
        commit_record = self.commit_record
        callback: Callback = batch.fail
        for record in records:
            converted = self.convert(record)
            if converted is None:
                if commit_record:
                    out.commit_skipped(record)
                continue
            if not _produce(out, batch, record, converted, commit_record, callback):
                return True
        batch.offsets = last_offsets(records)
        batch.sealed = True
        return True


def _produce(out: SourceOutput, batch: SubmittedBatch, record: SourceRecord, converted: Converted,
             commit_record: bool, callback: Callback) -> bool:
    """Produce one converted record (the records paths' tail); False when the task was cancelled."""
    result, key, value, kafka_headers = converted
    topic = result.topic
    if topic not in out.topics:
        out.new_topic(topic)
    partition = result.kafka_partition
    if commit_record:
        callback = out.record_callback(batch, record)
        batch.pending += 1
    kafka_partition = -1 if partition is None else partition
    try:
        out.produce(topic, value, key, kafka_partition, callback, None, result.timestamp or 0, kafka_headers)
    except BufferError:
        if not out.produce_when_room((topic, value, key, kafka_partition, callback, None, result.timestamp or 0,
                                      kafka_headers)):
            if commit_record:
                batch.pending -= 1
            return False
    return True


class Records(SourceStrategy):
    """Records through the (fused) chain and the converters inline; a record that raises is redone
    by the reference, which reports it. ``plain`` adds the short path of :class:`PlainRecords`."""

    name = "records"
    plain = False

    def __init__(self, setup: TaskSetup, commit_record: bool, reference: ReferenceRecords) -> None:
        self.setup = setup
        self.commit_record = commit_record
        self.reference = reference
        key_converter, value_converter = setup.key_converter, setup.value_converter
        # built-in converters ignore the headers argument, so records without headers need no
        # Headers object; other converters always get one (they may add to it, as in Kafka)
        self.builtin = type(key_converter) in BUILTIN and type(value_converter) in BUILTIN
        self.key_null_fast = type(key_converter) in NULL_TO_NULL
        # StringConverter writes a str as its encoded bytes whatever the schema: inline that
        self.encoding = value_converter.encoding if type(value_converter) is StringConverter else None

    def send(self, records: Sequence[SourceRecord], out: SourceOutput) -> bool:
        """The hot loop: one ``produce`` per record, positional; per-record work only where needed."""
        setup = self.setup
        chain = setup.chain if setup.chain else None
        key_conv = setup.key_converter.from_connect_data
        value_conv = setup.value_converter.from_connect_data
        header_conv = setup.header_converter.from_connect_header
        builtin, key_null_fast, encoding = self.builtin, self.key_null_fast, self.encoding
        topics = out.topics
        batch = out.open_batch()
        commit_record = self.commit_record
        callback: Callback = batch.fail
        produce = out.produce
        plain = self.plain
        failed = _FAILED
        convert_slow = self.reference.convert
        for record in records:
            if plain and record.headers_if_any is None and record.key is None and record.key_schema is None:
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
            result: SourceRecord | None = None
            try:
                result = chain.apply(record) if chain is not None else record
                if result is None:
                    if commit_record:
                        out.commit_skipped(record)
                    continue
                topic = result.topic
                headers = result.headers_if_any  # None when the record never had headers
                if headers is None and not builtin:
                    headers = result.headers
                if key_null_fast and result.key is None and result.key_schema is None:
                    key = None
                else:
                    key = key_conv(topic, result.key_schema, result.key, headers)
                value = result.value
                if encoding is None or type(value) is not str:
                    value = value_conv(topic, result.value_schema, value, headers)
                else:
                    value = value.encode(encoding)
                kafka_headers: Any = ([(h.key, header_conv(topic, h.key, h.schema, h.value)) for h in headers]
                                      if headers is not None and len(headers) else None)
            except Exception:  # redone step by step below, outside this handler
                topic = ""
            if not topic or result is None:
                converted = convert_slow(record)
                if converted is None:
                    if commit_record:
                        out.commit_skipped(record)
                    continue
                result, key, value, kafka_headers = converted
                topic = result.topic
            if topic not in topics:
                out.new_topic(topic)
            partition = result.kafka_partition
            if commit_record:
                callback = out.record_callback(batch, record)
                batch.pending += 1
            kafka_partition = -1 if partition is None else partition
            try:
                # positional: topic, value, key, partition, on_delivery, callback, timestamp, headers
                produce(topic, value, key, kafka_partition, callback, None, result.timestamp or 0, kafka_headers)
            except BufferError:
                if not out.produce_when_room((topic, value, key, kafka_partition, callback, None,
                                              result.timestamp or 0, kafka_headers)):
                    if commit_record:
                        batch.pending -= 1
                    return True
        batch.offsets = last_offsets(records)
        batch.sealed = True
        return True


class PlainRecords(Records):
    """:class:`Records` with a short path for records without key or headers (most records of most
    sources): their value converted inline and produced, nothing else looked at. Only without SMTs
    or ``commit_record`` and with built-in converters."""

    name = "plain_records"
    plain = True


class ValueColumns(SourceStrategy):
    """A :class:`SourceRecordBatch` produced from its value column; declines when a value does not convert."""

    name = "value_columns"

    def __init__(self, setup: TaskSetup) -> None:
        self.setup = setup
        value_converter = setup.value_converter
        self.encoding = value_converter.encoding if type(value_converter) is StringConverter else None
        self.json = value_converter if type(value_converter) is JsonConverter else None

    def send(self, records: Sequence[SourceRecord], out: SourceOutput) -> bool:
        assert type(records) is SourceRecordBatch
        topic, schema = records.topic, records.value_schema
        encoding = self.encoding
        conv = self.setup.value_converter.from_connect_data
        try:
            if encoding is not None:
                values = [v.encode(encoding) if type(v) is str else conv(topic, schema, v, None)
                          for v in records.values]
            elif self.json is not None:  # the schema's writer looked up once per batch
                values = self.json.from_connect_values(topic, schema, records.values)
            else:
                values = [conv(topic, schema, v, None) for v in records.values]
        except Exception:
            return False
        if topic not in out.topics:
            out.new_topic(topic)
        batch = out.open_batch()
        produce, callback = out.produce, batch.fail
        partition = -1 if records.kafka_partition is None else records.kafka_partition
        timestamp = records.timestamp or 0
        for value in values:
            try:
                produce(topic, value, None, partition, callback, None, timestamp, None)
            except BufferError:
                if not out.produce_when_room((topic, value, None, partition, callback, None, timestamp, None)):
                    return True
        source_partition = records.source_partition
        if source_partition is not None and len(records):
            batch.offsets = {partition_key(source_partition): (source_partition, records.last_source_offset)}
        batch.sealed = True
        return True


class BytesPassThrough(SourceStrategy):
    """A :class:`BytesRecordBatch` produced straight from its columns (keys, values, headers as read).

    With ``commit_records`` the delivery reports go to one bound method per batch that fills the
    offsets in order (a partition's reports come in produce order).
    """

    name = "bytes_passthrough"

    def send(self, records: Sequence[SourceRecord], out: SourceOutput) -> bool:
        assert type(records) is BytesRecordBatch
        topic, partition = records.topic, records.kafka_partition
        if topic not in out.topics:
            out.new_topic(topic)
        batch = out.open_batch()
        commit = out.commit_records
        acks = BatchAcks(batch, records, commit) if commit is not None else None
        callback = batch.fail if acks is None else acks.ack
        produce = out.produce
        columns: Any = zip(records.keys, records.values, records.headers, records.timestamps, strict=True)
        for key, value, headers, timestamp in columns:
            if acks is not None:
                batch.pending += 1
            try:
                produce(topic, value, key, partition, callback, None, timestamp or 0, headers or None)
            except BufferError:
                if not out.produce_when_room((topic, value, key, partition, callback, None, timestamp or 0,
                                              headers or None)):
                    if acks is not None:
                        batch.pending -= 1
                    return True
        source_partition = records.source_partition
        if source_partition is not None and len(records):
            batch.offsets = {partition_key(source_partition): (source_partition, records.last_source_offset)}
        batch.sealed = True
        if acks is not None:
            acks.check_done()  # every report may have been served while waiting for room
        return True


class SourcePlan:
    """The strategies of one source task, chosen once from its setup and its declared capabilities.

    ``commit_record``: the task overrides ``SourceTask.commit_record`` (or ``commit_records``)
    and needs per-record metadata; ``commit_records``: it overrides ``commit_records`` (once per
    :class:`BytesRecordBatch`).
    """

    def __init__(self, setup: TaskSetup, *, commit_record: bool, commit_records: bool) -> None:
        key_converter, value_converter = setup.key_converter, setup.value_converter
        no_chain = not setup.chain
        self.reference = ReferenceRecords(setup, commit_record)
        plain = (no_chain and not commit_record and type(key_converter) in NULL_TO_NULL
                 and type(key_converter) in BUILTIN and type(value_converter) in BUILTIN)
        self.records: Records = (PlainRecords if plain else Records)(setup, commit_record, self.reference)
        self.by_type: dict[type, SourceStrategy] = {}
        if no_chain and not commit_record and type(key_converter) in NULL_TO_NULL and type(value_converter) in BUILTIN:
            self.by_type[SourceRecordBatch] = ValueColumns(setup)
        if (no_chain and type(key_converter) is ByteArrayConverter and type(value_converter) is ByteArrayConverter
                and type(setup.header_converter) is ByteArrayConverter and (commit_records or not commit_record)):
            self.by_type[BytesRecordBatch] = BytesPassThrough()

    def send(self, records: Sequence[SourceRecord], out: SourceOutput) -> SourceStrategy:
        """Send one poll's records; the strategy that sent them."""
        strategy = self.by_type.get(type(records), self.records)
        if strategy.send(records, out):
            return strategy
        self.records.send(records, out)
        return self.records

    def strategies(self) -> list[SourceStrategy]:
        """Every strategy this plan may use, the reference last."""
        return [*self.by_type.values(), self.records, self.reference]
