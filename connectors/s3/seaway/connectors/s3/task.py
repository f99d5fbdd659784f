"""S3SinkTask and S3SinkConnector: Kafka topics into an S3 bucket, exactly once.

The task is a :class:`~seaway.connectors.lake.task.LakeSinkTask` (offsets from the bucket's
commit log, ``context.offset`` on every assignment, a pipelined writer thread) whose writer is
:class:`~seaway.connectors.s3.writer.S3Writer`. Folders follow Confluent's S3 sink:
``<topics.dir>/<topic>/<partitioner folders>/``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

from seaway.connect.api import DataError, SinkRecord
from seaway.connectors.lake.config import StorageConfig
from seaway.connectors.lake.connector import LakeSinkConnector
from seaway.connectors.lake.partitioner import Partitioner, make_partitioner
from seaway.connectors.lake.task import LakeSinkTask
from seaway.connectors.s3._version import VERSION
from seaway.connectors.s3.config import RULES, S3SinkConfig
from seaway.connectors.s3.store import S3Store, make_client
from seaway.connectors.s3.writer import S3Writer

__all__ = ["S3SinkConnector", "S3SinkTask"]

log = logging.getLogger(__name__)


def _topic_dir(topic: str) -> str:
    """Confluent's layout: the topic name itself is the first folder under ``topics.dir``."""
    return topic


class S3SinkTask(LakeSinkTask):
    """One task; its partitions share one boto3 client."""

    writer_thread_name = "s3-sink-writer"

    def __init__(self) -> None:
        super().__init__()
        self.config: S3SinkConfig | None = None
        self._writer: S3Writer | None = None

    def version(self) -> str:
        return VERSION

    def parse_config(self, props: Mapping[str, str]) -> S3SinkConfig:
        self.config = S3SinkConfig.from_props(props)
        return self.config

    def make_partitioner(self, config: StorageConfig) -> Partitioner:
        return make_partitioner(config, _topic_dir)

    def start(self, props: Mapping[str, str]) -> None:
        super().start(props)
        assert self.config is not None
        store = S3Store(make_client(self.config), self.config)
        store.check_bucket()
        self._writer = S3Writer(store, self.config)

    @property
    def writer(self) -> S3Writer:
        assert self._writer is not None, "start() first"
        return self._writer

    def filter_records(self, records: Sequence[SinkRecord]) -> Sequence[SinkRecord]:
        """``behavior.on.null.values``: fail (the default) names the record; ignore drops it."""
        if all(r.value is not None for r in records):
            return records
        assert self.config is not None
        if self.config.ignore_null_values:
            return [r for r in records if r.value is not None]
        bad = next(r for r in records if r.value is None)
        raise DataError(f"Null valued record from {bad.original_topic}-{bad.original_kafka_partition}@"
                        f"{bad.original_kafka_offset} (behavior.on.null.values=fail; set it to ignore to skip "
                        "tombstones)")


class S3SinkConnector(LakeSinkConnector):
    """Aliases ``S3SinkConnector``, ``S3Sink`` and Confluent's ``io.confluent.connect.s3.S3SinkConnector``."""

    task = S3SinkTask
    config_class = S3SinkConfig
    rules = RULES
    plugin_version = VERSION
