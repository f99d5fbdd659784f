"""Logical types (Decimal, Date, Time, Timestamp) and the Values string form."""

import datetime
import decimal

import pytest
from seaway.connect.api import (
    DataError,
    Date,
    Decimal,
    Schema,
    SchemaBuilder,
    SchemaType,
    Time,
    Timestamp,
    Values,
)

D = decimal.Decimal


@pytest.mark.parametrize(("value", "scale", "wire"), [
    (D("0"), 0, b"\x00"),
    (D("1.27"), 2, b"\x7f"),
    (D("1.28"), 2, b"\x00\x80"),
    (D("-1.28"), 2, b"\x80"),
    (D("-1.29"), 2, b"\xff\x7f"),
    (D("-12.30"), 2, b"\xfb\x32"),
    (D("156"), 0, b"\x00\x9c"),
    (D("-0.001"), 3, b"\xff"),
])
def test_decimal_bytes_are_minimal_big_endian_twos_complement(value: D, scale: int, wire: bytes) -> None:
    schema = Decimal.schema(scale)
    assert Decimal.from_logical(schema, value) == wire
    back = Decimal.to_logical(schema, wire)
    assert back == value and back.as_tuple().exponent == -scale


def test_decimal_round_trips_large_and_negative_values_exactly() -> None:
    schema = Decimal.schema(10)
    for text in ("-98765432109876543210.0123456789", "12345678901234567890123456789.1", "-0.0000000001"):
        value = D(text)
        assert Decimal.to_logical(schema, Decimal.from_logical(schema, value)) == value


def test_decimal_schema_and_scale_rules() -> None:
    schema = Decimal.schema(2)
    assert (schema.type, schema.name, schema.version, dict(schema.parameters or {})) == (
        SchemaType.BYTES, "org.apache.kafka.connect.data.Decimal", 1, {"scale": "2"})
    # a lossless rescale is accepted
    assert Decimal.from_logical(schema, D("1.5")) == Decimal.from_logical(schema, D("1.50"))
    with pytest.raises(DataError, match="scale"):
        Decimal.from_logical(schema, D("1.555"))
    with pytest.raises(DataError):
        Decimal.from_logical(schema, D("NaN"))
    with pytest.raises(DataError, match="scale parameter"):
        Decimal.scale(SchemaBuilder.bytes().name(Decimal.LOGICAL_NAME).build())
    with pytest.raises(DataError, match="does not match"):
        Decimal.from_logical(Schema.BYTES_SCHEMA, D("1"))


def test_date_time_timestamp_round_trips() -> None:
    assert Date.from_logical(Date.SCHEMA, datetime.date(1970, 1, 2)) == 1
    assert Date.from_logical(Date.SCHEMA, datetime.date(1969, 12, 31)) == -1
    assert Date.to_logical(Date.SCHEMA, 19753) == datetime.date(2024, 1, 31)
    assert Time.from_logical(Time.SCHEMA, datetime.time(1, 2, 3, 456789)) == 3723456
    assert Time.to_logical(Time.SCHEMA, 3723456) == datetime.time(1, 2, 3, 456000)
    with pytest.raises(DataError):
        Time.to_logical(Time.SCHEMA, 86_400_000)
    aware = datetime.datetime(2024, 1, 31, 12, 0, 0, 123000, tzinfo=datetime.UTC)
    ms = Timestamp.from_logical(Timestamp.SCHEMA, aware)
    assert ms == 1706702400123
    assert Timestamp.to_logical(Timestamp.SCHEMA, ms) == aware
    assert Timestamp.from_logical(Timestamp.SCHEMA, aware.replace(tzinfo=None)) == ms  # naive = UTC
    plus2 = aware.astimezone(datetime.timezone(datetime.timedelta(hours=2)))
    assert Timestamp.from_logical(Timestamp.SCHEMA, plus2) == ms
    assert Timestamp.from_logical(Timestamp.SCHEMA, datetime.datetime(1969, 12, 31, 23, 59, 59, 999000)) == -1
    assert (Date.SCHEMA.type, Time.SCHEMA.type, Timestamp.SCHEMA.type) == (
        SchemaType.INT32, SchemaType.INT32, SchemaType.INT64)


@pytest.mark.parametrize(("text", "schema", "value"), [
    ("true", Schema.BOOLEAN_SCHEMA, True),
    ("false", Schema.BOOLEAN_SCHEMA, False),
    ("42", Schema.INT8_SCHEMA, 42),
    ("-300", Schema.INT16_SCHEMA, -300),
    ("70000", Schema.INT32_SCHEMA, 70000),
    ("5000000000", Schema.INT64_SCHEMA, 5000000000),
    ("1.5", Schema.FLOAT32_SCHEMA, 1.5),
    ("1e300", Schema.FLOAT64_SCHEMA, 1e300),
    ("hello world", Schema.STRING_SCHEMA, "hello world"),
    ("", Schema.STRING_SCHEMA, ""),
    ("{not a map", Schema.STRING_SCHEMA, "{not a map"),
    ("2024-01-31", Date.SCHEMA, datetime.date(2024, 1, 31)),
    ("10:15:30.250Z", Time.SCHEMA, datetime.time(10, 15, 30, 250000)),
    ("2024-01-31T10:15:30.250Z", Timestamp.SCHEMA,
     datetime.datetime(2024, 1, 31, 10, 15, 30, 250000, tzinfo=datetime.UTC)),
])
def test_parse_string_infers_types(text: str, schema: Schema, value: object) -> None:
    result = Values.parse_string(text)
    assert result.schema == schema and result.value == value


def test_parse_string_null_and_containers() -> None:
    assert Values.parse_string("null").schema is None and Values.parse_string("null").value is None
    assert Values.parse_string(None).value is None
    ints = Values.parse_string("[1, 2, 300]")
    assert ints.schema == SchemaBuilder.array(Schema.INT16_SCHEMA).build() and ints.value == [1, 2, 300]
    widened = Values.parse_string("[1,2.5]")
    assert widened.schema == SchemaBuilder.array(Schema.FLOAT32_SCHEMA).build()
    assert widened.value == [1.0, 2.5]
    strings = Values.parse_string('["a,b", "c\\"d"]')
    assert strings.value == ["a,b", 'c"d']
    mapping = Values.parse_string('{"a":1, "b":2}')
    assert mapping.schema == SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT8_SCHEMA).build()
    assert mapping.value == {"a": 1, "b": 2}
    mixed = Values.parse_string('[1,"x"]')
    assert mixed.schema is None and mixed.value == [1, "x"]
    with_null = Values.parse_string("[1,null]")
    assert with_null.value == [1, None] and with_null.schema.value_schema.optional  # type: ignore[union-attr]


def test_convert_to_string_round_trips_through_parse_string() -> None:
    values = [
        (Schema.INT32_SCHEMA, 12),
        (Schema.BOOLEAN_SCHEMA, True),
        (Schema.STRING_SCHEMA, "plain text"),
        (SchemaBuilder.array(Schema.STRING_SCHEMA).build(), ["a", 'q"uote', "c,d"]),
        (SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT8_SCHEMA).build(), {"x": 1, "y": 2}),
        (Date.SCHEMA, datetime.date(2020, 2, 29)),
        (Timestamp.SCHEMA, datetime.datetime(2020, 2, 29, 1, 2, 3, 4000, tzinfo=datetime.UTC)),
    ]
    for schema, value in values:
        text = Values.convert_to_string(schema, value)
        assert Values.parse_string(text).value == value, text
    assert Values.convert_to_string(None, None) is None
    assert Values.convert_to_string(Schema.BYTES_SCHEMA, b"\x00\x01") == "AAE="
    assert Values.convert_to_string(None, [1, "a", None]) == '[1,"a",null]'


def test_infer_schema() -> None:
    assert Values.infer_schema("x") == Schema.STRING_SCHEMA
    assert Values.infer_schema(1) == Schema.INT64_SCHEMA
    assert Values.infer_schema(True) == Schema.BOOLEAN_SCHEMA
    assert Values.infer_schema([1, 2]) == SchemaBuilder.array(Schema.INT64_SCHEMA).build()
    float_map = SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.FLOAT64_SCHEMA).build()
    assert Values.infer_schema({"a": 1.0}) == float_map
    assert Values.infer_schema([]) is None and Values.infer_schema(["a", 1]) is None
    assert Values.infer_schema(D("1.25")) == Decimal.schema(2)
