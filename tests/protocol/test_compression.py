"""The batch codecs: round trips, and interop with independent implementations.

python-lz4, zstandard and python-snappy (read through kafka-python's codec module) are
test dependencies (the ``dev`` extra), so every interop test runs.
"""

from __future__ import annotations

import gzip
import os
import struct
import warnings

import cramjam
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from seaway.protocol.compression import CODEC_NAMES, compress, decompress
from seaway.protocol.errors import CorruptMessageError, UnsupportedCompressionTypeError
from seaway.protocol.record_batch import Compression

with warnings.catch_warnings():  # kafka-python 3.0.12 uses importlib.resources' legacy read_text
    warnings.simplefilter("ignore", DeprecationWarning)
    from kafka import codec as kafka_codec

CODECS = sorted(CODEC_NAMES)
COMPRESSED = [c for c in CODECS if c != Compression.NONE]
XERIAL_MAGIC = b"\x82SNAPPY\x00"

# Several blocks of each framing (snappy 32 KiB, lz4 64 KiB), one incompressible part.
LARGE = os.urandom(70_000) + b"seaway " * 40_000


@pytest.mark.parametrize("codec", CODECS, ids=lambda c: CODEC_NAMES[c])
@settings(max_examples=40, deadline=None)
@given(data=st.binary(max_size=4096))
def test_round_trip(codec: int, data: bytes) -> None:
    assert decompress(codec, compress(codec, data)) == data


@pytest.mark.parametrize("codec", CODECS, ids=lambda c: CODEC_NAMES[c])
def test_round_trip_large_multi_block(codec: int) -> None:
    packed = compress(codec, LARGE)
    assert decompress(codec, memoryview(packed)) == LARGE
    assert decompress(codec, bytearray(packed)) == LARGE
    if codec != Compression.NONE:
        assert len(packed) < len(LARGE)


@pytest.mark.parametrize("codec", COMPRESSED, ids=lambda c: CODEC_NAMES[c])
def test_levels_are_accepted(codec: int) -> None:
    level = None if codec == Compression.SNAPPY else 9
    assert decompress(codec, compress(codec, LARGE, level=level)) == LARGE


@pytest.mark.parametrize("codec", [5, 6, 7, -1])
def test_unknown_codec_is_unsupported_compression_type(codec: int) -> None:
    with pytest.raises(UnsupportedCompressionTypeError) as info:
        compress(codec, b"x")
    assert info.value.code == 76
    with pytest.raises(UnsupportedCompressionTypeError):
        decompress(codec, b"x")


@pytest.mark.parametrize("codec", COMPRESSED, ids=lambda c: CODEC_NAMES[c])
def test_garbage_and_truncation_raise_corrupt_message(codec: int) -> None:
    packed = compress(codec, LARGE)
    for bad in (b"not compressed at all, surely", packed[: len(packed) // 2], packed[:-4], packed[:10]):
        with pytest.raises(CorruptMessageError):
            decompress(codec, bad)


# -- gzip --------------------------------------------------------------------------------


def test_gzip_is_a_standard_stream() -> None:
    assert gzip.decompress(compress(Compression.GZIP, LARGE)) == LARGE
    assert decompress(Compression.GZIP, gzip.compress(LARGE)) == LARGE


def test_gzip_concatenated_members_decode() -> None:
    assert decompress(Compression.GZIP, gzip.compress(b"ab") + gzip.compress(b"cd")) == b"abcd"


# -- snappy ------------------------------------------------------------------------------


def _parse_xerial(stream: bytes) -> list[bytes]:
    """The raw snappy blocks of a xerial stream, parsed here independently of the codec."""
    assert stream[:8] == XERIAL_MAGIC
    assert struct.unpack(">ii", stream[8:16]) == (1, 1)
    blocks, pos = [], 16
    while pos < len(stream):
        (size,) = struct.unpack_from(">i", stream, pos)
        blocks.append(stream[pos + 4 : pos + 4 + size])
        pos += 4 + size
    assert pos == len(stream)
    return blocks


def test_snappy_writes_xerial_framing_in_32k_blocks() -> None:
    blocks = _parse_xerial(compress(Compression.SNAPPY, LARGE))
    assert len(blocks) == -(-len(LARGE) // (32 * 1024))
    assert b"".join(bytes(cramjam.snappy.decompress_raw(b)) for b in blocks) == LARGE


def test_snappy_reads_raw_blocks_as_librdkafka_writes() -> None:
    raw = bytes(cramjam.snappy.compress_raw(LARGE))
    assert decompress(Compression.SNAPPY, raw) == LARGE


def test_snappy_reads_xerial_with_little_endian_version_fields() -> None:
    # Some producers (redpanda) wrote version/compat little-endian; Java ignores them.
    block = bytes(cramjam.snappy.compress_raw(b"payload"))
    stream = XERIAL_MAGIC + struct.pack("<ii", 1, 1) + struct.pack(">i", len(block)) + block
    assert decompress(Compression.SNAPPY, stream) == b"payload"


def test_snappy_xerial_block_overrun_is_corrupt() -> None:
    stream = XERIAL_MAGIC + struct.pack(">ii", 1, 1) + struct.pack(">i", 1000) + b"short"
    with pytest.raises(CorruptMessageError):
        decompress(Compression.SNAPPY, stream)


def test_snappy_interop_with_kafka_python() -> None:
    assert kafka_codec.has_snappy(), "python-snappy (a dev dependency) is missing"
    assert kafka_codec.snappy_decode(compress(Compression.SNAPPY, LARGE)) == LARGE
    assert decompress(Compression.SNAPPY, kafka_codec.snappy_encode(LARGE)) == LARGE
    raw = kafka_codec.snappy_encode(LARGE, xerial_compatible=False)
    assert decompress(Compression.SNAPPY, raw) == LARGE


# -- lz4 ---------------------------------------------------------------------------------


def test_lz4_frame_uses_kafkas_profile() -> None:
    frame = compress(Compression.LZ4, LARGE)
    assert frame[:4] == b"\x04\x22\x4d\x18"
    flg, bd = frame[4], frame[5]
    assert flg >> 6 == 1  # frame version 01
    assert flg & 0x20  # independent blocks: Kafka's Java reader rejects linked ones
    assert not flg & 0x1C  # no block checksum, content size or content checksum
    assert bd == 0x40  # 64 KiB blocks
    assert frame[-4:] == b"\x00\x00\x00\x00"


def test_lz4_interop_with_python_lz4() -> None:
    import lz4.frame as lz4_frame
    for data in (b"", b"x", LARGE, os.urandom(1000)):
        assert lz4_frame.decompress(compress(Compression.LZ4, data)) == data  # checks the header checksum
    for options in (
        {},
        {"block_linked": True, "content_checksum": True, "store_size": True},
        {"block_linked": False, "block_checksum": True, "store_size": False},
    ):
        assert decompress(Compression.LZ4, lz4_frame.compress(LARGE, **options)) == LARGE


# -- zstd --------------------------------------------------------------------------------


def test_zstd_interop_with_zstandard() -> None:
    import zstandard
    assert zstandard.ZstdDecompressor().decompress(compress(Compression.ZSTD, LARGE)) == LARGE
    streamed = zstandard.ZstdCompressor(write_content_size=False).compress(LARGE)
    assert decompress(Compression.ZSTD, streamed) == LARGE
    two_frames = zstandard.ZstdCompressor().compress(b"ab") + zstandard.ZstdCompressor().compress(b"cd")
    assert decompress(Compression.ZSTD, two_frames) == b"abcd"


def test_zstd_frame_without_content_size_decodes_via_cramjam_stream() -> None:
    compressor = cramjam.zstd.Compressor()
    compressor.compress(LARGE)
    assert decompress(Compression.ZSTD, bytes(compressor.finish())) == LARGE
