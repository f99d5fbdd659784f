"""Record batches: many records held as columns, for tasks that work per batch.

Kafka Connect hands records around one object each. In CPython building that object is a
large share of a simple pipeline's cost (a ``SourceRecord`` or ``SinkRecord`` costs about as
much as librdkafka's ``produce()`` of the same record), so Seaway lets both ends of the data
path skip it when nothing needs the objects:

- A :class:`~seaway.connect.api.SourceTask` may return a :class:`SourceRecordBatch` from
  ``poll()``: records that share topic, source partition, value schema and timestamp, given as
  a list of values and a sequence of source offsets. When the connector has no SMTs and
  built-in converters, the runtime produces straight from ``values``; otherwise it iterates
  the batch and gets ordinary ``SourceRecord`` objects.
- ``SinkTask.put`` may receive a :class:`SinkRecordBatch`. It is a ``Sequence[SinkRecord]``
  like any other argument of ``put`` (iterate it and the records are built on first access),
  and it also offers :meth:`SinkRecordBatch.record_values` and :meth:`SinkRecordBatch.record_keys`, the
  converted values and keys as lists, for a task that needs nothing else. With JsonConverter
  (schemas on) and no SMTs, :meth:`SinkRecordBatch.record_value_columns` may even give the values as
  one list per field of their STRUCT schema (no Struct built), and
  :meth:`SinkRecordBatch.record_positions` each record's topic, partition and offset.

Both are ordinary sequences of records to any code that does not know them, so a task or SMT
written for plain lists works unchanged. Not thread-safe: a batch belongs to the task thread.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, TypeVar, overload

from seaway.connect.api.data.schema import Schema
from seaway.connect.api.data.struct import Struct
from seaway.connect.api.headers import Header, Headers
from seaway.connect.api.records import SinkRecord, SourceRecord

__all__ = ["BytesRecordBatch", "SinkRecordBatch", "SourceRecordBatch"]

_R = TypeVar("_R", SourceRecord, SinkRecord)


class _RecordColumns(Sequence[_R]):
    """Element access through :meth:`records`, which builds the record objects once."""

    __slots__ = ()

    @abc.abstractmethod
    def records(self) -> list[_R]:
        """The batch as record objects (built once, on first use)."""

    @overload
    def __getitem__(self, index: int) -> _R: ...
    @overload
    def __getitem__(self, index: slice) -> list[_R]: ...

    def __getitem__(self, index: int | slice) -> _R | list[_R]:
        return self.records()[index]

    def __iter__(self) -> Iterator[_R]:
        return iter(self.records())


class SourceRecordBatch(_RecordColumns[SourceRecord]):
    """Records from one source partition that differ only in value and source offset.

    ``values[i]`` and ``source_offsets[i]`` are record *i*'s value and source offset (the
    position after it, as for :class:`SourceRecord`); every record has no key and no headers,
    and shares ``topic``, ``kafka_partition``, ``value_schema``, ``source_partition`` and
    ``timestamp``. ``source_offsets`` may be any sequence, e.g. one computing each offset on
    access: the runtime only reads the last one unless something asks for the records.
    """

    __slots__ = ("_records", "kafka_partition", "source_offsets", "source_partition", "timestamp", "topic",
                 "value_schema", "values")

    def __init__(self, topic: str, values: list[Any], *, value_schema: Schema | None = None,
                 source_partition: Mapping[str, Any] | None = None,
                 source_offsets: Sequence[Mapping[str, Any] | None] | None = None,
                 kafka_partition: int | None = None, timestamp: int | None = None) -> None:
        if source_offsets is not None and len(source_offsets) != len(values):
            raise ValueError(f"{len(source_offsets)} source offsets for {len(values)} values")
        self.topic = topic
        self.values = values
        self.value_schema = value_schema
        self.source_partition = source_partition
        self.source_offsets = source_offsets
        self.kafka_partition = kafka_partition
        self.timestamp = timestamp
        self._records: list[SourceRecord] | None = None

    @property
    def last_source_offset(self) -> Mapping[str, Any] | None:
        """The source offset after the batch's last record (None for an empty batch or no offsets)."""
        offsets = self.source_offsets
        return offsets[-1] if offsets is not None and len(offsets) else None

    def records(self) -> list[SourceRecord]:
        """The batch as ``SourceRecord`` objects (built once, on first use)."""
        records = self._records
        if records is None:
            partition, topic, schema, timestamp = self.source_partition, self.topic, self.value_schema, self.timestamp
            offsets = self.source_offsets if self.source_offsets is not None else [None] * len(self.values)
            make = SourceRecord.keyless
            records = [make(partition, offset, topic, schema, value, timestamp)
                       for value, offset in zip(self.values, offsets, strict=True)]
            if self.kafka_partition is not None:
                for record in records:
                    record.kafka_partition = self.kafka_partition
            self._records = records
        return records

    def __len__(self) -> int:
        return len(self.values)

    def __repr__(self) -> str:
        return (f"SourceRecordBatch(topic={self.topic!r}, records={len(self)}, "
                f"source_partition={self.source_partition!r}, last_source_offset={self.last_source_offset!r})")


class SinkRecordBatch(_RecordColumns[SinkRecord]):
    """Consumed records as the runtime hands them to ``SinkTask.put``: columns first, objects on demand.

    :meth:`record_values` and :meth:`record_keys` are the converted values and keys (what ``record.value``
    and ``record.key`` would be), in order; the records themselves are built when an element
    is first accessed. Build one from records with :meth:`of` (e.g. in a task's tests).

    ``value_columns`` (schema, one list per field): the values are Structs of that STRUCT
    schema, given field by field (``values`` may then be ``None``: the Structs are built on
    first use). ``positions`` (topics, partitions, offsets): each record's coordinates.
    """

    __slots__ = ("_build", "_columns", "_keys", "_positions", "_records", "_values")

    def __init__(self, values: list[Any] | None, keys: list[Any], build: Callable[[], list[SinkRecord]], *,
                 value_columns: tuple[Schema, list[list[Any]]] | None = None,
                 positions: tuple[list[str], list[int], list[int]] | None = None) -> None:
        if values is None and value_columns is None:
            raise ValueError("values or value_columns are needed")
        count = len(values) if values is not None else len(value_columns[1][0]) if value_columns else 0
        if count != len(keys):
            raise ValueError(f"{len(keys)} keys for {count} values")
        if value_columns is not None and any(len(column) != count for column in value_columns[1]):
            raise ValueError(f"value columns must have {count} values each")
        if positions is not None and any(len(column) != count for column in positions):
            raise ValueError(f"positions must have {count} entries each")
        self._values = values
        self._keys = keys
        self._columns = value_columns
        self._positions = positions
        self._build: Callable[[], list[SinkRecord]] | None = build
        self._records: list[SinkRecord] | None = None

    @classmethod
    def of(cls, records: Sequence[SinkRecord]) -> SinkRecordBatch:
        """A batch of existing records."""
        listed = list(records)
        return cls([r.value for r in listed], [r.key for r in listed], lambda: listed)

    def record_values(self) -> list[Any]:
        """Each record's value, in order (do not modify the list)."""
        values = self._values
        if values is None:
            assert self._columns is not None
            schema, columns = self._columns
            make = Struct.from_valid_values
            values = self._values = [make(schema, list(row)) for row in zip(*columns, strict=True)]
        return values

    def record_keys(self) -> list[Any]:
        """Each record's key, in order (do not modify the list)."""
        return self._keys

    def record_value_columns(self) -> tuple[Schema, list[list[Any]]] | None:
        """(the values' STRUCT schema, one list per field), or ``None`` when the runtime has no such columns.

        Field ``i``'s list holds what each value's Struct holds in field ``i`` (as its ``_values``:
        a null field stays null; ``Struct.get`` would give the field's default). Do not modify the lists.
        """
        return self._columns

    def record_positions(self) -> tuple[list[str], list[int], list[int]]:
        """Each record's original topic, partition and offset, as three lists (do not modify them)."""
        positions = self._positions
        if positions is None:
            records = self.records()
            positions = self._positions = ([r.original_topic for r in records],
                                           [r.original_kafka_partition or 0 for r in records],
                                           [r.original_kafka_offset for r in records])
        return positions

    def records(self) -> list[SinkRecord]:
        """The batch as ``SinkRecord`` objects (built once, on first use)."""
        records = self._records
        if records is None:
            assert self._build is not None
            records = self._records = self._build()
            self._build = None
        return records

    def __len__(self) -> int:
        return len(self._keys)

    def __repr__(self) -> str:
        return f"SinkRecordBatch(records={len(self)})"


class BytesRecordBatch(_RecordColumns[SourceRecord]):
    """Records of one source partition bound for one topic partition, their keys, values and headers bytes.

    What a source copying Kafka records produces (the mirror connector): per record a key, a
    value, headers as ``(name, value)`` pairs and a timestamp, each as it was read. With
    ByteArrayConverter for keys, values and headers and no SMTs the runtime produces straight
    from these columns, and a task overriding ``SourceTask.commit_records`` learns, per batch,
    the offset each record got; otherwise the batch is iterated as ``SourceRecord`` s (schemas
    OPTIONAL_BYTES; a None timestamp means "now").
    """

    __slots__ = ("_records", "headers", "kafka_partition", "keys", "source_offsets", "source_partition",
                 "timestamps", "topic", "values")

    def __init__(self, topic: str, kafka_partition: int, keys: list[bytes | None], values: list[bytes | None],
                 headers: list[list[tuple[str, bytes | None]] | None], timestamps: list[int | None],
                 source_partition: Mapping[str, Any] | None, source_offsets: Sequence[Mapping[str, Any] | None]
                 ) -> None:
        count = len(values)
        if not len(keys) == len(headers) == len(timestamps) == len(source_offsets) == count:
            raise ValueError("keys, values, headers, timestamps and source_offsets must have one entry per record")
        self.topic = topic
        self.kafka_partition = kafka_partition
        self.keys = keys
        self.values = values
        self.headers = headers
        self.timestamps = timestamps
        self.source_partition = source_partition
        self.source_offsets = source_offsets
        self._records: list[SourceRecord] | None = None

    @property
    def last_source_offset(self) -> Mapping[str, Any] | None:
        return self.source_offsets[-1] if len(self.source_offsets) else None

    def records(self) -> list[SourceRecord]:
        """The batch as ``SourceRecord`` objects (built once, on first use)."""
        records = self._records
        if records is None:
            schema = Schema.OPTIONAL_BYTES_SCHEMA
            records = self._records = [
                SourceRecord(self.source_partition, offset, self.topic, self.kafka_partition, schema, key, schema,
                             value, timestamp,
                             None if not headers else Headers([Header(k, schema, v) for k, v in headers]))
                for key, value, headers, timestamp, offset in zip(self.keys, self.values, self.headers,
                                                                   self.timestamps, self.source_offsets, strict=True)]
        return records

    def __len__(self) -> int:
        return len(self.values)

    def __repr__(self) -> str:
        return (f"BytesRecordBatch(topic={self.topic!r}, kafka_partition={self.kafka_partition}, records={len(self)}, "
                f"source_partition={self.source_partition!r}, last_source_offset={self.last_source_offset!r})")
