"""The log of one topic partition: an ordered list of segments, the last one active.

Appending has one door, :meth:`PartitionLog.append`: the produce path's common case (one
plain batch in a writable slice of the request buffer) is checked and written without a
list or a second parse inside it, everything else is validated batch by batch, and the
producer state (:mod:`seaway.broker.producer`) hooks in as an :data:`AppendGuard` that sees
the parsed headers and runs the write itself, so idempotence and transactions are checked
from the same parse, nothing is checksummed twice, and its lock spans check, write and
update.

Threading contract. ``append`` and ``read`` run on the broker's event loop thread and
only ever touch the page cache (``os.write``/``os.pread``); they never fsync. ``flush``,
``maybe_flush``, ``apply_retention`` and ``close`` may run on a worker thread. One
``threading.Lock`` per log guards the segment list and counters; fsync and file deletion
happen outside it, on segments already taken out of (or snapshotted from) the list.

Durability. Appends land in the page cache; fsync follows ``flush.messages`` /
``flush.ms`` (through :meth:`PartitionLog.maybe_flush`, called by the log manager's
maintenance) and every rolled segment is fsynced at the next maintenance pass, as Kafka
schedules a flush on roll. Two per-partition checkpoint files (Kafka's format, one
partition each) make restarts cheap and exact: ``recovery-point-offset-checkpoint`` (the
base offset below which every segment is known fsynced: an unclean restart scans only
segments from there) and ``log-start-offset-checkpoint``.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import struct
import threading
import time
from bisect import bisect_right
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NamedTuple

from seaway.broker.log.config import LogConfig
from seaway.broker.log.recovery import (
    CLEANED_SUFFIX,
    DELETED_SUFFIX,
    SWAP_SUFFIX,
    fsync_dir,
    read_offset_checkpoint,
    tidy_partition_dir,
    write_offset_checkpoint,
)
from seaway.broker.log.retention import segments_to_delete
from seaway.broker.log.segment import Segment, SegmentFile, segment_file_name
from seaway.broker.log.txn_index import AbortedTxn
from seaway.broker.log.validation import batch_limits, single_batch, validate_batches
from seaway.protocol.errors import (
    InvalidRecordError,
    KafkaStorageError,
    NotLeaderOrFollowerError,
    OffsetOutOfRangeError,
)
from seaway.protocol.record_batch import BatchHeader, stamp_log_append_time

__all__ = [
    "LOG_START_OFFSET_CHECKPOINT",
    "RECOVERY_POINT_CHECKPOINT",
    "AppendGuard",
    "AppendResult",
    "FileRegion",
    "PartitionLog",
]

log = logging.getLogger("seaway.broker.log")

_BASE_OFFSET = struct.Struct(">q")  # at byte 0 of a batch, outside the CRC
_LEADER_EPOCH = struct.Struct(">i")  # at byte 12, outside the CRC
_new_tuple = tuple.__new__

LOG_START_OFFSET_CHECKPOINT = "log-start-offset-checkpoint"
RECOVERY_POINT_CHECKPOINT = "recovery-point-offset-checkpoint"


def _now_ms() -> int:
    return int(time.time() * 1000)


def _roll_ms(config: LogConfig) -> int:
    """Kafka's ``LogConfig.maxSegmentMs``: a compacted log also rolls by max.compaction.lag.ms."""
    if config.compacts and config.max_compaction_lag_ms > 0:
        return min(config.segment_ms, config.max_compaction_lag_ms)
    return config.segment_ms


class FileRegion:
    """A byte range of a segment file, for ``os.sendfile``; keeps the file open while alive."""

    __slots__ = ("_file", "length", "position")

    def __init__(self, file: SegmentFile, position: int, length: int) -> None:
        self._file = file
        self.position = position
        self.length = length

    def fileno(self) -> int:
        return self._file.fileno()

    def __len__(self) -> int:
        return self.length

    def read_bytes(self) -> bytes:
        """The bytes themselves (for transports without sendfile, and tests)."""
        chunks, pos, end = [], self.position, self.position + self.length
        while pos < end:
            chunk = os.pread(self._file.fileno(), end - pos, pos)
            if not chunk:
                raise KafkaStorageError("segment file is shorter than the region read from it")
            chunks.append(chunk)
            pos += len(chunk)
        return b"".join(chunks)

    def __repr__(self) -> str:
        return f"FileRegion(fd={self.fileno()}, position={self.position}, length={self.length})"


class AppendResult(NamedTuple):
    """What a produce response needs; ``batch_headers`` are as stored (offsets stamped).

    A NamedTuple because one is built for every partition of every produce request.
    """

    base_offset: int
    last_offset: int
    log_append_time_ms: int
    log_start_offset: int
    batch_headers: list[BatchHeader]


AppendGuard = Callable[["PartitionLog", list[BatchHeader], Callable[[], AppendResult]], AppendResult]
"""``(log, headers, write) -> result``: what :meth:`PartitionLog.append` calls, when given one,
for validated batches that carry a producer id, instead of writing them itself. The guard
checks the producer's state against ``headers`` (as parsed, positions relative to the
records), then either calls ``write()`` (stamp and append; returns its result) and records
the stamped headers, or returns without writing (a duplicate's original offsets), or raises."""


class PartitionLog:
    """Append, read, flush and retention for one partition (see the module docstring)."""

    def __init__(
        self,
        directory: Path,
        config: LogConfig,
        *,
        topic: str,
        partition: int,
        segments: list[Segment],
        log_start_offset: int,
        recovery_point: int,
    ) -> None:
        self.directory = directory
        self.config = config
        self.topic = topic
        self.partition = partition
        self.where = f"{topic}-{partition}"
        """``topic-partition``, as error messages name this log (made once)."""
        self._segments = segments
        self._bases = [s.base_offset for s in segments]
        if segments:
            segments[-1].preallocate = True  # the active segment (see Segment._preallocate)
        self._log_start_offset = log_start_offset
        self._txn_segments = [s for s in segments if len(s.txn_index)]
        self._persisted_log_start_offset = log_start_offset
        self._recovery_point = recovery_point
        self._lock = threading.Lock()
        self._checkpoint_lock = threading.Lock()  # one log-start checkpoint writer at a time (see close)
        self._unflushed_messages = 0
        self._flush_pending = True
        self._last_flush_ms = _now_ms()
        self._closed = False
        self._roll_ms = _roll_ms(config)
        self._log_append_time = config.is_log_append_time
        self.compacts = config.compacts
        """``config.compacts``, cached for the produce path (kept in step by update_config)."""
        self._limits = batch_limits(config)
        self.on_flush_needed: Callable[[PartitionLog], None] | None = None
        """Called from ``append`` when ``flush.messages`` is reached, so a worker can flush."""
        self.first_unstable_offset: int | None = None
        """First offset of the oldest open transaction (None: none), kept by the producer
        state (:mod:`seaway.broker.producer`), which alone sees transactions start and end."""

    # -- opening -------------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        directory: Path,
        config: LogConfig,
        *,
        topic: str,
        partition: int,
        had_clean_shutdown: bool = False,
    ) -> PartitionLog:
        """Open (creating if needed) and recover the log in ``directory``.

        After an unclean shutdown every segment from the recovery point on is scanned and
        truncated at the first invalid batch; after a clean one only segments with a
        missing or damaged index are.
        """
        directory.mkdir(parents=True, exist_ok=True)
        tidy_partition_dir(directory)
        bases = sorted(
            int(p.name[:20]) for p in directory.glob("*.log") if len(p.name) == 24 and p.name[:20].isdigit()
        )
        start_checkpoint = read_offset_checkpoint(directory / LOG_START_OFFSET_CHECKPOINT)
        recovery_point = read_offset_checkpoint(directory / RECOVERY_POINT_CHECKPOINT) or 0
        segments: list[Segment] = []
        for i, base in enumerate(bases):
            segment = Segment.open(
                directory,
                base,
                max_index_bytes=config.segment_index_bytes,
                jitter_ms=config.segment_jitter_ms,
            )
            is_last = i == len(bases) - 1
            recover = segment.needs_recovery or (
                not had_clean_shutdown and (is_last or base >= recovery_point)
            )
            if not recover and not segment.load_tail():
                log.warning("%s does not match its index; recovering it", segment.log_path)
                recover = True
            segments.append(segment)
            if recover and segment.recover(config.index_interval_bytes) and not is_last:
                for later in bases[i + 1 :]:
                    log.warning("deleting segment %020d of %s after a corrupt segment", later, directory)
                    Segment.open(directory, later, max_index_bytes=config.segment_index_bytes).delete()
                break
        log_start = max(start_checkpoint or 0, segments[0].base_offset if segments else 0)
        if not segments or log_start > segments[-1].next_offset:
            for segment in segments:
                segment.delete()
            segments = [
                Segment.create(
                    directory,
                    log_start,
                    max_index_bytes=config.segment_index_bytes,
                    jitter_ms=config.segment_jitter_ms,
                )
            ]
        return cls(
            directory,
            config,
            topic=topic,
            partition=partition,
            segments=segments,
            log_start_offset=log_start,
            recovery_point=recovery_point,
        )

    # -- state ---------------------------------------------------------------------------

    @property
    def log_start_offset(self) -> int:
        return self._log_start_offset

    @property
    def log_end_offset(self) -> int:
        """The next offset to assign (also the high watermark on a single node)."""
        return self._segments[-1].next_offset

    @property
    def last_stable_offset(self) -> int:
        """Kafka's LSO: read_committed consumers read below it (the high watermark when no
        transaction is open; at least the log start offset)."""
        end = self._segments[-1].next_offset
        first = self.first_unstable_offset
        if first is None or first >= end:
            return end
        return first if first > self._log_start_offset else self._log_start_offset

    @property
    def size_bytes(self) -> int:
        return sum(segment.size for segment in self._segments)

    def segments(self) -> list[Segment]:
        """A snapshot of the segment list, oldest first (the last is active)."""
        with self._lock:
            return list(self._segments)

    def update_config(self, config: LogConfig) -> None:
        """Swap the config; sizes of indexes apply to segments created from now on."""
        with self._lock:
            self.config = config
            self._roll_ms = _roll_ms(config)
            self._log_append_time = config.is_log_append_time
            self.compacts = config.compacts
            self._limits = batch_limits(config)

    def _check_open(self) -> None:
        if self._closed:
            raise NotLeaderOrFollowerError(f"log of {self.topic}-{self.partition} is closed")

    # -- append --------------------------------------------------------------------------

    def append(
        self,
        records: bytes | bytearray | memoryview,
        *,
        now_ms: int | None = None,
        leader_epoch: int = 0,
        allow_control: bool = False,
        guard: AppendGuard | None = None,
        validated: list[BatchHeader] | None = None,
    ) -> AppendResult:
        """Validate, stamp and append whole batches; all or nothing (see validation.py).

        The produce path's common case, exactly one valid uncompressed batch (with or
        without a producer id), is checked by :func:`~.validation.single_batch` (one call
        into C: unpack, CRC, timestamps, record walk); anything else, including what that
        check declines, by :func:`~.validation.validate_batches`, which raises the precise
        error. A writable
        memoryview is stamped with offsets in place and written as is: one copy of the
        bytes, the kernel's. Other buffers are copied first, so the caller's stay intact.

        ``guard`` (the producer state's) gets the validated headers and the write when a
        batch carries a producer id; see :data:`AppendGuard`. ``allow_control`` is for the
        broker's own transaction markers.

        ``validated``: the headers :func:`~.validation.validation_steps` returned for exactly
        these ``records`` with this log's config and ``now_ms``, which the produce path runs
        on a validation thread for compressed batches, or the one :meth:`check_single`
        returned; they are not checked again.
        """
        now = _now_ms() if now_ms is None else now_ms
        if validated is not None:
            headers = validated
        else:
            header = None
            if type(records) is not memoryview or records.c_contiguous:
                header = single_batch(records, now, *self._limits)
            if header is not None:
                headers = [header]
            else:
                headers = validate_batches(
                    records, self.config, now, allow_control=allow_control, where=self.where
                )
        if guard is not None:
            for header in headers:
                if header.producer_id >= 0:
                    return guard(self, headers, functools.partial(self._write, records, headers, now, leader_epoch))
        return self._write(records, headers, now, leader_epoch)

    def check_single(self, records: bytes | bytearray | memoryview, now_ms: int) -> BatchHeader | None:
        """The header of ``records`` when they are the produce path's common case, else None.

        :func:`~.validation.single_batch` with this log's limits: exactly one valid
        uncompressed batch. Its result may be passed to :meth:`append` as ``validated``
        (with the same ``now_ms``), so the produce path checks the common case once and
        sends only what it declines to the general path (and compressed batches to the
        validation threads).
        """
        if type(records) is memoryview and not records.c_contiguous:
            return None
        return single_batch(records, now_ms, *self._limits)

    def _write(
        self,
        records: bytes | bytearray | memoryview,
        headers: list[BatchHeader],
        now_ms: int,
        leader_epoch: int = 0,
    ) -> AppendResult:
        """Stamp and append batches whose ``headers`` validation returned just now.

        Check-free: only :meth:`append` calls it (tests too, to store what validation
        would refuse, as an older broker might have).
        """
        config = self.config
        buf: bytearray | memoryview
        if type(records) is memoryview and not records.readonly and records.c_contiguous:
            buf = records if records.format == "B" else records.cast("B")
        else:
            buf = bytearray(records)
        if not headers:
            return AppendResult(-1, -1, -1, self._log_start_offset, [])
        append_time = now_ms if self._log_append_time else -1
        if append_time >= 0:
            for header in headers:
                stamp_log_append_time(buf, header, append_time)
        size = len(buf)
        with self._lock:
            if self._closed:
                self._check_open()  # raises
            segment = self._segments[-1]
            offset = first = segment.next_offset
            stamped: list[BatchHeader] = []
            max_timestamp = -1
            for header in headers:
                position = header.position
                _BASE_OFFSET.pack_into(buf, position, offset)
                _LEADER_EPOCH.pack_into(buf, position + 12, leader_epoch)
                if append_time >= 0:
                    header = header._replace(attributes=header.attributes | 0x08, max_timestamp=append_time)
                # BatchHeader(base_offset, batch_length, partition_leader_epoch, *the rest)
                stamped.append(_new_tuple(BatchHeader, (offset, header[1], leader_epoch, *header[3:])))
                if header.max_timestamp > max_timestamp:
                    max_timestamp = header.max_timestamp
                offset += header.last_offset_delta + 1
            last = offset - 1
            rolled = False
            if segment.size and (
                not segment.fits(first, last, size)
                or segment.should_roll(size, max_timestamp, last, config.segment_bytes, self._roll_ms, now_ms)
            ):
                segment, rolled = self._roll(), True
            try:
                # Checked above unless the segment is new: only a request whose batches
                # together span 2**31 offsets fails it (the record walk bounds each batch
                # to (bytes / 7) offsets, so no real one does).
                if not segment.size and not segment.fits(first, last, size):
                    raise InvalidRecordError(
                        f"the batches span offsets {first}..{last}, more than one segment can index"
                    )
                segment.append(buf, stamped, config.index_interval_bytes)
            except BaseException:
                if rolled:
                    self._unroll(segment)
                raise
            self._unflushed_messages += offset - first
            wants_flush = self._unflushed_messages >= config.flush_messages
            log_start = self._log_start_offset
        if wants_flush and self.on_flush_needed is not None:
            self.on_flush_needed(self)
        return AppendResult(first, last, append_time, log_start, stamped)

    def _roll(self) -> Segment:
        """Start a new active segment at the log end offset (lock held)."""
        active = self._segments[-1]
        try:
            segment = Segment.create(
                self.directory,
                active.next_offset,
                max_index_bytes=self.config.segment_index_bytes,
                jitter_ms=self.config.segment_jitter_ms,
            )
        except OSError as exc:
            # E.g. EMFILE: no new segment, and no empty files at the log end offset that a
            # restart would take for the active segment. The log stays as it was.
            for ext in (".log", ".index", ".timeindex") if active.next_offset != active.base_offset else ():
                with contextlib.suppress(OSError):
                    (self.directory / segment_file_name(active.next_offset, ext)).unlink(missing_ok=True)
            raise KafkaStorageError(f"{self.topic}-{self.partition}: cannot roll a new segment: {exc}") from exc
        active.on_become_inactive()
        segment.preallocate = True
        self._segments.append(segment)
        self._bases.append(segment.base_offset)
        self._flush_pending = True
        log.debug("rolled %s-%d at offset %d", self.topic, self.partition, segment.base_offset)
        return segment

    def _unroll(self, segment: Segment) -> None:
        """Undo :meth:`_roll` when the append it was for failed: the log is as it was (lock held).

        The segment it rolled from becomes active again; its final time index entry,
        written on the roll, records the same largest timestamp later appends extend.
        """
        if self._segments[-1] is not segment or segment.size or len(self._segments) < 2:
            return
        self._segments.pop()
        self._bases.pop()
        self._segments[-1].preallocate = True
        try:
            segment.delete()
        except OSError as exc:  # an empty segment left behind is still a valid log
            log.warning("cannot remove empty segment %s: %s", segment.log_path, exc)

    # -- read ----------------------------------------------------------------------------

    def read(
        self, offset: int, max_bytes: int, *, min_one_batch: bool = True, max_offset: int | None = None
    ) -> FileRegion | None:
        """Whole batches from the one holding ``offset``, up to ``max_bytes`` (see KIP-74).

        None when ``offset`` is the log end offset (or at/after ``max_offset``); an empty
        region when the first batch exceeds ``max_bytes`` and ``min_one_batch`` is false.
        Stays within one segment. ``max_offset`` (a read_committed fetch passes the last
        stable offset, always a batch boundary) ends the read before the batch holding it.
        """
        with self._lock:
            found = self._read_locked(offset, max_bytes, min_one_batch, max_offset)
        return found[0] if found is not None else None

    def read_committed(
        self, offset: int, max_bytes: int, *, min_one_batch: bool = True
    ) -> tuple[FileRegion | None, int, list[tuple[int, int]]]:
        """A read_committed fetch: (region below the LSO, the LSO, aborted transactions).

        The aborted transactions are (producer id, first offset) of those overlapping the
        region, as Kafka's ``collectAbortedTransactions`` finds them in the ``.txnindex``
        files: only segments that have entries are looked at, so a fetch far from the head
        costs no more than one at the head. The upper bound is tighter than Kafka's (the end
        of the region's segment): the first indexed offset after the region, so a fetch
        lists the aborted transactions its records may belong to, not every later one.
        """
        with self._lock:
            lso = self.last_stable_offset
            found = self._read_locked(offset, max_bytes, min_one_batch, lso)
            if found is None or not self._txn_segments:
                return (found[0] if found else None), lso, []
            region, index = found
            segment = self._segments[index]
            after = segment.offset_index.last_offset_from(region.position + region.length)
            upper = min(lso, after + 1 if after is not None else segment.next_offset)
            txn_segments = [s for s in self._txn_segments if s.next_offset > offset]
        aborted: list[tuple[int, int]] = []
        for segment in txn_segments:
            entries, complete = segment.txn_index.collect(offset, upper)
            aborted.extend(entries)
            if complete:
                break
        return region, lso, aborted

    def _read_locked(
        self, offset: int, max_bytes: int, min_one_batch: bool, max_offset: int | None
    ) -> tuple[FileRegion, int] | None:
        """:meth:`read` under the lock: the region and the index of its segment."""
        self._check_open()
        end_offset = self.log_end_offset
        if offset < self._log_start_offset or offset > end_offset:
            raise OffsetOutOfRangeError(
                f"offset {offset} is outside [{self._log_start_offset}, {end_offset}] of "
                f"{self.topic}-{self.partition}"
            )
        if max_offset is not None and max_offset < end_offset:
            if offset >= max_offset:
                return None
        else:
            max_offset = None
        if offset == end_offset:
            return None
        try:
            first = max(0, bisect_right(self._bases, offset) - 1)
            for index in range(first, len(self._segments)):
                segment = self._segments[index]
                header = segment.find_batch(offset, segment.size)
                if header is None:
                    continue
                limit = segment.size
                if max_offset is not None and max_offset < segment.next_offset:
                    stop = segment.find_batch(max_offset, segment.size)
                    if stop is not None:
                        limit = stop.position
                    if limit <= header.position:
                        return None
                end = segment.read_end(header.position, max_bytes, limit)
                if end == header.position and min_one_batch:
                    end = header.position + header.size
                assert segment.file is not None
                return FileRegion(segment.file, header.position, end - header.position), index
        except ValueError as exc:
            raise KafkaStorageError(f"{self.topic}-{self.partition}: {exc}") from exc
        return None

    def add_aborted_txn(self, txn: AbortedTxn) -> None:
        """Index an aborted transaction in the segment holding its marker (``txn.last_offset``).

        Called by the producer state right after the abort marker's append, or when a
        restart's replay finds a marker whose entry a crash lost (then it may be older).
        """
        with self._lock:
            segment = self._segments[max(0, bisect_right(self._bases, txn.last_offset) - 1)]
            if segment.txn_index.ensure(txn) and segment not in self._txn_segments:
                self._txn_segments.append(segment)
                self._txn_segments.sort(key=lambda s: s.base_offset)

    def aborted_txns(self, start: int, upper: int) -> list[AbortedTxn]:
        """Every indexed aborted transaction overlapping ``[start, upper)`` (the cleaner's view)."""
        with self._lock:
            segments = list(self._txn_segments)
        return [txn for segment in segments for txn in segment.txn_index.entries()
                if txn.last_offset >= start and txn.first_offset < upper]

    def _refresh_txn_segments(self) -> None:
        """Recompute which segments have aborted-transaction entries (lock held)."""
        self._txn_segments = [s for s in self._segments if len(s.txn_index)]

    def offset_for_timestamp(self, timestamp_ms: int) -> tuple[int, int] | None:
        """(offset, timestamp) of the first batch whose maxTimestamp >= ``timestamp_ms``.

        Batch granularity: the offset is the batch's base offset (records are never
        decoded), which is exact for single-record and LogAppendTime batches.
        """
        with self._lock:
            self._check_open()
            for segment in self._segments:
                if segment.max_timestamp < timestamp_ms:
                    continue
                header = segment.find_by_timestamp(timestamp_ms, segment.size)
                if header is not None and header.last_offset >= self._log_start_offset:
                    return max(header.base_offset, self._log_start_offset), header.max_timestamp
        return None

    def max_timestamp_and_offset(self) -> tuple[int, int] | None:
        """(offset, timestamp) of the batch with the largest timestamp (ListOffsets -3).

        The offset is that batch's last offset (Kafka before 3.8 answered the same way).
        """
        with self._lock:
            self._check_open()
            best: tuple[int, int] | None = None
            for segment in self._segments:
                if segment.max_timestamp >= 0 and (best is None or segment.max_timestamp > best[1]):
                    offset = max(segment.offset_of_max_timestamp, self._log_start_offset)
                    best = (offset, segment.max_timestamp)
            return best

    # -- durability ----------------------------------------------------------------------

    def flush(self) -> None:
        """fsync every segment with unflushed data, then advance the recovery point."""
        with self._lock:
            dirty = [s for s in self._segments if s.dirty]
            for segment in dirty:
                segment.dirty = False
            flushed_messages = self._unflushed_messages
            active_base = self._segments[-1].base_offset
            self._flush_pending = False
        for segment in dirty:
            try:
                segment.flush()
            except (OSError, KafkaStorageError):
                if segment in self._segments:
                    raise
        with self._lock:
            self._unflushed_messages -= flushed_messages
            self._last_flush_ms = _now_ms()
        if active_base > self._recovery_point:
            write_offset_checkpoint(
                self.directory / RECOVERY_POINT_CHECKPOINT, self.topic, self.partition, active_base
            )
            self._recovery_point = active_base
        self._persist_log_start_offset()

    def maybe_flush(self, now_ms: int) -> None:
        """Flush if ``flush.messages`` or ``flush.ms`` says so, or a segment was rolled."""
        with self._lock:
            due = (
                self._flush_pending
                or self._unflushed_messages >= self.config.flush_messages
                or (self._unflushed_messages > 0 and now_ms - self._last_flush_ms >= self.config.flush_ms)
            )
        if due:
            self.flush()
        else:
            self._persist_log_start_offset()

    def checkpoint_log_start_offset(self) -> None:
        """Write ``log-start-offset-checkpoint`` if the log start moved since it was last written.

        The log manager calls it every ``log.flush.start.offset.checkpoint.interval.ms`` (Kafka's
        periodic checkpoint), so a DeleteRecords survives a crash one interval later; flushes,
        retention passes and a clean close write it too. A closed log is left alone.
        """
        self._persist_log_start_offset()

    def _persist_log_start_offset(self) -> None:
        # Under its own lock: two writers (the checkpoint thread, maintenance) could otherwise
        # write an older offset after a newer one, or write into a directory being deleted.
        with self._checkpoint_lock:
            if self._closed:
                return
            start = self._log_start_offset
            if start != self._persisted_log_start_offset:
                write_offset_checkpoint(
                    self.directory / LOG_START_OFFSET_CHECKPOINT, self.topic, self.partition, start
                )
                self._persisted_log_start_offset = start

    # -- retention -----------------------------------------------------------------------

    def apply_retention(self, now_ms: int) -> int:
        """Delete old segments per retention.ms / retention.bytes / log start offset.

        Returns how many segments went. When every segment qualifies the log first rolls
        a new empty active segment, as Kafka does. The log start offset moves to the
        first remaining segment and is checkpointed.
        """
        with self._lock:
            if self._closed:
                return 0
            count, reason = segments_to_delete(self._segments, self.config, now_ms, self._log_start_offset)
            if not count:
                return 0
            if count == len(self._segments):
                self._roll()
            doomed = self._segments[:count]
            del self._segments[:count]
            del self._bases[:count]
            self._refresh_txn_segments()
            self._log_start_offset = max(self._log_start_offset, self._segments[0].base_offset)
        for segment in doomed:
            log.info(
                "deleting segment %s of %s-%d (%s breached)",
                segment.log_path.name,
                self.topic,
                self.partition,
                reason,
            )
            segment.delete()
        self._persist_log_start_offset()
        return count

    def delete_records_before(self, offset: int) -> int:
        """Advance the log start offset (DeleteRecords; -1 means the high watermark).

        Returns the new log start offset. Segments below it go at the next retention
        pass; the checkpoint is written by the next periodic checkpoint
        (``log.flush.start.offset.checkpoint.interval.ms``), flush or retention pass, keeping
        this call off the disk, as Kafka does.
        """
        with self._lock:
            self._check_open()
            end = self.log_end_offset
            target = end if offset == -1 else offset
            if target < 0 or target > end:
                raise OffsetOutOfRangeError(f"cannot delete records before {offset}: log end offset is {end}")
            self._log_start_offset = max(self._log_start_offset, target)
            return self._log_start_offset

    def replace_segments(self, new: Segment, old: Sequence[Segment]) -> None:
        """Swap ``new`` (written aside with the ``.cleaned`` suffix) in for contiguous ``old``.

        The compactor's commit, crash-safe in Kafka's order: ``.cleaned`` -> ``.swap``;
        old files -> ``.deleted``; ``.swap`` -> final name; delete the old files. An
        interrupted swap is finished by :func:`~seaway.broker.log.recovery.tidy_partition_dir`.
        Raises ValueError (leaving ``new`` as ``.cleaned``) when ``old`` is no longer a
        contiguous run of closed segments, e.g. retention deleted some meanwhile; the
        check is made under the lock both before the first rename and before the swap.
        """
        with self._lock:
            self._replaceable_at(old)
            new.change_file_suffixes(CLEANED_SUFFIX, SWAP_SUFFIX)
        fsync_dir(self.directory)
        with self._lock:
            try:
                first = self._replaceable_at(old)
            except ValueError:
                new.change_file_suffixes(SWAP_SUFFIX, CLEANED_SUFFIX)
                raise
            self._segments[first : first + len(old)] = [new]
            self._bases = [s.base_offset for s in self._segments]
            self._refresh_txn_segments()
            for segment in old:
                segment.change_file_suffixes("", DELETED_SUFFIX)
            new.change_file_suffixes(SWAP_SUFFIX, "")
        fsync_dir(self.directory)
        for segment in old:
            segment.delete()

    def _replaceable_at(self, old: Sequence[Segment]) -> int:
        """Index of ``old[0]`` if ``old`` is a contiguous run of closed segments (lock held)."""
        if self._closed or not old or old[0] not in self._segments:
            raise ValueError("segments to replace are no longer in the log")
        first = self._segments.index(old[0])
        if self._segments[first : first + len(old)] != list(old) or old[-1] is self._segments[-1]:
            raise ValueError("segments to replace must be contiguous and not include the active one")
        return first

    def close(self, *, flush: bool = True) -> None:
        """Record the final time index entry, flush everything and close the files.

        ``flush=False`` skips the fsync (the log is about to be deleted).
        """
        if self._closed:
            return
        with self._lock:
            self._segments[-1].on_become_inactive()
        if flush:
            self.flush()
        with self._checkpoint_lock, self._lock:  # no checkpoint write is in flight once closed
            self._closed = True
            for segment in self._segments:
                segment.close()

    def __repr__(self) -> str:
        return (
            f"PartitionLog({self.topic}-{self.partition}, start={self._log_start_offset}, "
            f"end={self.log_end_offset}, segments={len(self._segments)})"
        )
