"""SchemaBuilder: the fluent way to make a :class:`Schema`, as in Kafka Connect.

    schema = (SchemaBuilder.struct().name("com.example.User")
              .field("id", Schema.INT64_SCHEMA)
              .field("email", Schema.OPTIONAL_STRING_SCHEMA)
              .optional()
              .build())

Each setter returns the builder. Setting a property twice to different values, adding a
duplicate field, or giving a default that does not fit raises :class:`SchemaBuilderError`.
Wherever a schema is expected (``field``, ``array``, ``map``), a builder is accepted too and
built on the spot.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeAlias

from seaway.connect.api.data.schema import Field, Schema, SchemaType
from seaway.connect.api.errors import DataError, SchemaBuilderError

__all__ = ["SchemaBuilder", "SchemaLike"]

SchemaLike: TypeAlias = "Schema | SchemaBuilder"


def _as_schema(schema: SchemaLike) -> Schema:
    return schema.build() if isinstance(schema, SchemaBuilder) else schema


class SchemaBuilder:
    """Mutable, single-use builder of an immutable :class:`Schema` (Kafka's ``SchemaBuilder``)."""

    def __init__(self, schema_type: SchemaType) -> None:
        self._type = schema_type
        self._optional = False
        self._default: Any = None
        self._name: str | None = None
        self._version: int | None = None
        self._doc: str | None = None
        self._parameters: dict[str, str] | None = None
        self._fields: dict[str, Schema] = {}
        self._key_schema: Schema | None = None
        self._value_schema: Schema | None = None

    # -- factories ---------------------------------------------------------------------------
    @staticmethod
    def int8() -> SchemaBuilder:
        return SchemaBuilder(SchemaType.INT8)

    @staticmethod
    def int16() -> SchemaBuilder:
        return SchemaBuilder(SchemaType.INT16)

    @staticmethod
    def int32() -> SchemaBuilder:
        return SchemaBuilder(SchemaType.INT32)

    @staticmethod
    def int64() -> SchemaBuilder:
        return SchemaBuilder(SchemaType.INT64)

    @staticmethod
    def float32() -> SchemaBuilder:
        return SchemaBuilder(SchemaType.FLOAT32)

    @staticmethod
    def float64() -> SchemaBuilder:
        return SchemaBuilder(SchemaType.FLOAT64)

    @staticmethod
    def boolean() -> SchemaBuilder:
        """Kafka's ``SchemaBuilder.bool()``."""
        return SchemaBuilder(SchemaType.BOOLEAN)

    @staticmethod
    def string() -> SchemaBuilder:
        return SchemaBuilder(SchemaType.STRING)

    @staticmethod
    def bytes() -> SchemaBuilder:
        return SchemaBuilder(SchemaType.BYTES)

    @staticmethod
    def struct() -> SchemaBuilder:
        return SchemaBuilder(SchemaType.STRUCT)

    @staticmethod
    def array(value_schema: SchemaLike) -> SchemaBuilder:
        builder = SchemaBuilder(SchemaType.ARRAY)
        builder._value_schema = _as_schema(value_schema)
        return builder

    @staticmethod
    def map(key_schema: SchemaLike, value_schema: SchemaLike) -> SchemaBuilder:
        builder = SchemaBuilder(SchemaType.MAP)
        builder._key_schema = _as_schema(key_schema)
        builder._value_schema = _as_schema(value_schema)
        return builder

    @staticmethod
    def from_schema(schema: Schema) -> SchemaBuilder:
        """A builder pre-filled from ``schema`` (to derive a variant, e.g. in an SMT)."""
        builder = SchemaBuilder(schema.type)
        builder._optional = schema.optional
        builder._default = schema.default_value
        builder._name, builder._version, builder._doc = schema.name, schema.version, schema.doc
        builder._parameters = dict(schema.parameters) if schema.parameters is not None else None
        builder._fields = {f.name: f.schema for f in schema.field_list}
        builder._key_schema, builder._value_schema = schema.key_schema, schema.value_schema
        return builder

    # -- setters -----------------------------------------------------------------------------
    def _check_can_set(self, what: str, current: object, new: object) -> None:
        if current is not None and current != new:
            raise SchemaBuilderError(f"Invalid SchemaBuilder call: {what} has already been set.")

    def optional(self) -> SchemaBuilder:
        self._optional = True
        return self

    def required(self) -> SchemaBuilder:
        self._optional = False
        return self

    def default_value(self, value: Any) -> SchemaBuilder:
        """Set the default; it is validated against the schema when :meth:`build` runs."""
        self._check_can_set("default", self._default, value)
        self._default = value
        return self

    def name(self, name: str) -> SchemaBuilder:
        self._check_can_set("name", self._name, name)
        self._name = name
        return self

    def version(self, version: int) -> SchemaBuilder:
        self._check_can_set("version", self._version, version)
        self._version = version
        return self

    def doc(self, doc: str) -> SchemaBuilder:
        self._check_can_set("doc", self._doc, doc)
        self._doc = doc
        return self

    def parameter(self, key: str, value: str) -> SchemaBuilder:
        if self._parameters is None:
            self._parameters = {}
        self._parameters[key] = value
        return self

    def parameters(self, parameters: Mapping[str, str]) -> SchemaBuilder:
        if self._parameters is None:
            self._parameters = {}
        self._parameters.update(parameters)
        return self

    def field(self, name: str, schema: SchemaLike) -> SchemaBuilder:
        """Append a field to a STRUCT schema; names must be unique and non-empty."""
        if self._type is not SchemaType.STRUCT:
            raise SchemaBuilderError("Cannot create fields on type " + self._type.name)
        if not name:
            raise SchemaBuilderError("fieldName cannot be null.")
        if name in self._fields:
            raise SchemaBuilderError("Cannot create field because of field name duplication " + name)
        self._fields[name] = _as_schema(schema)
        return self

    # -- reading back (Kafka's builder is also a Schema) ---------------------------------------
    @property
    def type(self) -> SchemaType:
        return self._type

    @property
    def is_optional(self) -> bool:
        return self._optional

    def build(self) -> Schema:
        """Make the immutable :class:`Schema`; raises :class:`SchemaBuilderError` on a bad default."""
        fields = tuple(Field(n, i, s) for i, (n, s) in enumerate(self._fields.items()))
        try:
            return Schema(self._type, self._optional, self._default, self._name, self._version,
                          self._doc, self._parameters, fields, self._key_schema, self._value_schema)
        except SchemaBuilderError:
            raise
        except DataError as e:
            raise SchemaBuilderError(f"Invalid schema: {e}") from e
