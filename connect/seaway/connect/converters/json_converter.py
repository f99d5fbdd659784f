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
neither parsed nor rebuilt per record, and only the payload is parsed: by orjson first,
by ``json``'s C scanner wherever the two could disagree (see :func:`_read_payload`), so the
values and errors are ``json``'s. Structs are read by code compiled once per schema
(:mod:`~seaway.connect.converters._struct_reader`). Other layouts (payload first) take a
slower but equivalent path. Writing is text built directly by functions compiled once per
schema (:mod:`~seaway.connect.converters.json_writer`), byte for byte what Kafka's
converter writes with Jackson: compact, non-ASCII text as UTF-8, Java's float layout
(``1.0E20``), Jackson's escapes (:mod:`~seaway.connect.converters._jackson`).
:meth:`JsonConverter.from_connect_values` converts a batch of values of one schema.
"""

from __future__ import annotations

import decimal
import json
import re
from collections.abc import Mapping, Sequence
from json.decoder import scanstring  # type: ignore[attr-defined]
from typing import Any, ClassVar

from orjson import loads as _orjson_loads
from seaway.codegen import ShapeCache
from seaway.connect.api.config.definition import ConfigDef
from seaway.connect.api.config.types import ConfigType, Importance, Width
from seaway.connect.api.config.validators import CaseInsensitiveValidString, Range, ValidString
from seaway.connect.api.converter import CONVERTER_TYPE_CONFIG
from seaway.connect.api.data.schema import Schema, SchemaAndValue, SchemaType
from seaway.connect.api.errors import DataError
from seaway.connect.api.headers import Headers
from seaway.connect.converters._base import KeyValueHeaderConverter
from seaway.connect.converters._struct_reader import ExactParseNeeded
from seaway.connect.converters.json_codec import Fn, JsonCodec, contains_decimal
from seaway.connect.converters.json_writer import JsonWriter, TextFn

__all__ = ["JsonConverter"]

SCHEMAS_ENABLE_CONFIG = "schemas.enable"
SCHEMAS_CACHE_SIZE_CONFIG = "schemas.cache.size"
DECIMAL_FORMAT_CONFIG = "decimal.format"
REPLACE_NULL_WITH_DEFAULT_CONFIG = "replace.null.with.default"

_ENVELOPE_ERROR = ('JsonConverter with schemas.enable requires "schema" and "payload" fields and may not '
                   "contain additional fields. If you are trying to deserialize plain JSON data, set "
                   "schemas.enable=false in your converter configuration.")


class _ReadEntry:
    """A schema text decoded: the schema, its readers, whether decimals need exact parsing.

    ``fn`` reads ``json``'s parse (with decimals exact when ``exact``); ``fast_fn`` reads
    orjson's, refusing a Decimal parsed as a float. ``orjson`` turns False when that happened
    (the topic writes NUMERIC decimals), so its records stop trying orjson first.
    """

    __slots__ = ("columns_fn", "exact", "fast_fn", "fn", "orjson", "schema")

    def __init__(self, schema: Schema, fn: Fn, exact: bool, fast_fn: Fn) -> None:
        self.schema, self.fn, self.exact, self.fast_fn = schema, fn, exact, fast_fn
        self.orjson = True
        self.columns_fn: Fn | None = None  # built by to_connect_columns on first use


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
        self._codec_orjson = JsonCodec(refuse_float_decimals=True)
        self._json = JsonWriter()
        self._set_caches(1000)

    def _set_caches(self, size: int) -> None:
        # Schema -> (envelope text before the payload, value text fn)
        self._write_fns: ShapeCache[Schema, tuple[str, TextFn]] = ShapeCache(size)
        self._read_entries: ShapeCache[bytes, _ReadEntry] = ShapeCache(size)  # schema JSON text (bytes) -> _ReadEntry
        self._last: tuple[bytes, _ReadEntry | None] = (b"", None)  # the last hit of _read_entries
        # the bytes before the payload (``{"schema": S, "payload": ``) of the last record that took
        # the fast path, exactly as they were: a record starting with them has that schema
        self._prefix: tuple[bytes, _ReadEntry | None] = (b"", None)

    def config(self) -> ConfigDef:
        return self.CONFIG_DEF

    def _configure(self, props: Mapping[str, Any]) -> None:
        values = self.CONFIG_DEF.parse(props)
        self.schemas_enabled = values[SCHEMAS_ENABLE_CONFIG]
        numeric = values[DECIMAL_FORMAT_CONFIG].upper() == "NUMERIC"
        replace_null = values[REPLACE_NULL_WITH_DEFAULT_CONFIG]
        self._codec = JsonCodec(decimal_numeric=numeric, replace_null_with_default=replace_null)
        self._codec_orjson = JsonCodec(decimal_numeric=numeric, replace_null_with_default=replace_null,
                                       refuse_float_decimals=True)
        self._json = JsonWriter(decimal_numeric=numeric, replace_null_with_default=replace_null,
                                cache_size=values[SCHEMAS_CACHE_SIZE_CONFIG])
        self._set_caches(values[SCHEMAS_CACHE_SIZE_CONFIG])

    # -- Connect -> bytes -------------------------------------------------------------------------
    def _writer(self, schema: Schema) -> tuple[str, TextFn]:
        """The envelope's text before the payload and the value's text function, once per schema."""
        cached: tuple[str, TextFn] | None = self._write_fns.get(schema)
        if cached is None:
            cached = ('{"schema":' + self._json.schema_text(schema) + ',"payload":', self._json.value_fn(schema))
            self._write_fns.put(schema, cached)
        return cached

    def as_json_schema(self, schema: Schema | None) -> dict[str, Any] | None:
        """The schema's JSON object (Kafka's ``asJsonSchema``), e.g. for tools and tests."""
        return None if schema is None else json.loads(self._json.schema_text(schema))

    def from_connect_data(self, topic: str, schema: Schema | None, value: Any,
                          headers: Headers | None = None) -> bytes | None:
        if schema is None:
            if value is None:
                return None
            prefix, text = _SCHEMALESS_PREFIX, self._json.schemaless_text(value)
        else:
            prefix, fn = self._writer(schema)
            text = fn(value)
        if self.schemas_enabled:
            return f"{prefix}{text}}}".encode()
        return text.encode()

    def from_connect_values(self, topic: str, schema: Schema | None, values: Sequence[Any]) -> list[bytes | None]:
        """``from_connect_data`` of each value (no headers), with the schema looked up once.

        The batch entry point the worker uses for a :class:`~seaway.connect.api.SourceRecordBatch`
        (one schema, no headers): the same bytes as one call per value, a list comprehension over
        the schema's compiled writer. A bad value raises :class:`DataError` for the whole batch.
        """
        if schema is None:
            convert = self.from_connect_data
            return [convert(topic, None, value) for value in values]
        prefix, fn = self._writer(schema)
        if self.schemas_enabled:
            return [f"{prefix}{fn(value)}}}".encode() for value in values]
        return [fn(value).encode() for value in values]

    # -- bytes -> Connect -------------------------------------------------------------------------
    def to_connect_data(self, topic: str, value: bytes | None,
                        headers: Headers | None = None) -> SchemaAndValue:
        if value is None or len(value) == 0:
            return SchemaAndValue.NULL
        if not self.schemas_enabled:
            return _schema_and_value(None, _loads_fast(value))
        prefix, prefixed = self._prefix
        if prefixed is not None and value[-1] == _CLOSE and value.startswith(prefix):
            # the common case: the same schema text, laid out as the last record's. One memcmp
            # replaces _split_envelope; anything unusual after the payload fails the strict parse
            read = _read_payload(value, len(prefix), -1, prefixed)
            if read is not None:
                return read
        if value.startswith(_SCHEMALESS_HEAD) and value[-1] == _CLOSE:  # Kafka's schemaless envelope
            raw = value[len(_SCHEMALESS_HEAD):-1]
            if _LONG_DIGITS.search(raw) is None:
                try:
                    return _schema_and_value(None, _orjson_loads(raw))
                except ValueError:
                    pass  # not that layout after all, or something only json reads: the full parse decides
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
                read = _read_payload(value, split[2], split[3], entry)
                if read is not None:
                    self._prefix = (value[:split[2]], entry)
                    return read
                # else not this layout after all (or not strict UTF-8): the full parse decides
        return self._to_connect_slow(value)

    def to_connect_columns(self, topic: str, values: Sequence[bytes | None]
                           ) -> tuple[Schema, list[list[Any]]] | None:
        """A batch of values as (their STRUCT schema, one list per field), or ``None``: convert one by one.

        For a sink that wants columns (the worker offers them through
        :meth:`~seaway.connect.api.SinkRecordBatch.record_value_columns`): field ``i``'s list
        holds, value by value, what ``to_connect_data(topic, value).value``'s Struct holds in
        field ``i``. It answers only for the common case ``to_connect_data`` takes its fastest
        path on: every value is a schema-first envelope laid out exactly as the last one read
        (same schema bytes), of a STRUCT schema without decimals, whose payload orjson parses
        to an object the schema's reader accepts. Anything else -- a null, another schema, a
        payload only ``json`` reads, a field error -- gives ``None`` for the whole batch, and
        the caller converts each value with ``to_connect_data`` (which raises where it would).
        """
        if not self.schemas_enabled or not values:
            return None
        first = values[0]
        for attempt in range(3):  # the record path learns the layout: a new schema text takes it two reads
            prefix, entry = self._prefix
            if entry is not None and first is not None and first.startswith(prefix):
                break
            if attempt == 2:
                return None
            try:
                self.to_connect_data(topic, first)
            except DataError:
                return None
        assert entry is not None
        schema = entry.schema
        if entry.exact or not entry.orjson or schema.type is not SchemaType.STRUCT or not schema.field_list:
            return None
        read = entry.columns_fn
        if read is None:
            read = entry.columns_fn = self._codec.to_columns_fn(schema)
        start = len(prefix)
        try:
            payloads = [v[start:-1] for v in values if v[-1] == _CLOSE and v.startswith(prefix)]  # type: ignore[index,union-attr]
            if len(payloads) != len(values):
                return None
            # parsed lazily: each object is freed once its fields are read, so the batch never holds
            # hundreds of dicts at once (each would count towards, and be walked by, the cyclic GC)
            columns: list[list[Any]] = read(map(_orjson_loads, payloads))
        except Exception:  # to_connect_data decides, value by value, as without this method
            return None
        return schema, columns

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
            exact = contains_decimal(schema)
            fn = self._codec.to_connect_fn(schema)
            entry = _ReadEntry(schema, fn, exact, self._codec_orjson.to_connect_fn(schema) if exact else fn)
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


_SCHEMALESS_PREFIX = '{"schema":null,"payload":'
_SCHEMALESS_HEAD = _SCHEMALESS_PREFIX.encode()
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
_LONG_DIGITS = re.compile(rb"[0-9]{19}")  # a number orjson may read as a float (below -2**63, above 2**64 - 1)
_new = object.__new__
_set_schema = SchemaAndValue.__dict__["schema"].__set__  # the frozen dataclass's slots
_set_value = SchemaAndValue.__dict__["value"].__set__


def _schema_and_value(schema: Schema | None, value: Any) -> SchemaAndValue:
    """``SchemaAndValue(schema, value)`` without the frozen dataclass's ``__init__`` (half its cost)."""
    result: SchemaAndValue = _new(SchemaAndValue)
    _set_schema(result, schema)
    _set_value(result, value)
    return result


def _read_payload(value: bytes, start: int, stop: int, entry: _ReadEntry) -> SchemaAndValue | None:
    """``entry``'s value of the payload text ``value[start:stop]``; ``None`` if that is not one JSON value.

    orjson parses it first (a quarter of ``json``'s time). Where the two parsers could
    disagree (orjson refuses NaN, lone surrogates, 1e400; reads an integer beyond 64 bits or
    a decimal number as a float) the schema's reader sees the same value, raises, or (a
    Decimal given a float) asks for an exact parse, and every refusal or DataError is redone
    from ``json``'s parse: the results and errors are ``json``'s.
    """
    raw = value[start:stop]
    if entry.orjson:
        try:
            parsed = _orjson_loads(raw)
        except ValueError:  # orjson.JSONDecodeError
            pass
        else:
            try:
                return _schema_and_value(entry.schema, entry.fast_fn(parsed))
            except ExactParseNeeded:
                entry.orjson = False
            except DataError:
                pass
    try:
        payload = _parse_payload(raw.decode(), entry.exact)
    except ValueError:
        return None
    return _schema_and_value(entry.schema, entry.fn(payload))


def _loads_fast(value: bytes) -> Any:
    """``_loads`` (json's result and errors) through orjson when the text has no number of 19 digits or more."""
    if _LONG_DIGITS.search(value) is None:
        try:
            return _orjson_loads(value)
        except ValueError:
            pass  # json decides: it reads NaN, Infinity, 1e400 and lone surrogates, or raises its error
    return _loads(value)


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
