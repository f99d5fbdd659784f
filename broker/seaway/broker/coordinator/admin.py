"""The read-mostly group APIs: ListGroups, DescribeGroups, DeleteGroups.

Shapes follow Kafka's ``GroupMetadata.summary``/``overview``: a Stable group is described
with its protocol and each member's metadata and assignment; in any other state the
protocol is empty and members come without metadata or assignment. Every group here is a
"classic" group (the KIP-848 group type).
"""

from __future__ import annotations

from dataclasses import dataclass

from seaway.broker.coordinator.coordinator import GroupCoordinator
from seaway.broker.coordinator.group import GroupState
from seaway.broker.coordinator.offsets import cleanup_group
from seaway.protocol.errors import (
    GroupIdNotFoundError,
    KafkaProtocolError,
    NonEmptyGroupError,
    UnknownServerError,
)

__all__ = ["GROUP_TYPE", "GroupOverview", "GroupSummary", "MemberSummary", "delete_groups",
           "describe_group", "list_groups"]

GROUP_TYPE = "classic"


@dataclass(frozen=True, slots=True)
class GroupOverview:
    group_id: str
    protocol_type: str
    state: str
    group_type: str = GROUP_TYPE


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


def list_groups(coord: GroupCoordinator, states: list[str], types: list[str]) -> list[GroupOverview]:
    """Every live group, filtered by state and group type (both case-insensitive, empty = all)."""
    coord.check_ready()
    want_states = {s.lower() for s in states}
    want_types = {t.lower() for t in types}
    if want_types and GROUP_TYPE not in want_types:
        return []
    out = []
    for group in coord.groups.values():
        if group.is_(GroupState.DEAD):
            continue
        if want_states and group.state.value.lower() not in want_states:
            continue
        out.append(GroupOverview(group.group_id, group.protocol_type or "", group.state.value))
    return out


def describe_group(coord: GroupCoordinator, group_id: str) -> GroupSummary:
    """A group's summary; an unknown group is described as Dead with no members, as Kafka does."""
    coord.check_ready()
    group = coord.groups.get(group_id)
    if group is None:
        return GroupSummary(group_id, GroupState.DEAD.value, "", "", ())
    stable = group.is_(GroupState.STABLE)
    protocol = (group.protocol_name or "") if stable else ""
    members = tuple(
        MemberSummary(m.member_id, m.group_instance_id, m.client_id, m.client_host,
                      m.metadata(group.protocol_name) if stable else b"", m.assignment if stable else b"")
        for m in group.members.values()
    )
    return GroupSummary(group_id, group.state.value, group.protocol_type or "", protocol, members)


def delete_groups(coord: GroupCoordinator, group_ids: list[str]) -> dict[str, int]:
    """Delete empty groups with their offsets; NON_EMPTY_GROUP / GROUP_ID_NOT_FOUND otherwise."""
    results: dict[str, int] = {}
    for group_id in group_ids:
        try:
            coord.check_ready()
            group = coord.groups.get(group_id)
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
