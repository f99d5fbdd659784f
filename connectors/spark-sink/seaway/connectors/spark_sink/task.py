"""SparkParquetSinkTask and SparkParquetSinkConnector: Kafka topics into a Parquet lake, exactly once.

Where offsets live: the lake (file names and ``_commits/``), never the consumer group. On every
assignment (``open``) the task recovers each partition's commit log and seeks the consumer to
the lake's next offset with ``context.offset``; ``pre_commit`` hands the runtime only those
lake offsets, so the group's committed offset trails the lake and serves lag display. Records
of an open (uncommitted) file set are dropped on ``close``: the next owner replays them.

Writing is pipelined: closed file sets go to one writer thread per task (in order), so the
Spark job of one batch runs in the JVM while the task thread consumes and converts the next.
At most ``MAX_IN_FLIGHT`` writes wait; ``close`` and ``stop`` wait for all of them, and a
failed write fails the task at its next ``put``/``pre_commit`` (the lake is unchanged beyond
its last commit, so a restart resumes exactly).
"""

from __future__ import annotations

import logging
import time
from collections import deque
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
from seaway.connectors.spark_sink.session import start_session_async
from seaway.connectors.spark_sink.writer import LakeWriter

__all__ = ["SparkParquetSinkConnector", "SparkParquetSinkTask"]

log = logging.getLogger(__name__)
MAX_IN_FLIGHT = 2


class SparkParquetSinkTask(SinkTask):
    """One task; all its partitions share the worker's SparkSession."""

    def __init__(self) -> None:
        self.config: SparkSinkConfig | None = None
        self._session: Future[Any] | None = None
        self._writer: LakeWriter | None = None
        self.partitioner: Partitioner | None = None
        self.buffers: dict[TopicPartition, PartitionBuffer] = {}
        self._executor: ThreadPoolExecutor | None = None
        self._in_flight: deque[Future[list[CommitEntry]]] = deque()

    def version(self) -> str:
        return VERSION

    def start(self, props: Mapping[str, str]) -> None:
        self.config = SparkSinkConfig.from_props(props)
        self.partitioner = make_partitioner(self.config)
        # the JVM starts while the consumer joins its group; open() waits for it
        self._session = start_session_async(self.config.spark_master, self.config.spark_conf)
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
        if records:
            by_tp: dict[TopicPartition, list[SinkRecord]] = {}
            for r in records:
                tp = TopicPartition(r.original_topic, r.original_kafka_partition or 0)
                by_tp.setdefault(tp, []).append(r)
            for tp, batch in by_tp.items():
                if tp not in self.buffers:  # not opened through open(): recover now; records below the lake drop
                    self.open([tp])
                buffer = self.buffers[tp]
                closed += buffer.add(batch, now_ms)
        if closed:
            assert self._executor is not None
            self._in_flight.append(self._executor.submit(self.writer.write, closed))
        self._harvest(keep=MAX_IN_FLIGHT)

    def _harvest(self, keep: int) -> None:
        """Collect finished writes (in order), waiting until at most ``keep`` are left."""
        while self._in_flight and (self._in_flight[0].done() or len(self._in_flight) > keep):
            for entry in self._in_flight.popleft().result():
                buffer = self.buffers.get(TopicPartition(entry.topic, entry.partition))
                if buffer is not None:
                    buffer.committed = entry.next

    def pre_commit(self, current_offsets: Mapping[TopicPartition, OffsetAndMetadata]
                   ) -> dict[TopicPartition, OffsetAndMetadata]:
        """Only what the lake has committed (the group offset is a lag display, not the truth)."""
        self._harvest(keep=MAX_IN_FLIGHT)
        return {tp: OffsetAndMetadata(b.committed) for tp, b in self.buffers.items() if b.committed is not None}

    def close(self, partitions: Collection[TopicPartition]) -> None:
        self._harvest(keep=0)
        for tp in partitions:
            buffer = self.buffers.pop(tp, None)
            if buffer is not None:
                buffer.discard()

    def stop(self) -> None:
        try:
            self._harvest(keep=0)
        finally:
            self.buffers.clear()
            if self._executor is not None:
                self._executor.shutdown(wait=True)


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
