"""JsonConverter: Kafka Connect's JSON format, as ``org.apache.kafka.connect.json.JsonConverter`` writes it.

Config (Kafka's names and defaults):

* ``schemas.enable`` (true): wrap each value as ``{"schema": ..., "payload": ...}``; reading
  then requires exactly those two fields.
* ``schemas.cache.size`` (1000): schemas remembered in each direction.
* ``decimal.format`` (BASE64 | NUMERIC): how Decimal values are written; both are read.
* ``replace.null.with.default`` (true): a null with a schema default becomes the default.

Without schemas, reading infers as Kafka does: integers -> INT64 (``int``), other numbers ->
FLOAT64 (``float``), objects -> MAP (``dict``), arrays -> ARRAY (``list``); no schema.

Speed: the schema JSON text and the per-schema conversion functions are cached; a
schema-first envelope in any JSON whitespace layout (Kafka's compact one, Python's
``json.dumps`` default, pretty-printed) is recognised by its schema's *bytes* (compared in
place against the last schema seen, else one slice and one dict lookup), so the schema is
neither parsed nor rebuilt per record, and only the payload is parsed, by ``json``'s C
scanner. Structs are read by code compiled once per schema
(:mod:`~seaway.connect.converters._struct_reader`). Other layouts (payload first) take a
slower but equivalent path. Output is compact JSON with non-ASCII
text as UTF-8, as Jackson writes it; floats print as Python does (``1e+20`` where Java
prints ``1.0E20``), which any JSON reader treats as the same number.
"""

from __future__ import annotations

import decimal
import json
import os
import re
from collections.abc import Mapping
from json.decoder import scanstring  # type: ignore[attr-defined]
from typing import Any, ClassVar

from seaway.connect.api.config.definition import ConfigDef
from seaway.connect.api.config.types import ConfigType, Importance, Width
from seaway.connect.api.config.validators import CaseInsensitiveValidString, Range, ValidString
from seaway.connect.api.converter import CONVERTER_TYPE_CONFIG
from seaway.connect.api.data.schema import Schema, SchemaAndValue
from seaway.connect.api.errors import DataError
from seaway.connect.api.headers import Headers
from seaway.connect.converters._base import KeyValueHeaderConverter
from seaway.connect.converters.json_codec import Fn, JsonCodec, RawNumber, contains_decimal

__all__ = ["JsonConverter"]

SCHEMAS_ENABLE_CONFIG = "schemas.enable"
SCHEMAS_CACHE_SIZE_CONFIG = "schemas.cache.size"
DECIMAL_FORMAT_CONFIG = "decimal.format"
REPLACE_NULL_WITH_DEFAULT_CONFIG = "replace.null.with.default"

_ENVELOPE_ERROR = ('JsonConverter with schemas.enable requires "schema" and "payload" fields and may not '
                   "contain additional fields. If you are trying to deserialize plain JSON data, set "
                   "schemas.enable=false in your converter configuration.")


class _Cache:
    """A bounded dict evicting the oldest entry; get/put are single dict operations (GIL-atomic)."""

    __slots__ = ("_data", "_size")

    def __init__(self, size: int) -> None:
        self._data: dict[Any, Any] = {}
        self._size = max(size, 1)

    def get(self, key: Any) -> Any:
        return self._data.get(key)

    def put(self, key: Any, value: Any) -> None:
        if len(self._data) >= self._size:
            self._data.pop(next(iter(self._data), None), None)
        self._data[key] = value


class _ReadEntry:
    """A schema text decoded: the schema, its value function, whether decimals need exact parsing."""

    __slots__ = ("exact", "fn", "schema")

    def __init__(self, schema: Schema, fn: Fn, exact: bool) -> None:
        self.schema, self.fn, self.exact = schema, fn, exact


class JsonConverter(KeyValueHeaderConverter):
    """Kafka's JsonConverter (also a header converter). Instances are not shared between threads."""

    CONFIG_DEF: ClassVar[ConfigDef] = (
        ConfigDef()
        .define(CONVERTER_TYPE_CONFIG, ConfigType.STRING, "value", ValidString.in_("key", "value", "header"),
                Importance.LOW, "How this converter will be used.")
        .define(SCHEMAS_ENABLE_CONFIG, ConfigType.BOOLEAN, True, None, Importance.HIGH,
                "Include schemas within each of the serialized values and keys.", "Schemas", 0,
                Width.MEDIUM, "Enable Schemas")
        .define(SCHEMAS_CACHE_SIZE_CONFIG, ConfigType.INT, 1000, Range.at_least(0), Importance.HIGH,
                "The maximum number of schemas that can be cached in this converter instance.",
                "Schemas", 1, Width.MEDIUM, "Schema Cache Size")
        .define(DECIMAL_FORMAT_CONFIG, ConfigType.STRING, "BASE64",
                CaseInsensitiveValidString.in_("BASE64", "NUMERIC"), Importance.LOW,
                "Controls which format this converter will serialize decimals in. This value is case "
                "insensitive and can be either 'BASE64' (default) or 'NUMERIC'", "Serialization", 0,
                Width.MEDIUM, "Decimal Format")
        .define(REPLACE_NULL_WITH_DEFAULT_CONFIG, ConfigType.BOOLEAN, True, None, Importance.LOW,
                "Whether to replace fields that have a default value and that are null to the default "
                "value. When set to true, the default value is used, otherwise null is used.",
                "Serialization", 1, Width.MEDIUM, "Replace null with default")
    )

    def __init__(self) -> None:
        self.schemas_enabled = True
        self._codec = JsonCodec()
        self._token = "\ue000" + os.urandom(6).hex() + "#"
        self._encoder = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)
        self._set_caches(1000)

    def _set_caches(self, size: int) -> None:
        self._write_fns = _Cache(size)      # Schema -> (schema JSON text, value fn)
        self._read_entries = _Cache(size)   # schema JSON text (bytes) -> _ReadEntry
        self._last: tuple[bytes, _ReadEntry | None] = (b"", None)  # the last hit of _read_entries
        # the bytes before the payload (``{"schema": S, "payload": ``) of the last record that took
        # the fast path, exactly as they were: a record starting with them has that schema
        self._prefix: tuple[bytes, _ReadEntry | None] = (b"", None)

    def config(self) -> ConfigDef:
        return self.CONFIG_DEF

    def _configure(self, props: Mapping[str, Any]) -> None:
        values = self.CONFIG_DEF.parse(props)
        self.schemas_enabled = values[SCHEMAS_ENABLE_CONFIG]
        self._codec = JsonCodec(decimal_numeric=values[DECIMAL_FORMAT_CONFIG].upper() == "NUMERIC",
                                replace_null_with_default=values[REPLACE_NULL_WITH_DEFAULT_CONFIG])
        self._set_caches(values[SCHEMAS_CACHE_SIZE_CONFIG])

    # -- Connect -> bytes -------------------------------------------------------------------------
    def _encode(self, tree: Any) -> str:
        try:
            return self._encoder.encode(tree)
        except TypeError:
            pass  # a RawNumber (NUMERIC decimal) inside: splice numbers in after encoding
        raw: list[str] = []

        def placeholder(obj: Any) -> str:
            if not isinstance(obj, RawNumber):
                raise DataError(f"Cannot serialize {type(obj).__name__} to JSON")
            raw.append(obj.text)
            return f"{self._token}{len(raw) - 1}"

        try:
            text = json.dumps(tree, separators=(",", ":"), ensure_ascii=False, default=placeholder)
        except (TypeError, ValueError) as e:
            raise DataError(f"Converting Kafka Connect data to JSON failed: {e}") from e
        for i, number in enumerate(raw):
            text = text.replace(f'"{self._token}{i}"', number, 1)
        return text

    def _writer(self, schema: Schema) -> tuple[str, Fn]:
        cached: tuple[str, Fn] | None = self._write_fns.get(schema)
        if cached is None:
            cached = (self._encode(self._codec.schema_to_json(schema)), self._codec.to_json_fn(schema))
            self._write_fns.put(schema, cached)
        return cached

    def as_json_schema(self, schema: Schema | None) -> dict[str, Any] | None:
        """The schema's JSON object (Kafka's ``asJsonSchema``), e.g. for tools and tests."""
        return None if schema is None else self._codec.schema_to_json(schema)

    def from_connect_data(self, topic: str, schema: Schema | None, value: Any,
                          headers: Headers | None = None) -> bytes | None:
        if schema is None and value is None:
            return None
        if schema is None:
            schema_text, payload = "null", self._encode(self._codec.schemaless_to_json(value))
        else:
            schema_text, fn = self._writer(schema)
            payload = self._encode(fn(value))
        try:
            if self.schemas_enabled:
                return f'{{"schema":{schema_text},"payload":{payload}}}'.encode()
            return payload.encode()
        except UnicodeEncodeError as e:
            raise DataError(f"Converting Kafka Connect data to byte[] failed: {e}") from e

    # -- bytes -> Connect -------------------------------------------------------------------------
    def to_connect_data(self, topic: str, value: bytes | None,
                        headers: Headers | None = None) -> SchemaAndValue:
        if value is None or len(value) == 0:
            return SchemaAndValue.NULL
        if not self.schemas_enabled:
            return SchemaAndValue(None, _loads(value))
        prefix, prefixed = self._prefix
        if prefixed is not None and value[-1] == _CLOSE and value.startswith(prefix):
            # the common case: the same schema text, laid out as the last record's. One memcmp
            # replaces _split_envelope; anything unusual after the payload fails the strict parse
            try:
                payload = _parse_payload(value[len(prefix):-1].decode(), prefixed.exact)
            except ValueError:
                pass
            else:
                return SchemaAndValue(prefixed.schema, prefixed.fn(payload))
        split = _split_envelope(value)
        if split is not None:
            start, end = split[0], split[1]
            last = self._last
            # records of a topic mostly share one schema: compare its bytes in place (no copy, no hash)
            if end - start == len(last[0]) and value.startswith(last[0], start):
                entry: _ReadEntry | None = last[1]
            else:
                key = value[start:end]
                entry = self._read_entries.get(key)
                if entry is not None:
                    self._last = (key, entry)
            if entry is not None:
                try:
                    payload = _parse_payload(value[split[2]:split[3]].decode(), entry.exact)
                except ValueError:
                    pass  # not this layout after all (or not strict UTF-8): the full parse decides
                else:
                    self._prefix = (value[:split[2]], entry)
                    return SchemaAndValue(entry.schema, entry.fn(payload))
        return self._to_connect_slow(value)

    def _to_connect_slow(self, value: bytes) -> SchemaAndValue:
        envelope = _loads(value)
        if not isinstance(envelope, dict) or envelope.keys() != {"schema", "payload"}:
            raise DataError(_ENVELOPE_ERROR)
        schema_json = envelope["schema"]
        if schema_json is None:
            return SchemaAndValue(None, envelope["payload"])
        key = self._schema_key(value, schema_json)
        entry = self._read_entries.get(key)
        if entry is None:
            schema = self._codec.schema_from_json(schema_json)
            assert schema is not None
            entry = _ReadEntry(schema, self._codec.to_connect_fn(schema), contains_decimal(schema))
            self._read_entries.put(key, entry)
        payload = envelope["payload"]
        if entry.exact:
            payload = _loads(value, exact=True)["payload"]
        return SchemaAndValue(entry.schema, entry.fn(payload))

    @staticmethod
    def _schema_key(value: bytes, schema_json: Any) -> bytes:
        """The cache key: the schema's own bytes when :func:`_split_envelope` finds them (so the
        fast path hits next time), else a canonical dump of the parsed schema.

        The bytes are used only after checking they parse to this very schema; a wrong split
        (``"payload"`` as a key inside the schema) cuts the schema's text short, which never parses.
        """
        split = _split_envelope(value)
        if split is not None:
            text = value[split[0]:split[1]]
            try:
                if json.loads(text) == schema_json:
                    return text
            except ValueError:
                pass
        return json.dumps(schema_json, separators=(",", ":")).encode()


_HEAD = re.compile(rb'\{[ \t\n\r]*"schema"[ \t\n\r]*:[ \t\n\r]*')
_WS = frozenset(b" \t\n\r")  # JSON's whitespace, and nothing else (bytes.isspace() is wider)
_COMMA, _COLON, _CLOSE = ord(","), ord(":"), ord("}")


def _split_envelope(value: bytes) -> tuple[int, int, int, int] | None:
    """Where the schema and the payload text of a schema-first envelope are, any JSON whitespace.

    Returns (schema start, schema end, payload start, payload end), or ``None`` when ``value``
    does not look like ``{"schema": S, "payload": P}``. A shortcut only: the caller uses the
    schema bytes as a cache key (a hit proves they are a complete schema it has parsed before)
    and parses the payload bytes strictly, so whatever this returns for malformed input, the
    result is either what the full parse gives or a fall back to it.
    """
    ws = _WS
    if value.startswith(b'{"schema":'):  # compact, or json.dumps' default ('{"schema": {')
        start = 10
        while value[start:start + 1] == b" ":
            start += 1
    else:
        head = _HEAD.match(value)
        if head is None:
            return None
        start = head.end()
    mark = value.find(b'"payload"', start)
    if mark < 0:
        return None
    try:
        end = len(value) - 1
        while value[end] in ws:
            end -= 1
        if value[end] != _CLOSE:
            return None
        i = mark - 1
        while value[i] in ws:
            i -= 1
        if value[i] != _COMMA:
            return None
        while value[i - 1] in ws:
            i -= 1
        j = mark + 9
        while value[j] in ws:
            j += 1
        if value[j] != _COLON:
            return None
        j += 1
        while value[j] in ws:
            j += 1
        while value[end - 1] in ws:
            end -= 1
    except IndexError:
        return None
    if not start < i < j < end:
        return None
    return start, i, j, end


_SCAN = json.JSONDecoder().scan_once  # type: ignore[attr-defined]  # set in JSONDecoder.__init__
_SCAN_EXACT = json.JSONDecoder(parse_float=decimal.Decimal).scan_once  # type: ignore[attr-defined]


def _parse_payload(text: str, exact: bool) -> Any:
    """The payload's value (``text`` has no surrounding whitespace); ``ValueError`` if it is not one JSON value.

    ``json.loads`` spends more time detecting the encoding of bytes and matching whitespace
    than parsing a 200-byte object; its C scanner (and, for a string payload, the C string
    scanner) is the very function it would end up calling.
    """
    if text[:1] == '"':
        payload, stop = scanstring(text, 1)
    else:
        try:
            payload, stop = (_SCAN_EXACT if exact else _SCAN)(text, 0)
        except StopIteration as e:
            raise ValueError("not a JSON value") from e
    if stop != len(text):
        raise ValueError("trailing data after the payload")
    return payload


def _loads(value: bytes, exact: bool = False) -> Any:
    try:
        return json.loads(value, parse_float=decimal.Decimal if exact else None)
    except (ValueError, RecursionError) as e:
        raise DataError("Converting byte[] to Kafka Connect data failed due to serialization error: "
                        f"{e}") from e
