"""SetSchemaMetadata: set the name and/or version of the key/value schema.

A Struct value is re-created over the renamed schema (a Struct must match its schema).
Requires a schema: schemaless data is an error (``Schema required for [updating schema
metadata]``). Everything else of the schema (type, optionality, default, doc, parameters,
fields) is kept.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from seaway.connect.api import ConfigDef, ConfigError, ConfigType, Importance, Schema, Struct
from seaway.connect.api.transforms import R
from seaway.transforms.util import (
    REPLACE_NULL_WITH_DEFAULT_CONFIG,
    KeyValueTransformation,
    SchemaCache,
    define_replace_null_with_default,
    field_values,
    require_schema,
    struct_from_values,
)

__all__ = ["SetSchemaMetadata", "SetSchemaMetadataKey", "SetSchemaMetadataValue"]

SCHEMA_NAME = "schema.name"
SCHEMA_VERSION = "schema.version"
PURPOSE = "updating schema metadata"

CONFIG_DEF = define_replace_null_with_default(
    ConfigDef()
    .define(SCHEMA_NAME, ConfigType.STRING, None, None, Importance.HIGH, "Schema name to set.")
    .define(SCHEMA_VERSION, ConfigType.INT, None, None, Importance.HIGH, "Schema version to set."))


class SetSchemaMetadata(KeyValueTransformation[R]):
    """Set a schema's name and version (Kafka's ``SetSchemaMetadata``)."""

    CONFIG_DEF = CONFIG_DEF

    def configure(self, configs: Mapping[str, Any]) -> None:
        values = CONFIG_DEF.parse(configs)
        self._name: str | None = values[SCHEMA_NAME]
        self._version: int | None = values[SCHEMA_VERSION]
        self._replace_null = bool(values[REPLACE_NULL_WITH_DEFAULT_CONFIG])
        if self._name is None and self._version is None:
            raise ConfigError("Neither schema name nor version configured")
        self._cache = SchemaCache()

    def apply(self, record: R) -> R | None:
        schema = require_schema(self.operating_schema(record), PURPOSE)
        updated: Schema = self._cache.get_or_build(schema, self._renamed)
        value = self.operating_value(record)
        if isinstance(value, Struct):
            value = struct_from_values(updated, field_values(value, self._replace_null))
        return self.new_record(record, updated, value)

    def _renamed(self, schema: Schema) -> Schema:
        name = self._name if self._name is not None else schema.name
        version = self._version if self._version is not None else schema.version
        default = schema.default_value
        if isinstance(default, Struct):  # a default Struct must be re-made over the renamed schema
            bare = Schema(schema.type, schema.optional, None, name, version, schema.doc, schema.parameters,
                          schema.field_list)
            default = struct_from_values(bare, field_values(default, False))
        return Schema(schema.type, schema.optional, default, name, version, schema.doc, schema.parameters,
                      schema.field_list, schema.key_schema, schema.value_schema)


class SetSchemaMetadataKey(SetSchemaMetadata[R]):
    """``SetSchemaMetadata$Key``."""

    operates_on_key = True


class SetSchemaMetadataValue(SetSchemaMetadata[R]):
    """``SetSchemaMetadata$Value``."""
