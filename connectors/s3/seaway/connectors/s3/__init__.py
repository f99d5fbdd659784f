"""Seaway's S3 sink: Kafka topics into S3 (or any S3-compatible store) as Parquet, Avro or JSON, exactly once.

Confluent's S3 sink config names (``io.confluent.connect.s3.S3SinkConnector`` is accepted as the
class). Partitioners, rotation, file naming, the Arrow conversion and the commit log are
shared with the Spark sink (:mod:`seaway.connectors.lake`). See README.md beside the
distribution and docs/s3-sink.md.
"""

from seaway.connectors.s3.config import CONFIG_DEF, S3SinkConfig, validate_config
from seaway.connectors.s3.formats import avro_schema, write_file
from seaway.connectors.s3.store import S3Store, S3Upload, make_client
from seaway.connectors.s3.task import S3SinkConnector, S3SinkTask
from seaway.connectors.s3.writer import S3Writer

__all__ = [
    "CONFIG_DEF",
    "S3SinkConfig",
    "S3SinkConnector",
    "S3SinkTask",
    "S3Store",
    "S3Upload",
    "S3Writer",
    "avro_schema",
    "make_client",
    "validate_config",
    "write_file",
]
