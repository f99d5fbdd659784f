"""The KIP-848 consumer group records of ``__consumer_offsets``, byte for byte as Kafka writes them.

A consumer group (``group.protocol=consumer``) is kept as six record types beside the
classic group's; the key's leading int16 is the record type (Kafka calls it the key
version), keys are non-flexible, values are flexible (compact strings and arrays, a
tagged-field section per struct) and start with an int16 value version, 0 for all::

    type key                                    value (version 0)
    3    ConsumerGroupMetadataKey               ConsumerGroupMetadataValue
           group string                           epoch int32                  (the group epoch)
    4    ConsumerGroupPartitionMetadataKey      ConsumerGroupPartitionMetadataValue
           group string                           topics [topicId uuid, topicName string,
                                                          numPartitions int32, partitionMetadata []]
    5    ConsumerGroupMemberMetadataKey         ConsumerGroupMemberMetadataValue
           group string, member string            instanceId string?, rackId string?, clientId string,
                                                  clientHost string, subscribedTopicNames []string,
                                                  subscribedTopicRegex string?, rebalanceTimeoutMs int32,
                                                  serverAssignor string?, (tag 0: classic member metadata)
    6    ConsumerGroupTargetAssignmentMetadataKey  ConsumerGroupTargetAssignmentMetadataValue
           group string                           assignmentEpoch int32
    7    ConsumerGroupTargetAssignmentMemberKey ConsumerGroupTargetAssignmentMemberValue
           group string, member string            topicPartitions [topicId uuid, partitions []int32]
    8    ConsumerGroupCurrentMemberAssignmentKey   ConsumerGroupCurrentMemberAssignmentValue
           group string, member string            memberEpoch int32, previousMemberEpoch int32, state int8,
                                                  assignedPartitions [..], partitionsPendingRevocation [..]

A null value is a tombstone. The coordinator applies a record to memory only after it is
in the log, and replay applies the same records the same way
(:meth:`seaway.broker.coordinator.consumer_group.ConsumerGroup.apply`), so a group after a
restart is the group before it. Assignments are sets of ``(topic id, partition)``.
"""

from __future__ import annotations

import struct
import uuid
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from seaway.broker.coordinator.offsets_topic import RecordDecodeError
from seaway.protocol.primitives import CorruptFrameError, Reader, Writer

__all__ = [
    "CONSUMER_RECORD_TYPES",
    "CURRENT_ASSIGNMENT",
    "GROUP_EPOCH",
    "MEMBER_SUBSCRIPTION",
    "SUBSCRIPTION_METADATA",
    "TARGET_EPOCH",
    "TARGET_MEMBER",
    "Assignment",
    "ConsumerGroupRecord",
    "CurrentAssignment",
    "MemberSubscription",
    "TopicInfo",
    "decode_record",
    "encode_record",
    "is_consumer_key",
    "record_type",
]

GROUP_EPOCH = 3
SUBSCRIPTION_METADATA = 4
MEMBER_SUBSCRIPTION = 5
TARGET_EPOCH = 6
TARGET_MEMBER = 7
CURRENT_ASSIGNMENT = 8
CONSUMER_RECORD_TYPES = frozenset(range(GROUP_EPOCH, CURRENT_ASSIGNMENT + 1))
_MEMBER_KEYED = frozenset({MEMBER_SUBSCRIPTION, TARGET_MEMBER, CURRENT_ASSIGNMENT})
_VALUE_VERSION = 0

Assignment = frozenset[tuple[uuid.UUID, int]]
"""Partitions as (topic id, partition) pairs: set algebra is what reconciliation does."""


@dataclass(frozen=True, slots=True)
class TopicInfo:
    """A subscribed topic as the group last saw it; a change bumps the group epoch."""

    topic_id: uuid.UUID
    name: str
    num_partitions: int


@dataclass(frozen=True, slots=True)
class MemberSubscription:
    """What a member told the coordinator about itself (ConsumerGroupMemberMetadataValue)."""

    instance_id: str | None
    rack_id: str | None
    client_id: str
    client_host: str
    topic_names: tuple[str, ...]
    topic_regex: str | None
    rebalance_timeout_ms: int
    server_assignor: str | None


@dataclass(frozen=True, slots=True)
class CurrentAssignment:
    """A member's reconciliation state (ConsumerGroupCurrentMemberAssignmentValue)."""

    member_epoch: int
    previous_member_epoch: int
    state: int
    assigned: Assignment
    pending_revocation: Assignment


RecordValue = int | tuple[TopicInfo, ...] | MemberSubscription | Assignment | CurrentAssignment


@dataclass(frozen=True, slots=True)
class ConsumerGroupRecord:
    """One record: its type, group, member (for member-keyed types) and value (None: tombstone).

    Value types by record type: GROUP_EPOCH and TARGET_EPOCH an int, SUBSCRIPTION_METADATA
    a tuple of :class:`TopicInfo`, MEMBER_SUBSCRIPTION a :class:`MemberSubscription`,
    TARGET_MEMBER an :data:`Assignment`, CURRENT_ASSIGNMENT a :class:`CurrentAssignment`.
    """

    type: int
    group_id: str
    member_id: str | None = None
    value: RecordValue | None = None


# ----------------------------------------------------------------------------- keys


def record_type(key: bytes) -> int:
    """The record type of a ``__consumer_offsets`` key (its leading int16); -1 if too short."""
    return struct.unpack_from(">h", key)[0] if len(key) >= 2 else -1


def is_consumer_key(key: bytes) -> bool:
    return record_type(key) in CONSUMER_RECORD_TYPES


def _encode_key(record: ConsumerGroupRecord) -> bytes:
    w = Writer()
    w.int16(record.type)
    w.string(record.group_id, False)
    if record.type in _MEMBER_KEYED:
        if record.member_id is None:
            raise ValueError(f"record type {record.type} needs a member id")
        w.string(record.member_id, False)
    return bytes(w.getvalue())


# --------------------------------------------------------------------------- values


def _write_assignment(w: Writer, assignment: Assignment) -> None:
    by_topic: dict[uuid.UUID, list[int]] = defaultdict(list)
    for topic_id, partition in assignment:
        by_topic[topic_id].append(partition)
    w.array_length(len(by_topic), True)
    for topic_id in sorted(by_topic):
        w.uuid(topic_id)
        partitions = sorted(by_topic[topic_id])
        w.array_length(len(partitions), True)
        for p in partitions:
            w.int32(p)
        w.empty_tagged_fields()


def _read_assignment(r: Reader) -> Assignment:
    out: set[tuple[uuid.UUID, int]] = set()
    for _ in range(max(r.array_length(True), 0)):
        topic_id = r.uuid()
        out.update((topic_id, r.int32()) for _ in range(max(r.array_length(True), 0)))
        r.skip_tagged_fields()
    return frozenset(out)


def _write_strings(w: Writer, items: Iterable[str]) -> None:
    values = list(items)
    w.array_length(len(values), True)
    for item in values:
        w.string(item, True)


def _encode_value(record: ConsumerGroupRecord) -> bytes:
    w = Writer()
    w.int16(_VALUE_VERSION)
    value = record.value
    kind = record.type
    if kind in (GROUP_EPOCH, TARGET_EPOCH):
        assert isinstance(value, int)
        w.int32(value)
    elif kind == SUBSCRIPTION_METADATA:
        assert isinstance(value, tuple)
        w.array_length(len(value), True)
        for topic in value:
            assert isinstance(topic, TopicInfo)
            w.uuid(topic.topic_id)
            w.string(topic.name, True)
            w.int32(topic.num_partitions)
            w.array_length(0, True)  # partitionMetadata: racks are not tracked here
            w.empty_tagged_fields()
    elif kind == MEMBER_SUBSCRIPTION:
        assert isinstance(value, MemberSubscription)
        w.nullable_string(value.instance_id, True)
        w.nullable_string(value.rack_id, True)
        w.string(value.client_id, True)
        w.string(value.client_host, True)
        _write_strings(w, value.topic_names)
        w.nullable_string(value.topic_regex, True)
        w.int32(value.rebalance_timeout_ms)
        w.nullable_string(value.server_assignor, True)
    elif kind == TARGET_MEMBER:
        assert isinstance(value, frozenset)
        _write_assignment(w, value)
    elif kind == CURRENT_ASSIGNMENT:
        assert isinstance(value, CurrentAssignment)
        w.int32(value.member_epoch)
        w.int32(value.previous_member_epoch)
        w.int8(value.state)
        _write_assignment(w, value.assigned)
        _write_assignment(w, value.pending_revocation)
    else:
        raise ValueError(f"unknown consumer group record type {kind}")
    w.empty_tagged_fields()
    return bytes(w.getvalue())


def encode_record(record: ConsumerGroupRecord) -> tuple[bytes, bytes | None]:
    """(key, value) bytes; the value is None for a tombstone."""
    return _encode_key(record), None if record.value is None else _encode_value(record)


def _decode_value(kind: int, r: Reader) -> RecordValue:
    if kind in (GROUP_EPOCH, TARGET_EPOCH):
        return r.int32()
    if kind == SUBSCRIPTION_METADATA:
        topics = []
        for _ in range(max(r.array_length(True), 0)):
            topic_id = r.uuid()
            name = r.string(True)
            partitions = r.int32()
            for _ in range(max(r.array_length(True), 0)):  # partitionMetadata: skipped
                r.int32()
                for _ in range(max(r.array_length(True), 0)):
                    r.string(True)
                r.skip_tagged_fields()
            r.skip_tagged_fields()
            topics.append(TopicInfo(topic_id, name, partitions))
        return tuple(topics)
    if kind == MEMBER_SUBSCRIPTION:
        instance_id = r.nullable_string(True)
        rack_id = r.nullable_string(True)
        client_id = r.string(True)
        client_host = r.string(True)
        names = tuple(r.string(True) for _ in range(max(r.array_length(True), 0)))
        regex = r.nullable_string(True)
        rebalance_timeout = r.int32()
        assignor = r.nullable_string(True)
        return MemberSubscription(instance_id, rack_id, client_id, client_host, names, regex, rebalance_timeout,
                                  assignor)
    if kind == TARGET_MEMBER:
        return _read_assignment(r)
    # CURRENT_ASSIGNMENT
    epoch = r.int32()
    previous = r.int32()
    state = r.int8()
    assigned = _read_assignment(r)
    pending = _read_assignment(r)
    return CurrentAssignment(epoch, previous, state, assigned, pending)


def decode_record(key: bytes, value: bytes | None) -> ConsumerGroupRecord:
    """Decode a consumer group record; RecordDecodeError for anything else or malformed bytes."""
    try:
        r = Reader(key)
        kind = r.int16()
        if kind not in CONSUMER_RECORD_TYPES:
            raise RecordDecodeError(f"not a consumer group record type: {kind}")
        group_id = r.string(False)
        member_id = r.string(False) if kind in _MEMBER_KEYED else None
        if value is None:
            return ConsumerGroupRecord(kind, group_id, member_id, None)
        v = Reader(value)
        version = v.int16()
        if version != _VALUE_VERSION:
            raise RecordDecodeError(f"unknown value version {version} of consumer group record type {kind}")
        decoded = _decode_value(kind, v)
        v.skip_tagged_fields()
    except (CorruptFrameError, ValueError, IndexError, struct.error) as exc:
        if isinstance(exc, RecordDecodeError):
            raise
        raise RecordDecodeError(f"malformed consumer group record: {exc}") from exc
    return ConsumerGroupRecord(kind, group_id, member_id, decoded)
