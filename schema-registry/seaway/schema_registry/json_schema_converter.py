"""JsonSchemaConverter: Connect data <-> Confluent's JSON Schema frames, through a schema registry.

A drop-in for ``io.confluent.connect.json.JsonSchemaConverter`` (both names resolve as Connect
plugins). Settings: those of every registry converter (``registry_converter.py``), and

* ``json.fail.invalid.schema`` (false): validate every value against its JSON Schema, written
  and read; an invalid one is a ``DataError`` naming the problem (else it passes unchecked,
  as Confluent's default);
* ``decimal.format`` (BASE64): Connect decimals as base64 of the unscaled value, or
  ``NUMERIC`` as JSON numbers;
* ``use.optional.for.nonrequired`` (false): read properties not listed in ``required`` as
  optional fields.

Schemas and values map as Confluent's ``JsonSchemaData`` (``connect_json.py``); a topic
written by other JSON Schema producers (a schema with its own ``title``, ``$ref``s to other
subjects) reads as Connect structs.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import orjson
from seaway.connect.api.config.definition import ConfigDef
from seaway.connect.api.config.types import ConfigType, Importance
from seaway.connect.api.config.validators import ValidString
from seaway.connect.api.data.schema import Schema, SchemaAndValue
from seaway.connect.api.errors import DataError
from seaway.schema_registry.connect_json import Fn, JsonData
from seaway.schema_registry.json_schema import JsonModel, dumps_compact, parse_json_schema, validate_instance
from seaway.schema_registry.registry_converter import RegistryConverter, base_config
from seaway.schema_registry.schemas import SCHEMA_TYPE_JSON, ParsedSchema, SchemaReference, parse_schema
from seaway.schema_registry.wire import HEADER_SIZE, pack

__all__ = ["JsonSchemaConverter"]


@dataclass(slots=True)
class _Writer:
    text: str
    name: str | None
    references: tuple[SchemaReference, ...]
    model: JsonModel
    to_json: Fn
    dependencies: tuple[tuple[str, str], ...] = ()


@dataclass(slots=True)
class _Reader:
    schema: Schema
    model: JsonModel
    to_connect: Fn


class JsonSchemaConverter(RegistryConverter[_Writer, _Reader]):
    """Confluent's JsonSchemaConverter for keys or values. One instance per task thread."""

    SCHEMA_TYPE: ClassVar[str] = SCHEMA_TYPE_JSON
    CONFIG_DEF: ClassVar[ConfigDef] = (
        base_config()
        .define("json.fail.invalid.schema", ConfigType.BOOLEAN, False, None, Importance.MEDIUM,
                "Whether to fail serialization or deserialization when a value does not match its schema.")
        .define("decimal.format", ConfigType.STRING, "BASE64", ValidString.in_("BASE64", "NUMERIC"), Importance.LOW,
                "How decimals are written: BASE64 (the unscaled bytes) or NUMERIC (a JSON number).")
        .define("use.optional.for.nonrequired", ConfigType.BOOLEAN, False, None, Importance.LOW,
                "Whether properties that are not required read as optional fields.")
    )

    def configure_type(self, values: Mapping[str, Any]) -> None:
        self.validate: bool = values["json.fail.invalid.schema"]
        self.data = JsonData(decimal_numeric=values["decimal.format"] == "NUMERIC",
                             optional_for_nonrequired=values["use.optional.for.nonrequired"])

    def writer(self, schema: Schema) -> _Writer:
        text = dumps_compact(self.data.from_connect_schema(schema))
        model = parse_json_schema(text)[0]
        return _Writer(text, schema.name, (), model, self.data.to_json_fn(schema))

    def writer_text(self, writer: _Writer) -> tuple[str, str | None, tuple[SchemaReference, ...]]:
        return writer.text, writer.name, writer.references

    def writer_parsed(self, writer: _Writer) -> ParsedSchema:
        return parse_schema(writer.text, schema_type=SCHEMA_TYPE_JSON, references=writer.references,
                            named_dependencies=writer.dependencies)

    def writer_from_registered(self, text: str, references: tuple[SchemaReference, ...], schema: Schema) -> _Writer:
        dependencies = tuple(self.client.dependencies(references))
        model = parse_json_schema(text, dependencies)[0]
        title = model.title
        return _Writer(text, title, references, model, self.data.to_json_fn(schema), dependencies)

    def encode(self, writer: _Writer, schema_id: int, value: Any) -> bytes:
        document = writer.to_json(value)
        if self.validate:
            validate_instance(writer.model, document, lambda m: DataError(f"Value does not match its JSON Schema: {m}"))
        return pack(schema_id, json.dumps(document, separators=(",", ":"), ensure_ascii=False).encode())

    def reader(self, schema_id: int) -> _Reader:
        stored = self.client.get_schema(schema_id)
        if stored.schema_type != SCHEMA_TYPE_JSON:
            raise DataError(f"Schema {schema_id} is {stored.schema_type}, not JSON: use its own converter")
        model = parse_json_schema(stored.schema, self.client.dependencies(stored.references))[0]
        schema = self.data.to_connect_schema(model.data, model.resolver())
        return _Reader(schema, model, self.data.to_connect_fn(schema))

    def decode(self, reader: _Reader, frame: bytes) -> SchemaAndValue:
        try:
            document = orjson.loads(frame[HEADER_SIZE:])
        except (ValueError, RecursionError) as exc:
            raise DataError(f"Invalid JSON payload: {exc}") from None
        if self.validate:
            validate_instance(reader.model, document, lambda m: DataError(f"Value does not match its JSON Schema: {m}"))
        return SchemaAndValue(reader.schema, reader.to_connect(document))
