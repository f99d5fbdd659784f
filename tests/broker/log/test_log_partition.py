"""PartitionLog against real files: append, read, roll, offsets, timestamps, validation."""

from __future__ import annotations

from pathlib import Path

import pytest
from crc32c import crc32c
from seaway.protocol.errors import (
    CorruptMessageError,
    InvalidRecordError,
    MessageTooLargeError,
    OffsetOutOfRangeError,
    UnsupportedForMessageFormatError,
)
from seaway.protocol.record_batch import batch_crc, iter_batch_headers, parse_batch_header

from tests.broker.log.logtest_helpers import make_batch, open_log, payload, read_all

NOW = 1_700_000_000_000


def test_round_trip_across_segment_rolls(tmp_path: Path) -> None:
    plog = open_log(tmp_path / "t-0", segment_bytes=1024, index_interval_bytes=128)
    batches = [make_batch([b"value-%d-%d" % (i, j) for j in range(i % 3 + 1)]) for i in range(60)]
    for batch in batches:
        plog.append(batch, now_ms=NOW)
    logs = sorted(p.name for p in (tmp_path / "t-0").glob("*.log"))
    assert len(logs) > 3
    assert all(len(name) == 24 and name[:20].isdigit() for name in logs)
    stored = read_all(plog)
    assert [payload(b) for b in stored] == [payload(b) for b in batches]
    expected = 0
    for data in stored:
        header = parse_batch_header(data)
        assert header.base_offset == expected
        assert batch_crc(data, header) == header.crc
        expected = header.next_offset
    assert plog.log_end_offset == expected == sum(i % 3 + 1 for i in range(60))
    plog.close()


def test_offsets_assigned_across_batches_in_one_append(tmp_path: Path) -> None:
    plog = open_log(tmp_path / "t-0")
    plog.append(make_batch([b"x"]), now_ms=NOW)
    records = make_batch([b"a", b"b"]) + make_batch([b"c", b"d", b"e"]) + make_batch([b"f"])
    result = plog.append(records, now_ms=NOW, leader_epoch=7)
    assert (result.base_offset, result.last_offset) == (1, 6)
    assert [h.base_offset for h in result.batch_headers] == [1, 3, 6]
    assert result.log_append_time_ms == -1
    region = plog.read(1, 1 << 20)
    assert region is not None
    headers = list(iter_batch_headers(region.read_bytes()))
    assert [(h.base_offset, h.partition_leader_epoch) for h in headers] == [(1, 7), (3, 7), (6, 7)]
    plog.close()


def test_read_from_the_middle_of_a_batch_returns_that_batch(tmp_path: Path) -> None:
    plog = open_log(tmp_path / "t-0", index_interval_bytes=0)
    for i in range(10):
        plog.append(make_batch([b"r%d" % i] * 4), now_ms=NOW)
    for offset in (0, 13, 22, 39):
        region = plog.read(offset, 1)
        assert region is not None
        header = parse_batch_header(region.read_bytes())
        assert header.base_offset <= offset <= header.last_offset
        assert len(region) == header.size
    plog.close()


def test_max_bytes_and_min_one_batch(tmp_path: Path) -> None:
    plog = open_log(tmp_path / "t-0")
    batch = make_batch([b"z" * 50])
    for _ in range(5):
        plog.append(batch, now_ms=NOW)
    size = len(batch)
    region = plog.read(0, size * 2 + size // 2)
    assert region is not None and len(region) == 2 * size
    region = plog.read(0, 10)
    assert region is not None and len(region) == size
    empty = plog.read(0, 10, min_one_batch=False)
    assert empty is not None and len(empty) == 0
    region = plog.read(2, 1 << 20)
    assert region is not None and len(region) == 3 * size
    plog.close()


def test_offset_out_of_range_and_end_of_log(tmp_path: Path) -> None:
    plog = open_log(tmp_path / "t-0")
    plog.append(make_batch([b"a", b"b"]), now_ms=NOW)
    assert plog.read(2, 100) is None
    with pytest.raises(OffsetOutOfRangeError):
        plog.read(3, 100)
    with pytest.raises(OffsetOutOfRangeError):
        plog.read(-1, 100)
    plog.close()


def test_offset_for_timestamp(tmp_path: Path) -> None:
    plog = open_log(tmp_path / "t-0", segment_bytes=400, index_interval_bytes=0)
    for i in range(12):
        plog.append(make_batch([b"a", b"b"], timestamp=10_000 + i * 1000), now_ms=NOW)
    assert len(plog.segments()) > 2
    assert plog.offset_for_timestamp(0) == (0, 10_001)
    assert plog.offset_for_timestamp(10_001) == (0, 10_001)
    assert plog.offset_for_timestamp(10_002) == (2, 11_001)
    assert plog.offset_for_timestamp(15_500) == (12, 16_001)
    assert plog.offset_for_timestamp(21_001) == (22, 21_001)
    assert plog.offset_for_timestamp(21_002) is None
    assert plog.max_timestamp_and_offset() == (23, 21_001)
    plog.close()


def test_log_append_time_is_stamped_and_crc_stays_valid(tmp_path: Path) -> None:
    plog = open_log(tmp_path / "t-0", message_timestamp_type="LogAppendTime")
    result = plog.append(make_batch([b"a"], timestamp=5) + make_batch([b"b"], timestamp=6), now_ms=NOW)
    assert result.log_append_time_ms == NOW
    region = plog.read(0, 1 << 20)
    assert region is not None
    data = region.read_bytes()
    headers = list(iter_batch_headers(data, verify_crc=True))
    assert all(h.is_log_append_time and h.max_timestamp == NOW for h in headers)
    assert plog.offset_for_timestamp(NOW) == (0, NOW)
    plog.close()


def test_message_too_large_writes_nothing(tmp_path: Path) -> None:
    plog = open_log(tmp_path / "t-0", max_message_bytes=150)
    small, big = make_batch([b"s"]), make_batch([b"b" * 200])
    with pytest.raises(MessageTooLargeError, match=r"max\.message\.bytes"):
        plog.append(small + big, now_ms=NOW)
    assert plog.log_end_offset == 0 and plog.size_bytes == 0
    plog.close()


def test_invalid_batches_are_rejected_with_nothing_written(tmp_path: Path) -> None:
    plog = open_log(tmp_path / "t-0")
    good = make_batch([b"ok"])
    bad_crc = bytearray(make_batch([b"payload"]))
    bad_crc[-2] ^= 0xFF
    with pytest.raises(CorruptMessageError, match="CRC"):
        plog.append(good + bytes(bad_crc), now_ms=NOW)
    with pytest.raises(CorruptMessageError):
        plog.append(good + good[:-3], now_ms=NOW)
    old_magic = bytearray(good)
    old_magic[16] = 1
    with pytest.raises(UnsupportedForMessageFormatError):
        plog.append(bytes(old_magic), now_ms=NOW)
    wrong_count = bytearray(good)
    wrong_count[57:61] = (5).to_bytes(4, "big")
    wrong_count[17:21] = crc32c(bytes(wrong_count[21:])).to_bytes(4, "big")
    with pytest.raises(InvalidRecordError):
        plog.append(bytes(wrong_count), now_ms=NOW)
    assert plog.log_end_offset == 0 and plog.size_bytes == 0
    assert (tmp_path / "t-0" / "00000000000000000000.log").stat().st_size == 0
    assert plog.append(b"", now_ms=NOW).base_offset == -1
    plog.close()


def test_time_based_roll(tmp_path: Path) -> None:
    plog = open_log(tmp_path / "t-0", segment_ms=1000)
    plog.append(make_batch([b"a"], timestamp=1000), now_ms=NOW)
    plog.append(make_batch([b"b"], timestamp=1500), now_ms=NOW)
    assert len(plog.segments()) == 1
    plog.append(make_batch([b"c"], timestamp=2500), now_ms=NOW)
    assert [s.base_offset for s in plog.segments()] == [0, 2]
    plog.close()


def test_flush_policy_and_recovery_point(tmp_path: Path) -> None:
    plog = open_log(tmp_path / "t-0", flush_messages=3, segment_bytes=200)
    asked: list[object] = []
    plog.on_flush_needed = asked.append
    plog.append(make_batch([b"a", b"b"]), now_ms=NOW)
    assert asked == []
    plog.append(make_batch([b"c"] * 3), now_ms=NOW)
    assert asked == [plog]
    plog.maybe_flush(NOW)
    for _ in range(4):
        plog.append(make_batch([b"d" * 40]), now_ms=NOW)
    plog.maybe_flush(NOW)
    checkpoint = (tmp_path / "t-0" / "recovery-point-offset-checkpoint").read_text().split("\n")
    assert checkpoint[:2] == ["0", "1"]
    assert checkpoint[2] == f"t 0 {plog.segments()[-1].base_offset}"
    plog.close()
