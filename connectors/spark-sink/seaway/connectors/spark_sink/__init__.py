"""Seaway's Spark sink: Kafka topics into a Parquet data lake (Hive-style folders) with exactly-once.

Connector alias ``SparkParquetSink`` (entry point group ``seaway.connectors``). See README.md
beside the distribution and docs/spark-sink.md for the layout and the commit protocol. The
partitioners, rotation, Arrow conversion, naming and commit log come from
:mod:`seaway.connectors.lake` (shared with the S3 sink) and are re-exported here.
"""

from seaway.connectors.lake.commit_log import CommitEntry, CommitLog, FileMove
from seaway.connectors.lake.naming import data_file_name, parse_data_file_name
from seaway.connectors.lake.partitioner import (
    DefaultPartitioner,
    FieldPartitioner,
    Partitioner,
    TimeBasedPartitioner,
    make_partitioner,
)
from seaway.connectors.spark_sink.config import CONFIG_DEF, SparkSinkConfig, validate_config
from seaway.connectors.spark_sink.lake import LakeFileSystem
from seaway.connectors.spark_sink.session import shared_session
from seaway.connectors.spark_sink.task import SparkParquetSinkConnector, SparkParquetSinkTask

__all__ = [
    "CONFIG_DEF",
    "CommitEntry",
    "CommitLog",
    "DefaultPartitioner",
    "FieldPartitioner",
    "FileMove",
    "LakeFileSystem",
    "Partitioner",
    "SparkParquetSinkConnector",
    "SparkParquetSinkTask",
    "SparkSinkConfig",
    "TimeBasedPartitioner",
    "data_file_name",
    "make_partitioner",
    "parse_data_file_name",
    "shared_session",
    "validate_config",
]
