"""The cleaner's two passes over a log, as Kafka's ``Cleaner.doClean``.

1. **Map** the dirty section ``[first dirty offset, end)``: key -> offset of its latest
   record, segment by segment, stopping at a segment boundary when the map outgrows its
   memory budget (``log.cleaner.dedupe.buffer.size``); ``end`` is where mapping stopped.
2. **Rewrite** every closed segment below ``end``, in groups whose total size fits
   ``segment.bytes`` (Kafka's ``groupSegmentsBySize``): each group becomes one
   ``.cleaned`` segment named after its first base offset, holding the records that
   survive, and is swapped in by :meth:`PartitionLog.replace_segments`.

A record survives when it has a key, no later record of the dirty section has the same
key, and, for a tombstone (null value), its batch's delete horizon has not passed.
Offsets never change, so a cleaned log has gaps. A batch keeps its base offset,
``lastOffsetDelta`` (so its producer's last sequence), codec, timestamp type, producer
id/epoch/base sequence and leader epoch; a batch that loses nothing (and needs no horizon)
is copied byte for byte. A batch that loses every record disappears, except the last
batch of an idempotent producer, which stays as an empty header-only batch so the
producer's sequence survives a rebuild of producer state from the log (as in Kafka).

Tombstones follow KIP-534: the first time a batch holding tombstones is rewritten, its
delete horizon (``now + delete.retention.ms``) is stamped into it (attribute bit 6, base
timestamp = horizon); a later cleaning after the horizon drops the tombstones.

Transactions, as Kafka's ``CleanedTransactionMetadata`` (the cleaning never reaches past
the last stable offset, so every transaction it sees has ended): batches of aborted
transactions (known from the ``.txnindex`` entries overlapping the cleaned range) are
dropped whole, and their keys never enter the offset map, so an aborted write never
shadows a committed one. An abort marker is kept while this pass still saw data of its
transaction (and its index entry moves to the cleaned segment); a commit marker while
this pass saw data of its transaction. A marker no longer needed is treated like a
tombstone: stamped with a delete horizon first, removed by a cleaning after it.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from seaway.broker.log.config import LogConfig
from seaway.broker.log.partition_log import PartitionLog
from seaway.broker.log.recovery import CLEANED_SUFFIX
from seaway.broker.log.segment import Segment, SegmentFile
from seaway.broker.log.txn_index import AbortedTxn
from seaway.protocol.record_batch import BatchHeader, CorruptBatchError, parse_batch_header
from seaway.protocol.records import ControlType, Record, build_batch, control_type, decode_batch

__all__ = [
    "CleanAborted",
    "CleanStats",
    "OffsetMap",
    "Rules",
    "TxnTracker",
    "build_offset_map",
    "group_by_size",
    "iter_batches",
    "rewrite_group",
]

_CHUNK = 1 << 20
_FLUSH_BYTES = 1 << 20
_MAP_ENTRY_OVERHEAD = 100  # rough bytes of a dict slot, an int and a bytes object header
_INT32_MAX = 2**31 - 1

OffsetMap = dict[bytes, int]
"""Key -> offset of the latest record with that key in the dirty section."""


class CleanAborted(Exception):
    """The cleaner was asked to stop, or the log changed under it; nothing was swapped."""


@dataclass
class CleanStats:
    """What one cleaning did (logged, and returned to tests)."""

    bytes_read: int = 0
    bytes_written: int = 0
    records_read: int = 0
    records_retained: int = 0
    tombstones_dropped: int = 0
    aborted_batches_dropped: int = 0
    markers_dropped: int = 0
    segments_in: int = 0
    segments_out: int = 0
    next_delete_horizon_ms: int | None = None
    """Earliest delete horizon stamped on a retained tombstone batch (when to clean again)."""


def iter_batches(segment: Segment) -> Iterator[tuple[BatchHeader, memoryview]]:
    """Every batch of a closed segment: header (``position`` in the file) and its bytes."""
    file: SegmentFile | None = segment.file
    if file is None:
        raise CleanAborted(f"{segment.log_path} is closed")
    fd, size = file.fileno(), segment.size
    pos, buf, buf_start = 0, b"", 0
    while pos < size:
        rel = pos - buf_start
        try:
            header = parse_batch_header(buf, rel)
        except CorruptBatchError as exc:
            if exc.reason != "truncated":
                raise CleanAborted(f"{segment.log_path}: {exc} at byte {pos}") from None
            want = _CHUNK
            if len(buf) - rel >= 12:
                want = max(_CHUNK, int.from_bytes(buf[rel + 8 : rel + 12], "big", signed=True) + 12)
            buf, buf_start, rel = os.pread(fd, min(want, size - pos), pos), pos, 0
            try:
                header = parse_batch_header(buf, 0)
            except CorruptBatchError as exc2:
                raise CleanAborted(f"{segment.log_path}: {exc2} at byte {pos}") from None
        yield header._replace(position=pos), memoryview(buf)[rel : rel + header.size]
        pos += header.size


class TxnTracker:
    """Which transactions a pass over the log is inside of (Kafka's ``CleanedTransactionMetadata``).

    Fed every batch in offset order; ``aborted`` are the aborted transactions overlapping
    the pass (from the ``.txnindex`` files), each becoming "open" at its first offset.
    """

    def __init__(self, aborted: Sequence[AbortedTxn]) -> None:
        self._aborted = deque(sorted(aborted, key=lambda t: t.first_offset))
        self._open_aborted: dict[int, tuple[AbortedTxn, bool]] = {}
        """producer id -> (its aborted transaction, whether this pass saw data of it)."""
        self._open_committed: set[int] = set()

    def _reach(self, offset: int) -> None:
        while self._aborted and self._aborted[0].first_offset <= offset:
            txn = self._aborted.popleft()
            self._open_aborted[txn.producer_id] = (txn, False)

    def is_aborted_data(self, header: BatchHeader) -> bool:
        """Whether a data batch belongs to an aborted transaction (then it is dropped)."""
        self._reach(header.last_offset)
        if not header.is_transactional:
            return False
        found = self._open_aborted.get(header.producer_id)
        if found is not None:
            self._open_aborted[header.producer_id] = (found[0], True)
            return True
        self._open_committed.add(header.producer_id)
        return False

    def on_marker(self, header: BatchHeader, abort: bool) -> tuple[bool, AbortedTxn | None]:
        """(the marker may go, the index entry to keep with it) for an end marker."""
        self._reach(header.last_offset)
        if abort:
            found = self._open_aborted.pop(header.producer_id, None)
            if found is not None and found[1]:
                return False, found[0]
            return True, None
        if header.producer_id in self._open_committed:
            self._open_committed.discard(header.producer_id)
            return False, None
        return True, None


def _marker_is_abort(raw: memoryview) -> bool | None:
    """True for an abort marker, False for a commit, None for an empty control batch."""
    _, records = decode_batch(raw, verify_crc=False)
    if not records:
        return None
    return control_type(records[0]) == ControlType.ABORT


def build_offset_map(
    segments: Sequence[Segment],
    first_dirty: int,
    max_bytes: int,
    stop: Callable[[], bool],
    aborted: Sequence[AbortedTxn] = (),
) -> tuple[OffsetMap, int, int]:
    """Map the dirty ``segments`` (oldest first, closed); returns ``(map, count, bytes read)``.

    ``count`` segments were mapped: at least one, more while the map's estimated size
    stays within ``max_bytes``. Records of ``aborted`` transactions are not mapped.
    """
    offsets: OffsetMap = {}
    used = read = count = 0
    tracker = TxnTracker(aborted)
    for segment in segments:
        if count and used > max_bytes:
            break
        for header, raw in iter_batches(segment):
            if stop():
                raise CleanAborted("cleaner stopping")
            read += header.size
            if header.is_control:
                abort = _marker_is_abort(raw)
                if abort is not None:
                    tracker.on_marker(header, abort)
                continue
            if tracker.is_aborted_data(header) or header.last_offset < first_dirty:
                continue
            for record in decode_batch(raw)[1]:
                key = record.key
                if key is not None and record.offset >= first_dirty:
                    if key not in offsets:
                        used += len(key) + _MAP_ENTRY_OVERHEAD
                    offsets[key] = record.offset
        count += 1
    return offsets, count, read


def group_by_size(segments: Sequence[Segment], max_bytes: int) -> list[list[Segment]]:
    """Consecutive segments in groups of at most ``max_bytes`` (one segment at least)."""
    groups: list[list[Segment]] = []
    for segment in segments:
        if groups:
            last = groups[-1]
            size = sum(s.size for s in last) + segment.size
            if size <= max_bytes and segment.next_offset - 1 - last[0].base_offset <= _INT32_MAX:
                last.append(segment)
                continue
        groups.append([segment])
    return groups


class Rules:
    """The retention rules of one cleaning (see the module docstring)."""

    def __init__(
        self,
        offsets: OffsetMap,
        now_ms: int,
        config: LogConfig,
        producer_last_batches: Callable[[], dict[int, int]],
        aborted: Sequence[AbortedTxn] = (),
    ) -> None:
        self.offsets = offsets
        self.now_ms = now_ms
        self.config = config
        self._scan_last_batches = producer_last_batches
        self._last_batches: dict[int, int] | None = None
        self.transactions = TxnTracker(aborted)
        self.kept_txn_entries: list[AbortedTxn] = []
        """Index entries of abort markers kept by the group being rewritten."""

    def is_last_batch_of_producer(self, header: BatchHeader) -> bool:
        """Whether ``header`` is its producer's newest batch in the log (scanned on first use)."""
        if header.producer_id < 0:
            return False
        if self._last_batches is None:
            self._last_batches = self._scan_last_batches()
        return self._last_batches.get(header.producer_id) == header.base_offset


def _filter_batch(
    header: BatchHeader, raw: memoryview, rules: Rules, stats: CleanStats
) -> bytes | memoryview | None:
    """The batch to write for ``raw`` (itself when unchanged), or None to drop it."""
    if header.is_control:
        return _filter_marker(header, raw, rules, stats)
    if rules.transactions.is_aborted_data(header):
        stats.aborted_batches_dropped += 1
        stats.records_read += header.record_count
        return _emptied(header, rules, keep_epoch_only=True)
    _, records = decode_batch(raw, verify_crc=False)
    stats.records_read += len(records)
    horizon = header.base_timestamp if header.has_delete_horizon else None
    horizon_passed = horizon is not None and rules.now_ms >= horizon
    kept: list[Record] = []
    has_tombstone = False
    for record in records:
        key = record.key
        if key is None or rules.offsets.get(key, -1) > record.offset:
            continue
        if record.value is None:
            if horizon_passed:
                stats.tombstones_dropped += 1
                continue
            has_tombstone = True
        kept.append(record)
    stats.records_retained += len(kept)
    if has_tombstone and horizon is None:
        horizon = rules.now_ms + rules.config.delete_retention_ms
    if has_tombstone and horizon is not None:
        nxt = stats.next_delete_horizon_ms
        stats.next_delete_horizon_ms = horizon if nxt is None else min(nxt, horizon)
    if len(kept) == len(records) and (not has_tombstone or header.has_delete_horizon):
        return raw
    if not kept:
        return _emptied(header, rules)
    return build_batch(
        kept,
        base_offset=header.base_offset,
        compression=header.compression,
        timestamp_type=1 if header.is_log_append_time else 0,
        producer_id=header.producer_id,
        producer_epoch=header.producer_epoch,
        base_sequence=header.base_sequence,
        is_transactional=header.is_transactional,
        partition_leader_epoch=header.partition_leader_epoch,
        max_timestamp=header.max_timestamp if header.is_log_append_time else None,
        last_offset_delta=header.last_offset_delta,
        delete_horizon_ms=horizon if has_tombstone else None,
    )


def _emptied(header: BatchHeader, rules: Rules, *, keep_epoch_only: bool = False) -> bytes | None:
    """Nothing of the batch survives: None, or the header-only batch kept when it is its
    producer's last (its sequence and epoch must survive a rebuild of producer state).

    The emptied batch carries its max timestamp as base timestamp; an aborted batch kept
    this way loses its transactional bit (it no longer opens a transaction on replay).
    """
    if not rules.is_last_batch_of_producer(header):
        return None
    return build_batch(
        [],
        base_offset=header.base_offset,
        timestamp_type=1 if header.is_log_append_time else 0,
        producer_id=header.producer_id,
        producer_epoch=header.producer_epoch,
        base_sequence=header.base_sequence,
        is_transactional=header.is_transactional and not keep_epoch_only,
        partition_leader_epoch=header.partition_leader_epoch,
        base_timestamp=header.max_timestamp,
        max_timestamp=header.max_timestamp,
        last_offset_delta=header.last_offset_delta,
    )


def _filter_marker(header: BatchHeader, raw: memoryview, rules: Rules, stats: CleanStats) -> bytes | memoryview | None:
    """An end marker: kept while needed, then stamped with a delete horizon, then dropped."""
    abort = _marker_is_abort(raw)
    if abort is None:
        return raw  # an emptied control batch: nothing to decide
    can_go, entry = rules.transactions.on_marker(header, abort)
    if entry is not None:
        rules.kept_txn_entries.append(entry)
    if not can_go:
        return raw
    if header.has_delete_horizon:
        if rules.now_ms >= header.base_timestamp:
            stats.markers_dropped += 1
            return None
        horizon = header.base_timestamp
        stamped: bytes | memoryview = raw
    else:
        horizon = rules.now_ms + rules.config.delete_retention_ms
        _, records = decode_batch(raw, verify_crc=False)
        stamped = build_batch(
            records,
            base_offset=header.base_offset,
            timestamp_type=1 if header.is_log_append_time else 0,
            producer_id=header.producer_id,
            producer_epoch=header.producer_epoch,
            base_sequence=header.base_sequence,
            is_transactional=header.is_transactional,
            is_control=True,
            partition_leader_epoch=header.partition_leader_epoch,
            max_timestamp=header.max_timestamp,
            last_offset_delta=header.last_offset_delta,
            delete_horizon_ms=horizon,
        )
    nxt = stats.next_delete_horizon_ms
    stats.next_delete_horizon_ms = horizon if nxt is None else min(nxt, horizon)
    return stamped


def rewrite_group(
    plog: PartitionLog,
    group: Sequence[Segment],
    rules: Rules,
    stats: CleanStats,
    stop: Callable[[], bool],
) -> tuple[Segment, bool]:
    """Write the survivors of ``group`` into a new ``.cleaned`` segment, fsynced.

    Returns the segment and whether any batch changed. The caller swaps it in with
    :meth:`PartitionLog.replace_segments`, or deletes it.
    """
    changed = len(group) > 1
    config = plog.config
    cleaned = Segment.create(
        plog.directory, group[0].base_offset, max_index_bytes=config.segment_index_bytes, suffix=CLEANED_SUFFIX
    )
    try:
        pending = bytearray()
        headers: list[BatchHeader] = []
        for segment in group:
            stats.segments_in += 1
            for header, raw in iter_batches(segment):
                if stop():
                    raise CleanAborted("cleaner stopping")
                stats.bytes_read += header.size
                out = _filter_batch(header, raw, rules, stats)
                if out is None:
                    changed = True
                    continue
                if out is not raw:
                    changed = True
                new_header = header if out is raw else parse_batch_header(out, 0)
                headers.append(new_header._replace(position=len(pending)))
                pending += out
                if len(pending) >= _FLUSH_BYTES:
                    cleaned.append(pending, headers, config.index_interval_bytes)
                    stats.bytes_written += len(pending)
                    pending, headers = bytearray(), []
        if pending:
            cleaned.append(pending, headers, config.index_interval_bytes)
            stats.bytes_written += len(pending)
        for entry in rules.kept_txn_entries:
            cleaned.txn_index.append(entry)
        rules.kept_txn_entries.clear()
        cleaned.on_become_inactive()
        cleaned.flush()
        last = group[-1].log_path
        try:
            mtime = os.stat(last).st_mtime_ns
            os.utime(cleaned.log_path, ns=(mtime, mtime))
        except OSError:
            pass  # the old segment went meanwhile; replace_segments will notice
    except BaseException:
        cleaned.delete()
        raise
    return cleaned, changed
