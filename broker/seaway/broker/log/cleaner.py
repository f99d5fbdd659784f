"""The log cleaner: compaction of ``cleanup.policy=compact`` (and ``compact,delete``) logs.

Kafka's ``LogCleaner`` on one background thread. Every pass it looks at each compacted
log and picks the *filthiest* one:

- the **dirty section** runs from the first dirty offset (the end of the previous
  cleaning, kept per partition in ``cleaner-offset-checkpoint``, Kafka's format) to the
  first uncleanable offset: the active segment's base, or the first segment whose newest
  timestamp is younger than ``min.compaction.lag.ms``; the active segment is never
  cleaned (a compacted log also rolls by ``max.compaction.lag.ms``, as Kafka's
  ``maxSegmentMs``; ``segment.ms`` and ``segment.bytes`` roll it as usual);
- a log is cleanable when its dirty ratio (dirty bytes / closed bytes up to the first
  uncleanable offset) exceeds ``min.cleanable.dirty.ratio``, or when its oldest dirty batch
  is older than ``max.compaction.lag.ms``, or when a tombstone's delete horizon has passed.

:mod:`.cleaner_rewrite` does the cleaning itself; this module chooses, schedules and
records it. When nothing is cleanable the thread sleeps ``log.cleaner.backoff.ms``.

A log the cleaner cannot process (a batch that does not decode, or whose records inflate
past the decompression cap, :data:`~seaway.protocol.compression.MAX_DECOMPRESSED_BYTES`)
is marked **uncleanable**, as Kafka's ``LogCleanerManager.markPartitionUncleanable`` does:
logged once at ERROR, counted in :attr:`LogCleaner.uncleanable_partitions` and skipped
until the broker restarts (or the topic is recreated), never retried in a loop. Only
``OSError`` (a full or failing disk, likely to pass) is retried, after a backoff.

Crash safety comes from the write-aside-then-swap protocol (``.cleaned`` -> ``.swap``,
see :meth:`PartitionLog.replace_segments` and :mod:`.recovery`) and from writing the
checkpoint only after every group of a cleaning was swapped: a crash at any point leaves a
complete log, at worst partly cleaned, and the next cleaning starts over from the old
checkpoint. Delete horizons of retained tombstones are remembered in memory; after a
restart one header-only scan per log finds them again.

Transactions: the dirty section also ends before the segment holding the log's last stable
offset (Kafka's ``firstUnstableOffset`` bound), so only ended transactions are cleaned;
aborted data and markers no longer needed go (:mod:`.cleaner_rewrite`). Until the
transaction coordinator has recovered at start (and with it every log's LSO) nothing is
cleaned (:attr:`LogCleaner.transactions_ready`).

Deviations: one cleaner thread whatever ``log.cleaner.threads`` says (0 disables it, as
does ``log.cleaner.enable=false``); ``log.cleaner.io.max.bytes.per.second`` is not applied.
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from seaway.broker.log.cleaner_rewrite import (
    CleanAborted,
    CleanStats,
    Rules,
    build_offset_map,
    group_by_size,
    rewrite_group,
)
from seaway.broker.log.partition_log import PartitionLog
from seaway.broker.log.recovery import read_offset_checkpoint, write_offset_checkpoint
from seaway.broker.log.segment import Segment
from seaway.errors import SeawayError

if TYPE_CHECKING:
    from seaway.broker.config import BrokerConfig
    from seaway.broker.context import BrokerContext
    from seaway.broker.log.log_manager import LogManager

__all__ = [
    "CLEANER_CHECKPOINT",
    "CleanStats",
    "CleanerSettings",
    "DirtyLog",
    "LogCleaner",
    "install",
]

log = logging.getLogger("seaway.broker.log.cleaner")

CLEANER_CHECKPOINT = "cleaner-offset-checkpoint"
TEST_PAUSE_KEY = "seaway.test.fault.cleaner.pause.ms"


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


@dataclass(frozen=True)
class CleanerSettings:
    """The broker configs the cleaner reads (``log.cleaner.*``)."""

    enabled: bool = True
    backoff_ms: int = 15000
    dedupe_buffer_bytes: int = 134217728
    test_pause_ms: int = 0
    """Test only: sleep this long before and after each group's swap, so a test can kill
    the broker while a cleaning is under way."""

    @classmethod
    def from_config(cls, config: BrokerConfig) -> CleanerSettings:
        return cls(
            enabled=bool(config.log_cleaner_enable) and config.log_cleaner_threads > 0,
            backoff_ms=int(config.log_cleaner_backoff_ms),
            dedupe_buffer_bytes=int(config.log_cleaner_dedupe_buffer_size),
            test_pause_ms=int(config.get(TEST_PAUSE_KEY)),
        )


@dataclass
class _LogState:
    """What the cleaner remembers of one log between passes."""

    log: PartitionLog
    first_dirty: int
    next_delete_horizon_ms: int | None
    failed_until_ms: int = 0
    uncleanable: str | None = None
    """Why the cleaner gave up on this log (None: it has not)."""


@dataclass(frozen=True)
class DirtyLog:
    """One log's cleaning prospects at a moment (Kafka's ``LogToClean``)."""

    log: PartitionLog
    first_dirty: int
    first_uncleanable: int
    clean_bytes: int
    dirty_bytes: int
    overdue: bool
    """The oldest dirty batch is older than max.compaction.lag.ms."""
    tombstones_due: bool

    @property
    def dirty_ratio(self) -> float:
        total = self.clean_bytes + self.dirty_bytes
        return self.dirty_bytes / total if total else 0.0

    @property
    def cleanable(self) -> bool:
        if self.tombstones_due:
            return True
        if self.dirty_bytes <= 0:
            return False
        return self.overdue or self.dirty_ratio > self.log.config.min_cleanable_dirty_ratio


class LogCleaner:
    """Compacts the compacted logs of a :class:`LogManager` (see the module docstring).

    ``clean_once`` is the whole of one pass and may be called directly (tests do);
    ``start`` runs passes on a daemon thread until ``close``.
    """

    def __init__(self, logs: LogManager, settings: CleanerSettings | None = None) -> None:
        self.logs = logs
        self.settings = settings or CleanerSettings()
        self._states: dict[tuple[str, int], _LogState] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self.transactions_ready: Callable[[], bool] = lambda: True
        """False while every log's last stable offset is not known yet (set by the
        transaction coordinator, which knows when it has recovered)."""

    # -- lifecycle -----------------------------------------------------------------------

    def start(self) -> LogCleaner:
        if self.settings.enabled and self._thread is None:
            self._thread = threading.Thread(target=self._run, name="log-cleaner", daemon=True)
            self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                stats = self.clean_once()
            except Exception:
                log.exception("log cleaner pass failed")
                stats = None
            if stats is None:
                self._stop.wait(self.settings.backoff_ms / 1000.0)

    def stop(self) -> None:
        """Stop the thread; a cleaning under way is abandoned (its ``.cleaned`` file removed)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    async def close(self) -> None:
        await asyncio.to_thread(self.stop)

    @property
    def uncleanable_partitions(self) -> dict[tuple[str, int], str]:
        """(topic, partition) -> why, for every log the cleaner gave up on (Kafka's
        ``uncleanable-partitions-count`` is the length of this)."""
        return {key: state.uncleanable for key, state in list(self._states.items()) if state.uncleanable}

    # -- choosing ------------------------------------------------------------------------

    def dirty_logs(self, now_ms: int) -> list[DirtyLog]:
        """Every compacted log with at least one closed segment, dirtiest first."""
        found: list[DirtyLog] = []
        live: set[tuple[str, int]] = set()
        for name, meta in self.logs.topics().items():
            for partition in range(meta.num_partitions):
                plog = self.logs.get_log(name, partition)
                if plog is None or not plog.config.compacts:
                    continue
                live.add((name, partition))
                try:
                    dirty = self._examine(plog, now_ms)
                except (OSError, SeawayError, ValueError) as exc:
                    log.debug("cannot examine %r: %s", plog, exc)
                    continue
                if dirty is not None:
                    found.append(dirty)
        for key in list(self._states):
            if key not in live:
                del self._states[key]
        found.sort(key=lambda d: (d.overdue or d.tombstones_due, d.dirty_ratio), reverse=True)
        return found

    def _state(self, plog: PartitionLog) -> _LogState:
        key = (plog.topic, plog.partition)
        state = self._states.get(key)
        if state is None or state.log is not plog:
            checkpoint = read_offset_checkpoint(plog.directory / CLEANER_CHECKPOINT)
            state = _LogState(plog, checkpoint or 0, _scan_delete_horizons(plog.segments()[:-1]))
            self._states[key] = state
        return state

    def _examine(self, plog: PartitionLog, now_ms: int) -> DirtyLog | None:
        segments = plog.segments()
        if len(segments) < 2:
            return None
        state = self._state(plog)
        if state.uncleanable or now_ms < state.failed_until_ms:
            return None
        config = plog.config
        start, end = plog.log_start_offset, plog.log_end_offset
        first_dirty = state.first_dirty if start <= state.first_dirty <= end else start
        first_uncleanable = segments[-1].base_offset
        stable = plog.last_stable_offset
        if stable < first_uncleanable:  # the segment holding the LSO is not cleaned (nor any later)
            first_uncleanable = max((s.base_offset for s in segments if s.base_offset <= stable), default=start)
        clean_bytes = dirty_bytes = 0
        earliest: int | None = None
        for segment, following in itertools.pairwise(segments):
            if following.base_offset <= first_dirty:
                if following.base_offset > start:
                    clean_bytes += segment.size
                continue
            if segment.base_offset >= first_uncleanable:
                break
            if config.min_compaction_lag_ms > 0 and segment.largest_timestamp > now_ms - config.min_compaction_lag_ms:
                first_uncleanable = segment.base_offset
                break
            dirty_bytes += segment.size
            first_ts = segment.first_batch_timestamp
            if first_ts is not None and first_ts > 0:
                earliest = first_ts if earliest is None else min(earliest, first_ts)
        overdue = earliest is not None and earliest < now_ms - config.max_compaction_lag_ms
        horizon = state.next_delete_horizon_ms
        return DirtyLog(
            plog,
            first_dirty,
            first_uncleanable,
            clean_bytes,
            dirty_bytes,
            overdue,
            horizon is not None and now_ms >= horizon,
        )

    # -- cleaning ------------------------------------------------------------------------

    def clean_once(self, now_ms: int | None = None) -> CleanStats | None:
        """Clean the filthiest cleanable log, if any; returns what was done."""
        with self._lock:
            if not self.transactions_ready():
                return None
            now = _now_ms() if now_ms is None else now_ms
            for dirty in self.dirty_logs(now):
                if not dirty.cleanable:
                    continue
                state = self._state(dirty.log)
                try:
                    return self._clean(dirty, state, now)
                except CleanAborted as exc:
                    log.info("cleaning of %r stopped: %s", dirty.log, exc)
                    if self._stop.is_set():
                        return None
                    state.failed_until_ms = now + self.settings.backoff_ms
                except OSError:
                    log.exception("cleaning of %r failed; retrying later", dirty.log)
                    state.failed_until_ms = now + max(10 * self.settings.backoff_ms, 1000)
                except (SeawayError, ValueError) as exc:
                    state.uncleanable = str(exc) or type(exc).__name__
                    log.error(
                        "cannot clean %s-%d, marking it uncleanable until restart (%d uncleanable): %s",
                        dirty.log.topic,
                        dirty.log.partition,
                        len(self.uncleanable_partitions),
                        state.uncleanable,
                    )
            return None

    def clean_log(self, plog: PartitionLog, now_ms: int | None = None) -> CleanStats:
        """Clean ``plog`` now, cleanable or not (for tests and tools)."""
        with self._lock:
            now = _now_ms() if now_ms is None else now_ms
            dirty = self._examine(plog, now)
            if dirty is None:
                return CleanStats()
            return self._clean(dirty, self._state(plog), now)

    def _clean(self, dirty: DirtyLog, state: _LogState, now_ms: int) -> CleanStats:
        plog = dirty.log
        started = time.monotonic()
        log.info(
            "cleaning %s-%d: dirty ratio %.2f, dirty offsets [%d, %d)%s",
            plog.topic,
            plog.partition,
            dirty.dirty_ratio,
            dirty.first_dirty,
            dirty.first_uncleanable,
            ", tombstones due" if dirty.tombstones_due else "",
        )
        all_segments = plog.segments()
        segments = all_segments[:-1]
        dirty_segments = [
            s
            for s, nxt in itertools.pairwise(all_segments)
            if nxt.base_offset > dirty.first_dirty and s.base_offset < dirty.first_uncleanable
        ]
        stop = self._stop.is_set
        stats = CleanStats()
        end = dirty.first_dirty
        offsets: dict[bytes, int] = {}
        aborted = plog.aborted_txns(plog.log_start_offset, dirty.first_uncleanable)
        if dirty_segments:
            offsets, count, stats.bytes_read = build_offset_map(
                dirty_segments, dirty.first_dirty, self.settings.dedupe_buffer_bytes, stop, aborted
            )
            last = dirty_segments[count - 1]
            following = [s for s in all_segments if s.base_offset > last.base_offset]
            end = following[0].base_offset if following else last.next_offset
        rules = Rules(offsets, now_ms, plog.config, lambda: _producer_last_batches(plog.segments()), aborted)
        to_clean = [s for s in segments if s.base_offset < end]
        for group in group_by_size(to_clean, plog.config.segment_bytes):
            cleaned, changed = rewrite_group(plog, group, rules, stats, stop)
            if not changed:
                cleaned.delete()
                continue
            self._test_pause()
            try:
                plog.replace_segments(cleaned, group)
            except ValueError as exc:
                cleaned.delete()
                raise CleanAborted(str(exc)) from None
            stats.segments_out += 1
            self._test_pause()
        write_offset_checkpoint(plog.directory / CLEANER_CHECKPOINT, plog.topic, plog.partition, end)
        state.first_dirty = end
        state.next_delete_horizon_ms = stats.next_delete_horizon_ms
        log.info(
            "cleaned %s-%d up to offset %d in %.0f ms: %d records kept of %d, %d tombstones, %d aborted "
            "batches and %d markers dropped, %d segments -> %d, %d -> %d bytes",
            plog.topic,
            plog.partition,
            end,
            (time.monotonic() - started) * 1000,
            stats.records_retained,
            stats.records_read,
            stats.tombstones_dropped,
            stats.aborted_batches_dropped,
            stats.markers_dropped,
            stats.segments_in,
            stats.segments_out,
            sum(s.size for s in to_clean),
            stats.bytes_written,
        )
        return stats

    def _test_pause(self) -> None:
        if self.settings.test_pause_ms > 0 and self._stop.wait(self.settings.test_pause_ms / 1000.0):
            raise CleanAborted("cleaner stopping")


def _scan_delete_horizons(segments: list[Segment]) -> int | None:
    """Earliest delete horizon stamped in ``segments`` (headers only), or None."""
    earliest: int | None = None
    for segment in segments:
        try:
            for header in segment.headers():
                if header.has_delete_horizon:
                    horizon = header.base_timestamp
                    earliest = horizon if earliest is None else min(earliest, horizon)
        except (ValueError, SeawayError, OSError):
            return 0  # unreadable now: look again at the next pass
    return earliest


def _producer_last_batches(segments: list[Segment]) -> dict[int, int]:
    """Producer id -> base offset of its newest data batch anywhere in the log (headers only;
    markers are not data, as Kafka's ``lastDataOffset``)."""
    last: dict[int, int] = {}
    for segment in segments:
        for header in segment.headers():
            if header.producer_id >= 0 and not header.is_control:
                last[header.producer_id] = header.base_offset
    return last


def install(context: BrokerContext) -> LogCleaner:
    """Create the broker's cleaner, set ``context.components.log_cleaner`` and start its thread."""
    cleaner = LogCleaner(context.logs, CleanerSettings.from_config(context.config))
    context.components = dataclasses.replace(context.components, log_cleaner=cleaner)
    return cleaner.start()
