"""Zigzag varints, as record batch v2 writes every per-record integer.

Kafka's ``varint`` (int32) and ``varlong`` (int64) are the same encoding: the signed
value is zigzag-mapped (``0, -1, 1, -2 ... -> 0, 1, 2, 3 ...``) so small magnitudes of
either sign stay short, then written as base-128 groups, least significant first, with
the high bit of each byte meaning "more follows". A varint takes 1-5 bytes, a varlong
1-10.

These run once or more per record, so the common cases are table lookups: values
that zigzag below 2**14 (one or two bytes: every key/value length under 8 KiB and
most offset and timestamp deltas) are precomputed at import.
"""

from __future__ import annotations

__all__ = [
    "MAX_VARLONG_BYTES",
    "VarintError",
    "decode_varint",
    "encode_varint",
    "size_of_varint",
]

MAX_VARLONG_BYTES = 10
_INT64_MIN = -(1 << 63)
_INT64_MAX = (1 << 63) - 1
_TABLE_LIMIT = 1 << 13  # zigzag(v) < 2**14 for -2**13 <= v < 2**13: at most two bytes


class VarintError(ValueError):
    """A varint longer than 10 bytes (the caller maps it to its own corruption error)."""


def _encode_slow(value: int) -> bytes:
    if not _INT64_MIN <= value <= _INT64_MAX:
        raise ValueError(f"{value} does not fit a varlong (int64)")
    z = ((value << 1) ^ (value >> 63)) & 0xFFFFFFFFFFFFFFFF
    out = bytearray()
    while z >= 0x80:
        out.append((z & 0x7F) | 0x80)
        z >>= 7
    out.append(z)
    return bytes(out)


_SMALL: list[bytes] = [_encode_slow(v) for v in range(-_TABLE_LIMIT, _TABLE_LIMIT)]


def encode_varint(value: int) -> bytes:
    """The zigzag varint bytes of ``value`` (any int64; ``ValueError`` beyond)."""
    if -_TABLE_LIMIT <= value < _TABLE_LIMIT:
        return _SMALL[value + _TABLE_LIMIT]
    return _encode_slow(value)


def size_of_varint(value: int) -> int:
    """How many bytes :func:`encode_varint` writes for ``value``."""
    z = ((value << 1) ^ (value >> 63)) & 0xFFFFFFFFFFFFFFFF
    return max(1, (z.bit_length() + 6) // 7)


def decode_varint(buf: bytes, pos: int) -> tuple[int, int]:
    """Read one zigzag varint/varlong at ``buf[pos]``; returns ``(value, next_pos)``.

    Raises ``IndexError`` when ``buf`` ends inside the varint and :class:`VarintError`
    when it runs past 10 bytes; callers translate both into their corruption error.
    """
    b = buf[pos]
    if b < 0x80:
        return (b >> 1) ^ -(b & 1), pos + 1
    result = b & 0x7F
    shift = 7
    end = pos + MAX_VARLONG_BYTES
    pos += 1
    while True:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return (result >> 1) ^ -(result & 1), pos
        if pos >= end:
            raise VarintError("varint is longer than 10 bytes")
        shift += 7
