"""What Seaway's lake sinks share: the Spark Parquet, S3, Iceberg and Delta sinks import it, none copies it.

Partitioners (Default, Field, TimeBased, Hourly, Daily with Confluent's ``path.format``,
``partition.duration.ms``, ``locale``, ``timezone``, ``timestamp.extractor``), file-set
rotation (``flush.size``, ``rotate.interval.ms``, ``rotate.schedule.interval.ms``,
``schema.compatibility``), deterministic file names, Connect records to Arrow columns, the
commit log that keeps each record exactly once, the pipelined sink task, and the connector half
(:class:`LakeSinkConnector`, with each sink's :class:`ConfigRules`). See README.md beside the
distribution.
"""

from seaway.connectors.lake.columns import json_text, metadata_arrays, metadata_fields, project_struct, value_columns
from seaway.connectors.lake.commit_log import COMMITS_DIR, CommitEntry, CommitLog, FileMove
from seaway.connectors.lake.config import (
    PARTITIONERS,
    ConfigRules,
    CrossCheck,
    StorageConfig,
    define_storage_keys,
    storage_cross_check,
    storage_settings,
    unknown_keys,
)
from seaway.connectors.lake.connector import LakeSinkConnector, ParsedConfig
from seaway.connectors.lake.naming import DataFileName, data_file_name, parse_data_file_name, start_offset_file_name
from seaway.connectors.lake.partitioner import (
    DefaultPartitioner,
    FieldPartitioner,
    Partitioner,
    TimeBasedPartitioner,
    check_path_format,
    escape_path_name,
    make_partitioner,
    topic_folder,
)
from seaway.connectors.lake.rotation import ExtraColumns, FileSet, FolderPart, PartitionBuffer
from seaway.connectors.lake.store import LakeStore
from seaway.connectors.lake.task import LakeSinkTask, SetWriter

__all__ = [
    "COMMITS_DIR",
    "PARTITIONERS",
    "CommitEntry",
    "CommitLog",
    "ConfigRules",
    "CrossCheck",
    "DataFileName",
    "DefaultPartitioner",
    "ExtraColumns",
    "FieldPartitioner",
    "FileMove",
    "FileSet",
    "FolderPart",
    "LakeSinkConnector",
    "LakeSinkTask",
    "LakeStore",
    "ParsedConfig",
    "PartitionBuffer",
    "Partitioner",
    "SetWriter",
    "StorageConfig",
    "TimeBasedPartitioner",
    "check_path_format",
    "data_file_name",
    "define_storage_keys",
    "escape_path_name",
    "json_text",
    "make_partitioner",
    "metadata_arrays",
    "metadata_fields",
    "parse_data_file_name",
    "project_struct",
    "start_offset_file_name",
    "storage_cross_check",
    "storage_settings",
    "topic_folder",
    "unknown_keys",
    "value_columns",
]
