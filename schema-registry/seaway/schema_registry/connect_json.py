"""Connect schemas and values <-> JSON Schema, the way Confluent's ``JsonSchemaData`` maps them.

Schemas (Connect -> JSON Schema; the reverse reads them back, and also plain JSON Schema
written by other producers)::

    INT8..INT64      {"type": "integer", "connect.type": "int8" | "int16" | "int32" | "int64"}
    FLOAT32/FLOAT64  {"type": "number", "connect.type": "float32" | "float64"}
    BOOLEAN, STRING  {"type": "boolean"}, {"type": "string"}
    BYTES            {"type": "string", "connect.type": "bytes"} (values in base64)
    Decimal          BYTES titled org.apache.kafka.connect.data.Decimal, "connect.parameters"
                     {"scale": ...}: base64 of the unscaled value, or a JSON number with
                     ``decimal.format=NUMERIC`` ({"type": "number", "connect.type": "bytes"})
    Date/Time/Timestamp  integers (days, ms of the day, ms since the epoch), titled by the
                     logical name, "connect.version": 1
    ARRAY            {"type": "array", "items": ...}
    MAP (STRING keys)  {"type": "object", "additionalProperties": V, "connect.type": "map"}
    MAP (other keys)   {"type": "array", "items": {"type": "object", "properties": {key, value}},
                       "connect.type": "map"}
    STRUCT           {"type": "object", "title": name, "properties": {...}}, each property with
                     "connect.index" (its position)
    enum (STRING with io.confluent.connect.json.Enum parameters)  {"type": "string", "enum": [...]}
    optional T       {"oneOf": [{"type": "null"}, T]} (the property's "connect.index" on the oneOf)

Names go to ``title``, docs to ``description``, versions to ``connect.version``, other
parameters to ``connect.parameters``, defaults to ``default``. Reading a schema back, a JSON
integer without ``connect.type`` is INT64 and a number FLOAT64 (as Confluent); a property is
optional when its schema admits null (a ``oneOf``/``anyOf`` with ``null``, or ``"type": [T,
"null"]``), or, with ``use.optional.for.nonrequired``, when it is not ``required``. Other
unions, ``not``, conditionals and open ``{}`` schemas have no Connect form and are refused.

Values: each direction compiles one function per schema (cached by the converter).
"""

from __future__ import annotations

import base64
import binascii
import decimal
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import referencing
import referencing.exceptions
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
from seaway.connect.converters._struct_reader import compile_struct_reader

if TYPE_CHECKING:
    from referencing._core import Resolver

__all__ = ["ENUM_PARAM", "JsonData", "connect_to_json_schema", "json_schema_to_connect"]

NAMESPACE = "io.confluent.connect.json"
ENUM_PARAM = f"{NAMESPACE}.Enum"
CONNECT_TYPE = "connect.type"
CONNECT_INDEX = "connect.index"
_INT_TYPES = {SchemaType.INT8: "int8", SchemaType.INT16: "int16", SchemaType.INT32: "int32", SchemaType.INT64: "int64"}
_FLOAT_TYPES = {SchemaType.FLOAT32: "float32", SchemaType.FLOAT64: "float64"}
_BY_CONNECT_TYPE = {v: k for k, v in {**_INT_TYPES, **_FLOAT_TYPES}.items()}
_LOGICAL: dict[str | None, Any] = {DATE_LOGICAL_NAME: Date, TIME_LOGICAL_NAME: Time, TIMESTAMP_LOGICAL_NAME: Timestamp}

Fn = Callable[[Any], Any]


class JsonData:
    """The mapping, with Confluent's converter settings that change it."""

    def __init__(self, *, decimal_numeric: bool = False, optional_for_nonrequired: bool = False) -> None:
        self.decimal_numeric = decimal_numeric
        self.optional_for_nonrequired = optional_for_nonrequired

    # -- Connect -> JSON Schema ------------------------------------------------------------------

    def from_connect_schema(self, schema: Schema, index: int | None = None) -> dict[str, Any]:
        base = self._base(schema)
        if schema.name and "title" not in base:
            base["title"] = schema.name
        if schema.doc:
            base["description"] = schema.doc
        if schema.default_value is not None:
            base["default"] = self.to_json_fn(schema)(schema.default_value)
        if schema.version is not None:
            base["connect.version"] = schema.version
        params = {k: v for k, v in (schema.parameters or {}).items() if not k.startswith(NAMESPACE)}
        if params:
            base["connect.parameters"] = params
        if schema.optional:
            out: dict[str, Any] = {"oneOf": [{"type": "null"}, base]}
            if index is not None:
                out[CONNECT_INDEX] = index
            return out
        if index is not None:
            base[CONNECT_INDEX] = index
        return base

    def _base(self, schema: Schema) -> dict[str, Any]:
        t = schema.type
        if t in _INT_TYPES:
            return {"type": "integer", CONNECT_TYPE: _INT_TYPES[t]}
        if t in _FLOAT_TYPES:
            return {"type": "number", CONNECT_TYPE: _FLOAT_TYPES[t]}
        if t is SchemaType.BOOLEAN:
            return {"type": "boolean"}
        if t is SchemaType.STRING:
            params = schema.parameters or {}
            if ENUM_PARAM in params:
                prefix = ENUM_PARAM + "."
                return {"type": "string", "enum": [k[len(prefix):] for k in params if k.startswith(prefix)]}
            return {"type": "string"}
        if t is SchemaType.BYTES:
            numeric = schema.name == DECIMAL_LOGICAL_NAME and self.decimal_numeric
            return {"type": "number" if numeric else "string", CONNECT_TYPE: "bytes"}
        if t is SchemaType.ARRAY:
            assert schema.value_schema is not None
            return {"type": "array", "items": self.from_connect_schema(schema.value_schema)}
        if t is SchemaType.MAP:
            assert schema.key_schema is not None and schema.value_schema is not None
            if schema.key_schema.type is SchemaType.STRING and not schema.key_schema.optional:
                return {"type": "object", "additionalProperties": self.from_connect_schema(schema.value_schema),
                        CONNECT_TYPE: "map"}
            entry = {"type": "object", "properties": {"key": self.from_connect_schema(schema.key_schema, 0),
                                                      "value": self.from_connect_schema(schema.value_schema, 1)}}
            return {"type": "array", "items": entry, CONNECT_TYPE: "map"}
        out: dict[str, Any] = {"type": "object"}
        if schema.name:
            out["title"] = schema.name
        out["properties"] = {f.name: self.from_connect_schema(f.schema, f.index) for f in schema.fields}
        return out

    # -- JSON Schema -> Connect ------------------------------------------------------------------

    def to_connect_schema(self, data: Any, resolver: Resolver[Any] | None = None) -> Schema:
        return self._to_connect(data, resolver, optional=False, depth=0).build()

    def _resolve(self, data: Any, resolver: Resolver[Any] | None) -> tuple[Any, Any]:
        for _ in range(64):
            if not (isinstance(data, dict) and isinstance(data.get("$ref"), str)):
                return data, resolver
            if resolver is None:
                raise DataError(f"Cannot resolve $ref {data['$ref']!r} without the schema's registry")
            try:
                found = resolver.lookup(data["$ref"])
            except referencing.exceptions.Unresolvable as exc:
                raise DataError(f"Cannot resolve $ref {data['$ref']!r}: {exc}") from None
            data, resolver = found.contents, found.resolver
        raise DataError("$ref chain too long")

    def _to_connect(self, data: Any, resolver: Resolver[Any] | None, *, optional: bool,
                    depth: int) -> SchemaBuilder:
        if depth > 64:
            raise DataError("JSON Schema nests too deeply (a recursive schema has no Connect form)")
        data, resolver = self._resolve(data, resolver)
        if not isinstance(data, dict):
            raise DataError(f"JSON Schema {data!r} has no Connect form")
        for combiner in ("oneOf", "anyOf"):
            members = data.get(combiner)
            if isinstance(members, list):
                others = [m for m in members if self._resolve(m, resolver)[0] != {"type": "null"}]
                if len(others) == 1 and len(others) < len(members):
                    return self._annotate(self._to_connect(others[0], resolver, optional=True, depth=depth + 1),
                                          data, True)
                raise DataError(f"A JSON Schema {combiner} other than [null, T] has no Connect form here")
        types = data.get("type")
        if isinstance(types, list):
            non_null = [t for t in types if t != "null"]
            if len(non_null) != 1:
                raise DataError(f"A JSON Schema type list {types} has no Connect form")
            return self._to_connect({**data, "type": non_null[0]}, resolver, optional=optional or "null" in types,
                                    depth=depth)
        builder = self._typed(data, resolver, depth)
        return self._annotate(builder, data, optional)

    def _annotate(self, builder: SchemaBuilder, data: dict[str, Any], optional: bool) -> SchemaBuilder:
        if optional:
            builder.optional()
        return builder

    def _typed(self, data: dict[str, Any], resolver: Resolver[Any] | None, depth: int) -> SchemaBuilder:
        kind, connect_type, title = data.get("type"), data.get(CONNECT_TYPE), data.get("title")
        params: dict[str, str] = {str(k): str(v) for k, v in (data.get("connect.parameters") or {}).items()}
        if kind is None:
            kind = "object" if "properties" in data else "array" if "items" in data else \
                "string" if "enum" in data else None
        if title == DECIMAL_LOGICAL_NAME or (kind in ("string", "number") and connect_type == "bytes"
                                              and title == DECIMAL_LOGICAL_NAME):
            builder = Decimal.builder(int(params.get("scale", "0")))
        elif title in _LOGICAL and kind == "integer":
            builder = _LOGICAL[title].builder()
        elif kind == "integer":
            builder = SchemaBuilder(_BY_CONNECT_TYPE.get(str(connect_type), SchemaType.INT64))
        elif kind == "number":
            builder = SchemaBuilder(SchemaType.FLOAT32 if connect_type == "float32" else SchemaType.FLOAT64)
        elif kind == "boolean":
            builder = SchemaBuilder.boolean()
        elif kind == "string":
            builder = SchemaBuilder.bytes() if connect_type == "bytes" else SchemaBuilder.string()
            if isinstance(data.get("enum"), list) and connect_type != "bytes":
                builder.parameter(ENUM_PARAM, str(title or ""))
                for symbol in data["enum"]:
                    builder.parameter(f"{ENUM_PARAM}.{symbol}", str(symbol))
        elif kind == "array":
            items = data.get("items", {})
            if connect_type == "map":
                entry, entry_resolver = self._resolve(items, resolver)
                props = entry.get("properties", {}) if isinstance(entry, dict) else {}
                builder = SchemaBuilder.map(
                    self._to_connect(props.get("key", {}), entry_resolver, optional=False, depth=depth + 1).build(),
                    self._to_connect(props.get("value", {}), entry_resolver, optional=False, depth=depth + 1).build())
            else:
                element = self._to_connect(items, resolver, optional=False, depth=depth + 1)
                builder = SchemaBuilder.array(element.build())
        elif kind == "object":
            additional = data.get("additionalProperties")
            if connect_type == "map" or ("properties" not in data and isinstance(additional, dict)):
                map_value = self._to_connect(additional if isinstance(additional, dict) else {}, resolver,
                                             optional=False, depth=depth + 1)
                builder = SchemaBuilder.map(Schema.STRING_SCHEMA, map_value.build())
            else:
                builder = self._struct(data, resolver, depth)
        else:
            raise DataError(f"JSON Schema {dict(list(data.items())[:4])} has no Connect form")
        if builder.type is not SchemaType.STRUCT and isinstance(title, str) and not _is_logical(title):
            builder.name(title)
        if isinstance(data.get("description"), str):
            builder.doc(data["description"])
        version = data.get("connect.version")
        if isinstance(version, int) and builder.type is not SchemaType.STRUCT and not _is_logical(title):
            builder.version(version)
        for key, param in params.items():
            if not (title == DECIMAL_LOGICAL_NAME and key == "scale"):
                builder.parameter(key, param)
        return builder

    def _struct(self, data: dict[str, Any], resolver: Resolver[Any] | None, depth: int) -> SchemaBuilder:
        builder = SchemaBuilder.struct()
        if isinstance(data.get("title"), str):
            builder.name(data["title"])
        if isinstance(data.get("connect.version"), int):
            builder.version(data["connect.version"])
        properties = data.get("properties") or {}
        required = set(data.get("required") or []) if isinstance(data.get("required"), list) else set()
        ordered = sorted(enumerate(properties.items()), key=lambda item: (
            _index(item[1][1], resolver), item[0]))
        for _, (name, sub) in ordered:
            optional = self.optional_for_nonrequired and name not in required
            builder.field(name, self._to_connect(sub, resolver, optional=optional, depth=depth + 1).build())
        return builder

    # -- values ------------------------------------------------------------------------------------

    def to_json_fn(self, schema: Schema) -> Fn:
        """Connect value -> JSON value, for ``schema``."""
        fn = self._to_json(schema)
        return (lambda v: None if v is None else fn(v)) if schema.optional else fn

    def _to_json(self, schema: Schema) -> Fn:
        t, name = schema.type, schema.name
        if name == DECIMAL_LOGICAL_NAME:
            if self.decimal_numeric:
                return lambda v: float(v) if isinstance(v, decimal.Decimal) else v
            return lambda v: base64.b64encode(Decimal.from_logical(schema, v)).decode("ascii")
        if name in _LOGICAL:
            logical = _LOGICAL[name]
            return lambda v: logical.from_logical(schema, v)
        if t is SchemaType.BYTES:
            return lambda v: base64.b64encode(bytes(v)).decode("ascii")
        if t is SchemaType.ARRAY:
            assert schema.value_schema is not None
            item = self.to_json_fn(schema.value_schema)
            return lambda v: [item(x) for x in v]
        if t is SchemaType.MAP:
            assert schema.key_schema is not None and schema.value_schema is not None
            key, value = self.to_json_fn(schema.key_schema), self.to_json_fn(schema.value_schema)
            if schema.key_schema.type is SchemaType.STRING and not schema.key_schema.optional:
                return lambda v: {k: value(x) for k, x in v.items()}
            return lambda v: [{"key": key(k), "value": value(x)} for k, x in v.items()]
        if t is SchemaType.STRUCT:
            fields = [(f.name, f.index, self.to_json_fn(f.schema)) for f in schema.fields]

            def struct(v: Struct) -> dict[str, Any]:
                values = v.values()
                return {name: fn(values[i]) for name, i, fn in fields}

            return struct
        return _identity

    def to_connect_fn(self, schema: Schema) -> Fn:
        """JSON value -> Connect value, for ``schema``."""
        fn = self._to_connect_value(schema)
        default = schema.default_value

        def convert(v: Any) -> Any:
            if v is None:
                if schema.optional or default is not None:
                    return default
                raise DataError(f"null for the required {schema!r}")
            return fn(v)

        return convert

    def _to_connect_value(self, schema: Schema) -> Fn:
        t, name = schema.type, schema.name
        if name == DECIMAL_LOGICAL_NAME:
            scale = Decimal.scale(schema)
            return lambda v: _decimal(v, scale, schema)
        if name in _LOGICAL:
            logical = _LOGICAL[name]
            return lambda v: logical.to_logical(schema, int(v))
        if t is SchemaType.BYTES:
            return _from_base64
        if t in _INT_TYPES:
            return _integer
        if t in _FLOAT_TYPES:
            return float
        if t is SchemaType.ARRAY:
            assert schema.value_schema is not None
            item = self.to_connect_fn(schema.value_schema)
            return lambda v: [item(x) for x in v]
        if t is SchemaType.MAP:
            assert schema.key_schema is not None and schema.value_schema is not None
            key, value = self.to_connect_fn(schema.key_schema), self.to_connect_fn(schema.value_schema)
            return lambda v: ({k: value(x) for k, x in v.items()} if isinstance(v, Mapping)
                              else {key(e["key"]): value(e.get("value")) for e in v})
        if t is SchemaType.STRUCT:
            # The sink's hot path: one function generated per schema (Connect's own JSON struct
            # reader, shared with the JsonConverter) takes the values JSON already holds in their
            # Connect form inline, and calls each field's full conversion for anything else.
            def not_object(v: Any) -> Any:
                raise DataError(f"Expected a JSON object for {schema!r}, got {type(v).__name__}")

            return compile_struct_reader(schema, [self.to_connect_fn(f.schema) for f in schema.fields], True,
                                         not_object)
        return _identity


def _identity(v: Any) -> Any:
    return v


def _integer(v: Any) -> int:
    if type(v) is int:
        return v
    if isinstance(v, bool) or not isinstance(v, int | float) or v != int(v):
        raise DataError(f"Expected an integer, got {v!r}")
    return int(v)


def _from_base64(v: Any) -> bytes:
    try:
        return base64.b64decode(v, validate=True)
    except (binascii.Error, TypeError, ValueError) as exc:
        raise DataError(f"Invalid base64 bytes {str(v)[:40]!r}: {exc}") from None


def _decimal(v: Any, scale: int, schema: Schema) -> decimal.Decimal:
    if isinstance(v, str):
        return Decimal.to_logical(schema, _from_base64(v))
    if isinstance(v, int | float) and not isinstance(v, bool):
        return decimal.Decimal(str(v)).quantize(decimal.Decimal(1).scaleb(-scale))
    raise DataError(f"Invalid decimal value {v!r}")


def _index(sub: Any, resolver: Any) -> int:
    value = sub.get(CONNECT_INDEX) if isinstance(sub, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else 1 << 30


def _is_logical(title: Any) -> bool:
    return title == DECIMAL_LOGICAL_NAME or title in _LOGICAL


def connect_to_json_schema(schema: Schema, data: JsonData | None = None) -> dict[str, Any]:
    """The JSON Schema document (draft 7, the default dialect) for a Connect schema."""
    return (data or JsonData()).from_connect_schema(schema)


def json_schema_to_connect(schema: Any, resolver: Resolver[Any] | None = None,
                           data: JsonData | None = None) -> Schema:
    """The Connect schema a JSON Schema document maps to."""
    return (data or JsonData()).to_connect_schema(schema, resolver)

