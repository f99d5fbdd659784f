"""Partitioners: which folder under the lake (or ``topics.dir``) a record's row goes to.

Every folder starts with the record's topic folder (``topic_dir``): by default the topic's name
(escaped as below), so each topic is a table of its own, as Confluent's HDFS and S3 sinks lay
them out (``spark.read.parquet(f"{lake}/orders")``). Then the partitioner's own folders
(Confluent's ``encodePartition``), e.g.:

==========  =======================================================  ==============================
partitioner folder (relative to ``lake.path``)                       Spark partition columns
==========  =======================================================  ==============================
default     ``orders/partition=3``                                   partition
field       ``orders/region=eu/tier=gold`` (partition.field.name)    region, tier
time        ``orders/year=2024/month=01/day=31/hour=23`` (path.format) year, month, ...
==========  =======================================================  ==============================

Values are escaped as Hive does (``%XX`` for ``/ = % : ?`` ... and control characters), which
Spark undoes when it reads; a null field value becomes ``__HIVE_DEFAULT_PARTITION__`` (read
back as null). ``hourly`` and ``daily`` are the time partitioner with a preset format.

The time partitioner floors the timestamp (from the Kafka record, a value field, or the wall
clock) to ``partition.duration.ms`` in local time of ``timezone`` and formats it with a Joda
subset: quoted literals, ``YYYY yyyy YY MM M MMM MMMM dd d HH H mm m ss s DDD EEE EEEE``.
Only Record and RecordField are deterministic (a replay lands rows in the same folders).
"""

from __future__ import annotations

import abc
import datetime
import re
import time
import zoneinfo
from collections.abc import Callable, Sequence
from typing import Any

from seaway.connect.api import ConfigError, DataError, SinkRecord, Struct
from seaway.connectors.lake.config import PATH_FORMAT, StorageConfig

__all__ = [
    "NULL_PARTITION",
    "DefaultPartitioner",
    "FieldPartitioner",
    "Partitioner",
    "TimeBasedPartitioner",
    "check_path_format",
    "escape_path_name",
    "make_partitioner",
    "topic_folder",
]

NULL_PARTITION = "__HIVE_DEFAULT_PARTITION__"
_HIVE_ESCAPE = set('"#%\'*/:=?\\\x7f{[]^')


def escape_path_name(value: str) -> str:
    """Hive's ``escapePathName``: what Spark's partition discovery unescapes."""
    if not any(c in _HIVE_ESCAPE or c < " " for c in value):
        return value
    return "".join(f"%{ord(c):02X}" if c in _HIVE_ESCAPE or c < " " else c for c in value)


def topic_folder(topic: str) -> str:
    """The topic's own folder (its name, escaped): one table per topic."""
    return escape_path_name(topic)


def _format_value(value: Any) -> str:
    if value is None:
        return NULL_PARTITION
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    text = str(value)
    return escape_path_name(text) if text else NULL_PARTITION


def field_value(value: Any, path: Sequence[str]) -> Any:
    """The value at a dotted path in a Struct or a (schemaless) dict; ``None`` when absent."""
    for name in path:
        if isinstance(value, Struct):
            if value.schema.field(name) is None:
                raise DataError(f"Field {'.'.join(path)!r} is not in the value schema {value.schema!r}")
            value = value.get(name)
        elif isinstance(value, dict):
            value = value.get(name)
        elif value is None:
            return None
        else:
            raise DataError(f"Cannot read field {'.'.join(path)!r} from a {type(value).__name__} value")
    return value


class Partitioner(abc.ABC):
    """Maps records to folders (relative to the lake, ``/``-separated, no leading slash).

    ``topic_dir`` names the first folder from the record's topic (after SMTs).
    """

    def __init__(self, topic_dir: Callable[[str], str] = topic_folder) -> None:
        self.topic_folder = topic_dir

    @abc.abstractmethod
    def encode(self, record: SinkRecord) -> str:
        """The folder of one record."""

    def encode_batch(self, records: Sequence[SinkRecord]) -> list[str]:
        """Folders of many records (overridden where one answer fits a whole batch)."""
        return [self.encode(r) for r in records]

    def record_time(self, record: SinkRecord) -> int | None:
        """The time ``rotate.interval.ms`` measures (Kafka's record timestamp unless time-based)."""
        return record.timestamp

    def partition_folder(self, topic: str, partition: int) -> str | None:
        """The folder of every record of ``topic``-``partition`` (no SMT renamed it), or ``None``
        when it depends on the record (then only ``encode`` can tell)."""
        return None


class DefaultPartitioner(Partitioner):
    """``<topic>/partition=<kafka partition>``."""

    def partition_folder(self, topic: str, partition: int) -> str | None:
        return f"{self.topic_folder(topic)}/partition={partition}"

    def encode(self, record: SinkRecord) -> str:
        return f"{self.topic_folder(record.topic)}/partition={record.kafka_partition}"

    def encode_batch(self, records: Sequence[SinkRecord]) -> list[str]:
        if not records:
            return []
        first = records[0]
        if all(r.topic == first.topic and r.kafka_partition == first.kafka_partition for r in records):
            return [self.encode(first)] * len(records)
        return super().encode_batch(records)


class FieldPartitioner(Partitioner):
    """``<topic>/<f1>=<v1>/<f2>=<v2>`` from value fields (dotted paths; the folder uses the last name)."""

    def __init__(self, fields: Sequence[str], topic_dir: Callable[[str], str] = topic_folder) -> None:
        super().__init__(topic_dir)
        self.paths = [tuple(f.split(".")) for f in fields]

    def encode(self, record: SinkRecord) -> str:
        parts = [self.topic_folder(record.topic)]
        parts.extend(f"{escape_path_name(path[-1])}={_format_value(field_value(record.value, path))}"
                     for path in self.paths)
        return "/".join(parts)


_TOKEN = re.compile(r"'(?:[^']|'')*'|([A-Za-z])\1*|[^A-Za-z']+")
_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
           "October", "November", "December"]
_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
Formatter = Callable[[datetime.datetime], str]


def _field(letter: str, width: int) -> Formatter | None:
    simple: dict[str, Callable[[datetime.datetime], int]] = {
        "d": lambda t: t.day, "H": lambda t: t.hour, "m": lambda t: t.minute, "s": lambda t: t.second,
        "D": lambda t: t.timetuple().tm_yday,
    }
    if letter in "Yy":
        if width == 2:
            return lambda t: f"{t.year % 100:02d}"
        return lambda t: f"{t.year:0{width}d}"
    if letter == "M":
        if width >= 4:
            return lambda t: _MONTHS[t.month - 1]
        if width == 3:
            return lambda t: _MONTHS[t.month - 1][:3]
        return lambda t: f"{t.month:0{width}d}"
    if letter == "E":
        return (lambda t: _DAYS[t.weekday()]) if width >= 4 else (lambda t: _DAYS[t.weekday()][:3])
    if letter in simple:
        get = simple[letter]
        return lambda t: f"{get(t):0{width}d}"
    return None


def _constant(text: str) -> Formatter:
    return lambda _: text


def compile_path_format(pattern: str, locale: str = "en") -> Formatter:
    """A Joda-style pattern (subset, see module doc) as a function of a local datetime."""
    parts: list[Formatter] = []
    pos = 0
    for m in _TOKEN.finditer(pattern):
        if m.start() != pos:
            raise ValueError(f"unbalanced quote at {pos}")
        pos = m.end()
        token = m.group(0)
        if token.startswith("'"):
            if len(token) < 2 or not token.endswith("'"):
                raise ValueError("unterminated quote")
            literal = token[1:-1].replace("''", "'") if token != "''" else "'"
            parts.append(_constant(literal))
        elif m.group(1):
            fmt = _field(token[0], len(token))
            if fmt is None:
                raise ValueError(f"unsupported pattern letter {token[0]!r}")
            if token[0] in "ME" and len(token) >= 3 and not locale.lower().startswith("en"):
                raise ValueError(f"text field {token!r} is only available in English locales")
            parts.append(fmt)
        else:
            parts.append(_constant(token))
    if pos != len(pattern):
        raise ValueError(f"unbalanced quote at {pos}")
    return lambda t: "".join(p(t) for p in parts)


def check_path_format(pattern: str, locale: str) -> str | None:
    """Why ``pattern`` is not a usable path.format, or ``None``."""
    try:
        compile_path_format(pattern, locale)
    except ValueError as e:
        return str(e)
    if pattern.startswith("/") or pattern.endswith("/"):
        return "must not start or end with '/'"
    return None


def _to_millis(value: Any, field_name: str) -> int:
    if isinstance(value, bool):
        raise DataError(f"timestamp.field {field_name!r} holds a boolean")
    if isinstance(value, int):
        return value
    if isinstance(value, datetime.datetime):
        aware = value if value.tzinfo else value.replace(tzinfo=datetime.UTC)
        return int(aware.timestamp() * 1000)
    if isinstance(value, datetime.date):
        return int(datetime.datetime(value.year, value.month, value.day, tzinfo=datetime.UTC).timestamp() * 1000)
    if isinstance(value, str):
        return _to_millis(datetime.datetime.fromisoformat(value), field_name)
    raise DataError(f"timestamp.field {field_name!r} holds {value!r}, not a timestamp")


class TimeBasedPartitioner(Partitioner):
    """``<topic>/<path.format of floor(time, partition.duration.ms) in timezone>``."""

    def __init__(self, path_format: str, duration_ms: int, extractor: str = "record",
                 timestamp_field: str = "timestamp", timezone: str = "UTC", locale: str = "en",
                 topic_dir: Callable[[str], str] = topic_folder) -> None:
        super().__init__(topic_dir)
        try:
            self._format = compile_path_format(path_format, locale)
        except ValueError as e:
            raise ConfigError.invalid(PATH_FORMAT, path_format, str(e)) from None
        self.duration_ms = duration_ms
        self.extractor = extractor.lower()
        self._field_path = tuple(timestamp_field.split("."))
        self._tz = zoneinfo.ZoneInfo(timezone)
        self._cache: dict[int, str] = {}

    def record_time(self, record: SinkRecord) -> int | None:
        if self.extractor == "wallclock":
            return int(time.time() * 1000)
        if self.extractor == "recordfield":
            value = field_value(record.value, self._field_path)
            if value is None:
                raise DataError(f"timestamp.field {'.'.join(self._field_path)!r} is null at "
                                f"{record.topic}-{record.kafka_partition}@{record.kafka_offset}")
            return _to_millis(value, ".".join(self._field_path))
        if record.timestamp is None:
            raise DataError(f"Record {record.topic}-{record.kafka_partition}@{record.kafka_offset} has no "
                            "timestamp; use timestamp.extractor=RecordField or Wallclock")
        return record.timestamp

    def folder_for_time(self, ts_ms: int) -> str:
        """The time part of the folder for an epoch-millis instant."""
        utc = datetime.datetime.fromtimestamp(ts_ms / 1000, datetime.UTC)
        offset = utc.astimezone(self._tz).utcoffset()
        offset_ms = int(offset.total_seconds() * 1000) if offset is not None else 0
        bucket = (ts_ms + offset_ms) // self.duration_ms * self.duration_ms
        cached = self._cache.get(bucket)
        if cached is None:
            local = datetime.datetime(1970, 1, 1) + datetime.timedelta(milliseconds=bucket)
            cached = self._cache[bucket] = self._format(local)
            if len(self._cache) > 4096:
                self._cache.clear()
        return cached

    def encode(self, record: SinkRecord) -> str:
        ts = self.record_time(record)
        assert ts is not None
        return f"{self.topic_folder(record.topic)}/{self.folder_for_time(ts)}"


def make_partitioner(config: StorageConfig, topic_dir: Callable[[str], str] = topic_folder) -> Partitioner:
    """The partitioner ``partitioner.class`` names."""
    if config.partitioner == "field":
        return FieldPartitioner(config.partition_fields, topic_dir)
    if config.partitioner == "time":
        return TimeBasedPartitioner(config.path_format, config.partition_duration_ms,
                                    config.timestamp_extractor, config.timestamp_field,
                                    config.timezone, config.locale, topic_dir)
    return DefaultPartitioner(topic_dir)
