"""LakeSinkTask: the exactly-once, pipelined sink task every lake sink is (Spark Parquet, S3, Iceberg, Delta).

Where offsets live: the lake (file names and the commit log), never the consumer group. On
every assignment (``open``) the task recovers each partition's commit log and seeks the
consumer to the lake's next offset with ``context.offset``; ``pre_commit`` hands the runtime
only those lake offsets, so the group's committed offset trails the lake and serves lag
display. Records of an open (uncommitted) file set are dropped on ``close``: the next owner
replays them.

Writing is pipelined: closed file sets go to one writer thread per task, so the write of one
batch (a Spark job, S3 uploads) runs while the task thread consumes and converts the next.
While a write runs, newly closed sets queue up and the next write takes **all** of them
(fewer, larger writes land more records per second when a write has a fixed cost, as a Spark
job does). When a write finishes, the writer thread takes whatever was queued meanwhile at
once, rather than waiting for the task thread's next ``put`` (which may be a whole poll
timeout away once the topic is drained). The queue is bounded: when it holds more than
``flush.size`` records per assigned partition, ``put`` waits until the writer has written
everything queued. ``close`` and ``stop`` write and wait for everything queued, and a failed
write fails the task at its next ``put``/``pre_commit`` (the lake is unchanged beyond its last
commit, so a restart resumes exactly).

**Storage outages** (a NameNode or DataNode down, an object store unreachable: what
:meth:`LakeSinkTask.retriable` accepts) do not fail the task. The sets of the failed write go
back to the head of the queue, in memory, and their partitions are marked *unsettled*: the write
may have stopped anywhere in the commit protocol. From then on ``put`` refuses records with a
``RetriableError`` that says what failed and what waits (the runtime logs it, keeps the task
RUNNING, pauses consumption and redelivers the same batch ``retry.backoff.ms`` later); every
``retry.backoff.ms`` the writer thread tries again: it first recovers each unsettled partition
from its commit log (the same :meth:`CommitLog.recover` as on assignment: a half-published set
is rolled forward or back), drops the sets the lake now holds, and writes the rest. Nothing is
re-consumed, so the consumer never has to be rewound. A partition whose recovery fails at
assignment (``open``) waits the same way, and its records below the lake's offset are dropped
when they come.

A sink subclasses :class:`LakeSinkTask` with ``parse_config`` and ``writer`` (and may override
``make_partitioner``, ``filter_records``, ``retriable``, ``describe_failure``, ``lake_name``, ``release``,
and, where the lake's offsets live elsewhere than a commit log (the table sinks: in the table's own
snapshots), ``recover``, ``tidy`` and ``new_buffer``). :meth:`LakeSinkTask.close_open_sets` closes every open set
now and writes everything (a table sink's commit point); :meth:`LakeSinkTask.pump` and
:meth:`LakeSinkTask.drain` are the writer's steps for a subclass that overrides ``pre_commit`` or needs
nothing in flight.
"""

from __future__ import annotations

import abc
import itertools
import logging
import operator
import threading
import time
from collections.abc import Collection, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Protocol

from seaway.connect.api import (
    ConnectError,
    OffsetAndMetadata,
    RetriableError,
    Schema,
    SinkRecord,
    SinkRecordBatch,
    SinkTask,
    TopicPartition,
)
from seaway.connectors.lake.commit_log import CommitEntry, CommitLog
from seaway.connectors.lake.config import StorageConfig
from seaway.connectors.lake.partitioner import Partitioner, make_partitioner
from seaway.connectors.lake.rotation import FileSet, PartitionBuffer

__all__ = ["LakeSinkTask", "SetWriter"]

log = logging.getLogger(__name__)
_CONSUMED_AT = operator.attrgetter("original_topic", "original_kafka_partition")


class SetWriter(Protocol):
    """Writes closed file sets and commits them; called from the task's writer thread only."""

    def commit_log(self, topic: str, partition: int) -> CommitLog:
        """The commit log of one Kafka partition (recovered on assignment)."""

    def write(self, sets: Sequence[FileSet]) -> list[CommitEntry]:
        """Write, make visible and commit ``sets`` (in order per partition); the commits made."""


@dataclass(slots=True)
class _LoopResult:
    """What one run of the writer loop did: sets committed, partitions recovered, a retriable failure."""

    entries: list[CommitEntry] = field(default_factory=list)
    recovered: dict[TopicPartition, int | None] = field(default_factory=dict)
    failure: BaseException | None = None


class LakeSinkTask(SinkTask):
    """The lake sinks' task: buffers per Kafka partition, a writer thread, offsets from the lake."""

    #: name prefix of the writer thread (shows in thread dumps)
    writer_thread_name = "lake-sink-writer"
    #: whether ``put`` may take a :class:`SinkRecordBatch`'s value columns (no SinkRecord built). Such
    #: a batch holds no null value and skips ``filter_records``: a sink whose filter may drop or
    #: refuse a record with a value sets this False.
    accepts_value_columns = True

    def __init__(self) -> None:
        self.storage: StorageConfig | None = None
        self.partitioner: Partitioner | None = None
        self.buffers: dict[TopicPartition, PartitionBuffer] = {}
        self._executor: ThreadPoolExecutor | None = None
        self._running: Future[_LoopResult] | None = None  # the write loop in progress
        self._queue_lock = threading.Lock()  # guards the five fields below
        self._queued: list[FileSet] = []  # closed sets waiting for the write loop
        self._queued_records = 0
        self._writing: list[FileSet] = []  # the sets of the write in progress
        self._loop_active = False  # the write loop will take what is queued before it ends
        #: partitions whose lake state must be recovered before their next write (a write failed in
        #: the middle of the commit protocol, or recovery failed at assignment)
        self._unsettled: set[TopicPartition] = set()
        self._failure: BaseException | None = None  # the storage failure being retried (task thread)
        self._retry_at = 0.0
        self._attempts = 0

    # -- what a sink provides ---------------------------------------------------------------------
    @abc.abstractmethod
    def parse_config(self, props: Mapping[str, str]) -> StorageConfig:
        """The sink's typed config (raises :class:`ConfigError` naming the key)."""

    @property
    @abc.abstractmethod
    def writer(self) -> SetWriter:
        """The sink's writer (may be built lazily, e.g. once a SparkSession is up)."""

    def make_partitioner(self, config: StorageConfig) -> Partitioner:
        """The partitioner ``partitioner.class`` names (folders start with the topic's folder)."""
        return make_partitioner(config)

    def filter_records(self, records: Sequence[SinkRecord]) -> Sequence[SinkRecord]:
        """Records to buffer (e.g. ``behavior.on.null.values``); all of them by default."""
        return records

    def release(self) -> None:
        """Let go of shared resources at the end of ``stop`` (after everything is written)."""

    def retriable(self, error: BaseException) -> bool:
        """Whether a failed write or recovery is a storage outage to ride out (else the task fails).

        I/O errors by default; a sink adds its storage client's (e.g. Java's ``IOException``).
        """
        return isinstance(error, (OSError, RetriableError))

    def describe_failure(self, error: BaseException) -> str:
        """One line naming what failed, for the retry message."""
        return f"{type(error).__name__}: {str(error).strip().splitlines()[0] if str(error).strip() else ''}"

    def lake_name(self) -> str:
        """Where the sink writes, for messages (the sink's root URI or bucket)."""
        return "the lake"

    def recover(self, tp: TopicPartition) -> int | None:
        """Finish or undo what a crash left of ``tp`` and return the lake's next offset (``None``: none yet).

        Runs on assignment (``open``, task thread) and, after a storage failure, on the writer
        thread before writing again. By default the partition's commit log does it.
        """
        return self.writer.commit_log(tp.topic, tp.partition).recover()

    def tidy(self, tp: TopicPartition) -> None:
        """Delete what the lake no longer needs of a partition now (its old commit records) (task thread)."""
        self.writer.commit_log(tp.topic, tp.partition).tidy()

    def new_buffer(self, tp: TopicPartition, committed: int | None) -> PartitionBuffer:
        """The buffer of a newly assigned partition (a sink may add columns to its rows)."""
        assert self.storage is not None and self.partitioner is not None, "start() first"
        return PartitionBuffer(tp, self.storage, self.partitioner, committed)

    # -- the task ---------------------------------------------------------------------------------
    def start(self, props: Mapping[str, str]) -> None:
        self.storage = self.parse_config(props)
        self.partitioner = self.make_partitioner(self.storage)
        self._executor = ThreadPoolExecutor(1, thread_name_prefix=self.writer_thread_name)

    def open(self, partitions: Collection[TopicPartition]) -> None:
        """Recover each partition from the lake and seek the consumer to the lake's offset."""
        assert self.storage is not None and self.partitioner is not None, "start() first"
        for tp in partitions:
            try:
                committed = self.recover(tp)
            except Exception as e:
                if not self.retriable(e):
                    raise
                # recovered by the writer thread once the storage answers; put refuses records until then
                self.buffers[tp] = self.new_buffer(tp, None)
                with self._queue_lock:
                    self._unsettled.add(tp)
                self._failed(e)
                continue
            self.buffers[tp] = self.new_buffer(tp, committed)
            if committed is not None:
                self.context.offset(tp, committed)
            log.info("%s: lake offset %s", tp, committed)

    def put(self, records: Sequence[SinkRecord]) -> None:
        self.pump(wait=False)
        if self._failure is not None:
            self._refuse()
        now_ms = int(time.time() * 1000)
        closed: list[FileSet] = []
        for buffer in self.buffers.values():
            due = buffer.due(now_ms)
            if due is not None:
                closed.append(due)
        columns = (records.record_value_columns()
                   if self.accepts_value_columns and type(records) is SinkRecordBatch else None)
        if columns is not None:
            assert isinstance(records, SinkRecordBatch)
            closed += self._add_columns(records, columns[0], columns[1], now_ms)
        else:
            # a poll returns each partition's records in runs: group runs, not records
            by_tp: dict[tuple[str, int | None], list[SinkRecord]] = {}
            for key, run in itertools.groupby(self.filter_records(records), _CONSUMED_AT):
                by_tp.setdefault(key, []).extend(run)
            for (topic, partition), batch in by_tp.items():
                closed += self._buffer(topic, partition or 0).add(batch, now_ms)
        with self._queue_lock:
            for file_set in closed:
                self._queued.append(file_set)
                self._queued_records += len(file_set)
            backlog = self._queued_records
        assert self.storage is not None
        self.pump(wait=backlog > self.storage.flush_size * max(len(self.buffers), 1))

    def _buffer(self, topic: str, partition: int) -> PartitionBuffer:
        tp = TopicPartition(topic, partition)
        if tp not in self.buffers:  # not opened through open(): recover now; records below the lake drop
            self.open([tp])
        return self.buffers[tp]

    def _add_columns(self, batch: SinkRecordBatch, schema: Schema, values: list[list[Any]],
                     now_ms: int) -> list[FileSet]:
        """``put``'s work for a batch of value columns: each run of one partition's records, sliced."""
        topics, partitions, offsets = batch.record_positions()
        closed: list[FileSet] = []
        count, start = len(offsets), 0
        for end in range(1, count + 1):
            if end < count and partitions[end] == partitions[start] and topics[end] == topics[start]:
                continue
            whole = start == 0 and end == count

            def records(lo: int = start, hi: int = end) -> list[SinkRecord]:
                return batch.records()[lo:hi]
            closed += self._buffer(topics[start], partitions[start]).add_columns(
                schema, offsets if whole else offsets[start:end],
                values if whole else [column[start:end] for column in values], now_ms, records)
            start = end
        return closed

    def pump(self, wait: bool, retry: bool = True) -> None:
        """Collect the write loop if it is done (or ``wait`` for it), then start one for queued sets.

        Task thread only. ``put`` and ``pre_commit`` call it; a subclass whose ``pre_commit`` reports
        offsets of its own calls it first too, so the writer keeps going and a failure surfaces. After a
        storage failure a new loop starts only once ``retry.backoff.ms`` has passed (and not at all
        with ``retry=False``); it settles the unsettled partitions before writing.
        """
        if self._running is not None and (wait or self._running.done()):
            self._collect()
        with self._queue_lock:
            if self._loop_active or not (self._queued or self._unsettled):
                return  # the running loop takes the queue when its write is done
            if self._failure is not None and (not retry or time.monotonic() < self._retry_at):
                return
            sets, self._queued, self._queued_records = self._queued, [], 0
            self._loop_active, self._writing = True, sets
        if self._running is not None:  # a loop that has just found the queue empty is returning
            self._collect()
        assert self._executor is not None
        self._running = self._executor.submit(self._write_loop, sets)

    def _collect(self) -> None:
        """Wait for the write loop and record what it did (a failure that is not retriable raises here)."""
        assert self._running is not None
        running, self._running = self._running, None
        result = running.result()
        for tp, committed in result.recovered.items():
            buffer = self.buffers.get(tp)
            if buffer is not None:
                buffer.committed = committed
                log.info("%s: lake offset %s (recovered after a storage failure)", tp, committed)
        for entry in result.entries:
            buffer = self.buffers.get(TopicPartition(entry.topic, entry.partition))
            if buffer is not None:
                buffer.committed = entry.next
        if result.failure is not None:
            self._failed(result.failure)
        elif self._failure is not None and not self._unsettled:
            log.info("Writing to %s works again after %d failed attempts", self.lake_name(), self._attempts)
            self._failure, self._attempts = None, 0

    def _failed(self, error: BaseException) -> None:
        """Record a storage failure (task thread): retried after ``retry.backoff.ms``."""
        assert self.storage is not None
        self._failure = error
        self._attempts += 1
        self._retry_at = time.monotonic() + self.storage.retry_backoff_ms / 1000
        log.warning("%s (attempt %d)", self._failure_message(), self._attempts)
        log.debug("The storage failure in full", exc_info=error)

    def _failure_message(self) -> str:
        assert self.storage is not None and self._failure is not None
        with self._queue_lock:
            sets = len(self._queued) + len(self._writing)
            records = self._queued_records + sum(len(s) for s in self._writing)
        return (f"Could not write to {self.lake_name()}: {self.describe_failure(self._failure)}. "
                f"{sets} closed file sets ({records} records) wait in memory; retrying every "
                f"{self.storage.retry_backoff_ms} ms (retry.backoff.ms), from where the lake's commit log ends")

    def _refuse(self) -> None:
        """``put`` while the storage is failing: ask the runtime to hand these records again later."""
        assert self.storage is not None
        self.context.timeout(self.storage.retry_backoff_ms)
        raise RetriableError(self._failure_message())

    def _write_loop(self, sets: list[FileSet]) -> _LoopResult:
        """Writer thread: settle, write ``sets``, then whatever was queued meanwhile, until the queue is empty.

        A retriable failure puts the sets not known to be written back at the head of the queue and
        marks their partitions unsettled (the result carries the failure); any other one raises.
        """
        result = _LoopResult()
        try:
            while True:
                with self._queue_lock:
                    unsettled = sorted(self._unsettled, key=lambda tp: (tp.topic, tp.partition))
                if unsettled:
                    sets = self._settle(sets, unsettled, result.recovered)
                if sets:
                    result.entries += self.writer.write(sets)
                with self._queue_lock:
                    sets, self._queued, self._queued_records = self._queued, [], 0
                    self._writing = sets
                    if not sets and not self._unsettled:
                        self._loop_active = False
                        return result
        except BaseException as e:
            retriable = isinstance(e, Exception) and self.retriable(e)
            with self._queue_lock:
                self._loop_active, self._writing = False, []
                if retriable:
                    self._queued = sets + self._queued
                    self._queued_records = sum(len(s) for s in self._queued)
                    self._unsettled.update(s.tp for s in sets)
            if not retriable:
                raise
            result.failure = e
            return result

    def _settle(self, sets: list[FileSet], unsettled: list[TopicPartition],
                recovered: dict[TopicPartition, int | None]) -> list[FileSet]:
        """Recover each unsettled partition from its commit log; the sets the lake does not hold yet.

        Recovery finishes or undoes a half-published set, so the lake's offset of each partition is
        the start of one of its sets in memory (or past them all); anything else means another
        writer changed the lake, and the task fails rather than guess.
        """
        settled: dict[TopicPartition, int | None] = {}
        for tp in unsettled:
            settled[tp] = self.recover(tp)
            with self._queue_lock:
                self._unsettled.discard(tp)
        recovered.update(settled)
        kept: list[FileSet] = []
        checked: set[TopicPartition] = set()
        for s in sets:
            committed = settled.get(s.tp)
            if committed is not None and s.end < committed:
                continue  # the failed write landed it after all
            if committed is not None and s.tp not in checked and s.start != committed:
                raise ConnectError(f"{s.tp}: after a storage failure the lake's commit log ends at offset "
                                   f"{committed}, but the next file set in memory starts at {s.start}; another "
                                   "writer changed this partition's files. Restart the task to resume from the lake")
            checked.add(s.tp)
            kept.append(s)
        return kept

    def close_open_sets(self) -> None:
        """Close every partition's open set now, whatever the rotation rules say, and write and commit
        everything (task thread). A table sink calls it at its commit point; a storage failure is
        retried as in ``put`` (the sets wait in memory)."""
        closed = [s for s in (b.take_open() for b in self.buffers.values()) if s is not None]
        for file_set in closed:
            file_set.seal()
        with self._queue_lock:
            self._queued.extend(closed)
            self._queued_records += sum(len(s) for s in closed)
        self.drain(retry=self._failure is None or time.monotonic() >= self._retry_at)

    def drain(self, retry: bool = True) -> None:
        """Write and commit everything closed so far (the running write, then the queue); task thread only.

        A subclass calls it where nothing may be in flight (the Iceberg sink, before it compares what it
        sent with what the tables took). ``retry=False``: while the storage is failing, only wait for
        the running write.
        """
        self.pump(wait=True, retry=retry)
        self.pump(wait=True, retry=retry)

    def pre_commit(self, current_offsets: Mapping[TopicPartition, OffsetAndMetadata]
                   ) -> dict[TopicPartition, OffsetAndMetadata]:
        """Only what the lake has committed (the group offset is a lag display, not the truth)."""
        self.pump(wait=False)
        return {tp: OffsetAndMetadata(b.committed) for tp, b in self.buffers.items() if b.committed is not None}

    def close(self, partitions: Collection[TopicPartition]) -> None:
        self.drain(retry=self._failure is None)
        closing = set(partitions)
        with self._queue_lock:  # what a storage failure left of them: the next owner replays it from the lake
            self._queued = [s for s in self._queued if s.tp not in closing]
            self._queued_records = sum(len(s) for s in self._queued)
            self._unsettled -= closing
        for tp in partitions:
            buffer = self.buffers.pop(tp, None)
            if buffer is not None:
                buffer.discard()
                self._tidy(tp)

    def _tidy(self, tp: TopicPartition) -> None:
        """Delete the commit log's leftover records now (stale ones are harmless: recovery skips them)."""
        try:
            self.tidy(tp)
        except Exception as e:
            log.warning("%s: could not delete old commit records (%s); the next owner will", tp, e)

    def stop(self) -> None:
        try:
            self.drain(retry=self._failure is None)
            if self._failure is not None:
                log.warning("Stopping with %s; the next owner of these partitions resumes from the lake",
                            self._failure_message())
            for tp in self.buffers:
                self._tidy(tp)
        finally:
            self.buffers.clear()
            if self._executor is not None:
                self._executor.shutdown(wait=True)
            self.release()
