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

from seaway.connect.api import Config, ConfigDef, SinkConnector, Task
from seaway.connectors.lake.task import LakeSinkTask
from seaway.connectors.spark_sink._version import VERSION
from seaway.connectors.spark_sink.config import CONFIG_DEF, SparkSinkConfig, validate_config
from seaway.connectors.spark_sink.lake import LakeFileSystem
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

    def start(self, props: Mapping[str, str]) -> None:
        super().start(props)
        assert self.config is not None
        # the JVM starts while the consumer joins its group; open() waits for it
        self._session = acquire_session_async(self.config.spark_master, self.config.spark_conf)

    @property
    def writer(self) -> LakeWriter:
        if self._writer is None:
            assert self._session is not None and self.config is not None, "start() first"
            spark = self._session.result()
            self._writer = LakeWriter(spark, LakeFileSystem(spark, self.config.lake_path), self.config)
        return self._writer

    def release(self) -> None:
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
