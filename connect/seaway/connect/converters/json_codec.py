"""Kafka Connect's JSON encoding of schemas and values, compiled per schema.

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

:class:`JsonCodec` turns each schema once into a pair of small closures (value -> JSON-able
and back), so a record costs a cache hit plus the closure calls, never a walk of the schema.
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
from seaway.connect.api.data.struct import Struct
from seaway.connect.api.errors import DataError
from seaway.connect.converters._struct_reader import compile_struct_reader, in_field

__all__ = ["JsonCodec", "RawNumber", "contains_decimal"]

Fn = Callable[[Any], Any]

_TYPE_NAMES = {
    SchemaType.BOOLEAN: "boolean", SchemaType.INT8: "int8", SchemaType.INT16: "int16",
    SchemaType.INT32: "int32", SchemaType.INT64: "int64", SchemaType.FLOAT32: "float",
    SchemaType.FLOAT64: "double", SchemaType.BYTES: "bytes", SchemaType.STRING: "string",
    SchemaType.ARRAY: "array", SchemaType.MAP: "map", SchemaType.STRUCT: "struct",
}
_TYPES_BY_NAME = {v: k for k, v in _TYPE_NAMES.items()}
_INT_BITS = {SchemaType.INT8: 7, SchemaType.INT16: 15, SchemaType.INT32: 31, SchemaType.INT64: 63}
_REQUIRED_NULL = "Conversion error: null value for field that is required and has no default value"
_LOGICAL_CLASSES: dict[str, Any] = {
    DATE_LOGICAL_NAME: Date, TIME_LOGICAL_NAME: Time, TIMESTAMP_LOGICAL_NAME: Timestamp}
_NON_FINITE = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


class RawNumber:
    """A number to write verbatim (a NUMERIC decimal), spliced in after ``json`` encoding."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


def contains_decimal(schema: Schema) -> bool:
    """Whether reading this schema's JSON must keep decimal numbers exact."""
    if schema.name == DECIMAL_LOGICAL_NAME:
        return True
    children = [f.schema for f in schema.field_list]
    children += [s for s in (schema.key_schema, schema.value_schema) if s is not None]
    return any(contains_decimal(c) for c in children)


def _type_error(schema: Schema, value: Any) -> DataError:
    return DataError(f"Invalid type for {schema.type.name}: {type(value).__name__}")


def _json_type(value: Any) -> str:
    return {dict: "OBJECT", list: "ARRAY", str: "STRING", bool: "BOOLEAN"}.get(type(value), "NUMBER")


def _float_to_json(value: float) -> Any:
    # Jackson quotes non-finite numbers (QUOTE_NON_NUMERIC_NUMBERS); bare NaN is not JSON.
    if math.isfinite(value):
        return value
    return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")


class JsonCodec:
    """Schema and value conversions for one converter's settings (decimal format, null handling)."""

    def __init__(self, decimal_numeric: bool = False, replace_null_with_default: bool = True) -> None:
        self.decimal_numeric = decimal_numeric
        self.replace_null_with_default = replace_null_with_default

    # -- Connect -> JSON --------------------------------------------------------------------------
    def schema_to_json(self, schema: Schema) -> dict[str, Any]:
        """The schema's JSON object (Kafka's ``asJsonSchema``)."""
        obj: dict[str, Any] = {"type": _TYPE_NAMES[schema.type]}
        if schema.type is SchemaType.ARRAY:
            assert schema.value_schema is not None
            obj["items"] = self.schema_to_json(schema.value_schema)
        elif schema.type is SchemaType.MAP:
            assert schema.key_schema is not None and schema.value_schema is not None
            obj["keys"] = self.schema_to_json(schema.key_schema)
            obj["values"] = self.schema_to_json(schema.value_schema)
        elif schema.type is SchemaType.STRUCT:
            obj["fields"] = [{**self.schema_to_json(f.schema), "field": f.name} for f in schema.field_list]
        obj["optional"] = schema.optional
        if schema.name is not None:
            obj["name"] = schema.name
        if schema.version is not None:
            obj["version"] = schema.version
        if schema.doc is not None:
            obj["doc"] = schema.doc
        if schema.parameters is not None:
            obj["parameters"] = dict(schema.parameters)
        if schema.default_value is not None:
            obj["default"] = self._to_json_non_null(schema)(schema.default_value)
        return obj

    def to_json_fn(self, schema: Schema) -> Fn:
        """A function from a Connect value of ``schema`` to JSON-able Python (nulls per Kafka's rules)."""
        inner = self._to_json_non_null(schema)
        default = schema.default_value
        if default is not None and self.replace_null_with_default:
            default_json = inner(default)
            return lambda v: default_json if v is None else inner(v)
        if schema.optional:
            return lambda v: None if v is None else inner(v)

        def required(v: Any) -> Any:
            if v is None:
                raise DataError(_REQUIRED_NULL)
            return inner(v)
        return required

    def _to_json_non_null(self, schema: Schema) -> Fn:
        name, stype = schema.name, schema.type
        if name == DECIMAL_LOGICAL_NAME:
            if self.decimal_numeric:
                scale = Decimal.scale(schema)
                return lambda v: RawNumber(format(Decimal.from_unscaled(Decimal.unscaled(_decimal(v), scale),
                                                                        scale), "f"))
            return lambda v: base64.b64encode(Decimal.from_logical(schema, _decimal(v))).decode("ascii")
        if name in (DATE_LOGICAL_NAME, TIME_LOGICAL_NAME, TIMESTAMP_LOGICAL_NAME):
            logical = _LOGICAL_CLASSES[name]
            return lambda v: logical.from_logical(schema, v)
        if stype in _INT_BITS:
            low, high = -(1 << _INT_BITS[stype]), (1 << _INT_BITS[stype]) - 1

            def integer(v: Any) -> Any:
                if v.__class__ is not int and (not isinstance(v, int) or isinstance(v, bool)):
                    raise _type_error(schema, v)
                if not low <= v <= high:
                    raise DataError(f"Value {v} out of range for {stype.name}")
                return v
            return integer
        if stype in (SchemaType.FLOAT32, SchemaType.FLOAT64):
            def floating(v: Any) -> Any:
                if v.__class__ is float:
                    return _float_to_json(v)
                if isinstance(v, int | float) and not isinstance(v, bool):
                    return _float_to_json(float(v))
                raise _type_error(schema, v)
            return floating
        if stype is SchemaType.BOOLEAN:
            return lambda v: v if isinstance(v, bool) else _raise(_type_error(schema, v))
        if stype is SchemaType.STRING:
            return lambda v: v if isinstance(v, str) else _raise(_type_error(schema, v))
        if stype is SchemaType.BYTES:
            def to_base64(v: Any) -> Any:
                if not isinstance(v, bytes | bytearray | memoryview):
                    raise _type_error(schema, v)
                return base64.b64encode(v).decode("ascii")
            return to_base64
        if stype is SchemaType.ARRAY:
            assert schema.value_schema is not None
            element = self.to_json_fn(schema.value_schema)

            def array(v: Any) -> Any:
                if not isinstance(v, list | tuple):
                    raise _type_error(schema, v)
                return [element(e) for e in v]
            return array
        if stype is SchemaType.MAP:
            return self._map_to_json(schema)
        return self._struct_to_json(schema)

    def _map_to_json(self, schema: Schema) -> Fn:
        assert schema.key_schema is not None and schema.value_schema is not None
        key_fn, value_fn = self.to_json_fn(schema.key_schema), self.to_json_fn(schema.value_schema)
        object_mode = schema.key_schema.type is SchemaType.STRING

        def mapping(v: Any) -> Any:
            if not isinstance(v, dict):
                raise _type_error(schema, v)
            if object_mode:
                return {key_fn(k): value_fn(x) for k, x in v.items()}
            return [[key_fn(k), value_fn(x)] for k, x in v.items()]
        return mapping

    def _struct_to_json(self, schema: Schema) -> Fn:
        fields = [(f.name, self.to_json_fn(f.schema)) for f in schema.field_list]

        def struct(v: Any) -> Any:
            if not isinstance(v, Struct):
                raise _type_error(schema, v)
            if v.schema is not schema and not v.schema.same_ignoring_default(schema):
                raise DataError("Mismatching schema.")
            return {name: fn(x) for (name, fn), x in zip(fields, v._values, strict=True)}
        return struct

    def schemaless_to_json(self, value: Any) -> Any:
        """JSON-able form of a value without schema (Kafka infers the type from the class)."""
        if value is None or isinstance(value, str | bool | int):
            return value
        if isinstance(value, float):
            return _float_to_json(value)
        if isinstance(value, dict):
            if all(isinstance(k, str) for k in value):
                return {k: self.schemaless_to_json(x) for k, x in value.items()}
            return [[self.schemaless_to_json(k), self.schemaless_to_json(x)] for k, x in value.items()]
        if isinstance(value, list | tuple):
            return [self.schemaless_to_json(x) for x in value]
        if isinstance(value, bytes | bytearray | memoryview):
            return base64.b64encode(value).decode("ascii")
        if isinstance(value, Struct):
            return self.to_json_fn(value.schema)(value)
        raise DataError(f"Python class {type(value).__name__} does not have corresponding schema type.")

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
            return lambda v: _decimal_from_json(schema, v)
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

    def _struct_to_connect(self, schema: Schema, path: str) -> Fn:
        """The schema's compiled reader (see :mod:`._struct_reader`); errors name the field."""
        fns = []
        for f in schema.field_list:
            field_path = f"{path}.{f.name}" if path else f.name
            fns.append(in_field(self.to_connect_fn(f.schema, field_path), field_path))

        def not_object(v: Any) -> Any:
            raise DataError(f"Structs should be encoded as JSON objects, but found {_json_type(v)}")
        return compile_struct_reader(schema, fns, self.replace_null_with_default, not_object)


def _raise(error: Exception) -> Any:
    raise error


def _decimal(value: Any) -> decimal.Decimal:
    if not isinstance(value, decimal.Decimal):
        raise DataError(f"Invalid type for Decimal: {type(value).__name__}")
    return value


def _bytes_from_json(value: Any) -> bytes:
    if not isinstance(value, str):
        raise DataError(f"Invalid JSON {_json_type(value)} for BYTES field")
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError) as e:
        raise DataError(f"Invalid base64 for BYTES field: {e}") from e


def _decimal_from_json(schema: Schema, value: Any) -> decimal.Decimal:
    scale = Decimal.scale(schema)
    if isinstance(value, str):
        return Decimal.to_logical(schema, _bytes_from_json(value))
    if isinstance(value, bool) or not isinstance(value, int | float | decimal.Decimal):
        raise DataError(f"Invalid type for Decimal, underlying representation should be numeric or bytes "
                        f"but was {_json_type(value)}")
    number = value if isinstance(value, decimal.Decimal) else decimal.Decimal(repr(value) if isinstance(
        value, float) else value)
    return Decimal.from_unscaled(Decimal.unscaled(number, scale), scale)
