"""The rows' schema: spark-sql-kafka's columns, then the typed value columns, and their Arrow form.

spark-sql-kafka's rows (``KafkaRecordToRowConverter.kafkaSchema``), every column nullable::

    key binary, value binary, topic string, partition int, offset long, timestamp timestamp,
    timestampType int [, headers array<struct<key: string, value: binary>>]

``timestampType`` is Kafka's id: 0 CreateTime, 1 LogAppendTime (-1 none). ``headers`` comes
with ``includeHeaders=true`` and is null for a record without headers, as in Spark.

Spark checks every Arrow batch a Python source yields against ``to_arrow_schema(schema)``
(names, types and nullability equal), so batches are built against exactly that schema.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

__all__ = ["KAFKA_COLUMNS", "arrow_schema", "kafka_fields", "kafka_struct"]

KAFKA_COLUMNS = ("key", "value", "topic", "partition", "offset", "timestamp", "timestampType")
HEADER_TYPE = ArrayType(StructType([StructField("key", StringType()), StructField("value", BinaryType())]))


def kafka_fields(include_headers: bool) -> list[StructField]:
    fields = [StructField("key", BinaryType()), StructField("value", BinaryType()), StructField("topic", StringType()),
              StructField("partition", IntegerType()), StructField("offset", LongType()),
              StructField("timestamp", TimestampType()), StructField("timestampType", IntegerType())]
    if include_headers:
        fields.append(StructField("headers", HEADER_TYPE))
    return fields


def kafka_struct(include_headers: bool) -> StructType:
    return StructType(kafka_fields(include_headers))


def arrow_schema(schema: StructType) -> Any:
    """The Arrow schema Spark expects a Python source's batches to have for ``schema``."""
    from pyspark.sql.pandas.types import to_arrow_schema

    return to_arrow_schema(schema, timezone="UTC")


def arrow_type(data_type: Any) -> pa.DataType:
    """The Arrow type Spark expects for one Spark type (as a column of a source's batches)."""
    return arrow_schema(StructType([StructField("x", data_type)])).field(0).type
