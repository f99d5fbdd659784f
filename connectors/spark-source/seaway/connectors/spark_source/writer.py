"""Writing DataFrames to topics: ``df.write.format("seaway")`` and ``df.writeStream.format("seaway")``.

The DataFrame has spark-sql-kafka's sink columns (``KafkaWriter.validateQuery``):

==========  ==========================================  =================================
column      type                                        when absent
==========  ==========================================  =================================
value       string or binary (required)                 --
key         string or binary                            null keys
topic       string                                      the ``topic`` option (which wins
                                                        over the column when both are set)
partition   int                                         the producer's partitioner
headers     array<struct<key: string, value: binary>>   no headers
==========  ==========================================  =================================

Other columns are ignored, as Spark does. Each Spark task writes its rows with one idempotent
producer (``enable.idempotence=true``, so a retried send is never written twice;
``acks=all``) and Java's partitioner (``murmur2_random``: a key goes to the partition Kafka's
Java clients and spark-sql-kafka choose), flushes, and fails the task if any record was not
acknowledged. As with spark-sql-kafka, a task Spark retries writes its rows again (at least
once across task retries); ``kafka.*`` settings pass to the producer.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from confluent_kafka import KafkaError, KafkaException, Producer
from pyspark.sql.datasource import (
    DataSourceArrowWriter,
    DataSourceStreamArrowWriter,
    WriterCommitMessage,
)
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    DataType,
    IntegerType,
    StringType,
    StructType,
)
from seaway.connectors.spark_source.errors import OptionError, SparkSourceError
from seaway.connectors.spark_source.kafka import describe_kafka_error
from seaway.connectors.spark_source.options import WriteOptions
from seaway.librdkafka_log import client_logging

__all__ = ["BatchWriter", "StreamWriter", "Written", "check_write_schema"]

log = logging.getLogger(__name__)

_PRODUCER_DEFAULTS = {
    "enable.idempotence": "true",
    "acks": "all",
    "partitioner": "murmur2_random",
    "linger.ms": "5",
    "batch.size": str(1 << 20),
    "queue.buffering.max.messages": "1000000",
}


@dataclass
class Written(WriterCommitMessage):
    """A task's commit message: how many records it wrote."""

    records: int


def _type_error(column: str, expected: str, actual: DataType) -> OptionError:
    return OptionError(f"{column} attribute type must be {expected}, got {actual.simpleString()}")


def check_write_schema(schema: StructType, options: WriteOptions) -> None:
    """spark-sql-kafka's checks of the columns (``KafkaWriter.validateQuery``), with its messages."""
    fields = {f.name: f.dataType for f in schema.fields}
    if "value" not in fields:
        raise OptionError("Required attribute 'value' not found: a DataFrame written to Kafka needs a value column "
                          "(string or binary)")
    if options.topic is None:
        if "topic" not in fields:
            raise OptionError("topic option required when no 'topic' attribute is present. Use the topic option for "
                              "setting a topic.")
        if not isinstance(fields["topic"], StringType):
            raise _type_error("Topic", "a string", fields["topic"])
    for column in ("key", "value"):
        if column in fields and not isinstance(fields[column], (StringType, BinaryType)):
            raise _type_error(column, "a string or binary", fields[column])
    if "partition" in fields and not isinstance(fields["partition"], IntegerType):
        raise _type_error("partition", "an int", fields["partition"])
    if "headers" in fields:
        headers = fields["headers"]
        ok = (isinstance(headers, ArrayType) and isinstance(headers.elementType, StructType)
              and [(f.name, type(f.dataType)) for f in headers.elementType.fields]
              == [("key", StringType), ("value", BinaryType)])
        if not ok:
            raise _type_error("headers", "array<struct<key: string, value: binary>>", headers)


class _Writing:
    """One producer per task; rows of Arrow batches sent as they come."""

    def __init__(self, options: WriteOptions, schema: StructType) -> None:
        check_write_schema(schema, options)
        self.options = options
        self.columns = {f.name for f in schema.fields}

    def _producer(self, failures: list[tuple[KafkaError, str]]) -> Producer:
        def delivered(error: KafkaError | None, msg: Any) -> None:
            if error is not None:
                failures.append((error, f"{msg.topic()} partition {msg.partition()}"))

        conf: dict[str, Any] = {**_PRODUCER_DEFAULTS, **self.options.kafka, **client_logging(),
                                "delivery.report.only.error": True, "on_delivery": delivered}
        try:
            return Producer(conf)
        except KafkaException as e:
            raise OptionError(f"The Kafka producer refused the settings (kafka.*): {describe_kafka_error(e)}") from None

    def _write(self, batches: Iterator[pa.RecordBatch]) -> Written:
        failures: list[tuple[KafkaError, str]] = []
        producer = self._producer(failures)
        count = 0
        try:
            for batch in batches:
                count += self._send(producer, batch)
                if failures:
                    break
            while not failures and producer.flush(30) > 0:
                log.info("Waiting for Kafka to acknowledge the task's records")
        except BaseException:
            producer.purge()  # the task fails: do not wait for the queued rest on the way out
            raise
        finally:
            producer.close()
        if failures:
            error, where = failures[0]
            raise SparkSourceError(f"Writing to Kafka failed: {len(failures)} record(s) not acknowledged, the first to "
                                   f"{where}: {describe_kafka_error(error)}", retriable=error.retriable())
        return Written(count)

    def _send(self, producer: Producer, batch: pa.RecordBatch) -> int:
        n = int(batch.num_rows)
        names = self.columns

        def column(name: str) -> list[Any]:
            return batch.column(name).to_pylist() if name in names else [None] * n

        values, keys = column("value"), column("key")
        topics = [self.options.topic] * n if self.options.topic is not None else column("topic")
        partitions, headers = column("partition"), column("headers")
        produce, poll = producer.produce, producer.poll
        for i in range(n):
            topic = topics[i]
            if topic is None:
                raise OptionError("Null topic present in the data. Use the topic option for setting a topic.")
            partition = partitions[i]
            header = headers[i]
            kwargs: dict[str, Any] = {"key": keys[i]}
            if partition is not None:
                kwargs["partition"] = partition
            if header is not None:
                kwargs["headers"] = [(h["key"], h["value"]) for h in header]
            while True:
                try:
                    produce(topic, values[i], **kwargs)
                    break
                except BufferError:  # the local queue is full: let librdkafka send some
                    poll(0.05)
                except KafkaException as e:  # refused at once: an unknown topic or partition, too large...
                    where = topic if partition is None else f"{topic} partition {partition}"
                    raise SparkSourceError(f"Writing to Kafka failed: a record to {where} was refused: "
                                           f"{describe_kafka_error(e)}") from None
            if i % 10_000 == 0:
                poll(0)
        return n


class BatchWriter(_Writing, DataSourceArrowWriter):
    """``df.write.format("seaway")`` (append)."""

    def write(self, iterator: Iterator[pa.RecordBatch]) -> Written:
        return self._write(iterator)

    def commit(self, messages: list[WriterCommitMessage | None]) -> None:
        total = sum(m.records for m in messages if isinstance(m, Written))
        log.info("seaway write committed: %d records", total)

    def abort(self, messages: list[WriterCommitMessage | None]) -> None:
        log.warning("seaway write aborted: records the finished tasks sent stay in Kafka (as with spark-sql-kafka)")


class StreamWriter(_Writing, DataSourceStreamArrowWriter):
    """``df.writeStream.format("seaway")``: each micro-batch's rows, per task."""

    def write(self, iterator: Iterator[pa.RecordBatch]) -> Written:
        return self._write(iterator)

    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        log.info("seaway stream write of batch %d committed: %d records", batchId,
                 sum(m.records for m in messages if isinstance(m, Written)))

    def abort(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        log.warning("seaway stream write of batch %d aborted: records already sent stay in Kafka", batchId)
