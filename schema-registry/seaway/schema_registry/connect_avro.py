"""Connect schemas and values <-> Avro, the way Confluent's ``AvroData`` maps them.

Schemas (Connect -> Avro; Avro -> Connect is the inverse, and also reads plain Avro written
by other producers)::

    INT8, INT16      "int" + {"connect.type": "int8" | "int16"}
    INT32 / INT64    "int" / "long"          FLOAT32 / FLOAT64   "float" / "double"
    BOOLEAN, STRING, BYTES                   the Avro primitive of that name
    Decimal          "bytes", logicalType decimal, scale, precision (parameter
                     "connect.decimal.precision", default 64)
    Date / Time      "int", logicalType date / time-millis
    Timestamp        "long", logicalType timestamp-millis
    STRUCT           record named by the Connect name (else io.confluent.connect.avro.ConnectDefault,
                     numbered when several), "connect.name" kept
    ARRAY            array               MAP (STRING keys)    map
    MAP (other keys) array of io.confluent.connect.avro.MapEntry {key, value} records
    STRING with parameter io.confluent.connect.avro.Enum      enum (symbols from the parameters)
    optional T       union ["null", T] with default null; [T, "null"] when T has a default

Connect metadata rides in properties: ``connect.name``, ``connect.version``, ``connect.doc``,
``connect.parameters``, ``connect.default`` (``connect.meta.data=false`` leaves them out).
Avro ``fixed`` reads as BYTES with parameter ``connect.fixed.size``; logical types Connect
has no counterpart for (micros, uuid, local-timestamp) read as their base type.

Values: Connect's Python values for logical types (``decimal.Decimal``, ``datetime.date``,
``datetime.time``, ``datetime.datetime``) are exactly what fastavro reads and writes for
those logical types, so only structs, maps with non-string keys and small ints need work.
Each direction compiles one function per schema (cached by the converter), so no schema is
inspected per record.

Known gaps: unions other than ``[null, T]`` are refused (Confluent maps them to
``io.confluent.connect.avro.Union`` structs); recursive Avro records cannot be expressed in
Connect and are refused.
"""

from __future__ import annotations

import datetime
import decimal
import json
from collections.abc import Callable, Mapping
from typing import Any

from seaway.connect.api.data.logical import Date, Decimal, Time, Timestamp
from seaway.connect.api.data.schema import (
    DATE_LOGICAL_NAME,
    DECIMAL_LOGICAL_NAME,
    TIME_LOGICAL_NAME,
    TIMESTAMP_LOGICAL_NAME,
    Field,
    Schema,
    SchemaType,
)
from seaway.connect.api.data.struct import Struct
from seaway.connect.api.errors import DataError

__all__ = [
    "AVRO_NAMESPACE",
    "DEFAULT_RECORD_NAME",
    "ENUM_PARAM",
    "PRECISION_PARAM",
    "avro_to_connect",
    "connect_to_avro",
    "to_avro_fn",
    "to_connect_fn",
]

AVRO_NAMESPACE = "io.confluent.connect.avro"
DEFAULT_RECORD_NAME = f"{AVRO_NAMESPACE}.ConnectDefault"
MAP_ENTRY_NAME = f"{AVRO_NAMESPACE}.MapEntry"
ENUM_PARAM = f"{AVRO_NAMESPACE}.Enum"
PRECISION_PARAM = "connect.decimal.precision"
FIXED_SIZE_PARAM = "connect.fixed.size"
DEFAULT_PRECISION = 64

_PRIMITIVE_TO_AVRO = {
    SchemaType.INT8: "int", SchemaType.INT16: "int", SchemaType.INT32: "int", SchemaType.INT64: "long",
    SchemaType.FLOAT32: "float", SchemaType.FLOAT64: "double", SchemaType.BOOLEAN: "boolean",
    SchemaType.STRING: "string", SchemaType.BYTES: "bytes",
}
_AVRO_TO_PRIMITIVE = {
    "int": SchemaType.INT32, "long": SchemaType.INT64, "float": SchemaType.FLOAT32,
    "double": SchemaType.FLOAT64, "boolean": SchemaType.BOOLEAN, "string": SchemaType.STRING,
    "bytes": SchemaType.BYTES,
}
_LOGICAL = {  # Connect logical name -> (Avro base type, Avro logicalType)
    DATE_LOGICAL_NAME: ("int", "date"),
    TIME_LOGICAL_NAME: ("int", "time-millis"),
    TIMESTAMP_LOGICAL_NAME: ("long", "timestamp-millis"),
}
_AVRO_LOGICAL = {v[1]: (k, v[0]) for k, v in _LOGICAL.items()}
_EPOCH_DATE = datetime.date(1970, 1, 1)

AvroJson = Any  # an Avro schema as parsed JSON: str, list (union) or dict


# -- Connect -> Avro schema ---------------------------------------------------------------------

class _Names:
    """Hands out unique full names for generated records (ConnectDefault, ConnectDefault2, ...)."""

    def __init__(self) -> None:
        self.used: set[str] = set()

    def take(self, full_name: str) -> str:
        name, n = full_name, 1
        while name in self.used:
            n += 1
            name = f"{full_name}{n}"
        self.used.add(name)
        return name


def _split(full_name: str) -> dict[str, str]:
    namespace, _, name = full_name.rpartition(".")
    return {"name": name, "namespace": namespace} if namespace else {"name": name}


def connect_to_avro(schema: Schema, *, meta: bool = True) -> AvroJson:
    """The Avro schema (as JSON data) for a Connect schema."""
    return _to_avro(schema, _Names(), meta, top=True)


def _to_avro(schema: Schema, names: _Names, meta: bool, *, top: bool = False) -> AvroJson:
    base = _base_to_avro(schema, names, meta)
    if meta and not isinstance(base, str) and schema.type is not SchemaType.STRUCT:
        _add_meta(base, schema)
    elif meta and isinstance(base, str) and _has_meta(schema):
        base = {"type": base}
        _add_meta(base, schema)
    if schema.optional:
        return ["null", base] if schema.default_value is None else [base, "null"]
    return base


def _has_meta(schema: Schema) -> bool:
    return bool(schema.name or schema.version is not None or schema.doc or schema.parameters
                or schema.default_value is not None)


def _add_meta(avro: dict[str, Any], schema: Schema) -> None:
    if schema.version is not None:
        avro["connect.version"] = schema.version
    if schema.doc:
        avro["connect.doc"] = schema.doc
    if schema.default_value is not None:
        avro["connect.default"] = _default_to_avro(schema, schema.default_value)
    if schema.parameters:
        avro["connect.parameters"] = dict(schema.parameters)
    if schema.name:
        avro["connect.name"] = schema.name


def _base_to_avro(schema: Schema, names: _Names, meta: bool) -> AvroJson:
    t = schema.type
    if schema.name == DECIMAL_LOGICAL_NAME and t is SchemaType.BYTES:
        params = schema.parameters or {}
        return {"type": "bytes", "logicalType": "decimal", "scale": Decimal.scale(schema),
                "precision": int(params.get(PRECISION_PARAM, DEFAULT_PRECISION))}
    if schema.name in _LOGICAL:
        avro_type, logical = _LOGICAL[schema.name]
        return {"type": avro_type, "logicalType": logical}
    if t is SchemaType.STRING and schema.parameters and ENUM_PARAM in schema.parameters:
        prefix = ENUM_PARAM + "."
        symbols = [v for k, v in schema.parameters.items() if k.startswith(prefix)]
        return {"type": "enum", **_split(names.take(schema.parameters[ENUM_PARAM])), "symbols": symbols}
    if t in (SchemaType.INT8, SchemaType.INT16):
        return {"type": "int", "connect.type": t.value}
    if t.is_primitive:
        return _PRIMITIVE_TO_AVRO[t]
    if t is SchemaType.ARRAY:
        assert schema.value_schema is not None
        return {"type": "array", "items": _to_avro(schema.value_schema, names, meta)}
    if t is SchemaType.MAP:
        assert schema.key_schema is not None and schema.value_schema is not None
        if schema.key_schema.type is SchemaType.STRING and not schema.key_schema.optional:
            return {"type": "map", "values": _to_avro(schema.value_schema, names, meta)}
        entry = {"type": "record", **_split(names.take(MAP_ENTRY_NAME)), "fields": [
            {"name": "key", "type": _to_avro(schema.key_schema, names, meta)},
            {"name": "value", "type": _to_avro(schema.value_schema, names, meta)}]}
        return {"type": "array", "items": entry}
    record: dict[str, Any] = {"type": "record", **_split(names.take(schema.name or DEFAULT_RECORD_NAME))}
    if schema.doc:
        record["doc"] = schema.doc
    fields = []
    for f in schema.fields:
        avro_field: dict[str, Any] = {"name": f.name, "type": _to_avro(f.schema, names, meta)}
        if f.schema.default_value is not None:
            avro_field["default"] = _default_to_avro(f.schema, f.schema.default_value)
        elif f.schema.optional:
            avro_field["default"] = None
        fields.append(avro_field)
    record["fields"] = fields
    if meta:
        if schema.version is not None:
            record["connect.version"] = schema.version
        if schema.parameters:
            record["connect.parameters"] = dict(schema.parameters)
        if schema.name:
            record["connect.name"] = schema.name
    return record


def _default_to_avro(schema: Schema, value: Any) -> Any:
    """A Connect default as Avro's JSON default (bytes as ISO-8859-1 text, logical as base)."""
    if value is None:
        return None
    name = schema.name
    if name == DECIMAL_LOGICAL_NAME:
        return Decimal.from_logical(schema, value).decode("latin-1")
    if name == DATE_LOGICAL_NAME:
        return Date.from_logical(schema, value)
    if name == TIME_LOGICAL_NAME:
        return Time.from_logical(schema, value)
    if name == TIMESTAMP_LOGICAL_NAME:
        return Timestamp.from_logical(schema, value)
    t = schema.type
    if t is SchemaType.BYTES:
        return bytes(value).decode("latin-1")
    if t is SchemaType.ARRAY:
        assert schema.value_schema is not None
        return [_default_to_avro(schema.value_schema, v) for v in value]
    if t is SchemaType.MAP:
        assert schema.key_schema is not None and schema.value_schema is not None
        if schema.key_schema.type is SchemaType.STRING and not schema.key_schema.optional:
            return {k: _default_to_avro(schema.value_schema, v) for k, v in value.items()}
        return [{"key": _default_to_avro(schema.key_schema, k), "value": _default_to_avro(schema.value_schema, v)}
                for k, v in value.items()]
    if t is SchemaType.STRUCT:
        return {f.name: _default_to_avro(f.schema, value.get(f.name)) for f in schema.fields}
    return value


# -- Avro -> Connect schema ---------------------------------------------------------------------

def avro_to_connect(avro: AvroJson) -> tuple[Schema, AvroJson]:
    """The Connect schema for an Avro schema, and the Avro schema to decode with.

    The second is the input with logical types Connect cannot represent removed (so fastavro
    hands back their base values) and named-type references left as they are.
    """
    named: dict[str, Schema] = {}
    reading = json.loads(json.dumps(avro))
    return _from_avro(reading, named, None, set()), reading


def _full_name(avro: Mapping[str, Any], namespace: str | None) -> str:
    name = str(avro["name"])
    if "." in name:
        return name
    ns = avro.get("namespace", namespace)
    return f"{ns}.{name}" if ns else name


def _from_avro(avro: AvroJson, named: dict[str, Schema], namespace: str | None, stack: set[str],
               optional: bool = False) -> Schema:
    if isinstance(avro, list):
        branches = [b for b in avro if b != "null"]
        if len(branches) != 1 or len(avro) > 2:
            raise DataError(f"Avro unions other than [null, T] are not supported: {json.dumps(avro)[:200]}")
        return _from_avro(branches[0], named, namespace, stack, optional=len(avro) == 2)
    if isinstance(avro, str):
        if avro in _AVRO_TO_PRIMITIVE:
            return Schema(_AVRO_TO_PRIMITIVE[avro], optional=optional)
        full = avro if "." in avro or namespace is None else f"{namespace}.{avro}"
        for candidate in (full, avro):
            if candidate in stack:
                raise DataError(f"Recursive Avro type {candidate} cannot be expressed as a Connect schema")
            if candidate in named:
                return _with(named[candidate], optional=optional)
        raise DataError(f"Unknown Avro type {avro!r}")
    avro_type = avro.get("type")
    if isinstance(avro_type, (list, dict)):
        return _from_avro(avro_type, named, namespace, stack, optional)
    props = _Meta(avro)
    if avro_type == "record":
        full = _full_name(avro, namespace)
        stack.add(full)
        inner_ns = full.rpartition(".")[0] or None
        fields = []
        for i, f in enumerate(avro.get("fields", [])):
            field_schema = _from_avro(f["type"], named, inner_ns, stack)
            if "default" in f and f["default"] is not None:
                field_schema = _with(field_schema, default=_default_to_connect(field_schema, f["default"]))
            fields.append(Field(str(f["name"]), i, field_schema))
        stack.discard(full)
        if full.startswith(MAP_ENTRY_NAME) and [f.name for f in fields] == ["key", "value"]:
            schema = Schema(SchemaType.STRUCT, field_list=tuple(fields))  # read as MAP by the array case
        else:
            name = props.name or (None if full.startswith(DEFAULT_RECORD_NAME) else full)
            schema = Schema(SchemaType.STRUCT, optional, None, name, props.version,
                            props.doc or avro.get("doc"), props.parameters, tuple(fields))
        named[full] = _with(schema, optional=False)
        return schema
    if avro_type == "enum":
        full = _full_name(avro, namespace)
        params = {ENUM_PARAM: full, **{f"{ENUM_PARAM}.{s}": str(s) for s in avro.get("symbols", [])}}
        params.update(props.parameters or {})
        schema = Schema(SchemaType.STRING, optional, None, props.name or full, props.version, props.doc, params)
        named[full] = _with(schema, optional=False)
        return schema
    if avro_type == "fixed":
        full = _full_name(avro, namespace)
        params = {**(props.parameters or {}), FIXED_SIZE_PARAM: str(avro["size"])}
        schema = Schema(SchemaType.BYTES, optional, None, props.name or full, props.version, props.doc, params)
        named[full] = _with(schema, optional=False)
        return schema
    if avro_type == "array":
        items = _from_avro(avro["items"], named, namespace, stack)
        if items.type is SchemaType.STRUCT and items.name is None and [f.name for f in items.fields] == [
                "key", "value"] and _is_map_entry(avro["items"], namespace):
            k, v = items.fields
            return Schema(SchemaType.MAP, optional, None, props.name, props.version, props.doc,
                          props.parameters, key_schema=k.schema, value_schema=v.schema)
        return Schema(SchemaType.ARRAY, optional, None, props.name, props.version, props.doc,
                      props.parameters, value_schema=items)
    if avro_type == "map":
        values = _from_avro(avro["values"], named, namespace, stack)
        return Schema(SchemaType.MAP, optional, None, props.name, props.version, props.doc, props.parameters,
                      key_schema=Schema.STRING_SCHEMA, value_schema=values)
    if avro_type in _AVRO_TO_PRIMITIVE:
        return _primitive_from_avro(avro, str(avro_type), props, optional)
    raise DataError(f"Unsupported Avro type {avro_type!r}")


def _is_map_entry(items: AvroJson, namespace: str | None) -> bool:
    return isinstance(items, dict) and _full_name(items, namespace).startswith(MAP_ENTRY_NAME)


def _primitive_from_avro(avro: dict[str, Any], avro_type: str, props: _Meta, optional: bool) -> Schema:
    logical = avro.get("logicalType")
    if logical == "decimal" and avro_type == "bytes":
        scale, precision = int(avro.get("scale", 0)), int(avro.get("precision", DEFAULT_PRECISION))
        if props.parameters is not None:  # written by Connect: its parameters, exactly
            params = {**props.parameters, "scale": str(scale)}
        else:  # plain Avro: precision only when it is not Connect's default (as AvroData)
            params = {"scale": str(scale)}
            if precision != DEFAULT_PRECISION:
                params[PRECISION_PARAM] = str(precision)
        return Schema(SchemaType.BYTES, optional, None, DECIMAL_LOGICAL_NAME, 1, props.doc, params)
    if logical in _AVRO_LOGICAL and _AVRO_LOGICAL[logical][1] == avro_type:
        name = _AVRO_LOGICAL[logical][0]
        return Schema(_AVRO_TO_PRIMITIVE[avro_type], optional, None, name, 1, props.doc, props.parameters)
    avro.pop("logicalType", None)  # one Connect cannot represent: decode the base value
    stype = _AVRO_TO_PRIMITIVE[avro_type]
    connect_type = avro.get("connect.type")
    if avro_type == "int" and connect_type in ("int8", "int16"):
        stype = SchemaType(connect_type)
    return Schema(stype, optional, None, props.name, props.version, props.doc, props.parameters)


class _Meta:
    """The ``connect.*`` properties of an Avro schema."""

    __slots__ = ("doc", "name", "parameters", "version")

    def __init__(self, avro: Mapping[str, Any]) -> None:
        self.name: str | None = avro.get("connect.name")
        version = avro.get("connect.version")
        self.version: int | None = int(version) if version is not None else None
        self.doc: str | None = avro.get("connect.doc")
        params = avro.get("connect.parameters")
        self.parameters: dict[str, str] | None = (
            {str(k): str(v) for k, v in params.items()} if isinstance(params, Mapping) else None)


def _with(schema: Schema, *, optional: bool | None = None, default: Any = None) -> Schema:
    """A copy of ``schema`` with another optionality and/or default."""
    return Schema(schema.type, schema.optional if optional is None else optional,
                  schema.default_value if default is None else default, schema.name, schema.version,
                  schema.doc, schema.parameters, schema.field_list, schema.key_schema, schema.value_schema)


def _default_to_connect(schema: Schema, value: Any) -> Any:
    """An Avro JSON default as a Connect value; ``None`` when it cannot be represented."""
    try:
        return _default_value(schema, value)
    except (DataError, TypeError, ValueError, KeyError, AttributeError):
        return None


def _default_value(schema: Schema, value: Any) -> Any:
    if value is None:
        return None
    name, t = schema.name, schema.type
    if name == DECIMAL_LOGICAL_NAME:
        return Decimal.to_logical(schema, str(value).encode("latin-1"))
    if name == DATE_LOGICAL_NAME:
        return Date.to_logical(schema, int(value))
    if name == TIME_LOGICAL_NAME:
        return Time.to_logical(schema, int(value))
    if name == TIMESTAMP_LOGICAL_NAME:
        return Timestamp.to_logical(schema, int(value))
    if t is SchemaType.BYTES:
        return str(value).encode("latin-1")
    if t in (SchemaType.FLOAT32, SchemaType.FLOAT64):
        return float(value)
    if t is SchemaType.ARRAY:
        assert schema.value_schema is not None
        return [_default_value(schema.value_schema, v) for v in value]
    if t is SchemaType.MAP:
        assert schema.key_schema is not None and schema.value_schema is not None
        if isinstance(value, list):
            return {_default_value(schema.key_schema, e["key"]): _default_value(schema.value_schema, e["value"])
                    for e in value}
        return {k: _default_value(schema.value_schema, v) for k, v in value.items()}
    if t is SchemaType.STRUCT:
        struct = Struct(schema)
        for f in schema.fields:
            if f.name in value:
                struct.put(f.name, _default_value(f.schema, value[f.name]))
        return struct
    return value


# -- values -------------------------------------------------------------------------------------

Fn = Callable[[Any], Any]


def _identity(value: Any) -> Any:
    return value


def _optional(fn: Fn) -> Fn:
    return lambda v: None if v is None else fn(v)


def to_avro_fn(schema: Schema) -> Fn:
    """A function turning a Connect value of ``schema`` into the datum fastavro writes."""
    fn = _to_avro_value(schema)
    return fn if fn is _identity else _optional(fn)


def _to_avro_value(schema: Schema) -> Fn:
    t = schema.type
    if schema.name in (DECIMAL_LOGICAL_NAME, DATE_LOGICAL_NAME, TIME_LOGICAL_NAME, TIMESTAMP_LOGICAL_NAME):
        return _identity  # fastavro's logical types take the same Python values
    if t is SchemaType.BYTES:
        return lambda v: bytes(v) if isinstance(v, bytearray) else v
    if t.is_primitive:
        return _identity
    if t is SchemaType.ARRAY:
        assert schema.value_schema is not None
        item = to_avro_fn(schema.value_schema)
        return (lambda v: list(v)) if item is _identity else (lambda v: [item(x) for x in v])
    if t is SchemaType.MAP:
        assert schema.key_schema is not None and schema.value_schema is not None
        kf, vf = to_avro_fn(schema.key_schema), to_avro_fn(schema.value_schema)
        if schema.key_schema.type is SchemaType.STRING and not schema.key_schema.optional:
            return lambda v: {k: vf(x) for k, x in v.items()}
        return lambda v: [{"key": kf(k), "value": vf(x)} for k, x in v.items()]
    fields = [(f.name, to_avro_fn(f.schema)) for f in schema.fields]

    def struct(v: Any) -> dict[str, Any]:
        if not isinstance(v, Struct):
            raise DataError(f"Expected a Struct for schema {schema!r}, got {type(v).__name__}")
        return {name: fn(v.get(name)) for name, fn in fields}

    return struct


def to_connect_fn(schema: Schema) -> Fn:
    """A function turning a datum fastavro read (with the reading schema) into a Connect value."""
    fn = _to_connect_value(schema)
    return fn if fn is _identity else _optional(fn)


def _to_connect_value(schema: Schema) -> Fn:
    t = schema.type
    if schema.name == DATE_LOGICAL_NAME:
        return lambda v: v if isinstance(v, datetime.date) else _EPOCH_DATE + datetime.timedelta(days=v)
    if schema.name == DECIMAL_LOGICAL_NAME:
        return lambda v: v if isinstance(v, decimal.Decimal) else Decimal.to_logical(schema, v)
    if t.is_primitive:
        return _identity
    if t is SchemaType.ARRAY:
        assert schema.value_schema is not None
        item = to_connect_fn(schema.value_schema)
        return _identity if item is _identity else (lambda v: [item(x) for x in v])
    if t is SchemaType.MAP:
        assert schema.key_schema is not None and schema.value_schema is not None
        kf, vf = to_connect_fn(schema.key_schema), to_connect_fn(schema.value_schema)
        return lambda v: ({kf(e["key"]): vf(e["value"]) for e in v} if isinstance(v, list)
                          else {k: vf(x) for k, x in v.items()})
    fields = [(f.name, to_connect_fn(f.schema)) for f in schema.fields]

    def struct(v: Mapping[str, Any]) -> Struct:
        out = Struct(schema)
        for name, fn in fields:
            value = v.get(name)
            if value is not None:
                out.put(name, fn(value))
        return out

    return struct
