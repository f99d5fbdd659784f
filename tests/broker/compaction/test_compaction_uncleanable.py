"""Issue 14, item 2 in the cleaner: a batch it cannot process marks the partition uncleanable.

The bomb (1 GiB of zeros in 32 KB of zstd) is put in a compacted log below the produce
path's validation, as data written by an older broker or a damaged disk would be. The
cleaner must give up on that partition once, in bounded memory (this process's peak RSS,
``VmHWM``, reset through ``/proc/self/clear_refs``), keep cleaning the others, and never
retry it in a loop.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import cramjam
import pytest
from crc32c import crc32c
from seaway.broker.log.cleaner import LogCleaner
from seaway.broker.log.config import LogConfig
from seaway.broker.log.log_manager import LogManager
from seaway.protocol.record_batch import Compression, parse_batch_header
from seaway.protocol.records import Record, build_batch

pytestmark = pytest.mark.timeout(120)

T0 = 1_700_000_000_000
MIB = 1024 * 1024
COMPACTED = {"cleanup.policy": "compact", "segment.bytes": "4000", "min.cleanable.dirty.ratio": "0.01",
             "segment.ms": "60000"}


@pytest.fixture
def manager(tmp_path: Path) -> Iterator[LogManager]:
    logs = LogManager([tmp_path / "logs"], LogConfig())
    logs.load()
    yield logs
    logs.close()


def _peak_rss_reset() -> None:
    Path("/proc/self/clear_refs").write_text("5")  # resets VmHWM to the current RSS


def _vm(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise AssertionError(field)


def _fill(manager: LogManager, topic: str, bomb: bytes | None) -> None:
    manager.create_topic(topic, 1, COMPACTED)
    plog = manager.get_log(topic, 0)
    assert plog is not None
    for b in range(40):
        records = [Record(i, T0 + b, f"key-{i % 5}".encode(), f"v{b}-{i}".encode()) for i in range(5)]
        plog.append(build_batch(records, compression=Compression.GZIP), now_ms=T0 + b)
        if bomb is not None and b == 10:
            # Below validation (which refuses it since this fix): stored as an older broker would have.
            header = parse_batch_header(bomb)
            plog._write(bytearray(bomb), [header], T0 + b)
    plog.append(build_batch([Record(0, T0 + 120_000, b"sentinel", b"s")]), now_ms=T0 + 120_000)


def test_a_bomb_in_a_compacted_log_makes_it_uncleanable_once_in_bounded_memory(
    manager: LogManager, caplog: pytest.LogCaptureFixture
) -> None:
    payload = bytes(cramjam.zstd.compress(bytes(1 << 30)))  # 1 GiB of zeros in ~32 KB
    records = build_batch([Record(0, T0, b"k", b"v")])
    header = records[:61]
    # the bomb: a well-formed header (count 1, CRC right) over the zstd payload
    bomb_header = bytearray(header)
    bomb_header[8:12] = (49 + len(payload)).to_bytes(4, "big")
    bomb_header[21:23] = Compression.ZSTD.to_bytes(2, "big")
    bomb = bytes(bomb_header) + payload
    bomb = bomb[:17] + crc32c(bomb[21:]).to_bytes(4, "big") + bomb[21:]
    _fill(manager, "bombed", bomb)
    _fill(manager, "healthy", None)
    cleaner = LogCleaner(manager)

    _peak_rss_reset()
    before = _vm("VmRSS")
    with caplog.at_level(logging.ERROR, logger="seaway.broker.log.cleaner"):
        results = [cleaner.clean_once(T0 + 200_000 + i * 3_600_000) for i in range(4)]
    peak = _vm("VmHWM")
    assert peak - before < 300 * MIB, f"cleaning took the peak RSS up by {(peak - before) // MIB} MiB"
    assert cleaner.uncleanable_partitions.keys() == {("bombed", 0)}
    assert "decompresses to more than" in cleaner.uncleanable_partitions[("bombed", 0)]
    uncleanable_logs = [r for r in caplog.records if "uncleanable" in r.getMessage()]
    assert len(uncleanable_logs) == 1, "logged once, never retried"
    assert any(r is not None for r in results), "the healthy partition was still cleaned"
    dirty = {d.log.topic for d in cleaner.dirty_logs(T0 + 10**9)}
    assert "bombed" not in dirty
