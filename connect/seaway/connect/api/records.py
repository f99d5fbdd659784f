"""Records in Connect: :class:`SourceRecord` (task -> Kafka) and :class:`SinkRecord` (Kafka -> task).

A record carries Kafka coordinates (topic, partition, timestamp), a key and a value each with
an optional :class:`~seaway.connect.api.data.Schema`, and :class:`~seaway.connect.api.headers.Headers`.
Treat records as immutable: SMTs derive changed copies with :meth:`ConnectRecord.new_record`,
which, like Kafka's ``newRecord``, keeps everything not named (headers are duplicated,
copy-on-write); :meth:`ConnectRecord.with_value` and :meth:`ConnectRecord.with_key` are its
positional shortcuts for the copies SMTs make per record.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Self

from seaway.connect.api.data.schema import Schema
from seaway.connect.api.headers import Header, Headers

__all__ = [
    "ConnectRecord",
    "OffsetAndMetadata",
    "RecordMetadata",
    "SinkRecord",
    "SourceRecord",
    "TimestampType",
    "TopicPartition",
]

# The fast constructors the runtime builds records with, per message, are
# :meth:`SourceRecord.keyless` and :meth:`SinkRecord.consumed`.


@dataclass(frozen=True, slots=True, order=True)
class TopicPartition:
    """A Kafka topic partition."""

    topic: str
    partition: int

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}"


@dataclass(frozen=True, slots=True)
class OffsetAndMetadata:
    """A consumer offset to commit: the offset of the *next* record to read, plus free-form metadata."""

    offset: int
    metadata: str = ""


@dataclass(frozen=True, slots=True)
class RecordMetadata:
    """Where the producer wrote a source record (passed to ``SourceTask.commit_record``)."""

    topic: str
    partition: int
    offset: int
    timestamp: int | None = None


class TimestampType(enum.Enum):
    """Kafka's record timestamp types; the value is Kafka's display name."""

    NO_TIMESTAMP_TYPE = "NoTimestampType"
    CREATE_TIME = "CreateTime"
    LOG_APPEND_TIME = "LogAppendTime"


class _Keep(enum.Enum):
    KEEP = 0


KEEP = _Keep.KEEP
_new_object = object.__new__
HeadersLike = Headers | Iterable[Header] | None


def _headers(headers: HeadersLike) -> Headers | None:
    """``None`` stays ``None``: a record's Headers object is only built when someone asks for it."""
    if headers is None or isinstance(headers, Headers):
        return headers
    return Headers(headers)


class ConnectRecord:
    """Fields common to source and sink records (Kafka's ``ConnectRecord``).

    Speed: records are built per message, so constructors only assign slots, and
    :attr:`headers` is created on first access (a record that nobody gives headers has
    :attr:`headers_if_any` ``None``, which the runtime reads to skip header conversion).
    :meth:`new_record` duplicates headers copy-on-write.
    """

    __slots__ = ("_headers", "kafka_partition", "key", "key_schema", "timestamp", "topic", "value",
                 "value_schema")
    __hash__ = None  # type: ignore[assignment]  # holds mutable values

    def __init__(self, topic: str, kafka_partition: int | None = None,
                 key_schema: Schema | None = None, key: Any = None,
                 value_schema: Schema | None = None, value: Any = None,
                 timestamp: int | None = None, headers: HeadersLike = None) -> None:
        self.topic = topic
        self.kafka_partition = kafka_partition
        self.key_schema = key_schema
        self.key = key
        self.value_schema = value_schema
        self.value = value
        self.timestamp = timestamp
        self._headers = headers if headers is None or type(headers) is Headers else _headers(headers)

    @property
    def headers(self) -> Headers:
        """The record's headers (mutable; created empty on first access)."""
        headers = self._headers
        if headers is None:
            headers = self._headers = Headers()
        return headers

    @headers.setter
    def headers(self, headers: HeadersLike) -> None:
        self._headers = _headers(headers)

    @property
    def headers_if_any(self) -> Headers | None:
        """The record's headers, or ``None`` if it never had any (reading it creates nothing: the
        runtime skips header conversion for such records). Do not modify what it returns."""
        return self._headers

    def new_record(self, *, topic: str | _Keep = KEEP, kafka_partition: int | _Keep | None = KEEP,
                   key_schema: Schema | _Keep | None = KEEP, key: Any = KEEP,
                   value_schema: Schema | _Keep | None = KEEP, value: Any = KEEP,
                   timestamp: int | _Keep | None = KEEP, headers: HeadersLike | _Keep = KEEP) -> Self:
        """A copy of this record with the named fields replaced (Kafka's ``newRecord``).

        Fields of the subclass (source partition/offset, Kafka offset, original coordinates)
        are kept; headers are duplicated (copy-on-write) unless given.
        """
        if headers is KEEP:
            kept = self._headers
            # no headers (or none left) copy as None: the copy builds its own empty Headers if asked
            new_headers = None if kept is None else kept.duplicate_if_any()
        else:
            new_headers = _headers(headers)
        return self._copy(
            self.topic if topic is KEEP else topic,
            self.kafka_partition if kafka_partition is KEEP else kafka_partition,
            self.key_schema if key_schema is KEEP else key_schema,
            self.key if key is KEEP else key,
            self.value_schema if value_schema is KEEP else value_schema,
            self.value if value is KEEP else value,
            self.timestamp if timestamp is KEEP else timestamp,
            new_headers,
        )

    def with_value(self, value_schema: Schema | None, value: Any) -> Self:
        """``new_record(value_schema=..., value=...)``: the copy most SMTs make, without keyword handling."""
        kept = self._headers
        return self._copy(self.topic, self.kafka_partition, self.key_schema, self.key, value_schema, value,
                          self.timestamp, None if kept is None else kept.duplicate_if_any())

    def with_key(self, key_schema: Schema | None, key: Any) -> Self:
        """``new_record(key_schema=..., key=...)``, as :meth:`with_value`."""
        kept = self._headers
        return self._copy(self.topic, self.kafka_partition, key_schema, key, self.value_schema, self.value,
                          self.timestamp, None if kept is None else kept.duplicate_if_any())

    def _copy(self, topic: Any, kafka_partition: Any, key_schema: Any, key: Any, value_schema: Any,
              value: Any, timestamp: Any, headers: Headers | None) -> Self:
        return type(self)(topic, kafka_partition, key_schema, key, value_schema, value, timestamp, headers)

    def _fields(self) -> tuple[Any, ...]:
        return (self.topic, self.kafka_partition, self.key_schema, self.key, self.value_schema,
                self.value, self.timestamp, self.headers)

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if type(other) is not type(self):
            return NotImplemented
        assert isinstance(other, ConnectRecord)
        return self._fields() == other._fields()

    def _describe(self) -> str:
        return (f"topic={self.topic!r}, kafka_partition={self.kafka_partition}, key={self.key!r}, "
                f"key_schema={self.key_schema!r}, value={self.value!r}, value_schema={self.value_schema!r}, "
                f"timestamp={self.timestamp}, headers={self.headers!r}")

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._describe()})"


class SourceRecord(ConnectRecord):
    """A record produced by a :class:`SourceTask`, with where it came from in the source system.

    ``source_partition`` identifies a stream in the source (e.g. ``{"filename": "a.txt"}``),
    ``source_offset`` the position after this record (e.g. ``{"position": 1024}``). Both are
    JSON-compatible dicts: the runtime stores the latest offset per partition and gives it back
    through ``OffsetStorageReader`` after a restart.
    """

    __slots__ = ("source_offset", "source_partition")

    def __init__(self, source_partition: Mapping[str, Any] | None, source_offset: Mapping[str, Any] | None,
                 topic: str, kafka_partition: int | None = None,
                 key_schema: Schema | None = None, key: Any = None,
                 value_schema: Schema | None = None, value: Any = None,
                 timestamp: int | None = None, headers: HeadersLike = None) -> None:
        # the base fields are assigned here rather than through super().__init__: a source task
        # builds one record per line or row, and the extra call is a tenth of its cost
        self.source_partition = source_partition
        self.source_offset = source_offset
        self.topic = topic
        self.kafka_partition = kafka_partition
        self.key_schema = key_schema
        self.key = key
        self.value_schema = value_schema
        self.value = value
        self.timestamp = timestamp
        self._headers = headers if headers is None or type(headers) is Headers else _headers(headers)

    @staticmethod
    def keyless(source_partition: Mapping[str, Any] | None, source_offset: Mapping[str, Any] | None,
                topic: str, value_schema: Schema | None, value: Any, timestamp: int | None) -> SourceRecord:
        """``SourceRecord(source_partition, source_offset, topic, None, None, None, value_schema, value,
        timestamp)``: a record without key, Kafka partition or headers, as a line- or row-based source emits.

        The fast constructor (``SourceRecordBatch.records()`` builds one per row): at a million records a
        second the class call itself (type.__call__ -> __new__ -> __init__, which CPython 3.11 does not
        specialise) is a tenth of the budget. A static method is a plain function call that fills the
        slots directly, with exactly the values the constructor would store: the records are the same.
        """
        record: SourceRecord = _new_object(SourceRecord)
        record.source_partition = source_partition
        record.source_offset = source_offset
        record.topic = topic
        record.kafka_partition = None
        record.key_schema = None
        record.key = None
        record.value_schema = value_schema
        record.value = value
        record.timestamp = timestamp
        record._headers = None
        return record

    def _copy(self, topic: Any, kafka_partition: Any, key_schema: Any, key: Any, value_schema: Any,
              value: Any, timestamp: Any, headers: Headers | None) -> Self:
        if type(self) is not SourceRecord:  # a subclass may have its own __init__: go through it
            return type(self)(self.source_partition, self.source_offset, topic, kafka_partition,
                              key_schema, key, value_schema, value, timestamp, headers)
        copy: Self = _new_object(type(self))  # SMTs copy records per stage: skip __init__'s argument checks
        copy.source_partition = self.source_partition
        copy.source_offset = self.source_offset
        copy.topic = topic
        copy.kafka_partition = kafka_partition
        copy.key_schema = key_schema
        copy.key = key
        copy.value_schema = value_schema
        copy.value = value
        copy.timestamp = timestamp
        copy._headers = headers
        return copy

    def _fields(self) -> tuple[Any, ...]:
        return (*super()._fields(), self.source_partition, self.source_offset)

    def _describe(self) -> str:
        return (f"source_partition={self.source_partition!r}, source_offset={self.source_offset!r}, "
                + super()._describe())


class SinkRecord(ConnectRecord):
    """A record consumed from Kafka and handed to a :class:`SinkTask`.

    ``kafka_offset`` is the record's offset in ``topic``/``kafka_partition``. SMTs may rename the
    topic or change the partition; ``original_topic``, ``original_kafka_partition`` and
    ``original_kafka_offset`` always keep the consumed coordinates (KIP-793), which is what a
    sink must use when it reports offsets to commit.
    """

    __slots__ = ("_original_kafka_offset", "_original_kafka_partition", "_original_topic",
                 "kafka_offset", "timestamp_type")

    def __init__(self, topic: str, kafka_partition: int | None, key_schema: Schema | None, key: Any,
                 value_schema: Schema | None, value: Any, kafka_offset: int,
                 timestamp: int | None = None,
                 timestamp_type: TimestampType = TimestampType.NO_TIMESTAMP_TYPE,
                 headers: HeadersLike = None, original_topic: str | None = None,
                 original_kafka_partition: int | None = None,
                 original_kafka_offset: int | None = None) -> None:
        # assigned here, not through super().__init__, for the same reason as SourceRecord's
        self.topic = topic
        self.kafka_partition = kafka_partition
        self.key_schema = key_schema
        self.key = key
        self.value_schema = value_schema
        self.value = value
        self.timestamp = timestamp
        self._headers = headers if headers is None or type(headers) is Headers else _headers(headers)
        self.kafka_offset = kafka_offset
        self.timestamp_type = timestamp_type
        self._original_topic = original_topic
        self._original_kafka_partition = original_kafka_partition
        self._original_kafka_offset = original_kafka_offset

    @staticmethod
    def consumed(topic: str, kafka_partition: int | None, key_schema: Schema | None, key: Any,
                 value_schema: Schema | None, value: Any, kafka_offset: int, timestamp: int | None,
                 timestamp_type: TimestampType, headers: Headers | None) -> SinkRecord:
        """``SinkRecord(topic, ..., timestamp_type, headers)`` for a freshly consumed message: the
        fast constructor the sink runtime builds one record per message with (as :meth:`SourceRecord.keyless`).

        ``headers`` must be a :class:`Headers` or ``None``; the original coordinates are the
        record's own, as for a record built without ``original_*`` arguments.
        """
        record: SinkRecord = _new_object(SinkRecord)
        record.topic = topic
        record.kafka_partition = kafka_partition
        record.key_schema = key_schema
        record.key = key
        record.value_schema = value_schema
        record.value = value
        record.timestamp = timestamp
        record._headers = headers
        record.kafka_offset = kafka_offset
        record.timestamp_type = timestamp_type
        record._original_topic = None
        record._original_kafka_partition = None
        record._original_kafka_offset = None
        return record

    @property
    def original_topic(self) -> str:
        return self.topic if self._original_topic is None else self._original_topic

    @property
    def original_kafka_partition(self) -> int | None:
        original = self._original_kafka_partition
        return self.kafka_partition if original is None else original

    @property
    def original_kafka_offset(self) -> int:
        return self.kafka_offset if self._original_kafka_offset is None else self._original_kafka_offset

    def _copy(self, topic: Any, kafka_partition: Any, key_schema: Any, key: Any, value_schema: Any,
              value: Any, timestamp: Any, headers: Headers | None) -> Self:
        if type(self) is not SinkRecord:  # a subclass may have its own __init__: go through it
            return type(self)(topic, kafka_partition, key_schema, key, value_schema, value, self.kafka_offset,
                              timestamp, self.timestamp_type, headers, self.original_topic,
                              self.original_kafka_partition, self.original_kafka_offset)
        copy: Self = _new_object(type(self))  # as SourceRecord._copy
        copy.topic = topic
        copy.kafka_partition = kafka_partition
        copy.key_schema = key_schema
        copy.key = key
        copy.value_schema = value_schema
        copy.value = value
        copy.timestamp = timestamp
        copy._headers = headers
        copy.kafka_offset = self.kafka_offset
        copy.timestamp_type = self.timestamp_type
        copy._original_topic = self.topic if self._original_topic is None else self._original_topic
        original_partition = self._original_kafka_partition
        copy._original_kafka_partition = self.kafka_partition if original_partition is None else original_partition
        copy._original_kafka_offset = (self.kafka_offset if self._original_kafka_offset is None
                                       else self._original_kafka_offset)
        return copy

    def _fields(self) -> tuple[Any, ...]:
        return (*super()._fields(), self.kafka_offset, self.timestamp_type, self.original_topic,
                self.original_kafka_partition, self.original_kafka_offset)

    def _describe(self) -> str:
        return (f"kafka_offset={self.kafka_offset}, timestamp_type={self.timestamp_type.value}, "
                f"original_topic={self.original_topic!r}, original_kafka_partition="
                f"{self.original_kafka_partition}, original_kafka_offset={self.original_kafka_offset}, "
                + super()._describe())
