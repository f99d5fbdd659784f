"""Flatten: nested structs and maps, arrays kept, optionality and defaults inherited."""

from __future__ import annotations

import pytest
from seaway.connect.api import DataError, Schema, SchemaBuilder, Struct
from seaway.transforms import FlattenKey, FlattenValue

from tests.transforms.transforms_helpers import configured, kept, sink


def test_schemaless_nested_maps() -> None:
    value = {"A": {"B": {"int8": 8, "string": "s", "bytes": b"b", "array": [1, {"x": 1}], "none": None},
                   "C": 1}, "top": True}
    out = kept(configured(FlattenValue).apply(sink(value))).value
    assert out == {"A.B.int8": 8, "A.B.string": "s", "A.B.bytes": b"b", "A.B.array": [1, {"x": 1}],
                   "A.B.none": None, "A.C": 1, "top": True}
    assert list(out) == ["A.B.int8", "A.B.string", "A.B.bytes", "A.B.array", "A.B.none", "A.C", "top"]


def test_schemaless_delimiter_key_and_tombstone() -> None:
    t = configured(FlattenKey, delimiter="#")
    assert kept(t.apply(sink(key={"a": {"b": 1}}))).key == {"a#b": 1}
    record = sink(key=None)
    assert t.apply(record) is record
    with pytest.raises(DataError, match=r"Only Map objects supported in absence of schema for \[flattening\]"):
        t.apply(sink(key="x"))
    with pytest.raises(DataError, match="which is not supported by Connect's data API"):
        t.apply(sink(key={"a": object()}))


def test_struct_in_struct() -> None:
    leaf = (SchemaBuilder.struct().field("int8", Schema.INT8_SCHEMA).field("string", Schema.STRING_SCHEMA)
            .field("array", SchemaBuilder.array(Schema.INT32_SCHEMA).build())
            .field("map", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT32_SCHEMA).build()).build())
    middle = SchemaBuilder.struct().field("B", leaf).field("C", Schema.BOOLEAN_SCHEMA).build()
    outer = SchemaBuilder.struct().name("outer").field("A", middle).build()
    value = Struct(outer).put("A", Struct(middle).put("C", True).put(
        "B", Struct(leaf).put("int8", 8).put("string", "s").put("array", [1, 2]).put("map", {"k": 1})))
    t = configured(FlattenValue)
    out = kept(t.apply(sink(value, outer)))
    schema = out.value_schema
    assert schema.name == "outer"
    assert [f.name for f in schema.fields] == ["A.B.int8", "A.B.string", "A.B.array", "A.B.map", "A.C"]
    assert schema.field("A.B.array").schema == SchemaBuilder.array(Schema.INT32_SCHEMA).build()
    assert [out.value.get(f.name) for f in schema.fields] == [8, "s", [1, 2], {"k": 1}, True]
    out.value.validate()
    assert kept(t.apply(sink(value, outer))).value_schema is schema


def test_optional_and_default_inherited() -> None:
    inner = SchemaBuilder.struct().field("req", Schema.INT32_SCHEMA).field(
        "opt", SchemaBuilder.string().optional().default_value("d").build()).optional().build()
    inner_default = Struct(inner).put("req", 5)
    inner_with_default = (SchemaBuilder.struct().field("req", Schema.INT32_SCHEMA)
                          .field("opt", SchemaBuilder.string().optional().default_value("d").build())
                          .optional().default_value(inner_default).build())
    outer = (SchemaBuilder.struct().field("opt_parent", SchemaBuilder.struct().field("x", Schema.INT32_SCHEMA)
                                          .optional().build())
             .field("defaulted", inner_with_default).build())
    schema = kept(configured(FlattenValue).apply(sink(Struct(outer), outer))).value_schema
    assert schema.field("opt_parent.x").schema.optional
    assert schema.field("defaulted.req").schema.default_value == 5
    assert schema.field("defaulted.opt").schema.default_value == "d"


def test_null_nested_struct_and_null_value() -> None:
    inner = SchemaBuilder.struct().field("x", Schema.INT32_SCHEMA).optional().build()
    outer = SchemaBuilder.struct().field("a", inner).field("b", Schema.INT32_SCHEMA).optional().build()
    t = configured(FlattenValue)
    out = kept(t.apply(sink(Struct(outer).put("b", 1), outer)))
    assert out.value.get("a.x") is None and out.value.get("b") == 1
    out = kept(t.apply(sink(None, outer)))
    assert out.value is None and out.value_schema.optional
