"""Idempotent producer state for every partition: the produce guard, snapshots, expiry.

The produce handler appends with ``PartitionLog.append(records, now_ms=..., guard=...)``,
the guard being :meth:`ProducerStateManager.guard` (the broker's
``components.producer_state``). The log validates the batches once (headers, CRC, sizes,
timestamps, every record's framing) and calls the guard only when a batch carries a
producer id, with the parsed headers and the write to run, so nothing is parsed or
checksummed twice. For ordinary producers (producer id -1) that is the whole cost: no
state is looked up. Idempotent batches are checked per batch from the header
(:mod:`.state`) under the partition's state lock, which spans check, write and update.
On compacted topics the log's validation refuses keyless records
(:mod:`seaway.broker.log.cleaner_keys`).

State is loaded lazily, on the first idempotent batch a partition receives after start:
the newest ``<offset>.snapshot`` above the log start offset and at or below the log end
offset is read and the batch headers after it are replayed (headers only), else every
header from the log start. As Kafka's ``ProducerStateManager.truncateAndReload``, the
snapshots outside that range are deleted, never loaded: one beyond the log end describes
records a crash took away; one at or below the log start cannot be brought up to date,
since the records between it and the log start that a replay would need are gone
(DeleteRecords, retention), and loading it anyway left producers behind their real last
sequence, refusing their next batch as OUT_OF_ORDER_SEQUENCE_NUMBER. The
out-of-range ones of every partition are deleted when the broker starts, before any append
could move the log end past a stale one; while the broker runs, those a moving log start
leaves behind are deleted by the snapshot thread. Producers already in memory are kept when
the log start moves, as Kafka keeps them. Snapshots, Kafka's ``<offset>.snapshot``
files in the partition dir (JSON here), are written by a background thread for a
partition whose state changed, when it has rolled a segment since its last snapshot (as
Kafka) or ``snapshot_interval_ms`` has passed since it (``log.flush.offset.checkpoint.
interval.ms``, 60 s by default, the interval of Kafka's other per-partition checkpoints),
and for every changed partition at clean shutdown; the two newest are kept. So what a
start replays is bounded by one interval of batches, never by uptime: without the
periodic snapshot a broker that is killed (or loses power) replays everything since its
last roll, which grows until the next one (a gigabyte segment by default). The same thread expires
producers idle for ``producer.id.expiration.ms`` (by their last batch's max timestamp,
as Kafka). A crash loses nothing: replay from an older snapshot, or from the start of
the log, rebuilds the same state, since every batch carries its producer id, epoch and
sequences in its header.

Transactions. A transactional producer's batches come through the guard with the produce
request's transactional id: the first batch of a transaction on a partition is verified with the
transaction coordinator (KIP-890: the partition must have been added to the producer's
ongoing transaction, else INVALID_TXN_STATE / TRANSACTION_ABORTABLE), so no batch can
open a transaction the coordinator does not know and will never end. The coordinator ends
transactions with :meth:`~ProducerStateManager.append_marker`, which appends the marker,
closes the transaction in the state, indexes an abort in the segment's ``.txnindex`` and
moves the log's first unstable offset. Loading replays markers too (one ``pread`` of the
small control batch each) and re-adds an index entry a crash lost between a marker's
append and its entry's.

Threading: loading, checks and appends run on the event loop; the per-partition
``state.lock`` is held across check + append + update, and by the snapshot thread only
while it serialises the state and reads the log end offset.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from seaway.broker.log.partition_log import AppendGuard, AppendResult, PartitionLog
from seaway.broker.log.recovery import write_atomic
from seaway.broker.producer.markers import build_marker, read_marker
from seaway.broker.producer.state import PartitionProducerState
from seaway.errors import SeawayError
from seaway.protocol.errors import InvalidRecordError, TransactionalIdAuthorizationFailedError
from seaway.protocol.record_batch import ATTR_TRANSACTIONAL, BatchHeader

if TYPE_CHECKING:
    from seaway.broker.log.log_manager import LogManager

__all__ = ["SNAPSHOT_SUFFIX", "ProducerStateManager", "delete_unusable_snapshots", "snapshot_offsets"]

log = logging.getLogger("seaway.broker.producer")

SNAPSHOT_SUFFIX = ".snapshot"
_SNAPSHOTS_KEPT = 2
_LOAD_ATTEMPTS = 3

Records = bytes | bytearray | memoryview
Verifier = Callable[[str, int, int, str, int], None]
"""(transactional id, producer id, epoch, topic, partition): raises unless the partition is
in that producer's ongoing transaction (the transaction coordinator installs it)."""


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def snapshot_offsets(directory: Path) -> list[int]:
    """Offsets of the producer snapshots in a partition dir, ascending."""
    found = []
    for path in directory.glob(f"*{SNAPSHOT_SUFFIX}"):
        stem = path.name[: -len(SNAPSHOT_SUFFIX)]
        if len(stem) == 20 and stem.isdigit():
            found.append(int(stem))
    return sorted(found)


def _snapshot_path(directory: Path, offset: int) -> Path:
    return directory / f"{offset:020d}{SNAPSHOT_SUFFIX}"


def delete_unusable_snapshots(directory: Path, log_start: int, log_end: int | None = None) -> list[int]:
    """Delete the snapshots at or below ``log_start`` (and above ``log_end`` when given);
    the offsets of those left, ascending.

    Kafka's ``truncateAndReload`` rule: a snapshot at or below the log start offset is never
    loaded, even one exactly at it (the producers it knows wrote nothing that is still in
    the log), nor one beyond the log end offset (it describes records that are gone).
    """
    kept = []
    for offset in snapshot_offsets(directory):
        if offset <= log_start or (log_end is not None and offset > log_end):
            where = "at or below the log start" if offset <= log_start else "beyond the log end"
            log.info("deleting producer snapshot %s %s offset %d", _snapshot_path(directory, offset), where,
                     log_start if offset <= log_start else log_end)
            _snapshot_path(directory, offset).unlink(missing_ok=True)
        else:
            kept.append(offset)
    return kept


@dataclass
class _Tracked:
    log: PartitionLog
    state: PartitionProducerState
    snapshot_base: int
    """Base offset of the active segment when the last snapshot was written (-1: none)."""
    snapshot_at: float
    """``time.monotonic()`` of the last snapshot (or of loading)."""
    log_start: int
    """The log start offset at which the snapshots below it were last deleted."""


class ProducerStateManager:
    """Producer state of all partitions (see the module docstring)."""

    def __init__(
        self,
        logs: LogManager,
        *,
        expiration_ms: int = 86400000,
        tick_s: float = 1.0,
        snapshot_interval_ms: int = 60000,
    ) -> None:
        self.logs = logs
        self.expiration_ms = expiration_ms
        self.tick_s = tick_s
        self.snapshot_interval_ms = snapshot_interval_ms
        self._tracked: dict[tuple[str, int], _Tracked] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.replayed_batches = 0
        """Batch headers replayed to load producer state since start (what restarts cost)."""
        self.verifier: Verifier | None = None
        """KIP-890's check of a transaction's first batch on a partition (None: not checked)."""

    # -- the produce path ----------------------------------------------------------------

    def append(
        self, plog: PartitionLog, records: Records, now_ms: int, transactional_id: str | None = None
    ) -> AppendResult:
        """Append a produce request's records to ``plog`` with Kafka's idempotence and
        transaction checks (:meth:`guard`); ``transactional_id`` is the request's, if any.

        Duplicates are answered with their original offsets (``batch_headers`` empty,
        ``log_append_time_ms`` -1, as Kafka answers them) and not appended again.
        """
        guard = self.guard if transactional_id is None else self.transactional_guard(transactional_id)
        return plog.append(records, now_ms=now_ms, guard=guard)

    def transactional_guard(self, transactional_id: str) -> AppendGuard:
        """:meth:`guard` for a produce request that carries ``transactional_id``."""
        return functools.partial(self.guard, transactional_id=transactional_id)

    def guard(
        self, plog: PartitionLog, headers: list[BatchHeader], write: Callable[[], AppendResult],
        transactional_id: str | None = None,
    ) -> AppendResult:
        """The produce path's :data:`~seaway.broker.log.partition_log.AppendGuard`.

        ``PartitionLog.append`` calls it with validated headers of which at least one
        carries a producer id. Such a request holds exactly one batch per partition (Kafka's
        rule); it is checked against the producer's state (a duplicate returns its original
        offsets unwritten), a transaction's first batch on the partition is verified with the
        transaction coordinator (KIP-890), then ``write()`` appends and the stamped header
        is recorded, all under the partition's state lock.
        """
        if len(headers) != 1:
            raise InvalidRecordError(
                "Produce requests with idempotent batches are only allowed to contain exactly one record "
                "batch per partition"
            )
        header = headers[0]
        transactional = header.attributes & ATTR_TRANSACTIONAL
        if transactional and transactional_id is None:
            # Kafka authorizes transactional records by the request's transactional id.
            raise TransactionalIdAuthorizationFailedError(
                f"transactional records for {plog.where} in a produce request without a transactional id")
        tracked = self._tracked.get((plog.topic, plog.partition))
        if tracked is None or tracked.log is not plog:
            tracked = self._tracked_for(plog)
        state = tracked.state
        with state.lock:
            duplicate = state.check(header, plog.where)
            if duplicate is not None:
                log.debug("duplicate batch of producer %d at offset %d of %s", header.producer_id,
                          duplicate.first_offset, plog.where)
                return AppendResult(duplicate.first_offset, duplicate.last_offset, -1, plog.log_start_offset, [])
            if transactional and self.verifier is not None and transactional_id is not None:
                entry = state.producers.get(header.producer_id)
                if entry is None or entry.current_txn_first_offset < 0 or entry.epoch != header.producer_epoch:
                    self.verifier(transactional_id, header.producer_id, header.producer_epoch, plog.topic,
                                  plog.partition)
            result = write()
            for stamped in result.batch_headers:
                state.update(stamped)
            if transactional:
                plog.first_unstable_offset = state.first_unstable_offset
        return result

    # -- the coordinators' writes --------------------------------------------------------

    def append_marker(
        self, plog: PartitionLog, producer_id: int, epoch: int, coordinator_epoch: int, commit: bool, now_ms: int
    ) -> int:
        """Write a commit or abort marker for ``producer_id`` into ``plog``; its offset.

        Raises INVALID_PRODUCER_EPOCH when the partition saw a newer epoch of the producer
        (a marker can never be older than the data it ends), or the append's error.
        """
        where = f"{plog.topic}-{plog.partition}"
        state = self._tracked_for(plog).state
        marker = build_marker(producer_id, epoch, coordinator_epoch, commit, now_ms)
        with state.lock:
            state.check_coordinator_write(producer_id, epoch, where)
            offset = plog.append(marker, now_ms=now_ms, allow_control=True).base_offset
            aborted = state.complete_txn(producer_id, epoch, coordinator_epoch, offset, not commit, now_ms)
            if aborted is not None:
                plog.add_aborted_txn(aborted)
            plog.first_unstable_offset = state.first_unstable_offset
        return offset

    def append_for_coordinator(self, plog: PartitionLog, batch: bytes, now_ms: int) -> AppendResult:
        """Append a batch a coordinator built with a producer's id and epoch but no sequence
        (a transactional offset commit): the epoch is checked, sequences are not."""
        return plog.append(batch, now_ms=now_ms, guard=self._coordinator_guard)

    def _coordinator_guard(
        self, plog: PartitionLog, headers: list[BatchHeader], write: Callable[[], AppendResult]
    ) -> AppendResult:
        """:meth:`append_for_coordinator`'s guard: the epoch check, the write, the state update."""
        state = self._tracked_for(plog).state
        with state.lock:
            for header in headers:
                state.check_coordinator_write(header.producer_id, header.producer_epoch,
                                              f"{plog.topic}-{plog.partition}")
            result = write()
            for stamped in result.batch_headers:
                state.update(stamped)
            plog.first_unstable_offset = state.first_unstable_offset
        return result

    # -- loading -------------------------------------------------------------------------

    def state_of(self, plog: PartitionLog) -> PartitionProducerState:
        """The (lazily loaded) producer state of ``plog``."""
        return self._tracked_for(plog).state

    def _tracked_for(self, plog: PartitionLog) -> _Tracked:
        key = (plog.topic, plog.partition)
        tracked = self._tracked.get(key)
        if tracked is None or tracked.log is not plog:
            for attempt in range(_LOAD_ATTEMPTS):
                try:
                    tracked = self._load(plog)
                    break
                except (ValueError, SeawayError) as exc:
                    if attempt == _LOAD_ATTEMPTS - 1:
                        raise
                    log.info("reloading producer state of %r after %s", plog, exc)
            assert tracked is not None
            self._tracked[key] = tracked
        return tracked

    def _load(self, plog: PartitionLog) -> _Tracked:
        """Newest usable snapshot, then replay of the batch headers after it."""
        directory = plog.directory
        for leftover in directory.glob(f"*{SNAPSHOT_SUFFIX}.tmp"):
            leftover.unlink(missing_ok=True)
        end = plog.log_end_offset
        state = PartitionProducerState()
        start = log_start = plog.log_start_offset
        found_snapshot = False
        for offset in reversed(delete_unusable_snapshots(directory, log_start, end)):
            path = _snapshot_path(directory, offset)
            try:
                data = json.loads(path.read_bytes())
                state.load_json(data["producers"])
            except (OSError, ValueError, KeyError, TypeError) as exc:
                log.warning("ignoring unreadable producer snapshot %s: %s", path, exc)
                continue
            start, found_snapshot = max(start, offset), True
            break
        segments = plog.segments()
        replayed = 0
        for segment, following in zip(segments, [*segments[1:], None], strict=True):
            if following is not None and following.base_offset <= start:
                continue
            for header in segment.headers(start):
                if header.base_offset >= end:
                    break
                if header.producer_id < 0:
                    continue
                replayed += 1
                if header.is_control:
                    self._replay_marker(plog, segment.fd, header, state)
                else:
                    state.replay(header)
        state.expire(_now_ms(), self.expiration_ms)
        state.changed = replayed > 0
        plog.first_unstable_offset = state.first_unstable_offset
        log.info(
            "loaded producer state of %s-%d: %d producers (%s, %d batches replayed up to offset %d)",
            plog.topic,
            plog.partition,
            len(state.producers),
            f"snapshot at {start}" if found_snapshot else f"no snapshot, from offset {start}",
            replayed,
            end,
        )
        self.replayed_batches += replayed
        return _Tracked(plog, state, segments[-1].base_offset if found_snapshot else -1, time.monotonic(),
                        log_start)

    @staticmethod
    def _replay_marker(plog: PartitionLog, fd: int, header: BatchHeader, state: PartitionProducerState) -> None:
        """Replay an end marker; re-index an abort whose entry a crash lost (see the docstring)."""
        try:
            abort, coordinator_epoch = read_marker(fd, header)
        except (SeawayError, OSError) as exc:
            log.warning("skipping unreadable control batch at offset %d of %s-%d: %s", header.base_offset,
                        plog.topic, plog.partition, exc)
            return
        aborted = state.complete_txn(header.producer_id, header.producer_epoch, coordinator_epoch,
                                     header.base_offset, abort, header.max_timestamp, check=False)
        if aborted is not None:
            plog.add_aborted_txn(aborted)

    # -- snapshots and expiry ------------------------------------------------------------

    def take_snapshot(self, plog: PartitionLog) -> Path | None:
        """Write a snapshot of ``plog``'s producer state now (None if it has none loaded)."""
        tracked = self._tracked.get((plog.topic, plog.partition))
        if tracked is None or tracked.log is not plog:
            return None
        return self._snapshot(tracked)

    def _snapshot(self, tracked: _Tracked) -> Path:
        plog, state = tracked.log, tracked.state
        with state.lock:
            payload = json.dumps({"version": 1, "producers": state.to_json()}).encode()
            offset = plog.log_end_offset
            active_base = plog.segments()[-1].base_offset
            state.changed = False
        path = _snapshot_path(plog.directory, offset)
        write_atomic(path, payload)
        tracked.snapshot_base = active_base
        tracked.snapshot_at = time.monotonic()
        for old in snapshot_offsets(plog.directory)[:-_SNAPSHOTS_KEPT]:
            _snapshot_path(plog.directory, old).unlink(missing_ok=True)
        return path

    def maintain(self, now_ms: int | None = None, *, shutdown: bool = False) -> None:
        """Expire idle producers; snapshot changed partitions that rolled or whose interval passed.

        At shutdown every changed partition is snapshotted. Never raises for one
        partition: the others still get theirs (a clean stop must finish).
        """
        now = _now_ms() if now_ms is None else now_ms
        interval_s = self.snapshot_interval_ms / 1000.0
        mono = time.monotonic()
        for key, tracked in list(self._tracked.items()):
            if self.logs.get_log(*key) is not tracked.log:
                if self._tracked.get(key) is tracked:
                    self._tracked.pop(key, None)
                continue
            state = tracked.state
            with state.lock:
                expired = state.expire(now, self.expiration_ms)
            if expired:
                log.info("expired %d idle producer ids of %s-%d", expired, *key)
            try:
                rolled = tracked.log.segments()[-1].base_offset != tracked.snapshot_base
                if state.changed and (rolled or shutdown or mono - tracked.snapshot_at >= interval_s):
                    self._snapshot(tracked)
                log_start = tracked.log.log_start_offset
                if log_start != tracked.log_start:
                    # DeleteRecords or retention moved it: the snapshots it passed are unusable
                    # (the producers in memory stay, as in Kafka).
                    delete_unusable_snapshots(tracked.log.directory, log_start)
                    tracked.log_start = log_start
            except Exception as exc:
                log.warning("cannot snapshot producer state of %s-%d: %s", *key, exc)

    # -- lifecycle -----------------------------------------------------------------------

    def delete_all_unusable_snapshots(self) -> int:
        """Delete every partition's snapshots outside (log start, log end]; how many went.

        Run when the broker starts, before any append: a snapshot beyond the log end (a
        crash lost the tail it describes) must go before ordinary producers' appends move
        the log end past it, or the lazy load would take it for a valid one.
        """
        deleted = 0
        for name, meta in self.logs.topics().items():
            for partition in range(meta.num_partitions):
                plog = self.logs.get_log(name, partition)
                if plog is None:
                    continue
                found = snapshot_offsets(plog.directory)
                if found and (found[0] <= plog.log_start_offset or found[-1] > plog.log_end_offset):
                    left = delete_unusable_snapshots(plog.directory, plog.log_start_offset, plog.log_end_offset)
                    deleted += len(found) - len(left)
        return deleted

    def start(self) -> ProducerStateManager:
        """Delete unusable snapshots (:meth:`delete_all_unusable_snapshots`), then start the
        snapshot and expiry thread."""
        if self._thread is None:
            self.delete_all_unusable_snapshots()
            self._thread = threading.Thread(target=self._run, name="producer-state", daemon=True)
            self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.wait(self.tick_s):
            try:
                self.maintain()
            except Exception:
                log.exception("producer state maintenance failed")

    def stop(self) -> None:
        """Stop the thread and snapshot every changed partition (clean shutdown)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        self.maintain(shutdown=True)

    async def close(self) -> None:
        await asyncio.to_thread(self.stop)
