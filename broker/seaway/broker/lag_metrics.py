"""Consumer lag of the broker's own groups at ``/metrics``, with a Burrow-style status.

Offsets, lag and status come from :mod:`seaway.lag` (one definition shared with
``seaway groups``); this module only feeds it from the group coordinator and the logs, at
scrape time, on the metrics server's thread:

* each group's committed offset per partition, with the commit's own timestamp, goes into the
  partition's window (:meth:`seaway.lag.LagTracker.add_commit`); feeding the same commit again
  at the next scrape changes nothing, so a stopped group's window stops moving and Burrow's
  rule 3 turns it STOPPED once the silence outlasts the window's span, while a group that keeps
  committing the same offset fills its window with that offset and turns STALLED;
* the partition's log end offset (the high watermark on one node) is the lag's reference;
* the time lag reads the 61-byte header of the batch holding the committed offset (one
  ``pread``, cached per (topic, partition, offset) in a bounded LRU): the batch's first
  timestamp stands for the record's, so the figure can be early by at most the producer's
  ``linger.ms`` (records of a batch are written within it).

Windows fill at the scrape rate: commits between two scrapes collapse into the last one, as
Burrow's own ``min-distance`` merges frequent commits. Families follow kafka_exporter's
names (``kafka_consumergroup_lag``), the de-facto Prometheus names for Kafka lag.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterator
from typing import TYPE_CHECKING

from prometheus_client.core import GaugeMetricFamily, Metric
from seaway.broker.context import now_ms
from seaway.lag import LagStatus, LagTracker, TimestampCache, group_status, offset_lag, time_lag_ms
from seaway.protocol.record_batch import ATTR_TIMESTAMP_TYPE, BATCH_HEADER_SIZE, MAGIC_V2

if TYPE_CHECKING:
    from seaway.broker.context import BrokerContext
    from seaway.broker.log.partition_log import PartitionLog

__all__ = ["BrokerLag"]

_MAGIC_AT = 16
_TIMES = struct.Struct(">hiqq")  # attributes, lastOffsetDelta, baseTimestamp, maxTimestamp
_TIMES_AT = 21


class BrokerLag:
    """Lag gauges for every group with committed offsets on this broker."""

    def __init__(self, context: BrokerContext, *, intervals: int, min_distance_ms: int) -> None:
        self._context = context
        self.tracker = LagTracker(intervals=intervals, min_distance_ms=min_distance_ms)
        self._timestamps = TimestampCache(10_000)

    def _timestamp(self, topic: str, partition: int, plog: PartitionLog, offset: int) -> int | None:
        """The first timestamp of the batch holding ``offset`` (cached; None if it is gone)."""
        cached = self._timestamps.get(topic, partition, offset)
        if cached is not None:
            return cached
        try:
            region = plog.read(offset, 1)
            if region is None or len(region) < BATCH_HEADER_SIZE:
                return None
            head = os.pread(region.fileno(), BATCH_HEADER_SIZE, region.position)
        except Exception:  # deleted by retention meanwhile, a closed log: no time lag this scrape
            return None
        if len(head) < BATCH_HEADER_SIZE or head[_MAGIC_AT] != MAGIC_V2:
            return None
        attributes, _, base_timestamp, max_timestamp = _TIMES.unpack_from(head, _TIMES_AT)
        timestamp = int(max_timestamp if attributes & ATTR_TIMESTAMP_TYPE else base_timestamp)
        self._timestamps.put(topic, partition, offset, timestamp)
        return timestamp

    def collect(self) -> Iterator[Metric]:
        coordinator = self._context.components.group_coordinator
        if coordinator is None:
            return
        labels = ["consumergroup", "topic", "partition"]
        current = GaugeMetricFamily("kafka_consumergroup_current_offset",
                                    "The group's committed offset.", labels=labels)
        lag = GaugeMetricFamily("kafka_consumergroup_lag", "Log end offset minus the committed offset.",
                                labels=labels)
        lag_ms = GaugeMetricFamily("kafka_consumergroup_lag_ms",
                                   "How long ago the next record the group will read was written (0 caught up).",
                                   labels=labels)
        status = GaugeMetricFamily("kafka_consumergroup_partition_status",
                                   "Burrow status of the partition (value: OK 1, WARNING 2, STOPPED 4, STALLED 5, "
                                   "REWIND 6).", labels=[*labels, "status"])
        group_gauge = GaugeMetricFamily("kafka_consumergroup_status",
                                        "Burrow status of the group (value: OK 1, WARNING 2, ERROR 3).",
                                        labels=["consumergroup", "status"])
        lag_sum = GaugeMetricFamily("kafka_consumergroup_lag_sum", "The group's lag over all its partitions.",
                                    labels=["consumergroup"])
        logs = self._context.logs
        now = now_ms()
        live: set[str] = set()
        for group_id, group in sorted(coordinator.groups.items()):
            offsets = list(group.offsets.items())
            if not offsets:
                continue
            live.add(group_id)
            total = 0
            lags: dict[tuple[str, int], int | None] = {}
            for (topic, partition), committed in sorted(offsets):
                plog = logs.get_log(topic, partition)
                if plog is None:
                    continue
                end = plog.log_end_offset
                partition_lag = offset_lag(committed.offset, end)
                lags[(topic, partition)] = partition_lag
                self.tracker.add_commit(group_id, topic, partition, committed.offset, committed.commit_timestamp,
                                        end_offset=end)
                ids = [group_id, topic, str(partition)]
                current.add_metric(ids, committed.offset)
                if partition_lag is None:
                    continue
                total += partition_lag
                lag.add_metric(ids, partition_lag)
                record_ts = self._timestamp(topic, partition, plog, committed.offset) if partition_lag > 0 else None
                behind = time_lag_ms(now, partition_lag, record_ts)
                if behind is not None:
                    lag_ms.add_metric(ids, behind)
            evaluations = self.tracker.evaluate(group_id, now)
            statuses: list[LagStatus] = []
            for (topic, partition), evaluation in sorted(evaluations.items()):
                if (topic, partition) not in lags:
                    continue
                statuses.append(evaluation.status)
                status.add_metric([group_id, topic, str(partition), evaluation.status.value],
                                  evaluation.status.severity)
            overall = group_status(statuses)
            group_gauge.add_metric([group_id, overall.value], overall.severity)
            lag_sum.add_metric([group_id], total)
        for gone in set(self.tracker.groups()) - live:
            self.tracker.forget_group(gone)
        yield from (current, lag, lag_ms, status, group_gauge, lag_sum)
