"""Confluent-framed Avro for ``seaway consume`` (decode to JSON) and ``seaway produce`` (encode JSON).

``consume`` also decodes JSON Schema and Protobuf frames (by the registered schema's type).

``seaway up`` makes Avro through its schema registry the worker's default value format, so a
topic a connector wrote holds Confluent frames (magic byte 0, a 4-byte schema id, Avro
binary) that print as binary noise. ``consume`` decodes them, printing each value (and key)
as JSON; ``produce --value-schema/--key-schema`` does the reverse, one JSON document per line,
registering the schema under the topic's subject (TopicNameStrategy: ``<topic>-value`` /
``<topic>-key``).

The registry URL: ``--schema-registry-url``, else the ``SCHEMA_REGISTRY_URL`` environment
variable, else ``http://localhost:8081`` (where ``seaway up`` serves it by default).

``--decode auto`` (the default) decodes a key or value only when it starts with the magic byte
and its schema id is an Avro schema the registry knows; anything else (plain text, JSON, a
registry that is not running) prints as the bytes it is, after one note on stderr, so nothing
is hidden. ``--decode avro`` requires every non-null key and value to decode (an error names
the offset otherwise); ``--decode none`` prints bytes as they are. Schemas are fetched once
per id, so decoding costs a dict lookup and the Avro read per record.
"""

from __future__ import annotations

import datetime
import decimal
import io
import json
import os
import sys
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

from seaway.cli.topics import CliError
from seaway.errors import SeawayError
from seaway.schema_registry.wire import decode_avro

__all__ = ["DEFAULT_REGISTRY_URL", "FrameDecoder", "JsonAvroEncoder", "registry_url", "to_json"]

DEFAULT_REGISTRY_URL = "http://localhost:8081"
MAGIC_BYTE = 0
HEADER_SIZE = 5
MAX_SCHEMA_FILE_BYTES = 1 << 20
"""A schema file larger than this (1 MiB) is refused rather than read whole."""
MAX_SCHEMA_IDS = 1000
"""Distinct schema ids one consume looks up (and caches) at most."""


def registry_url(given: str | None, props: Mapping[str, str] | None = None) -> str:
    """``--schema-registry-url``, else ``schema.registry.url`` of ``--command-config``, else
    ``$SCHEMA_REGISTRY_URL``, else :data:`DEFAULT_REGISTRY_URL`."""
    return (given or (props or {}).get("schema.registry.url") or os.environ.get("SCHEMA_REGISTRY_URL")
            or DEFAULT_REGISTRY_URL)


def registry_client(url: str, props: Mapping[str, str] | None) -> Any:
    """A registry client for ``url`` with Confluent's client settings (basic auth, TLS) from ``props``."""
    from seaway.connect.api.errors import ConfigError
    from seaway.schema_registry.client import SchemaRegistryClient
    from seaway.schema_registry.client_security import registry_client_security

    try:
        security = registry_client_security(url, {k: v for k, v in (props or {}).items()
                                                  if k != "schema.registry.url"})
    except ConfigError as exc:
        raise CliError(f"--command-config: {exc}") from None
    return SchemaRegistryClient(security.url, timeout=10.0, auth=security.auth, verify=security.verify)


def _json_default(value: Any) -> Any:
    if isinstance(value, bytes | bytearray):
        return bytes(value).decode("latin-1")  # Avro's JSON encoding: one code point per byte
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, datetime.datetime | datetime.date | datetime.time):
        return value.isoformat()
    if isinstance(value, uuid.UUID):
        return str(value)
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def to_json(value: Any) -> bytes:
    """A decoded Avro value as one line of JSON (bytes in Avro's JSON encoding, decimals as strings)."""
    return json.dumps(value, default=_json_default, ensure_ascii=False, separators=(",", ":")).encode()


def _unbounded_array(schema: Any, names: dict[str, Any], seen: set[str]) -> bool:
    """Whether ``schema`` holds an array whose items encode in zero bytes.

    Every other Avro value takes at least one byte per array item or map entry, so a record's
    size bounds what decoding it allocates; an array of nulls (or of empty records) is a count
    and nothing else, and fastavro would build a list of that many items for a 10-byte record.
    """
    if isinstance(schema, list):
        return any(_unbounded_array(branch, names, seen) for branch in schema)
    if isinstance(schema, str):
        named = names.get(schema)
        if named is None or schema in seen:
            return False
        return _unbounded_array(named, names, seen | {schema})
    if not isinstance(schema, dict):
        return False
    kind = schema.get("type")
    if kind in ("record", "error", "enum", "fixed") and isinstance(schema.get("name"), str):
        names[schema["name"]] = schema
        if isinstance(schema.get("namespace"), str):
            names[f"{schema['namespace']}.{schema['name']}"] = schema
    if kind == "array":
        return _zero_size(schema.get("items"), names, set()) or _unbounded_array(schema.get("items"), names, seen)
    if kind == "map":
        return _unbounded_array(schema.get("values"), names, seen)
    if kind in ("record", "error"):
        fields = [f for f in schema.get("fields", []) if isinstance(f, dict)]
        return any(_unbounded_array(f.get("type"), names, seen) for f in fields)
    return not isinstance(kind, str) and _unbounded_array(kind, names, seen)


def _zero_size(schema: Any, names: dict[str, Any], seen: set[str]) -> bool:
    """Whether every value of ``schema`` encodes in zero bytes (null, fixed of size 0, such records)."""
    if isinstance(schema, str):
        if schema == "null":
            return True
        named = names.get(schema)
        return named is not None and schema not in seen and _zero_size(named, names, seen | {schema})
    if not isinstance(schema, dict):
        return False  # a union writes its branch index
    kind = schema.get("type")
    if kind == "fixed":
        return schema.get("size") == 0
    if kind in ("record", "error"):
        return all(_zero_size(f.get("type"), names, seen) for f in schema.get("fields", []) if isinstance(f, dict))
    return kind == "null" or (not isinstance(kind, str) and _zero_size(kind, names, seen))


def _protobuf_decoder(client: Any) -> Any:
    """A frame of a Protobuf schema -> the message as a dict (the ``.proto``'s field names)."""
    from google.protobuf import json_format
    from seaway.schema_registry.protobuf_serde import ProtobufDeserializer

    deserialize = ProtobufDeserializer(client)
    return lambda data: json_format.MessageToDict(deserialize(data), preserving_proto_field_name=True)


def _where(what: str, msg: Any) -> str:
    return f"{what} of {msg.topic()}-{msg.partition()}@{msg.offset()}"


class FrameDecoder:
    """Turns Confluent Avro frames into JSON bytes; see the module docstring for the modes."""

    def __init__(self, url: str, mode: str, err: IO[str] | None = None,
                 registry: Mapping[str, str] | None = None) -> None:
        self.url = url
        self.registry = dict(registry or {})
        self.mode = mode
        self._err = err if err is not None else sys.stderr
        self._client: Any = None
        self._readers: dict[int, tuple[Any, str | None]] = {}  # schema id -> see _reader
        self._noted = False

    def close(self) -> None:
        if self._client is not None:
            self._client.close()

    def _reader(self, schema_id: int) -> tuple[Any, str | None]:
        """``(decoder of a frame, None)`` for ``schema_id``, or ``(None, why not)``; cached either way.

        Avro, JSON Schema and Protobuf schemas decode (Protobuf through a message built from the
        registry's schema, printed with the field names of the ``.proto``).
        """
        found = self._readers.get(schema_id)
        if found is not None:
            return found
        if len(self._readers) >= MAX_SCHEMA_IDS:  # a topic of random bytes would ask for every id
            return None, f"schema {schema_id} not looked up: more than {MAX_SCHEMA_IDS} schema ids seen"
        import fastavro

        if self._client is None:
            self._client = registry_client(self.url, self.registry)
        try:
            stored = self._client.get_schema(schema_id)
            if stored.schema_type == "JSON":
                found = (lambda data: json.loads(data[HEADER_SIZE:]), None)
            elif stored.schema_type == "PROTOBUF":
                found = (_protobuf_decoder(self._client), None)
            else:
                raw = json.loads(stored.schema)
                parsed = fastavro.parse_schema(raw)
                found = (lambda data, parsed=parsed: decode_avro(data[HEADER_SIZE:], parsed, schema_id=schema_id),
                         None)
                if _unbounded_array(raw, {}, set()):
                    found = (None, f"schema {schema_id} has an array of items that take no bytes (null or empty "
                                   "records): a record could claim any number of them, so it is not decoded")
        except SeawayError as exc:
            found = (None, f"schema {schema_id} from the registry at {self.url}: {exc}")
        except (ValueError, TypeError, KeyError, fastavro.schema.SchemaParseException) as exc:
            found = (None, f"schema {schema_id} is not an Avro schema this tool can read: {exc}")
        self._readers[schema_id] = found
        return found

    def decode(self, data: bytes | None, what: str, msg: Any) -> bytes | None:
        """JSON for a frame; the bytes themselves when not one (auto) or in mode none.

        ``what`` (key or value) and ``msg`` (its record) only name the record in an error.
        """
        if data is None or self.mode == "none":
            return data
        if len(data) < HEADER_SIZE or data[0] != MAGIC_BYTE:
            if self.mode == "avro":
                raise CliError(f"{_where(what, msg)}: not a Confluent Avro frame (no magic byte 0 and schema id)")
            return data
        schema_id = int.from_bytes(data[1:HEADER_SIZE], "big")
        reader, problem = self._reader(schema_id)
        if problem is not None:
            return self._undecodable(data, f"{_where(what, msg)}: {problem}")
        try:
            return to_json(reader(data))
        except Exception as exc:  # bytes from the network: whatever they make the decoder raise, show them raw
            return self._undecodable(data, f"{_where(what, msg)}: {exc}")

    def _undecodable(self, data: bytes, why: str) -> bytes:
        if self.mode == "avro":
            raise CliError(why)
        if not self._noted:
            self._noted = True
            print(f"Note: printing as raw bytes what looks like Avro but does not decode ({why}); "
                  "--decode none turns decoding off", file=self._err, flush=True)
        return data


class JsonAvroEncoder:
    """One JSON document -> a Confluent Avro frame, its schema registered under the topic's subject."""

    def __init__(self, url: str, schema_file: str, is_key: bool, registry: Mapping[str, str] | None = None) -> None:
        import fastavro
        from seaway.schema_registry.serde import AvroSerializer

        what = "--key-schema" if is_key else "--value-schema"
        path = Path(schema_file)
        try:
            if path.stat().st_size > MAX_SCHEMA_FILE_BYTES:
                raise CliError(f"{what} {schema_file}: larger than {MAX_SCHEMA_FILE_BYTES} bytes")
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise CliError(f"{what} {schema_file}: {exc.strerror or exc}") from None
        try:
            self._parsed = fastavro.parse_schema(json.loads(text))
        except (ValueError, TypeError, KeyError, fastavro.schema.SchemaParseException) as exc:
            raise CliError(f"{what} {schema_file} is not an Avro schema: {exc}") from None
        self._client = registry_client(url, registry)
        self._serialize = AvroSerializer(self._client, text, is_key=is_key)
        self.url = url

    def close(self) -> None:
        self._client.close()

    def schema_id(self, topic: str) -> int:
        """Register the schema (or find it) under the topic's subject; errors name the registry."""
        try:
            return self._serialize.schema_id(topic)
        except SeawayError as exc:
            raise CliError(f"registering the schema with the registry at {self.url}: {exc}") from None

    def encode(self, line: bytes, topic: str) -> bytes:
        """The frame for one line of JSON; ValueError (with the reason) when it does not fit.

        The line is read as plain JSON first (a union's value as it is), then, if that does not
        fit the schema, in Avro's JSON encoding (unions as ``{"type": value}``, bytes as
        strings), which is what Confluent's kafka-avro-console-producer takes.
        """
        import fastavro
        try:
            value = json.loads(line)
        except ValueError as exc:
            raise ValueError(f"not JSON: {exc}") from None
        try:
            return self._serialize(value, topic)
        except SeawayError as exc:
            first = str(exc)
        try:
            decoded = next(iter(fastavro.json_reader(io.StringIO(line.decode()), self._parsed)))
            return self._serialize(decoded, topic)
        except (SeawayError, ValueError, TypeError, KeyError, AttributeError, StopIteration):
            raise ValueError(first) from None
