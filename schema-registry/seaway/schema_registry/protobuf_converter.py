"""ProtobufConverter: Connect data <-> Confluent's Protobuf frames, through a schema registry.

A drop-in for ``io.confluent.connect.protobuf.ProtobufConverter`` (both names resolve as
Connect plugins), with the settings of every registry converter (``registry_converter.py``)
and ``optional.for.nullables`` (false: optional fields are plain proto3 fields).
A record's STRUCT schema becomes a ``.proto`` file (``connect_protobuf.py``: Confluent's
``ProtobufData`` mapping), compiled by protoc once per schema and registered with its canonical
text; values are written as messages of it, framed with message index ``[0]``. Reading, the
writer's schema is fetched once per id (with the files it imports, through its references)
and compiled; each frame's message-index array picks the message, so topics written by any
Protobuf producer (several messages per file, nested ones, imports) read as Connect structs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from google.protobuf import message_factory
from google.protobuf.message import DecodeError, EncodeError
from seaway.codegen import ShapeCache
from seaway.connect.api.config.definition import ConfigDef
from seaway.connect.api.config.types import ConfigType, Importance
from seaway.connect.api.data.schema import Schema, SchemaAndValue
from seaway.connect.api.errors import DataError
from seaway.schema_registry.connect_protobuf import connect_to_proto, message_schema, to_connect_fn, to_message_fn
from seaway.schema_registry.protobuf_schema import ProtoModel, compile_protobuf, message_indexes
from seaway.schema_registry.registry_converter import RegistryConverter, base_config
from seaway.schema_registry.schemas import SCHEMA_TYPE_PROTOBUF, ParsedSchema, SchemaReference
from seaway.schema_registry.wire import decode_message_indexes, encode_message_indexes, pack

__all__ = ["ProtobufConverter"]


@dataclass(slots=True)
class _Writer:
    text: str
    name: str
    references: tuple[SchemaReference, ...]
    model: ProtoModel
    plain: str
    indexes: bytes
    to_message: Any
    dependencies: tuple[tuple[str, str], ...] = ()


PATHS_PER_SCHEMA = 256
"""Message types of one writer schema whose compiled readers are kept (beyond: the oldest is recompiled)."""


class _Reader:
    """A writer schema's messages, each read into Connect (one compiled function per index path)."""

    def __init__(self, model: ProtoModel) -> None:
        self.model = model
        self._by_path: ShapeCache[tuple[int, ...], tuple[Schema, Any, Any]] = ShapeCache(PATHS_PER_SCHEMA)

    def for_path(self, indexes: list[int]) -> tuple[Schema, Any, Any]:
        key = tuple(indexes)
        found = self._by_path.get(key)
        if found is None:
            descriptor = self.model.message(indexes)
            schema = message_schema(descriptor)
            found = (schema, message_factory.GetMessageClass(descriptor), to_connect_fn(descriptor, schema))
            self._by_path.put(key, found)
        return found


class ProtobufConverter(RegistryConverter[_Writer, _Reader]):
    """Confluent's ProtobufConverter for keys or values. One instance per task thread."""

    SCHEMA_TYPE: ClassVar[str] = SCHEMA_TYPE_PROTOBUF
    CONFIG_DEF: ClassVar[ConfigDef] = base_config().define(
        "optional.for.nullables", ConfigType.BOOLEAN, False, None, Importance.LOW,
        "Whether optional Connect fields are written as proto3 optional fields (so null reads back as null).")

    def configure_type(self, values: Mapping[str, Any]) -> None:
        self.optional_for_nullables: bool = values["optional.for.nullables"]

    def _writer_for(self, model: ProtoModel, plain: str, references: tuple[SchemaReference, ...],
                    schema: Schema, full_name: str, dependencies: tuple[tuple[str, str], ...] = ()) -> _Writer:
        try:
            descriptor = model.pool.FindMessageTypeByName(full_name)
        except KeyError:
            raise DataError(f"The schema has no message {full_name}") from None
        to_message = to_message_fn(descriptor, schema, message_factory.GetMessageClass(descriptor))
        return _Writer(plain, full_name, references, model, plain,
                       encode_message_indexes(message_indexes(descriptor)), to_message, dependencies)

    def writer(self, schema: Schema) -> _Writer:
        text, _ = connect_to_proto(schema, optional_for_nullables=self.optional_for_nullables)
        model, plain = compile_protobuf(text)
        full_name = model.first_message()
        assert full_name is not None
        return self._writer_for(model, plain, (), schema, full_name)

    def writer_text(self, writer: _Writer) -> tuple[str, str | None, tuple[SchemaReference, ...]]:
        return writer.text, writer.name, writer.references

    def writer_parsed(self, writer: _Writer) -> ParsedSchema:
        return ParsedSchema(SCHEMA_TYPE_PROTOBUF, writer.model, writer.plain, writer.references,
                            forms=(writer.plain, None))

    def writer_from_registered(self, text: str, references: tuple[SchemaReference, ...], schema: Schema) -> _Writer:
        dependencies = tuple(self.client.dependencies(references))
        model, plain = compile_protobuf(text, dependencies)
        name = model.first_message()
        if name is None:
            raise DataError("The latest registered schema has no message")
        return self._writer_for(model, plain, references, schema, name, dependencies)

    def encode(self, writer: _Writer, schema_id: int, value: Any) -> bytes:
        try:
            payload = writer.to_message(value).SerializeToString()
        except (EncodeError, TypeError, ValueError, AttributeError, KeyError) as exc:
            raise DataError(f"Value does not fit the Protobuf schema {writer.name}: {exc}") from None
        return pack(schema_id, writer.indexes + payload)

    def reader(self, schema_id: int) -> _Reader:
        stored = self.client.get_schema(schema_id)
        if stored.schema_type != SCHEMA_TYPE_PROTOBUF:
            raise DataError(f"Schema {schema_id} is {stored.schema_type}, not PROTOBUF: use its own converter")
        model = compile_protobuf(stored.schema, self.client.dependencies(stored.references))[0]
        return _Reader(model)

    def decode(self, reader: _Reader, frame: bytes) -> SchemaAndValue:
        indexes, start = decode_message_indexes(frame)
        schema, cls, convert = reader.for_path(indexes)
        message = cls()
        try:
            message.ParseFromString(frame[start:])
        except DecodeError as exc:
            raise DataError(f"Invalid Protobuf payload: {exc}") from None
        return SchemaAndValue(schema, convert(message))
