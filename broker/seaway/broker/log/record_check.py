"""The records of a v2 batch must agree with its header: Kafka's per-record produce checks.

A batch header claims a record count and an offset range; the broker assigns offsets
from those claims. Kafka's ``LogValidator`` iterates every record of every produced batch
(``DefaultRecord.readFrom``), so a batch whose header disagrees with its records is
refused. This module does the same walk, without building a record object or copying a
byte, and raises ``InvalidRecordError`` (INVALID_RECORD, 87) on the first disagreement:

- each record's length varint is at least the 6 bytes of an empty record and ends
  inside the records' bytes; the record's own fields then end exactly at that length;
- varints are sane: at most 5 bytes for an int32 field, 10 for the timestamp delta;
- each record's ``offsetDelta`` is its index (0, 1, ... count-1), so with the header's
  ``recordCount == lastOffsetDelta + 1`` the offsets are exactly the header's range;
- key and value lengths are -1 (null) or fit; a header count is non-negative and each
  header's key length is non-negative;
- exactly ``recordCount`` records, and no byte after the last one.

It also returns what the rest of validation needs from inside the batch: the smallest
and largest timestamp delta (so every record's CreateTime timestamp is checked against
``message.timestamp.before/after.max.ms``, and the header's ``maxTimestamp`` against the
records), and the indexes of keyless records (refused on compacted topics).

Cost. This is per record, so it runs in C when it can: :mod:`._record_walk` (a small
extension compiled at install time, see ``hatch_build.py``) does the same walk at a few
nanoseconds a record. :func:`walk_records_py` is the same algorithm in Python; it is
the reference the tests hold the C walk to, and what runs if the extension is missing
(about 0.3 us a record: the broker logs a warning at start then). The caller checks the
cheap invariant first: ``recordCount * 7 <= bytes`` (7 bytes is the smallest record), so
a header claiming two billion records is refused without a loop.

Decompressed records (up to 64 MiB, millions of records) are walked without the GIL
(:func:`inspect_compressed`): the produce path inflates them on a worker thread while the
event loop goes on (``seaway.broker.decompression``). Records walked in place, on the
event loop, keep the GIL: there the walk is bounded by ``max.message.bytes`` per batch,
and giving the GIL up could let another thread keep it for a switch interval.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import NamedTuple

from seaway.protocol.compression import MAX_DECOMPRESSED_BYTES, decompressed
from seaway.protocol.errors import InvalidRecordError
from seaway.protocol.record_batch import BATCH_HEADER_SIZE, BatchHeader, Compression

__all__ = [
    "MIN_RECORD_BYTES",
    "WALK_IS_NATIVE",
    "RecordSummary",
    "decompressed_cap",
    "inspect_batch",
    "inspect_compressed",
    "walk_records",
    "walk_records_py",
    "walk_records_raw",
]

log = logging.getLogger("seaway.broker.log")

MIN_RECORD_BYTES = 7
"""A record's smallest encoding: length 6 (1 byte) + attributes, timestamp delta, offset
delta, key length -1, value length -1, header count 0 (1 byte each)."""

_MIN_BODY = MIN_RECORD_BYTES - 1


class RecordSummary(NamedTuple):
    """What the walk learned: timestamp delta range and the indexes of keyless records."""

    min_timestamp_delta: int
    max_timestamp_delta: int
    keyless: list[int]


def _varint(data: bytes | bytearray | memoryview, pos: int, limit: int, max_bytes: int) -> tuple[int, int]:
    """Zigzag varint at ``pos`` read no further than ``limit``; (value, next position).

    ``max_bytes`` is 5 for an int32 field (whose value must fit 32 bits) and 10 for an
    int64 one, as Kafka's ``ByteUtils.readVarint/readVarlong``.
    """
    shift = result = 0
    end = min(limit, pos + max_bytes)
    while pos < end:
        b = data[pos]
        pos += 1
        if shift == 63 and b & 0x7E:
            raise InvalidRecordError(f"varint out of range at byte {pos - 1}")
        result |= (b & 0x7F) << shift
        if b < 0x80:
            if max_bytes == 5 and result > 0xFFFFFFFF:
                raise InvalidRecordError(f"varint out of range at byte {pos - 1}")
            return (result >> 1) ^ -(result & 1), pos
        shift += 7
    if pos >= limit:
        raise InvalidRecordError(f"record data ends inside a varint at byte {pos}")
    raise InvalidRecordError(f"varint longer than {max_bytes} bytes at byte {pos - max_bytes}")


def walk_records_py(
    data: bytes | bytearray | memoryview, start: int, end: int, count: int, keyless: bool = False
) -> RecordSummary:
    """Walk ``count`` records in ``data[start:end]``; see the module docstring.

    The pure-Python walk (the reference for the C one). Raises ``InvalidRecordError``.
    The indexes of keyless records are collected only with ``keyless`` (compacted topics:
    most producers send no keys, and the list would cost more than the walk).
    """
    want_keyless = keyless
    varint = _varint
    pos = start
    min_ts = max_ts = 0
    keyless_indexes: list[int] = []
    for index in range(count):
        if pos >= end:
            raise InvalidRecordError(f"record batch holds {index} records, not the {count} its header claims")
        b = data[pos]
        if b < 0x80:
            length = (b >> 1) ^ -(b & 1)
            pos += 1
        else:
            length, pos = varint(data, pos, end, 5)
        body_end = pos + length
        if length < _MIN_BODY or body_end > end:
            raise InvalidRecordError(f"record {index} has an invalid length {length} (at byte {pos})")
        pos += 1  # attributes: no bits are defined for v2 records
        b = data[pos]
        if b < 0x80:
            ts = (b >> 1) ^ -(b & 1)
            pos += 1
        else:
            ts, pos = varint(data, pos, body_end, 10)
        if ts < min_ts:
            min_ts = ts
        elif ts > max_ts:
            max_ts = ts
        if index == 0:
            min_ts = max_ts = ts
        b = data[pos] if pos < body_end else 0x80
        if b < 0x80:
            offset_delta = (b >> 1) ^ -(b & 1)
            pos += 1
        else:
            offset_delta, pos = varint(data, pos, body_end, 5)
        if offset_delta != index:
            raise InvalidRecordError(f"record {index} has offset delta {offset_delta}, not {index}")
        key_length, pos = varint(data, pos, body_end, 5)
        if key_length >= 0:
            pos += key_length
        elif key_length == -1:
            if want_keyless:
                keyless_indexes.append(index)
        else:
            raise InvalidRecordError(f"record {index} has an invalid key length {key_length}")
        value_length, pos = varint(data, pos, body_end, 5)
        if value_length >= 0:
            pos += value_length
        elif value_length != -1:
            raise InvalidRecordError(f"record {index} has an invalid value length {value_length}")
        headers, pos = varint(data, pos, body_end, 5)
        if headers < 0 or headers * 2 > body_end - pos:
            raise InvalidRecordError(f"record {index} has an invalid header count {headers}")
        for _ in range(headers):
            n, pos = varint(data, pos, body_end, 5)
            if n < 0:
                raise InvalidRecordError(f"record {index} has a header with key length {n}")
            n, pos = varint(data, pos + n, body_end, 5)
            if n >= 0:
                pos += n
            elif n != -1:
                raise InvalidRecordError(f"record {index} has a header with value length {n}")
        if pos != body_end:
            raise InvalidRecordError(
                f"record {index} claims {length} bytes but its fields take {length + pos - body_end}"
            )
    if pos != end:
        raise InvalidRecordError(f"{end - pos} bytes follow the last of the {count} records the batch claims")
    return RecordSummary(min_ts, max_ts, keyless_indexes)


Walk = Callable[[bytes | bytearray | memoryview, int, int, int, bool], RecordSummary]


def _load_native(release_gil: bool) -> Walk | None:
    try:
        from seaway.broker.log._record_walk import walk as native
    except ImportError:
        return None

    def walk(
        data: bytes | bytearray | memoryview, start: int, end: int, count: int, keyless: bool = False
    ) -> RecordSummary:
        try:
            return RecordSummary._make(native(data, start, end, count, keyless, release_gil))
        except ValueError as exc:
            raise InvalidRecordError(str(exc)) from None

    return walk


_native = _load_native(False)
WALK_IS_NATIVE = _native is not None
"""Whether :func:`walk_records` runs in C (False: the Python walk, ~50x slower)."""

walk_records: Walk = _native if _native is not None else walk_records_py
"""The record walk the produce path uses: C when built, else :func:`walk_records_py`."""

_walk_unlocked: Walk = _load_native(True) or walk_records_py
"""The walk of decompressed records: the C walk without the GIL (they are walked on a
validation thread while the event loop goes on; see ``_record_walk.c``)."""

RawWalk = Callable[[bytes | bytearray | memoryview, int, int, int, bool], tuple[int, int, list[int]]]


def _raw_fallback(data: bytes | bytearray | memoryview, start: int, end: int, count: int, keyless: bool) -> (
    tuple[int, int, list[int]]
):
    try:
        return tuple(walk_records_py(data, start, end, count, keyless))  # type: ignore[return-value]
    except InvalidRecordError as exc:
        raise ValueError(str(exc)) from None


def _raw() -> RawWalk:
    try:
        from seaway.broker.log._record_walk import walk
    except ImportError:
        return _raw_fallback
    return walk


walk_records_raw: RawWalk = _raw()
"""The walk with the least overhead, for the one-batch fast path: a plain tuple, and
``ValueError`` (not InvalidRecordError) for a batch that disagrees with its header."""


def decompressed_cap(record_count: int, max_message_bytes: int) -> int:
    """The most a compressed batch's records may decompress to, from the batch's own claim.

    Each claimed record may take up to ``max(max.message.bytes, 1 MiB)`` (the largest
    record a producer sends, uncompressed, is bounded by its ``max.request.size``, which
    is meant to match the broker's limit), and a whole batch at most
    :data:`~seaway.protocol.compression.MAX_DECOMPRESSED_BYTES` (64 MiB): a one-record
    batch inflating to a gigabyte is cut off after 1 MiB.
    """
    return min(MAX_DECOMPRESSED_BYTES, max(record_count, 0) * max(max_message_bytes, 1 << 20))


def inspect_batch(
    buf: bytes | bytearray | memoryview, header: BatchHeader, max_message_bytes: int, *, keyless: bool = False
) -> RecordSummary:
    """Check the records of the (CRC-checked) batch at ``header`` against it; their summary.

    Uncompressed records are walked where they lie; compressed ones are first inflated
    into a buffer capped by :func:`decompressed_cap`. Raises ``InvalidRecordError``,
    ``CorruptMessageError`` (undecodable), ``MessageTooLargeError`` (past the cap) or
    ``UnsupportedCompressionTypeError``. ``keyless``: collect the keyless records' indexes.
    """
    count = header.record_count
    start = header.position + BATCH_HEADER_SIZE
    end = header.position + header.size
    if header.compression == Compression.NONE:
        _check_count(count, end - start)
        return walk_records(buf, start, end, count, keyless)
    return inspect_compressed(buf, header, max_message_bytes, keyless=keyless)[0]


def inspect_compressed(
    buf: bytes | bytearray | memoryview,
    header: BatchHeader,
    max_message_bytes: int,
    *,
    keyless: bool = False,
    limit: int | None = None,
) -> tuple[RecordSummary, int]:
    """:func:`inspect_batch` of a compressed batch, and the bytes its records decompressed to.

    The size is what a connection's decompression quota is charged
    (``connections.max.decompressed.bytes.per.second``). Neither the decompression nor the
    walk holds the GIL, so this runs on a validation thread while the event loop goes on.
    ``limit`` stops the decompression earlier than the batch's own cap: past it,
    ``DecompressedTooLargeError`` whether or not the batch is within its cap (the caller
    then knows it is big, and tries again without a limit).
    """
    count = header.record_count
    start = header.position + BATCH_HEADER_SIZE
    end = header.position + header.size
    cap = decompressed_cap(count, max_message_bytes)
    _check_count(count, cap)
    room = cap if limit is None else min(cap, limit)
    with memoryview(buf)[start:end] as payload, decompressed(header.compression, payload, max_bytes=room) as data:
        size = len(data)
        _check_count(count, size)
        return _walk_unlocked(data, 0, size, count, keyless), size


def _check_count(count: int, size: int) -> None:
    """The cheap invariant first: ``count`` records of at least 7 bytes must fit ``size``."""
    if count <= 0 or count > size // MIN_RECORD_BYTES:
        raise InvalidRecordError(
            f"record batch claims {count} records, but its {size} bytes of records hold at most "
            f"{size // MIN_RECORD_BYTES}"
        )
