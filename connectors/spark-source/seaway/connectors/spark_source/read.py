"""Reading one offset range into Arrow record batches: the executors' hot loop.

Per range, one consumer ``assign()``-ed at the start offset; ``consume()`` hands back up to
:data:`BATCH` messages at a time, and each batch of messages becomes one ``pyarrow.RecordBatch``
that Spark takes as it is (no per-row conversion on either side). Columns are pulled out of the
messages with ``map`` over confluent-kafka's C methods and handed to ``pyarrow.array`` with
their types: ~0.4 µs a record on the 2-core CI host, beside librdkafka's ~0.7 µs.

The range ends at ``end`` whatever the offsets in between hold. Offsets that carry no record
for a reader (transaction markers, aborted records under ``read_committed``, records compacted
away) are never returned by librdkafka, so the loop asks for no more messages than the range
has left and, when fewer come back, reads the consumer's position (which librdkafka moves past
markers too) to know whether the range is done.

Data loss: when the range's next offset is no longer in the partition (retention deleted it,
the topic was recreated), librdkafka reports ``OFFSET_OUT_OF_RANGE`` (``auto.offset.reset`` is
``error``); with ``failOnDataLoss=true`` (Spark's default) that fails the task with
:class:`~.errors.DataLossError`, else the read skips to the earliest offset still there and
logs a warning, as spark-sql-kafka does. No progress for ``kafkaConsumer.pollTimeoutMs`` fails
the task with :class:`~.errors.ReadTimeout` (Spark then retries it).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from operator import itemgetter
from typing import Any, cast

import pyarrow as pa
import pyarrow.compute as pc
from confluent_kafka import Consumer, KafkaError, Message
from confluent_kafka import TopicPartition as KafkaTopicPartition
from seaway.connectors.spark_source.errors import DataLossError, ReadTimeout, SparkSourceError
from seaway.connectors.spark_source.kafka import consumer_config, describe_kafka_error
from seaway.connectors.spark_source.options import ReadOptions
from seaway.connectors.spark_source.ranges import OffsetRange
from seaway.connectors.spark_source.values import ValueDecoder
from seaway.librdkafka_log import client_logging

__all__ = ["BATCH", "DATA_LOSS_HINT", "read_range"]

log = logging.getLogger(__name__)

BATCH = 10_000
"""Messages per ``consume()`` call and per Arrow batch (~1-2 MB for 100-byte records)."""
POLL_S = 0.1
"""How long one ``consume()`` waits for a full batch before handing back what it has."""
DATA_LOSS_HINT = ("Some data may have been lost because they are not available in Kafka any more; either the data "
                  "was aged out by Kafka or the topic may have been deleted before all the data in the topic was "
                  "processed. If you don't want your streaming query to fail on such cases, set the source option "
                  "'failOnDataLoss' to 'false'.")

_time_of, _type_of = itemgetter(1), itemgetter(0)
_OUT_OF_RANGE = {KafkaError._AUTO_OFFSET_RESET, KafkaError.OFFSET_OUT_OF_RANGE}


def _offset(msg: Message) -> int:
    offset = msg.offset()
    assert offset is not None, "a record without an offset"
    return offset


def _log_client_error(error: KafkaError) -> None:
    """librdkafka's client-level errors (a broker down...): it retries them itself; the progress
    deadline decides when to give up."""
    log.warning("Kafka client error while reading: %s", describe_kafka_error(error))


class _Columns:
    """Builds Arrow batches of the schema Spark expects from lists of messages."""

    def __init__(self, schema: pa.Schema, topic: str, partition: int, include_headers: bool,
                 decoder: ValueDecoder | None) -> None:
        self.schema = schema
        self.topic, self.partition = topic, partition
        self.include_headers = include_headers
        self.headers_type = schema.field("headers").type if include_headers else None
        self.decoder = decoder

    def batch(self, msgs: list[Message]) -> pa.RecordBatch:
        n = len(msgs)
        stamps = list(map(Message.timestamp, msgs))
        offsets = cast(list[int], list(map(Message.offset, msgs)))  # records always have one
        values = pa.array(list(map(Message.value, msgs)), pa.binary())
        millis = pa.array(list(map(_time_of, stamps)), pa.int64())
        arrays: list[Any] = [
            pa.array(list(map(Message.key, msgs)), pa.binary()),
            values,
            pa.repeat(self.topic, n).cast(pa.string()),
            pa.repeat(pa.scalar(self.partition, pa.int32()), n),
            pa.array(offsets, pa.int64()),
            pc.multiply(millis, 1000).cast(pa.timestamp("us", tz="UTC")),
            # confluent-kafka: 0 none, 1 CreateTime, 2 LogAppendTime; Kafka (and Spark): -1, 0, 1
            pc.subtract(pa.array(list(map(_type_of, stamps)), pa.int32()), pa.scalar(1, pa.int32())),
        ]
        if self.include_headers:
            arrays.append(pa.array(list(map(Message.headers, msgs)), self.headers_type))
        if self.decoder is not None:
            arrays.extend(self.decoder(values, self.topic, self.partition, offsets))
        return pa.RecordBatch.from_arrays(arrays, schema=self.schema)


def read_range(options: ReadOptions, schema: pa.Schema, rng: OffsetRange,
               decoder: ValueDecoder | None = None) -> Iterator[pa.RecordBatch]:
    """The records of ``[rng.start, rng.end)`` as Arrow batches of ``schema``."""
    if rng.start >= rng.end:
        return
    conf: dict[str, Any] = {**consumer_config(options), **client_logging(), "error_cb": _log_client_error}
    consumer = Consumer(conf)
    tp = KafkaTopicPartition(rng.topic, rng.partition, rng.start)
    columns = _Columns(schema, rng.topic, rng.partition, options.include_headers, decoder)
    try:
        consumer.assign([tp])
        pos, end = rng.start, rng.end
        progress = time.monotonic()
        timeout_s = options.poll_timeout_ms / 1000
        while pos < end:
            want = min(BATCH, end - pos)
            msgs = consumer.consume(want, POLL_S)
            if msgs and any(map(Message.error, msgs)):
                pos = _handle_errors(consumer, options, rng, pos, msgs)
                progress = time.monotonic()
                continue
            if msgs:
                if _offset(msgs[-1]) >= end:
                    msgs = [m for m in msgs if _offset(m) < end]
                if msgs:
                    yield columns.batch(msgs)
                    pos = _offset(msgs[-1]) + 1
                    progress = time.monotonic()
            if len(msgs) < want and pos < end:
                # fewer than asked: markers, aborted or compacted offsets, or data still coming
                position = consumer.position([KafkaTopicPartition(rng.topic, rng.partition)])[0].offset
                if position > pos:
                    pos = position
                    progress = time.monotonic()
                elif time.monotonic() - progress > timeout_s:
                    raise ReadTimeout(f"Failed to get records for {rng.topic}-{rng.partition} at offset {pos} "
                                      f"(reading up to {end}) after polling for {options.poll_timeout_ms} ms "
                                      "(kafkaConsumer.pollTimeoutMs)")
    finally:
        consumer.close()


def _handle_errors(consumer: Consumer, options: ReadOptions, rng: OffsetRange, pos: int, msgs: list[Message]) -> int:
    """The position to go on from after a batch with errors (records before the first error are
    re-fetched: the consumer is re-assigned)."""
    error = next(e for e in map(Message.error, msgs) if e is not None)
    where = f"{rng.topic}-{rng.partition}"
    if error.code() not in _OUT_OF_RANGE:
        raise SparkSourceError(f"Reading {where} at offset {pos} failed: {describe_kafka_error(error)}",
                               retriable=error.retriable())
    low, high = consumer.get_watermark_offsets(KafkaTopicPartition(rng.topic, rng.partition), timeout=30,
                                               cached=False)
    message = (f"Cannot fetch offset {pos} of {where}: the partition now holds offsets [{low}, {high}) "
               f"({describe_kafka_error(error)}); the query needed [{pos}, {rng.end})")
    if options.fail_on_data_loss:
        raise DataLossError(f"{message}. {DATA_LOSS_HINT}")
    # before the log start: go on from it; past the end (topic recreated, truncated): the rest is gone
    pos = low if pos < low else (rng.end if pos >= high else pos)
    log.warning("%s. Going on from offset %d; the records in between are lost (failOnDataLoss=false)", message,
                min(pos, rng.end))
    if pos < rng.end:
        consumer.assign([KafkaTopicPartition(rng.topic, rng.partition, pos)])
    return pos
