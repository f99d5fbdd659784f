"""MaskField: replace field values with an "empty" value of their type, or with ``replacement``.

Without ``replacement`` a masked value becomes ``False``, ``0``, ``0.0``, ``Decimal(0)``,
``""``, the epoch (for Date/Time/Timestamp), ``[]`` or ``{}``. With ``replacement`` only
numeric and string fields can be masked: the replacement is parsed as the field's type.
Structs and bytes cannot be masked (:class:`DataError`, as in Kafka). Schema'd values keep
their schema. Schemaless, a listed field missing from the map is added as null (as Kafka).
"""

from __future__ import annotations

import datetime
import decimal
import math
from collections.abc import Callable, Mapping
from typing import Any

from seaway.connect.api import (
    ConfigDef,
    ConfigType,
    DataError,
    Importance,
    NonEmptyString,
    Schema,
    SchemaType,
    Struct,
)
from seaway.connect.api.transforms import R
from seaway.transforms.fusion import MAP, STRUCT, FusionContext
from seaway.transforms.util import (
    REPLACE_NULL_WITH_DEFAULT_CONFIG,
    KeyValueTransformation,
    SchemaCache,
    define_replace_null_with_default,
    field_values,
    non_empty_list,
    require_map,
    require_struct,
    struct_from_values,
)

__all__ = ["MaskField", "MaskFieldKey", "MaskFieldValue"]

FIELDS = "fields"
REPLACEMENT = "replacement"
PURPOSE = "mask fields"

CONFIG_DEF = define_replace_null_with_default(
    ConfigDef()
    .define(FIELDS, ConfigType.LIST, validator=non_empty_list(), importance=Importance.HIGH,
            documentation="Names of fields to mask.")
    .define(REPLACEMENT, ConfigType.STRING, None, NonEmptyString(), Importance.LOW,
            "Custom value replacement, that will be applied to all 'fields' values (numeric or non-empty "
            "string values only)."))

_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
_INT_BITS = {SchemaType.INT8: 8, SchemaType.INT16: 16, SchemaType.INT32: 32, SchemaType.INT64: 64}
# one value of each immutable type whose masked value a fused run precomputes
_SAMPLES: dict[type | None, Any] = {str: "x", int: 1, float: 1.0, bool: True}


def _empty(value: Any) -> Any:
    """Kafka's PRIMITIVE_VALUE_MAPPING, by the value's Python type."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return 0
    if isinstance(value, float):
        return 0.0
    if isinstance(value, decimal.Decimal):
        return decimal.Decimal(0)
    if isinstance(value, str):
        return ""
    if isinstance(value, datetime.datetime):
        return _EPOCH
    if isinstance(value, datetime.date):
        return datetime.date(1970, 1, 1)
    if isinstance(value, datetime.time):
        return datetime.time(0)
    if isinstance(value, list | tuple):
        return []
    if isinstance(value, dict):
        return {}
    raise DataError(f"Cannot mask value of type: {type(value).__qualname__}")


def _parse_int(text: str, bits: int) -> int:
    number = int(text.strip())
    if not -(1 << (bits - 1)) <= number < (1 << (bits - 1)):
        raise ValueError(f"Value out of range. Value:\"{text}\"")
    return number


def _parse_float(text: str) -> float:
    number = float(text.strip())
    if math.isnan(number):
        raise ValueError(text)
    return number


def _replacement_parser(value: Any, schema: Schema | None) -> Callable[[str], Any] | None:
    """Kafka's REPLACEMENT_MAPPING_FUNC; the schema (if any) gives the integer width."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        bits = _INT_BITS.get(schema.type, 64) if schema is not None else 64
        return lambda text: _parse_int(text, bits)
    if isinstance(value, float):
        return _parse_float
    if isinstance(value, str):
        return str
    if isinstance(value, decimal.Decimal):
        return decimal.Decimal
    return None


class MaskField(KeyValueTransformation[R]):
    """Mask fields with a type-appropriate empty value or a replacement (Kafka's ``MaskField``)."""

    CONFIG_DEF = CONFIG_DEF

    def configure(self, configs: Mapping[str, Any]) -> None:
        values = CONFIG_DEF.parse(configs)
        self._fields: frozenset[str] = frozenset(values[FIELDS])
        self._field_order: list[str] = list(dict.fromkeys(values[FIELDS]))
        self._replacement: str | None = values[REPLACEMENT]
        self._replace_null = bool(values[REPLACE_NULL_WITH_DEFAULT_CONFIG])
        self._cache = SchemaCache()

    def masked(self, value: Any, schema: Schema | None = None) -> Any:
        if value is None:
            return None
        if self._replacement is None:
            return _empty(value)
        parser = _replacement_parser(value, schema)
        if parser is None:
            raise DataError(f"Cannot mask value of type {type(value).__qualname__} with custom replacement.")
        try:
            return parser(self._replacement)
        except (ValueError, ArithmeticError) as e:
            raise DataError(f"Unable to convert {self._replacement} (str) to number") from e

    def apply(self, record: R) -> R | None:
        value = self.operating_value(record)
        if self.operating_schema(record) is None:
            mapping = require_map(value, PURPOSE)
            updated = dict(mapping)
            for name in self._field_order:
                updated[name] = self.masked(mapping.get(name))
            return self.new_record(record, None, updated)
        struct = require_struct(value, PURPOSE)
        plan: list[tuple[int, Schema]] = self._cache.get_or_build(struct.schema, self._plan)
        values = field_values(struct, self._replace_null)
        for i, field_schema in plan:
            values[i] = self.masked(values[i], field_schema)  # of the field's own type, hence valid
        masked_struct: Struct = struct_from_values(struct.schema, values)
        return self.new_record(record, struct.schema, masked_struct)

    def fuse(self, ctx: FusionContext) -> bool:
        """This SMT's step in a fused run (see :mod:`seaway.transforms.fusion`): ``apply`` as code."""
        side = ctx.side(self.operates_on_key)
        if side.kind == MAP:
            items = dict(side.items)
            for name in self._field_order:
                items[name] = self._fused_mask(ctx, side.items.get(name, "None"), None)
            ctx.set_map(side, items)
            return True
        if side.kind != STRUCT:
            return False  # a null value: the stage raises its "Only Struct/Map objects" error
        assert side.schema is not None
        atoms = ctx.read_struct(side, self._replace_null)
        for i, field_schema in self._cache.get_or_build(side.schema, self._plan):
            atoms[i] = self._fused_mask(ctx, atoms[i], field_schema)
        ctx.set_struct(side, side.schema, atoms)
        return True

    def _fused_mask(self, ctx: FusionContext, atom: str, schema: Schema | None) -> str:
        """``masked(atom, schema)`` as an atom. The masked value depends only on the value's type
        (and the schema), so the usual type gets a precomputed constant; others call ``masked``."""
        if atom == "None":
            return "None"
        general = f"{ctx.const(self.masked)}({atom}, {ctx.const(schema)})"
        hint = ctx.hint(atom)
        if hint not in _SAMPLES:
            return ctx.let(general)
        try:
            fast = self.masked(_SAMPLES[hint], schema)
        except DataError:  # e.g. a replacement that does not parse: the general call raises it
            return ctx.let(general)
        return ctx.let(f"{ctx.const(fast)} if type({atom}) is {ctx.const(hint)} else {general}", hint)

    def _plan(self, schema: Schema) -> list[tuple[int, Schema]]:
        """(index, schema) of the fields of ``schema`` to mask."""
        return [(f.index, f.schema) for f in schema.fields if f.name in self._fields]


class MaskFieldKey(MaskField[R]):
    """``MaskField$Key``."""

    operates_on_key = True


class MaskFieldValue(MaskField[R]):
    """``MaskField$Value``."""
