"""The produce path's validation: the inlined checks refuse exactly what the rules refuse.

``validate_batches`` decides from one unpacked header whether a batch is ordinary and
only then skips the detailed checks. These tests hold it to the rules in its docstring,
restated here independently, over random header fields; hold the one-call check of the
common case (``single_batch``, in C) to its Python reference and to ``validate_batches``
over mutated batches; and check that ``PartitionLog.append``, the log's one door, answers
and stores the same whichever way in it takes: its one-call path for a single batch, the
general validation, or a guard (the producer layer's hook, which gets the same parse and
runs the write itself).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from crc32c import crc32c
from hypothesis import given, settings
from hypothesis import strategies as st
from seaway.broker.log.config import LogConfig
from seaway.broker.log.partition_log import AppendResult, PartitionLog
from seaway.broker.log.segment import PREALLOCATE_BYTES
from seaway.broker.log.validation import batch_limits, single_batch, single_batch_py, validate_batches
from seaway.protocol.errors import CorruptMessageError, InvalidRecordError, InvalidTimestampError, KafkaProtocolError
from seaway.protocol.record_batch import BatchHeader, parse_batch_header
from seaway.protocol.records import Record, build_batch

from tests.broker.log.logtest_helpers import make_batch, open_log, read_all

NOW = 1_700_000_000_000
BASE = make_batch([b"a", b"b", b"c"], timestamp=NOW - 5)
RECORDS = 3  # in BASE, timestamp deltas 0, 1, 2


def _patched(attributes: int, last_delta: int, base_ts: int, max_ts: int, count: int) -> bytes:
    """BASE with header fields replaced and the CRC recomputed (so only the rules decide)."""
    buf = bytearray(BASE)
    buf[21:23] = attributes.to_bytes(2, "big", signed=True)
    buf[23:27] = last_delta.to_bytes(4, "big", signed=True)
    buf[27:35] = base_ts.to_bytes(8, "big", signed=True)
    buf[35:43] = max_ts.to_bytes(8, "big", signed=True)
    buf[57:61] = count.to_bytes(4, "big", signed=True)
    buf[17:21] = crc32c(bytes(buf[21:])).to_bytes(4, "big")
    return bytes(buf)


def _expected_error(data: bytes, config: LogConfig, allow_control: bool) -> type[KafkaProtocolError] | None:
    """The module docstring's header, record and timestamp rules, written out plainly."""
    h = parse_batch_header(data)
    if h.last_offset_delta < 0 or h.record_count <= 0 or h.record_count != h.last_offset_delta + 1:
        return InvalidRecordError
    if h.is_control and not allow_control:
        return InvalidRecordError
    if not config.is_log_append_time and h.max_timestamp >= 0:
        if h.max_timestamp - NOW > config.message_timestamp_after_max_ms:
            return InvalidTimestampError
        oldest = min(h.base_timestamp, h.max_timestamp)
        if oldest >= 0 and NOW - oldest > config.message_timestamp_before_max_ms:
            return InvalidTimestampError
    if h.record_count != RECORDS:  # the header disagrees with the records
        return InvalidRecordError
    if config.is_log_append_time:
        return None
    for delta in range(RECORDS):  # every record's own timestamp (base + its delta)
        ts = h.base_timestamp + delta
        if ts >= 0 and (ts - NOW > config.message_timestamp_after_max_ms
                        or NOW - ts > config.message_timestamp_before_max_ms):
            return InvalidTimestampError
    return None


timestamps = st.one_of(
    st.integers(-1, 0), st.integers(NOW - 10**9, NOW + 10**9), st.integers(-(2**40), 2**40)
)


@settings(max_examples=300, deadline=None)
@given(
    attributes=st.sampled_from([0, 0x08, 0x10, 0x20, 0x30]),
    last_delta=st.integers(-3, 4),
    count=st.integers(-1, 5),
    base_ts=timestamps,
    max_ts=timestamps,
    append_time=st.booleans(),
    after_max=st.sampled_from([0, 1000, 3600000]),
    before_max=st.sampled_from([0, 1000, 2**63 - 1]),
    allow_control=st.booleans(),
)
def test_fast_checks_refuse_exactly_what_the_rules_refuse(
    attributes: int, last_delta: int, count: int, base_ts: int, max_ts: int, append_time: bool,
    after_max: int, before_max: int, allow_control: bool,
) -> None:
    config = LogConfig(
        message_timestamp_type="LogAppendTime" if append_time else "CreateTime",
        message_timestamp_after_max_ms=after_max,
        message_timestamp_before_max_ms=before_max,
    )
    data = _patched(attributes, last_delta, base_ts, max_ts, count)
    expected = _expected_error(data, config, allow_control)
    limits = batch_limits(config)
    plain = single_batch(memoryview(data), NOW, *limits)  # the one-call path (C): never looser
    assert plain == single_batch_py(memoryview(data), NOW, *limits)  # and its Python reference agrees
    if expected is None:
        headers = validate_batches(data, config, NOW, allow_control=allow_control)
        assert headers == [parse_batch_header(data)]
        assert plain is None or (plain == headers[0] and not plain.is_control)
    else:
        with pytest.raises(expected):
            validate_batches(data, config, NOW, allow_control=allow_control)
        if expected is not None and not (allow_control and attributes & 0x20):
            assert plain is None


class _Guard:
    """A guard as the producer layer's: sees the parsed headers, then writes (or not)."""

    def __init__(self, *, write: bool = True) -> None:
        self.calls: list[list[BatchHeader]] = []
        self.write = write

    def __call__(self, plog: PartitionLog, headers: list[BatchHeader],
                 write: Callable[[], AppendResult]) -> AppendResult:
        self.calls.append(headers)
        if not self.write:
            return AppendResult(-1, -1, -1, plog.log_start_offset, [])
        return write()


def test_a_guard_gets_the_one_parse_and_its_write_equals_an_unguarded_append(tmp_path: Path) -> None:
    batch = build_batch([Record(i, NOW, b"k", b"x" * i) for i in range(3)], producer_id=7, producer_epoch=0,
                        base_sequence=0)
    one, two = open_log(tmp_path / "one"), open_log(tmp_path / "two")
    one.append(make_batch([b"first"], timestamp=NOW), now_ms=NOW)
    two.append(make_batch([b"first"], timestamp=NOW), now_ms=NOW)
    expected = one.append(batch, now_ms=NOW)
    guard = _Guard()
    request = bytearray(batch)  # a produce request's buffer: stamped in place, written once
    result = two.append(memoryview(request), now_ms=NOW, guard=guard)
    assert guard.calls == [validate_batches(batch, two.config, NOW)]  # the headers as parsed, once
    assert result == expected and result.base_offset == 1 and result.last_offset == 3
    assert read_all(one) == read_all(two)
    assert bytes(request) == read_all(two, 1)[0]
    frozen = bytes(batch)  # a read-only buffer is copied, never stamped
    assert two.append(frozen, now_ms=NOW, guard=guard).base_offset == 4 and frozen == batch
    declined = _Guard(write=False)  # a duplicate: answered by the guard, nothing written
    assert two.append(memoryview(bytearray(batch)), now_ms=NOW, guard=declined).base_offset == -1
    assert two.log_end_offset == 7 and len(declined.calls) == 1
    ordinary = _Guard()  # batches without a producer id never reach the guard, on either path
    two.append(memoryview(bytearray(BASE)), now_ms=NOW, guard=ordinary)
    two.append(BASE + BASE, now_ms=NOW, guard=ordinary)
    assert ordinary.calls == [] and two.log_end_offset == 16
    one.close()
    two.close()


def test_single_batch_is_only_the_single_valid_uncompressed_batch() -> None:
    config = LogConfig()
    limits = batch_limits(config)
    for check in (single_batch, single_batch_py):  # the C check and its Python reference
        assert check(memoryview(BASE), NOW, *limits) == parse_batch_header(BASE)
        assert check(BASE, NOW, *limits) == parse_batch_header(BASE)  # any buffer: it only reads
        assert check(memoryview(BASE + BASE), NOW, *limits) is None  # two batches
        assert check(memoryview(BASE[:-1]), NOW, *limits) is None  # cut short
        assert check(memoryview(BASE + b"\x00"), NOW, *limits) is None  # a byte after it
        bad_crc = bytearray(BASE)
        bad_crc[-1] ^= 1
        assert check(memoryview(bad_crc), NOW, *limits) is None
        idempotent = bytearray(BASE)  # a producer id is returned for the producer state to judge
        idempotent[43:51] = (7).to_bytes(8, "big")
        idempotent[51:53] = (3).to_bytes(2, "big")
        idempotent[53:57] = (42).to_bytes(4, "big")
        idempotent[17:21] = crc32c(bytes(idempotent[21:])).to_bytes(4, "big")
        header = check(memoryview(idempotent), NOW, *limits)
        assert header == parse_batch_header(idempotent)
        assert header is not None and (header.producer_id, header.producer_epoch, header.base_sequence) == (7, 3, 42)
        assert check(memoryview(BASE), NOW, *batch_limits(LogConfig(max_message_bytes=len(BASE) - 1))) is None
        keyless = make_batch([b"a"], timestamp=NOW, key=None)  # compacted topics: keyless records decline
        compacted = batch_limits(LogConfig(cleanup_policy=("compact",)))
        assert check(memoryview(keyless), NOW, *compacted) is None
        keyed = build_batch([Record(0, NOW, b"k", b"v")])
        assert check(memoryview(keyed), NOW, *compacted) == parse_batch_header(keyed)
        compressed = build_batch([Record(0, NOW, b"k", b"v" * 100)], compression=1)  # gzip: elsewhere
        assert check(memoryview(compressed), NOW, *limits) is None
        # A record older (newer) than the header's timestamps say: the records' own times decide.
        strict = LogConfig(message_timestamp_before_max_ms=1000, message_timestamp_after_max_ms=1000)
        for late in (NOW - 10**7, NOW + 10**7):
            lying = build_batch([Record(0, NOW, b"k", b"v"), Record(1, late, b"k", b"v")], max_timestamp=NOW)
            assert parse_batch_header(lying).base_timestamp == NOW
            assert check(memoryview(lying), NOW, *batch_limits(strict)) is None
            with pytest.raises(InvalidTimestampError):
                validate_batches(lying, strict, NOW)


@settings(max_examples=400, deadline=None)
@given(data=st.data())
def test_the_c_single_batch_check_agrees_with_the_python_one_and_the_general_checks(data: st.DataObject) -> None:
    """Bytes mutated anywhere (header, CRC, records; also with a fresh CRC, so the record
    walk and timestamps decide): the C check returns exactly what its Python reference
    returns, and never accepts what validate_batches refuses."""
    batch = bytearray(build_batch([Record(i, NOW - 100 + i, None if i % 2 else b"k%d" % i, b"v" * (i * 13 % 70))
                                   for i in range(6)], producer_id=data.draw(st.sampled_from([-1, 5])),
                                  producer_epoch=0, base_sequence=0))
    for _ in range(data.draw(st.integers(0, 3))):
        i = data.draw(st.integers(0, len(batch) - 1))
        batch[i] = data.draw(st.integers(0, 255))
    if data.draw(st.booleans()):
        batch[17:21] = crc32c(bytes(batch[21:])).to_bytes(4, "big")
    cut = data.draw(st.sampled_from([0, 0, 1, 7]))
    buf = bytes(batch[: len(batch) - cut])
    config = data.draw(st.sampled_from([
        LogConfig(), LogConfig(cleanup_policy=("compact",)), LogConfig(message_timestamp_type="LogAppendTime"),
        LogConfig(message_timestamp_after_max_ms=0, message_timestamp_before_max_ms=50),
    ]))
    now = data.draw(st.sampled_from([NOW, NOW - 10**6, NOW + 10**6]))
    limits = batch_limits(config)
    native = single_batch(memoryview(buf), now, *limits)
    assert native == single_batch_py(memoryview(buf), now, *limits)
    if native is not None:
        assert validate_batches(buf, config, now) == [native]


def test_append_of_a_request_buffer_equals_append_of_bytes_on_every_path(tmp_path: Path) -> None:
    batches = [make_batch([b"x" * i for i in range(1, n + 2)], timestamp=NOW + n) for n in range(4)]
    one, two = open_log(tmp_path / "one"), open_log(tmp_path / "two")
    for batch in batches:  # one plain batch in a writable view: the one-call path
        expected = one.append(batch, now_ms=NOW)
        request = bytearray(batch)
        result = two.append(memoryview(request), now_ms=NOW)
        assert result == expected
        assert bytes(request) == read_all(two, expected.base_offset)[0]
    several = bytearray(b"".join(batches))  # several batches: the general path, still in place
    assert two.append(memoryview(several), now_ms=NOW) == one.append(bytes(several), now_ms=NOW)
    assert read_all(one) == read_all(two)
    corrupt = bytearray(batches[0])
    corrupt[-1] ^= 1
    with pytest.raises(CorruptMessageError):  # declined by the one-call check, refused precisely
        two.append(memoryview(corrupt), now_ms=NOW)
    assert two.log_end_offset == one.log_end_offset
    append_time = open_log(tmp_path / "three", message_timestamp_type="LogAppendTime")
    stamped = append_time.append(memoryview(bytearray(batches[0])), now_ms=NOW)
    assert stamped.log_append_time_ms == NOW and stamped.batch_headers[0].max_timestamp == NOW
    one.close()
    two.close()
    append_time.close()


def test_active_segment_preallocates_without_changing_the_size(tmp_path: Path) -> None:
    plog = open_log(tmp_path / "p", segment_bytes=64 * 1024)
    batch = make_batch([b"v" * 1000 for _ in range(20)], timestamp=NOW)
    for _ in range(5):
        plog.append(batch, now_ms=NOW)
    segments = plog.segments()
    assert len(segments) > 1
    for segment in segments:
        st_ = segment.log_path.stat()
        assert st_.st_size == segment.size  # preallocation never moves the visible end
    # rolled segments gave back what was reserved beyond their end
    for segment in segments[:-1]:
        assert segment.log_path.stat().st_blocks * 512 < segment.size + 64 * 1024
    active = segments[-1]
    if active.preallocate:  # fallocate worked on this filesystem: blocks are reserved ahead
        assert active.log_path.stat().st_blocks * 512 >= active.size + PREALLOCATE_BYTES // 2
    plog.close()
    assert active.log_path.stat().st_blocks * 512 < active.size + 64 * 1024
    reopened = open_log(tmp_path / "p", segment_bytes=64 * 1024)
    assert len(read_all(reopened)) == 5
    reopened.close()
