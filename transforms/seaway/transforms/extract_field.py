"""ExtractField: replace the key/value by one of its fields (a nested one with ``field.syntax.version=V2``).

Schemaless, a missing field (or a null key/value) gives null. With a schema the result takes
the field's schema; a field the schema does not have is an error (``Unknown field: <path>``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from seaway.connect.api import ConfigDef, ConfigType, DataError, Importance
from seaway.connect.api.transforms import R
from seaway.transforms.field_path import (
    FIELD_SYNTAX_VERSION_CONFIG,
    FieldSyntaxVersion,
    SingleFieldPath,
    define_field_syntax_version,
)
from seaway.transforms.util import (
    REPLACE_NULL_WITH_DEFAULT_CONFIG,
    KeyValueTransformation,
    define_replace_null_with_default,
    require_map_or_null,
    require_struct_or_null,
)

__all__ = ["ExtractField", "ExtractFieldKey", "ExtractFieldValue"]

FIELD = "field"
PURPOSE = "field extraction"

CONFIG_DEF = define_replace_null_with_default(define_field_syntax_version(
    ConfigDef().define(FIELD, ConfigType.STRING, importance=Importance.MEDIUM,
                       documentation="Field name to extract.")))


class ExtractField(KeyValueTransformation[R]):
    """Pull a field out of a Struct or Map (Kafka's ``ExtractField``)."""

    CONFIG_DEF = CONFIG_DEF

    def configure(self, configs: Mapping[str, Any]) -> None:
        values = CONFIG_DEF.parse(configs)
        version = FieldSyntaxVersion.from_config(values[FIELD_SYNTAX_VERSION_CONFIG])
        self._path = SingleFieldPath(values[FIELD], version)
        self._replace_null = bool(values[REPLACE_NULL_WITH_DEFAULT_CONFIG])

    def apply(self, record: R) -> R | None:
        schema = self.operating_schema(record)
        value = self.operating_value(record)
        if schema is None:
            mapping = require_map_or_null(value, PURPOSE)
            return self.new_record(record, None, None if mapping is None else self._path.value_from_map(mapping))
        struct = require_struct_or_null(value, PURPOSE)
        field = self._path.field_from(schema)
        if field is None:
            raise DataError(f"Unknown field: {self._path.path}")
        extracted = None if struct is None else self._path.value_from_struct(struct, self._replace_null)
        return self.new_record(record, field.schema, extracted)


class ExtractFieldKey(ExtractField[R]):
    """``ExtractField$Key``."""

    operates_on_key = True


class ExtractFieldValue(ExtractField[R]):
    """``ExtractField$Value``."""
