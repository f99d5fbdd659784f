"""The log cleaner in process, on real logs: what survives, offsets, horizons, crash windows."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from seaway.broker.log.cleaner import CLEANER_CHECKPOINT, LogCleaner
from seaway.broker.log.cleaner_keys import KeylessRecordError, check_keys_present, keyless_record_indexes
from seaway.broker.log.cleaner_rewrite import CleanStats, Rules, rewrite_group
from seaway.broker.log.config import LogConfig
from seaway.broker.log.log_manager import LogManager
from seaway.broker.log.partition_log import PartitionLog
from seaway.broker.log.recovery import DELETED_SUFFIX, SWAP_SUFFIX, read_offset_checkpoint
from seaway.protocol.record_batch import Compression, iter_batch_headers, parse_batch_header
from seaway.protocol.records import Record, build_batch, iter_batches

pytestmark = pytest.mark.timeout(60)

T0 = 1_700_000_000_000
COMPACTED = {
    "cleanup.policy": "compact",
    "segment.bytes": "4000",
    "min.cleanable.dirty.ratio": "0.01",
    "delete.retention.ms": "1000",
    "segment.ms": "60000",
}


@pytest.fixture
def manager(tmp_path: Path) -> Iterator[LogManager]:
    logs = LogManager([tmp_path / "logs"], LogConfig())
    logs.load()
    yield logs
    logs.close()


def _append(plog: PartitionLog, ops: list[tuple[bytes, bytes | None]], codec: int, ts: int, *,
            producer_id: int = -1, producer_epoch: int = -1, base_sequence: int = -1) -> None:
    records = [Record(i, ts, key, value) for i, (key, value) in enumerate(ops)]
    plog.append(build_batch(records, compression=codec, producer_id=producer_id, producer_epoch=producer_epoch,
                            base_sequence=base_sequence), now_ms=ts)


def _fill(plog: PartitionLog, rng: random.Random, n_batches: int = 120) -> dict[bytes, bytes | None]:
    """Overwrites and tombstones over 40 keys, in gzip, zstd and plain batches."""
    latest: dict[bytes, bytes | None] = {}
    codecs = [Compression.GZIP, Compression.ZSTD, Compression.NONE]
    for b in range(n_batches):
        ops = []
        for _ in range(rng.randint(1, 8)):
            key = f"key-{rng.randrange(40)}".encode()
            value = None if rng.random() < 0.15 else f"value-{b}-{rng.random()}".encode()
            ops.append((key, value))
            latest[key] = value
        _append(plog, ops, codecs[b % 3], T0 + b)
    # A record with its own key rolls the last data segment (segment.ms is a minute).
    _append(plog, [(b"sentinel", b"s")], Compression.NONE, T0 + 120_000)
    return latest


def _records(plog: PartitionLog) -> list[Record]:
    out: list[Record] = []
    offset = plog.log_start_offset
    while True:
        region = plog.read(offset, 1 << 20)
        if region is None:
            return out
        for header, records in iter_batches(region.read_bytes()):
            out.extend(records)
            offset = header.next_offset


def _check_cleaned(records: list[Record], latest: dict[bytes, bytes | None], *, tombstones: bool) -> None:
    offsets = [r.offset for r in records]
    assert offsets == sorted(set(offsets)), "offsets must strictly increase"
    expected = {k: v for k, v in latest.items() if tombstones or v is not None}
    expected[b"sentinel"] = b"s"
    assert {r.key: r.value for r in records} == expected
    assert len(records) == len(expected), "exactly one record per key"


def test_clean_keeps_latest_per_key_then_drops_tombstones(manager: LogManager) -> None:
    manager.create_topic("c", 1, COMPACTED)
    plog = manager.get_log("c", 0)
    assert plog is not None
    latest = _fill(plog, random.Random(7))
    before = _records(plog)
    assert len(plog.segments()) > 5
    cleaner = LogCleaner(manager)

    stats = cleaner.clean_once(now_ms=T0 + 130_000)
    assert stats is not None and stats.records_retained < len(before)
    after = _records(plog)
    _check_cleaned(after, latest, tombstones=True)
    by_offset = {r.offset: r for r in before}
    assert all(by_offset[r.offset] == r for r in after), "records keep offsets, timestamps and headers"
    assert read_offset_checkpoint(plog.directory / CLEANER_CHECKPOINT) == plog.segments()[-1].base_offset
    horizons = [h for s in plog.segments() for h in s.headers() if h.has_delete_horizon]
    assert horizons and all(h.base_timestamp == T0 + 130_000 + 1000 for h in horizons)
    assert stats.next_delete_horizon_ms == T0 + 131_000

    assert cleaner.clean_once(now_ms=T0 + 130_500) is None, "nothing dirty, horizon not reached"
    stats = cleaner.clean_once(now_ms=T0 + 131_000)
    assert stats is not None and stats.tombstones_dropped > 0
    _check_cleaned(_records(plog), latest, tombstones=False)

    # The cleaned log reopens (indexes, recovery) to the same records.
    manager.close()
    manager.load()
    reopened = manager.get_log("c", 0)
    assert reopened is not None
    _check_cleaned(_records(reopened), latest, tombstones=False)


def test_dirty_ratio_and_min_compaction_lag_decide(manager: LogManager) -> None:
    manager.create_topic("lagged", 1, {**COMPACTED, "min.compaction.lag.ms": "3600000"})
    manager.create_topic("plain", 1, {"segment.bytes": "4000"})
    for name in ("lagged", "plain"):
        plog = manager.get_log(name, 0)
        assert plog is not None
        _fill(plog, random.Random(1), 60)
    cleaner = LogCleaner(manager)
    [dirty] = cleaner.dirty_logs(T0 + 130_000)  # the delete-policy topic is not a candidate
    assert dirty.log.topic == "lagged"
    assert dirty.first_uncleanable == dirty.log.segments()[0].base_offset and not dirty.cleanable
    assert cleaner.clean_once(now_ms=T0 + 130_000) is None
    [dirty] = cleaner.dirty_logs(T0 + 7_200_000)  # an hour later every closed segment is old enough
    assert dirty.cleanable and dirty.dirty_ratio == 1.0
    assert cleaner.clean_once(now_ms=T0 + 7_200_000) is not None


def test_max_compaction_lag_forces_a_clean_below_the_ratio(manager: LogManager) -> None:
    manager.create_topic("c", 1, {**COMPACTED, "min.cleanable.dirty.ratio": "0.99", "delete.retention.ms": "86400000",
                                  "max.compaction.lag.ms": "60000"})
    plog = manager.get_log("c", 0)
    assert plog is not None
    _fill(plog, random.Random(3), 80)
    cleaner = LogCleaner(manager)
    assert cleaner.clean_once(now_ms=T0 + 130_000) is not None  # the whole log is dirty: ratio 1
    _append(plog, [(b"key-1", b"again")], Compression.NONE, T0 + 130_000)
    _append(plog, [(b"sentinel", b"s2")], Compression.NONE, T0 + 300_000)  # rolls (max lag < segment.ms)
    [dirty] = cleaner.dirty_logs(T0 + 300_000)
    assert dirty.dirty_ratio < 0.99 and dirty.overdue and dirty.cleanable
    [dirty] = cleaner.dirty_logs(T0 + 150_000)
    assert not dirty.overdue and not dirty.cleanable


def test_emptied_batch_of_an_idempotent_producer_stays_as_a_header(manager: LogManager) -> None:
    manager.create_topic("c", 1, COMPACTED)
    plog = manager.get_log("c", 0)
    assert plog is not None
    _append(plog, [(b"a", b"1"), (b"b", b"1")], Compression.GZIP, T0, producer_id=7, producer_epoch=2,
            base_sequence=0)
    _append(plog, [(b"a", b"2")], Compression.ZSTD, T0 + 1, producer_id=7, producer_epoch=2, base_sequence=2)
    _append(plog, [(b"a", b"3"), (b"b", b"3")], Compression.NONE, T0 + 2)
    _append(plog, [(b"sentinel", b"s")], Compression.NONE, T0 + 120_000)
    LogCleaner(manager).clean_log(plog, T0 + 130_000)
    headers = [h for s in plog.segments() for h in s.headers()]
    assert [(h.base_offset, h.record_count) for h in headers] == [(2, 0), (3, 2), (5, 1)]
    empty = headers[0]
    assert (empty.producer_id, empty.producer_epoch, empty.base_sequence, empty.last_sequence) == (7, 2, 2, 2)
    assert [(r.offset, r.key, r.value) for r in _records(plog)] == [
        (3, b"a", b"3"), (4, b"b", b"3"), (5, b"sentinel", b"s")]


def _crash_copy(plog: PartitionLog, config: LogConfig) -> PartitionLog:
    """Open the directory again as a restart after kill -9 would (the old object is dropped)."""
    return PartitionLog.open(plog.directory, config, topic=plog.topic, partition=plog.partition)


@pytest.mark.parametrize("stage", ["cleaned", "swap", "swap+some-deleted"])
def test_interrupted_swap_leaves_a_valid_complete_log(manager: LogManager, stage: str) -> None:
    manager.create_topic("c", 1, COMPACTED)
    plog = manager.get_log("c", 0)
    assert plog is not None
    latest = _fill(plog, random.Random(11))
    before = _records(plog)
    group = plog.segments()[:4]
    rules = Rules({}, T0 + 130_000, plog.config, dict)
    cleaned, _ = rewrite_group(plog, group, rules, CleanStats(), lambda: False)
    if stage != "cleaned":
        cleaned.change_file_suffixes(".cleaned", SWAP_SUFFIX)
    if stage == "swap+some-deleted":
        for segment in group[:2]:
            segment.change_file_suffixes("", DELETED_SUFFIX)
    reopened = _crash_copy(plog, plog.config)
    names = sorted(p.name for p in reopened.directory.iterdir())
    assert not [n for n in names if n.endswith((".cleaned", ".swap", ".deleted"))], names
    after = _records(reopened)
    # An empty offset map drops only keyless records and (past horizons) tombstones: none here.
    assert after == before
    assert {r.key: r.value for r in after} == {**latest, b"sentinel": b"s"}
    cleaner = LogCleaner(manager)
    cleaner.clean_log(reopened, T0 + 130_000)
    _check_cleaned(_records(reopened), latest, tombstones=True)


def test_keyless_records_are_found_inside_compressed_batches() -> None:
    records = [Record(0, T0, b"k", b"v"), Record(1, T0, None, b"v"), Record(2, T0, b"k2", None),
               Record(3, T0, None, None)]
    for codec in (Compression.NONE, Compression.GZIP, Compression.ZSTD, Compression.LZ4, Compression.SNAPPY):
        batch = build_batch(records, compression=codec)
        header = parse_batch_header(batch)
        assert keyless_record_indexes(batch, header) == [1, 3]
    # produced batches have no offset gaps (the record walk refuses them)
    keyed = build_batch([records[0], Record(1, T0, b"k2", None)], compression=Compression.GZIP)
    check_keys_present(keyed, list(iter_batch_headers(keyed)), "t-0")
    with pytest.raises(KeylessRecordError) as info:
        batch = build_batch(records)
        check_keys_present(batch, list(iter_batch_headers(batch)), "t-0")
    assert info.value.code == 87 and [i for i, _ in info.value.record_errors] == [1, 3]
