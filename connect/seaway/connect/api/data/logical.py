"""Logical types: well-known schema names giving a primitive a richer Python meaning.

=========  ===================================================  ========  ===================
Class      Schema name                                          Base      Python value
=========  ===================================================  ========  ===================
Decimal    ``org.apache.kafka.connect.data.Decimal`` (+scale)   BYTES     ``decimal.Decimal``
Date       ``org.apache.kafka.connect.data.Date``               INT32     ``datetime.date``
Time       ``org.apache.kafka.connect.data.Time``               INT32     ``datetime.time``
Timestamp  ``org.apache.kafka.connect.data.Timestamp``          INT64     ``datetime.datetime``
=========  ===================================================  ========  ===================

``from_logical(schema, value)`` gives the wire form (what converters write) and
``to_logical(schema, raw)`` the Python value, as Kafka's static methods do. The names are
Kafka's, so ``Decimal`` here is the logical type, not ``decimal.Decimal``.

Differences from Kafka worth knowing: a ``decimal.Decimal`` whose scale differs from the
schema's is rescaled when that loses nothing (``1.5`` for scale 2 becomes ``1.50``) instead
of being rejected; Python's microseconds are truncated to milliseconds; a naive
``datetime`` is taken as UTC and ``Timestamp.to_logical`` returns an aware UTC datetime.
"""

from __future__ import annotations

import datetime
import decimal
from typing import ClassVar

from seaway.connect.api.data.builder import SchemaBuilder
from seaway.connect.api.data.schema import (
    DATE_LOGICAL_NAME,
    DECIMAL_LOGICAL_NAME,
    TIME_LOGICAL_NAME,
    TIMESTAMP_LOGICAL_NAME,
    Schema,
)
from seaway.connect.api.errors import DataError

__all__ = ["Date", "Decimal", "Time", "Timestamp"]

_EPOCH_DATE = datetime.date(1970, 1, 1)
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
_MS = datetime.timedelta(milliseconds=1)
MILLIS_PER_DAY = 24 * 60 * 60 * 1000


def _check_name(schema: Schema, name: str, kind: str) -> None:
    if schema.name != name:
        raise DataError(f"Requested conversion of {kind} object but the schema does not match.")


class Decimal:
    """Arbitrary-precision decimal: BYTES holding the big-endian two's-complement unscaled value."""

    LOGICAL_NAME: ClassVar[str] = DECIMAL_LOGICAL_NAME
    SCALE_FIELD: ClassVar[str] = "scale"

    @staticmethod
    def builder(scale: int) -> SchemaBuilder:
        return (SchemaBuilder.bytes().name(DECIMAL_LOGICAL_NAME)
                .parameter(Decimal.SCALE_FIELD, str(scale)).version(1))

    @staticmethod
    def schema(scale: int) -> Schema:
        return Decimal.builder(scale).build()

    @staticmethod
    def scale(schema: Schema) -> int:
        raw = (schema.parameters or {}).get(Decimal.SCALE_FIELD)
        if raw is None:
            raise DataError("Invalid Decimal schema: scale parameter not found.")
        try:
            return int(raw)
        except ValueError:
            raise DataError(f"Invalid scale parameter found in Decimal schema: {raw}") from None

    @staticmethod
    def unscaled(value: decimal.Decimal, scale: int) -> int:
        """``value * 10**scale`` exactly, or :class:`DataError` if that would round."""
        if not value.is_finite():
            raise DataError(f"Decimal value {value} is not finite")
        # exact integer arithmetic on the value's ratio (no decimal context, so no rounding)
        numerator, denominator = value.as_integer_ratio()
        if scale >= 0:
            unscaled, remainder = divmod(numerator * 10 ** scale, denominator)
        else:
            unscaled, remainder = divmod(numerator, denominator * 10 ** -scale)
        if remainder:
            raise DataError(f"Decimal value {value} does not fit the schema's scale {scale}")
        return int(unscaled)

    @staticmethod
    def from_unscaled(unscaled: int, scale: int) -> decimal.Decimal:
        """The exact decimal ``unscaled * 10**-scale`` (no context rounding)."""
        return decimal.Decimal(f"{unscaled}E{-scale}")  # parsing text is exact, whatever the context

    @staticmethod
    def from_logical(schema: Schema, value: decimal.Decimal) -> bytes:
        _check_name(schema, DECIMAL_LOGICAL_NAME, "Decimal")
        n = Decimal.unscaled(value, Decimal.scale(schema))
        bits = n.bit_length() if n >= 0 else (~n).bit_length()
        return n.to_bytes(bits // 8 + 1, "big", signed=True)

    @staticmethod
    def to_logical(schema: Schema, value: bytes) -> decimal.Decimal:
        _check_name(schema, DECIMAL_LOGICAL_NAME, "Decimal")
        if not value:
            raise DataError("Decimal bytes must not be empty")
        return Decimal.from_unscaled(int.from_bytes(value, "big", signed=True), Decimal.scale(schema))


class Date:
    """A calendar date: INT32 days since 1970-01-01."""

    LOGICAL_NAME: ClassVar[str] = DATE_LOGICAL_NAME
    SCHEMA: ClassVar[Schema]

    @staticmethod
    def builder() -> SchemaBuilder:
        return SchemaBuilder.int32().name(DATE_LOGICAL_NAME).version(1)

    @staticmethod
    def from_logical(schema: Schema, value: datetime.date) -> int:
        _check_name(schema, DATE_LOGICAL_NAME, "Date")
        if isinstance(value, datetime.datetime):
            raise DataError("Kafka Connect Date type should not have any time fields set to non-zero values.")
        return (value - _EPOCH_DATE).days

    @staticmethod
    def to_logical(schema: Schema, value: int) -> datetime.date:
        _check_name(schema, DATE_LOGICAL_NAME, "Date")
        try:
            return _EPOCH_DATE + datetime.timedelta(days=value)
        except OverflowError:
            raise DataError(f"Date value {value} is out of range") from None


class Time:
    """A time of day: INT32 milliseconds since midnight, 0 <= ms < 86,400,000."""

    LOGICAL_NAME: ClassVar[str] = TIME_LOGICAL_NAME
    SCHEMA: ClassVar[Schema]

    @staticmethod
    def builder() -> SchemaBuilder:
        return SchemaBuilder.int32().name(TIME_LOGICAL_NAME).version(1)

    @staticmethod
    def from_logical(schema: Schema, value: datetime.time) -> int:
        _check_name(schema, TIME_LOGICAL_NAME, "Time")
        offset = value.utcoffset()
        if offset:
            raise DataError("Kafka Connect Time values must be in UTC")
        return ((value.hour * 60 + value.minute) * 60 + value.second) * 1000 + value.microsecond // 1000

    @staticmethod
    def to_logical(schema: Schema, value: int) -> datetime.time:
        _check_name(schema, TIME_LOGICAL_NAME, "Time")
        if not 0 <= value < MILLIS_PER_DAY:
            raise DataError("Time values must use number of milliseconds greater than 0 and less than "
                            "86400000")
        seconds, ms = divmod(value, 1000)
        minutes, second = divmod(seconds, 60)
        hour, minute = divmod(minutes, 60)
        return datetime.time(hour, minute, second, ms * 1000)


class Timestamp:
    """An instant: INT64 milliseconds since the Unix epoch (UTC)."""

    LOGICAL_NAME: ClassVar[str] = TIMESTAMP_LOGICAL_NAME
    SCHEMA: ClassVar[Schema]

    @staticmethod
    def builder() -> SchemaBuilder:
        return SchemaBuilder.int64().name(TIMESTAMP_LOGICAL_NAME).version(1)

    @staticmethod
    def from_logical(schema: Schema, value: datetime.datetime) -> int:
        _check_name(schema, TIMESTAMP_LOGICAL_NAME, "Timestamp")
        if value.tzinfo is None:
            value = value.replace(tzinfo=datetime.UTC)
        return (value - _EPOCH) // _MS

    @staticmethod
    def to_logical(schema: Schema, value: int) -> datetime.datetime:
        _check_name(schema, TIMESTAMP_LOGICAL_NAME, "Timestamp")
        try:
            return _EPOCH + datetime.timedelta(milliseconds=value)
        except OverflowError:
            raise DataError(f"Timestamp value {value} is out of range") from None


Date.SCHEMA = Date.builder().build()
Time.SCHEMA = Time.builder().build()
Timestamp.SCHEMA = Timestamp.builder().build()
