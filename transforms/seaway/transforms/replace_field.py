"""ReplaceField: drop, keep and rename top-level fields of a Struct or Map.

``exclude`` wins over ``include``; an empty ``include`` keeps everything. ``renames`` is a list
of ``old:new``. The deprecated names ``blacklist``/``whitelist`` still work (the new names win
when both are set), as in Kafka 3.x. Tombstones pass through unchanged.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from seaway.connect.api import ConfigDef, ConfigError, ConfigType, Importance, LambdaValidator, Schema, SchemaBuilder
from seaway.connect.api.transforms import R
from seaway.transforms.fusion import MAP, NULL, FusionContext
from seaway.transforms.util import (
    REPLACE_NULL_WITH_DEFAULT_CONFIG,
    KeyValueTransformation,
    SchemaCache,
    copy_schema_basics,
    define_replace_null_with_default,
    field_values,
    require_map,
    require_struct,
    struct_from_values,
)

__all__ = ["ReplaceField", "ReplaceFieldKey", "ReplaceFieldValue", "parse_rename_mappings"]

log = logging.getLogger(__name__)

EXCLUDE = "exclude"
INCLUDE = "include"
RENAMES = "renames"
_DEPRECATED = ((INCLUDE, "whitelist"), (EXCLUDE, "blacklist"))
PURPOSE = "field replacement"
_MAX_MEMO = 10_000


def parse_rename_mappings(mappings: list[str]) -> dict[str, str]:
    """``["a:b", ...]`` to ``{"a": "b"}``; :class:`ConfigError` on ``renames`` for a malformed pair."""
    result: dict[str, str] = {}
    for mapping in mappings:
        parts = mapping.split(":")
        if len(parts) != 2:
            raise ConfigError.invalid(RENAMES, mappings, f"Invalid rename mapping: {mapping}")
        result[parts[0]] = parts[1]
    return result


def _check_renames(_name: str, value: Any) -> None:
    parse_rename_mappings(value)


CONFIG_DEF = define_replace_null_with_default(
    ConfigDef()
    .define(EXCLUDE, ConfigType.LIST, [], None, Importance.MEDIUM,
            "Fields to exclude. This takes precedence over the fields to include.")
    .define("blacklist", ConfigType.LIST, None, None, Importance.LOW, "Deprecated. Use exclude instead.")
    .define(INCLUDE, ConfigType.LIST, [], None, Importance.MEDIUM,
            "Fields to include. If specified, only these fields will be used.")
    .define("whitelist", ConfigType.LIST, None, None, Importance.LOW, "Deprecated. Use include instead.")
    .define(RENAMES, ConfigType.LIST, [],
            LambdaValidator(_check_renames,
                            "list of colon-delimited pairs, e.g. <code>foo:bar,abc:xyz</code>"),
            Importance.MEDIUM, "Field rename mappings."))


def _translate_deprecated(configs: Mapping[str, Any]) -> dict[str, Any]:
    """Kafka's ``ConfigUtils.translateDeprecatedConfigs`` for whitelist/blacklist."""
    props = dict(configs)
    for new, old in _DEPRECATED:
        if old not in props:
            continue
        if new in props:
            log.warning("Configuration '%s' is deprecated and was ignored: '%s' is set too", old, new)
        else:
            log.warning("Configuration '%s' is deprecated; use '%s' instead", old, new)
            props[new] = props[old]
        del props[old]
    return props


class ReplaceField(KeyValueTransformation[R]):
    """Filter or rename fields (Kafka's ``ReplaceField``)."""

    CONFIG_DEF = CONFIG_DEF

    def configure(self, configs: Mapping[str, Any]) -> None:
        values = CONFIG_DEF.parse(_translate_deprecated(configs))
        self._exclude = frozenset(values[EXCLUDE])
        self._include = frozenset(values[INCLUDE])
        self._renames = parse_rename_mappings(values[RENAMES])
        self._replace_null = bool(values[REPLACE_NULL_WITH_DEFAULT_CONFIG])
        self._cache = SchemaCache()
        self._names: dict[str, str | None] = {}  # schemaless: key -> new name, None = dropped

    def keep(self, field_name: str) -> bool:
        return field_name not in self._exclude and (not self._include or field_name in self._include)

    def renamed(self, field_name: str) -> str:
        return self._renames.get(field_name, field_name)

    def apply(self, record: R) -> R | None:
        value = self.operating_value(record)
        if value is None:
            return record
        schema = self.operating_schema(record)
        if schema is None:
            return self.new_record(record, None, self._replace_schemaless(require_map(value, PURPOSE)))
        struct = require_struct(value, PURPOSE)
        new_schema, positions = self._cache.get_or_build(struct.schema, self._updated_schema)
        old = field_values(struct, self._replace_null)
        return self.new_record(record, new_schema, struct_from_values(new_schema, [old[i] for i in positions]))

    def _replace_schemaless(self, mapping: dict[str, Any]) -> dict[str, Any]:
        names = self._names
        updated: dict[str, Any] = {}
        for key, value in mapping.items():
            try:
                name = names[key]
            except KeyError:
                if len(names) > _MAX_MEMO:  # schemaless keys are unbounded in principle
                    names.clear()
                name = names[key] = self.renamed(key) if self.keep(key) else None
            if name is not None:
                updated[name] = value
        return updated

    def fuse(self, ctx: FusionContext) -> bool:
        """This SMT's step in a fused run (see :mod:`seaway.transforms.fusion`): ``apply`` as code."""
        side = ctx.side(self.operates_on_key)
        if side.kind == NULL:
            return True  # a tombstone passes through
        if side.kind == MAP:
            updated: dict[Any, str] = {}
            for key, atom in side.items.items():  # as _replace_schemaless, dict semantics included
                if self.keep(key):
                    updated[self.renamed(key)] = atom
            ctx.set_map(side, updated)
            return True
        assert side.schema is not None
        new_schema, positions = self._cache.get_or_build(side.schema, self._updated_schema)
        old = ctx.read_struct(side, self._replace_null)
        ctx.set_struct(side, new_schema, [old[i] for i in positions])
        return True

    def _updated_schema(self, schema: Schema) -> tuple[Schema, list[int]]:
        """The derived schema and, per derived field, the index of its source field."""
        builder = copy_schema_basics(schema, SchemaBuilder.struct())
        positions: list[int] = []
        for field in schema.fields:
            if self.keep(field.name):
                builder.field(self.renamed(field.name), field.schema)
                positions.append(field.index)
        return builder.build(), positions


class ReplaceFieldKey(ReplaceField[R]):
    """``ReplaceField$Key``."""

    operates_on_key = True


class ReplaceFieldValue(ReplaceField[R]):
    """``ReplaceField$Value``."""
