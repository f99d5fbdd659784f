"""Avro values through the schema registry: Avro schema -> Spark columns, Confluent frames -> Arrow.

Types map as Spark's own ``from_avro`` (``SchemaConverters.toSqlType``) maps them:

===============================================  ===========================================
Avro                                             Spark
===============================================  ===========================================
boolean, int, long, float, double                boolean, int, bigint, float, double
string, enum, ``uuid``                           string
bytes, fixed                                     binary
``decimal`` (bytes or fixed)                     decimal(precision, scale)
``date``                                         date
``timestamp-millis`` / ``-micros``               timestamp
``local-timestamp-millis`` / ``-micros``         timestamp_ntz
``time-millis`` / ``time-micros``                int / bigint (ms / µs since midnight)
record, array, map                               struct, array, map<string, ...>
``[null, T]``                                    T, nullable
``[int, long]`` / ``[float, double]``            bigint / double
===============================================  ===========================================

Other unions (several non-null branches) and recursive records are refused with the field's
name: Spark's member0/member1 structs would need the branch each value took, which fastavro
does not report.

A record's fields become top-level columns (``valueColumnPrefix`` + name); any other schema
becomes one column ``valueData``. Each record is decoded with its own writer schema (the id
in its frame, fetched once per task) *resolved to the query's reader schema* (Avro's schema
resolution, fastavro): older and newer versions that the subject's compatibility lets a reader
of that schema read come out in the reader's shape; a record that cannot be resolved is an
error naming its topic, partition, offset and schema id. Decoded values go to Arrow with
``pyarrow.array(values, struct type)`` in one call per batch.
"""

from __future__ import annotations

import datetime
import io
import json
import uuid
from collections.abc import Callable
from typing import Any

import fastavro
import pyarrow as pa
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    MapType,
    StringType,
    StructField,
    StructType,
    TimestampNTZType,
    TimestampType,
)
from seaway.connectors.spark_source.errors import OptionError, ValueDecodeError

__all__ = ["AvroValues", "avro_to_spark", "parse_avro"]

Fixup = Callable[[Any], Any]


def parse_avro(text: str, what: str) -> Any:
    """``fastavro.parse_schema`` of a schema text; :class:`OptionError` naming ``what`` when it is not one."""
    try:
        return fastavro.parse_schema(json.loads(text))
    except (ValueError, TypeError, KeyError, fastavro.schema.SchemaParseException) as e:
        raise OptionError(f"{what} is not a valid Avro schema: {e}") from None


def _branches(schema: Any) -> list[Any]:
    return [b for b in schema if b != "null"]


def avro_to_spark(schema: Any, path: str, seen: frozenset[str] = frozenset()) -> tuple[DataType, bool]:
    """(Spark type, nullable) of a parsed Avro schema; ``path`` names the field in errors."""
    if isinstance(schema, list):
        branches = _branches(schema)
        nullable = len(branches) < len(schema)
        if len(branches) == 1:
            return avro_to_spark(branches[0], path, seen)[0], nullable
        kinds = sorted(b if isinstance(b, str) else b.get("type") for b in branches)
        if kinds == ["int", "long"]:
            return LongType(), nullable
        if kinds == ["double", "float"]:
            return DoubleType(), nullable
        raise OptionError(f"valueFormat=avro: field '{path}' is a union of {kinds}; only [null, T], [int, long] and "
                          "[float, double] unions can be columns (read the raw value column instead)")
    if isinstance(schema, str):
        schema = {"type": schema}
    kind = schema["type"]
    logical = schema.get("logicalType")
    if isinstance(kind, (list, dict)):
        return avro_to_spark(kind, path, seen)
    if logical == "decimal" and kind in ("bytes", "fixed"):
        return DecimalType(int(schema["precision"]), int(schema.get("scale", 0))), False
    if logical == "date" and kind == "int":
        return DateType(), False
    if logical in ("timestamp-millis", "timestamp-micros") and kind == "long":
        return TimestampType(), False
    if logical in ("local-timestamp-millis", "local-timestamp-micros") and kind == "long":
        return TimestampNTZType(), False
    simple: dict[str, DataType] = {"boolean": BooleanType(), "int": IntegerType(), "long": LongType(),
                                   "float": FloatType(), "double": DoubleType(), "string": StringType(),
                                   "bytes": BinaryType(), "fixed": BinaryType(), "enum": StringType()}
    if kind in simple:
        return simple[kind], False
    if kind == "array":
        item, item_null = avro_to_spark(schema["items"], f"{path}[]", seen)
        return ArrayType(item, item_null), False
    if kind == "map":
        value, value_null = avro_to_spark(schema["values"], f"{path}{{}}", seen)
        return MapType(StringType(), value, value_null), False
    if kind == "record":
        name = schema.get("name", "")
        if name in seen:
            raise OptionError(f"valueFormat=avro: field '{path}' is the recursive record {name}, which cannot be a "
                              "Spark column")
        fields = []
        for f in schema["fields"]:
            dtype, nullable = avro_to_spark(f["type"], f"{path}.{f['name']}" if path else f["name"], seen | {name})
            fields.append(StructField(f["name"], dtype, nullable))
        return StructType(fields), False
    raise OptionError(f"valueFormat=avro: field '{path}' has Avro type {kind}, which has no Spark column type")


def _fixup(schema: Any) -> Fixup | None:
    """A converter from fastavro's Python value to what Arrow takes, or None when it takes it as is
    (uuid -> str, time -> int; nested ones walked)."""
    if isinstance(schema, list):
        fixes = [fix for b in _branches(schema) if (fix := _fixup(b)) is not None]
        if not fixes:
            return None
        convert = fixes[0]  # [null, T]: the one branch; [int, long] and [float, double] need none
        return lambda v: None if v is None else convert(v)
    if isinstance(schema, str):
        return None
    kind, logical = schema.get("type"), schema.get("logicalType")
    if isinstance(kind, (list, dict)):
        return _fixup(kind)
    if logical == "uuid":
        return lambda v: str(v) if isinstance(v, uuid.UUID) else v
    if logical == "time-millis":
        return lambda v: (v.hour * 3600 + v.minute * 60 + v.second) * 1000 + v.microsecond // 1000 \
            if isinstance(v, datetime.time) else v
    if logical == "time-micros":
        return lambda v: ((v.hour * 3600 + v.minute * 60 + v.second) * 1_000_000 + v.microsecond) \
            if isinstance(v, datetime.time) else v
    if kind == "array":
        item = _fixup(schema["items"])
        return None if item is None else (lambda v: None if v is None else [item(x) for x in v])
    if kind == "map":
        value = _fixup(schema["values"])
        return None if value is None else (lambda v: None if v is None else {k: value(x) for k, x in v.items()})
    if kind == "record":
        fields = [(f["name"], fix) for f in schema["fields"] if (fix := _fixup(f["type"])) is not None]
        if not fields:
            return None

        def record(v: Any) -> Any:
            if v is None:
                return None
            for name, convert in fields:
                v[name] = convert(v[name])
            return v
        return record
    return None


class AvroValues:
    """Decodes a batch of Confluent-framed Avro values to Arrow columns (one per reader field).

    Built on an executor per task; ``fetch_schema(id) -> text`` is the registry lookup
    (cached here: ids never change).
    """

    def __init__(self, reader_text: str, arrow_type: pa.DataType, record: bool,
                 fetch_schema: Callable[[int], str]) -> None:
        self._reader = parse_avro(reader_text, "The reader schema")
        self._arrow_type = arrow_type
        self._record = record
        self._fetch = fetch_schema
        self._writers: dict[int, Any] = {}
        self._fix = _fixup(self._reader)

    def _writer(self, schema_id: int, where: str) -> Any:
        writer = self._writers.get(schema_id)
        if writer is None:
            try:
                text = self._fetch(schema_id)
            except Exception as e:
                raise ValueDecodeError(f"{where}: cannot fetch writer schema id {schema_id} from the schema "
                                       f"registry: {e}") from e
            writer = parse_avro(text, f"Schema id {schema_id}")
            self._writers[schema_id] = writer
        return writer

    def columns(self, values: list[bytes | None], topic: str, partition: int, offsets: list[int]) -> list[Any]:
        """The typed columns of ``values`` (nulls for null values)."""
        out: list[Any] = []
        reader, fix = self._reader, self._fix
        for value, offset in zip(values, offsets, strict=True):
            if value is None:
                out.append(None)
                continue
            if len(value) < 5 or value[0] != 0:
                raise ValueDecodeError(f"{topic}-{partition} offset {offset}: the value is not in the schema "
                                       f"registry's wire format (magic byte 0 + 4-byte schema id); valueFormat=avro "
                                       "needs values written by a Confluent-compatible Avro serializer")
            schema_id = int.from_bytes(value[1:5], "big")
            writer = self._writers.get(schema_id) or self._writer(schema_id, f"{topic}-{partition} offset {offset}")
            try:
                decoded = fastavro.schemaless_reader(io.BytesIO(value[5:]), writer, reader)
            except Exception as e:
                raise ValueDecodeError(
                    f"{topic}-{partition} offset {offset}: the value (writer schema id {schema_id}) cannot be read "
                    f"with the query's reader schema: {e}. Avro resolution allows the changes the subject's "
                    "compatibility allows; restart the query to read with the subject's newer schema") from e
            out.append(fix(decoded) if fix is not None else decoded)
        try:
            if self._record:
                # flatten(), not field(i): a null value (tombstone) must null every column
                return list(pa.array(out, self._arrow_type).flatten())
            return [pa.array(out, self._arrow_type)]
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError) as e:
            raise ValueDecodeError(f"{topic}-{partition} offsets {offsets[0]}..{offsets[-1]}: decoded Avro values do "
                                   f"not fit the columns {self._arrow_type}: {e}") from e
