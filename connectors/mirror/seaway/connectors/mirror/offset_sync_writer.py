"""Writes offset syncs (upstream offset -> downstream offset pairs), on Kafka's ``OffsetSyncWriter`` rules.

The checkpoint connector translates a consumer group's source offset through the latest sync
at or before it; a group that resumes on the target rereads at most the records between that
sync and its position. So a partition gets a sync as soon as

* it has none yet in this task's lifetime,
* the downstream offset moved ``offset.lag.max`` or more past the last sync (the bound on
  rereading),
* an upstream offset was skipped (compaction, transaction markers), or
* the downstream offset went backwards (the remote topic was truncated or recreated);

otherwise the newest pair waits ("delayed") until the next offset commit, so a quiet
partition's tail is synced too.

One difference from Kafka: Kafka keeps at most 10 syncs in flight and, beyond that, only the
newest due sync per partition, so after a burst (a backlog being caught up) syncs can be
``offset.lag.max`` times further apart than configured, and a failover rereads that much more.
Here due syncs queue per partition (up to :data:`MAX_QUEUED_PER_PARTITION`; beyond that the
oldest go, as Kafka's would) and up to :data:`MAX_OUTSTANDING_OFFSET_SYNCS` are in flight from
an idempotent producer, which keeps them in order: a partition's syncs are never more than
``offset.lag.max`` apart while the queue holds.

Hot path: :meth:`record` runs once per acknowledged record and only does integer compares
and a dict store; sync records are built when they are sent.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from typing import Any

from confluent_kafka import Producer
from seaway.connectors.mirror.formats import OffsetSync
from seaway.kafka_clients import close_producer

__all__ = ["MAX_OUTSTANDING_OFFSET_SYNCS", "MAX_QUEUED_PER_PARTITION", "OffsetSyncWriter", "PartitionState"]

log = logging.getLogger(__name__)

MAX_OUTSTANDING_OFFSET_SYNCS = 1000
MAX_QUEUED_PER_PARTITION = 10_000

TopicPartition = tuple[str, int]


class PartitionState:
    """What one source partition's last records and sync were (Kafka's ``OffsetSyncWriter.PartitionState``)."""

    __slots__ = ("last_sync_downstream", "max_offset_lag", "previous_downstream", "previous_upstream", "should_sync")

    def __init__(self, max_offset_lag: int) -> None:
        self.previous_upstream = -1
        self.previous_downstream = -1
        self.last_sync_downstream = -1
        self.max_offset_lag = max_offset_lag
        self.should_sync = False

    def update(self, upstream: int, downstream: int) -> bool:
        """Record one acknowledged record; True if a sync should be sent now."""
        last = self.last_sync_downstream
        if (last == -1 or downstream - (last + 1) >= self.max_offset_lag
                or upstream - self.previous_upstream != 1 or downstream < self.previous_downstream):
            self.last_sync_downstream = downstream
            self.should_sync = True
        self.previous_upstream = upstream
        self.previous_downstream = downstream
        return self.should_sync


class OffsetSyncWriter:
    """Queues and sends offset syncs to partition 0 of the offset-syncs topic with its own producer."""

    def __init__(self, producer_config: dict[str, Any], topic: str, max_offset_lag: int) -> None:
        self.topic = topic
        self.max_offset_lag = max_offset_lag
        self._producer = Producer({"linger.ms": "5", **producer_config, "enable.idempotence": "true"})
        self._states: dict[TopicPartition, PartitionState] = {}
        self._delayed: dict[TopicPartition, tuple[int, int]] = {}
        self._pending: dict[TopicPartition, deque[tuple[int, int]]] = {}
        self._outstanding = 0
        self._lock = threading.Lock()
        self.sent = 0

    def record(self, tp: TopicPartition, upstream: int, downstream: int) -> None:
        """One record of ``tp`` at ``upstream`` was written at ``downstream`` on the target."""
        state = self._states.get(tp)
        if state is None:
            state = self._states[tp] = PartitionState(self.max_offset_lag)
        with self._lock:
            if state.update(upstream, downstream):
                self._delayed.pop(tp, None)
                self._queue(tp, (upstream, downstream))
                state.should_sync = False
            else:
                self._delayed[tp] = (upstream, downstream)

    def record_batch(self, tp: TopicPartition, upstream: list[int], downstream: list[int]) -> None:
        """:meth:`record` for a batch's records in order, in O(syncs) when both offset runs are consecutive.

        Inside a run of consecutive offsets only the ``offset.lag.max`` rule can fire, every
        ``offset.lag.max + 1`` records, so the due syncs are computed, not found record by record
        (the result is exactly :meth:`record`'s; the unit tests compare both).
        """
        n = len(upstream)
        if n == 0:
            return
        first_up, first_down = upstream[0], downstream[0]
        if n < 3 or first_down < 0 or upstream != list(range(first_up, first_up + n)) or downstream != list(
                range(first_down, first_down + n)):
            for up, down in zip(upstream, downstream, strict=True):
                if down >= 0:
                    self.record(tp, up, down)
            return
        self.record(tp, first_up, first_down)
        state = self._states[tp]
        step = self.max_offset_lag + 1
        with self._lock:
            i = max(1, state.last_sync_downstream + step - first_down)
            last_synced = -1
            while i < n:
                self._queue(tp, (first_up + i, first_down + i))
                state.last_sync_downstream = first_down + i
                last_synced = i
                i += step
            state.previous_upstream, state.previous_downstream = upstream[-1], downstream[-1]
            if last_synced == n - 1:
                self._delayed.pop(tp, None)
            else:
                self._delayed[tp] = (upstream[-1], downstream[-1])

    def _queue(self, tp: TopicPartition, pair: tuple[int, int]) -> None:
        queue = self._pending.get(tp)
        if queue is None:
            queue = self._pending[tp] = deque()
        elif len(queue) >= MAX_QUEUED_PER_PARTITION:
            queue.popleft()
        queue.append(pair)

    def promote_delayed(self) -> None:
        """At an offset commit: every partition's newest pair becomes due."""
        with self._lock:
            for tp, pair in self._delayed.items():
                self._queue(tp, pair)
            self._delayed.clear()

    def fire_pending(self) -> None:
        """Send due syncs while fewer than the limit are in flight; serve delivery reports."""
        self._producer.poll(0)
        while True:
            with self._lock:
                if not self._pending or self._outstanding >= MAX_OUTSTANDING_OFFSET_SYNCS:
                    return
                tp, queue = next(iter(self._pending.items()))
                upstream, downstream = queue.popleft()
                if not queue:
                    del self._pending[tp]
                self._outstanding += 1
            sync = OffsetSync(tp[0], tp[1], upstream, downstream)
            try:
                self._producer.produce(self.topic, sync.record_value(), sync.record_key(), 0, self._delivered)
            except BufferError:
                with self._lock:
                    self._outstanding -= 1
                    self._pending.setdefault(tp, deque()).appendleft((upstream, downstream))
                return

    def _delivered(self, err: Any, msg: Any) -> None:
        with self._lock:
            self._outstanding -= 1
        if err is not None:
            log.error("Failure sending offset sync to %s: %s", self.topic, err)
        else:
            self.sent += 1

    def close(self, timeout: float = 5.0) -> None:
        """Send what is due and wait up to ``timeout`` for it (Kafka closes its producer the same way)."""
        self.fire_pending()
        remaining = close_producer(self._producer, timeout)
        if remaining:
            log.warning("%d offset syncs to %s were not acknowledged before close", remaining, self.topic)
