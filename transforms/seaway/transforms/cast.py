"""Cast: change the type of top-level fields, or of the whole key/value, to a primitive type.

``spec`` is ``field:type,...`` or a single ``type`` for the whole value; types are int8,
int16, int32, int64, float32, float64, boolean and string (case-insensitive). Inputs may be
any of those or bytes (bytes only to string, as base64). Conversions follow Java: numbers
narrow by truncation and two's-complement wrap-around (``300`` -> int8 ``44``), floats to ints
truncate toward zero and saturate at int32/int64 bounds, booleans are ``0``/``1``, strings are
parsed (``Value (x) was out of range for requested data type`` when they do not fit), numbers to
boolean test ``long value != 0``, and values print as Java's ``toString`` (``1.0E10``,
``true``). Logical inputs (Date, Time, Timestamp) cast from their int/long encoding, to string
from their ISO form; Decimal casts from its numeric value.
"""

from __future__ import annotations

import base64
import datetime
import decimal
import math
import re
import struct
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

from seaway.connect.api import (
    ConfigDef,
    ConfigError,
    ConfigType,
    ConnectSchema,
    DataError,
    Date,
    Importance,
    LambdaValidator,
    Schema,
    SchemaBuilder,
    SchemaType,
    Struct,
    Time,
    Timestamp,
    Values,
)
from seaway.connect.api.data.schema import DECIMAL_LOGICAL_NAME
from seaway.connect.api.transforms import R
from seaway.transforms.fusion import MAP, NULL, FusionContext, schema_hint, type_hint
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

__all__ = ["Cast", "CastKey", "CastValue", "cast_value", "compile_cast", "java_number_string", "parse_field_types"]

SPEC = "spec"
PURPOSE = "cast types"
WHOLE_VALUE = ""  # the spec key for a whole-value cast (Kafka uses null)

_INPUT_TYPES = (SchemaType.INT8, SchemaType.INT16, SchemaType.INT32, SchemaType.INT64, SchemaType.FLOAT32,
                SchemaType.FLOAT64, SchemaType.BOOLEAN, SchemaType.STRING, SchemaType.BYTES)
_OUTPUT_TYPES = _INPUT_TYPES[:-1]
_INPUT_SET = frozenset(_INPUT_TYPES)
_PY_TYPES = {bool: SchemaType.BOOLEAN, int: SchemaType.INT64, float: SchemaType.FLOAT64, str: SchemaType.STRING,
             bytes: SchemaType.BYTES, bytearray: SchemaType.BYTES}
_LOGICAL_NAMES = frozenset({Date.LOGICAL_NAME, Time.LOGICAL_NAME, Timestamp.LOGICAL_NAME, DECIMAL_LOGICAL_NAME})
_INT_BITS = {SchemaType.INT8: 8, SchemaType.INT16: 16, SchemaType.INT32: 32, SchemaType.INT64: 64}
_JAVA_INT = re.compile(r"[+-]?\d+")


def _type_list(types: tuple[SchemaType, ...]) -> str:
    return "[" + ", ".join(t.name for t in types) + "]"


def parse_field_types(mappings: list[str]) -> dict[str, SchemaType]:
    """Kafka's ``parseFieldTypes``: ``{field: type}``, the whole-value cast under ``""``."""
    if not mappings:
        raise ConfigError("Must specify at least one field to cast.", name=SPEC, value=mappings)
    result: dict[str, SchemaType] = {}
    whole = False
    for mapping in mappings:
        parts = mapping.split(":")
        if len(parts) > 2:
            raise ConfigError.invalid(SPEC, mappings, f"Invalid rename mapping: {mapping}")
        type_name = parts[-1].strip()
        try:
            target = SchemaType[type_name.upper()]
        except KeyError:
            raise ConfigError(f"Invalid type found in casting spec: {type_name}", name=SPEC, value=mappings) from None
        if target not in _OUTPUT_TYPES:
            raise ConfigError(f"Cast transformation does not support casting to {target.name}; supported types "
                              f"are {_type_list(_OUTPUT_TYPES)}", name=SPEC, value=mappings)
        if len(parts) == 1:
            whole = True
            result[WHOLE_VALUE] = target
        else:
            result[parts[0].strip()] = target
    if whole and len(mappings) > 1:
        raise ConfigError("Cast transformations that specify a type to cast the entire value to may ony specify "
                          "a single cast in their spec", name=SPEC, value=mappings)
    return result


def _check_spec(_name: str, value: Any) -> None:
    parse_field_types(value)


CONFIG_DEF = define_replace_null_with_default(ConfigDef().define(
    SPEC, ConfigType.LIST, validator=LambdaValidator(
        _check_spec,
        "list of colon-delimited pairs, e.g. <code>foo:bar,abc:xyz</code>"),
    importance=Importance.HIGH,
    documentation="List of fields and the type to cast them to of the form field1:type,field2:type to cast fields "
                  "of Maps or Structs. A single type to cast the entire value. Valid types are int8, int16, int32, "
                  "int64, float32, float64, boolean, and string. Note that binary fields can only be cast to string."))


# -- Java number semantics ------------------------------------------------------------------------
def _wrap(number: int, *, bits: int) -> int:
    mask = (1 << bits) - 1
    number &= mask
    return number - (1 << bits) if number >> (bits - 1) else number


def _float_to_long(number: float, bits: int) -> int:
    """Java's ``(int)``/``(long)`` of a double: NaN is 0, truncation toward zero, saturation."""
    if math.isnan(number):
        return 0
    low, high = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    if math.isinf(number):
        return high if number > 0 else low
    return max(low, min(high, int(number)))


def _to_float32(number: float) -> float:
    try:
        return float(struct.unpack("f", struct.pack("f", number))[0])
    except OverflowError:
        return math.copysign(math.inf, number)


def java_number_string(number: float, float32: bool = False) -> str:
    """Java's ``Double.toString`` / ``Float.toString``: ``1.0``, ``1.0E10``, ``1.0E-4``, ``NaN``, ``Infinity``."""
    if math.isnan(number):
        return "NaN"
    if math.isinf(number):
        return "Infinity" if number > 0 else "-Infinity"
    if number == 0:
        return "-0.0" if math.copysign(1.0, number) < 0 else "0.0"
    text = repr(number)
    if float32:
        for precision in range(1, 10):
            candidate = f"{number:.{precision}g}"
            if _to_float32(float(candidate)) == number:
                text = candidate
                break
    sign, digits, exponent = decimal.Decimal(text).normalize().as_tuple()
    assert isinstance(exponent, int)
    mantissa = "".join(map(str, digits))
    point = len(mantissa) + exponent  # decimal point position relative to the digit string
    prefix = "-" if sign else ""
    if 1e-3 <= abs(number) < 1e7:
        if point <= 0:
            return f"{prefix}0.{'0' * -point}{mantissa}"
        if point >= len(mantissa):
            return f"{prefix}{mantissa}{'0' * (point - len(mantissa))}.0"
        return f"{prefix}{mantissa[:point]}.{mantissa[point:]}"
    return f"{prefix}{mantissa[0]}.{mantissa[1:] or '0'}E{point - 1}"


def _to_int(value: Any, bits: int) -> int:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return _wrap(value, bits=bits)
    if isinstance(value, float):
        # Java: (byte)/(short) narrow through (int); int and long saturate at their own width
        return _wrap(_float_to_long(value, 32 if bits < 32 else bits), bits=bits)
    if isinstance(value, decimal.Decimal):
        return _wrap(int(value), bits=bits) if value.is_finite() else 0
    if isinstance(value, str):
        if not _JAVA_INT.fullmatch(value) or not -(1 << (bits - 1)) <= int(value) < (1 << (bits - 1)):
            raise DataError(f"Value ({value}) was out of range for requested data type")
        return int(value)
    raise DataError(f"Unexpected type in Cast transformation: {type(value).__qualname__}")


def _to_float(value: Any, float32: bool) -> float:
    if isinstance(value, bool):
        number = 1.0 if value else 0.0
    elif isinstance(value, int | float | decimal.Decimal):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value.strip().rstrip("fFdD"))
        except ValueError:
            raise DataError(f"Value ({value}) was out of range for requested data type") from None
    else:
        raise DataError(f"Unexpected type in Cast transformation: {type(value).__qualname__}")
    return _to_float32(number) if float32 else number


def _to_boolean(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value != 0
    if isinstance(value, float | decimal.Decimal):
        return _to_int(value, 64) != 0  # Java: longValue() != 0, so 0.5 is false
    if isinstance(value, str):
        return value.lower() == "true"
    raise DataError(f"Unexpected type in Cast transformation: {type(value).__qualname__}")


def _to_string(value: Any, schema: Schema | None) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return java_number_string(value, schema is not None and schema.type is SchemaType.FLOAT32)
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, datetime.date | datetime.time):
        return Values.convert_to_string(None, value) or ""
    return str(value)


def _encode_logical(schema: Schema, value: Any) -> Any:
    if schema.name == Date.LOGICAL_NAME:
        return Date.from_logical(schema, value)
    if schema.name == Time.LOGICAL_NAME:
        return Time.from_logical(schema, value)
    if schema.name == Timestamp.LOGICAL_NAME:
        return Timestamp.from_logical(schema, value)
    return value


def cast_value(schema: Schema | None, value: Any, target: SchemaType) -> Any:
    """Kafka's ``castValueToType``: ``value`` (described by ``schema`` if given) as ``target``."""
    if value is None:
        return None
    inferred = schema.type if schema is not None else (_PY_TYPES.get(type(value)) or ConnectSchema.schema_type(value))
    if inferred is None:
        raise DataError(f"Cast transformation was passed a value of type {type(value).__qualname__} which is not "
                        "supported by Connect's data API")
    if inferred not in _INPUT_SET:
        raise DataError(f"Cast transformation does not support casting from {inferred.name}; supported types are "
                        f"{_type_list(_INPUT_TYPES)}")
    if schema is not None and schema.name is not None and target is not SchemaType.STRING:
        value = _encode_logical(schema, value)
    bits = _INT_BITS.get(target)
    if bits is not None:
        return _to_int(value, bits)
    if target in (SchemaType.FLOAT32, SchemaType.FLOAT64):
        return _to_float(value, target is SchemaType.FLOAT32)
    if target is SchemaType.BOOLEAN:
        return _to_boolean(value)
    return _to_string(value, schema)


Caster = Callable[[Any], Any]


def compile_cast(schema: Schema, target: SchemaType) -> Caster:
    """A function casting non-null values of ``schema`` to ``target``; the common cases skip dispatch."""
    source = schema.type
    if schema.name is None and source in _INPUT_SET:
        source_bits, target_bits = _INT_BITS.get(source), _INT_BITS.get(target)
        if source_bits is not None:
            if target is SchemaType.STRING:
                return str
            if target_bits is not None:
                return _identity if target_bits >= source_bits else partial(_wrap, bits=target_bits)
            if target is SchemaType.FLOAT64:
                return float
        if source is target and target is not SchemaType.FLOAT32:
            return _identity
    return partial(cast_value, schema, target=target)


def _identity(value: Any) -> Any:
    return value


# -- fusion (see seaway.transforms.fusion) --------------------------------------------------------
def _fused_call(ctx: FusionContext, caster: Caster, atom: str, target: Schema) -> str:
    """``None if atom is None else caster(atom)`` as an atom, with the common casters inlined."""
    if atom == "None":
        return "None"
    hint = schema_hint(target)
    if caster is _identity:
        return atom
    call = "str({})" if caster is str else f"{ctx.const(caster)}({{}})"
    if ctx.is_nonnull(atom):
        return ctx.let(call.format(atom), hint, nonnull=True)
    return ctx.let(f"None if {atom} is None else {call.format(atom)}", hint)


# (value type, target) -> the fast expression, for the combinations where it equals cast_value's result
# (an int -> int cast is not here: schemaless ints are unbounded, so even int64 wraps around)
_SCHEMALESS_FAST = {(int, SchemaType.STRING): "str({})", (int, SchemaType.FLOAT64): "float({})",
                    (float, SchemaType.FLOAT64): "{}", (str, SchemaType.STRING): "{}",
                    (bool, SchemaType.BOOLEAN): "{}"}


def _fused_cast_schemaless(ctx: FusionContext, atom: str, target: SchemaType) -> str:
    """``cast_value(None, atom, target)`` as an atom: inline for the value's usual type, else the function."""
    if atom == "None":
        return "None"
    general = f"{ctx.const(partial(cast_value, None, target=target))}({atom})"
    hint = ctx.hint(atom)
    fast = _SCHEMALESS_FAST.get((hint, target)) if hint is not None else None
    if fast is None:
        return ctx.let(general, type_hint(target))
    return ctx.let(f"{fast.format(atom)} if type({atom}) is {ctx.const(hint)} else {general}", type_hint(target))


def _builder_for(target: SchemaType) -> SchemaBuilder:
    return SchemaBuilder(target)


class Cast(KeyValueTransformation[R]):
    """Cast fields or the whole key/value to a primitive type (Kafka's ``Cast``)."""

    CONFIG_DEF = CONFIG_DEF

    def configure(self, configs: Mapping[str, Any]) -> None:
        values = CONFIG_DEF.parse(configs)
        self._casts = parse_field_types(values[SPEC])
        self._whole: SchemaType | None = self._casts.get(WHOLE_VALUE)
        self._replace_null = bool(values[REPLACE_NULL_WITH_DEFAULT_CONFIG])
        self._cache = SchemaCache()

    def apply(self, record: R) -> R | None:
        value = self.operating_value(record)
        if value is None:
            return record
        schema = self.operating_schema(record)
        if schema is None:
            if self._whole is not None:
                return self.new_record(record, None, cast_value(None, value, self._whole))
            mapping = require_map(value, PURPOSE)
            updated = dict(mapping)
            for name, target in self._casts.items():
                updated[name] = cast_value(None, mapping.get(name), target)
            return self.new_record(record, None, updated)
        updated_schema, casts = self._cache.get_or_build(schema, self._updated_schema)
        if self._whole is not None:
            return self.new_record(record, updated_schema, cast_value(schema, value, self._whole))
        struct = require_struct(value, PURPOSE)
        return self.new_record(record, updated_schema, self._cast_struct(struct, updated_schema, casts))

    def _cast_struct(self, struct: Struct, updated_schema: Schema, casts: list[tuple[int, Caster]]) -> Struct:
        values = field_values(struct, self._replace_null)
        for i, caster in casts:
            value = values[i]
            if value is not None:
                values[i] = caster(value)  # casts produce values of the target type, in range
        return struct_from_values(updated_schema, values)

    def fuse(self, ctx: FusionContext) -> bool:
        """This SMT's step in a fused run (see :mod:`seaway.transforms.fusion`): ``apply`` as code."""
        if self._whole is not None:
            return False  # whole-value casts run stage by stage
        side = ctx.side(self.operates_on_key)
        if side.kind == NULL:
            return True  # a tombstone passes through
        if side.kind == MAP:
            items = dict(side.items)
            for name, target in self._casts.items():
                atom = side.items.get(name, "None")
                items[name] = _fused_cast_schemaless(ctx, atom, target)
            ctx.set_map(side, items)
            return True
        assert side.schema is not None
        updated_schema, casts = self._cache.get_or_build(side.schema, self._updated_schema)
        atoms = ctx.read_struct(side, self._replace_null)
        for i, caster in casts:
            atoms[i] = _fused_call(ctx, caster, atoms[i], updated_schema.field_list[i].schema)
        ctx.set_struct(side, updated_schema, atoms)
        return True

    def _updated_schema(self, schema: Schema) -> tuple[Schema, list[tuple[int, Caster]]]:
        """The cast schema and the (index, caster) of each field to cast."""
        casts: list[tuple[int, Caster]] = []
        if self._whole is not None:
            # A logical type's name would contradict the new type: keep basics only for plain schemas.
            target = self._whole
            builder = (_builder_for(target) if schema.name in _LOGICAL_NAMES
                       else copy_schema_basics(schema, _builder_for(target)))
        else:
            builder = copy_schema_basics(schema, SchemaBuilder.struct())
            for field in schema.fields:
                target_type = self._casts.get(field.name)
                if target_type is None:
                    builder.field(field.name, field.schema)
                    continue
                casts.append((field.index, compile_cast(field.schema, target_type)))
                field_builder = _builder_for(target_type)
                if field.schema.optional:
                    field_builder.optional()
                if field.schema.default_value is not None:
                    field_builder.default_value(cast_value(field.schema, field.schema.default_value, target_type))
                builder.field(field.name, field_builder.build())
        if schema.optional:
            builder.optional()
        if schema.default_value is not None:
            if self._whole is not None:
                builder.default_value(cast_value(schema, schema.default_value, self._whole))
            else:
                fields_only = builder.build()  # to cast the default struct against
                builder.default_value(self._cast_struct(schema.default_value, fields_only, casts))
        return builder.build(), casts


class CastKey(Cast[R]):
    """``Cast$Key``."""

    operates_on_key = True


class CastValue(Cast[R]):
    """``Cast$Value``."""
