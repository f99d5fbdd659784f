"""The read-mostly group APIs: ListGroups, DescribeGroups, ConsumerGroupDescribe, DeleteGroups.

Shapes follow Kafka's ``GroupMetadata.summary``/``overview``: a Stable classic group is
described with its protocol and each member's metadata and assignment; in any other state
the protocol is empty and members come without metadata or assignment. Groups are of two
types (KIP-848): "classic" (JoinGroup/SyncGroup) and "consumer" (ConsumerGroupHeartbeat).
ListGroups lists both with their type; DescribeGroups describes classic groups (a consumer
group is "Dead" there, as Kafka answers before DescribeGroups v6) and ConsumerGroupDescribe
describes consumer groups (GROUP_ID_NOT_FOUND for any other id, which tells Kafka's admin
client to fall back to DescribeGroups).
"""

from __future__ import annotations

import uuid
from collections import defaultdict
from dataclasses import dataclass

from seaway.broker.coordinator.consumer_group import ConsumerGroup
from seaway.broker.coordinator.consumer_records import Assignment
from seaway.broker.coordinator.coordinator import GroupCoordinator
from seaway.broker.coordinator.group import GroupState
from seaway.broker.coordinator.offsets import cleanup_group
from seaway.protocol.errors import (
    GroupIdNotFoundError,
    InvalidGroupIdError,
    KafkaProtocolError,
    NonEmptyGroupError,
    UnknownServerError,
)

__all__ = ["CLASSIC", "CONSUMER", "ConsumerGroupSummary", "ConsumerMemberSummary", "GroupOverview",
           "GroupSummary", "MemberSummary", "TopicPartitions", "delete_groups", "describe_consumer_group",
           "describe_group", "list_groups"]

CLASSIC = "classic"
CONSUMER = "consumer"


@dataclass(frozen=True, slots=True)
class GroupOverview:
    group_id: str
    protocol_type: str
    state: str
    group_type: str = CLASSIC


@dataclass(frozen=True, slots=True)
class MemberSummary:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    metadata: bytes
    assignment: bytes


@dataclass(frozen=True, slots=True)
class GroupSummary:
    group_id: str
    state: str
    protocol_type: str
    protocol: str
    members: tuple[MemberSummary, ...]


TopicPartitions = tuple[uuid.UUID, str, list[int]]
"""(topic id, topic name, partitions) of one topic in an assignment."""


@dataclass(frozen=True, slots=True)
class ConsumerMemberSummary:
    member_id: str
    instance_id: str | None
    rack_id: str | None
    member_epoch: int
    client_id: str
    client_host: str
    topic_names: list[str]
    topic_regex: str | None
    assignment: list[TopicPartitions]
    target: list[TopicPartitions]


@dataclass(frozen=True, slots=True)
class ConsumerGroupSummary:
    group_id: str
    state: str
    group_epoch: int
    assignment_epoch: int
    assignor: str
    members: tuple[ConsumerMemberSummary, ...]


def list_groups(coord: GroupCoordinator, states: list[str], types: list[str]) -> list[GroupOverview]:
    """Every live group, filtered by state and group type (both case-insensitive, empty = all)."""
    coord.check_ready()
    want_states = {s.lower() for s in states}
    want_types = {t.lower() for t in types}
    out = []
    for group in coord.groups.values():
        if isinstance(group, ConsumerGroup):
            overview = GroupOverview(group.group_id, group.protocol_type, group.state.value, CONSUMER)
            if group.dead:
                continue
        else:
            if group.is_(GroupState.DEAD):
                continue
            overview = GroupOverview(group.group_id, group.protocol_type or "", group.state.value)
        if want_states and overview.state.lower() not in want_states:
            continue
        if want_types and overview.group_type not in want_types:
            continue
        out.append(overview)
    return out


def describe_group(coord: GroupCoordinator, group_id: str) -> GroupSummary:
    """A classic group's summary; an unknown group (or a consumer group) is described as Dead
    with no members, as Kafka does up to DescribeGroups v5."""
    coord.check_ready()
    group = coord.groups.get(group_id)
    if group is None or isinstance(group, ConsumerGroup):
        return GroupSummary(group_id, GroupState.DEAD.value, "", "", ())
    stable = group.is_(GroupState.STABLE)
    protocol = (group.protocol_name or "") if stable else ""
    members = tuple(
        MemberSummary(m.member_id, m.group_instance_id, m.client_id, m.client_host,
                      m.metadata(group.protocol_name) if stable else b"", m.assignment if stable else b"")
        for m in group.members.values()
    )
    return GroupSummary(group_id, group.state.value, group.protocol_type or "", protocol, members)


def describe_consumer_group(coord: GroupCoordinator, group_id: str) -> ConsumerGroupSummary:
    """A consumer group's summary (ConsumerGroupDescribe); GROUP_ID_NOT_FOUND for any other id."""
    coord.check_ready()
    if not group_id:
        raise InvalidGroupIdError("the group id must not be empty")
    group = coord.groups.get(group_id)
    if group is None:
        raise GroupIdNotFoundError(f"Group {group_id} not found.")
    if not isinstance(group, ConsumerGroup):
        raise GroupIdNotFoundError(f"Group {group_id} is not a consumer group.")
    names = {meta.topic_id: name for name, meta in coord.broker.logs.topics().items()}
    members = tuple(
        ConsumerMemberSummary(
            m.member_id, m.instance_id, m.rack_id, m.member_epoch, m.client_id, m.client_host,
            list(m.topic_names), m.topic_regex, _named(m.assigned, names),
            _named(group.target.get(m.member_id, frozenset()), names))
        for m in group.members.values()
    )
    return ConsumerGroupSummary(group_id, group.state.value, group.group_epoch, group.assignment_epoch,
                                group.preferred_assignor(coord.consumer.settings.assignors[0]), members)


def _named(assignment: Assignment, names: dict[uuid.UUID, str]) -> list[TopicPartitions]:
    """An assignment by topic, with names; partitions of topics that no longer exist are left out."""
    by_topic: dict[uuid.UUID, list[int]] = defaultdict(list)
    for topic_id, partition in assignment:
        if topic_id in names:
            by_topic[topic_id].append(partition)
    return [(tid, names[tid], sorted(parts)) for tid, parts in sorted(by_topic.items(), key=lambda i: names[i[0]])]


def delete_groups(coord: GroupCoordinator, group_ids: list[str]) -> dict[str, int]:
    """Delete empty groups with their offsets; NON_EMPTY_GROUP / GROUP_ID_NOT_FOUND otherwise."""
    results: dict[str, int] = {}
    for group_id in group_ids:
        try:
            coord.check_ready()
            group = coord.groups.get(group_id)
            if isinstance(group, ConsumerGroup):
                if group.dead:
                    raise GroupIdNotFoundError(f"group {group_id} does not exist")
                if not group.is_empty():
                    raise NonEmptyGroupError(f"group {group_id} is {group.state.value}")
            else:
                if group is None or group.is_(GroupState.DEAD):
                    raise GroupIdNotFoundError(f"group {group_id} does not exist")
                if not group.is_(GroupState.EMPTY):
                    raise NonEmptyGroupError(f"group {group_id} is {group.state.value}")
                for handle in group.pending_members.values():
                    handle.cancel()
                group.pending_members.clear()
            cleanup_group(coord, group, list(group.offsets))
            results[group_id] = 0 if coord.groups.get(group_id) is not group else UnknownServerError.code
        except KafkaProtocolError as exc:
            results[group_id] = exc.code
    return results
