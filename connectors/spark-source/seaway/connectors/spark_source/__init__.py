"""``format("seaway")``: Kafka topics in PySpark without spark-sql-kafka's jars.

A data source on Spark 4's Python Data Source API (``pyspark.sql.datasource``) for
``spark.read``, ``spark.readStream``, ``df.write`` and ``df.writeStream``, against Seaway's
broker or any Kafka cluster, with spark-sql-kafka's option names and row schema, and typed
value columns (``valueFormat``: Avro through the schema registry, JSON, string).

Installed, it needs no import: PySpark registers the ``DefaultSource`` of every top-level
``pyspark_*`` module on the Python path when a session first resolves a Python data source,
and this distribution ships ``pyspark_seaway``. :func:`register` does the same explicitly
(``spark.dataSource.register(SeawayDataSource)``). Guide: docs/spark-source.md.
"""

from __future__ import annotations

from typing import Any

from seaway.connectors.spark_source.errors import (
    DataLossError,
    OptionError,
    ReadTimeout,
    SparkSourceError,
    ValueDecodeError,
)
from seaway.connectors.spark_source.ranges import OffsetRange
from seaway.connectors.spark_source.source import NAME, SeawayDataSource

__all__ = [
    "NAME",
    "DataLossError",
    "OffsetRange",
    "OptionError",
    "ReadTimeout",
    "SeawayDataSource",
    "SparkSourceError",
    "ValueDecodeError",
    "register",
]


def register(spark: Any) -> None:
    """Register ``format("seaway")`` on ``spark`` (needed only where ``pyspark_seaway`` is not installed,
    e.g. a source checkout on ``PYTHONPATH``)."""
    spark.dataSource.register(SeawayDataSource)
