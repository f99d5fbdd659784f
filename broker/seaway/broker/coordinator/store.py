"""The ``__consumer_offsets`` topic as the coordinator's durable store.

Created at startup when missing (compacted, ``offsets.topic.segment.bytes`` segments),
replayed into plain dictionaries on a worker thread, then written to from the event loop:
a write is one uncompressed batch appended to the group's partition, which returns once
the bytes are in the page cache, as every produce with acks=all does here. Later records
win, null values delete: exactly what compaction keeps, so replaying a compacted log gives
the same state as replaying the full one.

KIP-848 consumer groups are six record types of their own
(:mod:`~seaway.broker.coordinator.consumer_records`); replay keeps the latest record of
each key and the coordinator applies them to a ``ConsumerGroup`` at the end.

Transactional offset commits (TxnOffsetCommit) are batches with the transactional bit and
the producer's id: replay keeps them aside per producer until that producer's end marker
in the same partition commits them (a commit written later than an offset's current one
replaces it) or aborts them; what is left at the end belongs to open transactions, exactly
as Kafka's ``loadGroupsAndOffsets`` does.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field

from seaway.broker.context import BrokerContext
from seaway.broker.coordinator.consumer_records import ConsumerGroupRecord, decode_record, is_consumer_key
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
from seaway.protocol.record_batch import BatchHeader, CorruptBatchError
from seaway.protocol.records import ControlType, Record, build_batch, control_type, iter_batches

__all__ = ["OFFSETS_TOPIC", "LoadedState", "OffsetsStore"]

log = logging.getLogger("seaway.broker.coordinator")

OFFSETS_TOPIC = "__consumer_offsets"
_READ_CHUNK = 1 << 20


Stored = tuple[OffsetCommitValue, int]
"""An offset as replay found it, with the base offset of its batch."""


@dataclass
class LoadedState:
    """The latest value of every live key, as replay found it."""

    offsets: dict[str, dict[tuple[str, int], Stored]] = field(default_factory=dict)
    groups: dict[str, GroupMetadataValue] = field(default_factory=dict)
    pending: dict[int, dict[str, dict[tuple[str, int], Stored]]] = field(default_factory=dict)
    """Producer id -> group -> offsets of transactions still open at the end of the log."""
    consumer: dict[str, dict[tuple[int, str | None], ConsumerGroupRecord]] = field(default_factory=dict)
    """KIP-848 consumer groups: group -> (record type, member) -> its latest record."""
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
            pending: dict[int, dict[str, dict[tuple[str, int], Stored]]] = {}
            while offset < plog.log_end_offset:
                region = plog.read(offset, _READ_CHUNK)
                if region is None or len(region) == 0:
                    break
                data = region.read_bytes()
                try:
                    for header, records in iter_batches(data):
                        offset = header.next_offset
                        if header.is_control:
                            self._apply_marker(state, pending, header, records)
                            continue
                        txn = pending.setdefault(header.producer_id, {}) if header.is_transactional else None
                        for record in records:
                            self._apply(state, record, header.base_offset, txn)
                except CorruptBatchError as exc:
                    log.error("%s-%d: unreadable batch at offset %d (%s); skipping the rest",
                              OFFSETS_TOPIC, partition, offset, exc)
                    break
            for producer_id, groups in pending.items():
                state.pending.setdefault(producer_id, {}).update(groups)
        return state

    @staticmethod
    def _apply_marker(state: LoadedState, pending: dict[int, dict[str, dict[tuple[str, int], Stored]]],
                      header: BatchHeader, records: list[Record]) -> None:
        """An end marker: the producer's pending offsets become committed, or are dropped."""
        groups = pending.pop(header.producer_id, None)
        if not groups or not records:
            return
        try:
            commit = control_type(records[0]) == ControlType.COMMIT
        except CorruptBatchError:
            return
        if not commit:
            return
        for group, offsets in groups.items():
            committed = state.offsets.setdefault(group, {})
            for tp, stored in offsets.items():
                current = committed.get(tp)
                if current is None or current[1] < stored[1]:
                    committed[tp] = stored

    @staticmethod
    def _apply(state: LoadedState, record: Record, batch_offset: int = -1,
               txn: dict[str, dict[tuple[str, int], Stored]] | None = None) -> None:
        state.records += 1
        if record.key is None:
            state.skipped += 1
            return
        try:
            if is_consumer_key(record.key):
                if txn is not None:
                    state.skipped += 1  # group records are never written transactionally
                    return
                consumer = decode_record(record.key, record.value)
                latest = state.consumer.setdefault(consumer.group_id, {})
                if consumer.value is None:
                    latest.pop((consumer.type, consumer.member_id), None)
                else:
                    latest[(consumer.type, consumer.member_id)] = consumer
                return
            kind, group, topic, partition = decode_key(record.key)
            if kind == "offset":
                assert topic is not None
                group_offsets = (txn if txn is not None else state.offsets).setdefault(group, {})
                if record.value is None:
                    group_offsets.pop((topic, partition), None)
                else:
                    group_offsets[(topic, partition)] = (decode_offset_commit(record.value), batch_offset)
            elif txn is not None:
                state.skipped += 1  # group metadata is never written transactionally
            elif record.value is None:
                state.groups.pop(group, None)
            else:
                state.groups[group] = decode_group_metadata(record.value)
        except RecordDecodeError as exc:
            state.skipped += 1
            log.warning("skipping a record of %s at offset %d: %s", OFFSETS_TOPIC, record.offset, exc)

    def write(self, group_id: str, entries: Sequence[tuple[bytes, bytes | None]], now_ms: int) -> int:
        """Append (key, value-or-tombstone) records for one group as a single batch; its base offset.

        Raises a KafkaProtocolError (or OSError) when the append fails; nothing is then
        applied to memory by the caller.
        """
        if not entries:
            return -1
        partition = self.partition_for(group_id)
        plog = self._broker.logs.get_log(OFFSETS_TOPIC, partition)
        if plog is None:
            raise CoordinatorNotAvailableError(f"{OFFSETS_TOPIC}-{partition} does not exist")
        records = [Record(i, now_ms, key, value) for i, (key, value) in enumerate(entries)]
        base = plog.append(build_batch(records), now_ms=now_ms).base_offset
        self._broker.waiters.notify(OFFSETS_TOPIC, partition)
        return base
