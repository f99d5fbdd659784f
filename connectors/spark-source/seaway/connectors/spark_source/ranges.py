"""Offset ranges: resolving the offset options, splitting ranges across Spark tasks, rate limits.

A range is ``[start, end)`` of one topic-partition, read by one Spark task
(:class:`OffsetRange`, an ``InputPartition``). The arithmetic follows spark-sql-kafka's so
that the same options plan the same work:

* :func:`split_ranges` is ``KafkaOffsetRangeCalculator.getRanges``: with ``minPartitions``
  above the number of non-empty ranges, a range gets ``round(size / total * minPartitions)``
  parts (at least one; ranges that get one part are taken out of the proportion first), so a
  single big partition is read by both cores. ``maxRecordsPerPartition`` then cuts any part
  that is still longer.
* :func:`rate_limit` is ``KafkaMicroBatchStream.rateLimit``: ``maxOffsetsPerTrigger`` shared
  across partitions in proportion to what each has waiting, never starving a small one.

Offsets in Spark's checkpoint are JSON (``{"topic":{"0":42}}``), the format spark-sql-kafka
writes: :func:`to_json_offsets` / :func:`from_json_offsets`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

from pyspark.sql.datasource import InputPartition
from seaway.connectors.spark_source.errors import OptionError, SparkSourceError
from seaway.connectors.spark_source.kafka import TopicView
from seaway.connectors.spark_source.options import (
    EARLIEST,
    LATEST,
    GlobalTimestamp,
    OffsetLimit,
    PartitionOffsets,
    PartitionTimestamps,
    TopicPartition,
)

__all__ = ["OffsetRange", "from_json_offsets", "rate_limit", "resolve", "split_ranges", "to_json_offsets"]

Offsets = dict[TopicPartition, int]


class OffsetRange(InputPartition):
    """``[start, end)`` of ``topic``-``partition``: the unit a Spark task reads (picklable)."""

    def __init__(self, topic: str, partition: int, start: int, end: int) -> None:
        super().__init__((topic, partition, start, end))
        self.topic = topic
        self.partition = partition
        self.start = start
        self.end = end

    @property
    def size(self) -> int:
        return self.end - self.start

    def __repr__(self) -> str:
        return f"OffsetRange({self.topic}-{self.partition} [{self.start}, {self.end}))"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, OffsetRange) and self.value == other.value

    def __hash__(self) -> int:
        return hash(self.value)


def _missing(wanted: Iterable[TopicPartition], present: Iterable[TopicPartition]) -> str:
    return ", ".join(f"{t}-{p}" for t, p in sorted(set(wanted) - set(present)))


def resolve(view: TopicView, limit: OffsetLimit, tps: list[TopicPartition], *, starting: bool,
            no_match_latest: bool = False, option: str = "startingOffsets") -> Offsets:
    """Concrete offsets of ``tps`` for an offset option (Spark's ``fetchPartitionOffsets`` + resolution).

    Specific offsets must name exactly the partitions the strategy reads (as spark-sql-kafka
    asserts); a timestamp with no record at or after it is an error for a start (unless
    ``startingOffsetsByTimestampStrategy=latest``) and the latest offset for an end.
    """
    if isinstance(limit, int):
        assert limit in (EARLIEST, LATEST)
        return view.list_offsets(dict.fromkeys(tps, limit))
    if isinstance(limit, PartitionOffsets):
        if set(limit.offsets) != set(tps):
            raise OptionError(
                f"Option '{option}' must name every partition the query reads (use -2 for earliest, -1 for "
                f"latest): missing {_missing(tps, limit.offsets) or 'none'}; not read "
                f"{_missing(limit.offsets, tps) or 'none'}")
        specials = {tp: off for tp, off in limit.offsets.items() if off < 0}
        resolved = view.list_offsets(specials)
        return {tp: resolved.get(tp, off) for tp, off in limit.offsets.items()}
    if isinstance(limit, PartitionTimestamps):
        if set(limit.timestamps) != set(tps):
            raise OptionError(
                f"Option '{option}' must name every partition the query reads: missing "
                f"{_missing(tps, limit.timestamps) or 'none'}; not read {_missing(limit.timestamps, tps) or 'none'}")
        timestamps = dict(limit.timestamps)
    else:
        assert isinstance(limit, GlobalTimestamp)
        timestamps = dict.fromkeys(tps, limit.timestamp)
    found = view.list_offsets(timestamps)
    unmatched = [tp for tp, off in found.items() if off < 0]
    if unmatched and starting and not no_match_latest:
        tp = unmatched[0]
        raise SparkSourceError(f"No offset matched from request of topic-partition {tp[0]}-{tp[1]} and timestamp "
                               f"{timestamps[tp]} ({option}); set startingOffsetsByTimestampStrategy=latest to start "
                               "such partitions at their latest offset")
    if unmatched:
        found.update(view.latest(unmatched))
    return found


def _part_count(size: int, total: int, parts: int) -> int:
    # Scala's math.round: half up
    return max(math.floor(size / total * parts + 0.5), 1)


def split_ranges(ranges: list[OffsetRange], min_partitions: int | None,
                 max_records_per_partition: int | None = None) -> list[OffsetRange]:
    """Empty ranges dropped; big ranges split for ``minPartitions``, then to ``maxRecordsPerPartition``."""
    ranges = [r for r in ranges if r.size > 0]
    if min_partitions is not None and len(ranges) < min_partitions:
        total = sum(r.size for r in ranges)
        unsplit = {(r.topic, r.partition) for r in ranges if _part_count(r.size, total, min_partitions) == 1}
        split_total = total - sum(r.size for r in ranges if (r.topic, r.partition) in unsplit)
        split_min = max(min_partitions - len(unsplit), 1)
        out: list[OffsetRange] = []
        for r in ranges:
            parts = 1 if (r.topic, r.partition) in unsplit else _part_count(r.size, split_total, split_min)
            out.extend(_cut(r, parts))
        ranges = out
    if max_records_per_partition is not None:
        ranges = [piece for r in ranges for piece in _cut(r, -(-r.size // max_records_per_partition))]
    return [r for r in ranges if r.size > 0]


def _cut(r: OffsetRange, parts: int) -> list[OffsetRange]:
    """``parts`` consecutive pieces of nearly equal size (the last absorbs the rounding)."""
    out = []
    remaining, start = r.size, r.start
    for part in range(parts):
        this = remaining // (parts - part)
        remaining -= this
        end = min(start + this, r.end)
        out.append(OffsetRange(r.topic, r.partition, start, end))
        start = end
    return out


def rate_limit(limit: int, start: Offsets, latest: Offsets) -> Offsets:
    """End offsets that admit at most about ``limit`` records past ``start``, shared by waiting size."""
    sizes = {tp: end - start[tp] for tp, end in latest.items() if tp in start and end - start[tp] > 0}
    total = sum(sizes.values())
    if total < 1:
        return dict(latest)
    out = {}
    for tp, end in latest.items():
        if tp not in sizes:
            out[tp] = end
            continue
        share = limit * (sizes[tp] / total)
        take = math.ceil(share) if share < 1 else math.floor(share)
        out[tp] = min(end, start[tp] + take)
    return out


def to_json_offsets(offsets: Mapping[TopicPartition, int]) -> dict[str, dict[str, int]]:
    """``{(t, p): o}`` -> ``{"t": {"p": o}}`` (JSON object keys are strings), sorted for stable output."""
    out: dict[str, dict[str, int]] = {}
    for (topic, partition), offset in sorted(offsets.items()):
        out.setdefault(topic, {})[str(partition)] = int(offset)
    return out


def from_json_offsets(value: Mapping[str, Mapping[str, int]]) -> Offsets:
    try:
        return {(topic, int(p)): int(o) for topic, parts in value.items() for p, o in parts.items()}
    except (AttributeError, TypeError, ValueError) as e:
        raise SparkSourceError(f"Not a seaway/Kafka source offset (expected {{\"topic\":{{\"0\":42}}}}): "
                               f"{value}") from e
