"""One SparkSession for the process (the Spark sink's tests share it), one broker, helpers.

Spark runs a Python data source in Python workers started as ``PYSPARK_PYTHON`` (default
``python3`` on the PATH). scripts/test.sh activates the virtualenv, so that is this interpreter;
a run that did not (``.venv/bin/python -m pytest ...``) would start workers without pyspark,
so it is pinned to this interpreter before the first JVM starts (conftests load before any test).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from tests.lake_cluster.spark_session import shared_test_session

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    yield shared_test_session(tmp_path_factory.mktemp("spark-events"))
