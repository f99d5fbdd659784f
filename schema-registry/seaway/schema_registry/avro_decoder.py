"""Compiled Avro decoders: Avro binary straight to Connect values, one function per writer schema.

Why not fastavro on the read path: ``schemaless_reader`` interprets the schema dict for every
record, and the Connect values then need a second walk (``Struct.put`` validating each
field). On an 11-field record with logical types, a nested record, an array and a map that
was ~40 µs per record on our 2-core CI host (fastavro alone ~15 µs), while the lake sink's
1,000,000-record proof needs >= 100k records/s; the compiled decoder takes ~10 µs. Here
the writer schema is turned once (per schema id, by the converter) into the source of one
Python function: the flat sequence of reads that schema implies, with the Connect logical
conversions inlined and each Struct built by :meth:`Struct.from_valid_values` -- the values
are valid by construction, because every one was read as exactly the type its Connect field
declares. fastavro still parses the schema first, so a schema it refuses is refused here too. The text is
built and compiled through :mod:`seaway.codegen` (``SEAWAY_CODEGEN_DUMP`` shows it); the
converter caches one decoder per schema id.

Scope: exactly the Avro schemas :func:`~seaway.schema_registry.connect_avro.avro_to_connect`
maps (the Connect schema is walked alongside the Avro one and decides the Python value):
primitives, records, enums, fixed, arrays, maps, arrays of ``MapEntry`` records (Connect
maps with non-string keys), unions of null and one type, named-type references, and the
logical types Decimal (bytes), Date, Time and Timestamp. Malformed input raises one of
:data:`DECODE_ERRORS`; trailing bytes after the value are ignored, as fastavro and
Confluent's deserializer do.
"""

from __future__ import annotations

import datetime
import decimal
import struct
from collections.abc import Callable, Mapping
from typing import Any

import fastavro
from seaway.codegen import Source
from seaway.connect.api.data.logical import Decimal, Time
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
from seaway.schema_registry.connect_avro import _full_name
from seaway.schema_registry.wire import SerdeError

__all__ = ["DECODE_ERRORS", "Decoder", "compile_decoder"]

Decoder = Callable[[bytes, int], Any]
"""``decoder(buf, pos)``: the Connect value whose Avro encoding starts at ``buf[pos]``."""

DECODE_ERRORS: tuple[type[Exception], ...] = (
    SerdeError, IndexError, ValueError, OverflowError, struct.error, TypeError)
"""What a compiled decoder raises on bytes that are not a value of its schema."""

_PRIMITIVES = frozenset({"null", "boolean", "int", "long", "float", "double", "bytes", "string"})
_TYPES = _PRIMITIVES | {"record", "enum", "fixed", "array", "map"}
_EPOCH_ORDINAL = datetime.date(1970, 1, 1).toordinal()


def _varint(buf: bytes, pos: int, first: int) -> tuple[int, int]:
    """The rest of an unsigned varint whose first byte (``first`` >= 0x80) was already read."""
    n, shift = first & 0x7F, 7
    while True:
        b = buf[pos]
        pos += 1
        n |= (b & 0x7F) << shift
        if b < 0x80:
            return n, pos
        shift += 7
        if shift > 63:
            raise SerdeError("Avro varint longer than 10 bytes")


def _long(buf: bytes, pos: int, first: int) -> tuple[int, int]:
    """The rest of a zigzag varint (an Avro int or long) whose first byte was already read."""
    n, pos = _varint(buf, pos, first)
    return (n >> 1) ^ -(n & 1), pos


# One-byte zigzag varints (-64..63: most lengths, counts, enum indexes and small ints) by table.
_ZIGZAG = tuple((b >> 1) ^ -(b & 1) for b in range(128))


# Calendar dates by day since the epoch: timestamps of a stream cluster on few days. Shared by
# every task thread (dict operations are atomic; a race only recomputes an entry).
_DAYS: dict[int, tuple[int, int, int]] = {}


def _timestamp(millis: int) -> datetime.datetime:
    """Timestamp's value: datetime's constructor is ~4x cheaper than epoch + timedelta."""
    days, millis = divmod(millis, 86_400_000)
    ymd = _DAYS.get(days)
    if ymd is None:
        if len(_DAYS) > 65_536:
            _DAYS.clear()
        day = datetime.date.fromordinal(_EPOCH_ORDINAL + days)
        ymd = _DAYS[days] = (day.year, day.month, day.day)
    hour, millis = divmod(millis, 3_600_000)
    minute, millis = divmod(millis, 60_000)
    second, millis = divmod(millis, 1000)
    return datetime.datetime(*ymd, hour, minute, second, millis * 1000, datetime.UTC)


def _time(millis: int) -> datetime.time:
    return Time.to_logical(Time.SCHEMA, millis)


def _bad(what: str, got: object) -> SerdeError:
    return SerdeError(f"Corrupt Avro data: {what} {got!r}")


_RUNTIME: dict[str, Any] = {
    "_varint": _varint, "_long": _long, "_ZIGZAG": _ZIGZAG, "_timestamp": _timestamp, "_time": _time,
    "_bad": _bad, "_fv": Struct.from_valid_values, "_f32": struct.Struct("<f").unpack_from,
    "_f64": struct.Struct("<d").unpack_from, "_fromordinal": datetime.date.fromordinal,
    "_EPOCH_ORDINAL": _EPOCH_ORDINAL, "_from_bytes": int.from_bytes, "_Decimal": decimal.Decimal,
}


def compile_decoder(avro: Any, schema: Schema) -> Decoder:
    """The decoder for values written with ``avro`` (JSON data) read as Connect ``schema``.

    ``schema`` must be what ``avro_to_connect`` answers for ``avro``; ``DataError`` if the
    Avro schema is invalid or outside the supported scope.
    """
    try:
        fastavro.parse_schema(avro)
    except (ValueError, TypeError, KeyError) as exc:  # fastavro's SchemaParseException is a ValueError
        raise DataError(f"Invalid Avro schema: {exc}") from exc
    gen = _Generator(f"avro decoder {_describe(avro)}")
    gen.src.line("def decode(buf, pos):")
    result = gen.value(avro, schema, None, 1)
    gen.emit(1, "if pos > len(buf):",
             "    raise _bad('value runs past the end of the payload at byte', pos)",
             f"return {result}")
    decoder: Decoder = gen.src.build("decode")
    return decoder


def _describe(avro: Any) -> str:
    return str(avro.get("name", avro.get("type"))) if isinstance(avro, dict) else str(avro)[:40]


class _Generator:
    """Emits the statements of one decoder into a :class:`~seaway.codegen.Source`; each ``value``
    call leaves its result in a new local."""

    def __init__(self, label: str) -> None:
        self.src = Source(label, _RUNTIME)
        self.named: dict[str, Any] = {}
        self.count = 0

    def var(self) -> str:
        self.count += 1
        return f"v{self.count}"

    def const(self, value: Any) -> str:
        return self.src.const(value)

    def emit(self, indent: int, *lines: str) -> None:
        self.src.lines(lines, indent)

    def long(self, indent: int) -> str:
        """Read a zigzag varint (Avro int or long)."""
        v = self.var()
        self.emit(indent, f"{v} = buf[pos]", "pos += 1", f"if {v} < 128:", f"    {v} = _ZIGZAG[{v}]",
                  "else:", f"    {v}, pos = _long(buf, pos, {v})")
        return v

    def raw(self, indent: int, size: str | None = None, decode: bool = False) -> str:
        """Read bytes (a str when ``decode``): ``size`` of them, or a length and then that many."""
        if size is None:  # a length: a zigzag varint whose low bit (the sign) must be clear
            size = self.var()
            self.emit(indent, f"{size} = buf[pos]", "pos += 1", f"if {size} > 127:",
                      f"    {size}, pos = _varint(buf, pos, {size})", f"if {size} & 1:",
                      "    raise _bad('negative length at byte', pos)", f"{size} >>= 1")
        v = self.var()
        self.emit(indent, f"{v} = buf[pos:pos + {size}]{'.decode()' if decode else ''}", f"pos += {size}")
        return v

    # -- schemas --------------------------------------------------------------------------------

    def value(self, avro: Any, schema: Schema, namespace: str | None, indent: int) -> str:
        if isinstance(avro, list):
            return self.union(avro, schema, namespace, indent)
        if isinstance(avro, str):
            if avro in _PRIMITIVES:
                return self.primitive(avro, schema, indent)
            return self.value(self.resolve(avro, namespace), schema, namespace, indent)
        avro_type = avro["type"]
        if isinstance(avro_type, (list, dict)) or avro_type not in _TYPES:  # nested or a named reference
            return self.value(avro_type, schema, namespace, indent)
        if avro_type in ("record", "enum", "fixed"):
            full = _full_name(avro, namespace)
            self.named[full] = avro
            if avro_type == "record":
                return self.record(avro, schema, full.rpartition(".")[0] or None, indent)
            if avro_type == "enum":
                symbols = self.const(tuple(str(s) for s in avro["symbols"]))
                v = self.var()
                self.emit(indent, f"{v} = {symbols}[{self.long(indent)}]")
                return v
            return self.raw(indent, str(int(avro["size"])))
        if avro_type == "array":
            return self.array(avro, schema, namespace, indent)
        if avro_type == "map":
            return self.map(avro["values"], schema, namespace, indent)
        return self.primitive(str(avro_type), schema, indent)

    def resolve(self, name: str, namespace: str | None) -> Any:
        full = name if "." in name or namespace is None else f"{namespace}.{name}"
        for candidate in (full, name):
            if candidate in self.named:
                return self.named[candidate]
        raise DataError(f"Unknown Avro type {name!r}")

    def union(self, branches: list[Any], schema: Schema, namespace: str | None, indent: int) -> str:
        # Branch i is encoded as the one byte 2 * i (zigzag): no varint decoding needed for <= 64 branches.
        index, v = self.var(), self.var()
        self.emit(indent, f"{index} = buf[pos]", "pos += 1")
        keyword = "if"
        for i, branch in enumerate(branches):
            self.emit(indent, f"{keyword} {index} == {2 * i}:")
            if branch == "null":
                self.emit(indent + 1, f"{v} = None")
            else:
                self.emit(indent + 1, f"{v} = {self.value(branch, schema, namespace, indent + 1)}")
            keyword = "elif"
        self.emit(indent, "else:", f"    raise _bad('union branch', {index})")
        return v

    def record(self, avro: Mapping[str, Any], schema: Schema, namespace: str | None, indent: int) -> str:
        fields = avro.get("fields", [])
        if schema.type is not SchemaType.STRUCT or len(fields) != len(schema.fields):
            raise DataError(f"Connect schema {schema!r} does not match Avro record {avro.get('name')!r}")
        values = [self.value(f["type"], field.schema, namespace, indent)
                  for f, field in zip(fields, schema.fields, strict=True)]
        v = self.var()
        self.emit(indent, f"{v} = _fv({self.const(schema)}, [{', '.join(values)}])")
        return v

    def blocks(self, indent: int) -> None:
        """Open the loops over an array's or map's blocks; the body goes at ``indent + 2``."""
        self.emit(indent, "while True:")
        count = self.long(indent + 1)
        self.emit(indent + 1, f"if {count} == 0:", "    break", f"if {count} < 0:", f"    {count} = -{count}")
        self.long(indent + 2)  # a negative count is followed by the block's size in bytes: unused
        self.emit(indent + 1, f"for _ in range({count}):")

    def array(self, avro: Mapping[str, Any], schema: Schema, namespace: str | None, indent: int) -> str:
        v = self.var()
        self.emit(indent, f"{v} = {{}}" if schema.type is SchemaType.MAP else f"{v} = []")
        self.blocks(indent)
        if schema.type is SchemaType.MAP:  # an array of MapEntry records: Connect MAP, any key type
            assert schema.key_schema is not None and schema.value_schema is not None
            entry = avro["items"]
            if isinstance(entry, str):
                entry = self.resolve(entry, namespace)
            self.named[_full_name(entry, namespace)] = entry
            inner = _full_name(entry, namespace).rpartition(".")[0] or None
            key_avro, value_avro = (f["type"] for f in entry["fields"])
            key = self.value(key_avro, schema.key_schema, inner, indent + 2)
            item = self.value(value_avro, schema.value_schema, inner, indent + 2)
            self.emit(indent + 2, f"{v}[{key}] = {item}")
        else:
            assert schema.value_schema is not None
            item = self.value(avro["items"], schema.value_schema, namespace, indent + 2)
            self.emit(indent + 2, f"{v}.append({item})")
        return v

    def map(self, values: Any, schema: Schema, namespace: str | None, indent: int) -> str:
        assert schema.value_schema is not None
        v = self.var()
        self.emit(indent, f"{v} = {{}}")
        self.blocks(indent)
        key = self.raw(indent + 2, decode=True)
        item = self.value(values, schema.value_schema, namespace, indent + 2)
        self.emit(indent + 2, f"{v}[{key}] = {item}")
        return v

    def primitive(self, avro_type: str, schema: Schema, indent: int) -> str:
        """A primitive read, converted to the Connect logical type the schema names."""
        if avro_type == "null":
            return "None"
        if avro_type in ("float", "double"):
            v = self.var()
            size, unpack = (4, "_f32") if avro_type == "float" else (8, "_f64")
            self.emit(indent, f"{v}, = {unpack}(buf, pos)", f"pos += {size}")
            return v
        if avro_type == "boolean":
            v = self.var()
            self.emit(indent, f"{v} = buf[pos] == 1", "pos += 1")
            return v
        if avro_type in ("bytes", "string"):
            raw = self.raw(indent, decode=avro_type == "string")
            if schema.name == DECIMAL_LOGICAL_NAME:  # exact: Decimal's string constructor never rounds
                scale = Decimal.scale(schema)
                self.emit(indent, f"{raw} = _Decimal(f\"{{_from_bytes({raw}, 'big', signed=True)}}e{-scale}\")")
            return raw
        n = self.long(indent)  # int or long
        name = schema.name
        if name == DATE_LOGICAL_NAME:
            self.emit(indent, f"{n} = _fromordinal(_EPOCH_ORDINAL + {n})")
        elif name == TIMESTAMP_LOGICAL_NAME:
            self.emit(indent, f"{n} = _timestamp({n})")
        elif name == TIME_LOGICAL_NAME:
            self.emit(indent, f"{n} = _time({n})")
        elif schema.type in (SchemaType.INT8, SchemaType.INT16):
            bound = 1 << (7 if schema.type is SchemaType.INT8 else 15)
            self.emit(indent, f"if not {-bound} <= {n} < {bound}:",
                      f"    raise _bad('{schema.type.name} out of range:', {n})")
        return n
