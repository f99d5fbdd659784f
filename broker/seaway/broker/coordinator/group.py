"""One consumer group: its members, its generation and Kafka's classic state machine.

States and the transitions Kafka allows (``GroupMetadata.scala`` / ``ClassicGroupState``)::

    Empty ──join──> PreparingRebalance ──all joined / timeout──> CompletingRebalance
      ^                  ^      │                                   │ leader's SyncGroup
      │                  │      └── nobody left ──> Empty           v
      │                  └──────── join, leave, expiry ───────── Stable
      └── (any) ──> Dead   (deleted, or expired with no offsets left)

A member is *awaiting join* while its JoinGroup is parked (``join_future`` set) and
*awaiting sync* while its SyncGroup waits for the leader (``sync_future`` set). The group
never interprets protocol metadata or assignments: they are opaque bytes, so any protocol
type (``consumer``, ``connect``, ...) works. Everything here runs on the event loop
thread; the timers live in :mod:`seaway.broker.coordinator.coordinator`.
"""

from __future__ import annotations

import asyncio
import enum
from collections import Counter
from dataclasses import dataclass, field

__all__ = ["CommittedOffset", "Group", "GroupState", "JoinResult", "Member", "SyncResult"]


class GroupState(enum.Enum):
    """The classic group states; values are the names Kafka shows in DescribeGroups."""

    EMPTY = "Empty"
    PREPARING_REBALANCE = "PreparingRebalance"
    COMPLETING_REBALANCE = "CompletingRebalance"
    STABLE = "Stable"
    DEAD = "Dead"


_VALID_PREVIOUS: dict[GroupState, frozenset[GroupState]] = {
    GroupState.DEAD: frozenset(GroupState),
    GroupState.COMPLETING_REBALANCE: frozenset({GroupState.PREPARING_REBALANCE}),
    GroupState.STABLE: frozenset({GroupState.COMPLETING_REBALANCE}),
    GroupState.PREPARING_REBALANCE: frozenset(
        {GroupState.STABLE, GroupState.COMPLETING_REBALANCE, GroupState.EMPTY}
    ),
    GroupState.EMPTY: frozenset({GroupState.PREPARING_REBALANCE}),
}


@dataclass(frozen=True, slots=True)
class JoinResult:
    """What a parked JoinGroup is answered with (an error code of 0 means success)."""

    error: int = 0
    member_id: str = ""
    generation_id: int = -1
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader_id: str = ""
    members: tuple[tuple[str, str | None, bytes], ...] = ()
    skip_assignment: bool = False


@dataclass(frozen=True, slots=True)
class SyncResult:
    error: int = 0
    assignment: bytes = b""
    protocol_type: str | None = None
    protocol_name: str | None = None


@dataclass(slots=True)
class CommittedOffset:
    """A committed offset as kept in memory (OffsetCommitValue, plus when it was written)."""

    offset: int
    leader_epoch: int
    metadata: str
    commit_timestamp: int
    expire_timestamp: int = -1
    record_offset: int = -1
    """Base offset of the __consumer_offsets batch that holds it: of a regular and a
    transactional commit of one partition, the later-written one wins (Kafka's ``olderThan``)."""


@dataclass(eq=False, slots=True)
class Member:
    """A group member; ``protocols`` is its (name, metadata) list in preference order."""

    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    protocol_type: str
    protocols: list[tuple[str, bytes]]
    assignment: bytes = b""
    is_new: bool = False
    join_future: asyncio.Future[JoinResult] | None = None
    sync_future: asyncio.Future[SyncResult] | None = None
    heartbeat: asyncio.TimerHandle | None = None

    @property
    def awaiting_join(self) -> bool:
        return self.join_future is not None

    @property
    def awaiting_sync(self) -> bool:
        return self.sync_future is not None

    def metadata(self, protocol: str | None) -> bytes:
        for name, data in self.protocols:
            if name == protocol:
                return data
        return b""

    def matches(self, protocols: list[tuple[str, bytes]]) -> bool:
        """Same protocols with the same metadata in the same order (no rebalance needed)."""
        return self.protocols == protocols

    def vote(self, candidates: set[str]) -> str:
        """This member's most preferred protocol among those every member supports."""
        for name, _ in self.protocols:
            if name in candidates:
                return name
        raise ValueError(f"member {self.member_id} supports none of {sorted(candidates)}")

    def complete_join(self, result: JoinResult) -> None:
        fut, self.join_future = self.join_future, None
        if fut is not None and not fut.done():
            fut.set_result(result)

    def complete_sync(self, result: SyncResult) -> None:
        fut, self.sync_future = self.sync_future, None
        if fut is not None and not fut.done():
            fut.set_result(result)

    def cancel_heartbeat(self) -> None:
        if self.heartbeat is not None:
            self.heartbeat.cancel()
            self.heartbeat = None


@dataclass(eq=False)
class Group:
    """A classic group. Members keep join order: the first member is the first leader."""

    group_id: str
    state_timestamp: int
    state: GroupState = GroupState.EMPTY
    protocol_type: str | None = None
    protocol_name: str | None = None
    generation_id: int = 0
    leader_id: str | None = None
    members: dict[str, Member] = field(default_factory=dict)
    static_members: dict[str, str] = field(default_factory=dict)
    # KIP-394: ids handed out with MEMBER_ID_REQUIRED, not yet used to rejoin.
    pending_members: dict[str, asyncio.TimerHandle] = field(default_factory=dict)
    pending_sync: set[str] = field(default_factory=set)
    offsets: dict[tuple[str, int], CommittedOffset] = field(default_factory=dict)
    pending_txn_offsets: dict[int, dict[tuple[str, int], CommittedOffset]] = field(default_factory=dict)
    """Producer id -> offsets it committed in its open transaction (TxnOffsetCommit): not
    visible to OffsetFetch until the commit marker, dropped by an abort."""
    new_member_added: bool = False
    join_timer: asyncio.TimerHandle | None = None
    join_timer_initial: bool = False
    sync_timer: asyncio.TimerHandle | None = None

    # --- state ------------------------------------------------------------------------
    def is_(self, state: GroupState) -> bool:
        return self.state is state

    def transition(self, state: GroupState, now_ms: int) -> None:
        if self.state not in _VALID_PREVIOUS[state]:
            raise RuntimeError(f"group {self.group_id}: illegal transition {self.state.value} -> {state.value}")
        self.state = state
        self.state_timestamp = now_ms

    def can_rebalance(self) -> bool:
        return self.state in (GroupState.STABLE, GroupState.COMPLETING_REBALANCE, GroupState.EMPTY)

    # --- membership -------------------------------------------------------------------
    def add(self, member: Member) -> None:
        if not self.members:
            self.protocol_type = member.protocol_type
        self.members[member.member_id] = member
        if member.group_instance_id is not None:
            self.static_members[member.group_instance_id] = member.member_id
        if self.leader_id is None:
            self.leader_id = member.member_id

    def remove(self, member_id: str) -> Member | None:
        member = self.members.pop(member_id, None)
        if member is None:
            return None
        member.cancel_heartbeat()
        instance = member.group_instance_id
        if instance is not None and self.static_members.get(instance) == member_id:
            del self.static_members[instance]
        self.pending_sync.discard(member_id)
        if self.leader_id == member_id:
            self.leader_id = next(iter(self.members), None)
        return member

    def replace_static_member(self, instance_id: str, old_id: str, new_id: str) -> Member:
        """Give a restarted static member a new id, keeping its place, assignment and leadership."""
        member = self.members.pop(old_id)
        member.member_id = new_id
        self.members[new_id] = member
        self.static_members[instance_id] = new_id
        if self.leader_id == old_id:
            self.leader_id = new_id
        if old_id in self.pending_sync:
            self.pending_sync.discard(old_id)
            self.pending_sync.add(new_id)
        return member

    def static_member_id(self, instance_id: str) -> str | None:
        return self.static_members.get(instance_id)

    def num_awaiting_join(self) -> int:
        return sum(1 for m in self.members.values() if m.awaiting_join)

    def all_members_joined(self) -> bool:
        return len(self.members) == self.num_awaiting_join() and not self.pending_members

    def rebalance_timeout_ms(self) -> int:
        return max((m.rebalance_timeout_ms for m in self.members.values()), default=0)

    def elect_joined_leader(self) -> bool:
        """Keep the leader if it rejoined, else pick any member that did (Kafka's rule)."""
        if self.leader_id is None:
            return False
        leader = self.members.get(self.leader_id)
        if leader is not None and leader.awaiting_join:
            return True
        for member in self.members.values():
            if member.awaiting_join:
                self.leader_id = member.member_id
                return True
        return False

    # --- protocols --------------------------------------------------------------------
    def _protocol_counts(self) -> Counter[str]:
        """How many members support each protocol name (Kafka's ``supportedProtocols``)."""
        counts: Counter[str] = Counter()
        for m in self.members.values():
            counts.update({name for name, _ in m.protocols})
        return counts

    def candidate_protocols(self) -> set[str]:
        return {name for name, n in self._protocol_counts().items() if n == len(self.members)}

    def supports_protocols(self, protocol_type: str, names: list[str]) -> bool:
        """Kafka's ``ClassicGroup.supportsProtocols``: whether a member with these may join.

        An Empty group takes any non-empty protocol type and list. Otherwise the type must be
        the group's and one of ``names`` supported by every member, which with no members
        every name is: a group still rebalancing after its last member left, because a
        KIP-394 pending member may yet join, takes any protocol (a new member then gets
        MEMBER_ID_REQUIRED, not the INCONSISTENT_GROUP_PROTOCOL a Java consumer dies of).
        """
        if self.state is GroupState.EMPTY:
            return bool(protocol_type) and bool(names)
        if self.protocol_type != protocol_type:
            return False
        counts = self._protocol_counts()
        return any(counts[name] == len(self.members) for name in names)

    def select_protocol(self) -> str:
        """Each member votes for its preferred common protocol; most votes wins.

        Ties go to the protocol that got its first vote earliest in join order, so the
        choice is deterministic (Kafka's tie-break is a hash-map iteration order).
        """
        candidates = self.candidate_protocols()
        votes: Counter[str] = Counter(m.vote(candidates) for m in self.members.values())
        best = max(votes.values())
        return next(name for name in votes if votes[name] == best)

    def current_member_metadata(self) -> tuple[tuple[str, str | None, bytes], ...]:
        """The member list the leader receives: id, instance id, metadata of the chosen protocol."""
        return tuple(
            (m.member_id, m.group_instance_id, m.metadata(self.protocol_name)) for m in self.members.values()
        )

    def init_next_generation(self, now_ms: int) -> None:
        self.generation_id += 1
        if self.members:
            self.protocol_name = self.select_protocol()
            self.transition(GroupState.COMPLETING_REBALANCE, now_ms)
        else:
            self.protocol_name = None
            self.transition(GroupState.EMPTY, now_ms)
        self.pending_sync.clear()

    def join_result(self, member: Member, *, with_members: bool) -> JoinResult:
        return JoinResult(
            member_id=member.member_id,
            generation_id=self.generation_id,
            protocol_type=self.protocol_type,
            protocol_name=self.protocol_name,
            leader_id=self.leader_id or "",
            members=self.current_member_metadata() if with_members else (),
        )

    # --- timers -----------------------------------------------------------------------
    def cancel_join_timer(self) -> None:
        if self.join_timer is not None:
            self.join_timer.cancel()
            self.join_timer = None

    def cancel_sync_timer(self) -> None:
        if self.sync_timer is not None:
            self.sync_timer.cancel()
            self.sync_timer = None

    def cancel_all_timers(self) -> None:
        self.cancel_join_timer()
        self.cancel_sync_timer()
        for handle in self.pending_members.values():
            handle.cancel()
        for m in self.members.values():
            m.cancel_heartbeat()
