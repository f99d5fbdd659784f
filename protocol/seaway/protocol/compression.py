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

Every decompression is bounded. ``decompress`` takes ``max_bytes`` (default
:data:`MAX_DECOMPRESSED_BYTES`) and never produces more: the codec writes into an output
buffer of that size (cramjam's ``decompress_into``, which stops with an error when the
buffer is full, instead of ``decompress``, which grows its output without limit), so a
"decompression bomb" (32 KB of zstd that inflates to 1 GiB) costs at most ``max_bytes``
of memory and the time to produce them, then raises :class:`DecompressedTooLargeError`.
The output buffer is a per-thread private anonymous ``mmap`` of 64 MiB, reused: the kernel
hands out pages as they are first written, and pages past the first 4 MiB are marked free
after each use (``MADV_FREE``), so the cap costs memory only while data really fills it
(``_Scratch``).

Failures translate at this boundary: an unknown codec id raises
``UnsupportedCompressionTypeError``, undecodable bytes raise ``CorruptMessageError``,
output past ``max_bytes`` raises ``DecompressedTooLargeError`` (a
``MessageTooLargeError``, Kafka's MESSAGE_TOO_LARGE; all from or built on
:mod:`seaway.protocol.errors`), never a cramjam exception.
"""

from __future__ import annotations

import contextlib
import ctypes
import mmap
import struct
import threading
from collections.abc import Callable, Iterator

import cramjam
from seaway.protocol.errors import CorruptMessageError, MessageTooLargeError, UnsupportedCompressionTypeError
from seaway.protocol.record_batch import Compression

__all__ = [
    "CODEC_NAMES",
    "MAX_DECOMPRESSED_BYTES",
    "DecompressedTooLargeError",
    "compress",
    "decompress",
    "decompressed",
]

MAX_DECOMPRESSED_BYTES = 64 * 1024 * 1024
"""The default (and the broker's hard) cap on one batch payload's decompressed size."""

_FULL_BUFFER = "failed to write whole buffer"  # cramjam's message when the output buffer is full


class DecompressedTooLargeError(MessageTooLargeError):
    """A payload that decompresses to more than the cap it was allowed (MESSAGE_TOO_LARGE)."""

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


def decompress(
    codec: int, data: bytes | bytearray | memoryview, *, max_bytes: int = MAX_DECOMPRESSED_BYTES
) -> bytes:
    """Decompress a batch payload written by any Kafka client with ``codec``.

    Produces at most ``max_bytes`` (up to :data:`MAX_DECOMPRESSED_BYTES`): more raises
    :class:`DecompressedTooLargeError` (see the module docstring), having used at most
    that much memory.
    """
    if codec == Compression.NONE:
        if len(data) > max_bytes:
            raise _too_large(codec, max_bytes)
        return bytes(data)
    with decompressed(codec, data, max_bytes=max_bytes) as out:
        return bytes(out)


@contextlib.contextmanager
def decompressed(
    codec: int, data: bytes | bytearray | memoryview, *, max_bytes: int = MAX_DECOMPRESSED_BYTES
) -> Iterator[memoryview]:
    """Decompress into this thread's scratch area; the output as a view, valid in the block.

    What :func:`decompress` does without the copy, for a caller that only reads the
    output once (the produce path's record walk). ``max_bytes`` is capped at
    :data:`MAX_DECOMPRESSED_BYTES`.
    """
    if codec == Compression.NONE:
        if len(data) > max_bytes:
            raise _too_large(codec, max_bytes)
        with memoryview(data) as plain:
            yield plain
        return
    if codec not in CODEC_NAMES:
        raise _unsupported(codec)
    size = min(max(0, max_bytes), MAX_DECOMPRESSED_BYTES)
    scratch = _scratch()
    with memoryview(scratch.area) as area, area[:size] as out:
        n = 0
        try:
            n = _decompress_into(codec, data, out)
            with out[:n] as result:
                yield result
        finally:
            scratch.release(n if n else size)


class _Scratch:
    """One thread's decompression area: an anonymous mmap of MAX_DECOMPRESSED_BYTES.

    A fresh mmap (or a zero-filled bytearray) per batch costs more than decompressing a
    256 KiB batch; one area per thread is reused instead. Its pages are only touched as
    output is written, and whatever a large output touched beyond :data:`_KEEP_BYTES` is
    marked free afterwards (``MADV_FREE``): the kernel takes those pages back as soon as it
    needs memory, so a bomb's 64 MiB are not held, and until then the next large output
    reuses them without a page fault each. (They still count in the process's RSS until
    taken.) That halves the CPU a 57 MB batch costs: 19 ms instead of 31 with
    ``MADV_DONTNEED``, whose next use faults in and zeroes every page again.

    The mapping is private: ``MADV_FREE`` does not apply to a shared one, and
    ``MADV_DONTNEED`` on a shared anonymous mapping (Python's default) only unmaps the
    pages, which stay allocated in shared memory.
    """

    def __init__(self) -> None:
        self.area = mmap.mmap(-1, MAX_DECOMPRESSED_BYTES, flags=mmap.MAP_PRIVATE)
        self.busy = False

    def release(self, used: int) -> None:
        self.busy = False
        if used > _KEEP_BYTES:
            end = min(MAX_DECOMPRESSED_BYTES, -(-used // mmap.PAGESIZE) * mmap.PAGESIZE)
            _free_pages(self.area, _KEEP_BYTES, end - _KEEP_BYTES)


class _OwnScratch(_Scratch):
    """A one-off area for a nested use (a caller decompressing inside a ``decompressed`` block)."""

    def release(self, used: int) -> None:
        self.area.close()


_KEEP_BYTES = 4 * 1024 * 1024
_local = threading.local()


def _load_madvise() -> Callable[[int, int, int], int] | None:
    try:
        madvise = ctypes.CDLL(None, use_errno=True).madvise
    except (OSError, AttributeError):  # pragma: no cover - no libc madvise (not Linux)
        return None
    madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    madvise.restype = ctypes.c_int
    return madvise


_madvise = _load_madvise()


_MADV_FREE: int = getattr(mmap, "MADV_FREE", mmap.MADV_DONTNEED)


def _free_pages(area: mmap.mmap, start: int, length: int) -> None:
    """Mark ``area[start:start + length]``'s pages free (``MADV_FREE``), without the GIL.

    ``mmap.madvise`` holds the GIL, and advising the 60 MiB a bomb touched takes
    milliseconds: time the broker's event loop thread would wait out while a validation
    thread releases its scratch area. A ctypes call releases the GIL. Where the kernel
    refuses ``MADV_FREE`` (before Linux 4.5) the pages are dropped (``MADV_DONTNEED``).
    """
    if _madvise is None:  # pragma: no cover - not Linux
        area.madvise(mmap.MADV_DONTNEED, start, length)
        return
    anchor = ctypes.c_char.from_buffer(area)
    try:
        address = ctypes.addressof(anchor) + start
        if _madvise(address, length, _MADV_FREE) != 0 and _madvise(address, length, mmap.MADV_DONTNEED) != 0:
            area.madvise(mmap.MADV_DONTNEED, start, length)  # raises the OSError
    finally:
        del anchor


def _scratch() -> _Scratch:
    scratch: _Scratch | None = getattr(_local, "scratch", None)
    if scratch is None:
        scratch = _local.scratch = _Scratch()
    if scratch.busy:
        return _OwnScratch()
    scratch.busy = True
    return scratch


def _decompress_into(codec: int, data: bytes | bytearray | memoryview, out: memoryview) -> int:
    """Decompress into ``out`` (whose length is the cap); the number of bytes written."""
    try:
        if codec == Compression.GZIP:
            return int(cramjam.gzip.decompress_into(data, out))
        if codec == Compression.SNAPPY:
            if bytes(data[:8]) == _XERIAL_MAGIC:
                return _xerial_decompress_into(memoryview(data), out)
            return _snappy_raw_into(data, out)
        if codec == Compression.LZ4:
            return int(cramjam.lz4.decompress_into(data, out))
        return int(cramjam.zstd.decompress_into(data, out))
    except (cramjam.DecompressionError, ValueError, OSError) as exc:
        if _FULL_BUFFER in str(exc):
            raise _too_large(codec, len(out)) from None
        raise CorruptMessageError(f"cannot decompress {CODEC_NAMES[codec]} record data: {exc}") from exc


def _too_large(codec: int, max_bytes: int) -> DecompressedTooLargeError:
    return DecompressedTooLargeError(
        f"{CODEC_NAMES[codec]} record data decompresses to more than the {max_bytes} bytes allowed for it"
    )


def _snappy_raw_into(data: bytes | bytearray | memoryview, out: memoryview) -> int:
    """One raw snappy block; its own length header is checked against the room first."""
    claimed = int(cramjam.snappy.decompress_raw_len(data))
    if claimed > len(out):
        raise cramjam.DecompressionError(_FULL_BUFFER)
    return int(cramjam.snappy.decompress_raw_into(data, out[:claimed]))


def _xerial_compress(data: memoryview) -> bytes:
    parts = [_XERIAL_HEADER]
    for start in range(0, len(data), _XERIAL_BLOCK):
        block = cramjam.snappy.compress_raw(data[start : start + _XERIAL_BLOCK])
        parts.append(_INT32.pack(len(block)))
        parts.append(bytes(block))
    return b"".join(parts)


def _xerial_decompress_into(data: memoryview, out: memoryview) -> int:
    pos = _XERIAL_HEADER_SIZE
    end = len(data)
    written = 0
    if end < pos:
        raise CorruptMessageError("xerial snappy stream header is truncated")
    while pos < end:
        if end - pos < 4:
            raise CorruptMessageError("xerial snappy block length is truncated")
        (size,) = _INT32.unpack_from(data, pos)
        pos += 4
        if size < 0 or pos + size > end:
            raise CorruptMessageError(f"xerial snappy block of {size} bytes overruns the stream")
        written += _snappy_raw_into(data[pos : pos + size], out[written:])
        pos += size
    return written


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
