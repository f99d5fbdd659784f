"""Restart, crash recovery and retention of a PartitionLog, on real files."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
from seaway.broker.log.config import LogConfig
from seaway.broker.log.partition_log import PartitionLog
from seaway.broker.log.segment import Segment
from seaway.protocol.errors import OffsetOutOfRangeError

from tests.broker.log.logtest_helpers import make_batch, open_log, payload, read_all

NOW = 1_700_000_000_000


def _fill(plog: PartitionLog, count: int, *, timestamp: int = 1000, step: int = 0) -> list[bytes]:
    batches = [make_batch([b"v%03d" % i, b"w%03d" % i], timestamp=timestamp + i * step) for i in range(count)]
    for batch in batches:
        plog.append(batch, now_ms=NOW)
    return batches


def test_restart_keeps_everything(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    plog = open_log(directory, segment_bytes=500, index_interval_bytes=64)
    batches = _fill(plog, 30)
    end, segments = plog.log_end_offset, len(plog.segments())
    plog.close()
    for clean in (True, False):
        plog = PartitionLog.open(
            directory,
            LogConfig(segment_bytes=500, index_interval_bytes=64),
            topic="t",
            partition=0,
            had_clean_shutdown=clean,
        )
        assert (plog.log_end_offset, len(plog.segments())) == (end, segments)
        assert [payload(b) for b in read_all(plog)] == [payload(b) for b in batches]
        assert plog.offset_for_timestamp(1001) == (0, 1001)
        plog.close()
    plog = open_log(directory, segment_bytes=500, index_interval_bytes=64)
    assert plog.append(make_batch([b"next"]), now_ms=NOW).base_offset == end
    plog.close()


def test_garbage_appended_to_the_active_segment_is_truncated(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    directory = tmp_path / "t-0"
    plog = open_log(directory)
    batches = _fill(plog, 5)
    plog.close()
    log_file = directory / "00000000000000000000.log"
    good_size = log_file.stat().st_size
    with log_file.open("ab") as f:
        f.write(os.urandom(300))
    with caplog.at_level(logging.WARNING, logger="seaway.broker.log"):
        plog = open_log(directory)
    assert "truncated 300 bytes" in caplog.text
    assert log_file.stat().st_size == good_size
    assert plog.log_end_offset == 10
    assert [payload(b) for b in read_all(plog)] == [payload(b) for b in batches]
    plog.close()


def test_torn_last_batch_is_cut_back_to_the_last_valid_batch(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    plog = open_log(directory, segment_bytes=400)
    batches = _fill(plog, 12)
    last = plog.segments()[-1]
    plog.close()
    with open(last.log_path, "r+b") as f:
        f.truncate(last.size - 7)
    plog = open_log(directory, segment_bytes=400)
    assert plog.log_end_offset == 22
    assert [payload(b) for b in read_all(plog)] == [payload(b) for b in batches[:-1]]
    assert plog.append(make_batch([b"again"]), now_ms=NOW).base_offset == 22
    plog.close()


def test_corrupt_batch_in_the_middle_truncates_there(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    plog = open_log(directory)
    batches = _fill(plog, 6)
    plog.close()
    log_file = directory / "00000000000000000000.log"
    data = bytearray(log_file.read_bytes())
    data[len(batches[0]) * 3 + 40] ^= 0x55
    log_file.write_bytes(bytes(data))
    plog = open_log(directory)
    assert plog.log_end_offset == 6
    plog.close()


@pytest.mark.parametrize("damage", ["delete", "garbage"])
def test_missing_or_corrupt_index_is_rebuilt(tmp_path: Path, damage: str) -> None:
    directory = tmp_path / "t-0"
    config = LogConfig(segment_bytes=600, index_interval_bytes=50)
    plog = PartitionLog.open(directory, config, topic="t", partition=0)
    batches = _fill(plog, 30)
    plog.close()
    index = directory / "00000000000000000000.index"
    original = index.read_bytes()
    assert len(original) >= 16
    if damage == "delete":
        index.unlink()
    else:
        index.write_bytes(original[:8] + b"\x00\x00\x00\x00\x00")
    plog = PartitionLog.open(directory, config, topic="t", partition=0, had_clean_shutdown=True)
    assert index.read_bytes() == original
    assert [payload(b) for b in read_all(plog)] == [payload(b) for b in batches]
    plog.close()


def test_retention_by_time_deletes_old_segments_and_persists_start(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    config = LogConfig(segment_bytes=300, retention_ms=10_000)
    plog = PartitionLog.open(directory, config, topic="t", partition=0)
    _fill(plog, 20, timestamp=NOW - 60_000, step=3000)
    bases = [s.base_offset for s in plog.segments()]
    assert len(bases) > 3
    deleted = plog.apply_retention(NOW)
    remaining = plog.segments()
    assert deleted > 0 and len(remaining) == len(bases) - deleted
    assert all(NOW - s.largest_timestamp <= 10_000 for s in remaining[:-1])
    assert plog.log_start_offset == remaining[0].base_offset > 0
    assert not (directory / f"{bases[0]:020d}.log").exists()
    with pytest.raises(OffsetOutOfRangeError):
        plog.read(0, 100)
    start, end = plog.log_start_offset, plog.log_end_offset
    plog.close()
    plog = PartitionLog.open(directory, config, topic="t", partition=0)
    assert (plog.log_start_offset, plog.log_end_offset) == (start, end)
    # Everything expired: the active segment goes too, after a roll to an empty one.
    count = len(plog.segments())
    assert plog.apply_retention(NOW + 10**9) == count
    assert len(plog.segments()) == 1 and plog.segments()[0].size == 0
    assert plog.log_start_offset == plog.log_end_offset == end
    assert plog.apply_retention(NOW + 10**9) == 0
    plog.close()


def test_retention_by_bytes(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    plog = PartitionLog.open(
        directory, LogConfig(segment_bytes=300, retention_bytes=700), topic="t", partition=0
    )
    _fill(plog, 20, timestamp=NOW)
    before = plog.size_bytes
    deleted = plog.apply_retention(NOW)
    assert deleted > 0
    assert plog.size_bytes >= 700 - 300 and plog.size_bytes < before
    assert plog.size_bytes - plog.segments()[0].size < 700
    plog.close()


def test_delete_records_then_retention_persists_the_log_start_offset(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    plog = open_log(directory, segment_bytes=300, retention_ms=-1)
    _fill(plog, 20)
    assert plog.delete_records_before(25) == 25
    with pytest.raises(OffsetOutOfRangeError):
        plog.read(24, 100)
    region = plog.read(25, 1)
    assert region is not None
    deleted = plog.apply_retention(NOW)
    assert deleted > 0 and plog.segments()[0].base_offset <= 25
    with pytest.raises(OffsetOutOfRangeError):
        plog.delete_records_before(41)
    plog.close()
    plog = open_log(directory, segment_bytes=300, retention_ms=-1)
    assert plog.log_start_offset == 25
    plog.close()


def test_file_region_survives_segment_deletion(tmp_path: Path) -> None:
    plog = open_log(tmp_path / "t-0", segment_bytes=300, retention_bytes=0)
    batches = _fill(plog, 10)
    region = plog.read(0, 1 << 20)
    assert region is not None
    assert plog.apply_retention(NOW) > 0
    assert not (tmp_path / "t-0" / "00000000000000000000.log").exists()
    assert payload(region.read_bytes()[: len(batches[0])]) == payload(batches[0])
    os.fstat(region.fileno())
    plog.close()


def test_interrupted_compaction_swap_is_completed(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    config = LogConfig(segment_bytes=300)
    plog = PartitionLog.open(directory, config, topic="t", partition=0)
    batches = _fill(plog, 12)
    first, second = plog.segments()[:2]
    # A "cleaned" replacement of the first two segments keeping every other batch.
    cleaned = Segment.create(directory, 0, max_index_bytes=1 << 20, suffix=".cleaned")
    kept = [
        b
        for b in read_all(plog)
        if (int.from_bytes(b[:8], "big") // 2) % 2 == 0
        and int.from_bytes(b[:8], "big") < plog.segments()[2].base_offset
    ]
    from seaway.protocol.record_batch import iter_batch_headers

    blob = bytearray(b"".join(kept))
    cleaned.append(blob, list(iter_batch_headers(blob)), 4096)
    plog.replace_segments(cleaned, [first, second])
    assert plog.segments()[0].base_offset == 0
    assert sorted(p.name for p in directory.iterdir() if ".deleted" in p.name or ".swap" in p.name) == []
    assert [payload(b) for b in read_all(plog)] == [payload(b) for b in kept] + [
        payload(b) for b in batches if batches.index(b) * 2 >= plog.segments()[1].base_offset
    ]
    plog.close()
    # Crash in the middle of a later swap: .swap present next to the segment it replaces.
    log0 = directory / "00000000000000000000.log"
    (directory / "00000000000000000000.log.swap").write_bytes(log0.read_bytes()[: len(kept[0])])
    plog = PartitionLog.open(directory, config, topic="t", partition=0)
    assert payload(read_all(plog)[0]) == payload(kept[0])
    assert not list(directory.glob("*.swap"))
    plog.close()


def test_index_entries_reach_the_file_on_flush_and_survive_a_crash_before_it(tmp_path: Path) -> None:
    """Index entries are buffered in memory between flushes (offset_index module docstring).

    A flush writes them; a process killed before any flush loses none, because the unclean
    restart rebuilds the indexes of every segment past the recovery point from the log.
    """
    directory = tmp_path / "t-0"
    script = (
        "import os, sys\n"
        "sys.path.insert(0, sys.argv[2])\n"
        "from logtest_helpers import make_batch, open_log\n"
        "from pathlib import Path\n"
        "plog = open_log(Path(sys.argv[1]), index_interval_bytes=64)\n"
        "for i in range(40):\n"
        "    plog.append(make_batch([b'v%03d' % i, b'w%03d' % i], timestamp=1000 + i), now_ms=2000)\n"
        "os._exit(0)  # like kill -9: no close, no flush\n"
    )
    subprocess.run([sys.executable, "-c", script, str(directory), str(Path(__file__).parent)], check=True,
                   timeout=60)
    index = directory / "00000000000000000000.index"
    assert index.stat().st_size < 40 * 8  # the entries were still in memory when it died
    plog = PartitionLog.open(directory, LogConfig(index_interval_bytes=64), topic="t", partition=0)
    assert plog.log_end_offset == 80
    expected = [payload(make_batch([b"v%03d" % i, b"w%03d" % i], timestamp=1000 + i)) for i in range(40)]
    assert [payload(b) for b in read_all(plog)] == expected
    assert plog.offset_for_timestamp(1020) == (38, 1020)  # batch 19: records at 1019 and 1020
    entries = index.stat().st_size // 8
    assert entries >= 30  # recovery wrote the rebuilt index at once
    for i in range(40, 60):
        plog.append(make_batch([b"v%03d" % i, b"w%03d" % i], timestamp=1000 + i), now_ms=2000)
    plog.flush()
    assert index.stat().st_size // 8 >= entries + 15
    plog.close()
