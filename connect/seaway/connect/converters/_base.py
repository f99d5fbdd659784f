"""A converter usable for keys, values and headers alike, as Kafka's built-in converters are."""

from __future__ import annotations

import abc
from collections.abc import Mapping
from typing import Any

from seaway.connect.api.config.definition import ConfigDef
from seaway.connect.api.converter import CONVERTER_TYPE_CONFIG, Converter, ConverterType, HeaderConverter
from seaway.connect.api.data.schema import Schema, SchemaAndValue

__all__ = ["KeyValueHeaderConverter"]


class KeyValueHeaderConverter(Converter, HeaderConverter, abc.ABC):
    """Implements both interfaces: header methods delegate to the data methods.

    ``configure(configs, is_key)`` (converter use) and ``configure(configs)`` (header use, or
    with ``converter.type`` in ``configs``) both end in :meth:`_configure`.
    """

    converter_type: ConverterType = ConverterType.VALUE

    def configure(self, configs: Mapping[str, Any], is_key: bool | None = None) -> None:
        if is_key is not None:
            converter_type = ConverterType.KEY if is_key else ConverterType.VALUE
        else:
            converter_type = ConverterType(str(configs.get(CONVERTER_TYPE_CONFIG, "header")).strip().lower())
        props = dict(configs)
        props[CONVERTER_TYPE_CONFIG] = converter_type.value
        self.converter_type = converter_type
        self._configure(props)

    def _configure(self, props: Mapping[str, Any]) -> None:
        """Apply the (already type-tagged) props; the default accepts any."""
        self.config().parse(props)

    def config(self) -> ConfigDef:
        return ConfigDef()

    def from_connect_header(self, topic: str, header_key: str, schema: Schema | None,
                            value: Any) -> bytes | None:
        return self.from_connect_data(topic, schema, value)

    def to_connect_header(self, topic: str, header_key: str, value: bytes | None) -> SchemaAndValue:
        return self.to_connect_data(topic, value)
