"""TimestampConverter: convert a timestamp between string, unix, Date, Time and Timestamp.

``field`` names the field to convert ("" = the whole key/value); ``target.type`` is one of
``string`` (rendered with ``format``, a Java SimpleDateFormat pattern, in UTC), ``unix``
(an int64 in ``unix.precision``: seconds, milliseconds (default), microseconds, nanoseconds),
``Date`` (day, time-of-day dropped), ``Time`` (time of day, date dropped) or ``Timestamp``.

The input kind comes from the schema (Timestamp/Date/Time logical types, STRING = formatted,
INT64 = unix) or, schemaless, from the Python type (``datetime`` = Timestamp, ``date`` = Date,
``time`` = Time, ``int`` = unix, ``str`` = formatted). Everything goes through epoch
milliseconds, so sub-millisecond precision is lost, as in Kafka.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any

from seaway.connect.api import (
    ConfigDef,
    ConfigError,
    ConfigType,
    ConnectError,
    DataError,
    Date,
    Importance,
    Schema,
    SchemaBuilder,
    Time,
    Timestamp,
    ValidString,
)
from seaway.connect.api.data.schema import SchemaType
from seaway.connect.api.transforms import R
from seaway.transforms._datefmt import JavaDateFormat, PatternError
from seaway.transforms.util import (
    REPLACE_NULL_WITH_DEFAULT_CONFIG,
    KeyValueTransformation,
    SchemaCache,
    copy_schema_basics,
    define_replace_null_with_default,
    field_values,
    require_map,
    require_struct_or_null,
    struct_from_values,
)

__all__ = ["TimestampConverter", "TimestampConverterKey", "TimestampConverterValue"]

FIELD = "field"
TARGET_TYPE = "target.type"
FORMAT = "format"
UNIX_PRECISION = "unix.precision"
PURPOSE = "converting timestamp formats"
TYPE_STRING, TYPE_UNIX, TYPE_DATE, TYPE_TIME, TYPE_TIMESTAMP = "string", "unix", "Date", "Time", "Timestamp"
_MS_PER_DAY = 86_400_000
_PRECISION_FACTOR = {"seconds": (1000, 1), "milliseconds": (1, 1), "microseconds": (1, 1000),
                     "nanoseconds": (1, 1_000_000)}  # (multiply, divide) to go from the unit to ms

OPTIONAL_DATE_SCHEMA = Date.builder().optional().build()
OPTIONAL_TIMESTAMP_SCHEMA = Timestamp.builder().optional().build()
OPTIONAL_TIME_SCHEMA = Time.builder().optional().build()
_TYPE_SCHEMAS = {TYPE_STRING: (Schema.STRING_SCHEMA, Schema.OPTIONAL_STRING_SCHEMA),
                 TYPE_UNIX: (Schema.INT64_SCHEMA, Schema.OPTIONAL_INT64_SCHEMA),
                 TYPE_DATE: (Date.SCHEMA, OPTIONAL_DATE_SCHEMA),
                 TYPE_TIME: (Time.SCHEMA, OPTIONAL_TIME_SCHEMA),
                 TYPE_TIMESTAMP: (Timestamp.SCHEMA, OPTIONAL_TIMESTAMP_SCHEMA)}

CONFIG_DEF = define_replace_null_with_default(
    ConfigDef()
    .define(FIELD, ConfigType.STRING, "", None, Importance.HIGH,
            "The field containing the timestamp, or empty if the entire value is a timestamp")
    .define(TARGET_TYPE, ConfigType.STRING, validator=ValidString.in_(*_TYPE_SCHEMAS), importance=Importance.HIGH,
            documentation="The desired timestamp representation: string, unix, Date, Time, or Timestamp")
    .define(FORMAT, ConfigType.STRING, "", None, Importance.MEDIUM,
            "A SimpleDateFormat-compatible format for the timestamp. Used to generate the output when type=string "
            "or used to parse the input if the input is a string.")
    .define(UNIX_PRECISION, ConfigType.STRING, "milliseconds",
            ValidString.in_("nanoseconds", "microseconds", "milliseconds", "seconds"), Importance.LOW,
            "The desired Unix precision for the timestamp: seconds, milliseconds, microseconds, or nanoseconds. "
            "Used to generate the output when type=unix or used to parse the input if the input is a Long. Note: "
            "This SMT will cause precision loss during conversions from, and to, values with sub-millisecond "
            "components."))


def _trunc_div(a: int, b: int) -> int:
    """Java's long division (toward zero), as ``TimeUnit`` conversions do."""
    q = abs(a) // b
    return q if a >= 0 else -q


def _kind_from_schema(schema: Schema) -> str:
    if schema.name == Timestamp.LOGICAL_NAME:
        return TYPE_TIMESTAMP
    if schema.name == Date.LOGICAL_NAME:
        return TYPE_DATE
    if schema.name == Time.LOGICAL_NAME:
        return TYPE_TIME
    if schema.type is SchemaType.STRING:
        return TYPE_STRING
    if schema.type is SchemaType.INT64:
        return TYPE_UNIX
    raise ConnectError(f"Schema {schema!r} does not correspond to a known timestamp type format")


def _infer_kind(value: Any) -> str:
    if isinstance(value, datetime.datetime):
        return TYPE_TIMESTAMP
    if isinstance(value, datetime.date):
        return TYPE_DATE
    if isinstance(value, datetime.time):
        return TYPE_TIME
    if isinstance(value, int) and not isinstance(value, bool):
        return TYPE_UNIX
    if isinstance(value, str):
        return TYPE_STRING
    raise DataError(f"TimestampConverter does not support {type(value).__qualname__} objects as timestamps")


class TimestampConverter(KeyValueTransformation[R]):
    """Convert timestamps between formats (Kafka's ``TimestampConverter``)."""

    CONFIG_DEF = CONFIG_DEF

    def configure(self, configs: Mapping[str, Any]) -> None:
        values = CONFIG_DEF.parse(configs)
        self._field: str = values[FIELD]
        self._target: str = values[TARGET_TYPE]
        pattern: str = values[FORMAT]
        self._precision: str = values[UNIX_PRECISION]
        self._replace_null = bool(values[REPLACE_NULL_WITH_DEFAULT_CONFIG])
        if self._target == TYPE_STRING and not pattern.strip():
            raise ConfigError("TimestampConverter requires format option to be specified when using string "
                              "timestamps", name=FORMAT, value=pattern)
        self._format: JavaDateFormat | None = None
        if pattern.strip():
            try:
                self._format = JavaDateFormat(pattern)
            except PatternError as e:
                raise ConfigError(f"TimestampConverter requires a SimpleDateFormat-compatible pattern for string "
                                  f"timestamps: {pattern} ({e})", name=FORMAT, value=pattern) from None
        self._cache = SchemaCache()

    # -- conversions through epoch milliseconds --------------------------------------------------
    def _to_millis(self, value: Any, kind: str) -> int:
        if kind == TYPE_STRING:
            if not isinstance(value, str):
                raise DataError(f"Expected string timestamp to be a String, but found {type(value).__qualname__}")
            try:
                assert self._format is not None
                return self._format.parse(value)
            except (AssertionError, ValueError) as e:
                pattern = self._format.pattern if self._format is not None else ""
                raise DataError(f"Could not parse timestamp: value ({value}) does not match pattern ({pattern})") \
                    from e
        if kind == TYPE_UNIX:
            if not isinstance(value, int) or isinstance(value, bool):
                raise DataError(f"Expected Unix timestamp to be a Long, but found {type(value).__qualname__}")
            multiply, divide = _PRECISION_FACTOR[self._precision]
            return _trunc_div(value * multiply, divide)
        if kind == TYPE_TIMESTAMP:
            if not isinstance(value, datetime.datetime):
                raise DataError(f"Expected Timestamp to be a java.util.Date, but found {type(value).__qualname__}")
            return Timestamp.from_logical(Timestamp.SCHEMA, value)
        if kind == TYPE_DATE:
            if not isinstance(value, datetime.date):
                raise DataError(f"Expected Date to be a java.util.Date, but found {type(value).__qualname__}")
            if isinstance(value, datetime.datetime):
                return Timestamp.from_logical(Timestamp.SCHEMA, value)
            return Date.from_logical(Date.SCHEMA, value) * _MS_PER_DAY
        if not isinstance(value, datetime.time):
            raise DataError(f"Expected Time to be a java.util.Date, but found {type(value).__qualname__}")
        return Time.from_logical(Time.SCHEMA, value)

    def _from_millis(self, millis: int) -> Any:
        target = self._target
        try:
            if target == TYPE_STRING:
                assert self._format is not None
                return self._format.format(millis)
            if target == TYPE_UNIX:
                multiply, divide = _PRECISION_FACTOR[self._precision]
                return _trunc_div(millis * divide, multiply)
            if target == TYPE_DATE:
                return Date.to_logical(Date.SCHEMA, millis // _MS_PER_DAY)
            if target == TYPE_TIME:
                return Time.to_logical(Time.SCHEMA, millis % _MS_PER_DAY)
            return Timestamp.to_logical(Timestamp.SCHEMA, millis)
        except ValueError as e:
            raise DataError(str(e)) from None

    def convert(self, value: Any, kind: str | None = None) -> Any:
        """``value`` (of ``kind``, inferred from its type when ``None``) as the target type."""
        if value is None:
            return None
        return self._from_millis(self._to_millis(value, kind or _infer_kind(value)))

    # -- records ---------------------------------------------------------------------------------
    def apply(self, record: R) -> R | None:
        schema = self.operating_schema(record)
        value = self.operating_value(record)
        if schema is None:
            if value is None or not self._field:
                return self.new_record(record, None, self.convert(value))
            updated_map = dict(require_map(value, PURPOSE))
            updated_map[self._field] = self.convert(updated_map.get(self._field))
            return self.new_record(record, None, updated_map)
        if not self._field:
            updated = _TYPE_SCHEMAS[self._target][1 if schema.optional else 0]
            return self.new_record(record, updated, self.convert(value, _kind_from_schema(schema)))
        struct = require_struct_or_null(value, PURPOSE)
        updated_schema: Schema = self._cache.get_or_build(schema, self._updated_schema)
        return self.new_record(record, updated_schema, self._convert_struct(struct, updated_schema))

    def _convert_struct(self, struct: Any, updated_schema: Schema) -> Any:
        if struct is None:
            return None
        values = field_values(struct, self._replace_null)
        field = struct.schema.field(self._field)
        if field is None:
            return struct_from_values(updated_schema, values)
        converted = self.convert(values[field.index], _kind_from_schema(field.schema))
        values[field.index] = None
        result = struct_from_values(updated_schema, values)
        result.put(self._field, converted)
        return result

    def _updated_schema(self, schema: Schema) -> Schema:
        builder = copy_schema_basics(schema, SchemaBuilder.struct())
        for field in schema.fields:
            if field.name == self._field:
                builder.field(field.name, _TYPE_SCHEMAS[self._target][1 if field.schema.optional else 0])
            else:
                builder.field(field.name, field.schema)
        if schema.optional:
            builder.optional()
        if schema.default_value is not None:
            bare = builder.build()
            builder.default_value(self._convert_struct(schema.default_value, bare))
        return builder.build()


class TimestampConverterKey(TimestampConverter[R]):
    """``TimestampConverter$Key``."""

    operates_on_key = True


class TimestampConverterValue(TimestampConverter[R]):
    """``TimestampConverter$Value``."""
