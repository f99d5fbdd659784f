"""Struct: a record value shaped by a STRUCT schema (Kafka Connect's ``Struct``).

``put`` validates each value against its field's schema at once, so a bad value fails
where it is set, not later in a converter. :meth:`Struct.from_valid_values` and
:meth:`Struct.values` are the per-record fast path for code that copies already validated
values between Structs (SMTs) and would otherwise pay a ``put``/``get`` per field.
``get`` returns the field's default when the value is unset; ``get_without_default`` does
not. ``validate()`` checks that every required field without a default has been set.

Structs are mutable (hence unhashable) and compare equal when schema and values are equal.
"""

from __future__ import annotations

from typing import Any

from seaway.connect.api.data.schema import Field, Schema, SchemaType, validate_value
from seaway.connect.api.errors import DataError

__all__ = ["Struct"]

_new_struct = object.__new__
_STRUCT = SchemaType.STRUCT


class Struct:
    """Values for the fields of a STRUCT :class:`Schema`, by name or :class:`Field`."""

    __slots__ = ("_schema", "_values")
    __hash__ = None  # type: ignore[assignment]  # mutable

    def __init__(self, schema: Schema) -> None:
        if schema.type is not SchemaType.STRUCT:
            raise DataError(f"Not a struct schema: {schema!r}")
        self._schema = schema
        self._values: list[Any] = [None] * len(schema.field_list)

    @classmethod
    def from_valid_values(cls, schema: Schema, values: list[Any]) -> Struct:
        """A Struct over ``values`` (one per field, in field order) that are *already valid*.

        The fast path for code that copies values out of validated Structs, e.g. an SMT
        deriving a record whose fields keep their schemas: nothing is validated (new or changed
        values must still go through :meth:`put`, or :meth:`validate` be called), and the
        Struct takes ownership of the list. Only the count is checked.
        """
        if len(values) != len(schema.field_list) or schema.type is not _STRUCT:
            if schema.type is not _STRUCT:
                raise DataError(f"Not a struct schema: {schema!r}")
            raise DataError(f"Expected {len(schema.field_list)} values for {schema!r}, got {len(values)}")
        struct: Struct = _new_struct(cls)
        struct._schema = schema
        struct._values = values
        return struct

    @property
    def schema(self) -> Schema:
        return self._schema

    def values(self) -> list[Any]:
        """A copy of the values in field order, unset fields as ``None`` (no defaults applied)."""
        return list(self._values)

    def values_in_place(self) -> list[Any]:
        """The Struct's own list of values in field order (not a copy: do not modify it).

        The read counterpart of :meth:`from_valid_values`, for code that converts whole Structs per
        record (e.g. to Arrow columns), where a copy or a ``get`` per field is the cost to avoid.
        """
        return self._values

    def _lookup(self, field: str | Field) -> Field:
        if isinstance(field, Field):
            if self._schema.field_list[field.index] is not field and \
                    self._schema.field(field.name) != field:
                raise DataError(f"Field {field.name!r} is not part of this struct's schema")
            return field
        found = self._schema.field(field)
        if found is None:
            raise DataError(f"{field} is not a valid field name")
        return found

    def put(self, field: str | Field, value: Any) -> Struct:
        """Set a field (validated against its schema); returns ``self`` for chaining."""
        f = self._lookup(field)
        validate_value(f.schema, value, f.name)
        self._values[f.index] = value
        return self

    def get(self, field: str | Field) -> Any:
        """The field's value, or its schema's default when unset (``None`` if neither)."""
        f = self._lookup(field)
        value = self._values[f.index]
        return f.schema.default_value if value is None else value

    def get_without_default(self, field: str | Field) -> Any:
        return self._values[self._lookup(field).index]

    def _get_checked(self, field: str, expected: SchemaType) -> Any:
        f = self._lookup(field)
        if f.schema.type is not expected:
            raise DataError(f"Field '{field}' is not of type {expected.name}")
        value = self._values[f.index]
        return f.schema.default_value if value is None else value

    def get_int8(self, field: str) -> int | None:
        return self._get_checked(field, SchemaType.INT8)  # type: ignore[no-any-return]

    def get_int16(self, field: str) -> int | None:
        return self._get_checked(field, SchemaType.INT16)  # type: ignore[no-any-return]

    def get_int32(self, field: str) -> int | None:
        return self._get_checked(field, SchemaType.INT32)  # type: ignore[no-any-return]

    def get_int64(self, field: str) -> int | None:
        return self._get_checked(field, SchemaType.INT64)  # type: ignore[no-any-return]

    def get_float32(self, field: str) -> float | None:
        return self._get_checked(field, SchemaType.FLOAT32)  # type: ignore[no-any-return]

    def get_float64(self, field: str) -> float | None:
        return self._get_checked(field, SchemaType.FLOAT64)  # type: ignore[no-any-return]

    def get_boolean(self, field: str) -> bool | None:
        return self._get_checked(field, SchemaType.BOOLEAN)  # type: ignore[no-any-return]

    def get_string(self, field: str) -> str | None:
        return self._get_checked(field, SchemaType.STRING)  # type: ignore[no-any-return]

    def get_bytes(self, field: str) -> bytes | None:
        value = self._get_checked(field, SchemaType.BYTES)
        return bytes(value) if isinstance(value, bytearray) else value

    def get_array(self, field: str) -> list[Any] | None:
        return self._get_checked(field, SchemaType.ARRAY)  # type: ignore[no-any-return]

    def get_map(self, field: str) -> dict[Any, Any] | None:
        return self._get_checked(field, SchemaType.MAP)  # type: ignore[no-any-return]

    def get_struct(self, field: str) -> Struct | None:
        return self._get_checked(field, SchemaType.STRUCT)  # type: ignore[no-any-return]

    def validate(self) -> None:
        """Raise :class:`DataError` if a required field without default is unset or a value is invalid."""
        for f in self._schema.field_list:
            value = self._values[f.index]
            if value is None and (f.schema.optional or f.schema.default_value is not None):
                continue
            validate_value(f.schema, value, f.name)

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, Struct):
            return NotImplemented
        return self._schema == other._schema and self._values == other._values

    def __repr__(self) -> str:
        parts = [f"{f.name}={v!r}" for f, v in zip(self._schema.field_list, self._values, strict=True)
                 if v is not None]
        return "Struct{" + ",".join(parts) + "}"

    def __str__(self) -> str:
        """Kafka's ``Struct.toString()``: ``Struct{line=line 1,n=2}``, unset fields left out.

        What a user sees where a value is written as text (FileStreamSink's lines, logs), so it
        matches Kafka Connect's output byte for byte: each field as Java prints the value its
        schema maps to (:func:`seaway.connect.api.data.java_text.java_string`: ``1.0E10``, maps
        as ``{k=v}`` in ``HashMap`` order, lists as ``[a, b]``, bytes as ``[1, -2]``);
        ``repr()`` keeps Python's quoting for debugging.
        """
        from seaway.connect.api.data.java_text import java_string

        parts = [f"{f.name}={java_string(v, f.schema)}"
                 for f, v in zip(self._schema.field_list, self._values, strict=True) if v is not None]
        return "Struct{" + ",".join(parts) + "}"
