"""StringConverter, ByteArrayConverter and the number converters (Kafka's serializer formats).

================  =================================  ==================================
Converter         writes                             reads (schema)
================  =================================  ==================================
StringConverter   ``str(value)`` in                  OPTIONAL_STRING
                  ``converter.encoding`` (UTF-8)
ByteArray...      bytes as they are                  OPTIONAL_BYTES
Short/Integer/    2/4/8-byte big-endian two's        OPTIONAL_INT16/32/64
Long...           complement
Float/Double...   4/8-byte IEEE 754 big-endian       OPTIONAL_FLOAT32/64
Boolean...        one byte, 0 or 1                   OPTIONAL_BOOLEAN
================  =================================  ==================================

``None`` is a null (tombstone) both ways. Each also works as a header converter.
"""

from __future__ import annotations

import codecs
import struct
from collections.abc import Mapping
from typing import Any, ClassVar

from seaway.connect.api.config.definition import ConfigDef
from seaway.connect.api.config.types import ConfigType, Importance
from seaway.connect.api.config.validators import ValidString
from seaway.connect.api.converter import CONVERTER_TYPE_CONFIG
from seaway.connect.api.data.schema import Schema, SchemaAndValue, SchemaType
from seaway.connect.api.errors import DataError
from seaway.connect.api.headers import Headers
from seaway.connect.converters._base import KeyValueHeaderConverter

__all__ = [
    "BooleanConverter",
    "ByteArrayConverter",
    "DoubleConverter",
    "FloatConverter",
    "IntegerConverter",
    "LongConverter",
    "ShortConverter",
    "StringConverter",
]

ENCODING_CONFIG = "converter.encoding"


def _type_key() -> ConfigDef:
    return ConfigDef().define(CONVERTER_TYPE_CONFIG, ConfigType.STRING, "value",
                              ValidString.in_("key", "value", "header"), Importance.LOW,
                              "How this converter will be used.")


class StringConverter(KeyValueHeaderConverter):
    """Values as text. Writing ignores the schema (any value becomes ``str(value)``)."""

    CONFIG_DEF: ClassVar[ConfigDef] = _type_key().define(
        ENCODING_CONFIG, ConfigType.STRING, "UTF-8", None, Importance.HIGH,
        "The name of the character encoding used to convert between strings and bytes.")

    def __init__(self) -> None:
        self.encoding = "utf-8"

    def config(self) -> ConfigDef:
        return self.CONFIG_DEF

    def _configure(self, props: Mapping[str, Any]) -> None:
        encoding = self.CONFIG_DEF.parse(props)[ENCODING_CONFIG]
        try:
            self.encoding = codecs.lookup(encoding).name
        except LookupError:
            raise DataError(f"Unknown converter.encoding: {encoding}") from None

    def from_connect_data(self, topic: str, schema: Schema | None, value: Any,
                          headers: Headers | None = None) -> bytes | None:
        if value is None:
            return None
        text = ("true" if value else "false") if isinstance(value, bool) else str(value)
        try:
            return text.encode(self.encoding)
        except UnicodeEncodeError as e:
            raise DataError(f"Failed to serialize to a string: {e}") from e

    def to_connect_data(self, topic: str, value: bytes | None,
                        headers: Headers | None = None) -> SchemaAndValue:
        if value is None:
            return SchemaAndValue(Schema.OPTIONAL_STRING_SCHEMA, None)
        try:
            return SchemaAndValue(Schema.OPTIONAL_STRING_SCHEMA, value.decode(self.encoding))
        except UnicodeDecodeError as e:
            raise DataError(f"Failed to deserialize string: {e}") from e


class ByteArrayConverter(KeyValueHeaderConverter):
    """Bytes passed through untouched: the cheapest converter, for opaque payloads."""

    def from_connect_data(self, topic: str, schema: Schema | None, value: Any,
                          headers: Headers | None = None) -> bytes | None:
        if schema is not None and schema.type is not SchemaType.BYTES:
            raise DataError(f"Invalid schema type for ByteArrayConverter: {schema.type.name}")
        if value is None:
            return None
        if isinstance(value, bytes):
            return value
        if isinstance(value, bytearray | memoryview):
            return bytes(value)
        raise DataError(f"ByteArrayConverter is not compatible with objects of type {type(value).__name__}")

    def to_connect_data(self, topic: str, value: bytes | None,
                        headers: Headers | None = None) -> SchemaAndValue:
        return SchemaAndValue(Schema.OPTIONAL_BYTES_SCHEMA, value)


class _NumberConverter(KeyValueHeaderConverter):
    """A fixed-width number in Kafka's serializer format (``struct`` big-endian)."""

    FORMAT: ClassVar[struct.Struct]
    SCHEMA: ClassVar[Schema]
    KIND: ClassVar[str]

    def from_connect_data(self, topic: str, schema: Schema | None, value: Any,
                          headers: Headers | None = None) -> bytes | None:
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, self._accepts()):
            raise DataError(f"Failed to serialize to {self.KIND}: {type(value).__name__} {value!r}")
        try:
            return self.FORMAT.pack(value)
        except struct.error as e:
            raise DataError(f"Failed to serialize to {self.KIND}: {e}") from e

    def _accepts(self) -> tuple[type, ...]:
        return (int,) if self.SCHEMA.type.name.startswith("INT") else (int, float)

    def to_connect_data(self, topic: str, value: bytes | None,
                        headers: Headers | None = None) -> SchemaAndValue:
        if value is None:
            return SchemaAndValue(self.SCHEMA, None)
        if len(value) != self.FORMAT.size:
            raise DataError(f"Size of data received by {self.KIND}Deserializer is not {self.FORMAT.size}")
        return SchemaAndValue(self.SCHEMA, self.FORMAT.unpack(value)[0])


class ShortConverter(_NumberConverter):
    FORMAT = struct.Struct(">h")
    SCHEMA = Schema.OPTIONAL_INT16_SCHEMA
    KIND = "Short"


class IntegerConverter(_NumberConverter):
    FORMAT = struct.Struct(">i")
    SCHEMA = Schema.OPTIONAL_INT32_SCHEMA
    KIND = "Integer"


class LongConverter(_NumberConverter):
    FORMAT = struct.Struct(">q")
    SCHEMA = Schema.OPTIONAL_INT64_SCHEMA
    KIND = "Long"


class FloatConverter(_NumberConverter):
    FORMAT = struct.Struct(">f")
    SCHEMA = Schema.OPTIONAL_FLOAT32_SCHEMA
    KIND = "Float"


class DoubleConverter(_NumberConverter):
    FORMAT = struct.Struct(">d")
    SCHEMA = Schema.OPTIONAL_FLOAT64_SCHEMA
    KIND = "Double"


class BooleanConverter(KeyValueHeaderConverter):
    """One byte: 0 is false, 1 is true (Kafka's ``BooleanSerializer``)."""

    def from_connect_data(self, topic: str, schema: Schema | None, value: Any,
                          headers: Headers | None = None) -> bytes | None:
        if value is None:
            return None
        if not isinstance(value, bool):
            raise DataError(f"BooleanConverter is not compatible with objects of type {type(value).__name__}")
        return b"\x01" if value else b"\x00"

    def to_connect_data(self, topic: str, value: bytes | None,
                        headers: Headers | None = None) -> SchemaAndValue:
        if value is None:
            return SchemaAndValue(Schema.OPTIONAL_BOOLEAN_SCHEMA, None)
        if len(value) != 1:
            raise DataError("Size of data received by BooleanDeserializer is not 1")
        if value[0] not in (0, 1):
            raise DataError(f"Unexpected byte received by BooleanDeserializer: {value[0]}")
        return SchemaAndValue(Schema.OPTIONAL_BOOLEAN_SCHEMA, value[0] == 1)
