"""Keys and values as text for the message browser: registry-framed records decoded by schema type.

A record written through a registry serializer starts with Confluent's frame: magic byte 0 and
a 4-byte big-endian schema id. The schema's type (``AVRO``, ``JSON``, ``PROTOBUF``: the
registry's ``schemaType``) picks a decoder from :data:`DECODERS`, the seam the registry's
types plug into::

    register_decoder("PROTOBUF", my_factory)   # factory(WriterSchema) -> (payload -> value)

A factory gets the :class:`WriterSchema`: the schema's text, type and references, and every
schema those references lead to (``dependencies``), fetched from the registry beforehand
(asynchronously, with the user's credentials: :meth:`seaway.console.rest.RegistryApi.writer_schema`),
so a factory is plain code that compiles a schema, never a registry client of its own.

* ``AVRO``: fastavro with the writer's schema, named types of referenced subjects included
  (schemas whose arrays could hold items of zero bytes are refused: a 10-byte record could
  otherwise claim a billion nulls);
* ``JSON`` (JSON Schema): the payload is the JSON document itself;
* ``PROTOBUF``: the registry's own Protobuf support compiles the schema with its imports
  (:func:`seaway.schema_registry.protobuf_schema.compile_protobuf`) and reads the message the
  frame's message indexes name (:class:`seaway.schema_registry.protobuf_serde.ProtobufReader`),
  printed as Confluent's ``kafka-protobuf-console-consumer`` prints it: protobuf's JSON mapping
  (``JsonFormat`` with default values included: JSON field names, 64-bit integers as strings,
  enums by name, bytes in base64). A schema that does not compile is shown field by field
  instead (``protoc --decode_raw``'s view), with the reason.

Anything else is shown as UTF-8 text when it is, else with ``\\xNN`` escapes. Schemas are
looked up once per id (:class:`FrameDecoder` keeps at most :data:`MAX_SCHEMA_IDS`); a schema
that cannot be fetched or compiled is remembered with its reason, and the record is shown raw
with that note, never hidden.
"""

from __future__ import annotations

import asyncio
import decimal
import io
import json
import uuid
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any

import orjson

__all__ = [
    "DECODERS",
    "FALLBACKS",
    "MAX_REFERENCE_DEPTH",
    "MAX_SCHEMA_IDS",
    "Decoded",
    "DecoderFactory",
    "FrameDecoder",
    "PayloadDecoder",
    "WriterSchema",
    "frame_schema_id",
    "register_decoder",
    "show_bytes",
    "to_json_text",
]

MAGIC_BYTE = 0
HEADER_SIZE = 5
MAX_SCHEMA_IDS = 1000

PayloadDecoder = Callable[[bytes], Any]
"""Decodes the bytes after the 5-byte frame header into a JSON-able value; raises on bad bytes."""

MAX_REFERENCE_DEPTH = 32
"""References nested deeper than this are refused (the registry's own limit: a cycle, most likely)."""


@dataclass(frozen=True, slots=True)
class WriterSchema:
    """A writer schema as the registry serves it, with every schema it references resolved."""

    schema_id: int
    schema_type: str
    """The registry's ``schemaType``: ``AVRO``, ``JSON``, ``PROTOBUF``, ..."""
    text: str
    references: tuple[tuple[str, str, int], ...] = ()
    """``(name, subject, version)`` of each reference, as ``GET /schemas/ids/{id}`` lists them."""
    dependencies: tuple[tuple[str, str], ...] = ()
    """``(reference name, schema text)`` of every schema the references lead to, transitively,
    dependencies of dependencies first (the order the registry client's ``dependencies()`` gives):
    a Protobuf ``import`` path, a JSON Schema ``$ref``, the subject of an Avro named type."""


DecoderFactory = Callable[[WriterSchema], PayloadDecoder]
"""Compiles a :class:`WriterSchema` into a :data:`PayloadDecoder`; raises when it cannot."""


def _json_default(value: Any) -> Any:
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).decode("latin-1")  # Avro's JSON encoding of bytes: one code point per byte
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def to_json_text(value: Any) -> str:
    """A decoded value as compact JSON (bytes in Avro's JSON encoding, decimals as strings)."""
    try:
        return orjson.dumps(value, default=_json_default, option=orjson.OPT_NON_STR_KEYS).decode()
    except TypeError:
        return json.dumps(value, default=_json_default, ensure_ascii=False)


def show_bytes(data: bytes) -> tuple[str, str]:
    """(text, kind): UTF-8 text as it is (kind ``string``), otherwise with ``\\xNN`` escapes (``bytes``)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1").encode("unicode_escape").decode("ascii"), "bytes"
    if text.isprintable() or all(c.isprintable() or c in "\n\r\t" for c in text):
        return text, "string"
    return text.encode("unicode_escape").decode("ascii"), "bytes"


def frame_schema_id(data: bytes | None) -> int | None:
    """The schema id of a Confluent frame, None when ``data`` is not one."""
    if data is None or len(data) < HEADER_SIZE or data[0] != MAGIC_BYTE:
        return None
    return int.from_bytes(data[1:HEADER_SIZE], "big")


# -- Avro -----------------------------------------------------------------------------------------

def _avro(schema: WriterSchema) -> PayloadDecoder:
    import fastavro
    from seaway.cli.console_avro import _unbounded_array  # the same guard `seaway consume` applies

    named: dict[str, Any] = {}
    guard_names: dict[str, Any] = {}
    for _, dependency in schema.dependencies:  # the named types of referenced subjects, in parse order
        dep_raw = json.loads(dependency)
        _unbounded_array(dep_raw, guard_names, set())  # only learns its names: the root's use is what counts
        fastavro.parse_schema(dep_raw, named_schemas=named)
    raw = json.loads(schema.text)
    if _unbounded_array(raw, guard_names, set()):
        raise ValueError("its arrays may hold items of zero bytes (null or empty records): a record could claim "
                         "any number of them, so it is not decoded")
    parsed = fastavro.parse_schema(raw, named_schemas=named)
    reader = fastavro.schemaless_reader

    def decode(payload: bytes) -> Any:
        buffer = io.BytesIO(payload)
        value = reader(buffer, parsed, None)
        if buffer.tell() != len(payload):
            raise ValueError(f"{len(payload) - buffer.tell()} bytes left over after the Avro value")
        return value
    return decode


# -- JSON Schema ----------------------------------------------------------------------------------

def _json_schema(schema: WriterSchema) -> PayloadDecoder:
    json.loads(schema.text)  # a schema that is not JSON is reported, as for the other types

    def decode(payload: bytes) -> Any:
        return orjson.loads(payload)
    return decode


# -- Protobuf ---------------------------------------------------------------------------------------

def _protobuf(schema: WriterSchema) -> PayloadDecoder:
    """Through the registry's Protobuf support; printed as ``JsonFormat.printer().includingDefaultValueFields()``."""
    from google.protobuf import json_format
    from seaway.schema_registry.protobuf_schema import compile_protobuf
    from seaway.schema_registry.protobuf_serde import ProtobufReader

    reader = ProtobufReader(compile_protobuf(schema.text, schema.dependencies)[0], schema.schema_id)

    def decode(payload: bytes) -> Any:
        message = reader.read(payload)
        return _by_number(message, json_format.MessageToDict(message, always_print_fields_with_no_presence=True))
    return decode


def _by_number(message: Any, value: Any) -> Any:
    """``value`` (``MessageToDict`` of ``message``) with its keys in field-number order, nested messages too.

    Java's ``JsonFormat`` prints fields by number, those at their default value among them;
    Python's puts the defaults last. Well-known types (their own JSON forms) and map values
    are left as they are.
    """
    if not isinstance(value, dict):
        return value
    fields = message.DESCRIPTOR.fields_by_number
    out: dict[str, Any] = {}
    for number in sorted(fields):
        field = fields[number]
        key = field.json_name
        if key not in value:
            continue
        item = value[key]
        kind = field.message_type
        if kind is not None and not kind.GetOptions().map_entry and not kind.full_name.startswith("google.protobuf."):
            nested = getattr(message, field.name)
            if field.is_repeated:
                item = [_by_number(m, v) for m, v in zip(nested, item, strict=False)]
            else:
                item = _by_number(nested, item)
        out[key] = item
    for key, item in value.items():  # extensions ("[pkg.name]"), in Python's order
        out.setdefault(key, item)
    return out


# -- Protobuf (raw view, when the schema cannot be compiled) ----------------------------------------

def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(buf):
            raise ValueError("truncated varint")
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise ValueError("varint longer than 10 bytes")


def _zigzag(n: int) -> int:
    return (n >> 1) ^ -(n & 1)


def _raw_message(buf: bytes, depth: int = 0) -> dict[str, Any]:
    """Protobuf wire format as {field number: value or [values]}; nested where bytes parse as a message."""
    out: dict[str, Any] = {}
    pos = 0
    while pos < len(buf):
        key, pos = _varint(buf, pos)
        number, wire = key >> 3, key & 7
        if number == 0:
            raise ValueError("field number 0")
        value: Any
        if wire == 0:
            value, pos = _varint(buf, pos)
        elif wire == 1:
            value, pos = int.from_bytes(buf[pos:pos + 8], "little"), pos + 8
        elif wire == 5:
            value, pos = int.from_bytes(buf[pos:pos + 4], "little"), pos + 4
        elif wire == 2:
            length, pos = _varint(buf, pos)
            chunk = buf[pos:pos + length]
            if len(chunk) != length:
                raise ValueError("truncated length-delimited field")
            pos += length
            value = _nested_or_text(chunk, depth)
        else:
            raise ValueError(f"wire type {wire} is not supported")
        if pos > len(buf):
            raise ValueError("truncated field")
        name = str(number)
        if name in out:
            out[name] = [*out[name], value] if isinstance(out[name], list) else [out[name], value]
        else:
            out[name] = value
    return out


def _nested_or_text(chunk: bytes, depth: int) -> Any:
    """Printable UTF-8 as a string; else a nested message where the bytes parse as one; else escaped bytes.

    The wire format does not say which (``protoc --decode_raw`` guesses too): text first, since
    short strings often happen to parse as a message as well.
    """
    text, kind = show_bytes(chunk)
    if kind == "string" and text.isprintable():
        return text
    if depth < 16 and chunk:
        try:
            return _raw_message(chunk, depth + 1)
        except ValueError:
            pass
    return text


def _protobuf_raw(schema: WriterSchema) -> PayloadDecoder:
    """``protoc --decode_raw``'s view: what a Protobuf frame shows when its schema cannot be compiled."""
    def decode(payload: bytes) -> Any:
        count, pos = _varint(payload, 0)
        count = _zigzag(count)
        indexes = [0]
        if count > 0:
            if count > 100:
                raise ValueError(f"{count} message indexes")
            indexes = []
            for _ in range(count):
                index, pos = _varint(payload, pos)
                indexes.append(_zigzag(index))
        return {"message_indexes": indexes, "fields": _raw_message(payload[pos:])}
    return decode


DECODERS: dict[str, DecoderFactory] = {"AVRO": _avro, "JSON": _json_schema, "PROTOBUF": _protobuf}
FALLBACKS: dict[str, DecoderFactory] = {"PROTOBUF": _protobuf_raw}
"""What a frame of a type is shown with, with the reason, when its schema's decoder cannot be made."""


def register_decoder(schema_type: str, factory: DecoderFactory) -> None:
    """Decode frames whose schema has ``schemaType`` ``schema_type`` with ``factory`` (replaces one)."""
    DECODERS[schema_type.upper()] = factory


# -- frames ---------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Decoded:
    """A key or value as the page shows it."""

    text: str | None
    """None for a null key/value."""
    kind: str
    """``null``, ``string``, ``bytes``, or the schema type that decoded it (``avro``, ``json``, ``protobuf``)."""
    schema_id: int | None = None
    note: str | None = None
    """Why a frame was shown raw."""
    size: int = 0


SchemaLookup = Callable[[int], Awaitable[WriterSchema]]
"""schema id -> its :class:`WriterSchema`, asking the registry (async, with the user's credentials)."""


class FrameDecoder:
    """Decodes framed keys/values; schemas are compiled once per id and kept (bounded)."""

    def __init__(self, lookup: SchemaLookup | None) -> None:
        self._lookup = lookup
        self._decoders: dict[int, tuple[PayloadDecoder | None, str, str | None]] = {}

    def unknown_ids(self, values: Iterable[bytes | None]) -> list[int]:
        """Schema ids in ``values`` not looked up yet (call :meth:`learn` for them before decoding)."""
        found: dict[int, None] = {}
        for data in values:
            schema_id = frame_schema_id(data)
            if schema_id is not None and schema_id not in self._decoders:
                found[schema_id] = None
        return list(found)

    async def learn(self, schema_id: int) -> None:
        """Fetch and compile one schema; a failure is remembered as the reason to show the record raw."""
        if schema_id in self._decoders:
            return
        if len(self._decoders) >= MAX_SCHEMA_IDS:
            self._decoders[schema_id] = (None, "", f"not looked up: more than {MAX_SCHEMA_IDS} schema ids seen")
            return
        if self._lookup is None:
            self._decoders[schema_id] = (None, "", "no schema registry configured")
            return
        from seaway.console.errors import ConsoleError

        try:
            schema = await self._lookup(schema_id)
        except ConsoleError as exc:
            self._decoders[schema_id] = (None, "", f"schema {schema_id}: {exc.message}")
            return
        schema_type = schema.schema_type.upper()
        factory = DECODERS.get(schema_type)
        if factory is None:
            self._decoders[schema_id] = (None, schema.schema_type, f"no decoder for {schema.schema_type} schemas")
            return
        try:
            decoder = await asyncio.to_thread(factory, schema)  # protoc, fastavro: off the event loop
        except Exception as exc:  # a schema from the registry the decoder cannot compile: say why, show raw
            note = f"schema {schema_id} ({schema.schema_type}) cannot be used: {exc}"
            fallback = FALLBACKS.get(schema_type)
            self._decoders[schema_id] = (None if fallback is None else fallback(schema), schema_type.lower(), note)
            return
        self._decoders[schema_id] = (decoder, schema_type.lower(), None)

    def decode(self, data: bytes | None) -> Decoded:
        if data is None:
            return Decoded(None, "null")
        schema_id = frame_schema_id(data)
        if schema_id is not None:
            found = self._decoders.get(schema_id)
            if found is not None:
                decoder, kind, note = found
                if decoder is not None:
                    try:
                        return Decoded(to_json_text(decoder(data[HEADER_SIZE:])), kind, schema_id, note, len(data))
                    except Exception as exc:  # bytes from the topic: whatever they make a decoder raise, show them
                        note = f"does not decode with schema {schema_id}: {type(exc).__name__}: {exc}"
                text, raw_kind = show_bytes(data)
                return Decoded(text, raw_kind, schema_id, note, len(data))
        text, raw_kind = show_bytes(data)
        return Decoded(text, raw_kind, size=len(data))
