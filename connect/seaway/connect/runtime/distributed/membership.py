"""The worker's membership in its Connect group (Kafka's ``WorkerCoordinator``).

Plugs Connect's payloads into the generic :class:`~seaway.protocol.group_member.GroupMember`:
metadata carries this worker's REST URL, config-topic offset and (v1+) current allocation;
the leader reads every member's metadata, catches up on the config topic (or answers
CONFIG_MISMATCH when it cannot) and runs the eager or incremental cooperative assignor.
Assignments go to the herder through :class:`AssignmentListener`; the herder tells the
membership when to rejoin (after revocations, when a delay expires, after config changes).

The membership tracks what this worker holds (``connectors``/``tasks``): what was assigned
minus what was revoked, or nothing after an eager revocation or a lost membership.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Protocol

from seaway.connect.runtime.distributed.assignor import IncrementalCooperativeAssignor, MemberAllocation, eager_assign
from seaway.connect.runtime.distributed.config import DistributedConfig
from seaway.connect.runtime.distributed.connect_protocol import (
    CONFIG_MISMATCH,
    NO_ERROR,
    ConnectProtocol,
    ExtendedAssignment,
    WorkerState,
    decode_assignment,
    decode_metadata,
    encode_assignment,
    encode_metadata,
    protocols_for,
)
from seaway.connect.runtime.distributed.kafka_stores import KafkaConfigBackingStore
from seaway.connect.runtime.herder import ConnectorTaskId
from seaway.connect.runtime.metrics import RebalanceMetrics, SampleConfig
from seaway.protocol.group_member import GroupHandler, GroupMember, JoinedMember

__all__ = ["AssignmentListener", "WorkerMembership"]

log = logging.getLogger(__name__)


class AssignmentListener(Protocol):
    """The herder's side: called on the membership's task, must return promptly."""

    def on_assignment(self, assignment: ExtendedAssignment, generation: int) -> None: ...

    def on_revoke_all(self, reason: str) -> None: ...


class WorkerMembership(GroupHandler):
    """One worker's group member, Connect protocol, assignor."""

    def __init__(self, config: DistributedConfig, url: str, config_store: KafkaConfigBackingStore,
                 listener: AssignmentListener) -> None:
        self.url = url
        self.config_store = config_store
        self.listener = listener
        self.offered = protocols_for(config.group.connect_protocol)
        self.assignor = IncrementalCooperativeAssignor(config.group.scheduled_rebalance_max_delay_ms)
        self.sync_timeout = config.group.worker_sync_timeout_s
        self.member = GroupMember(
            bootstrap_servers=config.bootstrap_servers, group_id=config.group_id, protocol_type="connect",
            handler=self, session_timeout_ms=config.group.session_timeout_ms,
            rebalance_timeout_ms=config.group.rebalance_timeout_ms,
            heartbeat_interval_ms=config.group.heartbeat_interval_ms, client_id=config.client_id("coordinator"),
            security=config.client_security.protocol())
        self.protocol: ConnectProtocol | None = None
        self.connectors: set[str] = set()
        self.tasks: set[ConnectorTaskId] = set()
        self.leader_url: str | None = None
        self.assignment: ExtendedAssignment | None = None
        self.member_urls: dict[str, str] = {}
        self.owners: dict[str, set[str | ConnectorTaskId]] = {}
        self._rejoin_timer: asyncio.TimerHandle | None = None
        self.rebalance = RebalanceMetrics(SampleConfig.of(config.common), leader=lambda: self.leader_url)
        """connect-worker-rebalance-metrics: started here on each assignment, succeeded by the herder."""

    # -- state for the herder --------------------------------------------------------------------
    @property
    def is_leader(self) -> bool:
        a = self.assignment
        return a is not None and not a.failed and a.leader == self.member.member_id and bool(a.leader)

    @property
    def sessioned(self) -> bool:
        return self.protocol is ConnectProtocol.SESSIONED

    def owner_url(self, item: str | ConnectorTaskId) -> str | None:
        """Leader only: the REST URL of the member running ``item`` (connector name or task id)."""
        for member, items in self.owners.items():
            if item in items:
                return self.member_urls.get(member)
        return None

    def start(self) -> None:
        self.member.start()

    async def stop(self) -> None:
        if self._rejoin_timer is not None:
            self._rejoin_timer.cancel()
        await self.member.stop()

    def request_rejoin(self, reason: str) -> None:
        self.member.request_rejoin(reason)

    def schedule_rejoin(self, delay_ms: int) -> None:
        """The leader asked for a follow-up rebalance in ``delay_ms`` (lost work or revocation backoff)."""
        if self._rejoin_timer is not None:
            self._rejoin_timer.cancel()
        self._rejoin_timer = asyncio.get_running_loop().call_later(
            delay_ms / 1000, self.member.request_rejoin, "scheduled rebalance")

    # -- GroupHandler ----------------------------------------------------------------------------
    def protocols(self) -> list[tuple[str, bytes]]:
        offset = self.config_store.offset
        version = max(p.version for p in self.offered)
        allocation = ExtendedAssignment(version, NO_ERROR, "", "", offset, tuple(sorted(self.connectors)),
                                        tuple(sorted(self.tasks)))
        state = WorkerState(self.url, offset, allocation)
        return [(p.protocol_name, encode_metadata(state, p)) for p in self.offered]

    async def on_join_prepare(self, generation: int, member_id: str, lost: bool) -> None:
        eager = self.protocol is ConnectProtocol.EAGER or self.offered == [ConnectProtocol.EAGER]
        if (eager or lost) and (self.connectors or self.tasks):
            self.connectors, self.tasks = set(), set()
            self.listener.on_revoke_all("eager rebalance" if eager else "group membership lost")
        if eager or lost:  # cooperative: the last leader stays known during the rebalance, as in Kafka
            self.leader_url = None
            self.assignment = None

    async def perform_assignment(self, leader_id: str, protocol: str, members: list[JoinedMember],
                                 generation: int) -> dict[str, bytes]:
        chosen = ConnectProtocol.from_name(protocol)
        states = {m.member_id: decode_metadata(m.metadata)[1] for m in members}
        max_offset = max(s.config_offset for s in states.values())
        if self.config_store.offset < max_offset:
            try:
                await asyncio.to_thread(self.config_store.read_to_end, self.sync_timeout)
            except Exception as e:
                log.warning("Leader could not read the config topic to the end: %s", e)
        snapshot = self.config_store.snapshot()
        leader_url = states[leader_id].url
        self.member_urls = {m: s.url for m, s in states.items()}
        if snapshot.offset < max_offset:
            log.warning("Leader is behind the config topic (%d < %d): CONFIG_MISMATCH", snapshot.offset, max_offset)
            failed = ExtendedAssignment(chosen.version, CONFIG_MISMATCH, leader_id, leader_url, max_offset)
            return {m: encode_assignment(failed) for m in states}
        connectors = snapshot.connectors()
        tasks = snapshot.all_task_ids()
        if chosen is ConnectProtocol.EAGER:
            shares = eager_assign(connectors, tasks, states)
            self.owners = {m: {*w.connectors, *w.tasks} for m, w in shares.items()}
            return {m: encode_assignment(ExtendedAssignment(
                0, NO_ERROR, leader_id, leader_url, snapshot.offset, tuple(sorted(w.connectors)),
                tuple(sorted(w.tasks)))) for m, w in shares.items()}
        allocations = {m: MemberAllocation(m, s.url, frozenset(s.allocation.connectors if s.allocation else ()),
                                           frozenset(s.allocation.tasks if s.allocation else ()))
                       for m, s in states.items()}
        decided = self.assignor.assign(
            leader=leader_id, leader_url=leader_url, config_offset=snapshot.offset, version=chosen.version,
            connectors=connectors, tasks=tasks, members=allocations,
            last_completed_generation=self.member.last_completed_generation, generation=generation)
        self.owners = {m: {*w.connectors, *w.tasks} for m, w in self.assignor.current.items()}
        return {m: encode_assignment(a) for m, a in decided.items()}

    async def on_join_complete(self, generation: int, member_id: str, leader_id: str, protocol: str,
                               assignment: bytes) -> None:
        self.protocol = ConnectProtocol.from_name(protocol)
        decoded = decode_assignment(assignment)
        self.assignment = decoded
        self.leader_url = decoded.leader_url or None
        if not decoded.failed:
            self.connectors = (self.connectors - set(decoded.revoked_connectors)) | set(decoded.connectors)
            self.tasks = (self.tasks - set(decoded.revoked_tasks)) | set(decoded.tasks)
        log.info("Joined group at generation %d as %s (leader %s, %s protocol): assigned connectors %s, tasks %s; "
                 "revoked connectors %s, tasks %s; delay %d ms", generation,
                 "leader" if leader_id == member_id else "follower", decoded.leader_url, protocol,
                 list(decoded.connectors), [str(t) for t in decoded.tasks], list(decoded.revoked_connectors),
                 [str(t) for t in decoded.revoked_tasks], decoded.delay)
        if decoded.delay > 0:
            self.schedule_rejoin(decoded.delay)
        self.rebalance.started(generation, self.leader_url, self.protocol.name)  # as Kafka's onAssigned
        self.listener.on_assignment(decoded, generation)
