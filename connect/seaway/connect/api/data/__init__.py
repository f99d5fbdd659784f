"""Connect's data model: schemas, structs, logical types, values (``org.apache.kafka.connect.data``)."""

from seaway.connect.api.data.builder import SchemaBuilder
from seaway.connect.api.data.java_text import java_string
from seaway.connect.api.data.logical import Date, Decimal, Time, Timestamp
from seaway.connect.api.data.schema import (
    ConnectSchema,
    Field,
    Schema,
    SchemaAndValue,
    SchemaType,
    validate_value,
)
from seaway.connect.api.data.struct import Struct
from seaway.connect.api.data.values import Values

__all__ = [
    "ConnectSchema",
    "Date",
    "Decimal",
    "Field",
    "Schema",
    "SchemaAndValue",
    "SchemaBuilder",
    "SchemaType",
    "Struct",
    "Time",
    "Timestamp",
    "Values",
    "java_string",
    "validate_value",
]
