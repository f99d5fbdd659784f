"""HoistField: wrap the key/value in a Struct (with a schema) or a Map (without) under ``field``.

``HoistField$Value`` with ``field=line`` turns ``"hello"`` into ``{"line": "hello"}``. The
wrapper schema is a required struct with one field, the original schema.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from seaway.connect.api import ConfigDef, ConfigType, Importance, Schema, SchemaBuilder
from seaway.connect.api.transforms import R
from seaway.transforms.util import KeyValueTransformation, SchemaCache, struct_from_values

__all__ = ["HoistField", "HoistFieldKey", "HoistFieldValue"]

FIELD = "field"

CONFIG_DEF = ConfigDef().define(
    FIELD, ConfigType.STRING, importance=Importance.MEDIUM,
    documentation="Field name for the single field that will be created in the resulting Struct or Map.")


class HoistField(KeyValueTransformation[R]):
    """Wrap data in a single-field Struct or Map (Kafka's ``HoistField``)."""

    CONFIG_DEF = CONFIG_DEF

    def configure(self, configs: Mapping[str, Any]) -> None:
        self._field: str = CONFIG_DEF.parse(configs)[FIELD]
        self._cache = SchemaCache()

    def apply(self, record: R) -> R | None:
        schema = self.operating_schema(record)
        value = self.operating_value(record)
        if schema is None:
            return self.new_record(record, None, {self._field: value})
        updated_schema: Schema = self._cache.get_or_build(schema, self._wrapper_schema)
        struct = struct_from_values(updated_schema, [None])
        struct.put(self._field, value)  # validated: the value must fit its own schema
        return self.new_record(record, updated_schema, struct)

    def _wrapper_schema(self, schema: Schema) -> Schema:
        return SchemaBuilder.struct().field(self._field, schema).build()


class HoistFieldKey(HoistField[R]):
    """``HoistField$Key``."""

    operates_on_key = True


class HoistFieldValue(HoistField[R]):
    """``HoistField$Value``."""
