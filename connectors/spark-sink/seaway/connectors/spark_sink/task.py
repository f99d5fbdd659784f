"""SparkParquetSinkTask and SparkParquetSinkConnector: Kafka topics into a Parquet lake, exactly once.

Where offsets live: the lake (file names and ``_commits/``), never the consumer group. On every
assignment (``open``) the task recovers each partition's commit log and seeks the consumer to
the lake's next offset with ``context.offset``; ``pre_commit`` hands the runtime only those
lake offsets, so the group's committed offset trails the lake and serves lag display. Records
of an open (uncommitted) file set are dropped on ``close``: the next owner replays them.

Writing is pipelined: closed file sets go to one writer thread per task, so the Spark job of
one batch runs in the JVM while the task thread consumes and converts the next. While a
write runs, newly closed sets queue up and the next write takes **all** of them (one Spark
job per distinct column layout): a Spark job has a fixed cost of ~0.3-0.5 s of driver and
JIT work however few rows it writes, so under load fewer, larger jobs land more records per
second. When a write finishes, the writer thread takes whatever was queued meanwhile at
once, rather than waiting for the task thread's next ``put`` (which may be a whole poll
timeout away once the topic is drained). The queue is bounded: when it holds more than
``flush.size`` records per assigned partition, ``put`` waits until the writer has written
everything queued.
``close`` and ``stop`` write and wait for everything queued, and a failed write fails the
task at its next ``put``/``pre_commit`` (the lake is unchanged beyond its last commit, so a
restart resumes exactly).
"""

from __future__ import annotations

import itertools
import logging
import operator
import threading
import time
from collections.abc import Collection, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from seaway.connect.api import (
    Config,
    ConfigDef,
    OffsetAndMetadata,
    SinkConnector,
    SinkRecord,
    SinkTask,
    Task,
    TopicPartition,
)
from seaway.connectors.spark_sink._version import VERSION
from seaway.connectors.spark_sink.commit_log import CommitEntry
from seaway.connectors.spark_sink.config import CONFIG_DEF, SparkSinkConfig, validate_config
from seaway.connectors.spark_sink.lake import LakeFileSystem
from seaway.connectors.spark_sink.partitioner import Partitioner, make_partitioner
from seaway.connectors.spark_sink.rotation import FileSet, PartitionBuffer
from seaway.connectors.spark_sink.session import acquire_session_async, release_session
from seaway.connectors.spark_sink.writer import LakeWriter

__all__ = ["SparkParquetSinkConnector", "SparkParquetSinkTask"]

log = logging.getLogger(__name__)
_CONSUMED_AT = operator.attrgetter("original_topic", "original_kafka_partition")


class SparkParquetSinkTask(SinkTask):
    """One task; all its partitions share the worker's SparkSession."""

    def __init__(self) -> None:
        self.config: SparkSinkConfig | None = None
        self._session: Future[Any] | None = None
        self._writer: LakeWriter | None = None
        self.partitioner: Partitioner | None = None
        self.buffers: dict[TopicPartition, PartitionBuffer] = {}
        self._executor: ThreadPoolExecutor | None = None
        self._running: Future[list[CommitEntry]] | None = None  # the write loop in progress
        self._queue_lock = threading.Lock()  # guards the three fields below
        self._queued: list[FileSet] = []  # closed sets waiting for the write loop
        self._queued_records = 0
        self._loop_active = False  # the write loop will take what is queued before it ends

    def version(self) -> str:
        return VERSION

    def start(self, props: Mapping[str, str]) -> None:
        self.config = SparkSinkConfig.from_props(props)
        self.partitioner = make_partitioner(self.config)
        # the JVM starts while the consumer joins its group; open() waits for it
        self._session = acquire_session_async(self.config.spark_master, self.config.spark_conf)
        self._executor = ThreadPoolExecutor(1, thread_name_prefix="spark-sink-writer")

    @property
    def writer(self) -> LakeWriter:
        if self._writer is None:
            assert self._session is not None and self.config is not None, "start() first"
            spark = self._session.result()
            self._writer = LakeWriter(spark, LakeFileSystem(spark, self.config.lake_path), self.config)
        return self._writer

    def open(self, partitions: Collection[TopicPartition]) -> None:
        """Recover each partition from the lake and seek the consumer to the lake's offset."""
        assert self.config is not None and self.partitioner is not None
        for tp in partitions:
            committed = self.writer.commit_log(tp.topic, tp.partition).recover()
            self.buffers[tp] = PartitionBuffer(tp, self.config, self.partitioner, committed)
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
        # a poll returns each partition's records in runs: group runs, not records
        by_tp: dict[tuple[str, int | None], list[SinkRecord]] = {}
        for key, run in itertools.groupby(records, _CONSUMED_AT):
            by_tp.setdefault(key, []).extend(run)
        for (topic, partition), batch in by_tp.items():
            tp = TopicPartition(topic, partition or 0)
            if tp not in self.buffers:  # not opened through open(): recover now; records below the lake drop
                self.open([tp])
            closed += self.buffers[tp].add(batch, now_ms)
        with self._queue_lock:
            for file_set in closed:
                self._queued.append(file_set)
                self._queued_records += len(file_set)
            backlog = self._queued_records
        assert self.config is not None
        self._pump(wait=backlog > self.config.flush_size * max(len(self.buffers), 1))

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

    def stop(self) -> None:
        try:
            self._drain()
        finally:
            self.buffers.clear()
            if self._executor is not None:
                self._executor.shutdown(wait=True)
            if self._session is not None and self.config is not None:
                self._session, self._writer = None, None
                release_session(self.config.spark_session_idle_timeout_ms)


class SparkParquetSinkConnector(SinkConnector):
    """Alias ``SparkParquetSink``: topics into Hive-style Parquet under ``lake.path``."""

    def __init__(self) -> None:
        self.props: dict[str, str] = {}

    def version(self) -> str:
        return VERSION

    def start(self, props: Mapping[str, str]) -> None:
        SparkSinkConfig.from_props(props)
        self.props = dict(props)

    def task_class(self) -> type[Task]:
        return SparkParquetSinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self.props) for _ in range(max_tasks)]

    def stop(self) -> None:
        pass

    def config(self) -> ConfigDef:
        return CONFIG_DEF

    def validate(self, props: Mapping[str, str]) -> Config:
        return validate_config(props)
