"""JsonConverter's text, byte for byte as Kafka writes it, and its fast paths against its general ones.

The expected bytes are what Apache Kafka 4.3.1's JsonConverter wrote for the same values on
Java 25 (``test_converters_json_kafka.py`` compares thousands more against the JVM). The
other tests check that the shortcuts taken for speed (a Struct writer generated per schema,
the batch entry point, orjson before ``json`` when reading) answer exactly what the general
functions answer, errors included.
"""

from __future__ import annotations

import datetime
import decimal
import enum
import json
import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from seaway.connect.api import DataError, Date, Decimal, Schema, SchemaBuilder, Struct, Timestamp
from seaway.connect.converters import JsonConverter
from seaway.connect.converters.json_writer import JsonWriter

D = decimal.Decimal
UTC = datetime.UTC


def converter(**props: str) -> JsonConverter:
    c = JsonConverter()
    c.configure(props, False)
    return c


def array_of(schema: Schema) -> Schema:
    return SchemaBuilder.array(schema).build()


DOUBLES = [1e20, 12345678.0, 0.0001, 5e-324, 0.001, 9999999.0, 1e7, 1.5e-5, -2.5, 1.7976931348623157e308, 100.0,
           123456789012345680000.0]
FLOATS = [0.1, 1e40, 1.4e-45, 4.0e12, 16777217.0, 3.4028234663852886e38, 1e-3, 0.3333333333, 2.5e-7]
TEXT = 'q"b\\s/ \x00\x1f\n\t\b\f\r\x7f\u2028\u00e9\u65e5\U0001f600\ud800!'
ODD_NAMES = (SchemaBuilder.struct().name("n\x00\U0001f600").field("\x1f", Schema.FLOAT32_SCHEMA).build())

KAFKA_WRITES: list[tuple[dict[str, str], Schema | None, Any, bytes]] = [
    ({}, array_of(Schema.FLOAT64_SCHEMA), DOUBLES,
     b'{"schema":{"type":"array","items":{"type":"double","optional":false},"optional":false},"payload":[1.0E20,'
     b'1.2345678E7,1.0E-4,4.9E-324,0.001,9999999.0,1.0E7,1.5E-5,-2.5,1.7976931348623157E308,100.0,'
     b'1.2345678901234568E20]}'),
    ({}, array_of(Schema.FLOAT32_SCHEMA), FLOATS,
     b'{"schema":{"type":"array","items":{"type":"float","optional":false},"optional":false},"payload":[0.1,'
     b'"Infinity",1.4E-45,4.0E12,1.6777216E7,3.4028235E38,0.001,0.33333334,2.5E-7]}'),
    ({}, Schema.STRING_SCHEMA, TEXT,
     b'{"schema":{"type":"string","optional":false},"payload":"q\\"b\\\\s/ \\u0000\\u001F\\n\\t\\b\\f\\r\x7f'
     b'\xe2\x80\xa8\xc3\xa9\xe6\x97\xa5\\uD83D\\uDE00\\uD800!"}'),
    ({"decimal.format": "NUMERIC"}, array_of(Decimal.schema(10)),
     [D("1E-10"), D("12345678901234567890.0123456789"), D("-0.5000000000")],
     b'{"schema":{"type":"array","items":{"type":"bytes","optional":false,"name":"org.apache.kafka.connect.data.'
     b'Decimal","version":1,"parameters":{"scale":"10"}},"optional":false},"payload":[1E-10,'
     b'12345678901234567890.0123456789,-0.5000000000]}'),
    ({"decimal.format": "NUMERIC"}, Decimal.schema(-2), D("1.2E+3"),
     b'{"schema":{"type":"bytes","optional":false,"name":"org.apache.kafka.connect.data.Decimal","version":1,'
     b'"parameters":{"scale":"-2"}},"payload":1.2E+3}'),
    ({}, Decimal.schema(2), D("-2.00"),
     b'{"schema":{"type":"bytes","optional":false,"name":"org.apache.kafka.connect.data.Decimal","version":1,'
     b'"parameters":{"scale":"2"}},"payload":"/zg="}'),
    ({}, SchemaBuilder.map(Schema.OPTIONAL_STRING_SCHEMA, Schema.INT32_SCHEMA).build(), {None: 1},
     b'{"schema":{"type":"map","keys":{"type":"string","optional":true},"values":{"type":"int32","optional":false},'
     b'"optional":false},"payload":{"null":1}}'),
    ({}, SchemaBuilder.float64().optional().default_value(1e20).build(), None,
     b'{"schema":{"type":"double","optional":true,"default":1.0E20},"payload":1.0E20}'),
    ({}, ODD_NAMES, Struct(ODD_NAMES).put("\x1f", 1e10),
     b'{"schema":{"type":"struct","fields":[{"type":"float","optional":false,"field":"\\u001F"}],"optional":false,'
     b'"name":"n\\u0000\\uD83D\\uDE00"},"payload":{"\\u001F":1.0E10}}'),
    ({"schemas.enable": "false"}, None, {"a": [1e-7, 2.5, 0.0], "\U0001f600": "\x01"},
     b'{"a":[1.0E-7,2.5,0.0],"\\uD83D\\uDE00":"\\u0001"}'),
]


@pytest.mark.parametrize(("props", "schema", "value", "expected"), KAFKA_WRITES)
def test_floats_strings_and_decimals_are_written_as_kafka_writes_them(
        props: dict[str, str], schema: Schema | None, value: Any, expected: bytes) -> None:
    c = converter(**props)
    assert c.from_connect_data("t", schema, value) == expected
    assert c.from_connect_values("t", schema, [value]) == [expected]


def test_what_kafka_wrote_reads_back() -> None:
    c = converter()
    assert c.to_connect_data("t", KAFKA_WRITES[0][3]).value == DOUBLES
    assert c.to_connect_data("t", KAFKA_WRITES[2][3]).value == TEXT
    read = c.to_connect_data("t", KAFKA_WRITES[8][3])  # a NUL in the schema's name: the reader compiles too
    assert read.schema == ODD_NAMES and read.value.get("\x1f") == 1e10
    assert [*converter(**{"decimal.format": "NUMERIC"}).to_connect_data("t", KAFKA_WRITES[3][3]).value] == \
        KAFKA_WRITES[3][2]


ROW = (SchemaBuilder.struct().name("orders").field("id", Schema.INT64_SCHEMA)
       .field("name", Schema.OPTIONAL_STRING_SCHEMA).field("qty", SchemaBuilder.int32().optional().default_value(-1))
       .field("price", Schema.OPTIONAL_FLOAT64_SCHEMA).field("ok", Schema.BOOLEAN_SCHEMA)
       .field("created", Timestamp.builder().optional().build()).field("day", Date.builder().optional().build())
       .field("amount", Decimal.builder(2).optional().build()).build())


@pytest.mark.parametrize("props", [{}, {"schemas.enable": "false"}, {"decimal.format": "NUMERIC"},
                                   {"replace.null.with.default": "false"}])
def test_batch_entry_point_writes_the_same_bytes_as_one_call_per_value(props: dict[str, str]) -> None:
    c = converter(**props)
    t0 = datetime.datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
    rows = [Struct(ROW).put("id", i).put("name", None if i % 3 else f"n{i}\u00e9").put("price", i * 1e5 + 0.5)
            .put("ok", i % 2 == 0).put("created", t0 + datetime.timedelta(milliseconds=i))
            .put("day", datetime.date(2024, 1, 1 + i)).put("amount", D(i) / 4) for i in range(20)]
    assert c.from_connect_values("t", ROW, rows) == [c.from_connect_data("t", ROW, r) for r in rows]
    maps: list[Any] = [{"a": i, "b": [None, 1.5e-9]} for i in range(3)] + [None]
    assert c.from_connect_values("t", None, maps) == [c.from_connect_data("t", None, m) for m in maps]
    with pytest.raises(DataError, match="null value for field that is required"):
        c.from_connect_values("t", Schema.INT32_SCHEMA, [1, None])


class Colour(enum.IntEnum):
    RED = 1


class Text(str):
    pass


class Real(float):
    pass


INT_VALUES = st.one_of(st.integers(min_value=-(1 << 64), max_value=1 << 64), st.booleans(), st.none(),
                       st.sampled_from([Colour.RED, 1.0, "1"]))
FLOAT_VALUES = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-(1 << 70), 1 << 70),
                         st.none(), st.sampled_from([Real(1e20), Real(0.5), True, "x"]))
TEXT_VALUES = st.one_of(st.text(), st.none(), st.sampled_from([Text("a\x00b"), b"x", 5]))
MOMENTS = st.datetimes(timezones=st.one_of(st.none(), st.just(UTC),
                                           st.just(datetime.timezone(datetime.timedelta(hours=-5)))))
TIME_VALUES = st.one_of(MOMENTS, st.none(), st.dates())
DATE_VALUES = st.one_of(st.dates(), st.none(), MOMENTS)
FIELD_SCHEMAS = [("i8", Schema.INT8_SCHEMA, INT_VALUES), ("i32", Schema.OPTIONAL_INT32_SCHEMA, INT_VALUES),
                 ("i64", SchemaBuilder.int64().optional().default_value(7).build(), INT_VALUES),
                 ("f64", Schema.OPTIONAL_FLOAT64_SCHEMA, FLOAT_VALUES), ("f32", Schema.FLOAT32_SCHEMA, FLOAT_VALUES),
                 ("s", Schema.OPTIONAL_STRING_SCHEMA, TEXT_VALUES),
                 ("b", Schema.OPTIONAL_BOOLEAN_SCHEMA, st.one_of(st.booleans(), st.none(), st.just(1))),
                 ("ts", Timestamp.builder().optional().build(), TIME_VALUES),
                 ("d", Date.builder().optional().build(), DATE_VALUES)]


def _outcome(fn: Any, value: Any) -> str:
    try:
        return str(fn(value))
    except DataError as e:
        return f"DataError: {e}"
    except (TypeError, AttributeError, ValueError, OverflowError) as e:  # what the general function raises
        return type(e).__name__


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_generated_struct_writer_answers_what_the_field_functions_answer(data: st.DataObject) -> None:
    """Each field's inline fast path (exact int, str, float, bool, aware datetime, date) vs its general function."""
    for replace_null in (True, False):
        writer = JsonWriter(replace_null_with_default=replace_null)
        for name, field_schema, values in FIELD_SCHEMAS:
            value = data.draw(values, label=name)
            schema = SchemaBuilder.struct().field("x", field_schema).build()
            struct = Struct.from_valid_values(schema, [value])  # unvalidated: wrong types reach the writer
            general = _outcome(writer.value_fn(field_schema), value)
            expected = general if general.startswith(("DataError", "TypeError", "Attr", "Value", "Overflow")) \
                else '{"x":' + general + "}"
            assert _outcome(writer.value_fn(schema), struct) == expected, (name, value)


def _read_slowly(c: JsonConverter, data: bytes) -> str:
    """What the general path (``json`` parse of the whole envelope, the schema's json reader) answers."""
    try:
        read = c._to_connect_slow(data)
    except DataError as e:
        return f"DataError: {e}"
    return repr((read.schema, read.value))


def _read(c: JsonConverter, data: bytes) -> str:
    try:
        read = c.to_connect_data("t", data)
    except DataError as e:
        return f"DataError: {e}"
    return repr((read.schema, read.value))


JSON_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-(1 << 80), 1 << 80), st.floats(allow_nan=False),
                         st.text(), st.sampled_from([1e400, "NaN", 2 ** 64, -(2 ** 63) - 1, 0.1]))
PAYLOADS = st.recursive(JSON_SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                              st.dictionaries(st.text(max_size=3), inner, max_size=3)),
                        max_leaves=8)
READ_SCHEMA = (SchemaBuilder.struct().field("i", Schema.OPTIONAL_INT64_SCHEMA)
               .field("f", Schema.OPTIONAL_FLOAT64_SCHEMA)
               .field("s", Schema.OPTIONAL_STRING_SCHEMA).field("ts", Timestamp.builder().optional().build())
               .field("a", SchemaBuilder.array(Schema.OPTIONAL_INT32_SCHEMA).optional().build())
               .field("m", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.OPTIONAL_FLOAT32_SCHEMA).optional().build())
               .build())
DECIMAL_SCHEMA = SchemaBuilder.struct().field("p", Decimal.builder(3).optional().build()).build()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fields=st.fixed_dictionaries({}, optional={"i": PAYLOADS, "f": PAYLOADS, "s": PAYLOADS, "ts": PAYLOADS,
                                                  "a": PAYLOADS, "m": PAYLOADS}),
       price=st.one_of(st.decimals(allow_nan=False, allow_infinity=False, places=3), st.none(), JSON_SCALARS),
       plain=PAYLOADS)
def test_orjson_first_reads_exactly_what_json_reads(fields: dict[str, Any], price: Any, plain: Any) -> None:
    """orjson parses payloads first; values and errors must be json's, also for big integers, NaN, 1e400, decimals."""
    for props in ({}, {"decimal.format": "NUMERIC"}):
        c = converter(**props)
        schema_text = json.dumps(c.as_json_schema(READ_SCHEMA))
        data = ('{"schema":' + schema_text + ',"payload":' + json.dumps(fields) + "}").encode()
        for _ in range(3):  # the first read fills the caches, later ones take the shortcuts
            assert _read(c, data) == _read_slowly(c, data)
        decimal_value = f"{price:f}" if isinstance(price, decimal.Decimal) else json.dumps(price)
        data = ('{"schema":' + json.dumps(c.as_json_schema(DECIMAL_SCHEMA)) + ',"payload":{"p":' + decimal_value
                + "}}").encode()
        for _ in range(3):
            assert _read(c, data) == _read_slowly(c, data)
    plain_text = json.dumps(plain).encode()
    schemaless = converter(**{"schemas.enable": "false"})
    expected = repr(json.loads(plain_text))
    assert repr(schemaless.to_connect_data("t", plain_text).value) == expected
    envelope = b'{"schema":null,"payload":' + plain_text + b"}"
    assert repr(converter().to_connect_data("t", envelope).value) == expected


def test_numbers_beyond_64_bits_and_non_finite_literals_read_as_json_reads_them() -> None:
    plain = converter(**{"schemas.enable": "false"})
    big = 123456789012345678901234567890
    assert plain.to_connect_data("t", f'{{"n":{big},"m":-{big}}}'.encode()).value == {"n": big, "m": -big}
    assert math.isinf(plain.to_connect_data("t", b"[1e400]").value[0])
    assert math.isnan(plain.to_connect_data("t", b"NaN").value)
    c = converter()
    schema = c.as_json_schema(SchemaBuilder.struct().field("p", Decimal.schema(3)).build())
    data = ('{"schema":' + json.dumps(schema) + ',"payload":{"p":0.1}}').encode()
    for _ in range(3):  # a NUMERIC decimal stays exact (never through a float)
        assert c.to_connect_data("t", data).value.get("p") == D("0.100")
    with pytest.raises(DataError, match="out of range for INT64"):
        c.to_connect_data("t", b'{"schema":{"type":"int64"},"payload":18446744073709551616}')
