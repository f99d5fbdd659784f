"""Record batch v2 headers: parse, check and stamp them without decoding records.

The broker's produce path only ever touches the fixed 61-byte header; records stay
opaque bytes, so a batch is stored and later served exactly as the producer sent it.

Byte layout of a v2 record batch (big-endian)::

    offset  size  field
    0       8     baseOffset              assigned by the broker on append
    8       4     batchLength             bytes after this field (= total size - 12)
    12      4     partitionLeaderEpoch    stamped by the broker (not covered by the CRC)
    16      1     magic                   must be 2
    17      4     crc                     CRC32C (Castagnoli) of bytes [21, end)
    21      2     attributes              bits 0-2 compression, 3 timestamp type,
                                          4 transactional, 5 control, 6 delete horizon
    23      4     lastOffsetDelta
    27      8     baseTimestamp           (the delete horizon when bit 6 is set)
    35      8     maxTimestamp
    43      8     producerId
    51      2     producerEpoch
    53      4     baseSequence
    57      4     recordCount
    61      ...   records (compressed as a whole when the codec is not none)
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import NamedTuple

from crc32c import crc32c
from seaway.errors import SeawayError

__all__ = [
    "BATCH_HEADER_SIZE",
    "CRC_START",
    "LOG_OVERHEAD",
    "MAGIC_V2",
    "BatchHeader",
    "Compression",
    "CorruptBatchError",
    "batch_crc",
    "iter_batch_headers",
    "parse_batch_header",
    "set_base_offset",
    "set_partition_leader_epoch",
    "stamp_log_append_time",
]

BATCH_HEADER_SIZE = 61
LOG_OVERHEAD = 12  # baseOffset + batchLength: the part batchLength does not count
CRC_START = 21
MAGIC_V2 = 2

ATTR_COMPRESSION_MASK = 0x07
ATTR_TIMESTAMP_TYPE = 0x08
ATTR_TRANSACTIONAL = 0x10
ATTR_CONTROL = 0x20
ATTR_DELETE_HORIZON = 0x40

_HEADER = struct.Struct(">qiibIhiqqqhii")
_BASE_OFFSET = struct.Struct(">q")
_INT32 = struct.Struct(">i")
_UINT32 = struct.Struct(">I")
_INT16 = struct.Struct(">h")
_INT64 = struct.Struct(">q")


class Compression:
    """Codec ids carried in the low three attribute bits."""

    NONE = 0
    GZIP = 1
    SNAPPY = 2
    LZ4 = 3
    ZSTD = 4


class CorruptBatchError(SeawayError):
    """Bytes that claim to be a record batch but are not a valid v2 batch.

    ``reason`` is one of ``"truncated"``, ``"magic"``, ``"length"``, ``"crc"``, so
    callers can map it to Kafka's CORRUPT_MESSAGE, INVALID_RECORD or
    UNSUPPORTED_VERSION error codes (an old magic is a format problem, not corruption).
    """

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


class BatchHeader(NamedTuple):
    """The 61-byte header of a v2 batch, as parsed; ``position`` is where it starts."""

    base_offset: int
    batch_length: int
    partition_leader_epoch: int
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    record_count: int
    position: int

    @property
    def size(self) -> int:
        """Total bytes of the batch, header included."""
        return self.batch_length + LOG_OVERHEAD

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def next_offset(self) -> int:
        return self.base_offset + self.last_offset_delta + 1

    @property
    def compression(self) -> int:
        return self.attributes & ATTR_COMPRESSION_MASK

    @property
    def is_log_append_time(self) -> bool:
        return bool(self.attributes & ATTR_TIMESTAMP_TYPE)

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & ATTR_TRANSACTIONAL)

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & ATTR_CONTROL)

    @property
    def has_delete_horizon(self) -> bool:
        return bool(self.attributes & ATTR_DELETE_HORIZON)

    @property
    def last_sequence(self) -> int:
        if self.base_sequence < 0:
            return -1
        return (self.base_sequence + self.last_offset_delta) & 0x7FFFFFFF


def parse_batch_header(buf: bytes | bytearray | memoryview, pos: int = 0) -> BatchHeader:
    """Parse the header at ``buf[pos:]``; checks magic and that the batch fits in ``buf``.

    The CRC is not checked here (see :func:`batch_crc`), so readers of already
    validated segments pay only for the header.
    """
    if len(buf) - pos < BATCH_HEADER_SIZE:
        if len(buf) - pos >= 17 and buf[pos + 16] != MAGIC_V2:
            raise CorruptBatchError("magic", f"unsupported record batch magic {buf[pos + 16]}")
        raise CorruptBatchError("truncated", "record batch header is truncated")
    fields = _HEADER.unpack_from(buf, pos)
    if fields[3] != MAGIC_V2:
        raise CorruptBatchError("magic", f"unsupported record batch magic {fields[3]} (only v2 is served)")
    batch_length = fields[1]
    if batch_length < BATCH_HEADER_SIZE - LOG_OVERHEAD:
        raise CorruptBatchError("length", f"record batch length {batch_length} is smaller than its header")
    if pos + batch_length + LOG_OVERHEAD > len(buf):
        raise CorruptBatchError("truncated", "record batch is truncated")
    return BatchHeader._make((*fields, pos))


def batch_crc(buf: bytes | bytearray | memoryview, header: BatchHeader) -> int:
    """CRC32C of the batch body that ``header.crc`` must equal."""
    start = header.position + CRC_START
    end = header.position + header.size
    return int(crc32c(memoryview(buf)[start:end]))


def iter_batch_headers(
    buf: bytes | bytearray | memoryview, *, verify_crc: bool = True
) -> Iterator[BatchHeader]:
    """Yield each batch header in ``buf`` in order; raises on the first bad batch.

    ``buf`` must hold whole batches only (a produce request's records field).
    """
    pos = 0
    end = len(buf)
    while pos < end:
        header = parse_batch_header(buf, pos)
        if verify_crc and batch_crc(buf, header) != header.crc:
            raise CorruptBatchError("crc", f"record batch at byte {pos} fails its CRC32C check")
        yield header
        pos += header.size


def set_base_offset(buf: bytearray | memoryview, pos: int, base_offset: int) -> None:
    """Stamp the broker-assigned base offset (outside the CRC, so no re-checksum)."""
    _BASE_OFFSET.pack_into(buf, pos, base_offset)


def set_partition_leader_epoch(buf: bytearray | memoryview, pos: int, epoch: int) -> None:
    """Stamp the leader epoch (outside the CRC)."""
    _INT32.pack_into(buf, pos + 12, epoch)


def stamp_log_append_time(buf: bytearray | memoryview, header: BatchHeader, timestamp_ms: int) -> None:
    """Switch a batch to LogAppendTime: set the attribute bit and maxTimestamp, re-checksum.

    Kafka clients read every record's timestamp as ``maxTimestamp`` for such batches,
    so records themselves are left untouched.
    """
    pos = header.position
    _INT16.pack_into(buf, pos + 21, header.attributes | ATTR_TIMESTAMP_TYPE)
    _INT64.pack_into(buf, pos + 35, timestamp_ms)
    crc = int(crc32c(memoryview(buf)[pos + CRC_START : pos + header.size]))
    _UINT32.pack_into(buf, pos + 17, crc)
