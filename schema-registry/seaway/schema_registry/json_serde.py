"""JSON Schema serializer/deserializer in Confluent's wire format, for applications.

Frame: magic byte 0, the 4-byte schema id, then the value as UTF-8 JSON (``wire.py``). The
serializer validates each value against its schema (``jsonschema``, the schema's own draft)
before framing it, as confluent-kafka's ``JSONSerializer`` does, registers (or looks up) the
schema under the subject its strategy names, and caches the id. The deserializer fetches the
writer schema by id (with its references) once, and validates what it decodes unless told not
to. Schemas may reference others (``references``: ``$ref`` by the reference's name).

RecordNameStrategy names a JSON schema by its ``title``, as Confluent's ``JsonSchema.name()``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from seaway.schema_registry.client import SchemaRegistryClient
from seaway.schema_registry.errors import RegistryError
from seaway.schema_registry.json_schema import JsonModel, parse_json_schema, validate_instance
from seaway.schema_registry.schemas import SCHEMA_TYPE_JSON, SchemaReference
from seaway.schema_registry.wire import (
    HEADER_SIZE,
    SerdeError,
    SubjectNameStrategy,
    frame_schema_id,
    pack,
    topic_name_strategy,
)

__all__ = ["JsonSchemaDeserializer", "JsonSchemaSerializer"]


def _text(schema: str | dict[str, Any] | bool) -> str:
    return schema if isinstance(schema, str) else json.dumps(schema)


def _model(text: str, dependencies: Sequence[tuple[str, str]]) -> JsonModel:
    try:
        return parse_json_schema(text, dependencies)[0]
    except RegistryError as exc:
        raise SerdeError(str(exc)) from None


class JsonSchemaSerializer:
    """``serializer(value, topic)`` -> Confluent-framed JSON bytes (``None`` stays ``None``)."""

    def __init__(
        self,
        client: SchemaRegistryClient,
        schema: str | dict[str, Any],
        *,
        references: Sequence[SchemaReference] = (),
        auto_register: bool = True,
        normalize: bool = False,
        validate: bool = True,
        subject_name_strategy: SubjectNameStrategy = topic_name_strategy,
        is_key: bool = False,
    ) -> None:
        self._client = client
        self._text = _text(schema)
        self._references = tuple(references)
        self._model = _model(self._text, client.dependencies(self._references) if references else ())
        self._auto_register = auto_register
        self._normalize = normalize
        self._validate = validate
        self._strategy = subject_name_strategy
        self._is_key = is_key
        self._ids: dict[str, int] = {}

    def schema_id(self, topic: str) -> int:
        subject = self._strategy(topic, self._is_key, self._model.title)
        schema_id = self._ids.get(subject)
        if schema_id is None:
            if self._auto_register:
                schema_id = self._client.register(subject, self._text, schema_type=SCHEMA_TYPE_JSON,
                                                  references=self._references, normalize=self._normalize)
            else:
                schema_id = self._client.lookup(subject, self._text, schema_type=SCHEMA_TYPE_JSON,
                                                references=self._references).schema_id
            self._ids[subject] = schema_id
        return schema_id

    def __call__(self, value: Any, topic: str) -> bytes | None:
        if value is None:
            return None
        if self._validate:
            validate_instance(self._model, value, lambda m: SerdeError(f"Value does not match the schema: {m}"))
        try:
            payload = json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode()
        except (TypeError, ValueError) as exc:
            raise SerdeError(f"Value is not JSON: {exc}") from None
        return pack(self.schema_id(topic), payload)


class JsonSchemaDeserializer:
    """``deserializer(data)`` -> the decoded JSON value, validated against ``schema`` or the writer's."""

    def __init__(self, client: SchemaRegistryClient, schema: str | dict[str, Any] | None = None, *,
                 validate: bool = True) -> None:
        self._client = client
        self._reader = None if schema is None else _model(_text(schema), ())
        self._validate = validate
        self._writers: dict[int, JsonModel] = {}

    def writer_model(self, schema_id: int) -> JsonModel:
        """The writer schema of ``schema_id``, parsed with its references (cached per id)."""
        model = self._writers.get(schema_id)
        if model is None:
            stored = self._client.get_schema(schema_id)
            if stored.schema_type != SCHEMA_TYPE_JSON:
                raise SerdeError(f"Schema {schema_id} is {stored.schema_type}, not JSON")
            model = _model(stored.schema, self._client.dependencies(stored.references))
            self._writers[schema_id] = model
        return model

    def __call__(self, data: bytes | None) -> Any:
        if data is None:
            return None
        schema_id = frame_schema_id(data)
        try:
            value = json.loads(data[HEADER_SIZE:])
        except (ValueError, RecursionError) as exc:
            raise SerdeError(f"Cannot decode the JSON payload of schema {schema_id}: {exc}") from None
        if self._validate:
            model = self._reader if self._reader is not None else self.writer_model(schema_id)
            validate_instance(model, value, lambda m: SerdeError(f"Value does not match schema {schema_id}: {m}"))
        return value
