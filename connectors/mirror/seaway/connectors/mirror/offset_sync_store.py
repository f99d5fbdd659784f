"""Offset translation through the offset syncs (Kafka's ``OffsetSyncStore``).

Per source partition it keeps 64 syncs whose upstream offsets are spaced roughly
exponentially back from the latest one (Kafka's invariants, where ``syncs[0]`` is the latest):

* B: for i < j, ``syncs[i].upstream <= syncs[j].upstream + 2**j - 2**i``  (old enough slots are replaced)
* C: for i < j, ``syncs[i].upstream >= syncs[j].upstream + 2**max(i - 2, 0)``  (kept values stay distinct)

so a consumer group far behind the head is still translated, and memory is bounded (64 syncs
per partition whatever the topic's length). A group at upstream offset ``g`` translates
through the latest sync ``s`` with ``s.upstream <= g`` to ``s.downstream`` (``g`` equal) or
``s.downstream + 1`` (``g`` past it): never past a record the group has not read, so nothing
is lost, and it rereads at most the records written between ``s`` and ``g``. A group older than
the oldest kept sync gets -1 (no checkpoint).

Nothing is translated until the topic was read to its end once; while reading that far, only
each partition's last sync is kept when ``must_read_to_end`` (the checkpoints could not be
loaded), so no translation goes backwards from one a previous task emitted.

One addition to Kafka's store: the latest :data:`EXACT_SYNCS_PER_PARTITION` syncs of each
partition are also kept exactly (two ``array('q')``, 16 bytes a sync). Kafka's 64 slots lose
precision with distance from the head: a group that stopped halfway through a backlog the
mirror has since caught up on translates to a sync up to about half that distance back, and
rereads that much after a failover. Within the exact window a group rereads at most
``offset.lag.max`` records; beyond it, the 64 slots answer as in Kafka.
"""

from __future__ import annotations

import logging
import threading
import time
from array import array
from bisect import bisect_right
from typing import Any

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, TopicPartition
from seaway.connectors.mirror.formats import FormatError, OffsetSync

__all__ = ["EXACT_SYNCS_PER_PARTITION", "SYNCS_PER_PARTITION", "OffsetSyncStore", "SyncArray"]

log = logging.getLogger(__name__)

SYNCS_PER_PARTITION = 64
EXACT_SYNCS_PER_PARTITION = 1024
_READ_BATCH = 10_000


def _invariant_b(i_sync: OffsetSync, j_sync: OffsetSync, i: int, j: int) -> bool:
    return i_sync is j_sync or i_sync.upstream_offset <= j_sync.upstream_offset + (1 << j) - (1 << i)


def _invariant_c(i_sync: OffsetSync, j_sync: OffsetSync, i: int) -> bool:
    return i_sync is j_sync or i_sync.upstream_offset >= j_sync.upstream_offset + (1 << max(i - 2, 0))


class SyncArray:
    """One partition's 64 syncs and its exact window of the latest ``exact`` (pure logic, no I/O)."""

    __slots__ = ("downs", "exact", "syncs", "ups")

    def __init__(self, first: OffsetSync, exact: int = EXACT_SYNCS_PER_PARTITION) -> None:
        self.exact = exact
        self._reset(first)

    def _reset(self, sync: OffsetSync) -> None:
        self.syncs = [sync] * SYNCS_PER_PARTITION
        self.ups = array("q", [sync.upstream_offset])
        self.downs = array("q", [sync.downstream_offset])

    def update(self, sync: OffsetSync, only_last: bool = False) -> None:
        syncs = self.syncs
        if only_last or sync.upstream_offset < syncs[0].upstream_offset:
            self._reset(sync)  # upstream rewind: every older sync is invalid
            return
        if self.exact:
            ups, downs = self.ups, self.downs
            ups.append(sync.upstream_offset)
            downs.append(sync.downstream_offset)
            if len(ups) > 2 * self.exact:  # trim in chunks: amortised O(1) per sync
                del ups[:-self.exact]
                del downs[:-self.exact]
        original = list(syncs)
        syncs = list(syncs)
        replacement = sync
        index = 0  # into original: the next old value considered as a replacement
        syncs[0] = replacement
        for current in range(1, SYNCS_PER_PARTITION):
            previous = current - 1
            while True:
                old = original[index]
                is_recent = _invariant_b(syncs[previous], old, previous, current)
                separated_previous = _invariant_c(syncs[previous], old, previous)
                nxt = current + 1
                separated_next = nxt >= SYNCS_PER_PARTITION or _invariant_c(old, syncs[nxt], current)
                duplicate = index + 1 < SYNCS_PER_PARTITION and old is original[index + 1]
                promote = is_recent and separated_previous and separated_next
                if promote:
                    replacement = old
                skip = duplicate or not separated_previous
                if promote or skip:
                    index += 1
                if not (index < current and skip):
                    break
            if _invariant_b(syncs[previous], syncs[current], previous, current):
                break  # holds here, so for every later slot too
            syncs[current] = replacement
        self.syncs = syncs

    def lookup(self, upstream: int) -> tuple[int, int]:
        """``(upstream, downstream)`` of the latest sync at or before ``upstream`` (the oldest kept if none is)."""
        ups = self.ups
        if self.exact and ups[0] <= upstream:
            i = bisect_right(ups, upstream) - 1
            return ups[i], self.downs[i]
        for sync in self.syncs:
            if sync.upstream_offset <= upstream:
                return sync.upstream_offset, sync.downstream_offset
        last = self.syncs[-1]
        return last.upstream_offset, last.downstream_offset


class OffsetSyncStore:
    """Reads the offset-syncs topic (partition 0) and translates upstream offsets to downstream ones."""

    def __init__(self, consumer_config: dict[str, Any] | None, topic: str,
                 exact: int = EXACT_SYNCS_PER_PARTITION) -> None:
        """``consumer_config`` None: no consumer, syncs come through :meth:`add` (the unit tests);
        ``exact`` 0: Kafka's 64 slots only."""
        self.topic = topic
        self.exact = exact
        self._consumer: Consumer | None = None
        if consumer_config is not None:
            config = dict(consumer_config)
            config.setdefault("group.id", f"mm2-offset-syncs-reader-{topic}")
            config["enable.auto.commit"] = "false"
            self._consumer = Consumer(config)
            self._consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
        self._arrays: dict[tuple[str, int], SyncArray] = {}
        self._lock = threading.Lock()
        self._must_read_to_end = True
        self.read_to_end = False
        self._consumer_lock = threading.Lock()  # the consumer is used by start/update and closed by close
        self._closed = False

    def begin(self, must_read_to_end: bool) -> None:
        """The initial read starts; with ``must_read_to_end`` only each partition's last sync is kept during it."""
        self._must_read_to_end = must_read_to_end

    def start(self, must_read_to_end: bool, timeout: float) -> None:
        """Read the topic up to its current end (blocking, up to ``timeout``); translation works after."""
        self.begin(must_read_to_end)
        with self._consumer_lock:
            if self._consumer is not None:
                self._read_to_end(self._consumer, timeout)
        self.read_to_end = True

    def _read_to_end(self, consumer: Consumer, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        low = high = 0
        while time.monotonic() < deadline and not self._closed:
            try:
                low, high = consumer.get_watermark_offsets(TopicPartition(self.topic, 0), timeout=5)
                break
            except Exception as e:  # the topic may not exist yet (the source connector creates it)
                log.debug("Offset syncs topic %s not readable yet: %s", self.topic, e)
                time.sleep(0.5)
        position = low
        while position < high and time.monotonic() < deadline and not self._closed:
            messages = consumer.consume(_READ_BATCH, 0.2)
            if messages:
                offsets = [m.offset() for m in messages if m.error() is None]
                position = max([position, *(o + 1 for o in offsets if o is not None)])
                self._consume(messages)
        if position < high:
            log.warning("Read offset syncs of %s up to %d of %d within %.0f s; translating from there",
                        self.topic, position, high, timeout)

    def update(self) -> None:
        """Read the syncs written since the last call (never blocks long)."""
        with self._consumer_lock:
            consumer = self._consumer
            while consumer is not None:
                messages = consumer.consume(_READ_BATCH, 0)
                if not messages:
                    return
                self._consume(messages)

    def _consume(self, messages: list[Any]) -> None:
        for message in messages:
            error = message.error()
            if error is not None:
                if error.code() != KafkaError._PARTITION_EOF:
                    log.warning("Error reading offset syncs from %s: %s", self.topic, error)
                continue
            try:
                sync = OffsetSync.decode(message.key(), message.value())
            except FormatError as e:
                log.warning("Ignored invalid offset sync at offset %s of %s: %s", message.offset(), self.topic, e)
                continue
            self.add(sync)

    def add(self, sync: OffsetSync) -> None:
        """One sync, in the order of the topic."""
        only_last = not self.read_to_end and self._must_read_to_end
        tp = (sync.topic, sync.partition)
        with self._lock:
            array = self._arrays.get(tp)
            if array is None:
                self._arrays[tp] = SyncArray(sync, self.exact)
            else:
                array.update(sync, only_last)

    def syncs(self, topic: str, partition: int) -> list[OffsetSync]:
        """The 64 kept syncs of a partition, latest first (for tests and diagnostics)."""
        with self._lock:
            array = self._arrays.get((topic, partition))
            return [] if array is None else list(array.syncs)

    def translate_downstream(self, topic: str, partition: int, upstream: int) -> int | None:
        """The downstream offset for ``upstream``; None if unknown (no sync yet), -1 if too old to translate."""
        if not self.read_to_end:
            return None
        with self._lock:
            array = self._arrays.get((topic, partition))
            if array is None:
                return None
            sync_upstream, sync_downstream = array.lookup(upstream)
        if sync_upstream > upstream:
            return -1
        return sync_downstream + (0 if upstream == sync_upstream else 1)

    def close(self) -> None:
        self._closed = True
        with self._consumer_lock:
            consumer, self._consumer = self._consumer, None
        if consumer is not None:
            consumer.close()
