"""Confluent's wire format and subject-name strategies, shared by the serde and the AvroConverter.

Frame layout (every Confluent Avro serializer, any language)::

    byte 0      magic byte 0x00
    bytes 1-4   schema id, 4-byte big-endian (the registry's global id)
    bytes 5-    Avro binary encoding of the value (no container header: "schemaless")

Subject-name strategies (Confluent's ``io.confluent.kafka.serializers.subject.*``):

* ``TopicNameStrategy`` (default): ``<topic>-key`` / ``<topic>-value``;
* ``RecordNameStrategy``: the schema's full name (``ns.Record``);
* ``TopicRecordNameStrategy``: ``<topic>-<full name>``.

For a schema that is not a named type, the "record name" is the Avro type name (``string``,
``array``...), which is what Confluent's ``AvroSchema.name()`` answers.
"""

from __future__ import annotations

import io
import struct
from collections.abc import Callable
from typing import Any

import fastavro
from seaway.errors import SeawayError

__all__ = [
    "HEADER_SIZE",
    "MAGIC_BYTE",
    "STRATEGIES",
    "SerdeError",
    "SubjectNameStrategy",
    "avro_name",
    "decode_avro",
    "encode_avro",
    "frame_schema_id",
    "pack",
    "record_name_strategy",
    "subject_name_strategy",
    "topic_name_strategy",
    "topic_record_name_strategy",
    "unpack",
]

MAGIC_BYTE = 0
_HEADER = struct.Struct(">bI")
HEADER_SIZE = _HEADER.size
"""Where the Avro payload starts in a frame."""

SubjectNameStrategy = Callable[[str, bool, str | None], str]
"""``strategy(topic, is_key, record_name) -> subject``."""


class SerdeError(SeawayError):
    """Bytes that are not a Confluent Avro frame, or a value that does not fit its schema."""


def pack(schema_id: int, payload: bytes) -> bytes:
    """Frame an Avro payload: magic byte, big-endian schema id, payload."""
    return _HEADER.pack(MAGIC_BYTE, schema_id) + payload


def unpack(data: bytes) -> tuple[int, bytes]:
    """Split a frame into (schema id, Avro payload); ``SerdeError`` if it is not one."""
    return frame_schema_id(data), bytes(data[_HEADER.size :])


def frame_schema_id(data: bytes) -> int:
    """The schema id of a frame (payload left in place, at ``HEADER_SIZE``); ``SerdeError`` if not a frame."""
    if len(data) < _HEADER.size:
        raise SerdeError(f"Message too short for the Confluent wire format ({len(data)} bytes)")
    magic, schema_id = _HEADER.unpack_from(data)
    if magic != MAGIC_BYTE:
        raise SerdeError(f"Unknown magic byte {magic}")
    return int(schema_id)


def encode_avro(parsed_schema: Any, value: Any) -> bytes:
    """Avro binary of ``value`` under a ``fastavro.parse_schema`` result."""
    out = io.BytesIO()
    try:
        fastavro.schemaless_writer(out, parsed_schema, value)
    except (ValueError, TypeError, KeyError, AttributeError, OverflowError) as exc:
        raise SerdeError(f"Value does not match the schema: {exc}") from exc
    return out.getvalue()


def decode_avro(payload: bytes, writer: Any, reader: Any = None, *, schema_id: int | None = None) -> Any:
    """The value in ``payload`` (written with ``writer``), resolved to ``reader`` when given."""
    try:
        return fastavro.schemaless_reader(io.BytesIO(payload), writer, reader)
    except (ValueError, TypeError, EOFError, IndexError, KeyError, StopIteration) as exc:
        raise SerdeError(f"Cannot decode Avro payload with schema {schema_id}: {exc}") from exc


def avro_name(parsed_schema: Any) -> str:
    """The full name of a named schema, else its type name (what name strategies use)."""
    if isinstance(parsed_schema, dict):
        name = parsed_schema.get("name")
        return str(name) if isinstance(name, str) else str(parsed_schema.get("type"))
    if isinstance(parsed_schema, list):
        return "union"
    return str(parsed_schema)


def topic_name_strategy(topic: str, is_key: bool, record_name: str | None) -> str:
    return f"{topic}-{'key' if is_key else 'value'}"


def record_name_strategy(topic: str, is_key: bool, record_name: str | None) -> str:
    if record_name is None:
        raise SerdeError("RecordNameStrategy needs a named (record) schema")
    return record_name


def topic_record_name_strategy(topic: str, is_key: bool, record_name: str | None) -> str:
    return f"{topic}-{record_name_strategy(topic, is_key, record_name)}"


STRATEGIES: dict[str, SubjectNameStrategy] = {
    "TopicNameStrategy": topic_name_strategy,
    "RecordNameStrategy": record_name_strategy,
    "TopicRecordNameStrategy": topic_record_name_strategy,
}


def subject_name_strategy(name: str) -> SubjectNameStrategy:
    """A strategy by its simple or Confluent class name
    (``io.confluent.kafka.serializers.subject.RecordNameStrategy``)."""
    simple = name.strip().rsplit(".", 1)[-1]
    try:
        return STRATEGIES[simple]
    except KeyError:
        raise SerdeError(
            f"Unknown subject name strategy {name!r}; use one of {', '.join(STRATEGIES)}"
        ) from None
