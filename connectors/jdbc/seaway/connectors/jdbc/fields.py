"""Which record parts become which columns (Confluent's ``FieldsMetadata``), per ``pk.mode``.

==============  ===============================================  =====================================
pk.mode         primary key columns                              other columns
==============  ===============================================  =====================================
none            none                                             the value's fields
kafka           ``__connect_topic``, ``__connect_partition``,    the value's fields
                ``__connect_offset`` (or the 3 ``pk.fields``)
record_key      a primitive key: the one ``pk.fields`` name;     the value's fields not in the key
                a STRUCT key: ``pk.fields`` or all its fields
record_value    ``pk.fields`` or all of the value's fields       the value's other fields
==============  ===============================================  =====================================

``fields.whitelist`` narrows the other columns. A :class:`FieldLayout` is made once per
(key schema, value schema) pair and turns a record into a row list (keys first): the Struct's
own copy of its values when every field is written in order, else one C-level
``itemgetter`` call over them, never a lookup per field.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

from seaway.connect.api import ConnectError, Schema, SchemaType, SinkRecord, Struct
from seaway.connectors.jdbc.config import KAFKA_PK_NAMES, SinkConfig

__all__ = ["FieldLayout", "layout_for"]

_KAFKA_SCHEMAS = (Schema.STRING_SCHEMA, Schema.INT32_SCHEMA, Schema.INT64_SCHEMA)


@dataclass(frozen=True)
class FieldLayout:
    """Primary key and other columns with their schemas, and how to read them from a record."""

    keys: tuple[tuple[str, Schema], ...]
    values: tuple[tuple[str, Schema], ...]
    key_of: Callable[[SinkRecord], list[Any]]
    values_of: Callable[[SinkRecord], list[Any]]

    @property
    def key_names(self) -> list[str]:
        return [name for name, _ in self.keys]

    @property
    def value_names(self) -> list[str]:
        return [name for name, _ in self.values]

    @property
    def columns(self) -> list[tuple[str, Schema]]:
        return [*self.keys, *self.values]


def _getter(indexes: Sequence[int], width: int) -> Callable[[list[Any]], list[Any]]:
    """``values`` (a fresh list per call) narrowed to ``indexes``; itself when that is all of them."""
    if list(indexes) == list(range(width)):
        return lambda values: values
    if not indexes:
        return lambda _values: []
    if len(indexes) == 1:
        (i,) = indexes
        return lambda values: [values[i]]
    get = itemgetter(*indexes)
    return lambda values: list(get(values))


def _struct_values(value: Any, what: str, record: SinkRecord) -> list[Any]:
    if not isinstance(value, Struct):
        raise ConnectError(f"Record at {record.topic}-{record.kafka_partition}@{record.kafka_offset}: the {what} "
                           f"must be a Struct with a schema, not {type(value).__name__}")
    return value.values()


def layout_for(cfg: SinkConfig, table: str, key_schema: Schema | None, value_schema: Schema | None) -> FieldLayout:
    """The layout for records with these schemas; :class:`ConnectError` when they cannot fit ``pk.mode``."""
    value_fields = list(value_schema.fields) if value_schema is not None and value_schema.type is SchemaType.STRUCT \
        else []
    if value_schema is not None and value_schema.type is not SchemaType.STRUCT:
        raise ConnectError(f"Table {table}: the JDBC sink needs STRUCT record values with a schema (e.g. "
                           f"JsonConverter with schemas.enable=true, or Avro), got {value_schema.type.name}")
    whitelist = set(cfg.fields_whitelist)
    mode = cfg.pk_mode
    keys: list[tuple[str, Schema]] = []
    key_of: Callable[[SinkRecord], list[Any]] = lambda _r: []  # noqa: E731
    key_names: set[str] = set()

    if mode == "kafka":
        names = cfg.pk_fields or KAFKA_PK_NAMES
        keys = list(zip(names, _KAFKA_SCHEMAS, strict=True))
        key_of = lambda r: [r.topic, r.kafka_partition, r.kafka_offset]  # noqa: E731
    elif mode == "record_key":
        if key_schema is None:
            raise ConnectError(f"Table {table}: pk.mode=record_key needs records with a key schema")
        if key_schema.type is SchemaType.STRUCT:
            fields = {f.name: f for f in key_schema.fields}
            chosen = list(cfg.pk_fields) or list(fields)
            missing = [n for n in chosen if n not in fields]
            if missing:
                raise ConnectError(f"Table {table}: pk.fields {missing} are not fields of the record key "
                                   f"({', '.join(fields)})")
            keys = [(n, fields[n].schema) for n in chosen]
            get = _getter([fields[n].index for n in chosen], len(fields))
            key_of = lambda r: get(_struct_values(r.key, "key", r))  # noqa: E731
        else:
            if len(cfg.pk_fields) != 1:
                raise ConnectError(f"Table {table}: need exactly one pk.fields name since the record key is a "
                                   f"primitive ({key_schema.type.name}), got {list(cfg.pk_fields)}")
            keys = [(cfg.pk_fields[0], key_schema)]
            key_of = lambda r: [r.key]  # noqa: E731
    elif mode == "record_value":
        fields = {f.name: f for f in value_fields}
        chosen = list(cfg.pk_fields) or list(fields)
        missing = [n for n in chosen if n not in fields]
        if missing:
            raise ConnectError(f"Table {table}: pk.fields {missing} are not fields of the record value "
                               f"({', '.join(fields)})")
        keys = [(n, fields[n].schema) for n in chosen]
        get = _getter([fields[n].index for n in chosen], len(fields))
        key_of = lambda r: get(_struct_values(r.value, "value", r))  # noqa: E731
    key_names = {n for n, _ in keys}

    chosen_values = [f for f in value_fields if f.name not in key_names and (not whitelist or f.name in whitelist)]
    values = [(f.name, f.schema) for f in chosen_values]
    get_values = _getter([f.index for f in chosen_values], len(value_fields))
    values_of = lambda r: get_values(_struct_values(r.value, "value", r))  # noqa: E731
    return FieldLayout(tuple(keys), tuple(values), key_of, values_of)
