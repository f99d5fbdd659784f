"""Confluent's wire format and subject-name strategies, shared by the serde and the AvroConverter.

Frame layout (every Confluent serializer, any language)::

    byte 0      magic byte 0x00
    bytes 1-4   schema id, 4-byte big-endian (the registry's global id)
    bytes 5-    Avro: the binary encoding of the value (no container header: "schemaless")
                JSON Schema: the value as UTF-8 JSON
                Protobuf: the message-index array, then the serialized message

The Protobuf message-index array says which message of the schema's file the payload is: the
path of indexes from the file's top-level messages down through nested ones, written as
zigzag varints, the count first (``[1, 0]`` is the first message nested in the second
top-level one). The most common path, ``[0]`` (the first message), is the single byte 0.

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
from collections.abc import Callable, Sequence
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
    "decode_message_indexes",
    "encode_avro",
    "encode_message_indexes",
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
    """Bytes that are not a Confluent frame, or a value that does not fit its schema."""


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


def _zigzag(value: int, out: bytearray) -> None:
    value = (value << 1) ^ (value >> 63)
    while value & ~0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def encode_message_indexes(indexes: Sequence[int]) -> bytes:
    """A Protobuf frame's message-index array (``[0]`` is the single byte 0)."""
    if list(indexes) == [0]:
        return b"\x00"
    out = bytearray()
    _zigzag(len(indexes), out)
    for index in indexes:
        _zigzag(index, out)
    return bytes(out)


def _read_zigzag(data: bytes, offset: int) -> tuple[int, int]:
    shift = result = 0
    while True:
        if offset >= len(data) or shift > 63:
            raise SerdeError("Truncated or invalid message-index array in a Protobuf frame")
        byte = data[offset]
        offset += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return (result >> 1) ^ -(result & 1), offset
        shift += 7


def decode_message_indexes(data: bytes, offset: int = HEADER_SIZE) -> tuple[list[int], int]:
    """The message-index array at ``offset`` and where the message starts."""
    count, offset = _read_zigzag(data, offset)
    if count == 0:
        return [0], offset
    if count < 0 or count > 1024:
        raise SerdeError(f"Invalid message-index count {count} in a Protobuf frame")
    indexes = []
    for _ in range(count):
        index, offset = _read_zigzag(data, offset)
        if index < 0:
            raise SerdeError(f"Invalid message index {index} in a Protobuf frame")
        indexes.append(index)
    return indexes, offset


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
