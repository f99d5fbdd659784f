"""Cast: every target type, whole-value and per-field, schemaless and with schemas."""

from __future__ import annotations

import datetime
import decimal

import pytest
from seaway.connect.api import (
    ConfigDef,
    ConfigError,
    DataError,
    Date,
    Decimal,
    Schema,
    SchemaBuilder,
    SchemaType,
    Struct,
    Time,
    Timestamp,
)
from seaway.transforms import CastKey, CastValue
from seaway.transforms.cast import java_number_string

from tests.transforms.transforms_helpers import configured, kept, sink


@pytest.mark.parametrize(("spec", "value", "expected"), [
    ("int8", 42, 42), ("int8", 300, 44), ("int8", -129, 127), ("int8", True, 1), ("int8", "42", 42),
    ("int16", 42, 42), ("int16", 70000, 4464), ("int16", 1.9, 1), ("int32", 42, 42), ("int32", 42.9, 42),
    ("int32", -42.9, -42), ("int32", 1e20, 2**31 - 1), ("int32", float("nan"), 0), ("int64", 2**63, -(2**63)),
    ("int64", "-9", -9), ("int64", False, 0), ("int64", 1e30, 2**63 - 1), ("int8", 1e10, -1),
    ("float32", 42, 42.0), ("float32", 0.1, 0.10000000149011612), ("float32", "1.5", 1.5), ("float32", True, 1.0),
    ("float64", 42, 42.0), ("float64", "1e3", 1000.0), ("float64", False, 0.0),
    ("boolean", 0, False), ("boolean", 42, True), ("boolean", 0.5, False), ("boolean", "true", True),
    ("boolean", "TRUE", True), ("boolean", "yes", False), ("boolean", True, True),
    ("string", 42, "42"), ("string", True, "true"), ("string", 1.0, "1.0"), ("string", 1e10, "1.0E10"),
    ("string", 0.0001, "1.0E-4"), ("string", -2.5, "-2.5"), ("string", "x", "x"),
    ("string", b"\x00\x01hello", "AAFoZWxsbw=="),
])
def test_whole_value_schemaless(spec: str, value: object, expected: object) -> None:
    out = kept(configured(CastValue, spec=spec).apply(sink(value)))
    assert out.value == expected and type(out.value) is type(expected)
    assert out.value_schema is None


@pytest.mark.parametrize("spec", ["int8", "int16", "int32", "int64"])
def test_string_out_of_range(spec: str) -> None:
    with pytest.raises(DataError, match=r"Value \(99999999999999999999\) was out of range for requested data type"):
        configured(CastValue, spec=spec).apply(sink("99999999999999999999"))
    with pytest.raises(DataError, match="out of range"):
        configured(CastValue, spec=spec).apply(sink("1.5"))


@pytest.mark.parametrize(("spec", "schema_type"), [
    ("int8", SchemaType.INT8), ("int16", SchemaType.INT16), ("int32", SchemaType.INT32), ("int64", SchemaType.INT64),
    ("float32", SchemaType.FLOAT32), ("float64", SchemaType.FLOAT64), ("boolean", SchemaType.BOOLEAN),
    ("string", SchemaType.STRING),
])
def test_whole_value_with_schema(spec: str, schema_type: SchemaType) -> None:
    source_schema = SchemaBuilder.int32().name("my.int").doc("d").optional().build()
    out = kept(configured(CastKey, spec=spec).apply(sink(key=1, key_schema=source_schema)))
    assert out.key_schema.type is schema_type
    assert (out.key_schema.name, out.key_schema.doc, out.key_schema.optional) == ("my.int", "d", True)
    out.key_schema.validate(out.key)
    assert out.key == {"boolean": True, "string": "1"}.get(spec, 1)


def test_float32_string_is_java_float_tostring() -> None:
    out = kept(configured(CastValue, spec="string").apply(sink(1.100000023841858, Schema.FLOAT32_SCHEMA)))
    assert out.value == "1.1"
    assert java_number_string(1.1) == "1.1" and java_number_string(123456789.0) == "1.23456789E8"
    assert java_number_string(float("inf")) == "Infinity" and java_number_string(-0.0) == "-0.0"


def test_bytes_only_to_string() -> None:
    with pytest.raises(DataError, match="Unexpected type in Cast transformation: bytes"):
        configured(CastValue, spec="int32").apply(sink(b"abc", Schema.BYTES_SCHEMA))
    out = kept(configured(CastValue, spec="string").apply(sink(b"abc", Schema.BYTES_SCHEMA)))
    assert (out.value_schema, out.value) == (Schema.STRING_SCHEMA, "YWJj")


def test_unsupported_inputs() -> None:
    with pytest.raises(DataError, match="does not support casting from ARRAY"):
        configured(CastValue, spec="string").apply(sink([1, 2]))
    with pytest.raises(DataError, match="which is not supported by Connect's data API"):
        configured(CastValue, spec="string").apply(sink(object()))


def test_logical_types() -> None:
    ts = datetime.datetime(2023, 11, 14, 22, 13, 20, tzinfo=datetime.UTC)
    out = kept(configured(CastValue, spec="int64").apply(sink(ts, Timestamp.SCHEMA)))
    assert (out.value, out.value_schema) == (1_700_000_000_000, Schema.INT64_SCHEMA)
    out = kept(configured(CastValue, spec="string").apply(sink(ts, Timestamp.SCHEMA)))
    assert out.value == "2023-11-14T22:13:20.000Z"
    assert kept(configured(CastValue, spec="int32").apply(sink(datetime.date(1970, 1, 11), Date.SCHEMA))).value == 10
    assert kept(configured(CastValue, spec="int32").apply(sink(datetime.time(0, 0, 1), Time.SCHEMA))).value == 1000
    assert kept(configured(CastValue, spec="string").apply(sink(datetime.date(2020, 2, 3), Date.SCHEMA))).value == \
        "2020-02-03"
    amount = decimal.Decimal("12.75")
    assert kept(configured(CastValue, spec="int32").apply(sink(amount, Decimal.schema(2)))).value == 12
    assert kept(configured(CastValue, spec="float64").apply(sink(amount, Decimal.schema(2)))).value == 12.75
    assert kept(configured(CastValue, spec="string").apply(sink(amount, Decimal.schema(2)))).value == "12.75"


def test_per_field_with_schema() -> None:
    schema = (SchemaBuilder.struct().name("rec").field("int8", Schema.INT8_SCHEMA)
              .field("int16", SchemaBuilder.int16().optional().default_value(7).build())
              .field("float", Schema.FLOAT64_SCHEMA).field("bool", Schema.BOOLEAN_SCHEMA)
              .field("string", Schema.STRING_SCHEMA).field("ts", Timestamp.SCHEMA)
              .field("untouched", Schema.STRING_SCHEMA).build())
    value = (Struct(schema).put("int8", 8).put("float", 32.5).put("bool", True).put("string", "42")
             .put("ts", datetime.datetime(1970, 1, 1, 0, 0, 1, tzinfo=datetime.UTC)).put("untouched", "u"))
    t = configured(CastValue, spec="int8:int32,int16:string,float:int64,bool:float32,string:int32,ts:int64")
    out = kept(t.apply(sink(value, schema)))
    s = out.value_schema
    assert s.name == "rec"
    assert [s.field(n).schema.type for n in ("int8", "int16", "float", "bool", "string", "ts", "untouched")] == [
        SchemaType.INT32, SchemaType.STRING, SchemaType.INT64, SchemaType.FLOAT32, SchemaType.INT32,
        SchemaType.INT64, SchemaType.STRING]
    assert s.field("int16").schema.optional and s.field("int16").schema.default_value == "7"
    assert s.field("ts").schema.name is None
    v = out.value
    assert [v.get(n) for n in ("int8", "int16", "float", "bool", "string", "ts", "untouched")] == \
        [8, "7", 32, 1.0, 42, 1000, "u"]
    v.validate()
    assert kept(t.apply(sink(value, schema))).value_schema is s  # cached


def test_per_field_schemaless_and_tombstone() -> None:
    t = configured(CastValue, spec="a:int8, b:string ,missing:boolean")
    assert kept(t.apply(sink({"a": 300, "b": 1.5, "c": "keep"}))).value == \
        {"a": 44, "b": "1.5", "c": "keep", "missing": None}
    record = sink(None, Schema.OPTIONAL_INT32_SCHEMA)
    assert t.apply(record) is record
    with pytest.raises(DataError, match=r"Only Map objects supported in absence of schema for \[cast types\]"):
        t.apply(sink(42))


@pytest.mark.parametrize(("spec", "message"), [
    ("", "Must specify at least one field to cast."),
    ("foo:faketype", "Invalid type found in casting spec: faketype"),
    ("int8,foo:int16", "may ony specify a single cast in their spec"),
    ("foo:bytes", r"Cast transformation does not support casting to BYTES; supported types are \[INT8, INT16"),
    ("foo:array", "does not support casting to ARRAY"),
    ("a:b:int8", "Invalid rename mapping: a:b:int8"),
])
def test_spec_errors_name_the_field(spec: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as e:
        configured(CastValue, spec=spec)
    assert e.value.name == "spec"
    results = {c.name: c for c in CastValue().config().validate({"spec": spec})}
    assert results["spec"].errors and not results["replace.null.with.default"].errors
    assert isinstance(CastValue().config(), ConfigDef)
