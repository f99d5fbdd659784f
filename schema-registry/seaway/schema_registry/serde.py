"""Avro serializer/deserializer in Confluent's wire format, for applications.

The frame layout and subject-name strategies live in ``wire.py`` and are shared with the
Connect ``AvroConverter``, so both speak exactly the same bytes. The serializer registers (or
looks up) its schema under the subject its strategy names (TopicNameStrategy by default:
``<topic>-key`` / ``<topic>-value``), then caches the id. The deserializer fetches the writer
schema by id (cached) and resolves it to an optional reader schema, per the Avro spec,
through fastavro.

Schemas with references are not supported by this serde yet (register them with the client).
"""

from __future__ import annotations

import json
from typing import Any

import fastavro
from seaway.schema_registry.client import SchemaRegistryClient
from seaway.schema_registry.wire import (
    MAGIC_BYTE,
    SerdeError,
    SubjectNameStrategy,
    avro_name,
    decode_avro,
    encode_avro,
    pack,
    record_name_strategy,
    subject_name_strategy,
    topic_name_strategy,
    topic_record_name_strategy,
    unpack,
)

__all__ = [
    "MAGIC_BYTE",
    "AvroDeserializer",
    "AvroSerializer",
    "SerdeError",
    "SubjectNameStrategy",
    "pack",
    "record_name_strategy",
    "subject_name_strategy",
    "topic_name_strategy",
    "topic_record_name_strategy",
    "unpack",
]


def _parse(schema: str | dict[str, Any]) -> tuple[str, Any]:
    text = schema if isinstance(schema, str) else json.dumps(schema)
    return text, fastavro.parse_schema(json.loads(text))


class AvroSerializer:
    """``serializer(value, topic)`` -> Confluent-framed bytes."""

    def __init__(
        self,
        client: SchemaRegistryClient,
        schema: str | dict[str, Any],
        *,
        auto_register: bool = True,
        normalize: bool = False,
        subject_name_strategy: SubjectNameStrategy = topic_name_strategy,
        is_key: bool = False,
    ) -> None:
        self._client = client
        self._text, self._parsed = _parse(schema)
        self._auto_register = auto_register
        self._normalize = normalize
        self._strategy = subject_name_strategy
        self._is_key = is_key
        self._record_name = avro_name(self._parsed)
        self._ids: dict[str, int] = {}

    def schema_id(self, topic: str) -> int:
        subject = self._strategy(topic, self._is_key, self._record_name)
        schema_id = self._ids.get(subject)
        if schema_id is None:
            if self._auto_register:
                schema_id = self._client.register(subject, self._text, normalize=self._normalize)
            else:
                schema_id = self._client.lookup(subject, self._text).schema_id
            self._ids[subject] = schema_id
        return schema_id

    def __call__(self, value: Any, topic: str) -> bytes:
        return pack(self.schema_id(topic), encode_avro(self._parsed, value))


class AvroDeserializer:
    """``deserializer(data)`` -> the decoded value, resolved to ``reader_schema`` if given."""

    def __init__(
        self, client: SchemaRegistryClient, reader_schema: str | dict[str, Any] | None = None
    ) -> None:
        self._client = client
        self._reader = None if reader_schema is None else _parse(reader_schema)[1]
        self._writers: dict[int, Any] = {}

    def __call__(self, data: bytes | None) -> Any:
        if data is None:
            return None
        schema_id, payload = unpack(data)
        writer = self._writers.get(schema_id)
        if writer is None:
            writer = _parse(self._client.get_by_id(schema_id))[1]
            self._writers[schema_id] = writer
        return decode_avro(payload, writer, self._reader, schema_id=schema_id)
