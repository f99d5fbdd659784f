"""Produce-side validation of record batches, per batch, before a byte is written.

Everything here runs before a byte is written, so a produce request is appended whole or
not at all. Checks, in order, with the Kafka error each maps to:

- header parses, magic 2 ............................ UNSUPPORTED_FOR_MESSAGE_FORMAT (43)
- length field sane, batch not cut short ............ CORRUPT_MESSAGE (2)
- batch size <= ``max.message.bytes`` ................ MESSAGE_TOO_LARGE (10)
- CRC32C over the batch body ......................... CORRUPT_MESSAGE (2)
- offsets/count consistent, no client control batch . INVALID_RECORD (87)
- CreateTime timestamps within ``message.timestamp.before/after.max.ms`` INVALID_TIMESTAMP (32)
- the records agree with the header (:mod:`.record_check`: count, offset deltas
  0..count-1, record lengths that add up exactly, sane varints) ... INVALID_RECORD (87)
- compressed records: undecodable ..................... CORRUPT_MESSAGE (2);
  inflating past :func:`~.record_check.decompressed_cap` MESSAGE_TOO_LARGE (10)
- every record's CreateTime timestamp within the same limits ...... INVALID_TIMESTAMP (32)
- compacted topics: every record has a key ....... INVALID_RECORD (87) + record_errors

Compressed batches are decompressed (bounded) and walked on every topic, as Kafka's
LogValidator does: a decompression bomb is refused on a delete-policy topic too, so it
is never stored for a consumer or a later compaction to trip over.

This runs once per partition of every produce request, so the common case (one
uncompressed batch that passes, with or without a producer id) is one call into C
(:func:`single_batch`: the header unpack, the CRC32C, the timestamp comparisons and the
record walk); anything unusual goes to the general checks below, which raise the precise
error.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator
from typing import NamedTuple

from crc32c import crc32c
from seaway.broker.log.cleaner_keys import KeylessRecordError, keyless_message
from seaway.broker.log.config import LogConfig
from seaway.broker.log.record_check import (
    MIN_RECORD_BYTES,
    RecordSummary,
    decompressed_cap,
    inspect_batch,
    inspect_compressed,
    walk_records_raw,
)
from seaway.protocol.errors import (
    CorruptMessageError,
    InvalidRecordError,
    InvalidTimestampError,
    MessageTooLargeError,
    UnsupportedForMessageFormatError,
)
from seaway.protocol.record_batch import (
    ATTR_COMPRESSION_MASK,
    ATTR_CONTROL,
    BATCH_HEADER_SIZE,
    CRC_START,
    LOG_OVERHEAD,
    MAGIC_V2,
    BatchHeader,
    CorruptBatchError,
    parse_batch_header,
)

__all__ = [
    "BatchLimits",
    "Inflate",
    "batch_limits",
    "has_compressed_batch",
    "single_batch",
    "single_batch_py",
    "validate_batches",
    "validation_steps",
]

_HEADER = struct.Struct(">qiibIhiqqqhii")  # the BatchHeader fields, in order
_LENGTH = struct.Struct(">i")  # at byte 8
_ATTRIBUTES = struct.Struct(">h")  # at byte 21
_new_tuple = tuple.__new__
_MIN_LENGTH = BATCH_HEADER_SIZE - LOG_OVERHEAD


def validate_batches(
    buf: bytes | bytearray | memoryview,
    config: LogConfig,
    now_ms: int,
    *,
    allow_control: bool = False,
    where: str = "",
) -> list[BatchHeader]:
    """Headers of every batch in ``buf`` (positions relative to ``buf``), or raise.

    ``allow_control`` admits control batches (transaction markers written by the broker).
    ``where`` names the partition in the keyless-record error of compacted topics.
    ``buf`` is only read.
    """
    headers: list[BatchHeader] = []
    for inflate in validation_steps(buf, config, now_ms, headers, allow_control=allow_control, where=where):
        inflate.result = inflate.run()  # a compressed batch, decompressed here
    return headers


class Inflate:
    """A compressed batch :func:`validation_steps` needs decompressed and walked.

    Its driver runs :meth:`run` wherever it likes (the produce path: on a worker thread,
    first with a ``limit``), sets :attr:`result` and asks for the next step; or, when
    ``run`` raises, raises that instead (validation has nothing more to check then).
    """

    __slots__ = ("buf", "header", "keyless", "max_message_bytes", "result")

    def __init__(self, buf: memoryview, header: BatchHeader, max_message_bytes: int, keyless: bool) -> None:
        self.buf = buf
        self.header = header
        self.max_message_bytes = max_message_bytes
        self.keyless = keyless
        self.result: tuple[RecordSummary, int] | None = None
        """What :meth:`run` returned: set by the driver before the next step."""

    @property
    def cap(self) -> int:
        """The most the batch may unpack to (:func:`~.record_check.decompressed_cap`)."""
        return decompressed_cap(self.header.record_count, self.max_message_bytes)

    def run(self, limit: int | None = None) -> tuple[RecordSummary, int]:
        """:func:`~.record_check.inspect_compressed`: the summary and the bytes unpacked.

        Needs no GIL for its long parts (any thread may run it). Past ``limit`` bytes it
        raises ``DecompressedTooLargeError`` even when the batch is within its cap.
        """
        return inspect_compressed(self.buf, self.header, self.max_message_bytes, keyless=self.keyless, limit=limit)


def validation_steps(
    buf: bytes | bytearray | memoryview,
    config: LogConfig,
    now_ms: int,
    headers: list[BatchHeader],
    *,
    allow_control: bool = False,
    where: str = "",
) -> Iterator[Inflate]:
    """:func:`validate_batches` with each compressed batch's decompression handed out.

    Checks batch after batch and appends each header to ``headers``; at a compressed
    batch it yields an :class:`Inflate` and, at the next step, goes on with its
    :attr:`Inflate.result`. So the produce path decompresses on worker threads, charges
    each connection's quota and waits on it, while everything else (header, CRC,
    timestamps, keys) runs here as before: the checks, their order and the errors are
    exactly :func:`validate_batches`', which drives this inline.
    """
    pos, end = 0, len(buf)
    view = buf if isinstance(buf, memoryview) else memoryview(buf)
    max_bytes = config.max_message_bytes
    check_time = not config.is_log_append_time
    after_max, before_max = config.message_timestamp_after_max_ms, config.message_timestamp_before_max_ms
    keyless: list[int] = []
    first_record = 0
    compacts = config.compacts
    while pos < end:
        if end - pos < BATCH_HEADER_SIZE:
            _raise_unparsable(buf, pos)
        fields = _HEADER.unpack_from(buf, pos)
        length = fields[1]
        if fields[3] != MAGIC_V2 or length < _MIN_LENGTH or pos + length + LOG_OVERHEAD > end:
            _raise_unparsable(buf, pos)
        size = length + LOG_OVERHEAD
        if size > max_bytes:
            raise MessageTooLargeError(f"record batch of {size} bytes exceeds max.message.bytes {max_bytes}")
        if crc32c(view[pos + CRC_START : pos + size]) != fields[4]:
            raise CorruptMessageError(f"record batch at byte {pos} fails its CRC32C check")
        header: BatchHeader = _new_tuple(BatchHeader, (*fields, pos))
        _, _, _, _, _, attributes, last_delta, base_ts, max_ts, _, _, _, count = fields
        oldest = base_ts if base_ts < max_ts else max_ts
        if (
            last_delta < 0
            or count != last_delta + 1
            or (attributes & ATTR_CONTROL and not allow_control)
            or (check_time and max_ts >= 0 and (
                max_ts - now_ms > after_max or (oldest >= 0 and now_ms - oldest > before_max)
            ))
        ):
            _check_batch(header, config, now_ms, allow_control)  # raises the precise error
        if attributes & ATTR_COMPRESSION_MASK:
            inflate = Inflate(view, header, max_bytes, compacts)
            yield inflate
            if inflate.result is None:
                raise RuntimeError("validation_steps resumed without the Inflate's result")
            summary = inflate.result[0]
        else:
            summary = inspect_batch(view, header, max_bytes, keyless=compacts)
        if check_time:
            _check_record_times(summary, base_ts, now_ms, after_max, before_max)
        if summary.keyless:
            keyless.extend(first_record + i for i in summary.keyless)
        first_record += count
        headers.append(header)
        pos += size
    if keyless:
        # Record indexes count across the whole request, which holds one batch per
        # partition for every real client.
        message = keyless_message(where)
        raise KeylessRecordError(message, [(i, message) for i in keyless])


def has_compressed_batch(buf: bytes | bytearray | memoryview) -> bool:
    """Whether a batch of ``buf`` claims compression (as far as its framing holds).

    The produce path's test for driving :func:`validation_steps` itself: one attributes
    field read per batch, nothing checked (the steps check everything).
    """
    pos, end = 0, len(buf)
    while end - pos >= BATCH_HEADER_SIZE:
        length, attributes = _LENGTH.unpack_from(buf, pos + 8)[0], _ATTRIBUTES.unpack_from(buf, pos + 21)[0]
        if attributes & ATTR_COMPRESSION_MASK:
            return True
        if length < _MIN_LENGTH:
            return False
        pos += length + LOG_OVERHEAD
    return False


class BatchLimits(NamedTuple):
    """A log config's limits in the order :func:`single_batch` takes them after ``now_ms``.

    Gathered once per config (``PartitionLog`` keeps one), since the produce path checks
    every partition of every request against them.
    """

    max_message_bytes: int
    after_max_ms: int
    before_max_ms: int
    check_time: bool
    """CreateTime timestamps are checked (not on LogAppendTime logs)."""
    keyless_refused: bool
    """Compacted topics: a keyless record makes the batch not the common case."""


def batch_limits(config: LogConfig) -> BatchLimits:
    return BatchLimits(config.max_message_bytes, config.message_timestamp_after_max_ms,
                       config.message_timestamp_before_max_ms, not config.is_log_append_time, config.compacts)


def single_batch_py(
    buf: bytes | bytearray | memoryview, now_ms: int, max_message_bytes: int, after_max: int, before_max: int,
    check_time: bool, keyless_refused: bool,
) -> BatchHeader | None:
    """The header of ``buf`` when it is the produce path's common case, else None.

    The common case: exactly one uncompressed, non-control batch that passes every check
    of :func:`validate_batches` with these limits (and, when ``keyless_refused``, holds no
    keyless record). Its producer id, epoch and sequence are returned, not judged: the
    producer state does that. None means "not that case", never "invalid": the caller
    then runs :func:`validate_batches`, which raises the precise error or returns the
    headers of the unusual-but-valid request. Nothing is raised and ``buf`` is only read.

    The reference for the C ``check_batch`` (``_record_walk.c``), which the produce path
    uses: one call for the unpack, the CRC, the record walk and the timestamps.
    """
    end = len(buf)
    if end < BATCH_HEADER_SIZE:
        return None
    fields = _HEADER.unpack_from(buf, 0)
    _, length, _, magic, crc, attributes, last_delta, base_ts, max_ts, _, _, _, count = fields
    if (
        length + LOG_OVERHEAD != end
        or magic != MAGIC_V2
        or length < _MIN_LENGTH
        or end > max_message_bytes
        or last_delta < 0
        or count != last_delta + 1
        or attributes & (ATTR_CONTROL | ATTR_COMPRESSION_MASK)
        or count > (end - BATCH_HEADER_SIZE) // MIN_RECORD_BYTES
    ):
        return None
    if check_time and max_ts >= 0:
        oldest = base_ts if base_ts < max_ts else max_ts
        if max_ts - now_ms > after_max or (oldest >= 0 and now_ms - oldest > before_max):
            return None
    view = buf if isinstance(buf, memoryview) else memoryview(buf)
    if crc32c(view[CRC_START:]) != crc:
        return None
    try:
        min_delta, max_delta, keyless = walk_records_raw(buf, BATCH_HEADER_SIZE, end, count, keyless_refused)
    except ValueError:
        return None
    if keyless:
        return None
    if check_time:  # every record's timestamp, from the walk's range (see _check_record_times)
        newest, oldest = base_ts + max_delta, base_ts + min_delta
        if (newest >= 0 and newest - now_ms > after_max) or (oldest >= 0 and now_ms - oldest > before_max):
            return None
    header: BatchHeader = _new_tuple(BatchHeader, (*fields, 0))
    return header


SingleBatch = Callable[[bytes | bytearray | memoryview, int, int, int, int, bool, bool], BatchHeader | None]


def _native_single_batch() -> SingleBatch | None:
    try:
        from seaway.broker.log._record_walk import check_batch, set_types
    except ImportError:
        return None
    set_types(BatchHeader, crc32c)
    return check_batch


single_batch: SingleBatch = _native_single_batch() or single_batch_py
"""``single_batch(buf, now_ms, *batch_limits(config))``: :func:`single_batch_py` in C when built."""


def _check_record_times(summary: RecordSummary, base_ts: int, now_ms: int, after_max: int, before_max: int) -> None:
    """Kafka checks every record's CreateTime timestamp; the walk gave their range."""
    newest = base_ts + summary.max_timestamp_delta
    oldest = base_ts + summary.min_timestamp_delta
    if newest >= 0 and newest - now_ms > after_max:
        raise InvalidTimestampError(
            f"record timestamp {newest} is more than message.timestamp.after.max.ms "
            f"{after_max} ahead of the broker clock {now_ms}"
        )
    if oldest >= 0 and now_ms - oldest > before_max:
        raise InvalidTimestampError(
            f"record timestamp {oldest} is more than message.timestamp.before.max.ms "
            f"{before_max} behind the broker clock {now_ms}"
        )


def _raise_unparsable(buf: bytes | bytearray | memoryview, pos: int) -> None:
    """Raise Kafka's error for a header that does not parse (bad magic, length, truncation)."""
    try:
        parse_batch_header(buf, pos)
    except CorruptBatchError as exc:
        if exc.reason == "magic":
            raise UnsupportedForMessageFormatError(str(exc)) from None
        raise CorruptMessageError(f"{exc} (at byte {pos})") from None
    raise CorruptMessageError(f"record batch header at byte {pos} does not parse")  # pragma: no cover


def _check_batch(header: BatchHeader, config: LogConfig, now_ms: int, allow_control: bool) -> None:
    if header.last_offset_delta < 0:
        raise InvalidRecordError("record batch has an invalid offset range")
    if header.record_count <= 0 or header.record_count != header.last_offset_delta + 1:
        raise InvalidRecordError(
            f"record batch count {header.record_count} does not match its offset range "
            f"{header.last_offset_delta + 1}"
        )
    if header.is_control and not allow_control:
        raise InvalidRecordError("clients are not allowed to write control records")
    if config.is_log_append_time or header.max_timestamp < 0:
        return
    if header.max_timestamp - now_ms > config.message_timestamp_after_max_ms:
        raise InvalidTimestampError(
            f"timestamp {header.max_timestamp} is more than message.timestamp.after.max.ms "
            f"{config.message_timestamp_after_max_ms} ahead of the broker clock {now_ms}"
        )
    oldest = min(header.base_timestamp, header.max_timestamp)
    if oldest >= 0 and now_ms - oldest > config.message_timestamp_before_max_ms:
        raise InvalidTimestampError(
            f"timestamp {oldest} is more than message.timestamp.before.max.ms "
            f"{config.message_timestamp_before_max_ms} behind the broker clock {now_ms}"
        )
