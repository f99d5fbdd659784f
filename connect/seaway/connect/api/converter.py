"""Converters: Connect data <-> bytes of Kafka keys, values, headers (``org.apache.kafka.connect.storage``).

The worker gives each task its own key, value and header converter instances, configured
with the ``key.converter.*`` / ``value.converter.*`` / ``header.converter.*`` props (prefix
stripped, plus ``converter.type``). A converter instance is therefore used by one task
thread; it need not be thread-safe, but must be fast: it runs once per record.

``from_connect_data`` returns ``None`` for a null (tombstone) value when the format allows it;
``to_connect_data`` of ``None`` bytes returns a null value. Bad input raises ``DataError``.
"""

from __future__ import annotations

import abc
import enum
from collections.abc import Mapping
from typing import Any

from seaway.connect.api.config.definition import ConfigDef
from seaway.connect.api.data.schema import Schema, SchemaAndValue
from seaway.connect.api.headers import Headers

__all__ = ["CONVERTER_TYPE_CONFIG", "Converter", "ConverterType", "HeaderConverter", "SchemaAndValue"]

CONVERTER_TYPE_CONFIG = "converter.type"
"""The key through which the worker tells a converter whether it handles keys, values or headers."""


class ConverterType(enum.Enum):
    KEY = "key"
    VALUE = "value"
    HEADER = "header"


class Converter(abc.ABC):
    """Kafka's ``Converter``: translates record keys or values."""

    @abc.abstractmethod
    def configure(self, configs: Mapping[str, Any], is_key: bool) -> None:
        """Called once before use; ``is_key`` says whether this instance converts keys."""

    @abc.abstractmethod
    def from_connect_data(self, topic: str, schema: Schema | None, value: Any,
                          headers: Headers | None = None) -> bytes | None:
        """Serialize a Connect value for ``topic``. ``headers`` may be modified (e.g. to add a schema id)."""

    @abc.abstractmethod
    def to_connect_data(self, topic: str, value: bytes | None,
                        headers: Headers | None = None) -> SchemaAndValue:
        """Deserialize bytes read from ``topic`` into a schema and value."""

    def config(self) -> ConfigDef:
        """The converter's config keys (for validation and documentation)."""
        return ConfigDef()

    def close(self) -> None:
        """Release resources (e.g. a schema-registry client). Default: nothing."""
        return


class HeaderConverter(abc.ABC):
    """Kafka's ``HeaderConverter``: translates header values."""

    @abc.abstractmethod
    def configure(self, configs: Mapping[str, Any]) -> None:
        """Called once before use."""

    @abc.abstractmethod
    def from_connect_header(self, topic: str, header_key: str, schema: Schema | None,
                            value: Any) -> bytes | None:
        """Serialize a header value."""

    @abc.abstractmethod
    def to_connect_header(self, topic: str, header_key: str, value: bytes | None) -> SchemaAndValue:
        """Deserialize a header value."""

    def config(self) -> ConfigDef:
        return ConfigDef()

    def close(self) -> None:
        """Release resources. Default: nothing."""
        return
