"""Kafka Connect's JSON -> Connect data: schemas and values read, compiled per schema.

Schema JSON (what ``schemas.enable=true`` puts in the envelope), keys in Kafka's order::

    {"type": "struct",
     "fields": [{"type": "int32", "optional": false, "field": "id"}, ...],
     "optional": false, "name": "...", "version": 1, "doc": "...",
     "parameters": {"scale": "2"}, "default": <value JSON>}

Type names: boolean, int8, int16, int32, int64, float (FLOAT32), double (FLOAT64), bytes,
string, array (+"items"), map (+"keys", "values"), struct (+"fields"). Values: bytes as
base64 strings; maps with STRING keys as objects, others as arrays of ``[key, value]``
pairs; Decimal as base64 of the unscaled bytes or, with ``decimal.format=NUMERIC``, a JSON
number; Date/Time/Timestamp as their integers.

:class:`JsonCodec` turns each schema once into a closure from parsed JSON to the Connect
value, so a record costs a cache hit plus the closure calls, never a walk of the schema.
The other direction, Connect data to JSON text, is :mod:`.json_writer`.
"""

from __future__ import annotations

import base64
import binascii
import decimal
import math
from collections.abc import Callable
from typing import Any

from seaway.connect.api.data.builder import SchemaBuilder
from seaway.connect.api.data.logical import Date, Decimal, Time, Timestamp
from seaway.connect.api.data.schema import (
    DATE_LOGICAL_NAME,
    DECIMAL_LOGICAL_NAME,
    TIME_LOGICAL_NAME,
    TIMESTAMP_LOGICAL_NAME,
    Schema,
    SchemaType,
)
from seaway.connect.api.errors import DataError
from seaway.connect.converters._struct_reader import (
    ExactParseNeeded,
    compile_column_reader,
    compile_struct_reader,
    in_field,
)
from seaway.connect.converters.json_writer import TYPE_NAMES

__all__ = ["JsonCodec", "contains_decimal"]

Fn = Callable[[Any], Any]

_TYPE_NAMES = TYPE_NAMES  # Kafka's JSON schema type names, one table with the writer
_TYPES_BY_NAME = {v: k for k, v in _TYPE_NAMES.items()}
_INT_BITS = {SchemaType.INT8: 7, SchemaType.INT16: 15, SchemaType.INT32: 31, SchemaType.INT64: 63}
_LOGICAL_CLASSES: dict[str, Any] = {
    DATE_LOGICAL_NAME: Date, TIME_LOGICAL_NAME: Time, TIMESTAMP_LOGICAL_NAME: Timestamp}
_NON_FINITE = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def contains_decimal(schema: Schema) -> bool:
    """Whether reading this schema's JSON must keep decimal numbers exact."""
    if schema.name == DECIMAL_LOGICAL_NAME:
        return True
    children = [f.schema for f in schema.field_list]
    children += [s for s in (schema.key_schema, schema.value_schema) if s is not None]
    return any(contains_decimal(c) for c in children)


def _json_type(value: Any) -> str:
    return {dict: "OBJECT", list: "ARRAY", str: "STRING", bool: "BOOLEAN"}.get(type(value), "NUMBER")


class JsonCodec:
    """Schema and value readers for one converter's settings (decimal format, null handling)."""

    def __init__(self, decimal_numeric: bool = False, replace_null_with_default: bool = True,
                 refuse_float_decimals: bool = False) -> None:
        """``refuse_float_decimals``: a Decimal given a JSON number parsed as a ``float`` raises
        :class:`ExactParseNeeded` (for readers of orjson's parse, which has no exact decimals)."""
        self.decimal_numeric = decimal_numeric
        self.replace_null_with_default = replace_null_with_default
        self.refuse_float_decimals = refuse_float_decimals

    # -- JSON -> Connect --------------------------------------------------------------------------
    def schema_from_json(self, obj: Any) -> Schema | None:
        """Kafka's ``asConnectSchema``; ``None`` for a JSON null."""
        if obj is None:
            return None
        if not isinstance(obj, dict):
            raise DataError("Schema must be a JSON object")
        type_name = obj.get("type")
        if not isinstance(type_name, str):
            raise DataError("Schema must contain 'type' field")
        builder = self._builder_for(type_name, obj)
        if obj.get("optional") is True:
            builder.optional()
        if isinstance(obj.get("name"), str):
            builder.name(obj["name"])
        version = obj.get("version")
        if isinstance(version, int) and not isinstance(version, bool):
            builder.version(version)
        if isinstance(obj.get("doc"), str):
            builder.doc(obj["doc"])
        params = obj.get("parameters")
        if isinstance(params, dict):
            for key, value in params.items():
                if not isinstance(value, str):
                    raise DataError("Schema parameters must have string values.")
                builder.parameter(key, value)
        default = obj.get("default")
        if default is not None:
            builder.default_value(self.to_connect_fn(builder.build())(default))
        return builder.build()

    def _builder_for(self, type_name: str, obj: dict[str, Any]) -> SchemaBuilder:
        stype = _TYPES_BY_NAME.get(type_name)
        if stype is None:
            raise DataError(f"Unknown schema type: {type_name}")
        if stype is SchemaType.ARRAY:
            items = self.schema_from_json(obj.get("items"))
            if items is None:
                raise DataError("Array schema did not specify the element type")
            return SchemaBuilder.array(items)
        if stype is SchemaType.MAP:
            keys, values = obj.get("keys"), obj.get("values")
            if keys is None:
                raise DataError("Map schema did not specify the key type")
            if values is None:
                raise DataError("Map schema did not specify the value type")
            key_schema, value_schema = self.schema_from_json(keys), self.schema_from_json(values)
            assert key_schema is not None and value_schema is not None
            return SchemaBuilder.map(key_schema, value_schema)
        builder = SchemaBuilder(stype)
        if stype is SchemaType.STRUCT:
            fields = obj.get("fields")
            if not isinstance(fields, list):
                raise DataError('Struct schema\'s "fields" argument is not an array.')
            for field in fields:
                name = field.get("field") if isinstance(field, dict) else None
                if not isinstance(name, str):
                    raise DataError("Struct schema's field name not specified properly")
                field_schema = self.schema_from_json(field)
                assert field_schema is not None
                builder.field(name, field_schema)
        return builder

    def to_connect_fn(self, schema: Schema, path: str = "") -> Fn:
        """A function from parsed JSON to the Connect value of ``schema`` (Kafka's ``convertToConnect``).

        ``path``: where this value sits inside a struct (dotted field names), for error messages.
        """
        inner = self._to_connect_non_null(schema, path)
        default = schema.default_value
        if default is not None and self.replace_null_with_default:
            return lambda v: default if v is None else inner(v)
        if schema.optional:
            return lambda v: None if v is None else inner(v)
        message = f"Invalid null value for required {schema.type.name} field"

        def required(v: Any) -> Any:
            if v is None:
                raise DataError(message)
            return inner(v)
        return required

    def _to_connect_non_null(self, schema: Schema, path: str) -> Fn:
        name, stype = schema.name, schema.type
        if name == DECIMAL_LOGICAL_NAME:
            return _decimal_reader(schema, self.refuse_float_decimals)
        if name in (DATE_LOGICAL_NAME, TIME_LOGICAL_NAME, TIMESTAMP_LOGICAL_NAME):
            logical = _LOGICAL_CLASSES[name]
            base = self._to_connect_non_null(SchemaBuilder(stype).build(), path)
            return lambda v: logical.to_logical(schema, base(v))
        if stype in _INT_BITS:
            low, high = -(1 << _INT_BITS[stype]), (1 << _INT_BITS[stype]) - 1

            def integer(v: Any) -> Any:
                if v.__class__ is not int and (not isinstance(v, int) or isinstance(v, bool)):
                    raise DataError(f"Invalid JSON {_json_type(v)} for {stype.name} field")
                if not low <= v <= high:
                    raise DataError(f"Value {v} out of range for {stype.name}")
                return v
            return integer
        if stype in (SchemaType.FLOAT32, SchemaType.FLOAT64):
            def floating(v: Any) -> Any:
                if isinstance(v, float | int | decimal.Decimal) and not isinstance(v, bool):
                    return float(v)
                if isinstance(v, str) and v in _NON_FINITE:
                    return _NON_FINITE[v]
                raise DataError(f"Invalid JSON {_json_type(v)} for {stype.name} field")
            return floating
        if stype is SchemaType.BOOLEAN:
            return lambda v: v if isinstance(v, bool) else _raise(
                DataError(f"Invalid JSON {_json_type(v)} for BOOLEAN field"))
        if stype is SchemaType.STRING:
            return lambda v: v if isinstance(v, str) else _raise(
                DataError(f"Invalid JSON {_json_type(v)} for STRING field"))
        if stype is SchemaType.BYTES:
            return _bytes_from_json
        if stype is SchemaType.ARRAY:
            assert schema.value_schema is not None
            element = self.to_connect_fn(schema.value_schema, path)

            def array(v: Any) -> Any:
                if not isinstance(v, list):
                    raise DataError(f"Arrays should be encoded as JSON arrays, but found {_json_type(v)}")
                return [element(e) for e in v]
            return array
        if stype is SchemaType.MAP:
            return self._map_to_connect(schema, path)
        return self._struct_to_connect(schema, path)

    def _map_to_connect(self, schema: Schema, path: str) -> Fn:
        assert schema.key_schema is not None and schema.value_schema is not None
        key_fn = self.to_connect_fn(schema.key_schema, path)
        value_fn = self.to_connect_fn(schema.value_schema, path)
        if schema.key_schema.type is SchemaType.STRING:
            def object_map(v: Any) -> Any:
                if not isinstance(v, dict):
                    raise DataError("Maps with string fields should be encoded as JSON objects, but found "
                                    + _json_type(v))
                return {key_fn(k): value_fn(x) for k, x in v.items()}
            return object_map

        def pairs_map(v: Any) -> Any:
            if not isinstance(v, list):
                raise DataError("Maps with non-string fields should be encoded as JSON array of tuples, "
                                "but found " + _json_type(v))
            result: dict[Any, Any] = {}
            for entry in v:
                if not isinstance(entry, list) or len(entry) != 2:
                    raise DataError(f"Found invalid map entry instead of array tuple: {_json_type(entry)}")
                try:
                    result[key_fn(entry[0])] = value_fn(entry[1])
                except TypeError as e:
                    raise DataError(f"Unusable map key: {e}") from e
            return result
        return pairs_map

    def to_columns_fn(self, schema: Schema) -> Fn:
        """For a STRUCT ``schema``: parsed JSON objects -> one list per field, what ``to_connect_fn``'s
        Structs would hold (see :func:`._struct_reader.compile_column_reader`); raises on anything else."""
        return compile_column_reader(schema, self._field_fns(schema, ""), self.replace_null_with_default)

    def _field_fns(self, schema: Schema, path: str) -> list[Fn]:
        fns = []
        for f in schema.field_list:
            field_path = f"{path}.{f.name}" if path else f.name
            fns.append(in_field(self.to_connect_fn(f.schema, field_path), field_path))
        return fns

    def _struct_to_connect(self, schema: Schema, path: str) -> Fn:
        """The schema's compiled reader (see :mod:`._struct_reader`); errors name the field."""
        fns = self._field_fns(schema, path)

        def not_object(v: Any) -> Any:
            raise DataError(f"Structs should be encoded as JSON objects, but found {_json_type(v)}")
        return compile_struct_reader(schema, fns, self.replace_null_with_default, not_object)


def _raise(error: Exception) -> Any:
    raise error


def _bytes_from_json(value: Any) -> bytes:
    if not isinstance(value, str):
        raise DataError(f"Invalid JSON {_json_type(value)} for BYTES field")
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError) as e:
        raise DataError(f"Invalid base64 for BYTES field: {e}") from e


def _decimal_reader(schema: Schema, refuse_floats: bool) -> Fn:
    """A Decimal's reader: base64 of the unscaled bytes, or a JSON number (exact, or refused if a float)."""
    try:
        scale: int | None = Decimal.scale(schema)
    except DataError:
        scale = None  # a bad scale parameter fails when a value comes, as Decimal.to_logical does

    def read(value: Any) -> decimal.Decimal:
        if refuse_floats and value.__class__ is float:
            raise ExactParseNeeded("a Decimal parsed as a float")
        known = Decimal.scale(schema) if scale is None else scale
        if isinstance(value, str):
            unscaled = _bytes_from_json(value)
            if not unscaled:
                raise DataError("Decimal bytes must not be empty")
            return Decimal.from_unscaled(int.from_bytes(unscaled, "big", signed=True), known)
        if isinstance(value, bool) or not isinstance(value, int | float | decimal.Decimal):
            raise DataError(f"Invalid type for Decimal, underlying representation should be numeric or bytes "
                            f"but was {_json_type(value)}")
        number = value if isinstance(value, decimal.Decimal) else decimal.Decimal(repr(value) if isinstance(
            value, float) else value)
        return Decimal.from_unscaled(Decimal.unscaled(number, known), known)
    return read
