"""String, ByteArray, number and boolean converters, and SimpleHeaderConverter."""

import datetime
import struct

import pytest
from seaway.connect.api import DataError, Date, Schema, SchemaBuilder
from seaway.connect.converters import (
    BooleanConverter,
    ByteArrayConverter,
    DoubleConverter,
    FloatConverter,
    IntegerConverter,
    JsonConverter,
    LongConverter,
    ShortConverter,
    SimpleHeaderConverter,
    StringConverter,
)


def test_string_converter() -> None:
    c = StringConverter()
    c.configure({}, False)
    assert c.from_connect_data("t", Schema.STRING_SCHEMA, "h\u00e9") == "h\u00e9".encode()
    assert c.from_connect_data("t", None, 12) == b"12"
    assert c.from_connect_data("t", None, True) == b"true"
    assert c.from_connect_data("t", None, None) is None
    result = c.to_connect_data("t", "h\u00e9".encode())
    assert result.schema == Schema.OPTIONAL_STRING_SCHEMA and result.value == "h\u00e9"
    assert c.to_connect_data("t", None).value is None
    with pytest.raises(DataError):
        c.to_connect_data("t", b"\xff\xfe\xfa")


def test_string_converter_encoding() -> None:
    c = StringConverter()
    c.configure({"converter.encoding": "UTF-16BE"}, True)
    assert c.from_connect_data("t", None, "A") == b"\x00A"
    assert c.to_connect_data("t", b"\x00A").value == "A"
    latin = StringConverter()
    latin.configure({"converter.encoding": "ISO-8859-1"})
    assert latin.to_connect_header("t", "h", b"\xe9").value == "\u00e9"
    with pytest.raises(DataError):
        StringConverter().configure({"converter.encoding": "no-such-charset"}, False)


def test_byte_array_converter() -> None:
    c = ByteArrayConverter()
    c.configure({}, False)
    assert c.from_connect_data("t", Schema.BYTES_SCHEMA, b"\x00\x01") == b"\x00\x01"
    assert c.from_connect_data("t", None, bytearray(b"ab")) == b"ab"
    assert c.from_connect_data("t", None, None) is None
    with pytest.raises(DataError, match="Invalid schema type"):
        c.from_connect_data("t", Schema.STRING_SCHEMA, b"x")
    with pytest.raises(DataError, match="not compatible"):
        c.from_connect_data("t", None, "text")
    result = c.to_connect_data("t", b"raw")
    assert result.schema == Schema.OPTIONAL_BYTES_SCHEMA and result.value == b"raw"


@pytest.mark.parametrize(("cls", "value", "wire", "schema"), [
    (ShortConverter, -2, b"\xff\xfe", Schema.OPTIONAL_INT16_SCHEMA),
    (IntegerConverter, 258, b"\x00\x00\x01\x02", Schema.OPTIONAL_INT32_SCHEMA),
    (LongConverter, -1, b"\xff" * 8, Schema.OPTIONAL_INT64_SCHEMA),
    (FloatConverter, 1.5, struct.pack(">f", 1.5), Schema.OPTIONAL_FLOAT32_SCHEMA),
    (DoubleConverter, -0.1, struct.pack(">d", -0.1), Schema.OPTIONAL_FLOAT64_SCHEMA),
    (BooleanConverter, True, b"\x01", Schema.OPTIONAL_BOOLEAN_SCHEMA),
])
def test_number_converters_use_kafka_serializer_formats(cls: type, value: object, wire: bytes,
                                                        schema: Schema) -> None:
    c = cls()
    c.configure({}, False)
    assert c.from_connect_data("t", schema, value) == wire
    result = c.to_connect_data("t", wire)
    assert result.schema == schema and result.value == value
    assert c.from_connect_data("t", schema, None) is None
    assert c.to_connect_data("t", None).value is None
    with pytest.raises(DataError, match=r"Size of data|Failed|not compatible"):
        c.to_connect_data("t", wire + b"\x00")


def test_number_converters_reject_wrong_values() -> None:
    short = ShortConverter()
    short.configure({}, False)
    with pytest.raises(DataError):
        short.from_connect_data("t", None, 40000)
    with pytest.raises(DataError):
        short.from_connect_data("t", None, "1")
    with pytest.raises(DataError):
        short.from_connect_data("t", None, True)
    boolean = BooleanConverter()
    with pytest.raises(DataError, match="Unexpected byte"):
        boolean.to_connect_data("t", b"\x02")


def test_simple_header_converter_round_trips_with_inference() -> None:
    c = SimpleHeaderConverter()
    c.configure({})
    cases = [
        (Schema.STRING_SCHEMA, "hello", Schema.STRING_SCHEMA, "hello"),
        (Schema.INT32_SCHEMA, 42, Schema.INT8_SCHEMA, 42),
        (Schema.BOOLEAN_SCHEMA, False, Schema.BOOLEAN_SCHEMA, False),
        (Schema.FLOAT64_SCHEMA, 2.5, Schema.FLOAT32_SCHEMA, 2.5),
        (SchemaBuilder.array(Schema.STRING_SCHEMA).build(), ["a", "b"],
         SchemaBuilder.array(Schema.STRING_SCHEMA).build(), ["a", "b"]),
        (Date.SCHEMA, datetime.date(2024, 1, 31), Date.SCHEMA, datetime.date(2024, 1, 31)),
    ]
    for schema, value, read_schema, read_value in cases:
        data = c.from_connect_header("t", "h", schema, value)
        result = c.to_connect_header("t", "h", data)
        assert (result.schema, result.value) == (read_schema, read_value), data
    assert c.from_connect_header("t", "h", Schema.INT32_SCHEMA, 42) == b"42"
    assert c.from_connect_header("t", "h", None, None) is None
    assert c.to_connect_header("t", "h", None).value is None
    assert c.to_connect_header("t", "h", b"[unbalanced").value == "[unbalanced"
    with pytest.raises(DataError):
        c.to_connect_header("t", "h", b"\xff\xfe")


def test_json_converter_as_header_converter() -> None:
    c = JsonConverter()
    c.configure({"schemas.enable": "false"})
    assert c.converter_type.value == "header"
    assert c.from_connect_header("t", "h", Schema.INT32_SCHEMA, 5) == b"5"
    assert c.to_connect_header("t", "h", b'{"a":1}').value == {"a": 1}
