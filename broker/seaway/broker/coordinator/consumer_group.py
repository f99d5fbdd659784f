"""A KIP-848 consumer group (``group.protocol=consumer``): members, epochs and assignments.

Kafka's model (``ConsumerGroup``/``ConsumerGroupMember`` in its group coordinator), kept as
plain state that changes only through :meth:`ConsumerGroup.apply` of the records in
:mod:`~seaway.broker.coordinator.consumer_records`, the live path and the replay alike:

- the **group epoch** grows when a member joins, leaves or changes its subscription, or
  when a subscribed topic changes (created, deleted, grown);
- the **target assignment** (per member, with its **assignment epoch**) is what the
  server-side assignor computed for the latest group epoch;
- each member's **current assignment** walks towards its target one heartbeat at a time
  (:mod:`~seaway.broker.coordinator.reconcile`): partitions to give up are revoked first,
  a partition is assigned only once its previous owner released it, and the member's
  epoch moves to the target epoch when it holds nothing it should not.

The state shown to clients is derived, as Kafka's ``maybeUpdateGroupState``: Empty (no
members), Assigning (group epoch ahead of the assignment epoch), Reconciling (a member
not yet at the target), Stable. Offsets live on the group like a classic group's
(``offsets``, ``pending_txn_offsets``), so the offset code serves both types. Everything
here runs on the event loop thread.
"""

from __future__ import annotations

import asyncio
import enum
import uuid
from collections import Counter
from dataclasses import dataclass, field

from seaway.broker.coordinator.consumer_records import (
    CURRENT_ASSIGNMENT,
    GROUP_EPOCH,
    MEMBER_SUBSCRIPTION,
    SUBSCRIPTION_METADATA,
    TARGET_EPOCH,
    TARGET_MEMBER,
    Assignment,
    ConsumerGroupRecord,
    CurrentAssignment,
    MemberSubscription,
    TopicInfo,
)
from seaway.broker.coordinator.group import CommittedOffset

__all__ = [
    "EMPTY_ASSIGNMENT",
    "LEAVE_GROUP_MEMBER_EPOCH",
    "LEAVE_GROUP_STATIC_MEMBER_EPOCH",
    "PROTOCOL_TYPE",
    "ConsumerGroup",
    "ConsumerGroupState",
    "ConsumerMember",
    "MemberState",
]

PROTOCOL_TYPE = "consumer"
LEAVE_GROUP_MEMBER_EPOCH = -1
LEAVE_GROUP_STATIC_MEMBER_EPOCH = -2
EMPTY_ASSIGNMENT: Assignment = frozenset()


class MemberState(enum.IntEnum):
    """A member's reconciliation state; the values are Kafka's (stored in the log)."""

    STABLE = 0
    UNREVOKED_PARTITIONS = 1
    UNRELEASED_PARTITIONS = 2
    UNKNOWN = 127

    @classmethod
    def of(cls, value: int) -> MemberState:
        try:
            return cls(value)
        except ValueError:
            return cls.UNKNOWN


class ConsumerGroupState(enum.Enum):
    """The states a consumer group shows in ListGroups and ConsumerGroupDescribe."""

    EMPTY = "Empty"
    ASSIGNING = "Assigning"
    RECONCILING = "Reconciling"
    STABLE = "Stable"
    DEAD = "Dead"


@dataclass(eq=False, slots=True)
class ConsumerMember:
    """One member: what it subscribed to and where its reconciliation stands."""

    member_id: str
    instance_id: str | None = None
    rack_id: str | None = None
    client_id: str = ""
    client_host: str = ""
    topic_names: tuple[str, ...] = ()
    topic_regex: str | None = None
    rebalance_timeout_ms: int = -1
    server_assignor: str | None = None
    member_epoch: int = 0
    previous_member_epoch: int = 0
    state: MemberState = MemberState.STABLE
    assigned: Assignment = EMPTY_ASSIGNMENT
    pending_revocation: Assignment = EMPTY_ASSIGNMENT
    assignment_epochs: dict[tuple[uuid.UUID, int], int] = field(default_factory=dict)
    """Each held partition (assigned or pending revocation) -> the member epoch it was assigned at
    (KIP-1251): a commit at an older member epoch is accepted for a partition held since then."""
    session_timer: asyncio.TimerHandle | None = None
    rebalance_timer: asyncio.TimerHandle | None = None
    rebalance_timer_epoch: int = -1

    def subscription(self) -> MemberSubscription:
        return MemberSubscription(self.instance_id, self.rack_id, self.client_id, self.client_host,
                                  self.topic_names, self.topic_regex, self.rebalance_timeout_ms,
                                  self.server_assignor)

    def current(self) -> CurrentAssignment:
        return CurrentAssignment(self.member_epoch, self.previous_member_epoch, int(self.state), self.assigned,
                                 self.pending_revocation)

    def is_reconciled_to(self, target_epoch: int) -> bool:
        return self.state is MemberState.STABLE and self.member_epoch == target_epoch

    def cancel_timers(self) -> None:
        for handle in (self.session_timer, self.rebalance_timer):
            if handle is not None:
                handle.cancel()
        self.session_timer = self.rebalance_timer = None
        self.rebalance_timer_epoch = -1


@dataclass(eq=False)
class ConsumerGroup:
    """A consumer group (see the module docstring). ``dead`` once deleted or converted."""

    group_id: str
    state_timestamp: int
    group_epoch: int = 0
    assignment_epoch: int = 0
    members: dict[str, ConsumerMember] = field(default_factory=dict)
    static_members: dict[str, str] = field(default_factory=dict)
    target: dict[str, Assignment] = field(default_factory=dict)
    subscription_metadata: tuple[TopicInfo, ...] = ()
    owners: dict[tuple[uuid.UUID, int], str] = field(default_factory=dict)
    """Partition -> the member holding it (assigned or pending revocation): Kafka's
    ``currentPartitionEpoch``, keyed by owner so a release never frees another's partition."""
    topic_counts: Counter[str] = field(default_factory=Counter)
    """Subscribed topic name -> how many members name it (regex members not included)."""
    regex_counts: Counter[str] = field(default_factory=Counter)
    """Subscribed regex -> how many members use it."""
    offsets: dict[tuple[str, int], CommittedOffset] = field(default_factory=dict)
    pending_txn_offsets: dict[int, dict[tuple[str, int], CommittedOffset]] = field(default_factory=dict)
    dead: bool = False
    protocol_type: str = PROTOCOL_TYPE

    # --- derived state ----------------------------------------------------------------
    @property
    def state(self) -> ConsumerGroupState:
        if self.dead:
            return ConsumerGroupState.DEAD
        if not self.members:
            return ConsumerGroupState.EMPTY
        if self.group_epoch > self.assignment_epoch:
            return ConsumerGroupState.ASSIGNING
        for member in self.members.values():
            if not member.is_reconciled_to(self.assignment_epoch):
                return ConsumerGroupState.RECONCILING
        return ConsumerGroupState.STABLE

    def is_empty(self) -> bool:
        return not self.members

    def static_member(self, instance_id: str) -> ConsumerMember | None:
        member_id = self.static_members.get(instance_id)
        return None if member_id is None else self.members.get(member_id)

    def is_free(self, tp: tuple[uuid.UUID, int], member_id: str) -> bool:
        """True if nobody but ``member_id`` holds the partition (it may be assigned to it)."""
        owner = self.owners.get(tp)
        return owner is None or owner == member_id

    def is_subscribed_to(self, topic: str) -> bool:
        """Does any member subscribe to ``topic``, by name or through a regex?

        The subscription metadata holds every existing topic the members' names and
        regexes resolved to, so it answers for regexes without resolving them again.
        """
        return topic in self.topic_counts or any(t.name == topic for t in self.subscription_metadata)

    def preferred_assignor(self, default: str) -> str:
        """The server assignor most members ask for; ``default`` when none asks (Kafka's rule)."""
        counts = Counter(m.server_assignor for m in self.members.values() if m.server_assignor)
        return counts.most_common(1)[0][0] if counts else default

    # --- records ----------------------------------------------------------------------
    def apply(self, record: ConsumerGroupRecord) -> None:
        """Apply one record (live path and replay alike); a tombstone removes what its key names."""
        kind, value = record.type, record.value
        if kind == GROUP_EPOCH:
            self.group_epoch = value if isinstance(value, int) else 0
        elif kind == TARGET_EPOCH:
            self.assignment_epoch = value if isinstance(value, int) else 0
        elif kind == SUBSCRIPTION_METADATA:
            self.subscription_metadata = value if isinstance(value, tuple) else ()
        elif record.member_id is not None:
            self._apply_member(kind, record.member_id, value)

    def _apply_member(self, kind: int, member_id: str, value: object) -> None:
        if kind == MEMBER_SUBSCRIPTION:
            if isinstance(value, MemberSubscription):
                self._set_subscription(self._member(member_id), value)
            else:
                self._remove_member(member_id)
        elif kind == TARGET_MEMBER:
            if isinstance(value, frozenset):
                self.target[member_id] = value
            else:
                self.target.pop(member_id, None)
        elif kind == CURRENT_ASSIGNMENT:
            if isinstance(value, CurrentAssignment):
                self._set_current(self._member(member_id), value)
            elif member_id in self.members:
                self._set_current(self.members[member_id], CurrentAssignment(
                    -1, -1, int(MemberState.STABLE), EMPTY_ASSIGNMENT, EMPTY_ASSIGNMENT))

    def _member(self, member_id: str) -> ConsumerMember:
        member = self.members.get(member_id)
        if member is None:
            member = self.members[member_id] = ConsumerMember(member_id)
        return member

    def _set_subscription(self, member: ConsumerMember, sub: MemberSubscription) -> None:
        self._count(member, -1)
        if member.instance_id is not None and self.static_members.get(member.instance_id) == member.member_id:
            del self.static_members[member.instance_id]
        member.instance_id = sub.instance_id
        member.rack_id = sub.rack_id
        member.client_id = sub.client_id
        member.client_host = sub.client_host
        member.topic_names = sub.topic_names
        member.topic_regex = sub.topic_regex
        member.rebalance_timeout_ms = sub.rebalance_timeout_ms
        member.server_assignor = sub.server_assignor
        if sub.instance_id is not None:
            self.static_members[sub.instance_id] = member.member_id
        self._count(member, +1)

    def _count(self, member: ConsumerMember, delta: int) -> None:
        for name in member.topic_names:
            self.topic_counts[name] += delta
            if self.topic_counts[name] <= 0:
                del self.topic_counts[name]
        if member.topic_regex is not None:
            self.regex_counts[member.topic_regex] += delta
            if self.regex_counts[member.topic_regex] <= 0:
                del self.regex_counts[member.topic_regex]

    def _set_current(self, member: ConsumerMember, current: CurrentAssignment) -> None:
        for tp in member.assigned | member.pending_revocation:
            if self.owners.get(tp) == member.member_id:
                del self.owners[tp]
        held = current.assigned | current.pending_revocation
        member.assignment_epochs = {tp: member.assignment_epochs.get(tp, current.member_epoch) for tp in held}
        member.member_epoch = current.member_epoch
        member.previous_member_epoch = current.previous_member_epoch
        member.state = MemberState.of(current.state)
        member.assigned = current.assigned
        member.pending_revocation = current.pending_revocation
        for tp in current.assigned | current.pending_revocation:
            self.owners[tp] = member.member_id

    def _remove_member(self, member_id: str) -> None:
        member = self.members.pop(member_id, None)
        if member is None:
            return
        self._count(member, -1)
        for tp in member.assigned | member.pending_revocation:
            if self.owners.get(tp) == member_id:
                del self.owners[tp]
        if member.instance_id is not None and self.static_members.get(member.instance_id) == member_id:
            del self.static_members[member.instance_id]
        member.cancel_timers()

    def cancel_all_timers(self) -> None:
        for member in self.members.values():
            member.cancel_timers()

    # --- records that describe the whole group ------------------------------------------
    def tombstones(self) -> list[ConsumerGroupRecord]:
        """The records that delete this group from the log (Kafka's createGroupTombstoneRecords)."""
        gid = self.group_id
        out = [ConsumerGroupRecord(CURRENT_ASSIGNMENT, gid, m) for m in self.members]
        out += [ConsumerGroupRecord(TARGET_MEMBER, gid, m) for m in self.target]
        out.append(ConsumerGroupRecord(TARGET_EPOCH, gid))
        out += [ConsumerGroupRecord(MEMBER_SUBSCRIPTION, gid, m) for m in self.members]
        out.append(ConsumerGroupRecord(SUBSCRIPTION_METADATA, gid))
        out.append(ConsumerGroupRecord(GROUP_EPOCH, gid))
        return out
