"""ConsumerGroupHeartbeat: the KIP-848 consumer group protocol on one node.

One heartbeat does what JoinGroup, SyncGroup and Heartbeat do in the classic protocol,
as Kafka's ``GroupMetadataManager.consumerGroupHeartbeat``:

1. the member is created or updated (epoch 0 joins; -1 leaves; -2 is a static member
   leaving for now, keeping its partitions for its session timeout); a change of its
   subscription, or of a subscribed topic, bumps the **group epoch**;
2. when the group epoch is ahead of the assignment epoch the server-side assignor
   (:mod:`~seaway.broker.coordinator.assignors`) computes every member's **target**;
3. the member's current assignment takes its next step towards its target
   (:mod:`~seaway.broker.coordinator.reconcile`).

Everything a heartbeat changes is first written to ``__consumer_offsets`` as the records
of :mod:`~seaway.broker.coordinator.consumer_records`, one batch, and only then applied
to memory with the very code replay uses; a failed write changes nothing and the member
gets the error. Each member has one ``loop.call_later`` session deadline
(``group.consumer.session.timeout.ms``, renewed by every heartbeat) and, while it has
partitions to revoke, a rebalance deadline (its ``rebalance.timeout.ms``); either fences
it: its records are tombstoned and the group epoch moves, so the others take over its
partitions at their next heartbeat.

A group id is one type: a classic group that is empty (no members, only offsets) becomes
a consumer group when a member joins with epoch 0 (its GroupMetadata is tombstoned, its
offsets stay); a classic group with members answers GROUP_ID_NOT_FOUND. The reverse,
an empty consumer group joined by a classic JoinGroup, is :meth:`ConsumerGroupCoordinator.to_classic`.
Kafka's online migration of groups *with* members between protocols is not done here.
"""

from __future__ import annotations

import logging
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from seaway.broker.context import now_ms
from seaway.broker.coordinator.assignors import MemberSpec, assignor_named
from seaway.broker.coordinator.consumer_group import (
    EMPTY_ASSIGNMENT,
    LEAVE_GROUP_MEMBER_EPOCH,
    LEAVE_GROUP_STATIC_MEMBER_EPOCH,
    ConsumerGroup,
    ConsumerMember,
    MemberState,
)
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
    encode_record,
)
from seaway.broker.coordinator.group import Group, GroupState
from seaway.broker.coordinator.offsets_topic import encode_group_metadata_key
from seaway.broker.coordinator.reconcile import next_assignment
from seaway.broker.coordinator.subscriptions import RegexResolver, compile_regex, subscription_metadata
from seaway.broker.log.log_manager import kafka_uuid
from seaway.protocol.errors import (
    CoordinatorNotAvailableError,
    FencedInstanceIdError,
    FencedMemberEpochError,
    GroupIdNotFoundError,
    GroupMaxSizeReachedError,
    InvalidRequestError,
    KafkaProtocolError,
    KafkaStorageError,
    NotCoordinatorError,
    NotEnoughReplicasError,
    UnknownMemberIdError,
    UnknownServerError,
    UnknownTopicOrPartitionError,
    UnreleasedInstanceIdError,
    UnsupportedAssignorError,
)

if TYPE_CHECKING:
    from seaway.broker.coordinator.coordinator import GroupCoordinator
    from seaway.broker.log.log_manager import TopicMetadata

__all__ = ["ConsumerGroupCoordinator", "ConsumerGroupSettings", "HeartbeatRequest", "HeartbeatResult"]

log = logging.getLogger("seaway.broker.coordinator")

_INT_MAX = 2**31 - 1
_FRESH = CurrentAssignment(0, 0, int(MemberState.STABLE), EMPTY_ASSIGNMENT, EMPTY_ASSIGNMENT)
_NO_SUBSCRIPTION = MemberSubscription(None, None, "", "", (), None, -1, None)

MayDescribe = Callable[[str], bool]


@dataclass(frozen=True, slots=True)
class ConsumerGroupSettings:
    """The ``group.consumer.*`` broker configs, with Kafka's names and defaults."""

    session_timeout_ms: int = 45_000
    heartbeat_interval_ms: int = 5_000
    max_size: int = _INT_MAX
    assignors: tuple[str, ...] = ("uniform", "range")

    @classmethod
    def from_config(cls, config: Any) -> ConsumerGroupSettings:
        d = cls()
        configured = getattr(config, "group_consumer_assignors", None) or d.assignors
        names = tuple(a.name for a in (assignor_named(str(n)) for n in configured) if a is not None)
        return cls(
            session_timeout_ms=getattr(config, "group_consumer_session_timeout_ms", d.session_timeout_ms),
            heartbeat_interval_ms=getattr(config, "group_consumer_heartbeat_interval_ms", d.heartbeat_interval_ms),
            max_size=getattr(config, "group_consumer_max_size", d.max_size),
            assignors=names or d.assignors,
        )


@dataclass(frozen=True, slots=True)
class HeartbeatRequest:
    """A ConsumerGroupHeartbeat, decoded; ``None`` fields did not change since the last one."""

    group_id: str
    member_id: str
    member_epoch: int
    instance_id: str | None = None
    rack_id: str | None = None
    rebalance_timeout_ms: int = -1
    topic_names: tuple[str, ...] | None = None
    topic_regex: str | None = None
    server_assignor: str | None = None
    owned: Assignment | None = None
    client_id: str = ""
    client_host: str = ""


@dataclass(frozen=True, slots=True)
class HeartbeatResult:
    member_id: str
    member_epoch: int
    heartbeat_interval_ms: int
    assignment: Assignment | None = None
    """The member's partitions when it must hear them (a full request, or they changed)."""


def append_error(exc: BaseException) -> KafkaProtocolError:
    """What a failed append of the group's records answers (Kafka's handleOperationException)."""
    if isinstance(exc, UnknownTopicOrPartitionError | NotEnoughReplicasError | CoordinatorNotAvailableError):
        return CoordinatorNotAvailableError(str(exc))
    if isinstance(exc, KafkaStorageError | OSError):
        return NotCoordinatorError(f"could not write to __consumer_offsets: {exc}")
    return UnknownServerError(f"could not write to __consumer_offsets: {exc}")


class ConsumerGroupCoordinator:
    """Consumer groups of one :class:`GroupCoordinator` (they share its group ids and log)."""

    def __init__(self, coord: GroupCoordinator, settings: ConsumerGroupSettings) -> None:
        self.coord = coord
        self.settings = settings
        self.regexes = RegexResolver()

    # ================================================================== heartbeat
    def heartbeat(self, req: HeartbeatRequest, may_describe: MayDescribe) -> HeartbeatResult:
        """Handle one heartbeat; raises the error Kafka would answer with."""
        self.coord.check_ready()
        self._validate(req)
        if req.member_epoch in (LEAVE_GROUP_MEMBER_EPOCH, LEAVE_GROUP_STATIC_MEMBER_EPOCH):
            return self._leave(req)
        raw: list[tuple[bytes, bytes | None]] = []
        group = self._group_to_join(req, raw)
        gid = group.group_id
        member_id = req.member_id or kafka_uuid(uuid.uuid4())
        if member_id not in group.members and len(group.members) >= self.settings.max_size:
            raise GroupMaxSizeReachedError(f"The consumer group has reached its maximum capacity of "
                                           f"{self.settings.max_size} members.")
        records: list[ConsumerGroupRecord] = []
        existing, current, replaced = self._member(group, member_id, req, records)
        old_sub = replaced.subscription() if replaced is not None else (
            existing.subscription() if existing is not None else None)
        new_sub = _updated(old_sub or _NO_SUBSCRIPTION, req)
        if existing is None or new_sub != existing.subscription():
            records.append(ConsumerGroupRecord(MEMBER_SUBSCRIPTION, gid, member_id, new_sub))

        # 1. the group epoch: a new group, a new or changed subscription, or changed topics
        bump = group.group_epoch == 0 or old_sub is None or (
            (old_sub.topic_names, old_sub.topic_regex) != (new_sub.topic_names, new_sub.topic_regex))
        topics = self.coord.broker.logs.topics()
        leaving = replaced.member_id if replaced is not None else member_id
        resolved: dict[str, frozenset[str]] | None = None
        if not bump and replaced is None and not group.regex_counts and not new_sub.topic_regex:
            # The steady heartbeat: nothing changed and no regex anywhere, so the group's
            # topics are exactly the names its members subscribe to (O(topics), not O(members)).
            metadata = subscription_metadata(group.topic_counts, topics)
        else:
            resolved = self._resolve(group, {leaving: None, member_id: new_sub}, topics, may_describe)
            metadata = subscription_metadata(set().union(*resolved.values()) if resolved else (), topics)
        if metadata != group.subscription_metadata:
            records.append(ConsumerGroupRecord(SUBSCRIPTION_METADATA, gid, None, metadata))
            bump = True
        epoch = group.group_epoch + 1 if bump else group.group_epoch
        if bump:
            records.append(ConsumerGroupRecord(GROUP_EPOCH, gid, None, epoch))

        # 2. the target assignment, when the group epoch moved past it
        if epoch > group.assignment_epoch:
            if resolved is None:
                resolved = self._resolve(group, {leaving: None, member_id: new_sub}, topics, may_describe)
            targets = self._assign(group, resolved, metadata, member_id, new_sub, replaced)
            for mid, assignment in targets.items():
                if group.target.get(mid) != assignment or mid == member_id:
                    records.append(ConsumerGroupRecord(TARGET_MEMBER, gid, mid, assignment))
            records.append(ConsumerGroupRecord(TARGET_EPOCH, gid, None, epoch))
            target_epoch, target = epoch, targets.get(member_id, EMPTY_ASSIGNMENT)
        else:
            target_epoch = group.assignment_epoch
            target = group.target.get(member_id, group.target.get(leaving, EMPTY_ASSIGNMENT))

        # 3. the member's next step towards its target
        def is_free(tp: tuple[uuid.UUID, int]) -> bool:
            owner = group.owners.get(tp)
            return owner is None or (owner == member_id and tp not in current.pending_revocation)

        nxt = next_assignment(current, target_epoch, target, is_free, req.owned)
        if existing is None or nxt != existing.current():
            records.append(ConsumerGroupRecord(CURRENT_ASSIGNMENT, gid, member_id, nxt))

        self._write(group, records, raw)
        member = group.members[member_id]
        self._schedule_session(group, member)
        if any(r.type == CURRENT_ASSIGNMENT and r.member_id == member_id for r in records):
            self._schedule_rebalance(group, member)
        full = req.member_epoch == 0 or (req.rebalance_timeout_ms != -1 and req.topic_names is not None
                                         and req.owned is not None)
        changed = member.assigned != current.assigned
        return HeartbeatResult(member_id, member.member_epoch, self.settings.heartbeat_interval_ms,
                               member.assigned if full or changed else None)

    def _validate(self, req: HeartbeatRequest) -> None:
        """Kafka's throwIfConsumerGroupHeartbeatRequestIsInvalid (regexes are served here)."""
        if not req.group_id:
            raise InvalidRequestError("GroupId can't be empty.")
        if req.instance_id == "":
            raise InvalidRequestError("InstanceId can't be empty.")
        if req.rack_id == "":
            raise InvalidRequestError("RackId can't be empty.")
        epoch = req.member_epoch
        if epoch > 0 or epoch == LEAVE_GROUP_MEMBER_EPOCH:
            if not req.member_id:
                raise InvalidRequestError("MemberId can't be empty.")
        elif epoch == 0:
            if req.rebalance_timeout_ms == -1:
                raise InvalidRequestError("RebalanceTimeoutMs must be provided in first request.")
            if req.owned is None or req.owned:
                raise InvalidRequestError("TopicPartitions must be empty when (re-)joining.")
            if not req.topic_names and not req.topic_regex:
                raise InvalidRequestError("SubscribedTopicNames or SubscribedTopicRegex must be set in first "
                                          "request.")
        elif epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
            if not req.member_id:
                raise InvalidRequestError("MemberId can't be empty.")
            if req.instance_id is None:
                raise InvalidRequestError("InstanceId can't be null.")
        else:
            raise InvalidRequestError("MemberEpoch is invalid.")
        if req.server_assignor is not None and req.server_assignor not in self.settings.assignors:
            raise UnsupportedAssignorError(f"ServerAssignor {req.server_assignor} is not supported. Supported "
                                           f"assignors: {', '.join(self.settings.assignors)}.")
        if req.topic_regex:
            compile_regex(req.topic_regex)

    def _group_to_join(self, req: HeartbeatRequest, raw: list[tuple[bytes, bytes | None]]) -> ConsumerGroup:
        """The consumer group of the request, created (or converted from an empty classic group)
        for a join; GROUP_ID_NOT_FOUND otherwise."""
        gid = req.group_id
        group = self.coord.groups.get(gid)
        if isinstance(group, ConsumerGroup):
            return group
        joining = req.member_epoch == 0
        if group is None:
            if not joining:
                raise GroupIdNotFoundError(f"Consumer group {gid} not found.")
            return ConsumerGroup(gid, now_ms())
        if not joining or not _is_empty_classic(group):
            raise GroupIdNotFoundError(f"Group {gid} is not a consumer group.")
        converted = ConsumerGroup(gid, now_ms(), offsets=group.offsets, pending_txn_offsets=group.pending_txn_offsets)
        if group.protocol_type is not None:
            raw.append((encode_group_metadata_key(gid), None))
        return converted

    def _member(self, group: ConsumerGroup, member_id: str, req: HeartbeatRequest,
                records: list[ConsumerGroupRecord]) -> tuple[ConsumerMember | None, CurrentAssignment,
                                                            ConsumerMember | None]:
        """(the member as it is, its current assignment to reconcile from, a static member it replaces)."""
        existing = group.members.get(member_id)
        if req.instance_id is not None:
            static = group.static_member(req.instance_id)
            if req.member_epoch == 0 and static is not None and static.member_id != member_id:
                if static.member_epoch != LEAVE_GROUP_STATIC_MEMBER_EPOCH:
                    raise UnreleasedInstanceIdError(
                        f"Static member {member_id} with instance id {req.instance_id} cannot join the group "
                        f"because the instance id is owned by {static.member_id} member.")
                # KIP-345 for KIP-848: the new member takes over the old one's partitions.
                gid = group.group_id
                records += [ConsumerGroupRecord(CURRENT_ASSIGNMENT, gid, static.member_id),
                            ConsumerGroupRecord(TARGET_MEMBER, gid, static.member_id),
                            ConsumerGroupRecord(MEMBER_SUBSCRIPTION, gid, static.member_id)]
                if static.member_id in group.target:
                    records.append(ConsumerGroupRecord(TARGET_MEMBER, gid, member_id, group.target[static.member_id]))
                current = CurrentAssignment(0, 0, int(static.state), static.assigned, static.pending_revocation)
                return None, current, static
            if req.member_epoch != 0:
                if static is None:
                    raise UnknownMemberIdError(f"Instance id {req.instance_id} is unknown.")
                if static.member_id != member_id:
                    raise FencedInstanceIdError(f"Static member {member_id} with instance id {req.instance_id} "
                                                f"was fenced by member {static.member_id}.")
        if existing is None:
            if req.member_epoch != 0:
                raise UnknownMemberIdError(f"Member {member_id} is not a member of group {group.group_id}.")
            return None, _FRESH, None
        if req.member_epoch == 0:
            # A member rejoining under its id has given up every partition (it must send none):
            # it starts over instead of being fenced until its session runs out.
            return existing, CurrentAssignment(0, existing.member_epoch, int(MemberState.STABLE),
                                               EMPTY_ASSIGNMENT, EMPTY_ASSIGNMENT), None
        _check_epoch(existing, req.member_epoch, req.owned)
        return existing, existing.current(), None

    # ================================================================== subscriptions, assignment
    def _resolve(self, group: ConsumerGroup, changes: Mapping[str, MemberSubscription | None],
                 topics: Mapping[str, TopicMetadata], may_describe: MayDescribe) -> dict[str, frozenset[str]]:
        """Each member's subscribed topic names (regexes resolved), with ``changes`` applied
        (member id -> its new subscription, None: gone)."""
        subs: dict[str, MemberSubscription] = {mid: m.subscription() for mid, m in group.members.items()}
        for mid, sub in changes.items():
            if sub is None:
                subs.pop(mid, None)
        subs.update({mid: sub for mid, sub in changes.items() if sub is not None})
        out: dict[str, frozenset[str]] = {}
        for mid, sub in subs.items():
            names = frozenset(sub.topic_names)
            if sub.topic_regex:
                names |= self.regexes.resolve(group.group_id, sub.topic_regex, topics, may_describe)
            out[mid] = names
        if group.regex_counts or any(s.topic_regex for s in subs.values()):
            self.regexes.forget(group.group_id, {s.topic_regex for s in subs.values() if s.topic_regex})
        return out

    def _assign(self, group: ConsumerGroup, resolved: Mapping[str, frozenset[str]], metadata: tuple[TopicInfo, ...],
                member_id: str, new_sub: MemberSubscription, replaced: ConsumerMember | None) -> dict[str, Assignment]:
        ids = {t.name: t.topic_id for t in metadata}
        counts = {t.topic_id: t.num_partitions for t in metadata}
        specs = []
        for mid, names in resolved.items():
            previous = group.target.get(mid)
            if previous is None and mid == member_id and replaced is not None:
                previous = group.target.get(replaced.member_id)
            instance = new_sub.instance_id if mid == member_id else group.members[mid].instance_id
            specs.append(MemberSpec(mid, instance, frozenset(ids[n] for n in names if n in ids),
                                    previous or EMPTY_ASSIGNMENT))
        preferred = Counter(new_sub.server_assignor if mid == member_id else group.members[mid].server_assignor
                            for mid in resolved)
        preferred.pop(None, None)
        name = preferred.most_common(1)[0][0] if preferred else self.settings.assignors[0]
        assignor = assignor_named(name or self.settings.assignors[0])
        assert assignor is not None
        return assignor.assign(specs, counts)

    # ================================================================== leaving, fencing
    def _leave(self, req: HeartbeatRequest) -> HeartbeatResult:
        group = self.coord.groups.get(req.group_id)
        if not isinstance(group, ConsumerGroup):
            raise GroupIdNotFoundError(f"Consumer group {req.group_id} not found." if group is None
                                       else f"Group {req.group_id} is not a consumer group.")
        if req.instance_id is None:
            member = group.members.get(req.member_id)
            if member is None:
                raise UnknownMemberIdError(f"Member {req.member_id} is not a member of group {group.group_id}.")
        else:
            static = group.static_member(req.instance_id)
            if static is None:
                raise UnknownMemberIdError(f"Instance id {req.instance_id} is unknown.")
            if static.member_id != req.member_id:
                raise FencedInstanceIdError(f"Static member {req.member_id} with instance id {req.instance_id} "
                                            f"was fenced by member {static.member_id}.")
            member = static
            if req.member_epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
                gone = CurrentAssignment(LEAVE_GROUP_STATIC_MEMBER_EPOCH, member.previous_member_epoch,
                                         int(member.state), member.assigned, EMPTY_ASSIGNMENT)
                self._write(group, [ConsumerGroupRecord(CURRENT_ASSIGNMENT, group.group_id, member.member_id, gone)])
                log.info("static member %s (instance %s) of group %s left for now", member.member_id,
                         req.instance_id, group.group_id)
                return HeartbeatResult(member.member_id, LEAVE_GROUP_STATIC_MEMBER_EPOCH, 0)
        self.fence(group, member, "it left the group")
        return HeartbeatResult(req.member_id, req.member_epoch, 0)

    def fence(self, group: ConsumerGroup, member: ConsumerMember, reason: str) -> None:
        """Remove ``member`` (tombstones, a new group epoch); raises if the write fails."""
        gid, mid = group.group_id, member.member_id
        records = [ConsumerGroupRecord(CURRENT_ASSIGNMENT, gid, mid), ConsumerGroupRecord(TARGET_MEMBER, gid, mid),
                   ConsumerGroupRecord(MEMBER_SUBSCRIPTION, gid, mid)]
        # What the others still subscribe to; regexes only ever resolved to topics already in
        # the subscription metadata (checked against the member that resolved them).
        others = [m for m in group.members.values() if m is not member]
        names = {n for m in others for n in m.topic_names}
        patterns = {m.topic_regex for m in others if m.topic_regex}
        names.update(t.name for t in group.subscription_metadata
                     if any(self.regexes.matches(p, t.name) for p in patterns))
        metadata = subscription_metadata(names, self.coord.broker.logs.topics())
        self.regexes.forget(gid, patterns)
        if metadata != group.subscription_metadata:
            records.append(ConsumerGroupRecord(SUBSCRIPTION_METADATA, gid, None, metadata))
        records.append(ConsumerGroupRecord(GROUP_EPOCH, gid, None, group.group_epoch + 1))
        self._write(group, records)
        log.info("member %s left consumer group %s (epoch %d): %s", mid, gid, group.group_epoch, reason)

    def _fence_quietly(self, group: ConsumerGroup, member: ConsumerMember, reason: str) -> None:
        if self.coord.groups.get(group.group_id) is not group or group.members.get(member.member_id) is not member:
            return
        try:
            self.fence(group, member, reason)
        except KafkaProtocolError as exc:  # the log is unwritable: try again at the next deadline
            log.error("could not fence member %s of group %s: %s", member.member_id, group.group_id, exc)
            self._schedule_session(group, member)

    # ================================================================== timers
    def _schedule_session(self, group: ConsumerGroup, member: ConsumerMember) -> None:
        if member.session_timer is not None:
            member.session_timer.cancel()
        member.session_timer = self.coord.loop.call_later(
            self.settings.session_timeout_ms / 1000, self._on_session_timeout, group, member)

    def _on_session_timeout(self, group: ConsumerGroup, member: ConsumerMember) -> None:
        member.session_timer = None
        self._fence_quietly(group, member, "the member session expired")

    def _schedule_rebalance(self, group: ConsumerGroup, member: ConsumerMember) -> None:
        """Arm the revocation deadline while the member has partitions to give up, else disarm it."""
        if member.state is not MemberState.UNREVOKED_PARTITIONS:
            if member.rebalance_timer is not None:
                member.rebalance_timer.cancel()
            member.rebalance_timer, member.rebalance_timer_epoch = None, -1
            return
        if member.rebalance_timer is not None and member.rebalance_timer_epoch == member.member_epoch:
            return
        if member.rebalance_timer is not None:
            member.rebalance_timer.cancel()
        timeout_ms = member.rebalance_timeout_ms if member.rebalance_timeout_ms > 0 else 300_000
        member.rebalance_timer_epoch = member.member_epoch
        member.rebalance_timer = self.coord.loop.call_later(
            timeout_ms / 1000, self._on_rebalance_timeout, group, member, member.member_epoch)

    def _on_rebalance_timeout(self, group: ConsumerGroup, member: ConsumerMember, epoch: int) -> None:
        member.rebalance_timer, member.rebalance_timer_epoch = None, -1
        if member.member_epoch == epoch and member.state is MemberState.UNREVOKED_PARTITIONS:
            self._fence_quietly(group, member, f"it did not revoke its partitions within "
                                               f"{member.rebalance_timeout_ms} ms at epoch {epoch}")

    def start_timers(self, group: ConsumerGroup) -> None:
        """After a load: every member gets a full session, and a revocation deadline if it owes one."""
        for member in group.members.values():
            self._schedule_session(group, member)
            self._schedule_rebalance(group, member)

    # ================================================================== persistence
    def _write(self, group: ConsumerGroup, records: Iterable[ConsumerGroupRecord],
               raw: Iterable[tuple[bytes, bytes | None]] = ()) -> None:
        """Append the records as one batch, then apply them; nothing changes if the append fails."""
        batch = list(records)
        entries = [*raw, *(encode_record(r) for r in batch)]
        if entries:
            try:
                self.coord.store.write(group.group_id, entries, now_ms())
            except (KafkaProtocolError, OSError) as exc:
                log.error("could not write consumer group %s: %s", group.group_id, exc)
                raise append_error(exc) from exc
        if self.coord.groups.get(group.group_id) is not group:
            previous = self.coord.groups.get(group.group_id)
            if previous is not None:
                previous.cancel_all_timers()
            self.coord.groups[group.group_id] = group
            group.state_timestamp = now_ms()
        before = group.is_empty()
        for record in batch:
            group.apply(record)
        if group.is_empty() != before:
            group.state_timestamp = now_ms()

    def delete(self, group: ConsumerGroup, raw: Iterable[tuple[bytes, bytes | None]] = ()) -> None:
        """Tombstone the whole group (with ``raw`` records, e.g. offset tombstones) and forget it."""
        entries = [*raw, *(encode_record(r) for r in group.tombstones())]
        try:
            self.coord.store.write(group.group_id, entries, now_ms())
        except (KafkaProtocolError, OSError) as exc:
            raise append_error(exc) from exc
        group.cancel_all_timers()
        group.dead = True
        self.regexes.forget(group.group_id)
        if self.coord.groups.get(group.group_id) is group:
            del self.coord.groups[group.group_id]

    def to_classic(self, group: ConsumerGroup) -> Group:
        """An empty consumer group joined through JoinGroup becomes a classic group (offsets kept)."""
        self.delete(group)
        classic = Group(group.group_id, now_ms(), offsets=group.offsets,
                        pending_txn_offsets=group.pending_txn_offsets)
        self.coord.groups[group.group_id] = classic
        log.info("empty consumer group %s becomes a classic group", group.group_id)
        return classic


def _is_empty_classic(group: Group) -> bool:
    return group.is_(GroupState.EMPTY) and not group.members and not group.pending_members


def _check_epoch(member: ConsumerMember, received: int, owned: Assignment | None) -> None:
    """Kafka's throwIfConsumerGroupMemberEpochIsInvalid; a lost response's previous epoch is accepted."""
    if received > member.member_epoch:
        raise FencedMemberEpochError(
            f"The consumer group member has a greater member epoch ({received}) than the one known by the group "
            f"coordinator ({member.member_epoch}). The member must abandon all its partitions and rejoin.")
    if received < member.member_epoch and (
            received != member.previous_member_epoch or owned is None or not owned <= member.assigned):
        raise FencedMemberEpochError(
            f"The consumer group member has a smaller member epoch ({received}) than the one known by the group "
            f"coordinator ({member.member_epoch}). The member must abandon all its partitions and rejoin.")


def _updated(base: MemberSubscription, req: HeartbeatRequest) -> MemberSubscription:
    """The member's subscription after the request (``None`` fields keep what it had)."""
    regex = base.topic_regex if req.topic_regex is None else (req.topic_regex or None)
    return MemberSubscription(
        instance_id=req.instance_id if req.instance_id is not None else base.instance_id,
        rack_id=req.rack_id if req.rack_id is not None else base.rack_id,
        client_id=req.client_id,
        client_host=req.client_host,
        topic_names=base.topic_names if req.topic_names is None else tuple(sorted(set(req.topic_names))),
        topic_regex=regex,
        rebalance_timeout_ms=req.rebalance_timeout_ms if req.rebalance_timeout_ms != -1 else base.rebalance_timeout_ms,
        server_assignor=req.server_assignor if req.server_assignor is not None else base.server_assignor,
    )
