"""The record batch codecs (gzip, snappy, lz4, zstd), in the wire forms Kafka clients use.

A compressed v2 batch compresses everything after its 61-byte header as one payload.
Each codec has a container that clients agree on, and this module writes the one every
client reads and reads every one a client writes:

gzip
    A standard gzip stream (RFC 1952). Concatenated members decode too.
snappy
    *Written* in xerial snappy-java's stream framing, which the Java client writes and
    every client reads: ``b"\\x82SNAPPY\\x00"``, two big-endian int32s (version, compat,
    both 1), then blocks of ``int32 length + raw snappy`` each holding up to 32 KiB of
    input. *Read* in that framing (recognised by its magic; the two ints are ignored
    because some producers write them little-endian) or as one raw snappy block, which
    is what librdkafka writes.
lz4
    The standard LZ4 frame format. Written with the profile of Kafka's own
    ``KafkaLZ4BlockOutputStream``: independent 64 KiB blocks and no block checksum,
    content size or content checksum (the Java reader rejects linked blocks, which
    cramjam's one-shot frame compressor produces). Read with any frame options.
zstd
    A standard zstd frame; frames without a content size (librdkafka's, streamed) and
    several concatenated frames decode too.

Failures translate at this boundary: an unknown codec id raises
``UnsupportedCompressionTypeError``, undecodable bytes raise ``CorruptMessageError``
(both from :mod:`seaway.protocol.errors`), never a cramjam exception.
"""

from __future__ import annotations

import struct

import cramjam
from seaway.protocol.errors import CorruptMessageError, UnsupportedCompressionTypeError
from seaway.protocol.record_batch import Compression

__all__ = ["CODEC_NAMES", "compress", "decompress"]

CODEC_NAMES: dict[int, str] = {
    Compression.NONE: "none",
    Compression.GZIP: "gzip",
    Compression.SNAPPY: "snappy",
    Compression.LZ4: "lz4",
    Compression.ZSTD: "zstd",
}

_XERIAL_MAGIC = b"\x82SNAPPY\x00"
_XERIAL_HEADER = _XERIAL_MAGIC + struct.pack(">ii", 1, 1)
_XERIAL_HEADER_SIZE = 16
_XERIAL_BLOCK = 32 * 1024
_INT32 = struct.Struct(">i")

# LZ4 frame: magic, FLG (version 01, independent blocks), BD (64 KiB max block), and HC,
# the second byte of xxh32(FLG, BD); constant because FLG and BD are.
_LZ4_HEADER = b"\x04\x22\x4d\x18\x60\x40\x82"
_LZ4_BLOCK = 64 * 1024
_LZ4_UNCOMPRESSED = 0x80000000
_LZ4_END_MARK = b"\x00\x00\x00\x00"
_UINT32_LE = struct.Struct("<I")

_ZSTD_DEFAULT_LEVEL = 3  # Kafka's default (compression.zstd.level); cramjam's own is higher


def _unsupported(codec: int) -> UnsupportedCompressionTypeError:
    return UnsupportedCompressionTypeError(f"unsupported record batch compression codec {codec}")


def compress(codec: int, data: bytes | bytearray | memoryview, *, level: int | None = None) -> bytes:
    """Compress a batch payload with ``codec`` (a :class:`Compression` id).

    ``level`` is the codec's own level (gzip 1-9, lz4 1-12 for high compression, zstd
    1-22); ``None`` takes Kafka's defaults. Snappy has no levels.
    """
    if codec == Compression.NONE:
        return bytes(data)
    if codec == Compression.GZIP:
        return bytes(cramjam.gzip.compress(data, level=level))
    if codec == Compression.SNAPPY:
        return _xerial_compress(memoryview(data))
    if codec == Compression.LZ4:
        return _lz4_compress(memoryview(data), level)
    if codec == Compression.ZSTD:
        return bytes(cramjam.zstd.compress(data, level=_ZSTD_DEFAULT_LEVEL if level is None else level))
    raise _unsupported(codec)


def decompress(codec: int, data: bytes | bytearray | memoryview) -> bytes:
    """Decompress a batch payload written by any Kafka client with ``codec``."""
    try:
        if codec == Compression.NONE:
            return bytes(data)
        if codec == Compression.GZIP:
            return bytes(cramjam.gzip.decompress(data))
        if codec == Compression.SNAPPY:
            if bytes(data[:8]) == _XERIAL_MAGIC:
                return _xerial_decompress(memoryview(data))
            return bytes(cramjam.snappy.decompress_raw(data))
        if codec == Compression.LZ4:
            return bytes(cramjam.lz4.decompress(data))
        if codec == Compression.ZSTD:
            return bytes(cramjam.zstd.decompress(data))
    except (cramjam.DecompressionError, ValueError, OSError) as exc:
        raise CorruptMessageError(f"cannot decompress {CODEC_NAMES[codec]} record data: {exc}") from exc
    raise _unsupported(codec)


def _xerial_compress(data: memoryview) -> bytes:
    parts = [_XERIAL_HEADER]
    for start in range(0, len(data), _XERIAL_BLOCK):
        block = cramjam.snappy.compress_raw(data[start : start + _XERIAL_BLOCK])
        parts.append(_INT32.pack(len(block)))
        parts.append(bytes(block))
    return b"".join(parts)


def _xerial_decompress(data: memoryview) -> bytes:
    parts: list[bytes] = []
    pos = _XERIAL_HEADER_SIZE
    end = len(data)
    if end < pos:
        raise CorruptMessageError("xerial snappy stream header is truncated")
    while pos < end:
        if end - pos < 4:
            raise CorruptMessageError("xerial snappy block length is truncated")
        (size,) = _INT32.unpack_from(data, pos)
        pos += 4
        if size < 0 or pos + size > end:
            raise CorruptMessageError(f"xerial snappy block of {size} bytes overruns the stream")
        parts.append(bytes(cramjam.snappy.decompress_raw(data[pos : pos + size])))
        pos += size
    return b"".join(parts)


def _lz4_compress(data: memoryview, level: int | None) -> bytes:
    parts = [_LZ4_HEADER]
    for start in range(0, len(data), _LZ4_BLOCK):
        chunk = data[start : start + _LZ4_BLOCK]
        if level is None:
            block = cramjam.lz4.compress_block(chunk, store_size=False)
        else:
            block = cramjam.lz4.compress_block(
                chunk, mode="high_compression", compression=level, store_size=False
            )
        if len(block) < len(chunk):
            parts.append(_UINT32_LE.pack(len(block)))
            parts.append(bytes(block))
        else:  # incompressible: store raw, flagged by the size's high bit
            parts.append(_UINT32_LE.pack(len(chunk) | _LZ4_UNCOMPRESSED))
            parts.append(bytes(chunk))
    parts.append(_LZ4_END_MARK)
    return b"".join(parts)
