"""The group coordinator: Kafka's classic rebalance protocol on one node.

JoinGroup parks the member on an asyncio future until the rebalance completes; SyncGroup
parks followers until the leader sends the assignments. Nothing polls: every deadline is
one ``loop.call_later`` handle (a member's session, a group's rebalance, a group's pending
syncs, a KIP-394 pending member), cancelled when the event it guards happens. The rules
(which error when, who leads, which protocol wins, what a static member keeps) follow
Kafka's ``GroupCoordinator.scala``; the comments name the Kafka behaviour where it is not
obvious. Offsets and the admin APIs are in :mod:`seaway.broker.coordinator.offsets`.

Lifecycle: :meth:`GroupCoordinator.start` creates ``__consumer_offsets`` if missing and
replays it on a worker thread; until that is done every group API answers
COORDINATOR_LOAD_IN_PROGRESS (COORDINATOR_NOT_AVAILABLE while the topic cannot be made).
Loaded groups with members come back Stable with their session timers running, so
consumers that keep heartbeating after a broker restart keep their generation.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from dataclasses import dataclass, field
from typing import Any

from seaway.broker.context import BrokerContext, now_ms
from seaway.broker.coordinator.consumer_coordinator import ConsumerGroupCoordinator, ConsumerGroupSettings
from seaway.broker.coordinator.consumer_group import ConsumerGroup
from seaway.broker.coordinator.group import (
    CommittedOffset,
    Group,
    GroupState,
    JoinResult,
    Member,
    SyncResult,
)
from seaway.broker.coordinator.offsets_topic import (
    GroupMetadataValue,
    MemberMetadataValue,
    encode_group_metadata,
    encode_group_metadata_key,
)
from seaway.broker.coordinator.store import LoadedState, OffsetsStore
from seaway.protocol.errors import (
    CoordinatorLoadInProgressError,
    CoordinatorNotAvailableError,
    FencedInstanceIdError,
    GroupMaxSizeReachedError,
    IllegalGenerationError,
    InconsistentGroupProtocolError,
    InvalidGroupIdError,
    InvalidSessionTimeoutError,
    KafkaProtocolError,
    MemberIdRequiredError,
    RebalanceInProgressError,
    UnknownMemberIdError,
)

__all__ = ["CoordinatorSettings", "GroupCoordinator", "JoinRequest"]

log = logging.getLogger("seaway.broker.coordinator")

# Kafka's NewMemberJoinTimeoutMs: a new member parked in JoinGroup cannot heartbeat, so a
# client that gave up and retried would otherwise leave defunct members behind forever.
NEW_MEMBER_JOIN_TIMEOUT_MS = 300_000
_INT_MAX = 2**31 - 1


@dataclass(frozen=True, slots=True)
class CoordinatorSettings:
    """The broker configs the coordinator uses, with Kafka's names and defaults."""

    offsets_topic_num_partitions: int = 50
    offsets_topic_segment_bytes: int = 100 * 1024 * 1024
    offsets_retention_ms: int = 7 * 24 * 3600 * 1000
    offsets_retention_check_interval_ms: int = 600_000
    offset_metadata_max_bytes: int = 4096
    group_initial_rebalance_delay_ms: int = 3000
    group_min_session_timeout_ms: int = 6000
    group_max_session_timeout_ms: int = 1_800_000
    group_max_size: int = _INT_MAX
    consumer: ConsumerGroupSettings = field(default_factory=ConsumerGroupSettings)
    """The ``group.consumer.*`` configs of KIP-848 consumer groups."""

    @classmethod
    def from_config(cls, config: Any) -> CoordinatorSettings:
        """Read the typed attributes of :class:`~seaway.broker.config.BrokerConfig`."""
        d = cls()
        return cls(
            offsets_topic_num_partitions=getattr(config, "offsets_topic_num_partitions",
                                                 d.offsets_topic_num_partitions),
            offsets_topic_segment_bytes=getattr(config, "offsets_topic_segment_bytes",
                                                d.offsets_topic_segment_bytes),
            offsets_retention_ms=getattr(config, "offsets_retention_minutes", 10080) * 60_000,
            offsets_retention_check_interval_ms=getattr(config, "offsets_retention_check_interval_ms",
                                                        d.offsets_retention_check_interval_ms),
            offset_metadata_max_bytes=getattr(config, "offset_metadata_max_bytes", d.offset_metadata_max_bytes),
            group_initial_rebalance_delay_ms=getattr(config, "group_initial_rebalance_delay_ms",
                                                     d.group_initial_rebalance_delay_ms),
            group_min_session_timeout_ms=getattr(config, "group_min_session_timeout_ms",
                                                 d.group_min_session_timeout_ms),
            group_max_session_timeout_ms=getattr(config, "group_max_session_timeout_ms",
                                                 d.group_max_session_timeout_ms),
            group_max_size=getattr(config, "group_max_size", d.group_max_size),
            consumer=ConsumerGroupSettings.from_config(config),
        )


@dataclass(frozen=True, slots=True)
class JoinRequest:
    """A JoinGroup, version-independent (the handler fills in what old versions lack)."""

    group_id: str
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    session_timeout_ms: int
    rebalance_timeout_ms: int
    protocol_type: str
    protocols: list[tuple[str, bytes]]
    require_known_member_id: bool
    supports_skip_assignment: bool


class GroupCoordinator:
    """All groups of this broker (see module docstring). Runs on the event loop thread."""

    def __init__(self, broker: BrokerContext, settings: CoordinatorSettings) -> None:
        self.broker = broker
        self.settings = settings
        self.store = OffsetsStore(broker, settings.offsets_topic_num_partitions,
                                  settings.offsets_topic_segment_bytes)
        self.groups: dict[str, Group | ConsumerGroup] = {}
        """Every group id, of either type: classic (JoinGroup) or consumer (KIP-848)."""
        self.consumer = ConsumerGroupCoordinator(self, settings.consumer)
        self.topic_ready = False
        self.loaded = False
        self._tasks: list[asyncio.Task[None]] = []
        self._loop: asyncio.AbstractEventLoop | None = None

    # ================================================================== lifecycle
    def start(self) -> None:
        """Begin loading in the background (called from the running event loop)."""
        self._loop = asyncio.get_running_loop()
        self._tasks.append(self._loop.create_task(self._load()))

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        if self._loop is None:
            self._loop = asyncio.get_running_loop()
        return self._loop

    async def _load(self) -> None:
        delay = 0.5
        while True:
            try:
                if not self.topic_ready:
                    await asyncio.to_thread(self.store.ensure_topic)
                    self.topic_ready = True
                started = self.loop.time()
                state = await asyncio.to_thread(self.store.replay)
                break
            except Exception as exc:  # a full disk, an unreadable segment: keep answering retriably
                log.error("cannot load the offsets topic (%s); retrying in %.1fs", exc, delay)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 10.0)
        self._install_loaded(state)
        self.loaded = True
        log.info("loaded %d groups and %d offsets from %d records in %.3fs", len(self.groups),
                 sum(len(g.offsets) for g in self.groups.values()), state.records, self.loop.time() - started)
        from seaway.broker.coordinator.offsets import expire_offsets_forever

        self._tasks.append(self.loop.create_task(expire_offsets_forever(self)))

    def _install_loaded(self, state: LoadedState) -> None:
        now = now_ms()
        pending_groups = {g for groups in state.pending.values() for g in groups}
        consumer_groups = {g for g, records in state.consumer.items() if records}
        for group_id in state.groups.keys() | state.offsets.keys() | pending_groups | consumer_groups:
            group: Group | ConsumerGroup
            if group_id in consumer_groups:
                group = self._restore_consumer_group(group_id, state, now)
            else:
                group = Group(group_id, now)
                value = state.groups.get(group_id)
                if value is not None:
                    self._restore_group(group, value)
            for tp, (v, at) in state.offsets.get(group_id, {}).items():
                group.offsets[tp] = CommittedOffset(v.offset, v.leader_epoch, v.metadata, v.commit_timestamp,
                                                    v.expire_timestamp, at)
            self.groups[group_id] = group
        for producer_id, groups in state.pending.items():
            for group_id, offsets in groups.items():
                if offsets:
                    self.groups[group_id].pending_txn_offsets[producer_id] = {
                        tp: CommittedOffset(v.offset, v.leader_epoch, v.metadata, v.commit_timestamp,
                                            v.expire_timestamp, at)
                        for tp, (v, at) in offsets.items()}

    def _restore_consumer_group(self, group_id: str, state: LoadedState, now: int) -> ConsumerGroup:
        """A consumer group from its latest records; members get a full session from now."""
        group = ConsumerGroup(group_id, now)
        for record in sorted(state.consumer[group_id].values(), key=lambda r: r.type):
            group.apply(record)
        if group_id in state.groups:
            log.warning("group %s has classic and consumer group records; loading it as a consumer group",
                        group_id)
        self.consumer.start_timers(group)
        return group

    def _restore_group(self, group: Group, value: GroupMetadataValue) -> None:
        group.protocol_type = value.protocol_type or None
        group.generation_id = value.generation
        group.protocol_name = value.protocol
        for m in value.members:
            member = Member(m.member_id, m.group_instance_id, m.client_id, m.client_host, m.rebalance_timeout,
                            m.session_timeout, value.protocol_type, [(value.protocol or "", m.subscription)],
                            assignment=m.assignment)
            group.members[m.member_id] = member
            if m.group_instance_id is not None:
                group.static_members[m.group_instance_id] = m.member_id
        group.leader_id = value.leader if value.leader in group.members else next(iter(group.members), None)
        if group.members:
            group.state = GroupState.STABLE
            for member in group.members.values():
                self.schedule_heartbeat(group, member)
        if value.current_state_timestamp >= 0:
            group.state_timestamp = value.current_state_timestamp

    async def close(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        for group in self.groups.values():
            group.cancel_all_timers()

    # ================================================================== checks
    def check_ready(self) -> None:
        if not self.topic_ready:
            raise CoordinatorNotAvailableError("the offsets topic is not available yet")
        if not self.loaded:
            raise CoordinatorLoadInProgressError("the group coordinator is loading __consumer_offsets")

    @staticmethod
    def _check_group_id(group_id: str) -> None:
        if not group_id:
            raise InvalidGroupIdError("the group id must not be empty")

    def _validate_member(self, group: Group, member_id: str, instance_id: str | None) -> Member:
        """Kafka's validateCurrentMember: instance fencing first, then the member id."""
        if instance_id is not None:
            current = group.static_member_id(instance_id)
            if current is None:
                raise UnknownMemberIdError(f"no static member with instance id {instance_id}")
            if current != member_id:
                raise FencedInstanceIdError(f"{member_id} is fenced by {current} (instance {instance_id})")
        member = group.members.get(member_id)
        if member is None:
            raise UnknownMemberIdError(f"member {member_id} is not in group {group.group_id}")
        return member

    # ================================================================== JoinGroup
    async def join_group(self, req: JoinRequest) -> JoinResult:
        self.check_ready()
        self._check_group_id(req.group_id)
        s = self.settings
        if not s.group_min_session_timeout_ms <= req.session_timeout_ms <= s.group_max_session_timeout_ms:
            raise InvalidSessionTimeoutError(
                f"session timeout {req.session_timeout_ms} ms is outside "
                f"[{s.group_min_session_timeout_ms}, {s.group_max_session_timeout_ms}]")
        found = self.groups.get(req.group_id)
        if isinstance(found, ConsumerGroup):
            if not found.is_empty():
                # Kafka would migrate the group to classic members; one type per group id here.
                raise InconsistentGroupProtocolError(
                    f"group {req.group_id} is a consumer group (group.protocol=consumer) with members")
            found = self.consumer.to_classic(found)
        group = found
        created = group is None
        if group is None:
            if req.member_id:
                raise UnknownMemberIdError(f"group {req.group_id} does not exist")
            group = self.groups[req.group_id] = Group(req.group_id, now_ms())
        fut: asyncio.Future[JoinResult] = self.loop.create_future()
        try:
            if not self._accept_joining_member(group, req):
                member = group.members.get(req.member_id)
                if member is not None:
                    self._remove_member_and_update_group(group, member, "the group is full")
                raise GroupMaxSizeReachedError(f"group {req.group_id} has reached group.max.size")
            if req.member_id:
                self._join_current_member(group, req, fut)
            else:
                self._join_new_member(group, req, fut)
        except KafkaProtocolError:
            if created and not group.members and not group.pending_members and not group.offsets:
                group.cancel_all_timers()
                del self.groups[req.group_id]
            raise
        if group.is_(GroupState.PREPARING_REBALANCE):
            self._try_complete_join(group)
        return await fut

    def _accept_joining_member(self, group: Group, req: JoinRequest) -> bool:
        """Kafka's acceptJoiningMember: counts awaiting members while preparing, else size.

        Unlike Kafka, a static member rejoining under a known instance id counts as the
        member it replaces, so a restart within the session timeout works in a full group.
        """
        limit = self.settings.group_max_size
        member_id = req.member_id
        if not member_id and req.group_instance_id is not None:
            member_id = group.static_member_id(req.group_instance_id) or ""
        member = group.members.get(member_id)
        if group.state in (GroupState.EMPTY, GroupState.DEAD):
            return True
        if group.is_(GroupState.PREPARING_REBALANCE):
            return (member is not None and member.awaiting_join) or group.num_awaiting_join() < limit
        return member is not None or len(group.members) < limit

    def _join_new_member(self, group: Group, req: JoinRequest, fut: asyncio.Future[JoinResult]) -> None:
        if group.is_(GroupState.DEAD):
            raise CoordinatorNotAvailableError(f"group {group.group_id} is being removed")
        if not group.supports_protocols(req.protocol_type, [name for name, _ in req.protocols]):
            raise InconsistentGroupProtocolError(
                f"protocol type {req.protocol_type!r} or protocols do not match group {group.group_id}")
        new_id = f"{req.group_instance_id or req.client_id}-{uuid.uuid4()}"
        if req.group_instance_id is not None:
            old_id = group.static_member_id(req.group_instance_id)
            if old_id is not None:
                self._update_static_member(group, old_id, new_id, req, fut)
            else:
                self._add_member_and_rebalance(group, new_id, req, fut)
        elif req.require_known_member_id:
            # KIP-394: hand out the id first; the member joins for real with it.
            group.pending_members[new_id] = self.loop.call_later(
                req.session_timeout_ms / 1000, self._expire_pending_member, group, new_id)
            fut.set_result(JoinResult(error=MemberIdRequiredError.code, member_id=new_id))
        else:
            self._add_member_and_rebalance(group, new_id, req, fut)

    def _join_current_member(self, group: Group, req: JoinRequest, fut: asyncio.Future[JoinResult]) -> None:
        if group.is_(GroupState.DEAD):
            raise CoordinatorNotAvailableError(f"group {group.group_id} is being removed")
        if not group.supports_protocols(req.protocol_type, [name for name, _ in req.protocols]):
            raise InconsistentGroupProtocolError(
                f"protocol type {req.protocol_type!r} or protocols do not match group {group.group_id}")
        if req.member_id in group.pending_members:
            self._add_member_and_rebalance(group, req.member_id, req, fut)
            return
        member = self._validate_member(group, req.member_id, req.group_instance_id)
        state = group.state
        if state is GroupState.PREPARING_REBALANCE:
            self._update_member_and_rebalance(group, member, req, fut)
        elif state is GroupState.COMPLETING_REBALANCE:
            if member.matches(req.protocols):
                # A retried JoinGroup: answer with the generation already formed.
                fut.set_result(group.join_result(member, with_members=member.member_id == group.leader_id))
            else:
                self._update_member_and_rebalance(group, member, req, fut)
        elif state is GroupState.STABLE:
            if member.member_id == group.leader_id or not member.matches(req.protocols):
                # The leader rejoining means it wants a new assignment (e.g. metadata changed).
                self._update_member_and_rebalance(group, member, req, fut)
            else:
                fut.set_result(group.join_result(member, with_members=False))
        else:
            raise UnknownMemberIdError(f"group {group.group_id} is empty")

    def _add_member_and_rebalance(self, group: Group, member_id: str, req: JoinRequest,
                                  fut: asyncio.Future[JoinResult]) -> None:
        pending = group.pending_members.pop(member_id, None)
        if pending is not None:
            pending.cancel()
        member = Member(member_id, req.group_instance_id, req.client_id, req.client_host,
                        req.rebalance_timeout_ms, req.session_timeout_ms, req.protocol_type,
                        list(req.protocols), is_new=True, join_future=fut)
        if group.is_(GroupState.PREPARING_REBALANCE) and group.generation_id == 0:
            group.new_member_added = True
        group.add(member)
        self.schedule_heartbeat(group, member, NEW_MEMBER_JOIN_TIMEOUT_MS)
        self._maybe_prepare_rebalance(group, f"{member_id} joined")

    def _update_member_and_rebalance(self, group: Group, member: Member, req: JoinRequest,
                                     fut: asyncio.Future[JoinResult]) -> None:
        self._update_member(member, req, fut)
        self._maybe_prepare_rebalance(group, f"{member.member_id} rejoined")

    @staticmethod
    def _update_member(member: Member, req: JoinRequest, fut: asyncio.Future[JoinResult]) -> None:
        # A JoinGroup retried on a new connection replaces a parked one; answer the old one.
        member.complete_join(JoinResult(error=RebalanceInProgressError.code, member_id=member.member_id))
        member.protocols = list(req.protocols)
        member.rebalance_timeout_ms = req.rebalance_timeout_ms
        member.session_timeout_ms = req.session_timeout_ms
        member.client_id = req.client_id
        member.client_host = req.client_host
        member.join_future = fut

    def _update_static_member(self, group: Group, old_id: str, new_id: str, req: JoinRequest,
                              fut: asyncio.Future[JoinResult]) -> None:
        """KIP-345: a restarted static member takes over its old identity, often without a rebalance."""
        assert req.group_instance_id is not None
        previous_leader = group.leader_id or ""
        old = group.members[old_id]
        fenced = FencedInstanceIdError.code
        old.complete_join(JoinResult(error=fenced, member_id=old_id))
        old.complete_sync(SyncResult(error=fenced))
        member = group.replace_static_member(req.group_instance_id, old_id, new_id)
        self.schedule_heartbeat(group, member)
        self._update_member(member, req, fut)
        if group.is_(GroupState.STABLE):
            if group.select_protocol() == group.protocol_name:
                self._store_group(group, {m.member_id: m.assignment for m in group.members.values()})
                is_leader = group.leader_id == new_id
                skip = is_leader and req.supports_skip_assignment
                # Before JoinGroup v9 the old leader id is returned, so a restarted static
                # leader does not run an assignment it lacks the metadata for (KIP-814).
                member.complete_join(JoinResult(
                    member_id=new_id, generation_id=group.generation_id, protocol_type=group.protocol_type,
                    protocol_name=group.protocol_name,
                    leader_id=(group.leader_id or "") if req.supports_skip_assignment else previous_leader,
                    members=group.current_member_metadata() if skip else (), skip_assignment=skip))
                log.info("static member %s of group %s rejoined as %s without a rebalance",
                         req.group_instance_id, group.group_id, new_id)
            else:
                self._maybe_prepare_rebalance(group, f"static member {new_id} changed protocols")
        elif group.is_(GroupState.COMPLETING_REBALANCE):
            # The leader may already be assigning to the old id: start over.
            self._prepare_rebalance(group, f"static member {new_id} replaced {old_id} during sync")

    # ================================================================== rebalance
    def _maybe_prepare_rebalance(self, group: Group, reason: str) -> None:
        if group.can_rebalance():
            self._prepare_rebalance(group, reason)

    def _prepare_rebalance(self, group: Group, reason: str) -> None:
        if group.is_(GroupState.COMPLETING_REBALANCE):
            self._reset_and_propagate_assignment_error(group, RebalanceInProgressError.code)
        group.cancel_sync_timer()
        group.cancel_join_timer()
        if group.is_(GroupState.EMPTY):
            delay = self.settings.group_initial_rebalance_delay_ms
            remaining = max(group.rebalance_timeout_ms() - delay, 0)
            self._schedule_initial_join(group, delay, remaining)
        else:
            group.join_timer_initial = False
            group.join_timer = self.loop.call_later(group.rebalance_timeout_ms() / 1000,
                                                    self._on_join_timeout, group)
        group.transition(GroupState.PREPARING_REBALANCE, now_ms())
        log.info("preparing to rebalance group %s in generation %d: %s", group.group_id,
                 group.generation_id, reason)

    def _schedule_initial_join(self, group: Group, delay_ms: int, remaining_ms: int) -> None:
        group.join_timer_initial = True
        group.join_timer = self.loop.call_later(delay_ms / 1000, self._on_initial_join_timeout, group,
                                                remaining_ms)

    def _on_initial_join_timeout(self, group: Group, remaining_ms: int) -> None:
        """group.initial.rebalance.delay.ms: keep waiting while new members keep arriving."""
        group.join_timer = None
        if group.new_member_added and remaining_ms > 0:
            group.new_member_added = False
            delay = min(self.settings.group_initial_rebalance_delay_ms, remaining_ms)
            self._schedule_initial_join(group, delay, max(remaining_ms - delay, 0))
        else:
            self._complete_join(group)

    def _on_join_timeout(self, group: Group) -> None:
        group.join_timer = None
        self._complete_join(group)

    def _try_complete_join(self, group: Group) -> None:
        if (group.is_(GroupState.PREPARING_REBALANCE) and not group.join_timer_initial
                and group.all_members_joined()):
            group.cancel_join_timer()
            self._complete_join(group)

    def _complete_join(self, group: Group) -> None:
        if not group.is_(GroupState.PREPARING_REBALANCE):
            return
        group.cancel_join_timer()
        for member in list(group.members.values()):
            if not member.awaiting_join and member.group_instance_id is None:
                log.info("removing member %s of group %s: it did not rejoin in time", member.member_id,
                         group.group_id)
                group.remove(member.member_id)
        if not group.elect_joined_leader() and group.members:
            # Only absent static members are left: wait for them (or their session timeouts).
            group.join_timer_initial = False
            group.join_timer = self.loop.call_later(group.rebalance_timeout_ms() / 1000,
                                                    self._on_join_timeout, group)
            return
        group.init_next_generation(now_ms())
        if group.is_(GroupState.EMPTY):
            self._store_group(group, {})
            log.info("group %s is empty in generation %d", group.group_id, group.generation_id)
            return
        log.info("group %s formed generation %d (protocol %s, %d members, leader %s)", group.group_id,
                 group.generation_id, group.protocol_name, len(group.members), group.leader_id)
        group.pending_sync = set(group.members)
        group.sync_timer = self.loop.call_later(group.rebalance_timeout_ms() / 1000,
                                                self._on_pending_sync_timeout, group, group.generation_id)
        for member in group.members.values():
            member.complete_join(group.join_result(member, with_members=member.member_id == group.leader_id))
            self.schedule_heartbeat(group, member)
            member.is_new = False

    def _on_pending_sync_timeout(self, group: Group, generation_id: int) -> None:
        """Members that never sent SyncGroup within the rebalance timeout are dropped."""
        group.sync_timer = None
        if generation_id != group.generation_id or group.state not in (
                GroupState.COMPLETING_REBALANCE, GroupState.STABLE) or not group.pending_sync:
            return
        missing = sorted(group.pending_sync)
        for member_id in missing:
            member = group.remove(member_id)
            if member is not None:
                member.complete_join(JoinResult(error=UnknownMemberIdError.code))
        self._prepare_rebalance(group, f"members {missing} did not sync in time")

    def _reset_and_propagate_assignment_error(self, group: Group, error: int) -> None:
        for member in group.members.values():
            member.assignment = b""
            member.complete_sync(SyncResult(error=error))

    # ================================================================== timers
    def schedule_heartbeat(self, group: Group, member: Member, timeout_ms: int | None = None) -> None:
        """(Re)arm ``member``'s session timeout (Kafka's ``completeAndScheduleNextHeartbeatExpiration``);
        public because an offset commit from a group member counts as its heartbeat too (offsets.py)."""
        member.cancel_heartbeat()
        timeout = member.session_timeout_ms if timeout_ms is None else timeout_ms
        member.heartbeat = self.loop.call_later(timeout / 1000, self._on_session_timeout, group, member)

    def _on_session_timeout(self, group: Group, member: Member) -> None:
        member.heartbeat = None
        if group.members.get(member.member_id) is not member:
            return
        # Kafka's shouldKeepAlive: a parked JoinGroup or SyncGroup counts as alive; the
        # join completion (or the sync) schedules the next deadline. New members parked
        # in JoinGroup get NEW_MEMBER_JOIN_TIMEOUT_MS instead.
        if (member.awaiting_join and not member.is_new) or member.awaiting_sync:
            return
        self._remove_member_and_update_group(group, member, f"session timeout of {member.member_id} expired")

    def _expire_pending_member(self, group: Group, member_id: str) -> None:
        if group.pending_members.pop(member_id, None) is not None:
            log.info("pending member %s of group %s never rejoined", member_id, group.group_id)
            if group.is_(GroupState.PREPARING_REBALANCE):
                self._try_complete_join(group)

    def _remove_member_and_update_group(self, group: Group, member: Member, reason: str) -> None:
        log.info("removing member %s from group %s: %s", member.member_id, group.group_id, reason)
        member.complete_join(JoinResult(error=UnknownMemberIdError.code))
        member.complete_sync(SyncResult(error=UnknownMemberIdError.code))
        group.remove(member.member_id)
        if group.state in (GroupState.STABLE, GroupState.COMPLETING_REBALANCE):
            self._maybe_prepare_rebalance(group, reason)
        elif group.is_(GroupState.PREPARING_REBALANCE):
            self._try_complete_join(group)

    # ================================================================== SyncGroup
    async def sync_group(self, group_id: str, generation_id: int, member_id: str, instance_id: str | None,
                         protocol_type: str | None, protocol_name: str | None,
                         assignments: dict[str, bytes]) -> SyncResult:
        self.check_ready()
        self._check_group_id(group_id)
        group = self._classic_group(group_id, member_id)
        if group.is_(GroupState.DEAD):
            raise CoordinatorNotAvailableError(f"group {group_id} is being removed")
        member = self._validate_member(group, member_id, instance_id)
        if generation_id != group.generation_id:
            raise IllegalGenerationError(f"generation {generation_id} is not {group.generation_id}")
        if protocol_type is not None and protocol_type != group.protocol_type:
            raise InconsistentGroupProtocolError(f"protocol type {protocol_type} is not {group.protocol_type}")
        if protocol_name is not None and protocol_name != group.protocol_name:
            raise InconsistentGroupProtocolError(f"protocol {protocol_name} is not {group.protocol_name}")
        if group.is_(GroupState.EMPTY):
            raise UnknownMemberIdError(f"group {group_id} is empty")
        if group.is_(GroupState.PREPARING_REBALANCE):
            raise RebalanceInProgressError(f"group {group_id} is rebalancing")
        self._mark_synced(group, member_id)
        if group.is_(GroupState.STABLE):
            self.schedule_heartbeat(group, member)
            return SyncResult(assignment=member.assignment, protocol_type=group.protocol_type,
                              protocol_name=group.protocol_name)
        fut: asyncio.Future[SyncResult] = self.loop.create_future()
        member.complete_sync(SyncResult(error=RebalanceInProgressError.code))
        member.sync_future = fut
        if member_id == group.leader_id:
            full = {mid: assignments.get(mid, b"") for mid in group.members}
            self._store_group(group, full)
            for m in group.members.values():
                m.assignment = full[m.member_id]
                m.complete_sync(SyncResult(assignment=m.assignment, protocol_type=group.protocol_type,
                                           protocol_name=group.protocol_name))
                self.schedule_heartbeat(group, m)
            group.transition(GroupState.STABLE, now_ms())
            log.info("group %s is stable in generation %d", group_id, group.generation_id)
        return await fut

    def _mark_synced(self, group: Group, member_id: str) -> None:
        group.pending_sync.discard(member_id)
        if not group.pending_sync:
            group.cancel_sync_timer()

    def _classic_group(self, group_id: str, member_id: str) -> Group:
        """The classic group; UNKNOWN_MEMBER_ID when there is none (or it is a consumer group,
        whose members do not use the classic protocol)."""
        group = self.groups.get(group_id)
        if group is None:
            raise UnknownMemberIdError(f"group {group_id} does not exist")
        if isinstance(group, ConsumerGroup):
            raise UnknownMemberIdError(f"Member {member_id} does not use the classic protocol.")
        return group

    # ================================================================== Heartbeat, LeaveGroup
    def heartbeat(self, group_id: str, generation_id: int, member_id: str, instance_id: str | None) -> None:
        """Returns normally for NONE; raises the error Kafka would answer with."""
        self.check_ready()
        self._check_group_id(group_id)
        group = self._classic_group(group_id, member_id)
        if group.is_(GroupState.DEAD):
            raise CoordinatorNotAvailableError(f"group {group_id} is being removed")
        member = self._validate_member(group, member_id, instance_id)
        if group.is_(GroupState.EMPTY):
            raise UnknownMemberIdError(f"group {group_id} is empty")
        if generation_id != group.generation_id:
            raise IllegalGenerationError(f"generation {generation_id} is not {group.generation_id}")
        self.schedule_heartbeat(group, member)
        if group.is_(GroupState.PREPARING_REBALANCE):
            raise RebalanceInProgressError(f"group {group_id} is rebalancing")

    def leave_group(self, group_id: str, leaving: list[tuple[str, str | None]]) -> list[int]:
        """Remove each (member id, instance id); one error code per member, in order."""
        self.check_ready()
        self._check_group_id(group_id)
        group = self.groups.get(group_id)
        if group is None or isinstance(group, ConsumerGroup):
            return [UnknownMemberIdError.code] * len(leaving)
        if group.is_(GroupState.DEAD):
            raise CoordinatorNotAvailableError(f"group {group_id} is being removed")
        errors = []
        for member_id, instance_id in leaving:
            errors.append(self._leave_one(group, member_id, instance_id))
        return errors

    def _leave_one(self, group: Group, member_id: str, instance_id: str | None) -> int:
        if not member_id:
            # A static member leaving by instance id alone (e.g. kafka-consumer-groups tooling).
            current = group.static_member_id(instance_id) if instance_id is not None else None
            if current is None:
                return UnknownMemberIdError.code
            self._remove_member_and_update_group(group, group.members[current], f"instance {instance_id} left")
            return 0
        pending = group.pending_members.pop(member_id, None)
        if pending is not None:
            pending.cancel()
            if group.is_(GroupState.PREPARING_REBALANCE):
                self._try_complete_join(group)
            return 0
        try:
            member = self._validate_member(group, member_id, instance_id)
        except KafkaProtocolError as exc:
            return exc.code
        self._remove_member_and_update_group(group, member, f"{member_id} left the group")
        return 0

    # ================================================================== persistence
    def _store_group(self, group: Group, assignments: dict[str, bytes]) -> None:
        """Write the group's metadata after a rebalance; a failed write is logged, not fatal.

        Kafka fails the SyncGroup on a failed write; here the append is a page-cache write
        that only fails on a broken disk, where the offsets would fail too.
        """
        value = GroupMetadataValue(
            protocol_type=group.protocol_type or "",
            generation=group.generation_id,
            protocol=group.protocol_name,
            leader=group.leader_id if group.members else None,
            current_state_timestamp=group.state_timestamp,
            members=tuple(
                MemberMetadataValue(m.member_id, m.group_instance_id, m.client_id, m.client_host,
                                    m.rebalance_timeout_ms, m.session_timeout_ms,
                                    m.metadata(group.protocol_name), assignments.get(m.member_id, b""))
                for m in group.members.values()
            ),
        )
        try:
            self.store.write(group.group_id, [(encode_group_metadata_key(group.group_id),
                                               encode_group_metadata(value))], now_ms())
        except (KafkaProtocolError, OSError) as exc:
            log.error("could not persist metadata of group %s: %s", group.group_id, exc)
