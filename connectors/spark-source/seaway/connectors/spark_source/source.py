"""``format("seaway")``: the DataSource Spark instantiates with a read's or a write's options.

Spark calls :meth:`SeawayDataSource.schema` when a read is defined (``load()``), so bad options
fail there, before any job; the readers and writers are made when a query is planned and are
pickled to the executors, so they carry only checked options, never a client.
"""

from __future__ import annotations

from pyspark.sql.datasource import (
    DataSource,
    DataSourceReader,
    DataSourceStreamReader,
    DataSourceStreamWriter,
    DataSourceWriter,
)
from pyspark.sql.types import StructType
from seaway.connectors.spark_source.errors import OptionError
from seaway.connectors.spark_source.options import parse_read_options, parse_write_options
from seaway.connectors.spark_source.reader import BatchReader, StreamReader
from seaway.connectors.spark_source.values import declared_schema
from seaway.connectors.spark_source.writer import BatchWriter, StreamWriter

__all__ = ["NAME", "SeawayDataSource"]

NAME = "seaway"


class SeawayDataSource(DataSource):
    """Kafka topics as DataFrames, batch and streaming, with spark-sql-kafka's options and columns."""

    @classmethod
    def name(cls) -> str:
        return NAME

    def schema(self) -> StructType | str:
        # read and readStream share this call and Spark does not say which it is: the batch-only and
        # streaming-only rules are checked in reader() / streamReader()
        return declared_schema(parse_read_options(self.options, streaming=None))

    def reader(self, schema: StructType) -> DataSourceReader:
        return BatchReader(parse_read_options(self.options, streaming=False), schema)

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        return StreamReader(parse_read_options(self.options, streaming=True), schema)

    def writer(self, schema: StructType, overwrite: bool) -> DataSourceWriter:
        if overwrite:
            raise OptionError("Save mode Overwrite is not allowed for Kafka topics: use mode('append')")
        return BatchWriter(parse_write_options(self.options), schema)

    def streamWriter(self, schema: StructType, overwrite: bool) -> DataSourceStreamWriter:
        return StreamWriter(parse_write_options(self.options), schema)
