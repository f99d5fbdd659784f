"""Connect records to Arrow columns: the schema is derived once per Connect schema, the data per batch.

Column rules (what a Spark reader sees):

==================================  ==========================================================
Connect                             Arrow / Spark
==================================  ==========================================================
STRUCT value                        one column per field, in schema order (nested STRUCT ->
                                    struct, ARRAY -> array, MAP -> map)
any other value schema              one column ``value``
INT8/16/32/64, FLOAT32/64, BOOLEAN  int8/16/32/64 (byte/short/int/long), float/double, boolean
STRING, BYTES                       string, binary
Decimal (scale s)                   decimal128(p, s), p = ``connect.decimal.precision`` or 38
Date, Timestamp                     date32 (date), timestamp[ms, UTC] (timestamp)
Time                                int32: milliseconds since midnight (Spark has no TIME in Arrow)
schemaless value (no schema)        one column ``value``: the value's JSON text (sorted keys,
                                    compact, bytes as base64), e.g. ``{"a":1,"b":[true]}``
==================================  ==========================================================

A field whose value is null takes the field's default when it has one (Connect's
``Struct.get``). With ``include.kafka.metadata=true`` five columns follow: ``kafka_topic``
(string), ``kafka_partition`` (int), ``kafka_offset`` (long), ``kafka_timestamp`` (timestamp)
and ``kafka_key`` (string: a string key as is, bytes as base64, anything else as JSON text).
They carry the record's *consumed* coordinates (before SMTs), the ones offsets refer to.

Per batch the rows are transposed with ``zip(*rows)`` (C speed) and each column goes to
``pyarrow.array`` with its explicit type: no Python loop over fields per record, except for
nested values that need reshaping (structs to tuples, Time to ints).
"""

from __future__ import annotations

import base64
import datetime
import functools
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from seaway.connect.api import DataError, Schema, SchemaType, SinkRecord, Struct
from seaway.connect.api.data.schema import (
    DATE_LOGICAL_NAME,
    DECIMAL_LOGICAL_NAME,
    TIME_LOGICAL_NAME,
    TIMESTAMP_LOGICAL_NAME,
)

__all__ = [
    "METADATA_COLUMNS",
    "ValueColumns",
    "metadata_arrays",
    "metadata_fields",
    "project_struct",
    "to_arrow_type",
    "value_columns",
]

METADATA_COLUMNS = ("kafka_topic", "kafka_partition", "kafka_offset", "kafka_timestamp", "kafka_key")
Convert = Callable[[Any], Any]
_PRIMITIVES: dict[SchemaType, pa.DataType] = {
    SchemaType.INT8: pa.int8(), SchemaType.INT16: pa.int16(), SchemaType.INT32: pa.int32(),
    SchemaType.INT64: pa.int64(), SchemaType.FLOAT32: pa.float32(), SchemaType.FLOAT64: pa.float64(),
    SchemaType.BOOLEAN: pa.bool_(), SchemaType.STRING: pa.string(), SchemaType.BYTES: pa.binary(),
}
_TIMESTAMP = pa.timestamp("ms", tz="UTC")


def _struct_values(value: Struct) -> list[Any]:
    # the Struct's values in schema order, not copied: a get() per field per record is what
    # this module exists to avoid
    return value.values_in_place()


def to_arrow_type(schema: Schema) -> pa.DataType:
    """The Arrow type of a Connect schema (see the module table)."""
    name = schema.name
    if name == DECIMAL_LOGICAL_NAME:
        params = schema.parameters or {}
        precision = min(int(params.get("connect.decimal.precision", "38")), 38)
        return pa.decimal128(precision, int(params.get("scale", "0")))
    if name == DATE_LOGICAL_NAME:
        return pa.date32()
    if name == TIMESTAMP_LOGICAL_NAME:
        return _TIMESTAMP
    if name == TIME_LOGICAL_NAME:
        return pa.int32()
    kind = schema.type
    if kind in _PRIMITIVES:
        return _PRIMITIVES[kind]
    if kind is SchemaType.ARRAY:
        assert schema.value_schema is not None
        return pa.list_(to_arrow_type(schema.value_schema))
    if kind is SchemaType.MAP:
        assert schema.key_schema is not None and schema.value_schema is not None
        return pa.map_(to_arrow_type(schema.key_schema), to_arrow_type(schema.value_schema))
    return pa.struct([pa.field(f.name, to_arrow_type(f.schema)) for f in schema.fields])


def _converter(schema: Schema) -> Convert | None:
    """How to reshape one non-null value for ``pyarrow.array``; ``None`` when it takes it as is."""
    if schema.name == TIME_LOGICAL_NAME:
        return lambda t: ((t.hour * 60 + t.minute) * 60 + t.second) * 1000 + t.microsecond // 1000
    kind = schema.type
    if kind is SchemaType.ARRAY:
        assert schema.value_schema is not None
        inner = _converter(schema.value_schema)
        if inner is None:
            return None
        return lambda xs: [None if x is None else inner(x) for x in xs]
    if kind is SchemaType.MAP:
        assert schema.key_schema is not None and schema.value_schema is not None
        key, val = _converter(schema.key_schema), _converter(schema.value_schema)
        if key is None and val is None:
            return lambda m: list(m.items())
        k = key or (lambda x: x)
        v = val or (lambda x: x)
        return lambda m: [(k(a), None if b is None else v(b)) for a, b in m.items()]
    if kind is SchemaType.STRUCT:
        fields = [(_converter(f.schema), f.schema.default_value) for f in schema.fields]

        def struct(s: Struct) -> tuple[Any, ...]:
            out = []
            for (conv, default), x in zip(fields, _struct_values(s), strict=True):
                if x is None:
                    x = default
                out.append(x if x is None or conv is None else conv(x))
            return tuple(out)
        return struct
    return None


def _column(values: Sequence[Any], arrow_type: pa.DataType, conv: Convert | None, default: Any) -> pa.Array:
    if default is not None:
        values = [default if x is None else x for x in values]
    if conv is not None:
        values = [None if x is None else conv(x) for x in values]
    return pa.array(values, type=arrow_type)


def _json_default(value: Any) -> Any:
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    return str(value)


def json_text(value: Any) -> str:
    """The schemaless rule: JSON text with sorted keys and no spaces, bytes as base64."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=_json_default, ensure_ascii=False)


@dataclass(frozen=True)
class ValueColumns:
    """The value columns of one Connect value schema (``None``: schemaless)."""

    schema: Schema | None
    fields: tuple[pa.Field, ...]
    build: Callable[[Sequence[Any]], list[pa.Array]]
    #: STRUCT schemas only: the arrays of values given as one list per field (each Struct's values,
    #: as :meth:`SinkRecordBatch.record_value_columns` gives them); what ``build`` makes of their Structs
    build_columns: Callable[[Sequence[Sequence[Any]]], list[pa.Array]] | None = None


@functools.lru_cache(maxsize=256)
def value_columns(schema: Schema | None) -> ValueColumns:
    """Arrow fields and a batch builder for values of ``schema`` (cached: schemas are hashable)."""
    if schema is None:
        def schemaless(values: Sequence[Any]) -> list[pa.Array]:
            return [pa.array([None if v is None else json_text(v) for v in values], type=pa.string())]
        return ValueColumns(None, (pa.field("value", pa.string()),), schemaless)
    if schema.type is not SchemaType.STRUCT:
        arrow_type, conv = to_arrow_type(schema), _converter(schema)

        def single(values: Sequence[Any]) -> list[pa.Array]:
            return [_column(values, arrow_type, conv, schema.default_value)]
        return ValueColumns(schema, (pa.field("value", arrow_type),), single)
    plan = [(to_arrow_type(f.schema), _converter(f.schema), f.schema.default_value) for f in schema.fields]
    fields = tuple(pa.field(f.name, t) for f, (t, _, _) in zip(schema.fields, plan, strict=True))
    nulls = [None] * len(plan)

    def structs(values: Sequence[Any]) -> list[pa.Array]:
        rows = [nulls if v is None else _struct_values(v) for v in values]
        if not rows:
            return [pa.array([], type=t) for t, _, _ in plan]
        columns = zip(*rows, strict=True)
        return [_column(col, t, conv, default) for col, (t, conv, default) in zip(columns, plan, strict=True)]

    def from_columns(columns: Sequence[Sequence[Any]]) -> list[pa.Array]:
        return [_column(col, t, conv, default) for col, (t, conv, default) in zip(columns, plan, strict=True)]
    return ValueColumns(schema, fields, structs, from_columns)


def metadata_fields() -> list[pa.Field]:
    return [pa.field("kafka_topic", pa.string()), pa.field("kafka_partition", pa.int32()),
            pa.field("kafka_offset", pa.int64()), pa.field("kafka_timestamp", _TIMESTAMP),
            pa.field("kafka_key", pa.string())]


def _key_text(key: Any) -> str | None:
    if key is None or isinstance(key, str):
        return key
    if isinstance(key, (bytes, bytearray)):
        return base64.b64encode(key).decode("ascii")
    if isinstance(key, Struct):
        key = {f.name: key.get(f.name) for f in key.schema.fields}
    return json_text(key)


def metadata_arrays(records: Sequence[SinkRecord]) -> list[pa.Array]:
    """The five ``kafka_*`` columns of a batch (consumed coordinates, before SMTs)."""
    return [
        pa.array([r.original_topic for r in records], type=pa.string()),
        pa.array([r.original_kafka_partition for r in records], type=pa.int32()),
        pa.array([r.original_kafka_offset for r in records], type=pa.int64()),
        pa.array([r.timestamp for r in records], type=pa.int64()).cast(_TIMESTAMP),
        pa.array([_key_text(r.key) for r in records], type=pa.string()),
    ]


def _coerce(value: Any, target: Schema) -> Any:
    if value is None:
        return target.default_value
    if isinstance(value, Struct) and target.type is SchemaType.STRUCT:
        return project_struct(value, target)
    if target.type in (SchemaType.FLOAT32, SchemaType.FLOAT64) and isinstance(value, int) \
            and not isinstance(value, bool):
        return float(value)
    return value


def project_struct(value: Struct, target: Schema) -> Struct:
    """Connect's ``SchemaProjector`` for structs: fields by name, missing ones from the target's default.

    Raises :class:`DataError` when a required target field has neither a value nor a default.
    """
    out = Struct(target)
    source = value.schema
    for f in target.fields:
        src = source.field(f.name)
        projected = _coerce(value.get(src) if src is not None else None, f.schema)
        if projected is None and not f.schema.optional:
            raise DataError(f"Cannot project {source!r} to {target!r}: field {f.name!r} is required "
                            "and has no value or default")
        out.put(f, projected)
    return out
