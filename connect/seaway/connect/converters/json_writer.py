"""Connect data -> JSON text in Kafka's JsonConverter format, compiled once per schema.

The writer produces text directly; no intermediate dict/list tree, no ``json.dumps``. For
each schema :meth:`JsonWriter.value_fn` builds one function (value -> JSON text), cached by
the converter; a STRUCT schema's function is generated source (as :mod:`dataclasses`
generates ``__init__``) that unpacks the Struct's values once and, field by field, accepts
a value in place when its class is exactly the common valid one (``int`` in range, ``str``,
``float`` in the range where Python and Java print floats alike, ``bool``, an aware
``datetime`` for a Timestamp, ``date`` for a Date), the rest going through the field's
general function (nulls, defaults, logical types, nested values, subclasses, wrong types
and their errors). The texts are joined by one f-string of constants and variables only:
field names are escaped once and passed in as values, never spliced into the code. The
source is built and compiled through :mod:`seaway.codegen` (``SEAWAY_CODEGEN_DUMP`` shows it).

Text follows Jackson (:mod:`._jackson`): Java's float layout, its string escapes, compact
separators. Schemas go out as Kafka's ``asJsonSchema`` writes them, keys in its order:
type, items / keys, values / fields, optional, name, version, doc, parameters, default;
``"field"`` last in a struct's field schema.
"""

from __future__ import annotations

import binascii
import datetime
import decimal
from collections.abc import Callable
from typing import Any

from seaway.codegen import ShapeCache, Source
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
from seaway.connect.converters._jackson import double_text, float32_text, string_text

__all__ = ["JsonWriter", "TextFn"]

TextFn = Callable[[Any], str]

TYPE_NAMES = {
    SchemaType.BOOLEAN: "boolean", SchemaType.INT8: "int8", SchemaType.INT16: "int16",
    SchemaType.INT32: "int32", SchemaType.INT64: "int64", SchemaType.FLOAT32: "float",
    SchemaType.FLOAT64: "double", SchemaType.BYTES: "bytes", SchemaType.STRING: "string",
    SchemaType.ARRAY: "array", SchemaType.MAP: "map", SchemaType.STRUCT: "struct",
}
_INT_BITS = {SchemaType.INT8: 7, SchemaType.INT16: 15, SchemaType.INT32: 31, SchemaType.INT64: 63}
_REQUIRED_NULL = "Conversion error: null value for field that is required and has no default value"
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
_EPOCH_DATE = datetime.date(1970, 1, 1)
_MS = datetime.timedelta(milliseconds=1)
_b2a = binascii.b2a_base64
_int_text = int.__repr__


def _type_error(schema: Schema, value: Any) -> DataError:
    return DataError(f"Invalid type for {schema.type.name}: {type(value).__name__}")


_STRUCT_RUNTIME: dict[str, Any] = {
    "Struct": Struct, "isinstance": isinstance, "type_error": _type_error, "DataError": DataError,
    "datetime": datetime.datetime, "date": datetime.date, "EPOCH": _EPOCH, "EPOCH_DATE": _EPOCH_DATE, "MS": _MS,
    "esc": string_text}
"""The names every generated Struct writer uses (its field functions and texts are added per schema)."""


def _base64_text(value: bytes | bytearray | memoryview) -> str:
    return '"' + _b2a(value, newline=False).decode("ascii") + '"'


def _base64_decimal_fn(schema: Schema) -> TextFn:
    """``Decimal.from_logical`` as base64 text, the scale parsed once (a bad one fails per value, as there)."""
    try:
        scale: int | None = Decimal.scale(schema)
    except DataError:
        scale = None

    def base64_decimal(v: Any) -> str:
        unscaled = Decimal.unscaled(_decimal(v), Decimal.scale(schema) if scale is None else scale)
        # BigInteger.toByteArray: the shortest two's complement, as Decimal.from_logical writes it
        bits = unscaled.bit_length() if unscaled >= 0 else (~unscaled).bit_length()
        return _base64_text(unscaled.to_bytes(bits // 8 + 1, "big", signed=True))
    return base64_decimal


def _decimal(value: Any) -> decimal.Decimal:
    if not isinstance(value, decimal.Decimal):
        raise DataError(f"Invalid type for Decimal: {type(value).__name__}")
    return value


class JsonWriter:
    """Text functions for one converter's settings (``decimal.format``, ``replace.null.with.default``)."""

    def __init__(self, decimal_numeric: bool = False, replace_null_with_default: bool = True,
                 cache_size: int = 1000) -> None:
        self.decimal_numeric = decimal_numeric
        self.replace_null_with_default = replace_null_with_default
        # Schema -> TextFn, for Structs inside schemaless values
        self._struct_fns: ShapeCache[Schema, TextFn] = ShapeCache(cache_size)

    # -- schemas ----------------------------------------------------------------------------------
    def schema_text(self, schema: Schema) -> str:
        """The schema's JSON text (Kafka's ``asJsonSchema``, compact)."""
        return "{" + ",".join(self._schema_members(schema)) + "}"

    def _schema_members(self, schema: Schema) -> list[str]:
        members = [f'"type":"{TYPE_NAMES[schema.type]}"']
        if schema.type is SchemaType.ARRAY:
            assert schema.value_schema is not None
            members.append(f'"items":{self.schema_text(schema.value_schema)}')
        elif schema.type is SchemaType.MAP:
            assert schema.key_schema is not None and schema.value_schema is not None
            members.append(f'"keys":{self.schema_text(schema.key_schema)}')
            members.append(f'"values":{self.schema_text(schema.value_schema)}')
        elif schema.type is SchemaType.STRUCT:
            fields = ["{" + ",".join([*self._schema_members(f.schema), '"field":' + string_text(f.name)]) + "}"
                      for f in schema.field_list]
            members.append(f'"fields":[{",".join(fields)}]')
        members.append('"optional":true' if schema.optional else '"optional":false')
        if schema.name is not None:
            members.append('"name":' + string_text(schema.name))
        if schema.version is not None:
            members.append(f'"version":{_int_text(schema.version)}')
        if schema.doc is not None:
            members.append('"doc":' + string_text(schema.doc))
        if schema.parameters is not None:
            params = ",".join(string_text(k) + ":" + string_text(v) for k, v in schema.parameters.items())
            members.append('"parameters":{' + params + "}")
        if schema.default_value is not None:
            members.append('"default":' + self._non_null(schema)(schema.default_value))
        return members

    # -- values with a schema ---------------------------------------------------------------------
    def value_fn(self, schema: Schema) -> TextFn:
        """A function from a Connect value of ``schema`` to its JSON text (nulls per Kafka's rules)."""
        inner = self._non_null(schema)
        default = schema.default_value
        if default is not None and self.replace_null_with_default:
            default_text = inner(default)
            return lambda v: default_text if v is None else inner(v)
        if schema.optional:
            return lambda v: "null" if v is None else inner(v)

        def required(v: Any) -> str:
            if v is None:
                raise DataError(_REQUIRED_NULL)
            return inner(v)
        return required

    def _non_null(self, schema: Schema) -> TextFn:
        name, stype = schema.name, schema.type
        if name == DECIMAL_LOGICAL_NAME:
            if self.decimal_numeric:
                scale = Decimal.scale(schema)
                # BigDecimal.toString of the value at the schema's scale, which str() of a Decimal matches
                return lambda v: str(Decimal.from_unscaled(Decimal.unscaled(_decimal(v), scale), scale))
            return _base64_decimal_fn(schema)
        if name == DATE_LOGICAL_NAME:
            return lambda v: _int_text(Date.from_logical(schema, v))
        if name == TIME_LOGICAL_NAME:
            return lambda v: _int_text(Time.from_logical(schema, v))
        if name == TIMESTAMP_LOGICAL_NAME:
            return lambda v: _int_text(Timestamp.from_logical(schema, v))
        if stype in _INT_BITS:
            low, high = -(1 << _INT_BITS[stype]), (1 << _INT_BITS[stype]) - 1

            def integer(v: Any) -> str:
                if v.__class__ is not int and (not isinstance(v, int) or isinstance(v, bool)):
                    raise _type_error(schema, v)
                if not low <= v <= high:
                    raise DataError(f"Value {v} out of range for {stype.name}")
                return _int_text(v)
            return integer
        if stype in (SchemaType.FLOAT32, SchemaType.FLOAT64):
            text = float32_text if stype is SchemaType.FLOAT32 else double_text

            def floating(v: Any) -> str:
                if isinstance(v, int | float) and not isinstance(v, bool):
                    return text(float(v))
                raise _type_error(schema, v)
            return floating
        if stype is SchemaType.BOOLEAN:
            def boolean(v: Any) -> str:
                if not isinstance(v, bool):
                    raise _type_error(schema, v)
                return "true" if v else "false"
            return boolean
        if stype is SchemaType.STRING:
            def string(v: Any) -> str:
                if not isinstance(v, str):
                    raise _type_error(schema, v)
                return string_text(v)
            return string
        if stype is SchemaType.BYTES:
            def to_base64(v: Any) -> str:
                if not isinstance(v, bytes | bytearray | memoryview):
                    raise _type_error(schema, v)
                return _base64_text(v)
            return to_base64
        if stype is SchemaType.ARRAY:
            assert schema.value_schema is not None
            element = self.value_fn(schema.value_schema)

            def array(v: Any) -> str:
                if not isinstance(v, list | tuple):
                    raise _type_error(schema, v)
                return "[" + ",".join([element(e) for e in v]) + "]"
            return array
        if stype is SchemaType.MAP:
            return self._map_fn(schema)
        return self._struct_fn(schema)

    def _map_fn(self, schema: Schema) -> TextFn:
        assert schema.key_schema is not None and schema.value_schema is not None
        key_fn, value_fn = self.value_fn(schema.key_schema), self.value_fn(schema.value_schema)
        if schema.key_schema.type is SchemaType.STRING:
            def object_map(v: Any) -> str:
                if not isinstance(v, dict):
                    raise _type_error(schema, v)
                return "{" + ",".join([_object_key(key_fn(k)) + ":" + value_fn(x) for k, x in v.items()]) + "}"
            return object_map

        def pairs_map(v: Any) -> str:
            if not isinstance(v, dict):
                raise _type_error(schema, v)
            return "[" + ",".join(["[" + key_fn(k) + "," + value_fn(x) + "]" for k, x in v.items()]) + "]"
        return pairs_map

    def _struct_fn(self, schema: Schema) -> TextFn:
        """The generated writer of ``schema``'s Structs (see the module docstring), built with :mod:`seaway.codegen`."""
        fields = schema.field_list
        src = Source(f"json writer {schema.name}", _STRUCT_RUNTIME)
        src.define("schema", schema)
        src.lines(["def write(v):",
                   "    if v.__class__ is not Struct and not isinstance(v, Struct):",
                   "        raise type_error(schema, v)",
                   "    s = v._schema",
                   "    if s is not schema and not s.same_ignoring_default(schema):",
                   '        raise DataError("Mismatching schema.")'])
        parts = []
        for i, f in enumerate(fields):
            src.define(f"f{i}", self.value_fn(f.schema))
            src.define(f"p{i}", ("{" if i == 0 else ",") + string_text(f.name) + ":")
            parts.append(f"{{p{i}}}{{x{i}}}")
        if fields:
            src.line(f"{''.join(f'x{i}, ' for i in range(len(fields)))}= v._values", 1)
        for i, f in enumerate(fields):
            src.lines(self._field_lines(f.schema, f"x{i}", f"f{i}"), 1)
        # an f-string of variables only: BUILD_STRING joins the pieces in one allocation
        src.line('return f"' + "".join(parts) + '}}"' if fields else 'return "{}"', 1)
        write: TextFn = src.build("write")
        return write

    def _field_lines(self, schema: Schema, x: str, fn: str) -> list[str]:
        """Code leaving field value ``x`` as something an f-string formats as its JSON text.

        Exact ``int`` and ``float`` stay numbers (``format(x, "")`` is their ``repr``);
        everything not handled inline goes through the field's function ``fn``.
        """
        name, stype = schema.name, schema.type
        if name == TIMESTAMP_LOGICAL_NAME:
            return [f"if {x}.__class__ is datetime and {x}.tzinfo is not None:",
                    f"    {x} = ({x} - EPOCH) // MS",
                    "else:", f"    {x} = {fn}({x})"]
        if name == DATE_LOGICAL_NAME:
            return [f"if {x}.__class__ is date:", f"    {x} = ({x} - EPOCH_DATE).days",
                    "else:", f"    {x} = {fn}({x})"]
        if name is not None and name in (DECIMAL_LOGICAL_NAME, TIME_LOGICAL_NAME):
            return [f"{x} = {fn}({x})"]
        if stype in _INT_BITS:
            bits = _INT_BITS[stype]
            return [f"if {x}.__class__ is not int or not {-(1 << bits)} <= {x} <= {(1 << bits) - 1}:",
                    f"    {x} = {fn}({x})"]
        if stype is SchemaType.FLOAT64:
            # Python and Java print the same text for these (see _jackson.double_text)
            return [f"if {x}.__class__ is not float or not (1e-3 <= {x} < 1e7 or -1e7 < {x} <= -1e-3"
                    f" or {x} == 0.0):",
                    f"    {x} = {fn}({x})"]
        if stype is SchemaType.STRING:
            return [f"{x} = esc({x}) if {x}.__class__ is str else {fn}({x})"]
        if stype is SchemaType.BOOLEAN:
            return [f"if {x} is True:", f'    {x} = "true"', f"elif {x} is False:", f'    {x} = "false"',
                    "else:", f"    {x} = {fn}({x})"]
        return [f"{x} = {fn}({x})"]

    # -- values without a schema ------------------------------------------------------------------
    def schemaless_text(self, value: Any) -> str:
        """JSON text of a value without schema (Kafka infers the type from the Java class)."""
        write = _SCHEMALESS.get(value.__class__)
        if write is not None:
            return write(self, value)
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, str):
            return string_text(value)
        if isinstance(value, int):
            return _int_text(value)
        if isinstance(value, float):
            return double_text(float(value))
        if isinstance(value, dict):
            return _schemaless_dict(self, value)
        if isinstance(value, list | tuple):
            return _schemaless_list(self, value)
        if isinstance(value, bytes | bytearray | memoryview):
            return _base64_text(value)
        if isinstance(value, Struct):
            fn: TextFn | None = self._struct_fns.get(value.schema)
            if fn is None:
                fn = self.value_fn(value.schema)
                self._struct_fns.put(value.schema, fn)
            return fn(value)
        raise DataError(f"Python class {type(value).__name__} does not have corresponding schema type.")


def _object_key(text: str) -> str:
    """A map key's text as an object member name: a null key is written as the name "null" (as Jackson does)."""
    return '"null"' if text == "null" else text


def _schemaless_dict(writer: JsonWriter, value: dict[Any, Any]) -> str:
    text = writer.schemaless_text
    for key in value:
        if key.__class__ is not str and not isinstance(key, str):
            return "[" + ",".join(["[" + text(k) + "," + text(x) + "]" for k, x in value.items()]) + "]"
    return "{" + ",".join([string_text(k) + ":" + text(x) for k, x in value.items()]) + "}"


def _schemaless_list(writer: JsonWriter, value: list[Any] | tuple[Any, ...]) -> str:
    text = writer.schemaless_text
    return "[" + ",".join([text(x) for x in value]) + "]"


_SCHEMALESS: dict[type, Callable[[JsonWriter, Any], str]] = {
    str: lambda _, v: string_text(v),
    int: lambda _, v: _int_text(v),
    float: lambda _, v: double_text(v),
    bool: lambda _, v: "true" if v else "false",
    type(None): lambda _, v: "null",
    dict: _schemaless_dict,
    list: _schemaless_list,
    tuple: _schemaless_list,
    bytes: lambda _, v: _base64_text(v),
}
"""Exact classes of schemaless values, one dict lookup each; subclasses take the isinstance chain."""
