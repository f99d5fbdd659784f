"""Protobuf serializer/deserializer in Confluent's wire format, for applications.

Frame: magic byte 0, the 4-byte schema id, the message-index array (which message of the
schema's file this is), then the serialized message (``wire.py``). The serializer takes a
generated (or dynamic) message class, registers its ``.proto`` file, and before that every
file it imports (except the well-known ones), each under a subject named by its import path
(confluent-kafka's default reference subject strategy), referencing them by version, as
confluent-kafka's ``ProtobufSerializer`` does; ids are cached per subject.

The deserializer reads into a given message class, or, without one, into a dynamic message
built from the writer's schema (fetched by id with its references, compiled by protoc,
``protobuf_schema.py``), so any Protobuf topic can be read without generated code.
:class:`ProtobufReader` is that reading for one compiled writer schema, for callers that fetch
schemas their own way (the web console, asynchronously with a user's credentials).
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

from google.protobuf import message_factory
from google.protobuf.message import DecodeError, EncodeError
from seaway.schema_registry.client import SchemaRegistryClient
from seaway.schema_registry.errors import RegistryError
from seaway.schema_registry.protobuf_schema import KNOWN_DEPENDENCIES, ProtoModel, compile_protobuf, message_indexes
from seaway.schema_registry.schemas import SCHEMA_TYPE_PROTOBUF, SchemaReference
from seaway.schema_registry.wire import (
    HEADER_SIZE,
    SerdeError,
    SubjectNameStrategy,
    decode_message_indexes,
    encode_message_indexes,
    frame_schema_id,
    pack,
    topic_name_strategy,
)

__all__ = ["ProtobufDeserializer", "ProtobufReader", "ProtobufSerializer", "reference_subject_name"]


def reference_subject_name(import_path: str) -> str:
    """confluent-kafka's default ``reference.subject.name.strategy``: the import path itself."""
    return import_path


def _schema_text(file: Any) -> str:
    """A file descriptor as confluent-kafka sends it: its ``FileDescriptorProto`` in base64."""
    return base64.standard_b64encode(file.serialized_pb).decode("ascii")


class ProtobufSerializer:
    """``serializer(message, topic)`` -> Confluent-framed Protobuf bytes."""

    def __init__(
        self,
        client: SchemaRegistryClient,
        message_class: Any,
        *,
        auto_register: bool = True,
        normalize: bool = False,
        subject_name_strategy: SubjectNameStrategy = topic_name_strategy,
        reference_subject: Callable[[str], str] = reference_subject_name,
        is_key: bool = False,
    ) -> None:
        self._client = client
        self._class = message_class
        self._descriptor = message_class.DESCRIPTOR
        self._indexes = encode_message_indexes(message_indexes(self._descriptor))
        self._auto_register = auto_register
        self._normalize = normalize
        self._strategy = subject_name_strategy
        self._reference_subject = reference_subject
        self._is_key = is_key
        self._ids: dict[str, int] = {}

    def _references(self, file: Any) -> tuple[SchemaReference, ...]:
        refs = []
        for dep in file.dependencies:
            if dep.name in KNOWN_DEPENDENCIES:
                continue
            inner = self._references(dep)
            subject = self._reference_subject(dep.name)
            text = _schema_text(dep)
            if self._auto_register:
                self._client.register(subject, text, schema_type=SCHEMA_TYPE_PROTOBUF, references=inner,
                                      normalize=self._normalize)
            found = self._client.lookup(subject, text, schema_type=SCHEMA_TYPE_PROTOBUF, references=inner)
            refs.append(SchemaReference(dep.name, subject, found.version))
        return tuple(refs)

    def schema_id(self, topic: str) -> int:
        subject = self._strategy(topic, self._is_key, self._descriptor.full_name)
        schema_id = self._ids.get(subject)
        if schema_id is None:
            file = self._descriptor.file
            refs = self._references(file)
            text = _schema_text(file)
            if self._auto_register:
                schema_id = self._client.register(subject, text, schema_type=SCHEMA_TYPE_PROTOBUF,
                                                  references=refs, normalize=self._normalize)
            else:
                schema_id = self._client.lookup(subject, text, schema_type=SCHEMA_TYPE_PROTOBUF,
                                                references=refs).schema_id
            self._ids[subject] = schema_id
        return schema_id

    def __call__(self, message: Any, topic: str) -> bytes | None:
        if message is None:
            return None
        if not isinstance(message, self._class):
            raise SerdeError(f"Expected a {self._descriptor.full_name} message, got {type(message).__name__}")
        try:
            payload = message.SerializeToString()
        except EncodeError as exc:
            raise SerdeError(f"Cannot serialize the message: {exc}") from None
        return pack(self.schema_id(topic), self._indexes + payload)


class ProtobufReader:
    """Messages of one writer schema, read from what follows a frame's 5-byte header.

    The message-index array there picks the message of the schema's file (Confluent's wire
    format); a dynamic class is built once per index path.
    """

    def __init__(self, model: ProtoModel, schema_id: int | None = None) -> None:
        self.model = model
        self._schema_id = schema_id
        self._classes: dict[tuple[int, ...], Any] = {}

    def message_class(self, indexes: list[int]) -> Any:
        """The dynamic message class at ``indexes`` (SerdeError when the schema has none there)."""
        key = tuple(indexes)
        cls = self._classes.get(key)
        if cls is None:
            try:
                descriptor = self.model.message(indexes)
            except RegistryError as exc:
                raise SerdeError(str(exc)) from None
            cls = self._classes[key] = message_factory.GetMessageClass(descriptor)
        return cls

    def read(self, payload: bytes) -> Any:
        """The message in ``payload`` (the message indexes, then the message); SerdeError on bad bytes."""
        indexes, start = decode_message_indexes(payload, 0)
        return _parse(self.message_class(indexes), payload, start, self._schema_id)


def _parse(cls: Any, payload: bytes, start: int, schema_id: int | None) -> Any:
    message = cls()
    try:
        message.ParseFromString(payload[start:])
    except DecodeError as exc:
        which = "" if schema_id is None else f" of schema {schema_id}"
        raise SerdeError(f"Cannot parse the Protobuf payload{which}: {exc}") from None
    return message


class ProtobufDeserializer:
    """``deserializer(data)`` -> a message (of ``message_class``, else a dynamic one)."""

    def __init__(self, client: SchemaRegistryClient, message_class: Any = None) -> None:
        self._client = client
        self._class = message_class
        self._readers: dict[int, ProtobufReader] = {}

    def _reader(self, schema_id: int) -> ProtobufReader:
        reader = self._readers.get(schema_id)
        if reader is None:
            stored = self._client.get_schema(schema_id)
            if stored.schema_type != SCHEMA_TYPE_PROTOBUF:
                raise SerdeError(f"Schema {schema_id} is {stored.schema_type}, not PROTOBUF")
            try:
                model = compile_protobuf(stored.schema, self._client.dependencies(stored.references))[0]
            except RegistryError as exc:
                raise SerdeError(f"Schema {schema_id} does not compile: {exc}") from None
            reader = self._readers[schema_id] = ProtobufReader(model, schema_id)
        return reader

    def writer_model(self, schema_id: int) -> ProtoModel:
        """The writer schema of ``schema_id``, compiled with its references (cached per id)."""
        return self._reader(schema_id).model

    def message_class(self, schema_id: int, indexes: list[int]) -> Any:
        """The dynamic message class for ``indexes`` of the writer schema ``schema_id``."""
        return self._reader(schema_id).message_class(indexes)

    def __call__(self, data: bytes | None) -> Any:
        if data is None:
            return None
        schema_id = frame_schema_id(data)
        payload = data[HEADER_SIZE:]
        indexes, start = decode_message_indexes(payload, 0)
        cls = self._class if self._class is not None else self._reader(schema_id).message_class(indexes)
        return _parse(cls, payload, start, schema_id)
