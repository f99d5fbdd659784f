"""HeaderFrom: copy or move fields of the key/value into record headers.

``fields`` and ``headers`` are parallel lists; ``operation`` is ``copy`` (the field stays) or
``move`` (the field is removed; with a schema, from the schema too). A header gets the field's
schema (with a schema) or none. Existing headers are kept; the new ones are appended.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from seaway.connect.api import (
    ConfigDef,
    ConfigError,
    ConfigType,
    DataError,
    Importance,
    Schema,
    SchemaBuilder,
    ValidString,
)
from seaway.connect.api.transforms import R
from seaway.transforms.util import (
    REPLACE_NULL_WITH_DEFAULT_CONFIG,
    KeyValueTransformation,
    SchemaCache,
    copy_schema_basics,
    define_replace_null_with_default,
    field_values,
    non_empty_list,
    require_map,
    require_struct,
    struct_from_values,
)

__all__ = ["HeaderFrom", "HeaderFromKey", "HeaderFromValue"]

FIELDS = "fields"
HEADERS = "headers"
OPERATION = "operation"
MOVE = "move"
COPY = "copy"

CONFIG_DEF = define_replace_null_with_default(
    ConfigDef()
    .define(FIELDS, ConfigType.LIST, validator=non_empty_list(), importance=Importance.HIGH,
            documentation="Field names in the record whose values are to be copied or moved to headers.")
    .define(HEADERS, ConfigType.LIST, validator=non_empty_list(), importance=Importance.HIGH,
            documentation="Header names, in the same order as the field names listed in the fields configuration "
                          "property.")
    .define(OPERATION, ConfigType.STRING, validator=ValidString.in_(MOVE, COPY), importance=Importance.HIGH,
            documentation="Either <code>move</code> if the fields are to be moved to the headers (removed from the "
                          "key/value), or <code>copy</code> if the fields are to be copied to the headers (retained "
                          "in the key/value)."))


class HeaderFrom(KeyValueTransformation[R]):
    """Copy or move fields to headers (Kafka's ``HeaderFrom``)."""

    CONFIG_DEF = CONFIG_DEF

    def configure(self, configs: Mapping[str, Any]) -> None:
        values = CONFIG_DEF.parse(configs)
        self._fields: list[str] = values[FIELDS]
        self._headers: list[str] = values[HEADERS]
        if len(self._fields) != len(self._headers):
            raise ConfigError(f"'{FIELDS}' config must have the same number of elements as '{HEADERS}' config.",
                              name=HEADERS, value=self._headers)
        self._move = values[OPERATION] == MOVE
        self._purpose = f"header {values[OPERATION]}"
        self._replace_null = bool(values[REPLACE_NULL_WITH_DEFAULT_CONFIG])
        self._cache = SchemaCache()

    def apply(self, record: R) -> R | None:
        schema = self.operating_schema(record)
        value = self.operating_value(record)
        headers = record.headers.duplicate()
        if schema is None:
            mapping = require_map(value, self._purpose)
            updated_map = dict(mapping)
            for field, header in zip(self._fields, self._headers, strict=True):
                if self._move:
                    updated_map.pop(field, None)
                headers.add(header, mapping.get(field), None)
            return self._with(record, None, updated_map, headers)
        struct = require_struct(value, self._purpose)
        values = field_values(struct, self._replace_null)
        for field_name, header in zip(self._fields, self._headers, strict=True):
            found = struct.schema.field(field_name)
            if found is None:
                raise DataError(f"Field {field_name} not found in {schema!r}")
            headers.add(header, values[found.index], found.schema)
        if not self._move:
            return self._with(record, schema, struct, headers)
        moved_schema, positions = self._cache.get_or_build(schema, self._moved_schema)
        return self._with(record, moved_schema, struct_from_values(moved_schema, [values[i] for i in positions]),
                          headers)

    def _with(self, record: R, schema: Schema | None, value: Any, headers: Any) -> R:
        if self.operates_on_key:
            return record.new_record(key_schema=schema, key=value, headers=headers)
        return record.new_record(value_schema=schema, value=value, headers=headers)

    def _moved_schema(self, schema: Schema) -> tuple[Schema, list[int]]:
        builder = copy_schema_basics(schema, SchemaBuilder.struct())
        positions: list[int] = []
        for field in schema.fields:
            if field.name not in self._fields:
                builder.field(field.name, field.schema)
                positions.append(field.index)
        return builder.build(), positions


class HeaderFromKey(HeaderFrom[R]):
    """``HeaderFrom$Key``."""

    operates_on_key = True


class HeaderFromValue(HeaderFrom[R]):
    """``HeaderFrom$Value``."""
