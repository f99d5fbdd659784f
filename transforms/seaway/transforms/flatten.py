"""Flatten: turn nested structs (with a schema) or nested maps (without) into one level.

Field names join the path with ``delimiter`` (default ``.``): ``{"a": {"b": 1}}`` becomes
``{"a.b": 1}``. Arrays are kept as they are; with a schema, map fields are kept too (only
structs are flattened). A flattened field is optional when it or any ancestor is optional,
and takes its default from the nearest ancestor default, as in Kafka. A null key/value stays
null (with a schema it gets the flattened schema, which keeps the input's optionality).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from seaway.connect.api import (
    ConfigDef,
    ConfigType,
    ConnectSchema,
    DataError,
    Importance,
    Schema,
    SchemaBuilder,
    SchemaType,
    Struct,
)
from seaway.connect.api.transforms import R
from seaway.transforms.util import (
    KeyValueTransformation,
    SchemaCache,
    copy_schema_basics,
    require_map,
    require_struct_or_null,
    struct_from_values,
)

__all__ = ["Flatten", "FlattenKey", "FlattenValue"]

DELIMITER = "delimiter"
PURPOSE = "flattening"
_KEPT_SCHEMALESS = frozenset({SchemaType.INT8, SchemaType.INT16, SchemaType.INT32, SchemaType.INT64,
                              SchemaType.FLOAT32, SchemaType.FLOAT64, SchemaType.BOOLEAN, SchemaType.STRING,
                              SchemaType.BYTES, SchemaType.ARRAY})
_KEPT_WITH_SCHEMA = _KEPT_SCHEMALESS | {SchemaType.MAP}

CONFIG_DEF = ConfigDef().define(
    DELIMITER, ConfigType.STRING, ".", None, Importance.MEDIUM,
    "Delimiter to insert between field names from the input record when generating field names for the output "
    "record")


class Flatten(KeyValueTransformation[R]):
    """Flatten nested structures into top-level fields (Kafka's ``Flatten``)."""

    CONFIG_DEF = CONFIG_DEF

    def configure(self, configs: Mapping[str, Any]) -> None:
        self._delimiter: str = CONFIG_DEF.parse(configs)[DELIMITER]
        self._cache = SchemaCache()

    def _name(self, prefix: str, name: str) -> str:
        return f"{prefix}{self._delimiter}{name}" if prefix else name

    def apply(self, record: R) -> R | None:
        schema = self.operating_schema(record)
        value = self.operating_value(record)
        if schema is None:
            if value is None:
                return record
            flat: dict[str, Any] = {}
            self._flatten_map(require_map(value, PURPOSE), "", flat)
            return self.new_record(record, None, flat)
        struct = require_struct_or_null(value, PURPOSE)
        updated_schema: Schema = self._cache.get_or_build(schema, self._flat_schema)
        if struct is None:
            return self.new_record(record, updated_schema, None)
        values: list[Any] = []
        self._flatten_struct(struct, values)
        return self.new_record(record, updated_schema, struct_from_values(updated_schema, values))

    # -- schemaless ------------------------------------------------------------------------------
    def _flatten_map(self, mapping: dict[str, Any], prefix: str, out: dict[str, Any]) -> None:
        for key, value in mapping.items():
            name = self._name(prefix, key)
            if value is None:
                out[name] = None
                continue
            inferred = ConnectSchema.schema_type(value)
            if inferred is None:
                raise DataError(f"Flatten transformation was passed a value of type {type(value).__qualname__} "
                                "which is not supported by Connect's data API")
            if inferred in _KEPT_SCHEMALESS:
                out[name] = value
            elif inferred is SchemaType.MAP:
                self._flatten_map(require_map(value, PURPOSE), name, out)
            else:
                raise DataError(f"Flatten transformation does not support {type(value).__qualname__} for record "
                                f"without schemas (for field {name}).")

    # -- with schema -----------------------------------------------------------------------------
    def _flat_schema(self, schema: Schema) -> Schema:
        builder = copy_schema_basics(schema, SchemaBuilder.struct())
        self._add_fields(schema, "", builder, schema.optional, schema.default_value)
        if schema.optional:
            builder.optional()
        return builder.build()

    def _add_fields(self, schema: Schema, prefix: str, builder: SchemaBuilder, optional: bool,
                    parent_default: Struct | None) -> None:
        for field in schema.fields:
            name = self._name(prefix, field.name)
            field_optional = optional or field.schema.optional
            default = field.schema.default_value
            if default is None and parent_default is not None:
                default = parent_default.get(field.name)
            stype = field.schema.type
            if stype in _KEPT_WITH_SCHEMA:
                field_builder = copy_schema_basics(field.schema)
                if field_optional:
                    field_builder.optional()
                if default is not None:
                    field_builder.default_value(default)
                builder.field(name, field_builder.build())
            elif stype is SchemaType.STRUCT:
                self._add_fields(field.schema, name, builder, field_optional, default)
            else:  # pragma: no cover - every schema type is handled above
                raise DataError(f"Flatten transformation does not support {stype.name} for record with schemas "
                                f"(for field {name}).")

    def _flatten_struct(self, struct: Struct | None, out: list[Any]) -> None:
        """Append the leaf values in schema order; a null nested struct gives nulls for its leaves."""
        schema_fields = struct.schema.field_list if struct is not None else ()
        for field in schema_fields:
            assert struct is not None
            if field.schema.type is SchemaType.STRUCT:
                nested = struct.get(field)
                if nested is None:
                    out.extend([None] * _leaf_count(field.schema))
                else:
                    self._flatten_struct(nested, out)
            else:
                out.append(struct.get(field))


def _leaf_count(schema: Schema) -> int:
    return sum(_leaf_count(f.schema) if f.schema.type is SchemaType.STRUCT else 1 for f in schema.fields)


class FlattenKey(Flatten[R]):
    """``Flatten$Key``."""

    operates_on_key = True


class FlattenValue(Flatten[R]):
    """``Flatten$Value``."""
