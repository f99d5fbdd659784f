"""InsertField, ReplaceField, MaskField, ExtractField, HoistField, ValueToKey, SetSchemaMetadata."""

from __future__ import annotations

import datetime
import decimal

import pytest
from seaway.connect.api import (
    ConfigError,
    ConnectRecord,
    DataError,
    Date,
    Schema,
    SchemaBuilder,
    Struct,
    Time,
    Timestamp,
    Transformation,
)
from seaway.transforms import (
    ExtractFieldKey,
    ExtractFieldValue,
    HoistFieldKey,
    HoistFieldValue,
    InsertFieldKey,
    InsertFieldValue,
    MaskFieldValue,
    ReplaceFieldKey,
    ReplaceFieldValue,
    SetSchemaMetadataKey,
    SetSchemaMetadataValue,
    ValueToKey,
)

from tests.transforms.transforms_helpers import configured, field_schema, kept, sink, source

TS = 1_700_000_000_000
SIMPLE = SchemaBuilder.struct().name("name").version(1).doc("doc").field("magic", Schema.INT64_SCHEMA).build()


# -- InsertField --------------------------------------------------------------------------------
def insert_all(cls: type[Transformation[ConnectRecord]] = InsertFieldValue) -> Transformation[ConnectRecord]:
    return configured(cls, **{"topic.field": "topic_field!", "partition.field": "partition_field",
                              "offset.field": "offset_field!", "timestamp.field": "timestamp_field?",
                              "static.field": "instance_id", "static.value": "my-instance-id"})


def test_insert_field_with_schema_adds_fields_and_schemas() -> None:
    record = sink(Struct(SIMPLE).put("magic", 42), SIMPLE)
    out = kept(insert_all().apply(record))
    schema = out.value_schema
    assert schema is not None
    assert (schema.name, schema.version, schema.doc) == ("name", 1, "doc")
    assert field_schema(schema, "magic") == Schema.INT64_SCHEMA
    assert field_schema(schema, "topic_field") == Schema.STRING_SCHEMA
    assert field_schema(schema, "partition_field") == Schema.OPTIONAL_INT32_SCHEMA
    assert field_schema(schema, "offset_field") == Schema.INT64_SCHEMA
    ts_schema = field_schema(schema, "timestamp_field")
    assert ts_schema.name == Timestamp.LOGICAL_NAME and ts_schema.optional
    assert field_schema(schema, "instance_id") == Schema.OPTIONAL_STRING_SCHEMA
    value = out.value
    assert value.get("magic") == 42 and value.get("topic_field") == "test" and value.get("partition_field") == 0
    assert value.get("offset_field") == 42 and value.get("instance_id") == "my-instance-id"
    assert value.get("timestamp_field") == datetime.datetime(2023, 11, 14, 22, 13, 20, tzinfo=datetime.UTC)
    value.validate()
    assert record.value.schema is SIMPLE  # input untouched


def test_insert_field_schemaless_keeps_raw_timestamp() -> None:
    out = kept(insert_all().apply(sink({"magic": 42})))
    assert out.value == {"magic": 42, "topic_field": "test", "partition_field": 0, "offset_field": 42,
                         "timestamp_field": TS, "instance_id": "my-instance-id"}
    assert out.value_schema is None


def test_insert_field_skips_missing_partition_and_timestamp() -> None:
    t = configured(InsertFieldValue, **{"partition.field": "p", "timestamp.field": "ts"})
    out = kept(t.apply(sink({"a": 1}, partition=None, timestamp=None)))
    assert out.value == {"a": 1}


def test_insert_field_tombstone_passes_through() -> None:
    record = sink(None, SIMPLE)
    assert insert_all().apply(record) is record
    assert insert_all().apply(sink(None)) is not None


def test_insert_field_offset_needs_sink_record() -> None:
    with pytest.raises(DataError, match=r"Only SinkRecord supported for \[field insertion\], found: SourceRecord"):
        insert_all().apply(source({"a": 1}))


def test_insert_field_key_and_bad_value_type() -> None:
    out = kept(configured(InsertFieldKey, **{"topic.field": "t"}).apply(sink("v", key={"k": 1})))
    assert out.key == {"k": 1, "t": "test"} and out.value == "v"
    with pytest.raises(DataError, match=r"Only Map objects supported in absence of schema for \[field insertion\], "
                                        r"found: str"):
        kept(configured(InsertFieldValue, **{"topic.field": "t"}).apply(sink("text")))
    with pytest.raises(DataError, match=r"Only Struct objects supported for \[field insertion\], found: str"):
        configured(InsertFieldValue, **{"topic.field": "t"}).apply(sink("text", Schema.STRING_SCHEMA))


def test_insert_field_config_errors() -> None:
    with pytest.raises(ConfigError, match="No field insertion configured"):
        configured(InsertFieldValue)
    with pytest.raises(ConfigError, match=r"static\.value") as e:
        configured(InsertFieldValue, **{"static.field": "s"})
    assert e.value.name == "static.value"


def test_insert_field_replace_null_with_default() -> None:
    schema = SchemaBuilder.struct().field("opt", SchemaBuilder.int32().optional().default_value(7).build()).build()
    value = Struct(schema)
    with_default = kept(configured(InsertFieldValue, **{"topic.field": "t"}).apply(sink(value, schema)))
    without = kept(configured(InsertFieldValue, **{"topic.field": "t", "replace.null.with.default": "false"}).apply(
        sink(value, schema)))
    assert with_default.value.get_without_default("opt") == 7
    assert without.value.get_without_default("opt") is None


# -- ReplaceField -------------------------------------------------------------------------------
def test_replace_field_schemaless_include_exclude_renames() -> None:
    t = configured(ReplaceFieldValue, exclude="dont", renames="abc:xyz,foo:bar")
    out = kept(t.apply(sink({"dont": "whatever", "abc": 42, "foo": True, "etc": "etc"})))
    assert out.value == {"xyz": 42, "bar": True, "etc": "etc"}
    t = configured(ReplaceFieldValue, include="abc,foo", renames="abc:xyz")
    assert kept(t.apply(sink({"abc": 1, "foo": 2, "etc": 3}))).value == {"xyz": 1, "foo": 2}


def test_replace_field_with_schema() -> None:
    schema = (SchemaBuilder.struct().name("n").field("dont", Schema.STRING_SCHEMA).field("abc", Schema.INT32_SCHEMA)
              .field("foo", Schema.BOOLEAN_SCHEMA).field("etc", Schema.STRING_SCHEMA).build())
    value = Struct(schema).put("dont", "x").put("abc", 42).put("foo", True).put("etc", "etc")
    t = configured(ReplaceFieldValue, include="abc,foo,etc", exclude="etc", renames="abc:xyz,foo:bar")
    out = kept(t.apply(sink(value, schema)))
    assert [f.name for f in out.value_schema.fields] == ["xyz", "bar"]
    assert out.value_schema.name == "n"
    assert out.value.get("xyz") == 42 and out.value.get("bar") is True
    again = kept(t.apply(sink(Struct(schema).put("dont", "y").put("abc", 1).put("foo", False).put("etc", "e"), schema)))
    assert again.value_schema is out.value_schema  # cached, not rebuilt


def test_replace_field_deprecated_names_and_tombstone() -> None:
    t = configured(ReplaceFieldKey, blacklist="a")
    assert kept(t.apply(sink(key={"a": 1, "b": 2}))).key == {"b": 2}
    value_t = configured(ReplaceFieldValue, whitelist="a", include="b")  # the new name wins
    assert kept(value_t.apply(sink({"a": 1, "b": 2}))).value == {"b": 2}
    record = sink(None)
    assert t.apply(record) is record


def test_replace_field_bad_rename_names_field() -> None:
    with pytest.raises(ConfigError, match="Invalid rename mapping: a:b:c") as e:
        configured(ReplaceFieldValue, renames="a:b:c")
    assert e.value.name == "renames"


# -- MaskField ----------------------------------------------------------------------------------
SCHEMALESS_MASK = {"magic": 42, "bool": True, "byte": 42, "float": 42.0, "decimal": decimal.Decimal("42.5"),
                   "string": "55.121.20.20", "date": datetime.date(2020, 1, 1), "list": [1, 2],
                   "map": {"a": "b"}, "withDefault": None}


def test_mask_field_schemaless_empty_values() -> None:
    t = configured(MaskFieldValue, fields=",".join(k for k in SCHEMALESS_MASK if k != "magic") + ",missing")
    out = kept(t.apply(sink(dict(SCHEMALESS_MASK)))).value
    assert out == {"magic": 42, "bool": False, "byte": 0, "float": 0.0, "decimal": decimal.Decimal(0),
                   "string": "", "date": datetime.date(1970, 1, 1), "list": [], "map": {}, "withDefault": None,
                   "missing": None}


def test_mask_field_with_schema_and_replacement() -> None:
    schema = (SchemaBuilder.struct().field("i8", Schema.INT8_SCHEMA).field("f32", Schema.FLOAT32_SCHEMA)
              .field("s", Schema.STRING_SCHEMA).field("d", Date.SCHEMA).field("t", Time.SCHEMA)
              .field("keep", Schema.STRING_SCHEMA).build())
    value = (Struct(schema).put("i8", 5).put("f32", 1.5).put("s", "secret").put("d", datetime.date(2021, 3, 4))
             .put("t", datetime.time(1, 2)).put("keep", "k"))
    out = kept(configured(MaskFieldValue, fields="i8,f32,s,d,t").apply(sink(value, schema)))
    assert out.value_schema is schema
    assert [out.value.get(n) for n in ("i8", "f32", "s", "d", "t", "keep")] == \
        [0, 0.0, "", datetime.date(1970, 1, 1), datetime.time(0), "k"]
    out = kept(configured(MaskFieldValue, fields="i8,f32,s", replacement="12").apply(sink(value, schema)))
    assert [out.value.get(n) for n in ("i8", "f32", "s")] == [12, 12.0, "12"]


def test_mask_field_replacement_errors() -> None:
    with pytest.raises(DataError, match=r"Unable to convert \*\*\* \(str\) to number"):
        configured(MaskFieldValue, fields="n", replacement="***").apply(sink({"n": 1}))
    with pytest.raises(DataError, match="Cannot mask value of type bool with custom replacement"):
        configured(MaskFieldValue, fields="b", replacement="x").apply(sink({"b": True}))
    with pytest.raises(DataError, match="Unable to convert 300"):  # out of INT8 range
        schema = SchemaBuilder.struct().field("n", Schema.INT8_SCHEMA).build()
        kept(configured(MaskFieldValue, fields="n", replacement="300").apply(sink(Struct(schema).put("n", 1), schema)))
    with pytest.raises(DataError, match="Cannot mask value of type: bytes"):
        configured(MaskFieldValue, fields="b").apply(sink({"b": b"x"}))


def test_mask_field_config_errors() -> None:
    with pytest.raises(ConfigError, match="Missing required configuration \"fields\""):
        configured(MaskFieldValue)
    with pytest.raises(ConfigError, match="Empty list") as e:
        configured(MaskFieldValue, fields="")
    assert e.value.name == "fields"
    with pytest.raises(ConfigError, match="replacement"):
        configured(MaskFieldValue, fields="a", replacement="   ")


# -- ExtractField -------------------------------------------------------------------------------
def test_extract_field_schemaless_and_with_schema() -> None:
    t = configured(ExtractFieldKey, field="magic")
    assert kept(t.apply(sink(key={"magic": 42}))).key == 42
    assert kept(t.apply(sink(key={"other": 1}))).key is None
    assert kept(t.apply(sink(key=None))).key is None
    schema = SchemaBuilder.struct().field("magic", Schema.INT32_SCHEMA).build()
    out = kept(t.apply(sink(key=Struct(schema).put("magic", 42), key_schema=schema)))
    assert (out.key_schema, out.key) == (Schema.INT32_SCHEMA, 42)
    out = kept(t.apply(sink(key=None, key_schema=schema)))
    assert (out.key_schema, out.key) == (Schema.INT32_SCHEMA, None)
    with pytest.raises(DataError, match="Unknown field: nope"):
        configured(ExtractFieldKey, field="nope").apply(sink(key=Struct(schema).put("magic", 1), key_schema=schema))


def test_extract_field_v2_nested_paths() -> None:
    t = configured(ExtractFieldValue, field="a.b", **{"field.syntax.version": "v2"})
    assert kept(t.apply(sink({"a": {"b": 3}}))).value == 3
    assert kept(t.apply(sink({"a": None}))).value is None
    assert kept(t.apply(sink({"a": {"c": 1}}))).value is None
    dotted = configured(ExtractFieldValue, field="`a.b`.c", **{"field.syntax.version": "V2"})
    assert kept(dotted.apply(sink({"a.b": {"c": "yes"}}))).value == "yes"
    v1 = configured(ExtractFieldValue, field="a.b")
    assert kept(v1.apply(sink({"a.b": 1, "a": {"b": 2}}))).value == 1
    inner = SchemaBuilder.struct().field("b", Schema.STRING_SCHEMA).build()
    outer = SchemaBuilder.struct().field("a", inner).build()
    out = kept(t.apply(sink(Struct(outer).put("a", Struct(inner).put("b", "x")), outer)))
    assert (out.value_schema, out.value) == (Schema.STRING_SCHEMA, "x")


def test_extract_field_bad_syntax_config() -> None:
    with pytest.raises(ConfigError, match=r"field\.syntax\.version") as e:
        configured(ExtractFieldValue, field="a", **{"field.syntax.version": "V3"})
    assert e.value.name == "field.syntax.version"
    with pytest.raises(ConfigError, match="Incomplete backtick pair"):
        configured(ExtractFieldValue, field="`a.b", **{"field.syntax.version": "V2"})


# -- HoistField ---------------------------------------------------------------------------------
def test_hoist_field() -> None:
    t = configured(HoistFieldKey, field="magic")
    assert kept(t.apply(sink(key=42))).key == {"magic": 42}
    out = kept(t.apply(sink(key=42, key_schema=Schema.INT32_SCHEMA)))
    assert field_schema(out.key_schema, "magic") == Schema.INT32_SCHEMA
    assert out.key.get("magic") == 42
    out = kept(configured(HoistFieldValue, field="line").apply(sink(None, Schema.OPTIONAL_STRING_SCHEMA)))
    assert out.value.get("line") is None


# -- ValueToKey ---------------------------------------------------------------------------------
def test_value_to_key() -> None:
    t = configured(ValueToKey, fields="a,b")
    out = kept(t.apply(sink({"a": 1, "b": 2, "c": 3})))
    assert out.key == {"a": 1, "b": 2} and out.key_schema is None
    schema = (SchemaBuilder.struct().field("a", Schema.INT32_SCHEMA).field("b", Schema.INT32_SCHEMA)
              .field("c", Schema.INT32_SCHEMA).build())
    out = kept(t.apply(sink(Struct(schema).put("a", 1).put("b", 2).put("c", 3), schema)))
    assert [f.name for f in out.key_schema.fields] == ["a", "b"]
    assert out.key.get("a") == 1 and out.key.get("b") == 2
    with pytest.raises(DataError, match="Field does not exist: nope"):
        configured(ValueToKey, fields="nope").apply(sink(Struct(schema).put("a", 1).put("b", 2).put("c", 3), schema))


# -- SetSchemaMetadata --------------------------------------------------------------------------
def test_set_schema_metadata() -> None:
    schema = SchemaBuilder.struct().name("old").field("f", Schema.STRING_SCHEMA).optional().build()
    t = configured(SetSchemaMetadataValue, **{"schema.name": "foo", "schema.version": "42"})
    out = kept(t.apply(sink(Struct(schema).put("f", "x"), schema)))
    assert (out.value_schema.name, out.value_schema.version, out.value_schema.optional) == ("foo", 42, True)
    assert out.value.schema is out.value_schema and out.value.get("f") == "x"
    assert kept(t.apply(sink(None, schema))).value_schema == out.value_schema
    set_version = configured(SetSchemaMetadataKey, **{"schema.version": "3"})
    key = kept(set_version.apply(sink(key=1, key_schema=Schema.INT64_SCHEMA)))
    assert key.key_schema.version == 3 and key.key_schema.name is None and key.key == 1
    with pytest.raises(DataError, match=r"Schema required for \[updating schema metadata\]"):
        t.apply(sink({"f": 1}))
    with pytest.raises(ConfigError, match="Neither schema name nor version configured"):
        configured(SetSchemaMetadataValue)
    with pytest.raises(ConfigError, match=r"schema\.version") as e:
        configured(SetSchemaMetadataValue, **{"schema.version": "x"})
    assert e.value.name == "schema.version"
