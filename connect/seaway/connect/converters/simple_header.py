"""SimpleHeaderConverter: Connect's default header converter (Kafka's ``SimpleHeaderConverter``).

Writes a header value as the UTF-8 bytes of its string form (:meth:`Values.convert_to_string`)
and reads bytes back with :meth:`Values.parse_string`, which infers the type: ``42`` becomes
an INT8, ``true`` a BOOLEAN, ``[1,2]`` an ARRAY, ``2024-01-31`` a Date, anything else a STRING.
The schema is not written, so a STRING header that looks like a number reads back as one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from seaway.connect.api.config.definition import ConfigDef
from seaway.connect.api.converter import HeaderConverter
from seaway.connect.api.data.schema import Schema, SchemaAndValue
from seaway.connect.api.data.values import Values
from seaway.connect.api.errors import DataError

__all__ = ["SimpleHeaderConverter"]


class SimpleHeaderConverter(HeaderConverter):
    """String-form header values with type inference on read. Needs no configuration."""

    def configure(self, configs: Mapping[str, Any]) -> None:
        return None

    def config(self) -> ConfigDef:
        return ConfigDef()

    def from_connect_header(self, topic: str, header_key: str, schema: Schema | None,
                            value: Any) -> bytes | None:
        text = Values.convert_to_string(schema, value)
        return None if text is None else text.encode("utf-8")

    def to_connect_header(self, topic: str, header_key: str, value: bytes | None) -> SchemaAndValue:
        if value is None:
            return SchemaAndValue.NULL
        try:
            text = value.decode("utf-8")
        except UnicodeDecodeError as e:
            raise DataError(f"Failed to deserialize value for header '{header_key}' on topic '{topic}'"
                            ) from e
        try:
            return Values.parse_string(text)
        except (DataError, ValueError, ArithmeticError):
            return SchemaAndValue(Schema.STRING_SCHEMA, text)
