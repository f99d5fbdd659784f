"""LakeSinkTask: the exactly-once, pipelined sink task both lake sinks are (Spark Parquet, S3).

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

A sink subclasses :class:`LakeSinkTask` with ``parse_config`` and ``writer`` (and may override
``make_partitioner``, ``filter_records`` and ``release``).
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
from typing import Any, Protocol

from seaway.connect.api import OffsetAndMetadata, Schema, SinkRecord, SinkRecordBatch, SinkTask, TopicPartition
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
        self._running: Future[list[CommitEntry]] | None = None  # the write loop in progress
        self._queue_lock = threading.Lock()  # guards the three fields below
        self._queued: list[FileSet] = []  # closed sets waiting for the write loop
        self._queued_records = 0
        self._loop_active = False  # the write loop will take what is queued before it ends

    # -- what a sink provides ---------------------------------------------------------------------
    @abc.abstractmethod
    def parse_config(self, props: Mapping[str, str]) -> StorageConfig:
        """The sink's typed config (raises :class:`ConfigError` naming the key)."""

    @property
    @abc.abstractmethod
    def writer(self) -> SetWriter:
        """The sink's writer (may be built lazily, e.g. once a SparkSession is up)."""

    def make_partitioner(self, config: StorageConfig) -> Partitioner:
        """The partitioner ``partitioner.class`` names (folders start with ``topic=<topic>``)."""
        return make_partitioner(config)

    def filter_records(self, records: Sequence[SinkRecord]) -> Sequence[SinkRecord]:
        """Records to buffer (e.g. ``behavior.on.null.values``); all of them by default."""
        return records

    def release(self) -> None:
        """Let go of shared resources at the end of ``stop`` (after everything is written)."""

    # -- the task ---------------------------------------------------------------------------------
    def start(self, props: Mapping[str, str]) -> None:
        self.storage = self.parse_config(props)
        self.partitioner = self.make_partitioner(self.storage)
        self._executor = ThreadPoolExecutor(1, thread_name_prefix=self.writer_thread_name)

    def open(self, partitions: Collection[TopicPartition]) -> None:
        """Recover each partition from the lake and seek the consumer to the lake's offset."""
        assert self.storage is not None and self.partitioner is not None, "start() first"
        for tp in partitions:
            committed = self.writer.commit_log(tp.topic, tp.partition).recover()
            self.buffers[tp] = PartitionBuffer(tp, self.storage, self.partitioner, committed)
            if committed is not None:
                self.context.offset(tp, committed)
            log.info("%s: lake offset %s", tp, committed)

    def put(self, records: Sequence[SinkRecord]) -> None:
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
        self._pump(wait=backlog > self.storage.flush_size * max(len(self.buffers), 1))

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

    def _pump(self, wait: bool) -> None:
        """Collect the write loop if it is done (or ``wait`` for it), then start one for queued sets."""
        if self._running is not None and (wait or self._running.done()):
            self._collect()
        with self._queue_lock:
            if self._loop_active or not self._queued:
                return  # the running loop takes the queue when its write is done
            sets, self._queued, self._queued_records = self._queued, [], 0
            self._loop_active = True
        if self._running is not None:  # a loop that has just found the queue empty is returning
            self._collect()
        assert self._executor is not None
        self._running = self._executor.submit(self._write_loop, sets)

    def _collect(self) -> None:
        """Wait for the write loop and record what it committed (a failed write raises here)."""
        assert self._running is not None
        running, self._running = self._running, None
        for entry in running.result():
            buffer = self.buffers.get(TopicPartition(entry.topic, entry.partition))
            if buffer is not None:
                buffer.committed = entry.next

    def _write_loop(self, sets: list[FileSet]) -> list[CommitEntry]:
        """Writer thread: write ``sets``, then whatever was queued meanwhile, until the queue is empty."""
        entries: list[CommitEntry] = []
        try:
            while sets:
                entries += self.writer.write(sets)
                with self._queue_lock:
                    sets, self._queued, self._queued_records = self._queued, [], 0
                    if not sets:
                        self._loop_active = False
        except BaseException:
            with self._queue_lock:
                self._loop_active = False
            raise
        return entries

    def _drain(self) -> None:
        """Write and commit everything closed so far (the running write, then the queue)."""
        self._pump(wait=True)
        self._pump(wait=True)

    def pre_commit(self, current_offsets: Mapping[TopicPartition, OffsetAndMetadata]
                   ) -> dict[TopicPartition, OffsetAndMetadata]:
        """Only what the lake has committed (the group offset is a lag display, not the truth)."""
        self._pump(wait=False)
        return {tp: OffsetAndMetadata(b.committed) for tp, b in self.buffers.items() if b.committed is not None}

    def close(self, partitions: Collection[TopicPartition]) -> None:
        self._drain()
        for tp in partitions:
            buffer = self.buffers.pop(tp, None)
            if buffer is not None:
                buffer.discard()
                self._tidy(tp)

    def _tidy(self, tp: TopicPartition) -> None:
        """Delete the commit log's leftover records now (stale ones are harmless: recovery skips them)."""
        try:
            self.writer.commit_log(tp.topic, tp.partition).tidy()
        except Exception as e:
            log.warning("%s: could not delete old commit records (%s); the next owner will", tp, e)

    def stop(self) -> None:
        try:
            self._drain()
            for tp in self.buffers:
                self._tidy(tp)
        finally:
            self.buffers.clear()
            if self._executor is not None:
                self._executor.shutdown(wait=True)
            self.release()
