"""One SparkSession for every Spark sink test (a JVM takes ~15 s to start), the lake's distributed parts, helpers.

``hdfs`` (Hadoop's NameNode + DataNode) and ``spark_cluster`` (a Spark standalone master + worker)
are session fixtures started on first use by the tests that need them (each start has a deadline)
and stopped by PID when the session ends, failed tests included.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from seaway.connect.api import SinkRecord, TimestampType

from tests.lake_cluster.hdfs import Hdfs
from tests.lake_cluster.moto import MotoS3
from tests.lake_cluster.spark_session import shared_test_session
from tests.lake_cluster.spark_standalone import SparkStandalone


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    yield shared_test_session(tmp_path_factory.mktemp("spark-events"))


@pytest.fixture(scope="session")
def hdfs(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hdfs]:
    """A real HDFS (one NameNode, one DataNode) for the session; tests use folders of their own.

    This process's HDFS client (the ``spark`` session's) gives up on a stopped NameNode after 3
    connection retries instead of 10, so outage tests see the sink's own retries sooner.
    """
    spark._jsc.hadoopConfiguration().set("ipc.client.connect.max.retries", "3")
    with Hdfs(tmp_path_factory.mktemp("hdfs")) as cluster:
        yield cluster


@pytest.fixture(scope="session")
def spark_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SparkStandalone]:
    """A Spark standalone master and one worker (2 cores) from pyspark's own distribution."""
    with SparkStandalone(tmp_path_factory.mktemp("spark-standalone")) as cluster:
        yield cluster


@pytest.fixture(scope="session")
def s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MotoS3]:
    """moto's S3 server; tests use buckets of their own."""
    with MotoS3(tmp_path_factory.mktemp("moto")) as server:
        yield server


def record(topic: str, partition: int, offset: int, value: Any, schema: Any = None, *, key: Any = None,
           timestamp: int | None = None) -> SinkRecord:
    return SinkRecord(topic, partition, None, key, schema, value, offset,
                      timestamp if timestamp is not None else 1_700_000_000_000 + offset,
                      TimestampType.CREATE_TIME)
