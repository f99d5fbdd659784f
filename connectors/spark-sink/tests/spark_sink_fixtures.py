"""The process's SparkSession for the Spark sink's own tests (the same one tests/connectors/spark_sink uses)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    from seaway.connectors.spark_sink import shared_session

    session = shared_session("local[2]", {"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "2",
                                          "spark.ui.showConsoleProgress": "false", "spark.driver.memory": "1g"})
    session.sparkContext.setLogLevel("ERROR")
    yield session
