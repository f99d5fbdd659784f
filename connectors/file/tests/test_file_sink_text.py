"""FileStreamSink writes values as Kafka's does: Java's ``String.valueOf``, never a Python repr.

Each expected line is what Apache Kafka 4.3.1's own FileStreamSinkTask wrote for the same JSON
through its JsonConverter (run side by side in tests/peer/test_file_sink_text.py). Before, a map
came out as ``{'a': 1}``, a list as ``[1, 'two']``, ``1e10`` as ``10000000000.0`` and a FLOAT32
``0.1`` as ``0.10000000149011612``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from seaway.connect.api import Schema, SchemaBuilder, SinkRecord, SinkRecordBatch, Struct, java_string
from seaway.connect.converters import JsonConverter
from seaway.connectors.file import FileStreamSinkTask

SCHEMALESS: list[tuple[str, str]] = [  # (the JSON, Kafka's line)
    ('{"a": 1, "b": "x", "c": [1, 2.5, null, true], "d": {"e": null}}',
     "{a=1, b=x, c=[1, 2.5, null, true], d={e=null}}"),
    ('{"zeta": 1, "alpha": 2, "mid": 3, "Aa": 4, "BB": 5, "longer key": 6, "k10": 7, "k2": 8, "k1": 9, "x": 10, '
     '"y": 11, "z": 12, "w": 13}',  # java.util.HashMap's order, grown to 32 buckets
     "{zeta=1, Aa=4, BB=5, k1=9, k2=8, mid=3, k10=7, longer key=6, alpha=2, w=13, x=10, y=11, z=12}"),
    ('[1, "two", [3], {}]', "[1, two, [3], {}]"),
    ('"text"', "text"),
    ("1e10", "1.0E10"),
    ("12345678.9", "1.23456789E7"),
    ("1.0E-5", "1.0E-5"),
    ("0.001", "0.001"),
    ("1234567.0", "1234567.0"),
    ("true", "true"),
    ("null", "null"),
    ('{"n": -2147483649, "big": 12345678901234}', "{big=12345678901234, n=-2147483649}"),
]


def _field(name: str, kind: str, **extra: Any) -> dict[str, Any]:
    return {"field": name, "type": kind, **extra}


STRUCT = {"type": "struct", "fields": [
    _field("i8", "int8"), _field("i32", "int32"), _field("i64", "int64"), _field("f32", "float"),
    _field("f64", "double"), _field("b", "boolean"), _field("s", "string"), _field("opt", "string", optional=True),
    _field("arr", "array", items={"type": "float"}),
    _field("m", "map", keys={"type": "string"}, values={"type": "int32"}),
    _field("inner", "struct", fields=[_field("x", "double")])]}
WITH_SCHEMAS: list[tuple[dict[str, Any], Any, str]] = [  # (schema, payload, Kafka's line)
    (STRUCT, {"i8": -1, "i32": 70000, "i64": 12345678901, "f32": 0.1, "f64": 0.1, "b": False, "s": "hi, there",
              "opt": None, "arr": [1.5, 0.3, 100000000], "m": {"b": 2, "a": 1, "longer": 3}, "inner": {"x": 1e-7}},
     "Struct{i8=-1,i32=70000,i64=12345678901,f32=0.1,f64=0.1,b=false,s=hi, there,arr=[1.5, 0.3, 1.0E8],"
     "m={a=1, b=2, longer=3},inner=Struct{x=1.0E-7}}"),
    ({"type": "float"}, 3.3, "3.3"),
    ({"type": "float"}, 16777217, "1.6777216E7"),
    ({"type": "map", "keys": {"type": "int32"}, "values": {"type": "boolean"}}, [[3, True], [-1, False], [20, True]],
     "{-1=false, 3=true, 20=true}"),
    ({"type": "map", "keys": {"type": "int64"}, "values": {"type": "double"}},
     [[-5, 1.0], [4294967296, 2.0], [7, 1e21]], "{4294967296=2.0, -5=1.0, 7=1.0E21}"),
    ({"type": "bytes", "name": "org.apache.kafka.connect.data.Decimal", "version": 1, "parameters": {"scale": "2"}},
     "AOw=", "2.36"),
    ({"type": "int64", "name": "org.apache.kafka.connect.data.Timestamp", "version": 1}, 1700000000123,
     "Tue Nov 14 22:13:20 UTC 2023"),
]


def _written(tmp_path: Path, schemas: bool, documents: list[str], batch: bool = False) -> list[str]:
    converter = JsonConverter()
    converter.configure({"schemas.enable": str(schemas).lower()}, False)
    records = []
    for offset, document in enumerate(documents):
        data = converter.to_connect_data("t", document.encode())
        records.append(SinkRecord("t", 0, None, None, data.schema, data.value, offset))
    out = tmp_path / "out.txt"
    task = FileStreamSinkTask()
    task.start({"file": str(out)})
    task.put(SinkRecordBatch.of(records) if batch else records)
    task.flush({})
    task.stop()
    return out.read_text(encoding="utf-8").split("\n")[:-1]


@pytest.mark.parametrize("batch", [False, True], ids=["records", "batch"])
def test_schemaless_values_are_written_as_kafka_writes_them(tmp_path: Path, batch: bool) -> None:
    lines = _written(tmp_path, False, [document for document, _ in SCHEMALESS], batch)
    assert lines == [kafka for _, kafka in SCHEMALESS]


def test_values_with_schemas_are_written_as_kafka_writes_them(tmp_path: Path) -> None:
    documents = [json.dumps({"schema": schema, "payload": payload}) for schema, payload, _ in WITH_SCHEMAS]
    assert _written(tmp_path, True, documents) == [kafka for _, _, kafka in WITH_SCHEMAS]


def test_bytes_values_are_their_text_and_nested_bytes_javas_array_text(tmp_path: Path) -> None:
    """Top-level bytes (ByteArrayConverter) as UTF-8 text; Java's own ``[B@1b6d3586`` names no data."""
    schema = SchemaBuilder.struct().field("raw", Schema.BYTES_SCHEMA).build()
    records = [SinkRecord("t", 0, None, None, Schema.BYTES_SCHEMA, "héllo".encode(), 0),
               SinkRecord("t", 0, None, None, schema, Struct(schema).put("raw", b"h\xff"), 1)]
    out = tmp_path / "out.txt"
    task = FileStreamSinkTask()
    task.start({"file": str(out)})
    task.put(records)
    task.stop()
    assert out.read_text(encoding="utf-8") == "héllo\nStruct{raw=[104, -1]}\n"


def test_java_string_special_numbers() -> None:
    assert [java_string(v) for v in (float("nan"), float("inf"), -float("inf"), 0.0, -0.0, -1.5e-9)] == [
        "NaN", "Infinity", "-Infinity", "0.0", "-0.0", "-1.5E-9"]
    assert java_string(0.1, Schema.FLOAT32_SCHEMA) == "0.1"  # Float.toString, not the double's digits
