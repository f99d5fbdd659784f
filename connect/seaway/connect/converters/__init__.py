"""Seaway's built-in converters, with Kafka's behaviour and config names.

Kafka class names map to these (the plugin registry aliases them), e.g.
``org.apache.kafka.connect.json.JsonConverter`` -> :class:`JsonConverter`,
``org.apache.kafka.connect.storage.StringConverter`` -> :class:`StringConverter`.
"""

from seaway.connect.converters.json_converter import JsonConverter
from seaway.connect.converters.simple import (
    BooleanConverter,
    ByteArrayConverter,
    DoubleConverter,
    FloatConverter,
    IntegerConverter,
    LongConverter,
    ShortConverter,
    StringConverter,
)
from seaway.connect.converters.simple_header import SimpleHeaderConverter

__all__ = [
    "BooleanConverter",
    "ByteArrayConverter",
    "DoubleConverter",
    "FloatConverter",
    "IntegerConverter",
    "JsonConverter",
    "LongConverter",
    "ShortConverter",
    "SimpleHeaderConverter",
    "StringConverter",
]
