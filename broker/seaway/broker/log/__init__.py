"""The broker's storage layer: segments, indexes, partition logs and the log manager.

See README.md in this package for the design; the names below are the public API.
"""

from seaway.broker.log.config import (
    TOPIC_CONFIG_DEFS,
    ConfigEntry,
    ConfigSource,
    LogConfig,
    describe_topic_configs,
)
from seaway.broker.log.log_manager import INTERNAL_TOPICS, LogManager, TopicMetadata, validate_topic_name
from seaway.broker.log.partition_log import AppendResult, FileRegion, PartitionLog
from seaway.broker.log.segment import Segment

__all__ = [
    "INTERNAL_TOPICS",
    "TOPIC_CONFIG_DEFS",
    "AppendResult",
    "ConfigEntry",
    "ConfigSource",
    "FileRegion",
    "LogConfig",
    "LogManager",
    "PartitionLog",
    "Segment",
    "TopicMetadata",
    "describe_topic_configs",
    "validate_topic_name",
]
