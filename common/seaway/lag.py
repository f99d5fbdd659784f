"""Consumer lag: offset lag, time lag, and a lag status evaluated as Burrow does it.

Pure Python with no Seaway imports, so the broker (its in-process lag gauges), the Connect
worker and the ``seaway groups`` tool (any Kafka cluster, through the AdminClient) share one
definition instead of three slightly different ones.

Offset lag is Kafka's ``ConsumerGroupCommand`` figure: the partition's end offset (the log end
offset, or the last stable offset for a read_committed reader) minus the group's committed
offset; a partition without a committed offset has no lag (kafka-consumer-groups.sh prints
``-``).

Time lag is how long ago the record at the committed offset (the next record the group will
read) was written: ``now - timestamp(record at committed offset)``; 0 when the offset lag is 0.
Reading that record costs a fetch, so callers keep its timestamp in a bounded
:class:`TimestampCache` keyed by (topic, partition, offset): a stopped group's committed offset
does not move, so the fetch happens once.

The status follows LinkedIn Burrow's evaluator (``core/internal/evaluator/caching.go``) over a
window of the last ``intervals`` committed offsets of a partition (Burrow's storage ring,
``core/internal/storage/inmemory.go``), each stored with the commit's timestamp and the lag at
the time, plus a ring of the partition's recent end offsets:

* the current lag is <= ``allowed_lag``: **OK** (nothing else is checked);
* Rule 3, **STOPPED**: the time since the last commit is longer than the window's span (last
  commit - first commit) and the group was not caught up with any of the recent end offsets;
* Rule 2, **REWIND**: a committed offset went backwards and the group has not come back to where
  it was;
* Rule 1: if the lag was <= ``allowed_lag`` at any commit in the window, **OK**; otherwise
* Rule 4, **STALLED**: every commit in the window has the same offset (the group is committing but
  not moving);
* Rule 5, **WARNING**: the offsets move but the lag never decreased from one commit to the next;
* else **OK**.

A group's status is the worst of its partitions: OK, WARNING if any partition is WARNING, ERROR
if any is STOPPED, STALLED or REWIND (Burrow's group status ``ERR``).

Note how Burrow tells the two failures apart (this is what the tests rely on): STALLED needs a
consumer that still *commits* (the same offset, e.g. stuck on a record); STOPPED needs commits to
have *stopped* for longer than the window spans. Recording a sample per scrape instead of per
commit would make every stopped consumer STALLED and never STOPPED, so feed
:meth:`PartitionWindow.add_commit` from commits (with their commit timestamps), and
:meth:`PartitionWindow.add_end_offset` from the periodic end-offset refresh.
"""

from __future__ import annotations

import enum
import threading
from collections import OrderedDict, deque
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass

__all__ = [
    "DEFAULT_INTERVALS",
    "DEFAULT_MIN_DISTANCE_MS",
    "LagStatus",
    "LagTracker",
    "OffsetSample",
    "PartitionEvaluation",
    "PartitionWindow",
    "TimestampCache",
    "evaluate_partition",
    "group_status",
    "offset_lag",
    "time_lag_ms",
]

DEFAULT_INTERVALS = 10
"""Burrow's ``storage.intervals`` default: commits kept per partition."""

DEFAULT_MIN_DISTANCE_MS = 1000
"""Burrow's ``min-distance`` of its example config (1 s): commits closer than this to the previous
stored one replace it instead of taking a slot, so a fast committer does not shrink the window."""


class LagStatus(enum.Enum):
    """A partition's or a group's lag status; ``severity`` orders them from good to bad.

    Partitions are OK, WARNING, STOPPED, STALLED or REWIND; groups are OK, WARNING or ERROR
    (Burrow's ``StatusConstant``, spelled out).
    """

    OK = "OK"
    WARNING = "WARNING"
    ERROR = "ERROR"
    STOPPED = "STOPPED"
    STALLED = "STALLED"
    REWIND = "REWIND"

    @property
    def severity(self) -> int:
        """Burrow's numeric value (OK 1 ... REWIND 6), exported as the status gauge's value."""
        return _SEVERITY[self]


_SEVERITY = {
    LagStatus.OK: 1,
    LagStatus.WARNING: 2,
    LagStatus.ERROR: 3,
    LagStatus.STOPPED: 4,
    LagStatus.STALLED: 5,
    LagStatus.REWIND: 6,
}


def offset_lag(committed: int | None, end_offset: int | None) -> int | None:
    """``end_offset - committed`` as kafka-consumer-groups.sh's LAG column; None when either is unknown.

    A committed offset of -1 (Kafka's "no offset") counts as unknown. The difference is not clamped:
    a committed offset past the end (a truncated log) shows as Kafka shows it, negative.
    """
    if committed is None or committed < 0 or end_offset is None or end_offset < 0:
        return None
    return end_offset - committed


def time_lag_ms(now_ms: int, lag: int | None, record_timestamp_ms: int | None) -> int | None:
    """How long ago the next record the group will read was written; 0 when caught up.

    ``record_timestamp_ms`` is the timestamp of the record at the committed offset (None when it
    could not be read, e.g. deleted by retention). Clock skew never yields a negative time lag.
    """
    if lag is None:
        return None
    if lag <= 0:
        return 0
    if record_timestamp_ms is None or record_timestamp_ms < 0:
        return None
    return max(0, now_ms - record_timestamp_ms)


@dataclass(frozen=True, slots=True)
class OffsetSample:
    """One stored commit: the offset, its commit timestamp, and the lag when it was stored."""

    offset: int
    timestamp_ms: int
    lag: int | None


@dataclass(frozen=True, slots=True)
class PartitionEvaluation:
    """The status of one partition, with what it was computed from (Burrow's PartitionStatus)."""

    status: LagStatus
    current_lag: int
    complete: float
    start: OffsetSample | None
    end: OffsetSample | None


def evaluate_partition(
    offsets: Sequence[OffsetSample],
    end_offsets: Sequence[int],
    current_lag: int,
    now_ms: int,
    *,
    allowed_lag: int = 0,
) -> LagStatus:
    """Burrow's ``calculatePartitionStatus``: the rules in the module docstring, in Burrow's order.

    ``offsets`` are the stored commits, oldest first (non-empty for a meaningful answer: an empty
    window is OK); ``end_offsets`` the partition's recent end offsets, oldest first.
    """
    if not offsets or current_lag <= allowed_lag:
        return LagStatus.OK
    first, last = offsets[0], offsets[-1]
    # Rule 3: no commit for longer than the window spans, and not caught up recently
    if now_ms - last.timestamp_ms > last.timestamp_ms - first.timestamp_ms and not any(
        end <= last.offset for end in end_offsets
    ):
        return LagStatus.STOPPED
    # Rule 2: a rewind that has not recovered
    for i in range(1, len(offsets)):
        if offsets[i].offset < offsets[i - 1].offset:
            if not any(o.offset >= offsets[i - 1].offset for o in offsets[i:]):
                return LagStatus.REWIND
            break
    # Rule 1: lag within the allowance at any point of the window -> OK
    if any(o.lag is not None and o.lag <= allowed_lag for o in offsets):
        return LagStatus.OK
    # Rule 4: committing, but always the same offset
    if all(o.offset == first.offset for o in offsets):
        return LagStatus.STALLED
    # Rule 5: moving, but the lag never decreased
    previous: int | None = None
    for o in offsets:
        if o.lag is not None:
            if previous is not None and o.lag < previous:
                return LagStatus.OK
            previous = o.lag
    return LagStatus.WARNING


def group_status(statuses: Iterable[LagStatus]) -> LagStatus:
    """A group's status from its partitions': ERROR if any failed, else WARNING if any lags, else OK."""
    result = LagStatus.OK
    for status in statuses:
        if status in (LagStatus.STOPPED, LagStatus.STALLED, LagStatus.REWIND, LagStatus.ERROR):
            return LagStatus.ERROR
        if status is LagStatus.WARNING:
            result = LagStatus.WARNING
    return result


class PartitionWindow:
    """Burrow's per-partition storage: a ring of the last ``intervals`` commits and end offsets.

    Not thread-safe on its own; :class:`LagTracker` serialises access.
    """

    __slots__ = ("_end_offsets", "_last_fed", "_min_distance_ms", "_offsets", "intervals")

    def __init__(self, intervals: int = DEFAULT_INTERVALS, min_distance_ms: int = DEFAULT_MIN_DISTANCE_MS) -> None:
        if intervals < 1:
            raise ValueError(f"intervals must be >= 1, got {intervals}")
        if min_distance_ms < 0:
            raise ValueError(f"min_distance_ms must be >= 0, got {min_distance_ms}")
        self.intervals = intervals
        self._min_distance_ms = min_distance_ms
        self._offsets: deque[OffsetSample] = deque(maxlen=intervals)
        self._end_offsets: deque[int] = deque(maxlen=intervals)
        self._last_fed: tuple[int, int] | None = None

    def add_end_offset(self, end_offset: int) -> None:
        """Record the partition's end offset (call it on every refresh, as Burrow's broker ring)."""
        if end_offset >= 0:
            self._end_offsets.append(end_offset)

    def add_commit(self, offset: int, timestamp_ms: int, end_offset: int | None = None) -> None:
        """Store a commit; its lag is taken against ``end_offset`` (else the last recorded end offset).

        A commit older than the newest stored one is dropped (Burrow drops backfill). A commit within
        ``min_distance_ms`` of the newest replaces it and keeps the newest's timestamp, as Burrow's
        ``mergeFrequentCommitIntoPrevious`` does, so a fast committer does not narrow the window.
        The same commit (offset and timestamp) fed again, e.g. at every scrape, is stored once, as
        Burrow stores each commit once: only ``end_offset`` is recorded.
        """
        if offset < 0:
            return
        if end_offset is not None:
            self.add_end_offset(end_offset)
        if self._last_fed == (offset, timestamp_ms):
            return
        self._last_fed = (offset, timestamp_ms)
        end = end_offset if end_offset is not None else (self._end_offsets[-1] if self._end_offsets else None)
        lag = None if end is None else max(0, end - offset)
        if self._offsets:
            newest = self._offsets[-1]
            if timestamp_ms < newest.timestamp_ms:
                return
            if timestamp_ms - newest.timestamp_ms < self._min_distance_ms:
                self._offsets[-1] = OffsetSample(offset, newest.timestamp_ms, lag)
                return
        self._offsets.append(OffsetSample(offset, timestamp_ms, lag))

    @property
    def offsets(self) -> tuple[OffsetSample, ...]:
        """The stored commits, oldest first."""
        return tuple(self._offsets)

    @property
    def end_offsets(self) -> tuple[int, ...]:
        """The recorded end offsets, oldest first."""
        return tuple(self._end_offsets)

    def current_lag(self) -> int | None:
        """Latest end offset minus the latest commit (clamped at 0, as Burrow); None if either is missing."""
        if not self._offsets or not self._end_offsets:
            return None
        return max(0, self._end_offsets[-1] - self._offsets[-1].offset)

    def evaluate(self, now_ms: int, *, allowed_lag: int = 0, minimum_complete: float = 0.0) -> PartitionEvaluation:
        """Burrow's ``evaluatePartitionStatus``: OK until the window is ``minimum_complete`` full."""
        offsets = tuple(self._offsets)
        lag = self.current_lag() or 0
        if not offsets:
            return PartitionEvaluation(LagStatus.OK, lag, 0.0, None, None)
        complete = len(offsets) / self.intervals
        status = LagStatus.OK
        if complete >= minimum_complete:
            status = evaluate_partition(offsets, tuple(self._end_offsets), lag, now_ms, allowed_lag=allowed_lag)
        return PartitionEvaluation(status, lag, complete, offsets[0], offsets[-1])


PartitionKey = tuple[str, str, int]
"""(group, topic, partition)."""


class LagTracker:
    """Windows for many (group, topic, partition) keys, bounded and thread-safe.

    At most ``max_partitions`` windows are kept; the least recently updated is dropped first, so a
    flood of short-lived groups cannot grow memory without bound.
    """

    def __init__(
        self,
        *,
        intervals: int = DEFAULT_INTERVALS,
        min_distance_ms: int = DEFAULT_MIN_DISTANCE_MS,
        max_partitions: int = 100_000,
    ) -> None:
        if max_partitions < 1:
            raise ValueError(f"max_partitions must be >= 1, got {max_partitions}")
        PartitionWindow(intervals, min_distance_ms)  # validate once, here
        self._intervals = intervals
        self._min_distance_ms = min_distance_ms
        self._max = max_partitions
        self._windows: OrderedDict[PartitionKey, PartitionWindow] = OrderedDict()
        self._lock = threading.Lock()

    def _window(self, key: PartitionKey) -> PartitionWindow:
        window = self._windows.get(key)
        if window is None:
            window = PartitionWindow(self._intervals, self._min_distance_ms)
            self._windows[key] = window
            while len(self._windows) > self._max:
                self._windows.popitem(last=False)
        else:
            self._windows.move_to_end(key)
        return window

    def add_commit(
        self, group: str, topic: str, partition: int, offset: int, timestamp_ms: int, end_offset: int | None = None
    ) -> None:
        """Store a group's commit for a partition (see :meth:`PartitionWindow.add_commit`)."""
        with self._lock:
            self._window((group, topic, partition)).add_commit(offset, timestamp_ms, end_offset)

    def add_end_offsets(self, topic: str, partition: int, end_offset: int) -> None:
        """Record a partition's end offset in every group window that reads it."""
        with self._lock:
            for (_, t, p), window in self._windows.items():
                if t == topic and p == partition:
                    window.add_end_offset(end_offset)

    def forget_group(self, group: str) -> None:
        """Drop a group's windows (the group was deleted)."""
        with self._lock:
            for key in [k for k in self._windows if k[0] == group]:
                del self._windows[key]

    def groups(self) -> list[str]:
        """The groups with at least one window, sorted."""
        with self._lock:
            return sorted({k[0] for k in self._windows})

    def evaluate(
        self, group: str, now_ms: int, *, allowed_lag: int = 0, minimum_complete: float = 0.0
    ) -> dict[tuple[str, int], PartitionEvaluation]:
        """Every partition of a group: (topic, partition) -> its evaluation."""
        with self._lock:
            return {
                (t, p): w.evaluate(now_ms, allowed_lag=allowed_lag, minimum_complete=minimum_complete)
                for (g, t, p), w in self._windows.items()
                if g == group
            }


class TimestampCache:
    """A bounded LRU of record timestamps keyed by (topic, partition, offset), for time lag.

    Thread-safe. ``max_entries`` bounds memory whatever the number of groups and partitions.
    """

    def __init__(self, max_entries: int = 10_000) -> None:
        if max_entries < 1:
            raise ValueError(f"max_entries must be >= 1, got {max_entries}")
        self._max = max_entries
        self._items: OrderedDict[Hashable, int] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, topic: str, partition: int, offset: int) -> int | None:
        """The cached timestamp, or None."""
        key = (topic, partition, offset)
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
            return value

    def put(self, topic: str, partition: int, offset: int, timestamp_ms: int) -> None:
        """Cache a record's timestamp, evicting the least recently used entry past the bound."""
        key = (topic, partition, offset)
        with self._lock:
            self._items[key] = timestamp_ms
            self._items.move_to_end(key)
            while len(self._items) > self._max:
                self._items.popitem(last=False)

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)
