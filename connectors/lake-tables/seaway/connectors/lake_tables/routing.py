"""Which tables a record goes to, as Apache Iceberg's Kafka Connect sink routes them.

* ``iceberg.tables`` without a route field: every record to every listed table.
* ``iceberg.tables`` + ``iceberg.tables.route-field``: to each table whose ``iceberg.table.<t>.route-regex``
  matches the field's value whole.
* ``iceberg.tables.dynamic-enabled`` + ``iceberg.tables.route-field``: to the table the value names,
  lower-cased. A record whose route value is null goes nowhere.

The route is computed per record into the lake sinks' *folder* (the partitioner's answer): the route
value itself, resolved into table names per file set, so the rotation machinery of the other lake sinks
carries it without knowing about tables.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from seaway.connect.api import DataError, SinkRecord, Struct
from seaway.connectors.lake import Partitioner
from seaway.connectors.lake_tables.iceberg_config import IcebergSinkConfig

__all__ = ["ALL_TABLES", "NO_ROUTE", "RoutePartitioner", "Router"]

#: the folder of a record that goes to every static table
ALL_TABLES = ""
#: the folder of a record whose route value is null (never a table name)
NO_ROUTE = "\x00"


def field_value(value: Any, path: Sequence[str]) -> Any:
    """The value at a dotted path in a Struct or a (schemaless) dict; ``None`` when absent (as the lake
    sinks' FieldPartitioner reads its field)."""
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


class RoutePartitioner(Partitioner):
    """Folder = the record's route value (or :data:`ALL_TABLES`)."""

    def __init__(self, config: IcebergSinkConfig) -> None:
        super().__init__()
        self.path = tuple(config.route_field.split(".")) if config.route_field else None

    def partition_folder(self, topic: str, partition: int) -> str | None:
        return ALL_TABLES if self.path is None else None

    def encode(self, record: SinkRecord) -> str:
        if self.path is None:
            return ALL_TABLES
        value = field_value(record.value, self.path) if record.value is not None else None
        return NO_ROUTE if value is None else str(value)

    def encode_batch(self, records: Sequence[SinkRecord]) -> list[str]:
        if self.path is None:
            return [ALL_TABLES] * len(records)
        return [self.encode(r) for r in records]


class Router:
    """Folder (route value) -> table names, cached per value."""

    def __init__(self, config: IcebergSinkConfig) -> None:
        self.config = config
        self._cache: dict[str, tuple[str, ...]] = {}

    def tables(self, folder: str) -> tuple[str, ...]:
        found = self._cache.get(folder)
        if found is None:
            found = self._cache[folder] = self._matching(folder)
            if len(self._cache) > 4096:
                self._cache.clear()
        return found

    def _matching(self, value: str) -> tuple[str, ...]:
        config = self.config
        if config.dynamic:
            return (value.lower(),) if value and value != NO_ROUTE else ()
        if config.route_field is None or value == ALL_TABLES:
            return config.tables
        return tuple(name for name in config.tables
                     if value != NO_ROUTE and (regex := config.table(name).route_regex) is not None
                     and regex.fullmatch(value))
