"""ValueToKey: replace the record key with a Struct (or Map) of fields taken from the value.

With a schema, every listed field must exist in the value schema (``Field does not exist:
<name>``); the key schema is a struct of those fields, in the configured order.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from seaway.connect.api import ConfigDef, ConfigType, DataError, Importance, Schema, SchemaBuilder, Transformation
from seaway.connect.api.transforms import R
from seaway.transforms.util import (
    REPLACE_NULL_WITH_DEFAULT_CONFIG,
    SchemaCache,
    define_replace_null_with_default,
    field_values,
    non_empty_list,
    require_map,
    require_struct,
    struct_from_values,
)

__all__ = ["ValueToKey"]

FIELDS = "fields"
PURPOSE = "copying fields from value to key"

CONFIG_DEF = define_replace_null_with_default(ConfigDef().define(
    FIELDS, ConfigType.LIST, validator=non_empty_list(), importance=Importance.HIGH,
    documentation="Field names on the record value to extract as the record key."))


class ValueToKey(Transformation[R]):
    """Kafka's ``ValueToKey`` (no $Key/$Value variants: it always reads the value, writes the key)."""

    def config(self) -> ConfigDef:
        return CONFIG_DEF

    def configure(self, configs: Mapping[str, Any]) -> None:
        values = CONFIG_DEF.parse(configs)
        self._fields: list[str] = values[FIELDS]
        self._replace_null = bool(values[REPLACE_NULL_WITH_DEFAULT_CONFIG])
        self._cache = SchemaCache()

    def apply(self, record: R) -> R | None:
        if record.value_schema is None:
            value = require_map(record.value, PURPOSE)
            key = {name: value.get(name) for name in self._fields}
            return record.new_record(key_schema=None, key=key)
        struct = require_struct(record.value, PURPOSE)
        key_schema, positions = self._cache.get_or_build(struct.schema, self._key_schema)
        values = field_values(struct, self._replace_null)
        key_struct = struct_from_values(key_schema, [values[i] for i in positions])
        return record.new_record(key_schema=key_schema, key=key_struct)

    def _key_schema(self, value_schema: Schema) -> tuple[Schema, list[int]]:
        builder = SchemaBuilder.struct()
        positions: list[int] = []
        for name in self._fields:
            field = value_schema.field(name)
            if field is None:
                raise DataError(f"Field does not exist: {name}")
            builder.field(name, field.schema)
            positions.append(field.index)
        return builder.build(), positions
