"""Values: Connect values to and from their plain string form (Kafka's ``Values``).

Used by :class:`SimpleHeaderConverter` (header values on the wire are these strings) and by
SMTs such as InsertHeader (``value.literal``). The string syntax, as in Kafka:

* ``true`` / ``false`` -> BOOLEAN; ``null`` -> no schema, ``None``
* integers -> the smallest of INT8/INT16/INT32/INT64 that holds them; other numbers ->
  FLOAT32 (within float range), FLOAT64, else a Decimal with the literal's scale
* ``yyyy-MM-dd`` -> Date, ``HH:mm:ss.SSSZ`` -> Time, ``yyyy-MM-ddTHH:mm:ss.SSSZ`` -> Timestamp
* ``[a,b]`` -> ARRAY, ``{k:v}`` -> MAP; strings inside them are double-quoted with ``\\``
  escapes; a list or map whose elements share no common type gets no schema
* anything else (including a malformed ``[...]``) -> STRING, unchanged
"""

from __future__ import annotations

import base64
import datetime
import decimal
import re
from typing import Any

from seaway.connect.api.data.builder import SchemaBuilder
from seaway.connect.api.data.logical import Date, Decimal, Time, Timestamp
from seaway.connect.api.data.schema import (
    DATE_LOGICAL_NAME,
    DECIMAL_LOGICAL_NAME,
    TIME_LOGICAL_NAME,
    TIMESTAMP_LOGICAL_NAME,
    Schema,
    SchemaAndValue,
    SchemaType,
)
from seaway.connect.api.data.struct import Struct
from seaway.connect.api.errors import DataError

__all__ = ["Values"]

_DATE_RE = re.compile(r"\d{4}-\d{2}-\d{2}")
_TIME_RE = re.compile(r"\d{2}:\d{2}:\d{2}\.\d{3}Z")
_TIMESTAMP_RE = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z")
_FLOAT32_MAX = 3.4028234663852886e38
_INT_TIERS = ((SchemaType.INT8, 7), (SchemaType.INT16, 15), (SchemaType.INT32, 31), (SchemaType.INT64, 63))
_NUMERIC_RANK = {t: i for i, t in enumerate((SchemaType.INT8, SchemaType.INT16, SchemaType.INT32,
                                            SchemaType.INT64, SchemaType.FLOAT32, SchemaType.FLOAT64))}


def _format_date(value: datetime.date) -> str:
    return f"{value.year:04d}-{value.month:02d}-{value.day:02d}"


def _format_time(value: datetime.time) -> str:
    return f"{value.hour:02d}:{value.minute:02d}:{value.second:02d}.{value.microsecond // 1000:03d}Z"


def _format_timestamp(value: datetime.datetime) -> str:
    if value.tzinfo is not None:
        value = value.astimezone(datetime.UTC)
    return f"{_format_date(value)}T{_format_time(value.time())}"


def _parse_temporal(token: str) -> SchemaAndValue | None:
    try:
        if _TIMESTAMP_RE.fullmatch(token):
            ts = datetime.datetime.strptime(token, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.UTC)
            return SchemaAndValue(Timestamp.SCHEMA, ts)
        if _TIME_RE.fullmatch(token):
            return SchemaAndValue(Time.SCHEMA, datetime.datetime.strptime(token, "%H:%M:%S.%fZ").time())
        if _DATE_RE.fullmatch(token):
            return SchemaAndValue(Date.SCHEMA, datetime.date.fromisoformat(token))
    except ValueError:
        return None
    return None


def _parse_number(token: str) -> SchemaAndValue | None:
    if not token or not (token[0].isdigit() or token[0] in "+-"):
        return None
    try:
        number = decimal.Decimal(token)
    except decimal.InvalidOperation:
        return None
    if not number.is_finite():
        return None
    if number == number.to_integral_value():
        as_int = int(number)
        for schema_type, bits in _INT_TIERS:
            if -(1 << bits) <= as_int < (1 << bits):
                return SchemaAndValue(_required(schema_type), as_int)
    exponent = number.as_tuple().exponent
    assert isinstance(exponent, int)
    if exponent != 0:
        as_float = float(number)
        if abs(as_float) <= _FLOAT32_MAX:
            return SchemaAndValue(Schema.FLOAT32_SCHEMA, as_float)
        if as_float not in (float("inf"), float("-inf")):
            return SchemaAndValue(Schema.FLOAT64_SCHEMA, as_float)
    return SchemaAndValue(Decimal.schema(max(-exponent, 0)), number)


def _required(schema_type: SchemaType) -> Schema:
    return getattr(Schema, f"{schema_type.name}_SCHEMA")  # type: ignore[no-any-return]


def _common_schema(schemas: list[Schema | None]) -> tuple[Schema | None, bool]:
    """The schema every non-null element fits (numbers widen), and whether one was found."""
    common: Schema | None = None
    for schema in schemas:
        if schema is None:
            continue
        if common is None or common == schema:
            common = schema
            continue
        a, b = _NUMERIC_RANK.get(common.type), _NUMERIC_RANK.get(schema.type)
        if a is None or b is None or common.name or schema.name:
            return None, False
        common = schema if b > a else common
    if common is not None and any(s is None for s in schemas):
        common = SchemaBuilder.from_schema(common).optional().build()
    return common, common is not None


def _align(schema: Schema, value: Any) -> Any:
    if value is not None and schema.type in (SchemaType.FLOAT32, SchemaType.FLOAT64):
        return float(value)
    return value


class _Parser:
    """Recursive descent over the string form; raises DataError on malformed containers."""

    _TOKEN_END = re.compile(r"[,:\]}\[{\"]")

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def skip_ws(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def _consume(self, char: str) -> bool:
        self.skip_ws()
        if self.text.startswith(char, self.pos):
            self.pos += len(char)
            return True
        return False

    def embedded(self) -> SchemaAndValue:
        self.skip_ws()
        if self._consume('"'):
            return self._quoted()
        if self._consume("["):
            return self.array()
        if self._consume("{"):
            return self.map()
        for literal, result in (("null", SchemaAndValue.NULL),
                                ("true", SchemaAndValue(Schema.BOOLEAN_SCHEMA, True)),
                                ("false", SchemaAndValue(Schema.BOOLEAN_SCHEMA, False))):
            if self.text.startswith(literal, self.pos):
                self.pos += len(literal)
                return result
        for pattern in (_TIMESTAMP_RE, _TIME_RE):
            match = pattern.match(self.text, self.pos)
            if match:
                self.pos = match.end()
                parsed = _parse_temporal(match.group())
                if parsed is not None:
                    return parsed
        end = self._TOKEN_END.search(self.text, self.pos)
        stop = end.start() if end else len(self.text)
        token = self.text[self.pos:stop].strip()
        self.pos = stop
        parsed = _parse_temporal(token) or _parse_number(token)
        if parsed is None:
            raise DataError(f"Failed to parse embedded value {token!r}")
        return parsed

    def _quoted(self) -> SchemaAndValue:
        out: list[str] = []
        while self.pos < len(self.text):
            char = self.text[self.pos]
            self.pos += 1
            if char == "\\" and self.pos < len(self.text):
                out.append(self.text[self.pos])
                self.pos += 1
            elif char == '"':
                content = "".join(out)
                return _parse_temporal(content) or SchemaAndValue(Schema.STRING_SCHEMA, content)
            else:
                out.append(char)
        raise DataError("Unterminated quoted string")

    def array(self) -> SchemaAndValue:
        items: list[SchemaAndValue] = []
        if not self._consume("]"):
            while True:
                items.append(self.embedded())
                if self._consume("]"):
                    break
                if not self._consume(","):
                    raise DataError("Array elements missing ',' delimiter")
        common, ok = _common_schema([i.schema for i in items])
        if not ok or common is None:
            return SchemaAndValue(None, [i.value for i in items])
        return SchemaAndValue(SchemaBuilder.array(common).build(), [_align(common, i.value) for i in items])

    def map(self) -> SchemaAndValue:
        entries: list[tuple[SchemaAndValue, SchemaAndValue]] = []
        if not self._consume("}"):
            while True:
                key = self.embedded()
                if key.value is None:
                    raise DataError("Map entry may not have a null key")
                if not self._consume(":"):
                    raise DataError("Map entry is missing ':'")
                entries.append((key, self.embedded()))
                if self._consume("}"):
                    break
                if not self._consume(","):
                    raise DataError("Map entries missing ',' delimiter")
        key_schema, key_ok = _common_schema([k.schema for k, _ in entries])
        value_schema, value_ok = _common_schema([v.schema for _, v in entries])
        if not (key_ok and value_ok) or key_schema is None or value_schema is None:
            return SchemaAndValue(None, {k.value: v.value for k, v in entries})
        aligned = {_align(key_schema, k.value): _align(value_schema, v.value) for k, v in entries}
        return SchemaAndValue(SchemaBuilder.map(key_schema, value_schema).build(), aligned)


class Values:
    """Kafka's ``Values`` utility: string forms of Connect values and schema inference."""

    @staticmethod
    def parse_string(text: str | None) -> SchemaAndValue:
        """Infer a schema and value from a string (see the module docstring for the rules)."""
        if text is None:
            return SchemaAndValue.NULL
        stripped = text.strip()
        if not stripped:
            return SchemaAndValue(Schema.STRING_SCHEMA, text)
        if stripped == "null":
            return SchemaAndValue.NULL
        if stripped in ("true", "false"):
            return SchemaAndValue(Schema.BOOLEAN_SCHEMA, stripped == "true")
        if stripped[0] in "[{":
            parser = _Parser(stripped)
            parser.pos = 1
            try:
                result = parser.array() if stripped[0] == "[" else parser.map()
                parser.skip_ws()
                if parser.pos == len(stripped):
                    return result
            except DataError:
                pass
        parsed = _parse_temporal(stripped) or _parse_number(stripped)
        return parsed if parsed is not None else SchemaAndValue(Schema.STRING_SCHEMA, text)

    @staticmethod
    def convert_to_string(schema: Schema | None, value: Any) -> str | None:
        """The string form of a value (``None`` stays ``None``); inverse of :meth:`parse_string`."""
        if value is None:
            return None
        return _to_string(schema, value, embedded=False)

    @staticmethod
    def infer_schema(value: Any) -> Schema | None:
        """A schema for a schemaless value, or ``None`` (empty/mixed containers, unknown types)."""
        if isinstance(value, Struct):
            return value.schema
        if isinstance(value, bool):
            return Schema.BOOLEAN_SCHEMA
        if isinstance(value, int):
            return Schema.INT64_SCHEMA
        if isinstance(value, float):
            return Schema.FLOAT64_SCHEMA
        if isinstance(value, str):
            return Schema.STRING_SCHEMA
        if isinstance(value, bytes | bytearray):
            return Schema.BYTES_SCHEMA
        if isinstance(value, datetime.datetime):
            return Timestamp.SCHEMA
        if isinstance(value, datetime.date):
            return Date.SCHEMA
        if isinstance(value, datetime.time):
            return Time.SCHEMA
        if isinstance(value, decimal.Decimal) and value.is_finite():
            exponent = value.as_tuple().exponent
            assert isinstance(exponent, int)
            return Decimal.schema(max(-exponent, 0))
        if isinstance(value, list | tuple) and value:
            element, ok = _common_schema([Values.infer_schema(v) for v in value])
            return SchemaBuilder.array(element).build() if ok and element is not None else None
        if isinstance(value, dict) and value:
            key, key_ok = _common_schema([Values.infer_schema(k) for k in value])
            val, val_ok = _common_schema([Values.infer_schema(v) for v in value.values()])
            if key_ok and val_ok and key is not None and val is not None:
                return SchemaBuilder.map(key, val).build()
        return None


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _to_string(schema: Schema | None, value: Any, embedded: bool) -> str:
    if value is None:
        return "null"
    name = schema.name if schema is not None else None
    text: str | None = None
    if name == DATE_LOGICAL_NAME or (name is None and isinstance(value, datetime.date)
                                    and not isinstance(value, datetime.datetime)):
        text = _format_date(value)
    elif name == TIME_LOGICAL_NAME or (name is None and isinstance(value, datetime.time)):
        text = _format_time(value)
    elif name == TIMESTAMP_LOGICAL_NAME or (name is None and isinstance(value, datetime.datetime)):
        text = _format_timestamp(value)
    if text is not None:
        return _quote(text) if embedded else text
    if name == DECIMAL_LOGICAL_NAME or isinstance(value, decimal.Decimal):
        return format(value, "f")
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return _quote(value) if embedded else value
    if isinstance(value, bytes | bytearray):
        encoded = base64.b64encode(value).decode("ascii")
        return _quote(encoded) if embedded else encoded
    if isinstance(value, list | tuple):
        element = schema.value_schema if schema is not None else None
        return "[" + ",".join(_to_string(element, v, True) for v in value) + "]"
    if isinstance(value, dict):
        key_schema = schema.key_schema if schema is not None else None
        value_schema = schema.value_schema if schema is not None else None
        return "{" + ",".join(_to_string(key_schema, k, True) + ":" + _to_string(value_schema, v, True)
                              for k, v in value.items()) + "}"
    if isinstance(value, Struct):
        return "{" + ",".join(_quote(f.name) + ":" + _to_string(f.schema, value.get(f), True)
                              for f in value.schema.fields) + "}"
    return _quote(str(value)) if embedded else str(value)
