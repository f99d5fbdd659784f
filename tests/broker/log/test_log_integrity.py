"""Issue 14, item 1 at the log: batches whose header disagrees with their records are refused,
offsets never overflow a segment's 32-bit index, and an append is all or nothing.

In-process, on a real PartitionLog in a temp dir: the defects are in the log itself.
"""

from __future__ import annotations

import resource
import struct
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from seaway.broker.log import _record_walk
from seaway.broker.log.config import LogConfig
from seaway.broker.log.record_check import RecordSummary, walk_records_py
from seaway.broker.log.validation import batch_limits, single_batch, single_batch_py, validate_batches
from seaway.protocol.errors import (
    CorruptMessageError,
    InvalidRecordError,
    InvalidTimestampError,
    KafkaProtocolError,
    KafkaStorageError,
)
from seaway.protocol.record_batch import Compression, parse_batch_header
from seaway.protocol.varint import encode_varint

from tests.broker.log.hostile import (
    INT32_MAX,
    compressed_batch,
    crafted_attack_batch,
    raw_batch,
    record_bytes,
    records_bytes,
)
from tests.broker.log.logtest_helpers import make_batch, open_log, read_all

HOUR = 3_600_000


def _state(plog: object, path: Path) -> tuple[int, int, list[bytes]]:
    from seaway.broker.log.partition_log import PartitionLog

    assert isinstance(plog, PartitionLog)
    return plog.log_end_offset, sum(p.stat().st_size for p in path.glob("*.log")), read_all(plog)


def test_the_crafted_batch_is_refused_and_the_offsets_do_not_jump(tmp_path: Path) -> None:
    plog = open_log(tmp_path / "p")
    plog.append(make_batch([b"a", b"b"]), now_ms=1000)
    with pytest.raises(InvalidRecordError, match="claims 2147483647 records"):
        plog.append(crafted_attack_batch())
    assert plog.log_end_offset == 2
    plog.close()


def test_three_crafted_batches_in_one_request_leave_the_log_exactly_as_it_was(tmp_path: Path) -> None:
    plog = open_log(tmp_path / "p")
    plog.append(make_batch([b"a", b"b"]), now_ms=1000)
    before = _state(plog, tmp_path / "p")
    with pytest.raises(InvalidRecordError):
        plog.append(crafted_attack_batch() * 3)
    assert _state(plog, tmp_path / "p") == before
    acked = plog.append(make_batch([b"c"]), now_ms=1000)  # acknowledged after the attack
    assert acked.base_offset == 2
    plog.close()
    reopened = open_log(tmp_path / "p")  # no clean-shutdown marker here: a full recovery scan
    assert reopened.log_end_offset == 3 and len(read_all(reopened)) == 2
    reopened.close()


def test_offsets_that_would_overflow_the_index_roll_or_are_refused_before_a_byte_is_written(
    tmp_path: Path,
) -> None:
    """Below validation (which now refuses such batches): the log's own guarantee."""
    plog = open_log(tmp_path / "p", index_interval_bytes=0)
    plog.append(make_batch([b"a"], timestamp=_now()), now_ms=_now())  # no time-based roll below
    one = bytearray(crafted_attack_batch())
    header = parse_batch_header(one)
    # one batch spanning 2^31-1 offsets fits the active segment exactly (relative 2^31-1)...
    plog._write(one, [header], _now())
    assert plog.log_end_offset == 1 + INT32_MAX and len(plog.segments()) == 1
    # ...the next one rolls first
    plog._write(bytearray(one), [header], _now())
    assert len(plog.segments()) == 2 and plog.log_end_offset == 1 + 2 * INT32_MAX
    before = _state(plog, tmp_path / "p")
    three = bytearray(one * 3)
    headers = [header._replace(position=i * len(one)) for i in range(3)]
    with pytest.raises(InvalidRecordError, match="more than one segment can index"):
        plog._write(three, headers, _now())
    assert _state(plog, tmp_path / "p") == before and len(plog.segments()) == 2
    plog.append(make_batch([b"after"], timestamp=_now()), now_ms=_now())
    plog.close()
    reopened = open_log(tmp_path / "p")
    assert len(read_all(reopened)) == 4
    reopened.close()


def _rec(i: int, **kw: Any) -> bytes:
    return record_bytes(i, **kw)


REFUSED = {
    "count says 2, one record": (raw_batch(records_bytes(1), count=2), InvalidRecordError),
    "count says 1, two records": (raw_batch(records_bytes(2), count=1), InvalidRecordError),
    "trailing bytes": (raw_batch(records_bytes(2) + b"\x00\x00", count=2), InvalidRecordError),
    "offset deltas 0, 2": (raw_batch(_rec(0) + _rec(2), count=2), InvalidRecordError),
    "offset deltas 1, 0": (raw_batch(_rec(1) + _rec(0), count=2), InvalidRecordError),
    "length longer than the fields": (raw_batch(_rec(0, length_adjust=3) + b"\x00" * 3, count=1),
                                      InvalidRecordError),
    "length shorter than the fields": (raw_batch(_rec(0, length_adjust=-1), count=1), InvalidRecordError),
    "length overruns the batch": (raw_batch(_rec(0, length_adjust=40), count=1), InvalidRecordError),
    "negative length": (raw_batch(encode_varint(-5) + b"\x00" * 10, count=1), InvalidRecordError),
    "six-byte varint": (raw_batch(_rec(0, length_varint=b"\x8e\x80\x80\x80\x80\x00"), count=1),
                        InvalidRecordError),
    "key length -2": (raw_batch(b"\x0c\x00\x00\x00\x03\x01\x00", count=1), InvalidRecordError),
    "a record two hours ahead": (raw_batch(_rec(0) + _rec(1, timestamp_delta=2 * HOUR), count=2),
                                 InvalidTimestampError),
    "zstd, count says 3, two records": (raw_batch(records_bytes(2), count=3, codec=Compression.ZSTD),
                                        InvalidRecordError),
    "zstd, trailing bytes": (raw_batch(records_bytes(2) + b"\x01", count=2, codec=Compression.ZSTD),
                             InvalidRecordError),
    "zstd, undecodable": (compressed_batch(b"\x28\xb5\x2f\xfd" + b"garbage" * 10, count=1), CorruptMessageError),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_a_batch_whose_records_disagree_with_its_header_is_refused(case: str, tmp_path: Path) -> None:
    data, error = REFUSED[case]
    plog = open_log(tmp_path / "p")
    plog.append(make_batch([b"a"]), now_ms=1000)
    before = _state(plog, tmp_path / "p")
    with pytest.raises(error):
        plog.append(data)
    with pytest.raises(error):  # nor through a writable request buffer (the one-call path declines it)
        plog.append(memoryview(bytearray(data)))
    assert _state(plog, tmp_path / "p") == before
    plog.close()


def _now() -> int:
    import time

    return int(time.time() * 1000)


def test_well_formed_batches_of_every_shape_are_accepted(tmp_path: Path) -> None:
    now = _now()
    plog = open_log(tmp_path / "p", cleanup_policy=("delete",))
    shapes = [
        raw_batch(records_bytes(1), count=1),
        raw_batch(records_bytes(300, value=b"y" * 100), count=300),  # two-byte lengths and deltas
        raw_batch(b"".join(_rec(i, key=None, value=None) for i in range(3)), count=3),  # nulls
        raw_batch(records_bytes(70), count=70, codec=Compression.ZSTD),
        raw_batch(_rec(0, timestamp_delta=-5) + _rec(1, timestamp_delta=7), count=2),
    ]
    for data in shapes:
        plog.append(data, now_ms=now)
    assert plog.log_end_offset == 1 + 300 + 3 + 70 + 2
    plog.close()


def test_disk_full_mid_append_leaves_the_log_exactly_as_it_was(tmp_path: Path) -> None:
    """A write that fails part way (EFBIG from RLIMIT_FSIZE, as ENOSPC would) is undone."""
    plog = open_log(tmp_path / "p")
    plog.append(make_batch([b"a" * 1000]), now_ms=1000)
    before = _state(plog, tmp_path / "p")
    segment = plog.segments()[-1]
    index_entries = (len(segment.offset_index), len(segment.time_index))
    big = make_batch([b"b" * 1000] * 64)
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (before[1] + len(big) // 2, hard))
    try:
        with pytest.raises(KafkaStorageError):
            plog.append(big, now_ms=1000)
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    assert _state(plog, tmp_path / "p") == before
    assert (len(segment.offset_index), len(segment.time_index)) == index_entries
    assert plog.append(big, now_ms=1000).base_offset == 1
    plog.close()
    reopened = open_log(tmp_path / "p")
    assert reopened.log_end_offset == 65 and len(read_all(reopened)) == 2
    reopened.close()


# -- the C walk is held to the Python one --------------------------------------------------

_VALID = raw_batch(b"".join(_rec(i, value=b"v" * (i * 37 % 200), key=None if i % 3 else b"k",
                               timestamp_delta=i * 1000 - 2000) for i in range(40)), count=40)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_the_c_walk_agrees_with_the_python_walk(data: st.DataObject) -> None:
    buf = bytearray(_VALID)
    for _ in range(data.draw(st.integers(0, 4))):
        i = data.draw(st.integers(61, len(buf) - 1))
        buf[i] = data.draw(st.integers(0, 255))
    end = data.draw(st.sampled_from([len(buf), len(buf) - 1, len(buf) - 5]))
    count = data.draw(st.sampled_from([40, 39, 41, 1]))
    keyless = data.draw(st.booleans())
    try:
        expected: RecordSummary | str = walk_records_py(bytes(buf), 61, end, count, keyless)
    except InvalidRecordError:
        expected = "refused"
    try:
        got: RecordSummary | str = RecordSummary._make(_record_walk.walk(bytes(buf), 61, end, count, keyless))
    except ValueError:
        got = "refused"
    assert got == expected


def test_the_walk_summary() -> None:
    summary = RecordSummary._make(_record_walk.walk(_VALID, 61, len(_VALID), 40, True))
    assert summary == walk_records_py(_VALID, 61, len(_VALID), 40, True)
    assert _record_walk.walk(_VALID, 61, len(_VALID), 40, False)[2] == []
    assert (summary.min_timestamp_delta, summary.max_timestamp_delta) == (-2000, 37000)
    assert summary.keyless == [i for i in range(40) if i % 3]


def test_single_batch_walks_the_records() -> None:
    lying = raw_batch(records_bytes(2) + b"\x00", count=2)
    for check in (single_batch, single_batch_py):  # the C check and its Python reference
        assert check(memoryview(bytearray(lying)), _now(), *batch_limits(LogConfig())) is None
    with pytest.raises(KafkaProtocolError):
        validate_batches(lying, LogConfig(), _now())
    assert struct.unpack_from(">i", lying, 57)[0] == 2
