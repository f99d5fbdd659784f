"""One SparkSession for every Spark sink test (a JVM takes ~15 s to start), and record helpers."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from seaway.connect.api import SinkRecord, TimestampType


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    from seaway.connectors.spark_sink import shared_session

    session = shared_session("local[2]", {"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "2",
                                          "spark.ui.showConsoleProgress": "false",
                                          "spark.driver.memory": "1g"})
    session.sparkContext.setLogLevel("ERROR")
    yield session


def record(topic: str, partition: int, offset: int, value: Any, schema: Any = None, *, key: Any = None,
           timestamp: int | None = None) -> SinkRecord:
    return SinkRecord(topic, partition, None, key, schema, value, offset,
                      timestamp if timestamp is not None else 1_700_000_000_000 + offset,
                      TimestampType.CREATE_TIME)
