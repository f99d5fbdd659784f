"""The ``__consumer_offsets`` topic as the coordinator's durable store.

Created at startup when missing (compacted, ``offsets.topic.segment.bytes`` segments),
replayed into plain dictionaries on a worker thread, then written to from the event loop:
a write is one uncompressed batch appended to the group's partition, which returns once
the bytes are in the page cache, as every produce with acks=all does here. Later records
win, null values delete: exactly what compaction keeps, so replaying a compacted log gives
the same state as replaying the full one.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field

from seaway.broker.context import BrokerContext
from seaway.broker.coordinator.offsets_topic import (
    GroupMetadataValue,
    OffsetCommitValue,
    RecordDecodeError,
    decode_group_metadata,
    decode_key,
    decode_offset_commit,
    partition_for,
)
from seaway.protocol.errors import CoordinatorNotAvailableError, TopicAlreadyExistsError
from seaway.protocol.record_batch import CorruptBatchError
from seaway.protocol.records import Record, build_batch, iter_batches

__all__ = ["OFFSETS_TOPIC", "LoadedState", "OffsetsStore"]

log = logging.getLogger("seaway.broker.coordinator")

OFFSETS_TOPIC = "__consumer_offsets"
_READ_CHUNK = 1 << 20


@dataclass
class LoadedState:
    """The latest value of every live key, as replay found it."""

    offsets: dict[str, dict[tuple[str, int], OffsetCommitValue]] = field(default_factory=dict)
    groups: dict[str, GroupMetadataValue] = field(default_factory=dict)
    records: int = 0
    skipped: int = 0


class OffsetsStore:
    """Reads and writes ``__consumer_offsets`` for the coordinator."""

    def __init__(self, broker: BrokerContext, num_partitions: int, segment_bytes: int) -> None:
        self._broker = broker
        self.num_partitions = num_partitions
        self._segment_bytes = segment_bytes

    def partition_for(self, group_id: str) -> int:
        return partition_for(group_id, self.num_partitions)

    def ensure_topic(self) -> None:
        """Create the topic if missing (blocking: call off the event loop).

        An existing topic keeps its partition count even if the config now says otherwise,
        since moving groups between partitions would lose them; we warn instead.
        """
        logs = self._broker.logs
        meta = logs.topics().get(OFFSETS_TOPIC)
        if meta is None:
            configs = {
                "cleanup.policy": "compact",
                "compression.type": "producer",
                "segment.bytes": str(self._segment_bytes),
            }
            try:
                meta = logs.create_topic(OFFSETS_TOPIC, self.num_partitions, configs)
            except TopicAlreadyExistsError:
                meta = logs.topics()[OFFSETS_TOPIC]
        if meta.num_partitions != self.num_partitions:
            log.warning("%s has %d partitions, offsets.topic.num.partitions says %d; using %d",
                        OFFSETS_TOPIC, meta.num_partitions, self.num_partitions, meta.num_partitions)
            self.num_partitions = meta.num_partitions

    def replay(self) -> LoadedState:
        """Read every partition from its start; the last record per key wins (blocking)."""
        state = LoadedState()
        for partition in range(self.num_partitions):
            plog = self._broker.logs.get_log(OFFSETS_TOPIC, partition)
            if plog is None:
                continue
            offset = plog.log_start_offset
            while offset < plog.log_end_offset:
                region = plog.read(offset, _READ_CHUNK)
                if region is None or len(region) == 0:
                    break
                data = region.read_bytes()
                try:
                    for header, records in iter_batches(data):
                        offset = header.next_offset
                        if header.is_control:
                            continue
                        for record in records:
                            self._apply(state, record)
                except CorruptBatchError as exc:
                    log.error("%s-%d: unreadable batch at offset %d (%s); skipping the rest",
                              OFFSETS_TOPIC, partition, offset, exc)
                    break
        return state

    @staticmethod
    def _apply(state: LoadedState, record: Record) -> None:
        state.records += 1
        if record.key is None:
            state.skipped += 1
            return
        try:
            kind, group, topic, partition = decode_key(record.key)
            if kind == "offset":
                assert topic is not None
                group_offsets = state.offsets.setdefault(group, {})
                if record.value is None:
                    group_offsets.pop((topic, partition), None)
                else:
                    group_offsets[(topic, partition)] = decode_offset_commit(record.value)
            elif record.value is None:
                state.groups.pop(group, None)
            else:
                state.groups[group] = decode_group_metadata(record.value)
        except RecordDecodeError as exc:
            state.skipped += 1
            log.warning("skipping a record of %s at offset %d: %s", OFFSETS_TOPIC, record.offset, exc)

    def write(self, group_id: str, entries: Sequence[tuple[bytes, bytes | None]], now_ms: int) -> None:
        """Append (key, value-or-tombstone) records for one group as a single batch.

        Raises a KafkaProtocolError (or OSError) when the append fails; nothing is then
        applied to memory by the caller.
        """
        if not entries:
            return
        partition = self.partition_for(group_id)
        plog = self._broker.logs.get_log(OFFSETS_TOPIC, partition)
        if plog is None:
            raise CoordinatorNotAvailableError(f"{OFFSETS_TOPIC}-{partition} does not exist")
        records = [Record(i, now_ms, key, value) for i, (key, value) in enumerate(entries)]
        plog.append(build_batch(records), now_ms=now_ms)
        self._broker.waiters.notify(OFFSETS_TOPIC, partition)
