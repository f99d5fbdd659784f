"""A reusable member of a classic Kafka group (JoinGroup / SyncGroup / Heartbeat / LeaveGroup).

librdkafka only speaks protocol type ``consumer``; Connect workers (``connect``), the schema
registry's leader election (``sr``) and other coordinated services need the group protocol with
their own metadata and assignments. This module runs the membership loop over
:class:`~seaway.protocol.client.KafkaConnection` and leaves every protocol-specific decision
to a :class:`GroupHandler`::

    find coordinator -> JoinGroup (metadata from handler.protocols())
                     -> leader: handler.perform_assignment(members) -> SyncGroup(assignments)
                     -> handler.on_join_complete(assignment)
                     -> Heartbeat every heartbeat.interval.ms until the group rebalances
                        (REBALANCE_IN_PROGRESS), the member is fenced (UNKNOWN_MEMBER_ID,
                        ILLEGAL_GENERATION: rejoin as a new member, ``lost=True``), the
                        coordinator moves (find it again) or request_rejoin() is called
    any other error  -> handler.on_coordinator_lost(reason), then find the coordinator again
                        with backoff (an authentication failure is logged as an ERROR)
    stop()           -> LeaveGroup, so the others rebalance at once instead of after a timeout

Lifecycle guarantees: handler callbacks run on the member's event loop, one at a time and
never concurrently with each other; ``on_join_prepare`` precedes every JoinGroup; a handler
must return promptly (hand long work to another task), because heartbeats wait for it.
Works against any Kafka broker; nothing here imports the broker.
"""

from __future__ import annotations

import abc
import asyncio
import contextlib
import logging
import time
from dataclasses import dataclass

from seaway.protocol.client import PLAINTEXT, ClientSecurity, KafkaAuthenticationError, KafkaConnection, KafkaWireError
from seaway.protocol.errors import (
    CoordinatorLoadInProgressError,
    CoordinatorNotAvailableError,
    IllegalGenerationError,
    KafkaProtocolError,
    MemberIdRequiredError,
    NotCoordinatorError,
    RebalanceInProgressError,
    UnknownMemberIdError,
    error_for_code,
)
from seaway.protocol.messages.find_coordinator_request import FindCoordinatorRequest
from seaway.protocol.messages.find_coordinator_response import FindCoordinatorResponse
from seaway.protocol.messages.heartbeat_request import HeartbeatRequest
from seaway.protocol.messages.heartbeat_response import HeartbeatResponse
from seaway.protocol.messages.join_group_request import JoinGroupRequest, JoinGroupRequestProtocol
from seaway.protocol.messages.join_group_response import JoinGroupResponse
from seaway.protocol.messages.leave_group_request import LeaveGroupRequest, MemberIdentity
from seaway.protocol.messages.leave_group_response import LeaveGroupResponse
from seaway.protocol.messages.sync_group_request import SyncGroupRequest, SyncGroupRequestAssignment
from seaway.protocol.messages.sync_group_response import SyncGroupResponse

__all__ = ["GroupHandler", "GroupMember", "JoinedMember"]

log = logging.getLogger(__name__)

_REJOIN = {RebalanceInProgressError.code}
_FENCED = {UnknownMemberIdError.code, IllegalGenerationError.code}
_COORDINATOR_MOVED = {NotCoordinatorError.code, CoordinatorNotAvailableError.code,
                      CoordinatorLoadInProgressError.code}


@dataclass(frozen=True, slots=True)
class JoinedMember:
    """A member as the leader sees it in the JoinGroup response."""

    member_id: str
    metadata: bytes


class GroupHandler(abc.ABC):
    """The protocol-specific half of a group member."""

    @abc.abstractmethod
    def protocols(self) -> list[tuple[str, bytes]]:
        """``(protocol name, metadata)`` to offer, in preference order (called before every join)."""

    async def on_join_prepare(self, generation: int, member_id: str, lost: bool) -> None:
        """About to (re)join. ``lost``: our membership expired, so our work is being reassigned."""
        return

    @abc.abstractmethod
    async def perform_assignment(self, leader_id: str, protocol: str, members: list[JoinedMember],
                                 generation: int) -> dict[str, bytes]:
        """Leader only: every member's assignment bytes."""

    @abc.abstractmethod
    async def on_join_complete(self, generation: int, member_id: str, leader_id: str, protocol: str,
                               assignment: bytes) -> None:
        """The group settled and this is our assignment."""

    async def on_coordinator_lost(self, reason: str) -> None:
        """The coordinator connection failed; we retry. Whether we are still a member is unknown until
        the next join, so a handler whose assignment grants an exclusive right (a leader) drops it here."""
        return


class _Rejoin(Exception):
    def __init__(self, reason: str, fenced: bool = False) -> None:
        super().__init__(reason)
        self.fenced = fenced


class _Reconnect(Exception):
    pass


class GroupMember:
    """Keeps one member in ``group_id`` from :meth:`start` until :meth:`stop`."""

    def __init__(self, *, bootstrap_servers: str, group_id: str, protocol_type: str, handler: GroupHandler,
                 session_timeout_ms: int = 10000, rebalance_timeout_ms: int = 60000,
                 heartbeat_interval_ms: int = 3000, client_id: str = "seaway-group-member",
                 security: ClientSecurity = PLAINTEXT) -> None:
        self.bootstrap_servers = bootstrap_servers
        self.security = security
        self.group_id = group_id
        self.protocol_type = protocol_type
        self.handler = handler
        self.session_timeout_ms = session_timeout_ms
        self.rebalance_timeout_ms = rebalance_timeout_ms
        self.heartbeat_interval_ms = heartbeat_interval_ms
        self.client_id = client_id
        self.member_id = ""
        self.generation = -1
        self.leader_id = ""
        self.protocol = ""
        self.last_completed_generation = -1
        self._coordinator: tuple[str, int] | None = None
        self._rejoin = asyncio.Event()
        self._stopping = False
        self._lost = False
        self._alive_at = time.monotonic()
        self._task: asyncio.Task[None] | None = None

    @property
    def is_leader(self) -> bool:
        return bool(self.member_id) and self.member_id == self.leader_id

    @property
    def alive_at(self) -> float:
        """``time.monotonic()`` of the last successful SyncGroup or Heartbeat. Older than the session
        timeout: the coordinator may already have expired us and handed our assignment to another."""
        return self._alive_at

    def request_rejoin(self, reason: str = "requested") -> None:
        """Rejoin at the next opportunity (the heartbeat loop wakes up at once)."""
        log.debug("group %s: rejoin requested (%s)", self.group_id, reason)
        self._rejoin.set()

    async def run(self) -> None:
        """Stay in the group until :meth:`stop`; connection errors are retried with backoff."""
        backoff = 0.05
        while not self._stopping:
            try:
                await self._session()
                backoff = 0.05
            except (KafkaWireError, KafkaProtocolError, _Reconnect, OSError) as exc:
                if self._stopping:
                    break
                # a wrong password or certificate will not fix itself: say so loudly, keep trying
                level = logging.ERROR if isinstance(exc, KafkaAuthenticationError) else logging.INFO
                log.log(level, "group %s: %s; retrying in %.2fs", self.group_id, exc, backoff)
                await self._coordinator_lost(str(exc))
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, 1.0)
            except Exception:  # a handler bug must not end membership silently
                log.exception("group %s: membership failed; retrying", self.group_id)
                await self._coordinator_lost("membership failed")
                await asyncio.sleep(1.0)

    async def _coordinator_lost(self, reason: str) -> None:
        try:
            await self.handler.on_coordinator_lost(reason)
        except Exception:  # a handler bug must not end membership silently
            log.exception("group %s: on_coordinator_lost failed", self.group_id)

    def start(self) -> asyncio.Task[None]:
        """Run :meth:`run` as a task of the running loop."""
        self._task = asyncio.get_running_loop().create_task(self.run(), name=f"group-member-{self.group_id}")
        return self._task

    async def stop(self) -> None:
        """Stop the :meth:`start` task, then leave the group (best effort)."""
        self._stopping = True
        self._rejoin.set()
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        member_id, coordinator = self.member_id, self._coordinator
        if not member_id or coordinator is None:
            return
        try:
            conn = await KafkaConnection.open(*coordinator, self.client_id, timeout=2.0, security=self.security)
            try:
                request = LeaveGroupRequest(group_id=self.group_id, member_id=member_id,
                                            members=[MemberIdentity(member_id=member_id, reason="member stopping")])
                await conn.call(request, LeaveGroupResponse, cap=4, timeout=2.0)
            finally:
                await conn.close()
            log.info("group %s: member %s left", self.group_id, member_id)
        except (KafkaWireError, OSError) as exc:
            log.info("group %s: could not leave cleanly (%s); the session timeout will expire us", self.group_id, exc)
        self.member_id = ""

    # -- one coordinator connection --------------------------------------------------------------
    async def _session(self) -> None:
        conn = await self._find_coordinator()
        try:
            while not self._stopping:
                try:
                    await self._join_and_sync(conn)
                    await self._heartbeat(conn)
                except _Rejoin as r:
                    if r.fenced:
                        self._lost = True
                        self.member_id = ""
                        self.generation = -1
                    log.info("group %s: rejoining (%s)", self.group_id, r)
        finally:
            await conn.close()

    async def _find_coordinator(self) -> KafkaConnection:
        bootstrap = await KafkaConnection.open_any(self.bootstrap_servers, self.client_id, security=self.security)
        try:
            response, _ = await bootstrap.call(FindCoordinatorRequest(key=self.group_id, key_type=0),
                                               FindCoordinatorResponse, cap=3)
        finally:
            await bootstrap.close()
        if response.error_code:
            raise error_for_code(response.error_code)(response.error_message or "FindCoordinator failed")
        self._coordinator = (response.host, response.port)
        return await KafkaConnection.open(response.host, response.port, self.client_id, security=self.security)

    def _check(self, code: int, what: str) -> None:
        if code == 0:
            return
        if code in _REJOIN:
            raise _Rejoin(f"{what}: rebalance in progress")
        if code in _FENCED:
            raise _Rejoin(f"{what}: {error_for_code(code).name}", fenced=True)
        if code in _COORDINATOR_MOVED:
            raise _Reconnect(f"{what}: {error_for_code(code).name}")
        raise error_for_code(code)(f"{what} failed: {error_for_code(code).name}")

    async def _join_and_sync(self, conn: KafkaConnection) -> None:
        self._rejoin.clear()
        stale = time.monotonic() - self._alive_at > self.session_timeout_ms / 1000
        lost = self._lost or (stale and self.generation >= 0)
        self._lost = False
        await self.handler.on_join_prepare(self.generation, self.member_id, lost)
        protocols = [JoinGroupRequestProtocol(name=n, metadata=m) for n, m in self.handler.protocols()]
        timeout = self.rebalance_timeout_ms / 1000 + 10
        while True:
            join = JoinGroupRequest(group_id=self.group_id, session_timeout_ms=self.session_timeout_ms,
                                    rebalance_timeout_ms=self.rebalance_timeout_ms, member_id=self.member_id,
                                    protocol_type=self.protocol_type, protocols=protocols)
            joined, _ = await conn.call(join, JoinGroupResponse, cap=7, timeout=timeout)
            if joined.error_code == MemberIdRequiredError.code:  # KIP-394: rejoin with the id handed out
                self.member_id = joined.member_id
                continue
            self._check(joined.error_code, "JoinGroup")
            break
        self.member_id, self.generation = joined.member_id, joined.generation_id
        self.leader_id, self.protocol = joined.leader, joined.protocol_name or ""
        assignments: list[SyncGroupRequestAssignment] = []
        if joined.leader == joined.member_id:
            members = [JoinedMember(m.member_id, bytes(m.metadata)) for m in joined.members]
            decided = await self.handler.perform_assignment(self.member_id, self.protocol, members, self.generation)
            assignments = [SyncGroupRequestAssignment(member_id=m, assignment=a) for m, a in decided.items()]
        sync = SyncGroupRequest(group_id=self.group_id, generation_id=self.generation, member_id=self.member_id,
                                protocol_type=self.protocol_type, protocol_name=self.protocol,
                                assignments=assignments)
        synced, _ = await conn.call(sync, SyncGroupResponse, cap=5, timeout=timeout)
        self._check(synced.error_code, "SyncGroup")
        self._alive_at = time.monotonic()
        self.last_completed_generation = self.generation
        await self.handler.on_join_complete(self.generation, self.member_id, self.leader_id, self.protocol,
                                            bytes(synced.assignment))

    async def _heartbeat(self, conn: KafkaConnection) -> None:
        interval = self.heartbeat_interval_ms / 1000
        while not self._stopping:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._rejoin.wait(), interval)
            if self._stopping:
                return
            if self._rejoin.is_set():
                raise _Rejoin("requested")
            request = HeartbeatRequest(group_id=self.group_id, generation_id=self.generation,
                                       member_id=self.member_id)
            response, _ = await conn.call(request, HeartbeatResponse, cap=4,
                                          timeout=self.session_timeout_ms / 1000)
            self._check(response.error_code, "Heartbeat")
            self._alive_at = time.monotonic()
