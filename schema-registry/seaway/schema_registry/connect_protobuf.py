"""Connect schemas and values <-> Protobuf, the way Confluent's ``ProtobufData`` maps them.

Connect -> Protobuf (the schema a converter registers; the root must be a STRUCT)::

    STRUCT           message named by the schema's name (package from its namespace;
                     ConnectDefault1 without a name); nested STRUCTs are nested messages
                     named by their unqualified name ("...Message" when it equals the field's)
    field numbers    the io.confluent.connect.protobuf.Tag parameter, else 1, 2, ... in order
    INT8, INT16      int32, with (confluent.field_meta).params connect.type = int8 | int16
    INT32 / INT64    int32 / int64 (io.confluent.connect.protobuf.Type picks sint32, uint64, ...)
    FLOAT32/FLOAT64  float / double          BOOLEAN, STRING, BYTES   bool, string, bytes
    enum STRING      enum (io.confluent.connect.protobuf.Enum parameters: symbol -> number)
    Decimal          confluent.type.Decimal (precision and scale in field_meta params)
    Date / Time / Timestamp   google.type.Date / google.type.TimeOfDay / google.protobuf.Timestamp
    ARRAY            repeated field          MAP      map<K, V> (scalar keys)
    union STRUCT (io.confluent.connect.protobuf.Union.<name>)   oneof <name>

Protobuf -> Connect (any message, also from other producers): a STRUCT named by the message's
simple name; every field optional (proto3 has no required fields), carrying its number in
io.confluent.connect.protobuf.Tag; a real oneof becomes an optional union STRUCT field named
``<oneof>_<index>`` listed first; int32/sint32/sfixed32 -> INT32, other integers -> INT64
(the Protobuf type in io.confluent.connect.protobuf.Type when it is not the plain one);
enums -> STRING with their symbols; repeated -> ARRAY; maps -> MAP; the well-known
Timestamp, google.type Date and TimeOfDay and confluent.type.Decimal -> Connect's logical types.

Optional Connect fields are plain proto3 fields (a null is written as nothing and reads back
as the default), or ``optional`` ones with ``optional.for.nullables=true``. Values: one
function per schema each way. Reading a message, unset message fields and unset
proto3 ``optional`` fields are null, other unset scalars their Protobuf default (0, ""),
as on the wire.
"""

from __future__ import annotations

import datetime
import decimal
import operator
import re
from collections.abc import Callable
from typing import Any

from google.protobuf import descriptor as pb_descriptor
from seaway.codegen import Source, is_identifier
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

__all__ = ["TAG_PARAM", "UNION_PREFIX", "connect_to_proto", "message_schema", "to_connect_fn", "to_message_fn"]

NAMESPACE = "io.confluent.connect.protobuf"
ENUM_PARAM = f"{NAMESPACE}.Enum"
TAG_PARAM = f"{NAMESPACE}.Tag"
TYPE_PARAM = f"{NAMESPACE}.Type"
UNION_PREFIX = f"{NAMESPACE}.Union."
PRECISION_PARAM = "connect.decimal.precision"
DEFAULT_NAME = "ConnectDefault"
_FD = pb_descriptor.FieldDescriptor
_SCALAR = {
    SchemaType.INT32: "int32", SchemaType.INT64: "int64", SchemaType.FLOAT32: "float", SchemaType.FLOAT64: "double",
    SchemaType.BOOLEAN: "bool", SchemaType.STRING: "string", SchemaType.BYTES: "bytes",
    SchemaType.INT8: "int32", SchemaType.INT16: "int32",
}
_MAP_KEYS = {"int32", "int64", "uint32", "uint64", "sint32", "sint64", "fixed32", "fixed64", "sfixed32",
             "sfixed64", "bool", "string"}
_LOGICAL_TYPES: dict[str | None, tuple[str, str]] = {
    DECIMAL_LOGICAL_NAME: ("confluent.type.Decimal", "confluent/type/decimal.proto"),
    DATE_LOGICAL_NAME: ("google.type.Date", "google/type/date.proto"),
    TIME_LOGICAL_NAME: ("google.type.TimeOfDay", "google/type/timeofday.proto"),
    TIMESTAMP_LOGICAL_NAME: ("google.protobuf.Timestamp", "google/protobuf/timestamp.proto"),
}
_INVALID = re.compile(r"[^A-Za-z0-9_]")

Fn = Callable[[Any], Any]


# -- Connect -> .proto text ---------------------------------------------------------------------

def _scrub(name: str) -> str:
    """Confluent's ``scrubName``: a valid Protobuf identifier."""
    out = _INVALID.sub("_", name)
    return out if out and not out[0].isdigit() else "x" + out


def _quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


class _Writer:
    """Writes one message (and what it nests) as ``.proto`` text."""

    def __init__(self, optional_for_nullables: bool = False) -> None:
        self.imports: set[str] = set()
        self.defaults = 0
        self.optional_for_nullables = optional_for_nullables

    def message(self, schema: Schema, name: str, indent: str) -> list[str]:
        inner = indent + "  "
        body: list[str] = []
        nested: list[str] = []
        enums: dict[str, list[str]] = {}
        counter = 1
        for f in schema.fields:
            params = f.schema.parameters or {}
            if f.schema.type is SchemaType.STRUCT and (f.schema.name or "").startswith(UNION_PREFIX):
                body.append(f"{inner}oneof {_scrub(f.schema.name[len(UNION_PREFIX):])} {{")  # type: ignore[index]
                for member in f.schema.fields:
                    tag = int((member.schema.parameters or {}).get(TAG_PARAM, "0"))
                    body += self._field(member.schema, _scrub(member.name), tag, inner + "  ", nested, enums,
                                        in_oneof=True)
                body.append(f"{inner}}}")
                continue
            tag = int(params[TAG_PARAM]) if TAG_PARAM in params else counter
            if TAG_PARAM not in params:
                counter += 1
            body += self._field(f.schema, _scrub(f.name), tag, inner, nested, enums, in_oneof=False)
        lines = [f"{indent}message {name} {{", *body, *nested]
        for enum_lines in enums.values():
            lines += enum_lines
        lines.append(f"{indent}}}")
        return lines

    def _field(self, schema: Schema, name: str, tag: int, indent: str, nested: list[str],
               enums: dict[str, list[str]], *, in_oneof: bool) -> list[str]:
        label = ""
        if schema.type is SchemaType.ARRAY:
            assert schema.value_schema is not None
            if in_oneof:
                raise DataError(f"A oneof member cannot be repeated ({name})")
            label, schema = "repeated ", schema.value_schema
            if schema.type in (SchemaType.ARRAY, SchemaType.MAP):
                raise DataError(f"Protobuf has no array of {schema.type.name} ({name})")
        meta: dict[str, str] = {}
        type_name = self._type(schema, name, indent, nested, enums, meta)
        if (not label and not in_oneof and schema.optional and self.optional_for_nullables
                and schema.type is not SchemaType.MAP):
            label = "optional "  # a proto3 optional field: null stays null (optional.for.nullables)
        options = ""
        if meta:
            self.imports.add("confluent/meta.proto")
            pairs = ", ".join(f"{{key: {_quote(k)}, value: {_quote(v)}}}" for k, v in meta.items())
            options = f" [(confluent.field_meta) = {{ params: [{pairs}] }}]"
        return [f"{indent}{label}{type_name} {name} = {tag}{options};"]

    def _type(self, schema: Schema, field_name: str, indent: str, nested: list[str],
              enums: dict[str, list[str]], meta: dict[str, str]) -> str:
        params = schema.parameters or {}
        if schema.name in _LOGICAL_TYPES:
            full, path = _LOGICAL_TYPES[schema.name]
            self.imports.add(path)
            if schema.name == DECIMAL_LOGICAL_NAME:
                if PRECISION_PARAM in params:
                    meta["precision"] = params[PRECISION_PARAM]
                meta["scale"] = str(Decimal.scale(schema))
            return "." + full
        t = schema.type
        if t in (SchemaType.INT8, SchemaType.INT16):
            meta["connect.type"] = t.value
            return "int32"
        if t is SchemaType.STRING and ENUM_PARAM in params:
            enum_name = _scrub(params[ENUM_PARAM] or schema.name or field_name)
            prefix = ENUM_PARAM + "."
            values = [(k[len(prefix):], int(v)) for k, v in params.items() if k.startswith(prefix)]
            if not any(number == 0 for _, number in values):
                raise DataError(f"Enum {enum_name} needs a symbol numbered 0 (proto3)")
            enums[enum_name] = [f"{indent}enum {enum_name} {{",
                                *(f"{indent}  {_scrub(s)} = {n};" for s, n in values), f"{indent}}}"]
            return enum_name
        if t in (SchemaType.INT32, SchemaType.INT64) and TYPE_PARAM in params:
            return params[TYPE_PARAM]
        if t in _SCALAR:
            return _SCALAR[t]
        if t is SchemaType.MAP:
            assert schema.key_schema is not None and schema.value_schema is not None
            key = self._type(schema.key_schema, field_name, indent, nested, enums, {})
            if key not in _MAP_KEYS:
                raise DataError(f"A Protobuf map key must be an integer, bool or string, not {key} ({field_name})")
            if schema.value_schema.type in (SchemaType.ARRAY, SchemaType.MAP):
                raise DataError(f"A Protobuf map value cannot be an {schema.value_schema.type.name} ({field_name})")
            value = self._type(schema.value_schema, field_name, indent, nested, enums, {})
            return f"map<{key}, {value}>"
        if t is SchemaType.STRUCT:
            name = _scrub((schema.name or "").rsplit(".", 1)[-1]) if schema.name else self._default_name()
            if name == field_name:
                name += "Message"
            if not any(line.startswith(f"{indent}message {name} {{") for line in nested):
                nested += self.message(schema, name, indent)
            return name
        raise DataError(f"{t.name} has no Protobuf form")

    def _default_name(self) -> str:
        self.defaults += 1
        return f"{DEFAULT_NAME}{self.defaults}"


def connect_to_proto(schema: Schema, *, optional_for_nullables: bool = False) -> tuple[str, str]:
    """The ``.proto`` text for a Connect STRUCT schema, and its root message's full name.

    ``optional_for_nullables`` (Confluent's ``optional.for.nullables``) writes optional Connect
    fields as proto3 ``optional`` fields, so a null reads back as null rather than the default.
    """
    if schema.type is not SchemaType.STRUCT:
        raise DataError(f"ProtobufConverter writes STRUCT values, not {schema.type.name} (wrap it in a struct)")
    writer = _Writer(optional_for_nullables)
    full = schema.name or f"{DEFAULT_NAME}1"
    package, _, name = full.rpartition(".")
    if not schema.name:
        writer.defaults = 1
    body = writer.message(schema, _scrub(name), "")
    lines = ['syntax = "proto3";']
    if package:
        lines.append(f"package {'.'.join(_scrub(p) for p in package.split('.'))};")
    lines += [f"import {_quote(path)};" for path in sorted(writer.imports)]
    return "\n".join([*lines, *body]) + "\n", full


# -- Protobuf -> Connect schema ------------------------------------------------------------------

_INT32 = {_FD.TYPE_INT32: "int32", _FD.TYPE_SINT32: "sint32", _FD.TYPE_SFIXED32: "sfixed32"}
_INT64 = {_FD.TYPE_INT64: "int64", _FD.TYPE_UINT32: "uint32", _FD.TYPE_FIXED32: "fixed32",
          _FD.TYPE_UINT64: "uint64", _FD.TYPE_SINT64: "sint64", _FD.TYPE_FIXED64: "fixed64",
          _FD.TYPE_SFIXED64: "sfixed64"}


def _meta_params(field: Any) -> dict[str, str]:
    """``(confluent.field_meta).params`` of a field, read from its options' extensions."""
    options = field.GetOptions()
    for ext, value in options.ListFields():
        if ext.is_extension and ext.full_name == "confluent.field_meta":
            return {str(k): str(v) for k, v in value.params.items()}
    return {}


def _real_oneofs(descriptor: Any) -> list[Any]:
    return [o for o in descriptor.oneofs if not _synthetic(o)]


def _synthetic(oneof: Any) -> bool:
    return len(oneof.fields) == 1 and oneof.name == "_" + oneof.fields[0].name and oneof.fields[0].has_presence


def _real_oneof(field: Any) -> Any:
    oneof = field.containing_oneof
    return None if oneof is None or _synthetic(oneof) else oneof


def _is_map(field: Any) -> bool:
    return bool(field.message_type is not None and field.message_type.GetOptions().map_entry)


def message_schema(descriptor: Any) -> Schema:
    """The Connect STRUCT schema of a message descriptor."""
    return _struct(descriptor, {})


def _struct(descriptor: Any, seen: dict[str, int]) -> Schema:
    depth = seen.get(descriptor.full_name, 0)
    if depth:
        raise DataError(f"The recursive message {descriptor.full_name} has no Connect form")
    seen[descriptor.full_name] = 1
    try:
        builder = SchemaBuilder.struct().name(descriptor.name)
        for index, oneof in enumerate(descriptor.oneofs):
            if _synthetic(oneof):
                continue
            union = SchemaBuilder.struct().name(UNION_PREFIX + oneof.name)
            for member in oneof.fields:
                union.field(member.name, _field_schema(member, seen))
            builder.field(f"{oneof.name}_{index}", union.optional().build())
        for field in descriptor.fields:
            if _real_oneof(field) is None:
                builder.field(field.name, _field_schema(field, seen))
        return builder.build()
    finally:
        del seen[descriptor.full_name]


def _field_schema(field: Any, seen: dict[str, int]) -> Schema:
    if _is_map(field):
        entry = field.message_type
        key = _value_schema(entry.fields_by_name["key"], seen)
        value = _value_schema(entry.fields_by_name["value"], seen)
        return SchemaBuilder.map(key, value).optional().parameter(TAG_PARAM, str(field.number)).build()
    element = _value_schema(field, seen)
    if field.is_repeated:
        return SchemaBuilder.array(element).optional().parameter(TAG_PARAM, str(field.number)).build()
    return SchemaBuilder.from_schema(element).parameter(TAG_PARAM, str(field.number)).build()


def _value_schema(field: Any, seen: dict[str, int]) -> Schema:
    t = field.type
    if t in _INT32:
        connect_type = _meta_params(field).get("connect.type")
        if connect_type in ("int8", "int16"):
            return (SchemaBuilder.int8() if connect_type == "int8" else SchemaBuilder.int16()).optional().build()
        builder = SchemaBuilder.int32().optional()
        if t != _FD.TYPE_INT32:
            builder.parameter(TYPE_PARAM, _INT32[t])
        return builder.build()
    if t in _INT64:
        builder = SchemaBuilder.int64().optional()
        if t != _FD.TYPE_INT64:
            builder.parameter(TYPE_PARAM, _INT64[t])
        return builder.build()
    simple = {_FD.TYPE_FLOAT: Schema.OPTIONAL_FLOAT32_SCHEMA, _FD.TYPE_DOUBLE: Schema.OPTIONAL_FLOAT64_SCHEMA,
              _FD.TYPE_BOOL: Schema.OPTIONAL_BOOLEAN_SCHEMA, _FD.TYPE_STRING: Schema.OPTIONAL_STRING_SCHEMA,
              _FD.TYPE_BYTES: Schema.OPTIONAL_BYTES_SCHEMA}
    if t in simple:
        return simple[t]
    if t == _FD.TYPE_ENUM:
        enum = field.enum_type
        builder = SchemaBuilder.string().name(enum.name).parameter(ENUM_PARAM, enum.name)
        for value in enum.values:
            builder.parameter(f"{ENUM_PARAM}.{value.name}", str(value.number))
        return builder.optional().build()
    message = field.message_type
    full = message.full_name
    if full == "google.protobuf.Timestamp":
        return Timestamp.builder().optional().build()
    if full == "google.type.Date":
        return Date.builder().optional().build()
    if full == "google.type.TimeOfDay":
        return Time.builder().optional().build()
    if full == "confluent.type.Decimal":
        params = _meta_params(field)
        builder = Decimal.builder(int(params.get("scale", "0")))
        if "precision" in params:
            builder.parameter(PRECISION_PARAM, params["precision"])
        return builder.optional().build()
    return SchemaBuilder.from_schema(_struct(message, seen)).optional().build()


# -- values ----------------------------------------------------------------------------------------

_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)


def to_connect_fn(descriptor: Any, schema: Schema) -> Fn:
    """A message of ``descriptor`` -> a Struct of ``schema`` (``message_schema(descriptor)``).

    One function is generated per schema (the sink's hot path, as ``avro_decoder`` does for
    Avro) through :mod:`seaway.codegen`: a plain scalar field is read as an attribute inline,
    anything else through its reader. Only names :func:`~seaway.codegen.is_identifier` accepts
    are written into the generated source (a field named ``from`` is a Protobuf identifier but
    a Python keyword: it is read through its reader); readers are passed in as values.
    """
    src = Source(f"protobuf reader {descriptor.full_name}", {"new": object.__new__, "Struct": Struct})
    src.define("schema", schema)
    values: list[str] = []
    for i, f in enumerate(schema.fields):
        if f.schema.type is SchemaType.STRUCT and (f.schema.name or "").startswith(UNION_PREFIX):
            reader: Fn = _oneof_reader(descriptor, f.schema)
        else:
            reader = _field_reader(descriptor.fields_by_name[f.name], f.schema)
        if isinstance(reader, operator.attrgetter) and is_identifier(f.name):
            values.append(f"m.{f.name}")
        else:
            values.append(f"{src.define(f'r{i}', reader)}(m)")
    src.lines(["def read(m):", "    s = new(Struct)", "    s._schema = schema",
               f"    s._values = [{', '.join(values)}]", "    return s"])
    read: Fn = src.build("read")
    return read


def _oneof_reader(descriptor: Any, schema: Schema) -> Fn:
    name = (schema.name or "")[len(UNION_PREFIX):]
    members = [(m.index, _field_reader(descriptor.fields_by_name[m.name], m.schema), m.name) for m in schema.fields]

    def read(message: Any) -> Struct | None:
        chosen = message.WhichOneof(name)
        if chosen is None:
            return None
        values: list[Any] = [None] * len(members)
        for index, reader, member in members:
            if member == chosen:
                values[index] = reader(message)
        return Struct.from_valid_values(schema, values)

    return read


def _field_reader(field: Any, schema: Schema) -> Fn:
    name = field.name
    if _is_map(field):
        assert schema.key_schema is not None and schema.value_schema is not None
        value = _value_reader(field.message_type.fields_by_name["value"], schema.value_schema)
        return lambda m: {k: value(v) for k, v in getattr(m, name).items()}
    element = _value_reader(field, schema.value_schema if field.is_repeated and schema.value_schema else schema)
    if field.is_repeated:
        if element is _same:
            return lambda m: list(getattr(m, name))
        return lambda m: [element(v) for v in getattr(m, name)]
    if field.has_presence:
        return lambda m: element(getattr(m, name)) if m.HasField(name) else None
    if element is _same:
        return operator.attrgetter(name)  # a scalar read as it is: the sink's hot path
    return lambda m: element(getattr(m, name))


def _value_reader(field: Any, schema: Schema) -> Fn:
    t = field.type
    if t == _FD.TYPE_ENUM:
        names = {v.number: v.name for v in field.enum_type.values}
        return lambda v: names.get(v, str(v))
    if t == _FD.TYPE_BYTES:
        return bytes
    if t != _FD.TYPE_MESSAGE:
        return _same
    full = field.message_type.full_name
    if full == "google.protobuf.Timestamp":
        return lambda v: _EPOCH + datetime.timedelta(seconds=v.seconds, microseconds=(v.nanos // 1_000_000) * 1000)
    if full == "google.type.Date":
        return lambda v: datetime.date(v.year, v.month, v.day)
    if full == "google.type.TimeOfDay":
        return lambda v: datetime.time(v.hours, v.minutes, v.seconds, (v.nanos // 1_000_000) * 1000)
    if full == "confluent.type.Decimal":
        return lambda v: Decimal.from_unscaled(int.from_bytes(v.value, "big", signed=True) if v.value else 0, v.scale)
    return to_connect_fn(field.message_type, schema)


def _same(v: Any) -> Any:
    return v


def to_message_fn(descriptor: Any, schema: Schema, message_class: Callable[[], Any]) -> Callable[[Any], Any]:
    """A Struct of ``schema`` -> a new message (``message_class``) of ``descriptor``."""
    fill = _filler(descriptor, schema)

    def convert(struct: Any) -> Any:
        message = message_class()
        fill(message, struct)
        return message

    return convert


def _filler(descriptor: Any, schema: Schema) -> Callable[[Any, Any], None]:
    writers: list[tuple[int, Callable[[Any, Any], None]]] = []
    for f in schema.fields:
        if f.schema.type is SchemaType.STRUCT and (f.schema.name or "").startswith(UNION_PREFIX):
            members = [(m.index, _field_writer(descriptor.fields_by_name[_scrub(m.name)], m.schema))
                       for m in f.schema.fields]

            def union(message: Any, value: Any, members: list[tuple[int, Callable[[Any, Any], None]]] = members
                      ) -> None:
                if value is None:
                    return
                values = value.values()
                for index, write in members:
                    if values[index] is not None:
                        write(message, values[index])

            writers.append((f.index, union))
        else:
            writers.append((f.index, _field_writer(descriptor.fields_by_name[_scrub(f.name)], f.schema)))

    def fill(message: Any, struct: Any) -> None:
        values = struct.values()
        for index, write in writers:
            value = values[index]
            if value is not None:
                write(message, value)

    return fill


def _field_writer(field: Any, schema: Schema) -> Callable[[Any, Any], None]:
    name = field.name
    if _is_map(field):
        assert schema.value_schema is not None
        value_field = field.message_type.fields_by_name["value"]
        if value_field.type == _FD.TYPE_MESSAGE:
            fill_value = _message_filler(value_field, schema.value_schema)

            def map_messages(message: Any, value: Any) -> None:
                target = getattr(message, name)
                for k, v in value.items():
                    if v is not None:
                        fill_value(target[k], v)

            return map_messages
        convert = _scalar_writer(value_field, schema.value_schema)

        def map_scalars(message: Any, value: Any) -> None:
            target = getattr(message, name)
            for k, v in value.items():
                if v is not None:
                    target[k] = convert(v)

        return map_scalars
    element_schema = schema.value_schema if field.is_repeated and schema.value_schema is not None else schema
    if field.type == _FD.TYPE_MESSAGE:
        fill = _message_filler(field, element_schema)
        if field.is_repeated:
            def repeated_messages(message: Any, value: Any) -> None:
                target = getattr(message, name)
                for v in value:
                    if v is not None:
                        fill(target.add(), v)

            return repeated_messages
        return lambda message, value: fill(getattr(message, name), value)
    convert = _scalar_writer(field, element_schema)
    if field.is_repeated:
        return lambda message, value: getattr(message, name).extend(convert(v) for v in value if v is not None)
    return lambda message, value: setattr(message, name, convert(value))


def _scalar_writer(field: Any, schema: Schema) -> Fn:
    if field.type == _FD.TYPE_ENUM:
        numbers = {v.name: v.number for v in field.enum_type.values}

        def enum(v: Any) -> int:
            if v not in numbers:
                raise DataError(f"{v!r} is not a symbol of the enum {field.enum_type.full_name}")
            return int(numbers[v])

        return enum
    if field.type == _FD.TYPE_BYTES:
        return bytes
    return _same


def _message_filler(field: Any, schema: Schema) -> Callable[[Any, Any], None]:
    full = field.message_type.full_name
    if full == "google.protobuf.Timestamp":
        def timestamp(target: Any, v: datetime.datetime) -> None:
            delta = (v if v.tzinfo else v.replace(tzinfo=datetime.UTC)) - _EPOCH
            millis = delta // datetime.timedelta(milliseconds=1)
            target.seconds, target.nanos = millis // 1000, (millis % 1000) * 1_000_000

        return timestamp
    if full == "google.type.Date":
        def date(target: Any, v: datetime.date) -> None:
            target.year, target.month, target.day = v.year, v.month, v.day

        return date
    if full == "google.type.TimeOfDay":
        def time_of_day(target: Any, v: datetime.time) -> None:
            target.hours, target.minutes, target.seconds = v.hour, v.minute, v.second
            target.nanos = (v.microsecond // 1000) * 1_000_000

        return time_of_day
    if full == "confluent.type.Decimal":
        def to_decimal(target: Any, v: decimal.Decimal) -> None:
            scale = Decimal.scale(schema)
            unscaled = Decimal.unscaled(v, scale)
            bits = unscaled.bit_length() if unscaled >= 0 else (~unscaled).bit_length()
            target.value = unscaled.to_bytes(bits // 8 + 1, "big", signed=True)
            target.scale = scale
            precision = (schema.parameters or {}).get(PRECISION_PARAM)
            if precision is not None:
                target.precision = int(precision)

        return to_decimal
    return _filler(field.message_type, schema)
