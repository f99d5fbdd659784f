"""Helpers shared by the SMTs: Kafka's ``Requirements``, ``SchemaUtil``, schema cache and Key/Value plumbing.

Kafka's transforms are written against three small utilities, reproduced here so ports stay
line-for-line recognisable:

* ``Requirements`` (``require_map``, ``require_struct``, ...) raise :class:`DataError` with
  Kafka's messages (``Only Map objects supported in absence of schema for [<purpose>], found:
  <type>``); the type named is the Python one (``str``, ``NoneType`` shown as ``null``).
* ``SchemaUtil.copySchemaBasics`` copies name, version, doc and parameters (not optionality or
  default, exactly as Kafka).
* :class:`SchemaCache` is Kafka's ``SynchronizedCache(LRUCache(16))``: each SMT maps an input
  schema to the schema it derives, so schemas are built once per distinct input schema, never
  per record.

:class:`KeyValueTransformation` is the ``$Key``/``$Value`` split: a family's base class works
on "the operating side" and the two subclasses only choose which side that is.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from seaway.connect.api import (
    ConfigDef,
    ConfigError,
    ConfigType,
    DataError,
    Importance,
    LambdaValidator,
    Predicate,
    Schema,
    SchemaBuilder,
    SchemaType,
    SinkRecord,
    Struct,
    Transformation,
    Validator,
)
from seaway.connect.api.transforms import R

__all__ = [
    "REPLACE_NULL_WITH_DEFAULT_CONFIG",
    "KeyValueTransformation",
    "SchemaCache",
    "class_name",
    "copy_schema_basics",
    "define_replace_null_with_default",
    "field_values",
    "java_regex",
    "non_empty_list",
    "regex_validator",
    "require_map",
    "require_map_or_null",
    "require_schema",
    "require_sink_record",
    "require_struct",
    "require_struct_or_null",
    "should_apply",
    "struct_from_values",
]

REPLACE_NULL_WITH_DEFAULT_CONFIG = "replace.null.with.default"


# -- Requirements ---------------------------------------------------------------------------------
def class_name(value: object) -> str:
    """Kafka's ``nullSafeClassName``: ``null`` or the value's type name."""
    return "null" if value is None else type(value).__qualname__


def require_schema(schema: Schema | None, purpose: str) -> Schema:
    if schema is None:
        raise DataError(f"Schema required for [{purpose}]")
    return schema


def require_map(value: object, purpose: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise DataError(f"Only Map objects supported in absence of schema for [{purpose}], "
                        f"found: {class_name(value)}")
    return value


def require_map_or_null(value: object, purpose: str) -> dict[str, Any] | None:
    return None if value is None else require_map(value, purpose)


def require_struct(value: object, purpose: str) -> Struct:
    if not isinstance(value, Struct):
        raise DataError(f"Only Struct objects supported for [{purpose}], found: {class_name(value)}")
    return value


def require_struct_or_null(value: object, purpose: str) -> Struct | None:
    return None if value is None else require_struct(value, purpose)


def require_sink_record(record: object, purpose: str) -> SinkRecord:
    if not isinstance(record, SinkRecord):
        raise DataError(f"Only SinkRecord supported for [{purpose}], found: {class_name(record)}")
    return record


# -- SchemaUtil -----------------------------------------------------------------------------------
def copy_schema_basics(source: Schema, builder: SchemaBuilder | None = None) -> SchemaBuilder:
    """Kafka's ``SchemaUtil.copySchemaBasics``: name, version, doc, parameters onto ``builder``.

    Without ``builder``, a builder of the source's type (with its element/key/value schemas)
    is made. Optionality and the default are *not* copied; callers decide, as in Kafka.
    """
    if builder is None:
        if source.type is SchemaType.ARRAY:
            assert source.value_schema is not None
            builder = SchemaBuilder.array(source.value_schema)
        elif source.type is SchemaType.MAP:
            assert source.key_schema is not None and source.value_schema is not None
            builder = SchemaBuilder.map(source.key_schema, source.value_schema)
        else:
            builder = SchemaBuilder(source.type)
    if source.name is not None:
        builder.name(source.name)
    if source.version is not None:
        builder.version(source.version)
    if source.doc is not None:
        builder.doc(source.doc)
    if source.parameters is not None:
        builder.parameters(source.parameters)
    return builder


class SchemaCache:
    """A small LRU map from an input schema to what an SMT derives from it (Kafka's ``LRUCache(16)``).

    One instance per SMT instance, used from one task thread (the runtime's contract), so no
    lock. Keys are the schemas themselves: their hash is precomputed and a dict compares keys
    by identity before equality, so the usual hit (the converter handing out the same schema
    object again) costs one hash call and no structural comparison.
    """

    __slots__ = ("_last", "_last_derived", "_lru", "_size")

    def __init__(self, size: int = 16) -> None:
        self._size = size
        self._lru: OrderedDict[Schema, Any] = OrderedDict()
        # the most recent hit, checked by identity first: a stream usually repeats one schema
        # object, and then the LRU order needs no update
        self._last: Schema | None = None
        self._last_derived: Any = None

    def get(self, schema: Schema) -> Any:
        if schema is self._last:
            return self._last_derived
        derived = self._lru.get(schema)
        if derived is not None:
            self._lru.move_to_end(schema)
            self._last, self._last_derived = schema, derived
        return derived

    def put(self, schema: Schema, derived: Any) -> None:
        self._lru[schema] = derived
        self._lru.move_to_end(schema)
        self._last, self._last_derived = schema, derived
        while len(self._lru) > self._size:
            evicted, _ = self._lru.popitem(last=False)
            if evicted is self._last:
                self._last = self._last_derived = None

    def get_or_build(self, schema: Schema, build: Callable[[Schema], Any]) -> Any:
        """The cached derivation of ``schema``, building (and caching) it on a miss."""
        if schema is self._last:
            return self._last_derived
        derived = self.get(schema)
        if derived is None:
            derived = build(schema)
            self.put(schema, derived)
        return derived

    def __len__(self) -> int:
        return len(self._lru)


# -- Struct access --------------------------------------------------------------------------------
def field_values(struct: Struct, replace_null_with_default: bool = True) -> list[Any]:
    """The struct's values in field order; nulls become field defaults if asked (Kafka's getFieldValue)."""
    values = struct.values()  # one list copy instead of a get() per field
    if not replace_null_with_default or None not in values:
        return values
    fields = struct.schema.field_list
    return [fields[i].schema.default_value if v is None else v for i, v in enumerate(values)]


def struct_from_values(schema: Schema, values: list[Any]) -> Struct:
    """A Struct over ``values`` (in ``schema``'s field order) that are *already valid* for their fields.

    SMTs copy most field values unchanged from a validated Struct into a derived schema whose
    field schemas are the same; validating them again per record (``put``) would dominate the
    cost of a transform chain. New or changed values must still go through ``Struct.put``.
    """
    return Struct.from_valid_values(schema, values)


# -- config helpers -------------------------------------------------------------------------------
def define_replace_null_with_default(config_def: ConfigDef) -> ConfigDef:
    return config_def.define(
        REPLACE_NULL_WITH_DEFAULT_CONFIG, ConfigType.BOOLEAN, True, None, Importance.MEDIUM,
        "Whether to replace fields that have a default value and that are null to the default value. "
        "When set to true, the default value is used, otherwise null is used.")


def non_empty_list() -> Validator:
    """Kafka's ``NonEmptyListValidator``."""
    def check(name: str, value: Any) -> None:
        if not value:
            raise ConfigError.invalid(name, value, "Empty list")
    return LambdaValidator(check, "non-empty list")


def java_regex(regex: str) -> str:
    """A Java regex in Python's syntax: ``(?<name>...)`` becomes ``(?P<name>...)`` (lookbehinds untouched).

    The rest of the common syntax (classes, quantifiers incl. possessive, anchors, flags) is shared.
    """
    return _JAVA_NAMED_GROUP.sub(r"(?P<\1>", regex)


_JAVA_NAMED_GROUP = re.compile(r"\(\?<([A-Za-z][A-Za-z0-9]*)>")


def regex_validator() -> Validator:
    """Kafka's ``RegexValidator``: the value must compile (Python ``re`` syntax)."""
    def check(name: str, value: Any) -> None:
        if value is None:
            return
        try:
            re.compile(java_regex(value))
        except re.error as e:
            raise ConfigError.invalid(name, value, f"Invalid regex: {e}") from None
    return LambdaValidator(check, "valid regex")


def parse_config(config_def: ConfigDef, configs: Mapping[str, Any]) -> dict[str, Any]:
    """Typed values, or :class:`ConfigError` naming the first bad key (Kafka's ``SimpleConfig``)."""
    return config_def.parse(configs)


def should_apply(predicate: Predicate[R] | None, negate: bool, record: R) -> bool:
    """The runtime's rule for a conditional SMT: apply when ``predicate.test(record) != negate``."""
    return predicate is None or predicate.test(record) != negate


# -- $Key / $Value --------------------------------------------------------------------------------
class KeyValueTransformation(Transformation[R]):
    """Base of an SMT family with ``$Key`` and ``$Value`` variants: subclasses set ``operates_on_key``."""

    operates_on_key: ClassVar[bool] = False
    CONFIG_DEF: ClassVar[ConfigDef]

    def config(self) -> ConfigDef:
        return self.CONFIG_DEF

    def operating_schema(self, record: R) -> Schema | None:
        return record.key_schema if self.operates_on_key else record.value_schema

    def operating_value(self, record: R) -> Any:
        return record.key if self.operates_on_key else record.value

    def new_record(self, record: R, schema: Schema | None, value: Any) -> R:
        if self.operates_on_key:
            return record.with_key(schema, value)
        return record.with_value(schema, value)

    def fusion_sides(self) -> tuple[str, ...]:
        """The record side whose shape a fused run (``seaway.transforms.fusion``) compiles for."""
        return ("key",) if self.operates_on_key else ("value",)
