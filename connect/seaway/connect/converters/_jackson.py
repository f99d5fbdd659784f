"""JSON text of numbers and strings exactly as Jackson writes them in Kafka's JsonConverter.

Kafka's JsonConverter builds Jackson nodes and writes them with a default ``ObjectMapper``;
its text differs from Python's ``json`` in three places, all checked against Kafka 4.3.1's
own converter (``tests/connect/converters/test_converters_json_kafka.py``):

* **Doubles** are ``Double.toString``: the same shortest digits as ``repr`` but laid out
  as Java does, plain for 1e-3 <= |x| < 1e7 (``12.5``, ``0.001``) and ``1.2345678E7``,
  ``1.0E-4``, ``1.0E20`` outside; at least two digits (``4.9E-324`` where ``repr`` gives
  ``5e-324``). FLOAT32 values are ``Float.toString`` of the value rounded to float32
  (``0.1`` for 0.1, ``"Infinity"`` for 1e40). NaN and infinities are quoted strings
  (``QUOTE_NON_NUMERIC_NUMBERS``). The digits are those of Java 19 and later; Java 17's
  ``Double.toString`` prints more digits than needed for a few values (JDK-4511638).
* **Strings**: control characters other than ``\\b \\t \\n \\f \\r`` as ``\\u00XX`` with
  upper-case hex, and every character outside the Basic Multilingual Plane as its UTF-16
  surrogate pair of escapes (``\\uD83D\\uDE00``), a lone surrogate as its own escape; other
  non-ASCII text is written as UTF-8.
* **BigDecimal** (``decimal.format=NUMERIC``) is ``BigDecimal.toString``: ``1E-10``,
  ``1.2E+3``, which is what ``str`` of a ``decimal.Decimal`` gives.

:func:`string_text` is on every record's path: it lets C (``json``'s ``encode_basestring``)
do the common case and checks the result with two C-speed scans (three for non-ASCII text).
"""

from __future__ import annotations

import math
import re
import struct
from json.encoder import encode_basestring  # the C function when available

__all__ = ["double_text", "float32_text", "string_text"]

_FLOAT32 = struct.Struct("<f")
_MIN_NORMAL_DOUBLE = 2.2250738585072014e-308
_MIN_NORMAL_FLOAT32 = 1.1754943508222875e-38
_SPECIAL = re.compile("[\x00-\x1f\"\\\\\ud800-\udfff\U00010000-\U0010ffff]")
_ASTRAL_OR_SURROGATE = re.compile("[\ud800-\udfff\U00010000-\U0010ffff]")
_SHORT_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def _non_finite(value: float) -> str:
    if math.isnan(value):
        return '"NaN"'
    return '"Infinity"' if value > 0 else '"-Infinity"'


def _java_layout(negative: bool, digits: str, point: int) -> str:
    """``Double.toString``'s layout of the decimal ``0.<digits> * 10**point`` (digits without zeros at either end)."""
    sign = "-" if negative else ""
    if -3 < point <= 7:  # 1e-3 <= |x| < 1e7: plain notation with at least one fraction digit
        if point <= 0:
            return f"{sign}0.{'0' * -point}{digits}"
        if point >= len(digits):
            return f"{sign}{digits}{'0' * (point - len(digits))}.0"
        return f"{sign}{digits[:point]}.{digits[point:]}"
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{point - 1}"


def _digits(text: str) -> tuple[str, int]:
    """Significant digits and decimal point position of a finite, non-zero ``repr``/``%e`` text without sign."""
    mantissa, _, exponent = text.partition("e")
    whole, _, fraction = mantissa.partition(".")
    all_digits = whole + fraction
    significant = all_digits.lstrip("0")
    point = len(whole) + (int(exponent) if exponent else 0) - (len(all_digits) - len(significant))
    return significant.rstrip("0"), point


def double_text(value: float) -> str:
    """``value`` as Jackson writes a Java double (``value`` is a ``float``)."""
    if 1e-3 <= value < 1e7 or -1e7 < value <= -1e-3 or value == 0.0:
        return repr(value)  # the same text in both languages (repr is plain below 1e16)
    if not math.isfinite(value):
        return _non_finite(value)
    negative = value < 0
    magnitude = -value if negative else value
    digits, point = _digits(repr(magnitude))
    if len(digits) == 1 and magnitude < _MIN_NORMAL_DOUBLE:
        # Java writes at least two digits, the closest pair that still reads back as the value
        two = f"{magnitude:.1e}"
        if float(two) == magnitude:
            digits, point = _digits(two)
    return _java_layout(negative, digits, point)


def float32_text(value: float) -> str:
    """``value`` rounded to float32, as Jackson writes a Java float (``Float.toString``)."""
    if 1e-3 <= value < 1e7 or -1e7 < value <= -1e-3:
        text = repr(value)
        # a float32 value whose repr has at most 7 digits: no shorter decimal reads back as
        # that float32 (7-digit decimals are further apart than a float32's rounding
        # interval), so Java prints the same text
        if len(text) <= 8 and _FLOAT32.unpack(_FLOAT32.pack(value))[0] == value:
            return text
    if not math.isfinite(value):
        return _non_finite(value)
    try:
        single = _FLOAT32.unpack(_FLOAT32.pack(value))[0]
    except OverflowError:  # beyond float32's range: Java's (float) cast gives an infinity
        return _non_finite(value)
    if single == 0.0:
        return "-0.0" if math.copysign(1.0, single) < 0 else "0.0"
    negative = single < 0
    magnitude = -single if negative else single
    digits, point = _digits(_shortest_float32(magnitude))
    if len(digits) == 1 and magnitude < _MIN_NORMAL_FLOAT32:
        two = f"{magnitude:.1e}"
        if _reads_back(two, magnitude):
            digits, point = _digits(two)
    return _java_layout(negative, digits, point)


def _reads_back(text: str, magnitude: float) -> bool:
    return bool(_FLOAT32.unpack(_FLOAT32.pack(float(text)))[0] == magnitude)


def _shortest_float32(magnitude: float) -> str:
    """The shortest decimal (``%e`` text) that rounds to the positive float32 ``magnitude``, closest if several.

    A normal float32 has 24 bits, so every decimal of 6 digits survives the trip: if a
    decimal of <= 6 digits reads back, the closest one of 6 digits is it (with zeros after),
    and the search starts there. Subnormals have fewer bits and start at one digit.
    """
    below_normal = magnitude < _MIN_NORMAL_FLOAT32
    power_of_two = math.frexp(magnitude)[0] == 0.5
    text = ""
    for precision in range(0 if below_normal else 5, 9):
        text = f"{magnitude:.{precision}e}"
        if _reads_back(text, magnitude):
            return text
        if power_of_two and not below_normal:
            # the gap below a power of two is half the gap above: the closest decimal may fall
            # out below while the next one up still reads back
            mantissa, _, exponent = text.partition("e")
            digits, power = str(int(mantissa.replace(".", "")) + 1), int(exponent)
            if len(digits) > precision + 1:  # 9.99 + 0.01 = 10.00: one digit more, one power up
                digits, power = digits[:-1], power + 1
            up = f"{digits[0]}.{digits[1:]}e{power}"
            if _reads_back(up, magnitude):
                return up
    return text


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    short = _SHORT_ESCAPES.get(char)
    if short is not None:
        return short
    code = ord(char)
    if code > 0xFFFF:  # outside the BMP: Java strings hold it as a surrogate pair, escaped one by one
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04X}\\u{0xDC00 + (code & 0x3FF):04X}"
    return f"\\u{code:04X}"


def string_text(value: str) -> str:
    """``value`` as a JSON string literal, escaped as Jackson escapes it."""
    text: str = encode_basestring(value)
    # encode_basestring escapes what Jackson does, but in lower-case hex, and leaves astral
    # characters and surrogates as they are: redo those (rare) strings with Jackson's rules
    if "\\u" in text or not (value.isascii() or _ASTRAL_OR_SURROGATE.search(value) is None):
        return '"' + _SPECIAL.sub(_escape, value) + '"'
    return text
