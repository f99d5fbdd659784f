"""Connect schemas: immutable, hashable descriptions of keys and values.

A :class:`Schema` is Kafka Connect's ``ConnectSchema``: a type plus optionality, default,
name, version, doc and string parameters, with ``key_schema``/``value_schema`` for MAP and
ARRAY and ordered ``fields`` for STRUCT. Schemas never change after construction and are
hashable, so converters and transforms cache per schema (``dict[Schema, ...]``); equality is
structural, as in Kafka. The hash leaves out ``default_value`` (which may be a list or dict),
equality does not.

Python representation of each type (what :func:`validate_value` accepts):

=========  ==============================================================
INT8..64   ``int`` (not ``bool``) within the type's two's-complement range
FLOAT32/64 ``float``
BOOLEAN    ``bool``
STRING     ``str``
BYTES      ``bytes`` or ``bytearray``
ARRAY      ``list`` or ``tuple``, elements valid for ``value_schema``
MAP        ``dict``, keys valid for ``key_schema``, values for ``value_schema``
STRUCT     :class:`~seaway.connect.api.data.struct.Struct` with an equal schema
=========  ==============================================================

Logical types are recognised by schema name, as in Kafka: Decimal -> ``decimal.Decimal``,
Date -> ``datetime.date`` (not ``datetime``), Time -> ``datetime.time``, Timestamp ->
``datetime.datetime``.
"""

from __future__ import annotations

import datetime
import decimal
import enum
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field as dc_field
from types import MappingProxyType
from typing import Any, ClassVar

from seaway.connect.api.errors import DataError

__all__ = [
    "DATE_LOGICAL_NAME",
    "DECIMAL_LOGICAL_NAME",
    "TIMESTAMP_LOGICAL_NAME",
    "TIME_LOGICAL_NAME",
    "ConnectSchema",
    "Field",
    "Schema",
    "SchemaAndValue",
    "SchemaType",
    "validate_value",
]

DECIMAL_LOGICAL_NAME = "org.apache.kafka.connect.data.Decimal"
DATE_LOGICAL_NAME = "org.apache.kafka.connect.data.Date"
TIME_LOGICAL_NAME = "org.apache.kafka.connect.data.Time"
TIMESTAMP_LOGICAL_NAME = "org.apache.kafka.connect.data.Timestamp"


class SchemaType(enum.Enum):
    """Kafka's ``Schema.Type``; the value is the lowercase name used in JSON schemas."""

    INT8 = "int8"
    INT16 = "int16"
    INT32 = "int32"
    INT64 = "int64"
    FLOAT32 = "float32"
    FLOAT64 = "float64"
    BOOLEAN = "boolean"
    STRING = "string"
    BYTES = "bytes"
    ARRAY = "array"
    MAP = "map"
    STRUCT = "struct"

    @property
    def is_primitive(self) -> bool:
        return self not in (SchemaType.ARRAY, SchemaType.MAP, SchemaType.STRUCT)


@dataclass(frozen=True, slots=True)
class Field:
    """A named, positioned member of a STRUCT schema."""

    name: str
    index: int
    schema: Schema


@dataclass(frozen=True, slots=True, eq=False)
class Schema:
    """An immutable Connect schema (Kafka's ``ConnectSchema``); build one with ``SchemaBuilder``.

    ``parameters`` is ``None`` when no parameter was ever set (as in Kafka, which matters
    for the JSON schema encoding). ``fields`` raises :class:`DataError` on non-STRUCT schemas.
    """

    type: SchemaType
    optional: bool = False
    default_value: Any = None
    name: str | None = None
    version: int | None = None
    doc: str | None = None
    parameters: Mapping[str, str] | None = None
    field_list: tuple[Field, ...] = ()
    key_schema: Schema | None = None
    value_schema: Schema | None = None
    _by_name: Mapping[str, Field] = dc_field(init=False, repr=False)
    _key: tuple[Any, ...] = dc_field(init=False, repr=False)
    _hash: int = dc_field(init=False, repr=False)

    INT8_SCHEMA: ClassVar[Schema]
    INT16_SCHEMA: ClassVar[Schema]
    INT32_SCHEMA: ClassVar[Schema]
    INT64_SCHEMA: ClassVar[Schema]
    FLOAT32_SCHEMA: ClassVar[Schema]
    FLOAT64_SCHEMA: ClassVar[Schema]
    BOOLEAN_SCHEMA: ClassVar[Schema]
    STRING_SCHEMA: ClassVar[Schema]
    BYTES_SCHEMA: ClassVar[Schema]
    OPTIONAL_INT8_SCHEMA: ClassVar[Schema]
    OPTIONAL_INT16_SCHEMA: ClassVar[Schema]
    OPTIONAL_INT32_SCHEMA: ClassVar[Schema]
    OPTIONAL_INT64_SCHEMA: ClassVar[Schema]
    OPTIONAL_FLOAT32_SCHEMA: ClassVar[Schema]
    OPTIONAL_FLOAT64_SCHEMA: ClassVar[Schema]
    OPTIONAL_BOOLEAN_SCHEMA: ClassVar[Schema]
    OPTIONAL_STRING_SCHEMA: ClassVar[Schema]
    OPTIONAL_BYTES_SCHEMA: ClassVar[Schema]

    def __post_init__(self) -> None:
        setattr_ = object.__setattr__
        if self.parameters is not None and not isinstance(self.parameters, MappingProxyType):
            setattr_(self, "parameters", MappingProxyType(dict(self.parameters)))
        if self.type is not SchemaType.STRUCT and self.field_list:
            raise DataError(f"Only STRUCT schemas have fields, not {self.type.name}")
        if self.type is SchemaType.MAP and (self.key_schema is None or self.value_schema is None):
            raise DataError("MAP schemas need a key schema and a value schema")
        if self.type is SchemaType.ARRAY and self.value_schema is None:
            raise DataError("ARRAY schemas need a value schema")
        setattr_(self, "field_list", tuple(self.field_list))
        setattr_(self, "_by_name", {f.name: f for f in self.field_list})
        params = tuple(sorted(self.parameters.items())) if self.parameters is not None else None
        key = (self.type, self.optional, self.name, self.version, self.doc, params,
               self.key_schema, self.value_schema, self.field_list)
        setattr_(self, "_key", key)
        setattr_(self, "_hash", hash(key))
        if self.default_value is not None:
            validate_value(self, self.default_value, "default value")

    @property
    def fields(self) -> tuple[Field, ...]:
        """The STRUCT's fields in order; :class:`DataError` for other types (as Kafka)."""
        if self.type is not SchemaType.STRUCT:
            raise DataError("Cannot list fields on non-struct type")
        return self.field_list

    def field(self, name: str) -> Field | None:
        """The field called ``name``, or ``None``; :class:`DataError` for non-STRUCT schemas."""
        if self.type is not SchemaType.STRUCT:
            raise DataError("Cannot look up fields on non-struct type")
        return self._by_name.get(name)

    def validate(self, value: object) -> None:
        """Raise :class:`DataError` unless ``value`` is valid for this schema."""
        validate_value(self, value)

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, Schema):
            return NotImplemented
        return (self._hash == other._hash and self._key == other._key
                and self.default_value == other.default_value)

    def __hash__(self) -> int:
        return self._hash

    def same_ignoring_default(self, other: Schema) -> bool:
        """Equal in everything but the top-level default (how Struct defaults are checked)."""
        return self is other or self._key == other._key

    def __repr__(self) -> str:
        label = self.name or self.type.name
        return f"Schema{{{label}:{self.type.name}{'?' if self.optional else ''}}}"


@dataclass(frozen=True, slots=True)
class SchemaAndValue:
    """A value with its schema, as converters return them. ``SchemaAndValue.NULL`` is (None, None)."""

    schema: Schema | None
    value: Any

    NULL: ClassVar[SchemaAndValue]


SchemaAndValue.NULL = SchemaAndValue(None, None)

_INT_RANGES: dict[SchemaType, tuple[int, int]] = {
    SchemaType.INT8: (-(1 << 7), (1 << 7) - 1),
    SchemaType.INT16: (-(1 << 15), (1 << 15) - 1),
    SchemaType.INT32: (-(1 << 31), (1 << 31) - 1),
    SchemaType.INT64: (-(1 << 63), (1 << 63) - 1),
}

_SIMPLE_TYPES: dict[SchemaType, tuple[type, ...]] = {
    SchemaType.FLOAT32: (float,),
    SchemaType.FLOAT64: (float,),
    SchemaType.BOOLEAN: (bool,),
    SchemaType.STRING: (str,),
    SchemaType.BYTES: (bytes, bytearray),
}

_LOGICAL_TYPES: dict[str, type] = {
    DECIMAL_LOGICAL_NAME: decimal.Decimal,
    DATE_LOGICAL_NAME: datetime.date,
    TIME_LOGICAL_NAME: datetime.time,
    TIMESTAMP_LOGICAL_NAME: datetime.datetime,
}


def _where(location: str | None) -> str:
    return f'field: "{location}"' if location else "value"


def _mismatch(schema: Schema, value: object, location: str | None) -> DataError:
    return DataError(
        f"Invalid Python object for schema {schema!r} with type {schema.type.name}: "
        f"{type(value).__name__} for {_where(location)}"
    )


def validate_value(schema: Schema, value: object, location: str | None = None) -> None:
    """Kafka's ``ConnectSchema.validateValue``: raise :class:`DataError` unless ``value`` fits.

    ``location`` names the field in messages. ``None`` is valid only for optional schemas
    (a default does not make ``None`` valid, as in Kafka).
    """
    if value is None:
        if schema.optional:
            return
        raise DataError(f"Invalid value: null used for required {_where(location)}, "
                        f"schema type: {schema.type.name}")
    stype = schema.type
    if schema.name is not None:
        logical = _LOGICAL_TYPES.get(schema.name)
        if logical is not None:
            if not isinstance(value, logical) or (
                    logical is datetime.date and isinstance(value, datetime.datetime)):
                raise _mismatch(schema, value, location)
            return
    int_range = _INT_RANGES.get(stype)
    if int_range is not None:
        if not isinstance(value, int) or isinstance(value, bool):
            raise _mismatch(schema, value, location)
        if not int_range[0] <= value <= int_range[1]:
            raise DataError(f"Value {value} out of range for {stype.name} {_where(location)}")
        return
    simple = _SIMPLE_TYPES.get(stype)
    if simple is not None:
        if not isinstance(value, simple):
            raise _mismatch(schema, value, location)
        return
    if stype is SchemaType.ARRAY:
        if not isinstance(value, list | tuple):
            raise _mismatch(schema, value, location)
        element_schema = schema.value_schema
        assert element_schema is not None
        element_where = f"{location or 'value'} element"
        for element in value:
            validate_value(element_schema, element, element_where)
    elif stype is SchemaType.MAP:
        if not isinstance(value, dict):
            raise _mismatch(schema, value, location)
        key_schema, value_schema = schema.key_schema, schema.value_schema
        assert key_schema is not None and value_schema is not None
        for k, v in value.items():
            validate_value(key_schema, k, f"{location or 'value'} key")
            validate_value(value_schema, v, f"{location or 'value'} value")
    else:  # STRUCT
        from seaway.connect.api.data.struct import Struct

        if not isinstance(value, Struct):
            raise _mismatch(schema, value, location)
        if not value.schema.same_ignoring_default(schema):
            raise DataError(f"Struct schemas do not match for {_where(location)}")
        value.validate()


class ConnectSchema:
    """Kafka's static helpers on ``ConnectSchema``, for code ported from Java."""

    @staticmethod
    def validate_value(schema: Schema, value: object, field_name: str | None = None) -> None:
        validate_value(schema, value, field_name)

    @staticmethod
    def schema_type(value: object) -> SchemaType | None:
        """The schema type a schemaless Python value maps to, or ``None`` (Kafka's ``schemaType``)."""
        from seaway.connect.api.data.struct import Struct

        for py_type, schema_type in _PY_TO_TYPE:
            if isinstance(value, py_type):
                return schema_type
        return SchemaType.STRUCT if isinstance(value, Struct) else None


_PY_TO_TYPE: tuple[tuple[type, SchemaType], ...] = (
    (bool, SchemaType.BOOLEAN),  # before int: bool is an int subclass
    (int, SchemaType.INT64),
    (float, SchemaType.FLOAT64),
    (str, SchemaType.STRING),
    (bytes, SchemaType.BYTES),
    (bytearray, SchemaType.BYTES),
    (list, SchemaType.ARRAY),
    (tuple, SchemaType.ARRAY),
    (dict, SchemaType.MAP),
)


def _define_constants() -> None:
    for stype in SchemaType:
        if stype.is_primitive:
            setattr(Schema, f"{stype.name}_SCHEMA", Schema(stype))
            setattr(Schema, f"OPTIONAL_{stype.name}_SCHEMA", Schema(stype, optional=True))


_define_constants()
