"""SparkParquetSinkTask and SparkParquetSinkConnector: Kafka topics into a Parquet lake, exactly once.

The task is a :class:`~seaway.connectors.lake.task.LakeSinkTask` (offsets from the lake, a
pipelined writer thread; see there) whose writer lands file sets through the worker's shared
SparkSession. A Spark job has a fixed cost of ~0.3-0.5 s of driver and JIT work however few rows
it writes, which is why the writer thread takes every set queued while the previous write ran.
The JVM starts while the consumer joins its group; ``open`` waits for it.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from concurrent.futures import Future
from typing import Any

from seaway.connectors.lake.config import StorageConfig
from seaway.connectors.lake.connector import LakeSinkConnector
from seaway.connectors.lake.partitioner import Partitioner, make_partitioner
from seaway.connectors.lake.task import LakeSinkTask
from seaway.connectors.spark_sink._version import VERSION
from seaway.connectors.spark_sink.config import RULES, SparkSinkConfig
from seaway.connectors.spark_sink.lake import TMP_DIR, LakeFileSystem, table_dir
from seaway.connectors.spark_sink.session import acquire_session_async, release_session
from seaway.connectors.spark_sink.writer import LakeWriter

__all__ = ["SparkParquetSinkConnector", "SparkParquetSinkTask"]

log = logging.getLogger(__name__)


class SparkParquetSinkTask(LakeSinkTask):
    """One task; all its partitions share the worker's SparkSession."""

    writer_thread_name = "spark-sink-writer"

    def __init__(self) -> None:
        super().__init__()
        self.config: SparkSinkConfig | None = None
        self._session: Future[Any] | None = None
        self._writer: LakeWriter | None = None

    def version(self) -> str:
        return VERSION

    def parse_config(self, props: Mapping[str, str]) -> SparkSinkConfig:
        self.config = SparkSinkConfig.from_props(props)
        return self.config

    def make_partitioner(self, config: StorageConfig) -> Partitioner:
        """Folders start with the topic's own folder: each topic is a table of its own (see lake.py)."""
        return make_partitioner(config, table_dir)

    def retriable(self, error: BaseException) -> bool:
        """I/O errors, and Spark or Hadoop failures caused by a Java ``IOException`` (HDFS or S3 unreachable)."""
        return super().retriable(error) or java_io_failure(error) is not None

    def describe_failure(self, error: BaseException) -> str:
        cause = java_io_failure(error)
        return cause if cause is not None else super().describe_failure(error)

    def lake_name(self) -> str:
        return self.config.lake_path if self.config is not None else "the lake"

    def start(self, props: Mapping[str, str]) -> None:
        super().start(props)
        assert self.config is not None
        # the JVM starts while the consumer joins its group; open() waits for it
        # on a cluster the warm-up writes where the executors can, the lake (a worker killed meanwhile
        # leaves its _tmp/_warmup-<uuid>/, ~2 MB); locally a temp folder of the worker's disk
        master = self.config.spark_master
        warm_up_in = None if master.startswith("local") else f"{self.config.lake_path}/{TMP_DIR}"
        self._session = acquire_session_async(master, self.config.spark_conf, warm_up_in)

    @property
    def writer(self) -> LakeWriter:
        if self._writer is None:
            assert self._session is not None and self.config is not None, "start() first"
            spark = self._session.result()
            self._writer = LakeWriter(spark, LakeFileSystem(spark, self.config.lake_path), self.config)
        return self._writer

    def release(self) -> None:
        if self._writer is not None:
            self._writer.close()
        if self._session is not None and self.config is not None:
            self._session, self._writer = None, None
            release_session(self.config.spark_session_idle_timeout_ms)


def java_io_failure(error: BaseException) -> str | None:
    """The first ``java.io.IOException`` in a JVM error's cause chain, as ``class: message``; else ``None``.

    PySpark raises a ``Py4JJavaError`` (``java_exception``) or a converted ``CapturedException``
    (``_origin``); a Spark job's failure carries the executor's exception as its cause.
    """
    throwable = getattr(error, "java_exception", None) or getattr(error, "_origin", None)
    if throwable is None:
        return None
    try:
        from pyspark import SparkContext

        jvm = SparkContext._jvm  # noqa: SLF001 - PySpark's py4j JVM view (no public API)
        if jvm is None:
            return None
        io_error = jvm.java.lang.Class.forName("java.io.IOException")
        for _ in range(32):
            if throwable is None:
                return None
            if io_error.isInstance(throwable):
                message = str(throwable.getMessage() or "").strip().splitlines()
                return f"{throwable.getClass().getName()}: {message[0] if message else ''}"
            throwable = throwable.getCause()
    except Exception as e:  # the JVM itself is gone: not a storage outage
        log.debug("could not inspect a JVM error: %s", e)
    return None


class SparkParquetSinkConnector(LakeSinkConnector):
    """Alias ``SparkParquetSink``: topics into Hive-style Parquet under ``lake.path``."""

    task = SparkParquetSinkTask
    config_class = SparkSinkConfig
    rules = RULES
    plugin_version = VERSION
