"""JsonConverter: byte-for-byte Kafka fixtures, round trips, decimals, nulls, schemaless mode, errors.

The expected bytes are what Kafka's JsonConverter (Jackson, compact) writes for the same
input: key order type, items/keys/values/fields, optional, name, version, doc, parameters,
default; "field" last in struct field schemas.
"""

import datetime
import decimal
import json
from typing import Any

import pytest
from seaway.connect.api import DataError, Date, Decimal, Schema, SchemaBuilder, Struct, Time, Timestamp
from seaway.connect.converters import JsonConverter

D = decimal.Decimal


def write(c: JsonConverter, schema: Schema | None, value: Any) -> bytes:
    data = c.from_connect_data("t", schema, value)
    assert data is not None
    return data


def converter(**props: str) -> JsonConverter:
    c = JsonConverter()
    c.configure(props, False)
    return c


STRUCT_SCHEMA = (SchemaBuilder.struct().name("com.example.User").version(2).doc("A user")
                 .field("id", Schema.INT32_SCHEMA)
                 .field("name", Schema.OPTIONAL_STRING_SCHEMA)
                 .field("active", Schema.BOOLEAN_SCHEMA)
                 .build())

FIXTURES: list[tuple[Schema | None, Any, bytes]] = [
    (Schema.INT32_SCHEMA, 12, b'{"schema":{"type":"int32","optional":false},"payload":12}'),
    (Schema.INT8_SCHEMA, -12, b'{"schema":{"type":"int8","optional":false},"payload":-12}'),
    (Schema.INT64_SCHEMA, 4398046511104,
     b'{"schema":{"type":"int64","optional":false},"payload":4398046511104}'),
    (Schema.FLOAT32_SCHEMA, 12.5, b'{"schema":{"type":"float","optional":false},"payload":12.5}'),
    (Schema.FLOAT64_SCHEMA, 12.34, b'{"schema":{"type":"double","optional":false},"payload":12.34}'),
    (Schema.BOOLEAN_SCHEMA, True, b'{"schema":{"type":"boolean","optional":false},"payload":true}'),
    (Schema.STRING_SCHEMA, "caf\u00e9 \"q\"", '{"schema":{"type":"string","optional":false},'
                                              '"payload":"caf\u00e9 \\"q\\""}'.encode()),
    (Schema.BYTES_SCHEMA, b"test-string",
     b'{"schema":{"type":"bytes","optional":false},"payload":"dGVzdC1zdHJpbmc="}'),
    (Schema.OPTIONAL_STRING_SCHEMA, None, b'{"schema":{"type":"string","optional":true},"payload":null}'),
    (SchemaBuilder.array(Schema.INT32_SCHEMA).build(), [1, 2, 3],
     b'{"schema":{"type":"array","items":{"type":"int32","optional":false},"optional":false},"payload":[1,2,3]}'),
    (SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT32_SCHEMA).build(), {"key1": 12, "key2": 15},
     b'{"schema":{"type":"map","keys":{"type":"string","optional":false},"values":{"type":"int32","optional":false},'
     b'"optional":false},"payload":{"key1":12,"key2":15}}'),
    (SchemaBuilder.map(Schema.INT32_SCHEMA, Schema.INT32_SCHEMA).build(), {1: 12, 2: 15},
     b'{"schema":{"type":"map","keys":{"type":"int32","optional":false},"values":{"type":"int32","optional":false},'
     b'"optional":false},"payload":[[1,12],[2,15]]}'),
    (STRUCT_SCHEMA, Struct(STRUCT_SCHEMA).put("id", 7).put("active", True),
     b'{"schema":{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"},'
     b'{"type":"string","optional":true,"field":"name"},{"type":"boolean","optional":false,"field":"active"}],'
     b'"optional":false,"name":"com.example.User","version":2,"doc":"A user"},'
     b'"payload":{"id":7,"name":null,"active":true}}'),
    (Decimal.schema(2), D("1.56"),
     b'{"schema":{"type":"bytes","optional":false,"name":"org.apache.kafka.connect.data.Decimal","version":1,'
     b'"parameters":{"scale":"2"}},"payload":"AJw="}'),
    (Date.SCHEMA, datetime.date(1997, 5, 19),
     b'{"schema":{"type":"int32","optional":false,"name":"org.apache.kafka.connect.data.Date","version":1},'
     b'"payload":10000}'),
    (Time.SCHEMA, datetime.time(0, 0, 14, 400000),
     b'{"schema":{"type":"int32","optional":false,"name":"org.apache.kafka.connect.data.Time","version":1},'
     b'"payload":14400}'),
    (Timestamp.SCHEMA, datetime.datetime(2009, 2, 13, 23, 31, 30, tzinfo=datetime.UTC),
     b'{"schema":{"type":"int64","optional":false,"name":"org.apache.kafka.connect.data.Timestamp","version":1},'
     b'"payload":1234567890000}'),
    (SchemaBuilder.int32().optional().default_value(42).build(), None,
     b'{"schema":{"type":"int32","optional":true,"default":42},"payload":42}'),
    (None, {"a": [1, 2.5, None], "b": "x"}, b'{"schema":null,"payload":{"a":[1,2.5,null],"b":"x"}}'),
]


@pytest.mark.parametrize(("schema", "value", "expected"), FIXTURES)
def test_writes_exactly_what_kafka_writes(schema: Schema | None, value: Any, expected: bytes) -> None:
    assert converter().from_connect_data("topic", schema, value) == expected


@pytest.mark.parametrize(("schema", "value", "expected"), FIXTURES)
def test_reads_kafka_bytes_back_to_the_same_value(schema: Schema | None, value: Any, expected: bytes) -> None:
    result = converter().to_connect_data("topic", expected)
    assert result.schema == schema
    if schema is not None and schema.default_value is not None and value is None:
        assert result.value == schema.default_value
    else:
        assert result.value == value


def test_reads_pretty_printed_envelopes_too() -> None:
    data = b'{ "payload": {"id": 1, "name": "n", "active": false},\n  "schema": ' + json.dumps(
        converter().as_json_schema(STRUCT_SCHEMA)).encode() + b" }"
    result = converter().to_connect_data("t", data)
    assert result.schema == STRUCT_SCHEMA
    assert result.value == Struct(STRUCT_SCHEMA).put("id", 1).put("name", "n").put("active", False)


def test_schema_is_parsed_once_and_reused() -> None:
    c = converter()
    data = [c.from_connect_data("t", STRUCT_SCHEMA, Struct(STRUCT_SCHEMA).put("id", i).put("active", True))
            for i in range(5)]
    results = [c.to_connect_data("t", d) for d in data]
    assert all(r.schema is results[0].schema for r in results)
    assert [r.value.get("id") for r in results] == list(range(5))


def test_fast_path_is_not_fooled_by_payload_text_inside_the_schema() -> None:
    schema = SchemaBuilder.string().parameter("a", "1").parameter("payload", "x").build()
    c = converter()
    data = write(c, schema, "value")
    assert b',"payload":"x"' in data
    for _ in range(2):
        result = c.to_connect_data("t", data)
        assert result.schema == schema and result.value == "value"


def test_decimal_numeric_format_writes_numbers_and_reads_both() -> None:
    numeric = converter(**{"decimal.format": "NUMERIC"})
    schema = Decimal.schema(3)
    data = write(numeric, schema, D("-12345678901234567890.125"))
    assert data.endswith(b',"payload":-12345678901234567890.125}')
    assert numeric.to_connect_data("t", data).value == D("-12345678901234567890.125")
    base64_written = converter().from_connect_data("t", schema, D("-0.5"))
    assert numeric.to_connect_data("t", base64_written).value == D("-0.500")
    assert converter().to_connect_data("t", data).value == D("-12345678901234567890.125")
    no_schema = converter(**{"decimal.format": "numeric", "schemas.enable": "false"})
    assert no_schema.from_connect_data("t", schema, D("1.5")) == b"1.500"


def test_decimals_inside_structs_stay_exact() -> None:
    schema = (SchemaBuilder.struct().field("price", Decimal.schema(2))
              .field("ratio", Schema.FLOAT64_SCHEMA).build())
    value = Struct(schema).put("price", D("99999999999999999.99")).put("ratio", 0.25)
    for props in ({}, {"decimal.format": "NUMERIC"}):
        c = converter(**props)
        back = c.to_connect_data("t", c.from_connect_data("t", schema, value))
        assert back.value == value and isinstance(back.value.get("ratio"), float)


def test_null_handling() -> None:
    c = converter()
    assert c.from_connect_data("t", None, None) is None            # tombstone stays a tombstone
    assert c.to_connect_data("t", None).schema is None and c.to_connect_data("t", None).value is None
    with pytest.raises(DataError, match="null value for field that is required"):
        c.from_connect_data("t", Schema.INT32_SCHEMA, None)
    with pytest.raises(DataError, match="Invalid null value for required INT32 field"):
        c.to_connect_data("t", b'{"schema":{"type":"int32","optional":false},"payload":null}')
    keep_null = converter(**{"replace.null.with.default": "false"})
    schema = SchemaBuilder.int32().optional().default_value(42).build()
    assert write(keep_null, schema, None).endswith(b'"payload":null}')
    assert keep_null.to_connect_data("t", b'{"schema":{"type":"int32","optional":true,"default":42},'
                                          b'"payload":null}').value is None


def test_struct_field_defaults_apply_to_nulls() -> None:
    schema = SchemaBuilder.struct().field("n", SchemaBuilder.int32().default_value(7).build()).build()
    data = write(converter(), schema, Struct(schema))
    assert data.endswith(b'"payload":{"n":7}}')
    assert b'"default":7' in data


def test_schemaless_mode() -> None:
    c = converter(**{"schemas.enable": "false"})
    assert c.from_connect_data("t", None, {"a": 1, "b": [True, None], "c": b"\x00"}) == \
        b'{"a":1,"b":[true,null],"c":"AA=="}'
    assert c.from_connect_data("t", None, {1: "x"}) == b'[[1,"x"]]'
    assert c.from_connect_data("t", Schema.STRING_SCHEMA, "x") == b'"x"'
    result = c.to_connect_data("t", b'{"i": 5, "f": 1.5, "o": {"x": [1, "y"]}, "n": null}')
    assert result.schema is None and result.value == {"i": 5, "f": 1.5, "o": {"x": [1, "y"]}, "n": None}
    assert isinstance(result.value["i"], int) and isinstance(result.value["f"], float)
    with pytest.raises(DataError, match="does not have corresponding schema type"):
        c.from_connect_data("t", None, datetime.date(2020, 1, 1))


def test_envelope_and_malformed_input_errors() -> None:
    c = converter()
    with pytest.raises(DataError, match='requires "schema" and "payload" fields'):
        c.to_connect_data("t", b'{"id": 1}')
    with pytest.raises(DataError, match='requires "schema" and "payload" fields'):
        c.to_connect_data("t", b'{"schema":null,"payload":1,"extra":2}')
    with pytest.raises(DataError, match="serialization error"):
        c.to_connect_data("t", b'{"schema": {"type": "int32"')
    with pytest.raises(DataError, match="serialization error"):
        converter(**{"schemas.enable": "false"}).to_connect_data("t", b"not json")
    with pytest.raises(DataError, match="Unknown schema type"):
        c.to_connect_data("t", b'{"schema":{"type":"uuid"},"payload":"x"}')
    with pytest.raises(DataError, match="Invalid JSON STRING for INT32"):
        c.to_connect_data("t", b'{"schema":{"type":"int32"},"payload":"12"}')
    with pytest.raises(DataError, match="out of range"):
        c.to_connect_data("t", b'{"schema":{"type":"int8"},"payload":1000}')
    with pytest.raises(DataError, match="Invalid type for INT32"):
        c.from_connect_data("t", Schema.INT32_SCHEMA, "12")
    other = SchemaBuilder.struct().field("id", Schema.INT32_SCHEMA).build()
    with pytest.raises(DataError, match="Mismatching schema"):
        c.from_connect_data("t", STRUCT_SCHEMA, Struct(other).put("id", 1))


def test_schema_json_round_trip_with_nested_types_and_defaults() -> None:
    inner = SchemaBuilder.struct().name("Inner").field("x", Schema.FLOAT32_SCHEMA).optional().build()
    schema = (SchemaBuilder.struct().name("Outer")
              .field("tags", SchemaBuilder.map(Schema.STRING_SCHEMA,
                                               SchemaBuilder.array(Schema.INT16_SCHEMA)))
              .field("inner", inner)
              .field("blob", SchemaBuilder.bytes().optional().default_value(b"\x01\x02").build())
              .field("when", Timestamp.builder().optional().build())
              .build())
    value = (Struct(schema).put("tags", {"a": [1, 2]}).put("inner", Struct(inner).put("x", 0.5))
             .put("when", datetime.datetime(2024, 5, 1, tzinfo=datetime.UTC)))
    c = converter()
    data = write(c, schema, value)
    assert b'"default":"AQI="' in data
    back = c.to_connect_data("t", data)
    assert back.schema == schema
    assert back.value.get("blob") == b"\x01\x02" and back.value.get("inner") == value.get("inner")
    assert back.value.get("when") == value.get("when") and back.value.get("tags") == {"a": [1, 2]}


def test_non_finite_floats_are_quoted_like_jackson() -> None:
    c = converter()
    data = write(c, Schema.FLOAT64_SCHEMA, float("nan"))
    assert data.endswith(b'"payload":"NaN"}')
    back = c.to_connect_data("t", c.from_connect_data("t", Schema.FLOAT64_SCHEMA, float("-inf")))
    assert back.value == float("-inf")


def test_config_definition() -> None:
    keys = JsonConverter().config().config_keys()
    assert keys["schemas.enable"].default is True and keys["schemas.cache.size"].default == 1000
    assert keys["decimal.format"].default == "BASE64" and keys["replace.null.with.default"].default is True
    from seaway.connect.api import ConfigError

    with pytest.raises(ConfigError):
        converter(**{"decimal.format": "HEX"})


def test_any_whitespace_layout_reads_through_the_schema_cache() -> None:
    """Python's json.dumps default (', ' and ': ') and pretty-printing hit the cache like Kafka's compact form."""
    c = converter()
    schema_json = c.as_json_schema(STRUCT_SCHEMA)
    dumps_options: list[dict[str, Any]] = [{}, {"separators": (",", ":")}, {"indent": 2}, {"indent": "\t"}]
    layouts = [json.dumps({"schema": schema_json, "payload": {"id": i, "name": None, "active": True}}, **kw).encode()
               for i, kw in enumerate(dumps_options)]
    layouts.append(b' \n{ "schema" :' + json.dumps(schema_json).encode()
                   + b'\r\n, "payload"\t: {"id": 9, "active": true} }\n ')
    results = [c.to_connect_data("t", data) for data in layouts for _ in range(2)]
    assert [r.value.get("id") for r in results] == [0, 0, 1, 1, 2, 2, 3, 3, 9, 9]
    assert all(r.schema == STRUCT_SCHEMA for r in results)
    assert results[1].schema is results[0].schema  # the second read of a layout came from the cache


def test_cached_schema_does_not_accept_what_a_full_parse_rejects() -> None:
    c = converter()
    good = b'{"schema": {"type": "int32", "optional": false}, "payload": 5}'
    # 1st read: full parse, schema cached; 2nd: schema cache; then the same-prefix shortcut
    assert [c.to_connect_data("t", good).value for _ in range(3)] == [5, 5, 5]
    for bad in (b'{"schema": {"type": "int32", "optional": false}, "payload": 5 6}',
                b'{"schema": {"type": "int32", "optional": false}, "payload": }',
                b'{"schema": {"type": "int32", "optional": false}, "payload": 5, "extra": 1}',
                b'{"schema": {"type": "int32", "optional": false}, "payload": "\xff"}',
                b'{"schema": {"type": "int32", "optional": false}, "payload": 5\x0b}'):
        with pytest.raises(DataError):
            c.to_connect_data("t", bad)
        assert c.to_connect_data("t", good).value == 5  # and the shortcut is primed again
    spaced = b'{"schema": {"type": "int32", "optional": false}, "payload": 6 \n}'
    assert c.to_connect_data("t", spaced).value == 6
    # a second "schema" after the payload wins in a full parse (as in Jackson): no shortcut
    later = c.to_connect_data("t", b'{"schema": {"type": "int32", "optional": false}, "payload": 5, "schema": null}')
    assert (later.schema, later.value) == (None, 5)
    # duplicate keys: the full parse decides (the last one wins, as Jackson and json.loads do)
    dup = b'{"schema": {"type": "int32", "optional": false}, "payload": 5, "payload": 7}'
    assert c.to_connect_data("t", dup).value == 7


def test_struct_field_errors_name_the_field() -> None:
    inner = SchemaBuilder.struct().name("Inner").field("x", Schema.INT16_SCHEMA).build()
    schema = (SchemaBuilder.struct().field("id", Schema.INT64_SCHEMA).field("inner", inner)
              .field("note", Schema.OPTIONAL_STRING_SCHEMA).field("ratio", Schema.FLOAT64_SCHEMA)
              .field("on", Schema.BOOLEAN_SCHEMA).build())
    c = converter()
    envelope = {"schema": c.as_json_schema(schema)}

    def read(payload: Any) -> Any:
        return c.to_connect_data("t", json.dumps({**envelope, "payload": payload}).encode()).value

    ok = {"id": 1, "inner": {"x": 2}, "note": None, "ratio": 3, "on": False}
    value = read(ok)
    assert value == Struct(schema).put("id", 1).put("inner", Struct(inner).put("x", 2)).put("ratio", 3.0) \
        .put("on", False)
    assert isinstance(value.get("ratio"), float)  # an integral JSON number still becomes a FLOAT64
    cases: list[tuple[dict[str, Any], str]] = [
             ({"id": "1"}, r"Invalid JSON STRING for INT64 field \(field 'id'\)"),
             ({"id": True}, r"Invalid JSON BOOLEAN for INT64 field \(field 'id'\)"),
             ({"id": 1 << 63}, r"out of range for INT64 \(field 'id'\)"),
             ({"inner": {"x": 40000}}, r"out of range for INT16 \(field 'inner\.x'\)"),
             ({"inner": None}, r"Invalid null value for required STRUCT field \(field 'inner'\)"),
             ({"inner": [1]}, r"Structs should be encoded as JSON objects.* \(field 'inner'\)"),
             ({"note": 5}, r"Invalid JSON NUMBER for STRING field \(field 'note'\)"),
             ({"ratio": "x"}, r"Invalid JSON STRING for FLOAT64 field \(field 'ratio'\)"),
             ({"on": 1}, r"Invalid JSON NUMBER for BOOLEAN field \(field 'on'\)"),
             ({"on": None}, r"Invalid null value for required BOOLEAN field \(field 'on'\)")]
    for change, message in cases:
        with pytest.raises(DataError, match=message):
            read({**ok, **change})
    with pytest.raises(DataError, match="Structs should be encoded as JSON objects"):
        read([1, 2])


def test_struct_field_defaults_and_nulls_follow_replace_null_with_default() -> None:
    schema = (SchemaBuilder.struct().field("n", SchemaBuilder.int32().optional().default_value(7).build())
              .field("s", Schema.OPTIONAL_STRING_SCHEMA).build())
    data = b'{"schema":' + json.dumps(converter().as_json_schema(schema)).encode() + b',"payload":{"n":null}}'
    assert converter().to_connect_data("t", data).value.get_without_default("n") == 7
    kept = converter(**{"replace.null.with.default": "false"}).to_connect_data("t", data).value
    assert kept.get_without_default("n") is None and kept.get_without_default("s") is None
