"""The process's SparkSession for the Spark sink's own tests (the same one tests/connectors/spark_sink uses)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.lake_cluster.spark_session import shared_test_session


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    yield shared_test_session(tmp_path_factory.mktemp("spark-events"))
