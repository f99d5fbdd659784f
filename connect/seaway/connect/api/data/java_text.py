"""A Connect value as Java prints it: ``String.valueOf`` of the Java object the value maps to.

Kafka's FileStreamSink writes ``String.valueOf(record.value())``; logs and error messages show
values the same way. Users compare such output with Kafka's, so it is reproduced here, byte for
byte where the Java text is deterministic (checked against Kafka's own FileStreamSinkTask and
JsonConverter in tests/peer/test_file_sink_text.py):

* ``null``, ``true``/``false``, strings as they are, integers in decimal;
* floating point as ``Double.toString`` (``Float.toString`` for a FLOAT32 schema): plain between
  10^-3 and 10^7 (``0.001``, ``1234567.0``), else ``1.0E10``, ``1.23456789E7``, ``1.0E-5``; the
  shortest digits that read back as the same number, as Java 19 and later print them (Java 17
  prints a few values such as 1e23 with more digits);
* ``Decimal`` as ``BigDecimal.toString`` (Python's ``str`` of a ``decimal.Decimal`` is the same);
* lists as ``[a, b]``; maps as ``{k=v, k2=v2}`` in the order of the ``java.util.HashMap`` Kafka's
  converters build (by the keys' Java hash codes, then insertion), not the order of the JSON;
* structs as ``Struct{a=1,b=x}``, unset fields left out (:meth:`Struct.__str__`);
* Date, Time and Timestamp values as ``java.util.Date.toString()`` in UTC
  (``Thu Jan 01 00:00:00 UTC 1970``; Java uses the JVM's time zone);
* bytes inside a list, map or struct as ``Arrays.toString(byte[])`` (``[104, -1]``): Java's own
  ``[B@6d06d69c`` names an object, not the data.

Which Java type a Python value stands for comes from its schema when there is one (INT32 keys
hash as ``Integer``, INT64 as ``Long``; FLOAT32 prints as ``Float``); without one, as Kafka's
JsonConverter makes schemaless values: integers are ``Long``, floats ``Double``.
"""

from __future__ import annotations

import datetime
import decimal
import math
import struct
from collections.abc import Mapping, Sequence
from typing import Any

from seaway.connect.api.data.schema import Schema, SchemaType

__all__ = ["java_hash_order", "java_string"]

_INT_TYPES = frozenset({SchemaType.INT8, SchemaType.INT16, SchemaType.INT32})


def java_string(value: Any, schema: Schema | None = None) -> str:
    """``String.valueOf`` of the Java object ``value`` (with ``schema``, when known) maps to."""
    from seaway.connect.api.data.struct import Struct

    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, Struct):
        return str(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        single = schema is not None and schema.type is SchemaType.FLOAT32
        return _java_float(value, single)
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, bytes | bytearray | memoryview):
        return "[" + ", ".join(str(b - 256 if b > 127 else b) for b in bytes(value)) + "]"
    if isinstance(value, Mapping):
        key_schema = schema.key_schema if schema is not None and schema.type is SchemaType.MAP else None
        value_schema = schema.value_schema if schema is not None and schema.type is SchemaType.MAP else None
        return "{" + ", ".join(f"{java_string(k, key_schema)}={java_string(v, value_schema)}"
                               for k, v in java_hash_order(value, key_schema)) + "}"
    if isinstance(value, Sequence):
        items = schema.value_schema if schema is not None and schema.type is SchemaType.ARRAY else None
        return "[" + ", ".join(java_string(v, items) for v in value) + "]"
    if isinstance(value, datetime.datetime | datetime.date | datetime.time):
        return _java_date(value)
    return str(value)


# -- numbers --------------------------------------------------------------------------------------------


def _java_float(value: float, single: bool) -> str:
    """``Double.toString`` (``Float.toString`` when ``single``)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    text = _shortest_single(value) if single else repr(value)
    sign, digits, exponent = decimal.Decimal(text).as_tuple()
    figures = "".join(map(str, digits)).rstrip("0") or "0"
    exponent = int(exponent) + len(digits) - len(figures)  # value = figures * 10**exponent
    point = len(figures) + exponent - 1  # value = f.ffff * 10**point
    out = "-" if sign else ""
    if -3 <= point < 7:
        if point >= 0:
            whole = figures[:point + 1].ljust(point + 1, "0")
            return f"{out}{whole}.{figures[point + 1:] or '0'}"
        return f"{out}0.{'0' * (-point - 1)}{figures}"
    return f"{out}{figures[0]}.{figures[1:] or '0'}E{point}"


def _shortest_single(value: float) -> str:
    """The fewest significant digits that read back as the same 32-bit float."""
    single = struct.unpack("<f", struct.pack("<f", value))[0]
    for precision in range(1, 10):
        text = f"{single:.{precision}e}"
        if struct.unpack("<f", struct.pack("<f", float(text)))[0] == single:
            return text
    return repr(single)


# -- java.util.HashMap's iteration order -----------------------------------------------------------------


def _int32(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value & 0x80000000 else value


def _java_hash(key: Any, schema: Schema | None) -> int | None:
    """``key.hashCode()`` of the Java object ``key`` maps to; None when it cannot be known."""
    if isinstance(key, str):
        h = 0
        for unit in struct.unpack(f"<{len(key.encode('utf-16-le')) // 2}H", key.encode("utf-16-le")):
            h = (31 * h + unit) & 0xFFFFFFFF
        return _int32(h)
    if isinstance(key, bool):
        return 1231 if key else 1237
    if isinstance(key, int):
        if schema is not None and schema.type in _INT_TYPES:
            return _int32(key)  # Integer, Short and Byte hash to their value
        bits = key & 0xFFFFFFFFFFFFFFFF  # Long.hashCode: (int) (value ^ (value >>> 32))
        return _int32(bits ^ (bits >> 32))
    if isinstance(key, float):
        if schema is not None and schema.type is SchemaType.FLOAT32:
            return _int32(struct.unpack("<I", struct.pack("<f", key))[0])  # Float.floatToIntBits
        bits = struct.unpack("<Q", struct.pack("<d", key if not math.isnan(key) else math.nan))[0]
        return _int32(bits ^ (bits >> 32))
    return None


def java_hash_order(mapping: Mapping[Any, Any], key_schema: Schema | None = None) -> list[tuple[Any, Any]]:
    """The items of ``mapping`` in the order a ``new HashMap<>()`` filled in this order iterates them.

    Buckets by ``(h ^ (h >>> 16)) & (capacity - 1)``, capacity 16 doubling past 3/4 full (or
    when a bucket holds more than 8 entries below capacity 64), entries of a bucket in insertion
    order. A tree-shaped bucket (9 or more colliding keys at capacity 64 and more) may iterate
    differently in Java; keys whose Java hash is unknown keep the mapping's order.
    """
    items = list(mapping.items())
    hashes = [_java_hash(k, key_schema) for k, _ in items]
    if len(items) < 2 or any(h is None for h in hashes):
        return items
    spread = [(h & 0xFFFFFFFF) ^ ((h & 0xFFFFFFFF) >> 16) for h in hashes if h is not None]
    capacity = 16
    bins: dict[int, int] = {}
    for count, h in enumerate(spread, 1):
        index = h & (capacity - 1)
        bins[index] = bins.get(index, 0) + 1
        if bins[index] > 8 and capacity < 64:  # treeifyBin below MIN_TREEIFY_CAPACITY resizes instead
            capacity, bins = _resized(spread[:count], capacity)
        if count > capacity * 3 // 4:
            capacity, bins = _resized(spread[:count], capacity)
    order = sorted(range(len(items)), key=lambda i: spread[i] & (capacity - 1))  # stable: insertion order
    return [items[i] for i in order]


def _resized(spread: list[int], capacity: int) -> tuple[int, dict[int, int]]:
    capacity *= 2
    bins: dict[int, int] = {}
    for h in spread:
        bins[h & (capacity - 1)] = bins.get(h & (capacity - 1), 0) + 1
    return capacity, bins


# -- dates -----------------------------------------------------------------------------------------------


def _java_date(value: datetime.datetime | datetime.date | datetime.time) -> str:
    """``java.util.Date.toString()`` in UTC: Connect's Date, Time and Timestamp values are all Dates."""
    if isinstance(value, datetime.datetime):
        moment = value.astimezone(datetime.UTC) if value.tzinfo else value
    elif isinstance(value, datetime.date):
        moment = datetime.datetime(value.year, value.month, value.day)
    else:
        moment = datetime.datetime.combine(datetime.date(1970, 1, 1), value.replace(tzinfo=None))
    return moment.strftime("%a %b %d %H:%M:%S UTC %Y")
