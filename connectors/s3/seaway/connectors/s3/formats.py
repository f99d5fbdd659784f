"""Object formats: the rows of one output file (an Arrow table) to Parquet, Avro or JSON bytes.

The file set already holds its rows as Arrow (:mod:`seaway.connectors.lake.columns`), so each
format works per file, not per record, from that table:

* **Parquet** (``ParquetFormat``): ``pyarrow.parquet.write_table``, ``parquet.codec``; the columns are
  the Spark sink's (one per struct field, nested types kept).
* **Avro** (``AvroFormat``): an Avro schema derived once per file from the Connect value schema
  (optional fields as ``["null", T]`` unions, Decimal/Date/Timestamp/Time as Avro logical types,
  maps with string keys as Avro maps and others as arrays of key/value records) and fastavro's
  container writer with ``avro.codec``. A non-struct value is written as that Avro type itself,
  as Confluent's AvroFormat does (a schemaless value: its JSON text as an Avro string).
* **JSON** (``JsonFormat``): one JSON document per line, as Kafka's JsonConverter with
  ``schemas.enable=false`` writes values: Timestamp as epoch milliseconds, Date as days since
  the epoch, Time as milliseconds of the day, bytes as base64, Decimal as base64 of the unscaled
  two's-complement integer (``json.decimal.format=BASE64``) or a number (``NUMERIC``); maps with
  string keys as objects, others as ``[[key, value], ...]``. A schemaless value is written as
  its JSON text. ``s3.compression.type=gzip`` gzips the file.
"""

from __future__ import annotations

import base64
import datetime
import decimal
import gzip
import json
import re
from collections.abc import Callable, Sequence
from typing import Any, BinaryIO

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq
from seaway.connect.api import Schema, SchemaType
from seaway.connectors.s3.config import S3SinkConfig

__all__ = ["avro_schema", "write_file"]

Convert = Callable[[Any], Any]
_EPOCH = datetime.date(1970, 1, 1)
_NAME_CHARS = re.compile(r"[^A-Za-z0-9_]")


def write_file(config: S3SinkConfig, table: pa.Table, schema: Schema | None, out: BinaryIO) -> None:
    """Write ``table`` (one output file's rows; value schema ``schema``) to ``out`` in the configured format."""
    if config.format == "parquet":
        pq.write_table(table, out, compression=config.parquet_codec)
    elif config.format == "avro":
        _write_avro(table, schema, out, config.avro_codec)
    elif config.json_gzip:
        level = 6 if config.compression_level < 0 else config.compression_level
        with gzip.GzipFile(fileobj=out, mode="wb", compresslevel=level, mtime=0) as zipped:
            _write_json(table, schema, zipped.write, config.json_decimal_numeric)
    else:
        _write_json(table, schema, out.write, config.json_decimal_numeric)


# -- Python values from Arrow, reshaped where a format needs it ------------------------------------
def _reshaper(arrow_type: pa.DataType, leaf: Callable[[pa.DataType], Convert | None]) -> Convert | None:
    """How to reshape one non-null ``to_pylist`` value of ``arrow_type``; ``None`` when it needs nothing.

    Maps come out of Arrow as lists of ``(key, value)`` tuples: they become dicts when the keys are
    strings, else lists of ``[key, value]`` (JSON) or ``{"key", "value"}`` records (Avro, via ``leaf``).
    """
    if pa.types.is_map(arrow_type):
        key, item = _reshaper(arrow_type.key_type, leaf), _reshaper(arrow_type.item_type, leaf)
        k = key or (lambda x: x)
        v = item or (lambda x: x)
        if pa.types.is_string(arrow_type.key_type):
            return lambda pairs: {k(a): None if b is None else v(b) for a, b in pairs}
        pair = leaf(arrow_type)
        assert pair is not None
        return lambda pairs: [pair((k(a), None if b is None else v(b))) for a, b in pairs]
    if pa.types.is_list(arrow_type):
        inner = _reshaper(arrow_type.value_type, leaf)
        if inner is None:
            return None
        return lambda xs: [None if x is None else inner(x) for x in xs]
    if pa.types.is_struct(arrow_type):
        fields = [(f.name, _reshaper(f.type, leaf)) for f in arrow_type]
        if all(conv is None for _, conv in fields):
            return None
        return lambda d: {name: d[name] if conv is None or d[name] is None else conv(d[name])
                          for name, conv in fields}
    return leaf(arrow_type)


def _rows(table: pa.Table, leaf: Callable[[pa.DataType], Convert | None]) -> list[dict[str, Any]]:
    """The table as Python dicts, each column reshaped for the format (per column, not per field)."""
    columns = {}
    for field in table.schema:
        values = table.column(field.name).to_pylist()
        conv = _reshaper(field.type, leaf)
        if conv is not None:
            values = [None if x is None else conv(x) for x in values]
        columns[field.name] = values
    names = list(columns)
    return [dict(zip(names, row, strict=True)) for row in zip(*columns.values(), strict=True)]


# -- JSON ----------------------------------------------------------------------------------------
def _unscaled_base64(value: decimal.Decimal) -> str:
    sign, digits, _ = value.as_tuple()  # Arrow gives decimals at the column scale: digits are unscaled
    unscaled = int("".join(map(str, digits)) or "0") * (-1 if sign else 1)
    length = max(1, (unscaled.bit_length() + 8) // 8)
    return base64.b64encode(unscaled.to_bytes(length, "big", signed=True)).decode("ascii")


def _json_leaf(arrow_type: pa.DataType) -> Convert | None:
    if pa.types.is_map(arrow_type):
        return lambda pair: list(pair)
    if pa.types.is_timestamp(arrow_type):
        return lambda t: int(t.timestamp() * 1000) if t.tzinfo else \
            int(t.replace(tzinfo=datetime.UTC).timestamp() * 1000)
    if pa.types.is_date(arrow_type):
        return lambda d: (d - _EPOCH).days
    return None


def _write_json(table: pa.Table, schema: Schema | None, write: Callable[[bytes], object],
                numeric_decimals: bool) -> None:
    def default(value: Any) -> Any:
        if isinstance(value, (bytes, bytearray)):
            return base64.b64encode(value).decode("ascii")
        if isinstance(value, decimal.Decimal):
            return float(value) if numeric_decimals else _unscaled_base64(value)
        raise TypeError(f"{type(value).__name__} is not JSON serializable")

    encoder = json.JSONEncoder(default=default, ensure_ascii=False, separators=(",", ":"))
    if schema is None and table.num_columns == 1:
        # schemaless values are already their JSON text (columns.json_text)
        lines = ["null" if v is None else v for v in table.column(0).to_pylist()]
    elif schema is not None and schema.type is not SchemaType.STRUCT and table.num_columns == 1:
        lines = [encoder.encode(v) for v in _column_values(table, _json_leaf)]
    else:
        rows = _rows(table, _json_leaf)
        if schema is None:  # schemaless value plus metadata columns: the value as JSON, not as text
            for row in rows:
                row["value"] = None if row["value"] is None else json.loads(row["value"])
        lines = [encoder.encode(r) for r in rows]
    if lines:
        write(("\n".join(lines) + "\n").encode())


def _column_values(table: pa.Table, leaf: Callable[[pa.DataType], Convert | None]) -> list[Any]:
    values = table.column(0).to_pylist()
    conv = _reshaper(table.schema.field(0).type, leaf)
    return values if conv is None else [None if x is None else conv(x) for x in values]


# -- Avro ----------------------------------------------------------------------------------------
def _avro_leaf(arrow_type: pa.DataType) -> Convert | None:
    if pa.types.is_map(arrow_type):
        return lambda pair: {"key": pair[0], "value": pair[1]}
    return None


def _avro_name(text: str) -> str:
    name = _NAME_CHARS.sub("_", text)
    return name if name and not name[0].isdigit() else "_" + name


def _avro_type(arrow_type: pa.DataType, connect: Schema | None, path: str) -> Any:
    """The Avro type (not nullable) of one Arrow type; ``connect`` gives optionality of nested fields."""
    if pa.types.is_boolean(arrow_type):
        return "boolean"
    if pa.types.is_int8(arrow_type) or pa.types.is_int16(arrow_type):
        return "int"
    if pa.types.is_int32(arrow_type):
        if connect is not None and connect.name == "org.apache.kafka.connect.data.Time":
            return {"type": "int", "logicalType": "time-millis"}
        return "int"
    if pa.types.is_int64(arrow_type):
        return "long"
    if pa.types.is_float32(arrow_type):
        return "float"
    if pa.types.is_float64(arrow_type):
        return "double"
    if pa.types.is_string(arrow_type):
        return "string"
    if pa.types.is_binary(arrow_type):
        return "bytes"
    if pa.types.is_decimal(arrow_type):
        return {"type": "bytes", "logicalType": "decimal", "precision": arrow_type.precision,
                "scale": arrow_type.scale}
    if pa.types.is_date(arrow_type):
        return {"type": "int", "logicalType": "date"}
    if pa.types.is_timestamp(arrow_type):
        return {"type": "long", "logicalType": "timestamp-millis"}
    if pa.types.is_list(arrow_type):
        inner = connect.value_schema if connect is not None else None
        return {"type": "array", "items": _nullable(arrow_type.value_type, inner, path + "_item")}
    if pa.types.is_map(arrow_type):
        key_schema = connect.key_schema if connect is not None else None
        value_schema = connect.value_schema if connect is not None else None
        values = _nullable(arrow_type.item_type, value_schema, path + "_value")
        if pa.types.is_string(arrow_type.key_type):
            return {"type": "map", "values": values}
        return {"type": "array", "items": {"type": "record", "name": _avro_name(path + "_entry"), "fields": [
            {"name": "key", "type": _avro_type(arrow_type.key_type, key_schema, path + "_key")},
            {"name": "value", "type": values}]}}
    if pa.types.is_struct(arrow_type):
        return _record(list(arrow_type), connect, path)
    raise TypeError(f"no Avro type for Arrow {arrow_type}")


def _optional(connect: Schema | None) -> bool:
    return connect is None or connect.optional


def _nullable(arrow_type: pa.DataType, connect: Schema | None, path: str) -> Any:
    avro = _avro_type(arrow_type, connect, path)
    return ["null", avro] if _optional(connect) else avro


def _record(fields: Sequence[pa.Field], connect: Schema | None, path: str) -> dict[str, Any]:
    by_name = {f.name: f.schema for f in connect.fields} if connect is not None and \
        connect.type is SchemaType.STRUCT else {}
    out = []
    for f in fields:
        field_schema = by_name.get(f.name)
        avro = _nullable(f.type, field_schema, f"{path}_{f.name}")
        entry: dict[str, Any] = {"name": f.name, "type": avro}
        if isinstance(avro, list):
            entry["default"] = None
        out.append(entry)
    return {"type": "record", "name": _avro_name(path), "fields": out}


def avro_schema(table_schema: pa.Schema, schema: Schema | None) -> Any:
    """The Avro schema of a file: the value's own type when it is not a struct (and nothing else is written)."""
    if len(table_schema) == 1 and (schema is None or schema.type is not SchemaType.STRUCT):
        return _nullable(table_schema.field(0).type, schema, "value")
    name = schema.name if schema is not None and schema.name else "ConnectDefault"
    record = _record(list(table_schema), schema if schema is not None and schema.type is SchemaType.STRUCT
                     else None, name.rsplit(".", 1)[-1])
    if schema is not None and schema.name and "." in schema.name:
        record["namespace"] = ".".join(_avro_name(p) for p in schema.name.split(".")[:-1])
    elif schema is None or not schema.name:
        record["namespace"] = "io.confluent.connect.avro"
    return record


def _write_avro(table: pa.Table, schema: Schema | None, out: BinaryIO, codec: str) -> None:
    avro = avro_schema(table.schema, schema)
    parsed = fastavro.parse_schema(avro)
    records: list[Any] = _rows(table, _avro_leaf) if isinstance(avro, dict) and avro.get("type") == "record" \
        else _column_values(table, _avro_leaf)
    fastavro.writer(out, parsed, records, codec=codec)
