"""Record batch v2 records: round trips, kafka-python interop both ways, corruption."""

from __future__ import annotations

import contextlib
import dataclasses
import struct
import warnings

import pytest
from crc32c import crc32c
from hypothesis import given, settings
from hypothesis import strategies as st
from seaway.protocol import records as records_module
from seaway.protocol import varint
from seaway.protocol.compression import CODEC_NAMES
from seaway.protocol.errors import UnsupportedCompressionTypeError
from seaway.protocol.record_batch import (
    BATCH_HEADER_SIZE,
    CRC_START,
    Compression,
    CorruptBatchError,
    iter_batch_headers,
)
from seaway.protocol.records import (
    ControlType,
    Record,
    build_batch,
    control_type,
    decode_batch,
    iter_batches,
    iter_records,
)
from seaway.protocol.varint import VarintError, decode_varint, encode_varint, size_of_varint

with warnings.catch_warnings():  # kafka-python 3.0.12 uses importlib.resources' legacy read_text
    warnings.simplefilter("ignore", DeprecationWarning)
    from kafka import codec as kafka_codec
    from kafka.record.default_records import DefaultRecordBatch, DefaultRecordBatchBuilder
    from kafka.record.util import encode_varint as kafka_encode_varint

CODECS = sorted(CODEC_NAMES)
_KAFKA_HAS = {
    Compression.NONE: True,
    Compression.GZIP: kafka_codec.has_gzip(),
    Compression.SNAPPY: kafka_codec.has_snappy(),
    Compression.LZ4: kafka_codec.has_lz4(),
    Compression.ZSTD: kafka_codec.has_zstd(),
}
# kafka-python can use every codec here: its codec libraries are dev dependencies.
assert all(_KAFKA_HAS.values()), f"kafka-python lacks a codec library: {_KAFKA_HAS}"
KAFKA_CODECS = [pytest.param(c, id=CODEC_NAMES[c]) for c in CODECS]

INT64 = st.integers(-(2**63), 2**63 - 1)
HEADERS = st.lists(st.tuples(st.text(max_size=8), st.none() | st.binary(max_size=16)), max_size=3).map(tuple)


@st.composite
def record_lists(draw: st.DrawFn) -> tuple[int, list[Record]]:
    """A base offset and records at strictly increasing offsets (with gaps) from it."""
    base_offset = draw(st.integers(0, 2**50))
    gaps = draw(st.lists(st.integers(1, 5000), max_size=12))
    first_timestamp = draw(st.integers(-1, 2**42))
    records, offset = [], base_offset + draw(st.integers(0, 100))
    for gap in gaps:
        records.append(
            Record(
                offset=offset,
                timestamp=first_timestamp + draw(st.integers(-(2**20), 2**33)),
                key=draw(st.none() | st.binary(max_size=300)),
                value=draw(st.none() | st.binary(max_size=10_000)),
                headers=draw(HEADERS),
            )
        )
        offset += gap
    return base_offset, records


def sample_records(base_offset: int = 0, count: int = 40) -> list[Record]:
    """Compressible records with keys, null keys, null values, headers and offset gaps."""
    return [
        Record(
            offset=base_offset + i * 3,
            timestamp=1_700_000_000_000 + i * 250,
            key=None if i % 5 == 0 else f"key-{i}".encode(),
            value=None if i % 7 == 3 else b"value %d " % i * (i + 1),
            headers=() if i % 2 else (("trace", f"t{i}".encode()), ("empty", b""), ("none", None)),
        )
        for i in range(count)
    ]


def kafka_view(batch: bytes | bytearray) -> list[tuple[object, ...]]:
    """Records as kafka-python's own decoder sees them."""
    kbatch = DefaultRecordBatch(bytes(batch))
    assert kbatch.validate_crc()
    return [(r.offset, r.timestamp, r.key, r.value, tuple(r.headers)) for r in kbatch]


def as_tuples(records: list[Record]) -> list[tuple[object, ...]]:
    return [(r.offset, r.timestamp, r.key, r.value, r.headers) for r in records]


# -- round trips --------------------------------------------------------------------------


@pytest.mark.parametrize("codec", CODECS, ids=lambda c: CODEC_NAMES[c])
@settings(max_examples=25, deadline=None)
@given(
    drawn=record_lists(),
    producer=st.tuples(st.integers(-1, 2**62), st.integers(-1, 2**15 - 1), st.integers(-1, 2**31 - 1)),
    flags=st.tuples(st.booleans(), st.integers(-1, 2**31 - 1)),
)
def test_round_trip(
    codec: int, drawn: tuple[int, list[Record]], producer: tuple[int, int, int], flags: tuple[bool, int]
) -> None:
    base_offset, records = drawn
    producer_id, producer_epoch, base_sequence = producer
    transactional, leader_epoch = flags
    batch = build_batch(
        records,
        base_offset=base_offset,
        compression=codec,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        base_sequence=base_sequence,
        is_transactional=transactional,
        partition_leader_epoch=leader_epoch,
    )
    header, decoded = decode_batch(batch)
    assert decoded == records
    assert [h.crc for h in iter_batch_headers(batch)] == [header.crc]
    assert header.size == len(batch)
    assert header.record_count == len(records)
    assert header.compression == (codec if records else Compression.NONE)
    assert (header.producer_id, header.producer_epoch, header.base_sequence) == producer
    assert header.is_transactional is transactional and not header.is_control
    assert header.partition_leader_epoch == leader_epoch
    if records:
        assert header.last_offset == records[-1].offset
        assert header.base_timestamp == records[0].timestamp
        assert header.max_timestamp == max(r.timestamp for r in records)


@pytest.mark.parametrize("codec", CODECS, ids=lambda c: CODEC_NAMES[c])
def test_decode_accepts_bytearray_memoryview_and_an_offset(codec: int) -> None:
    records = sample_records(base_offset=500)
    batch = build_batch(records, base_offset=500, compression=codec)
    buf = b"\xff" * 7 + batch
    assert decode_batch(bytearray(batch))[1] == records
    assert decode_batch(memoryview(buf), 7)[1] == records


def test_decoded_records_are_real_frozen_records() -> None:
    record = Record(3, 1000, b"k", None, (("h", b"v"),))
    (decoded,) = decode_batch(build_batch([record]))[1]
    assert decoded == record and hash(decoded) == hash(record) and type(decoded) is Record
    with pytest.raises(dataclasses.FrozenInstanceError):
        decoded.offset = 4  # type: ignore[misc]


def test_several_batches_iterate_in_order() -> None:
    first = sample_records(base_offset=0, count=5)
    second = sample_records(base_offset=100, count=7)
    buf = build_batch(first) + build_batch(second, base_offset=100, compression=Compression.GZIP)
    assert list(iter_records(buf)) == first + second
    assert [h.base_offset for h, _ in iter_batches(buf)] == [0, 100]
    assert list(iter_records(b"")) == []


# -- kafka-python interop ----------------------------------------------------------------


@pytest.mark.parametrize("codec", KAFKA_CODECS)
def test_kafka_python_reads_our_batches(codec: int) -> None:
    records = sample_records(base_offset=1000)
    batch = build_batch(
        records,
        base_offset=1000,
        compression=codec,
        producer_id=42,
        producer_epoch=3,
        base_sequence=17,
        is_transactional=True,
    )
    assert kafka_view(batch) == as_tuples(records)
    kbatch = DefaultRecordBatch(batch)
    assert kbatch.compression_type == codec
    assert (kbatch.producer_id, kbatch.producer_epoch, kbatch.base_sequence) == (42, 3, 17)
    assert kbatch.is_transactional and kbatch.last_offset == records[-1].offset


@pytest.mark.parametrize("codec", KAFKA_CODECS)
def test_we_read_kafka_python_batches(codec: int) -> None:
    records = sample_records()
    builder = DefaultRecordBatchBuilder(2, codec, True, 9, 1, 5, 1 << 20)
    for r in records:
        builder.append(r.offset, r.timestamp, r.key, r.value, list(r.headers))
    batch = builder.build()
    header, decoded = decode_batch(batch)
    assert decoded == records
    assert header.compression == codec  # the values compress, so kafka-python kept the codec
    assert (header.producer_id, header.producer_epoch, header.base_sequence) == (9, 1, 5)
    assert header.is_transactional


@pytest.mark.parametrize("codec", KAFKA_CODECS)
@settings(max_examples=10, deadline=None)
@given(drawn=record_lists())
def test_kafka_python_agrees_on_random_batches(codec: int, drawn: tuple[int, list[Record]]) -> None:
    base_offset, records = drawn
    if records:
        assert kafka_view(build_batch(records, base_offset=base_offset, compression=codec)) == as_tuples(
            records
        )


def test_log_append_time_gives_every_record_the_max_timestamp() -> None:
    records = sample_records(count=4)
    batch = build_batch(records, timestamp_type=1, max_timestamp=1_800_000_000_000)
    header, decoded = decode_batch(batch)
    assert header.is_log_append_time
    assert [r.timestamp for r in decoded] == [1_800_000_000_000] * 4
    assert [t[1] for t in kafka_view(batch)] == [1_800_000_000_000] * 4


# -- compaction, producer state and control batches ---------------------------------------


def test_compacted_batch_keeps_gaps_and_its_original_last_offset() -> None:
    kept = [Record(12, 5000, b"a", b"1"), Record(15, 5002, b"b", None)]
    batch = build_batch(kept, base_offset=10, producer_id=7, producer_epoch=0, base_sequence=100,
                        last_offset_delta=9)  # fmt: skip
    header, decoded = decode_batch(batch)
    assert decoded == kept
    assert (header.base_offset, header.last_offset, header.next_offset) == (10, 19, 20)
    assert header.last_sequence == 109
    assert [t[0] for t in kafka_view(batch)] == [12, 15]


def test_empty_batch_keeps_producer_state_and_is_uncompressed() -> None:
    batch = build_batch([], base_offset=200, compression=Compression.ZSTD, producer_id=5, producer_epoch=2,
                        base_sequence=40, last_offset_delta=4, max_timestamp=777)  # fmt: skip
    assert len(batch) == BATCH_HEADER_SIZE
    header, decoded = decode_batch(batch)
    assert decoded == []
    assert header.compression == Compression.NONE and header.record_count == 0
    assert (header.next_offset, header.last_sequence, header.max_timestamp) == (205, 44, 777)


def test_delete_horizon_is_the_base_timestamp() -> None:
    records = sample_records(count=3)
    horizon = records[0].timestamp + 86_400_000  # after every record: negative deltas
    header, decoded = decode_batch(build_batch(records, delete_horizon_ms=horizon))
    assert header.has_delete_horizon and header.base_timestamp == horizon
    assert decoded == records
    with pytest.raises(ValueError):
        build_batch(records, delete_horizon_ms=horizon, base_timestamp=horizon - 1)


def test_control_batch_decodes_its_markers() -> None:
    marker = Record(30, 1234, struct.pack(">hh", 0, ControlType.COMMIT), struct.pack(">hi", 0, 11))
    batch = build_batch([marker], base_offset=30, is_control=True, is_transactional=True,
                        producer_id=3, producer_epoch=1)  # fmt: skip
    header, (decoded,) = decode_batch(batch)
    assert header.is_control and control_type(decoded) == ControlType.COMMIT
    (kafka_record,) = list(DefaultRecordBatch(batch))
    assert kafka_record.commit


# -- builder argument checks ---------------------------------------------------------------


@pytest.mark.parametrize(
    "offsets", [[5, 5], [5, 4], [-1], [2**31]], ids=["repeat", "backwards", "before-base", "too-far"]
)
def test_offsets_must_increase_within_int32_of_the_base(offsets: list[int]) -> None:
    with pytest.raises(ValueError):
        build_batch([Record(o, 0, None, b"v") for o in offsets])


def test_bad_builder_arguments() -> None:
    record = [Record(0, 0, None, b"v")]
    with pytest.raises(UnsupportedCompressionTypeError):
        build_batch(record, compression=5)
    with pytest.raises(ValueError):
        build_batch(record, timestamp_type=2)
    with pytest.raises(ValueError):
        build_batch(record, producer_epoch=2**15)
    with pytest.raises(ValueError):
        build_batch([Record(0, 0, None, b"v"), Record(1, 0, None, b"v")], last_offset_delta=0)


# -- corruption -------------------------------------------------------------------------------


@pytest.mark.parametrize("codec", CODECS, ids=lambda c: CODEC_NAMES[c])
def test_flipped_byte_fails_the_crc(codec: int) -> None:
    batch = build_batch(sample_records(count=5), compression=codec)
    for pos in range(CRC_START, len(batch), max(1, len(batch) // 97)):
        damaged = bytearray(batch)
        damaged[pos] ^= 0x01
        with pytest.raises(CorruptBatchError) as info:
            decode_batch(damaged)
        assert info.value.reason == "crc", pos


@pytest.mark.parametrize("codec", CODECS, ids=lambda c: CODEC_NAMES[c])
def test_every_truncation_raises_truncated(codec: int) -> None:
    batch = build_batch(sample_records(count=3), compression=codec)
    for cut in range(len(batch)):
        with pytest.raises(CorruptBatchError) as info:
            decode_batch(batch[:cut])
        assert info.value.reason == "truncated", cut


def _reframe(records_bytes: bytes, count: int) -> bytes:
    """A batch around hand-made record bytes, with a correct length and CRC."""
    template = bytearray(build_batch([]))
    struct.pack_into(">i", template, 57, count)
    return _with_crc(template + records_bytes)


def _with_crc(batch: bytearray) -> bytes:
    struct.pack_into(">i", batch, 8, len(batch) - 12)
    struct.pack_into(">I", batch, 17, crc32c(memoryview(batch)[CRC_START:]))
    return bytes(batch)


def _record_bytes(*records: Record) -> bytes:
    return build_batch(list(records))[BATCH_HEADER_SIZE:]


def test_record_count_beyond_the_data_is_truncated() -> None:
    body = _record_bytes(Record(0, 0, b"k", b"v"))
    with pytest.raises(CorruptBatchError) as info:
        decode_batch(_reframe(body, 2))
    assert info.value.reason == "truncated"


def test_record_cut_inside_is_truncated() -> None:
    body = _record_bytes(Record(0, 0, b"key", b"value" * 30))
    with pytest.raises(CorruptBatchError) as info:
        decode_batch(_reframe(body[:-10], 1))
    assert info.value.reason == "truncated"


@pytest.mark.parametrize(
    "body",
    [
        _record_bytes(Record(0, 0, b"k", b"v")) + b"\x00\x00",  # bytes after the last record
        encode_varint(8) + b"\x00\x00\x00" + encode_varint(-2) + b"\x00\x00\x00\x00",  # key length -2
        encode_varint(6) + b"\x00\x00\x00\x02k\x01\x00" + b"\x00",  # the body is 7 bytes, not 6
        encode_varint(0),  # empty record
        encode_varint(-3) + b"\x00" * 8,  # negative record length
        encode_varint(9) + b"\x00\x00\x00\x01\x01" + encode_varint(1) + b"\x02\xff\xfe\x01",  # bad UTF-8
        encode_varint(9) + b"\x00\x00\x00\x01\x01" + encode_varint(-1) + b"\x00\x00\x00",  # header count -1
        b"\x8c" + b"\xff" * 11,  # varint longer than 10 bytes
    ],
    ids=["trailing", "key-length", "length-mismatch", "empty", "negative", "utf8", "header-count", "varint"],
)
def test_malformed_records_are_corrupt(body: bytes) -> None:
    with pytest.raises(CorruptBatchError) as info:
        decode_batch(_reframe(body, 1))
    assert info.value.reason == "corrupt"


def test_undecompressable_payload_is_corrupt() -> None:
    batch = bytearray(build_batch([]))
    struct.pack_into(">h", batch, 21, Compression.LZ4)
    struct.pack_into(">i", batch, 57, 1)
    with pytest.raises(CorruptBatchError) as info:
        decode_batch(_with_crc(batch + b"garbage, not an lz4 frame"))
    assert info.value.reason == "corrupt"


def test_unknown_codec_in_a_batch_is_unsupported() -> None:
    batch = bytearray(build_batch([Record(0, 0, None, b"v")]))
    struct.pack_into(">h", batch, 21, 6)
    with pytest.raises(UnsupportedCompressionTypeError):
        decode_batch(_with_crc(batch))


@pytest.mark.parametrize("codec", [Compression.NONE, Compression.GZIP], ids=["none", "gzip"])
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_damage_never_escapes_as_a_foreign_exception(codec: int, data: st.DataObject) -> None:
    batch = bytearray(build_batch(sample_records(count=6), compression=codec))
    for _ in range(data.draw(st.integers(1, 4))):
        pos = data.draw(st.integers(BATCH_HEADER_SIZE, len(batch) - 1))
        batch[pos] = data.draw(st.integers(0, 255))
    with contextlib.suppress(CorruptBatchError):  # a clean error or a clean decode
        decode_batch(_with_crc(batch))


# -- varints ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "encoded"),
    [(0, b"\x00"), (-1, b"\x01"), (1, b"\x02"), (63, b"\x7e"), (-64, b"\x7f"), (64, b"\x80\x01"),
     (8191, b"\xfe\x7f"), (-8193, b"\x81\x80\x01"), (2**63 - 1, b"\xfe" + b"\xff" * 8 + b"\x01")],
)  # fmt: skip
def test_varint_known_encodings(value: int, encoded: bytes) -> None:
    assert encode_varint(value) == encoded
    assert decode_varint(encoded, 0) == (value, len(encoded))
    assert size_of_varint(value) == len(encoded)


@given(value=INT64)
def test_varint_round_trip_and_matches_kafka_python(value: int) -> None:
    encoded = encode_varint(value)
    assert decode_varint(b"\x00" + encoded + b"\x00", 1) == (value, len(encoded) + 1)
    assert size_of_varint(value) == len(encoded)
    out = bytearray()
    kafka_encode_varint(value, out.append)
    assert bytes(out) == encoded


def test_varint_errors() -> None:
    with pytest.raises(VarintError):
        decode_varint(b"\xff" * 11, 0)
    with pytest.raises(IndexError):
        decode_varint(b"\xff\xff", 0)
    with pytest.raises(ValueError):
        encode_varint(2**63)


def test_public_names_exist() -> None:
    for module in (records_module, varint):
        for name in module.__all__:
            assert hasattr(module, name), name
