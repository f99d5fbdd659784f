"""Connect values to Arrow columns: types, defaults, logical types, the schemaless rule, metadata."""

from __future__ import annotations

import datetime
import decimal

import pyarrow as pa
from seaway.connect.api import Date, Decimal, Schema, SchemaBuilder, Struct, Time, Timestamp
from seaway.connectors.lake.columns import json_text, metadata_arrays, value_columns

from tests.connectors.spark_sink.conftest import record

POINT = SchemaBuilder.struct().field("x", Schema.INT32_SCHEMA).field("at", Time.builder().build()).build()
SCHEMA = (SchemaBuilder.struct()
          .field("i8", Schema.INT8_SCHEMA).field("f32", Schema.FLOAT32_SCHEMA)
          .field("name", SchemaBuilder.string().optional().default_value("anon").build())
          .field("raw", Schema.OPTIONAL_BYTES_SCHEMA)
          .field("price", Decimal.schema(3)).field("day", Date.builder().build())
          .field("ts", Timestamp.builder().build())
          .field("points", SchemaBuilder.array(POINT).build())
          .field("by_key", SchemaBuilder.map(Schema.STRING_SCHEMA, POINT).build())
          .build())


def test_struct_columns() -> None:
    cols = value_columns(SCHEMA)
    assert value_columns(SCHEMA) is cols  # derived once per schema
    assert [(f.name, str(f.type)) for f in cols.fields] == [
        ("i8", "int8"), ("f32", "float"), ("name", "string"), ("raw", "binary"), ("price", "decimal128(38, 3)"),
        ("day", "date32[day]"), ("ts", "timestamp[ms, tz=UTC]"),
        ("points", "list<item: struct<x: int32, at: int32>>"),
        ("by_key", "map<string, struct<x: int32, at: int32>>")]
    p = Struct(POINT).put("x", 1).put("at", datetime.time(0, 0, 1, 500_000))
    v = (Struct(SCHEMA).put("i8", -3).put("f32", 1.5).put("raw", b"\x01").put("price", decimal.Decimal("2.5"))
         .put("day", datetime.date(2024, 2, 29)).put("ts", datetime.datetime(2024, 1, 1, tzinfo=datetime.UTC))
         .put("points", [p]).put("by_key", {"k": p}))
    table = pa.Table.from_arrays(cols.build([v, None]), schema=pa.schema(cols.fields))
    first, second = table.to_pylist()
    assert first == {"i8": -3, "f32": 1.5, "name": "anon", "raw": b"\x01", "price": decimal.Decimal("2.500"),
                     "day": datetime.date(2024, 2, 29), "ts": datetime.datetime(2024, 1, 1, tzinfo=datetime.UTC),
                     "points": [{"x": 1, "at": 1500}], "by_key": [("k", {"x": 1, "at": 1500})]}
    assert second["i8"] is None and second["name"] == "anon"


def test_schemaless_and_primitive() -> None:
    cols = value_columns(None)
    [arr] = cols.build([{"b": 1, "a": [True, None]}, "x", None, b"\xff"])
    assert arr.to_pylist() == ['{"a":[true,null],"b":1}', '"x"', None, '"/w=="']
    [ints] = value_columns(Schema.INT16_SCHEMA).build([1, None])
    assert ints.type == pa.int16() and ints.to_pylist() == [1, None]
    assert json_text({"é": datetime.date(2024, 1, 2)}) == '{"é":"2024-01-02"}'


def test_metadata_columns_use_consumed_coordinates() -> None:
    r = record("src", 3, 42, None, key=b"\x00k", timestamp=1000)
    renamed = r.new_record(topic="renamed", kafka_partition=0)
    topic, partition, offset, ts, key = metadata_arrays([renamed, record("src", 3, 43, None, key={"id": 1})])
    assert topic.to_pylist() == ["src", "src"] and partition.to_pylist() == [3, 3] and offset.to_pylist() == [42, 43]
    assert ts.to_pylist()[0] == datetime.datetime(1970, 1, 1, 0, 0, 1, tzinfo=datetime.UTC)
    assert key.to_pylist() == ["AGs=", '{"id":1}']
