"""PySpark's hook for ``format("seaway")``: Spark imports every top-level ``pyspark_*`` module and
registers its ``DefaultSource`` (``pyspark.sql.worker.lookup_data_sources``), so users need no import."""

from seaway.connectors.spark_source import SeawayDataSource as DefaultSource

__all__ = ["DefaultSource"]
