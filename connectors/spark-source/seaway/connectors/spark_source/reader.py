"""Batch and streaming readers: planning on the driver, :func:`~.read.read_range` on the executors.

**Batch** (``spark.read``): :meth:`BatchReader.partitions` resolves the starting and ending
offset options to concrete offsets once, at planning, and returns one :class:`~.ranges.OffsetRange`
per partition (more with ``minPartitions`` / ``maxRecordsPerPartition``).

**Streaming** (``spark.readStream``, micro-batches): Spark keeps the offsets. Each offset is
spark-sql-kafka's JSON, ``{"topic":{"0":42}}`` = the next offset to read of each partition,
written to ``<checkpoint>/offsets/<batch>`` before a batch runs; a query restarted from its
checkpoint replays an unfinished batch with exactly the logged offsets, so with a sink that
writes a batch id once (the file sink, ``foreachBatch`` with the id, Delta, Iceberg) every record
lands exactly once. Per trigger:

* :meth:`StreamReader.initialOffset`: ``startingOffsets`` (default latest) / timestamps resolved
  for the partitions of the moment (only for a query without a checkpoint);
* :meth:`StreamReader.latestOffset`: the latest offsets of every partition the strategy reads
  now (new partitions and, with ``subscribePattern``, new topics appear here), capped by
  ``maxOffsetsPerTrigger`` (Spark hands it back as ``ReadMaxRows``), held back while fewer than
  ``minOffsetsPerTrigger`` wait (up to ``maxTriggerDelay``), and frozen at the first call's
  latest under ``Trigger.AvailableNow``;
* :meth:`StreamReader.partitions`: ranges from the start to the end offsets; a partition new
  since the start is read from its earliest offset; lost data (a deleted partition, a new one
  that no longer starts at 0, offsets that went backwards) is reported per ``failOnDataLoss``.

A caveat Spark's Python sources share: Spark does not log a source's initial offset (the JVM
Kafka source writes it to ``<checkpoint>/sources``), so a query stopped before its first batch
committed asks :meth:`StreamReader.initialOffset` again on restart; with ``startingOffsets=latest``
that may be later than the first attempt's. Earliest, JSON offsets and timestamps resolve the
same both times.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSourceReader, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxRows,
    ReadMinRows,
    SupportsTriggerAvailableNow,
)
from pyspark.sql.types import StructType
from seaway.connectors.spark_source.errors import DataLossError, SparkSourceError
from seaway.connectors.spark_source.kafka import TopicView
from seaway.connectors.spark_source.options import ReadOptions, TopicPartition
from seaway.connectors.spark_source.ranges import (
    OffsetRange,
    from_json_offsets,
    rate_limit,
    resolve,
    split_ranges,
    to_json_offsets,
)
from seaway.connectors.spark_source.read import DATA_LOSS_HINT, read_range
from seaway.connectors.spark_source.schema import arrow_schema
from seaway.connectors.spark_source.values import ValueDecoder, value_decoder

__all__ = ["BatchReader", "StreamReader"]

log = logging.getLogger(__name__)
Offsets = dict[TopicPartition, int]


class _Reading:
    """What both readers carry to the executors (picklable): options, Arrow schema, value decoder."""

    def __init__(self, options: ReadOptions, schema: StructType) -> None:
        self.options = options
        self.decoder: ValueDecoder | None = value_decoder(options, schema)
        self.arrow = arrow_schema(schema)

    def _read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        if not isinstance(partition, OffsetRange):  # Spark's placeholder for a plan without partitions
            return iter(())
        return read_range(self.options, self.arrow, partition, self.decoder)


class BatchReader(_Reading, DataSourceReader):
    """``spark.read.format("seaway")``: the offsets are fixed when the query is planned."""

    def partitions(self) -> list[InputPartition]:
        opts = self.options
        with TopicView(opts) as view:
            tps = view.topic_partitions()
            start = resolve(view, opts.starting, tps, starting=True, no_match_latest=opts.no_match_latest,
                            option="startingOffsets")
            end = resolve(view, opts.ending, tps, starting=False, option="endingOffsets")
        ranges = []
        for tp in tps:
            if start[tp] > end[tp]:
                raise SparkSourceError(
                    f"The starting offset {start[tp]} of {tp[0]}-{tp[1]} is after its ending offset {end[tp]}: check "
                    "startingOffsets/endingOffsets (or their timestamp forms)")
            ranges.append(OffsetRange(tp[0], tp[1], start[tp], end[tp]))
        planned: list[InputPartition] = list(split_ranges(ranges, opts.min_partitions, opts.max_records_per_partition))
        log.info("seaway batch read of %d partitions in %d tasks, %d records at most", len(tps), len(planned),
                 sum(r.size for r in ranges))
        return planned

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        return self._read(partition)


class StreamReader(_Reading, DataSourceStreamReader, SupportsTriggerAvailableNow):
    """``spark.readStream.format("seaway")``: micro-batches between offsets Spark logs in its checkpoint."""

    def __init__(self, options: ReadOptions, schema: StructType) -> None:
        super().__init__(options, schema)
        self._view: TopicView | None = None  # the driver's consumer, opened on first use
        self._available_now: Offsets | None = None
        self._available_now_wanted = False
        self._last_trigger = time.monotonic()
        self._latest: Offsets = {}

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_view": None}

    @property
    def view(self) -> TopicView:
        if self._view is None:
            self._view = TopicView(self.options)
        return self._view

    def _report_data_loss(self, message: str) -> None:
        if self.options.fail_on_data_loss:
            raise DataLossError(f"{message}. {DATA_LOSS_HINT}")
        log.warning("%s. Some data may have been lost (failOnDataLoss=false)", message)

    def initialOffset(self) -> dict[str, Any]:
        opts = self.options
        tps = self.view.topic_partitions()
        start = resolve(self.view, opts.starting, tps, starting=True, no_match_latest=opts.no_match_latest,
                        option="startingOffsets")
        log.info("seaway stream starts at %s", start)
        return to_json_offsets(start)

    def getDefaultReadLimit(self) -> ReadLimit:
        if self.options.max_offsets_per_trigger is not None:
            return ReadMaxRows(self.options.max_offsets_per_trigger)
        if self.options.min_offsets_per_trigger is not None:
            return ReadMinRows(self.options.min_offsets_per_trigger)
        return ReadAllAvailable()

    def prepareForTriggerAvailableNow(self) -> None:
        self._available_now_wanted = True

    def _current_latest(self) -> Offsets:
        if self._available_now is not None:
            return dict(self._available_now)
        latest = self.view.latest(self.view.topic_partitions())
        if self._available_now_wanted:
            self._available_now = dict(latest)
        return latest

    def latestOffset(self, start: dict[str, Any], limit: ReadLimit) -> dict[str, Any]:
        begin = from_json_offsets(start)
        latest = self._current_latest()
        self._latest = latest
        if isinstance(limit, ReadAllAvailable):
            return to_json_offsets(latest)
        new = [tp for tp in latest if tp not in begin]
        known = {**begin, **self.view.earliest(new)} if new else begin
        waiting = sum(max(0, end - known[tp]) for tp, end in latest.items() if tp in known)
        minimum = self.options.min_offsets_per_trigger
        if isinstance(limit, ReadMinRows):
            minimum = limit.min_rows
        waited_ms = (time.monotonic() - self._last_trigger) * 1000
        if minimum is not None and waiting < minimum and waited_ms < self.options.max_trigger_delay_ms:
            return start  # not enough yet: no batch this trigger
        self._last_trigger = time.monotonic()
        if isinstance(limit, ReadMaxRows):
            return to_json_offsets(rate_limit(limit.max_rows, known, latest))
        return to_json_offsets(latest)

    def reportLatestOffset(self) -> dict[str, Any] | None:
        return to_json_offsets(self._latest) if self._latest else None

    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> list[InputPartition]:
        begin, until = from_json_offsets(start), from_json_offsets(end)
        new = [tp for tp in until if tp not in begin]
        first = self.view.earliest(new) if new else {}
        for tp, offset in sorted(first.items()):
            if offset != 0:
                self._report_data_loss(f"Added partition {tp[0]}-{tp[1]} starts from {offset} instead of 0")
        gone = sorted(set(begin) - set(until))
        if gone:
            self._report_data_loss(f"{', '.join(f'{t}-{p}' for t, p in gone)} are gone")
        ranges = []
        for tp, stop in sorted(until.items()):
            begin_at = begin.get(tp, first.get(tp))
            if begin_at is None:
                continue
            if stop < begin_at:
                self._report_data_loss(f"Partition {tp[0]}-{tp[1]}'s offset was changed from {begin_at} to {stop}")
                continue
            ranges.append(OffsetRange(tp[0], tp[1], begin_at, stop))
        return list(split_ranges(ranges, self.options.min_partitions, self.options.max_records_per_partition))

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        return self._read(partition)

    def commit(self, end: dict[str, Any]) -> None:
        """Nothing to do: the offsets live in Spark's checkpoint, never in a consumer group."""

    def stop(self) -> None:
        if self._view is not None:
            self._view.close()
            self._view = None
