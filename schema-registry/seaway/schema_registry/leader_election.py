"""Leader election among registry instances through the Kafka group protocol, as Confluent does it.

Every instance joins the group ``schema.registry.group.id`` (default ``schema-registry``) with
protocol type ``sr`` and one protocol, ``v0``, whose metadata is the instance's identity as
JSON, exactly Confluent's ``SchemaRegistryIdentity`` (so Confluent and Karapace instances can
share a group with us)::

    {"version": 1, "host": "h", "port": 8081, "master_eligibility": true, "scheme": "http"}

The broker picks one member as *group* leader; that member decides the *registry* leader
(:func:`assign`) and sends every member the same assignment through SyncGroup::

    {"version": 1, "error": 0, "master": "<member id>", "master_identity": {...identity...}}

Rule (deterministic, so any member computes the same answer): among the leader-eligible
members, the one with the lexicographically smallest URL (ties, impossible with distinct
URLs, by member id). Duplicate URLs are a configuration error: the assignment carries
``error: 1`` and no leader, so writes fail with 50004 until it is fixed.

Guarantees this module gives the registry (the :class:`~seaway.schema_registry.service.Leadership`
seam):

* ``is_leader()`` is true only while this instance holds the latest assignment naming it,
  and its last successful heartbeat is younger than the session timeout: an instance cut off
  from the coordinator stops writing before the coordinator can elect another leader.
* While a rebalance runs nobody is leader (writes get 50004, clients retry), as in Confluent.
* On :meth:`KafkaLeaderElector.stop` the member leaves the group (LeaveGroup), so the others
  rebalance at once instead of after the session timeout.

Ids cannot collide: only the leader allocates, and every write first reads the ``_schemas``
log to its end (see ``service.py``), so a new leader continues from the max id in the log.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from seaway.protocol.client import PLAINTEXT, ClientSecurity, KafkaConnection, KafkaWireError
from seaway.protocol.errors import (
    IllegalGenerationError,
    KafkaProtocolError,
    MemberIdRequiredError,
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
from seaway.schema_registry.settings import RegistrySettings

__all__ = [
    "DUPLICATE_URLS",
    "NO_ERROR",
    "PROTOCOL_NAME",
    "PROTOCOL_TYPE",
    "Assignment",
    "KafkaLeaderElector",
    "RegistryIdentity",
    "assign",
]

log = logging.getLogger(__name__)

PROTOCOL_TYPE = "sr"
PROTOCOL_NAME = "v0"
NO_ERROR = 0
DUPLICATE_URLS = 1
_REJOIN_CODES = {RebalanceInProgressError.code, IllegalGenerationError.code, UnknownMemberIdError.code}


@dataclass(frozen=True, slots=True)
class RegistryIdentity:
    """Where an instance is reached and whether it may lead (``leader.eligibility``)."""

    host: str
    port: int
    scheme: str = "http"
    leader_eligibility: bool = True

    @property
    def url(self) -> str:
        return f"{self.scheme}://{self.host}:{self.port}"

    def to_json(self) -> dict[str, Any]:
        return {
            "version": 1,
            "host": self.host,
            "port": self.port,
            "master_eligibility": self.leader_eligibility,
            "scheme": self.scheme,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RegistryIdentity:
        eligible = data.get("master_eligibility", data.get("leader_eligibility", True))
        return cls(str(data["host"]), int(data["port"]), str(data.get("scheme") or "http"), bool(eligible))

    @classmethod
    def from_url(cls, url: str, leader_eligibility: bool = True) -> RegistryIdentity:
        parts = urlsplit(url)
        return cls(parts.hostname or "localhost", parts.port or 8081, parts.scheme or "http", leader_eligibility)


@dataclass(frozen=True, slots=True)
class Assignment:
    """What every member receives after a rebalance: the registry leader, if any."""

    error: int = NO_ERROR
    leader: str | None = None
    leader_identity: RegistryIdentity | None = None

    def encode(self) -> bytes:
        identity = None if self.leader_identity is None else self.leader_identity.to_json()
        body = {"version": 1, "error": self.error, "master": self.leader, "master_identity": identity}
        return json.dumps(body, separators=(",", ":")).encode()

    @classmethod
    def decode(cls, raw: bytes) -> Assignment:
        data = json.loads(raw)
        identity = data.get("master_identity")
        return cls(
            int(data.get("error") or NO_ERROR),
            data.get("master"),
            None if identity is None else RegistryIdentity.from_json(identity),
        )


def assign(members: Sequence[tuple[str, bytes]]) -> Assignment:
    """The group leader's decision: the eligible member with the smallest URL leads."""
    identities: dict[str, RegistryIdentity] = {}
    for member_id, metadata in members:
        try:
            identities[member_id] = RegistryIdentity.from_json(json.loads(metadata))
        except (ValueError, KeyError, TypeError):
            log.warning("ignoring group member %s with unreadable metadata %r", member_id, metadata[:200])
    urls = [identity.url for identity in identities.values()]
    if len(set(urls)) != len(urls):
        log.error("registry instances with the same URL in group: %s; no leader", sorted(urls))
        return Assignment(DUPLICATE_URLS)
    eligible = sorted((i.url, member_id) for member_id, i in identities.items() if i.leader_eligibility)
    if not eligible:
        return Assignment()
    member_id = eligible[0][1]
    return Assignment(NO_ERROR, member_id, identities[member_id])


class _Rejoin(Exception):
    """The group moved on (rebalance, new generation, member expired): join again."""


class KafkaLeaderElector:
    """A group member in a thread of its own (its own asyncio loop); implements ``Leadership``."""

    def __init__(
        self,
        bootstrap_servers: str,
        identity: RegistryIdentity,
        *,
        group_id: str = "schema-registry",
        session_timeout_ms: int = 10_000,
        heartbeat_interval_ms: int = 3_000,
        rebalance_timeout_ms: int = 30_000,
        client_id: str = "seaway-schema-registry",
        security: ClientSecurity = PLAINTEXT,
    ) -> None:
        self.bootstrap_servers = bootstrap_servers
        self.security = security
        self.identity = identity
        self.group_id = group_id
        self.session_timeout = session_timeout_ms / 1000
        self.heartbeat_interval = heartbeat_interval_ms / 1000
        self.rebalance_timeout = rebalance_timeout_ms / 1000
        self.client_id = client_id
        self._cond = threading.Condition()
        self._assignment: Assignment | None = None
        self._member_id = ""
        self._generation = -1
        self._alive_at = 0.0  # monotonic time of the last successful sync or heartbeat
        self._coordinator: tuple[str, int] | None = None
        self._stopping = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[None] | None = None
        self._thread = threading.Thread(target=self._thread_main, name="sr-leader-election", daemon=True)

    @classmethod
    def from_settings(cls, settings: RegistrySettings, security: ClientSecurity = PLAINTEXT) -> KafkaLeaderElector:
        """``security``: the ``kafkastore.*`` security settings (see :mod:`seaway.schema_registry.security`)."""
        return cls(
            settings.kafkastore_bootstrap_servers,
            RegistryIdentity.from_url(settings.advertised_url, settings.leader_eligibility),
            group_id=settings.schema_registry_group_id,
            session_timeout_ms=settings.session_timeout_ms,
            heartbeat_interval_ms=settings.heartbeat_interval_ms,
            rebalance_timeout_ms=settings.rebalance_timeout_ms,
            security=security,
        )

    # -- Leadership -----------------------------------------------------------------------

    def _current(self) -> Assignment | None:
        if self._assignment is None or time.monotonic() - self._alive_at > self.session_timeout:
            return None
        return self._assignment

    def is_leader(self) -> bool:
        with self._cond:
            current = self._current()
            return (
                current is not None
                and current.leader == self._member_id
                and current.leader_identity is not None
                and current.leader_identity.leader_eligibility
            )

    def leader_url(self) -> str | None:
        with self._cond:
            current = self._current()
            return None if current is None or current.leader_identity is None else current.leader_identity.url

    def wait_for_election(self, timeout: float) -> Assignment | None:
        """Block until this member holds an assignment (which may name no leader), or None."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                current = self._current()
                if current is not None:
                    return current
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return None
                self._cond.wait(min(remaining, 0.1))

    def wait_for_leader(self, timeout: float) -> str | None:
        """Block until some instance leads (returns its URL) or ``timeout`` passes (None)."""
        deadline = time.monotonic() + timeout
        while True:
            current = self.wait_for_election(max(0.0, deadline - time.monotonic()))
            if current is not None and current.leader_identity is not None:
                return current.leader_identity.url
            if time.monotonic() >= deadline:
                return None
            time.sleep(0.05)

    @property
    def member_id(self) -> str:
        return self._member_id

    @property
    def generation(self) -> int:
        return self._generation

    # -- lifecycle ------------------------------------------------------------------------

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        """Leave the group (so the others re-elect at once) and stop the thread."""
        self._stopping.set()
        loop, task = self._loop, self._task
        if loop is not None and task is not None:
            with contextlib.suppress(RuntimeError):  # the loop already finished
                loop.call_soon_threadsafe(task.cancel)
        if self._thread.is_alive():
            self._thread.join(timeout)

    def _thread_main(self) -> None:
        asyncio.run(self._main())

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._task = asyncio.current_task()
        backoff = 0.1
        try:
            while not self._stopping.is_set():
                try:
                    await self._membership()
                    backoff = 0.1
                except (KafkaWireError, KafkaProtocolError, ValueError) as exc:
                    self._publish(None)
                    log.info("leader election: %s; retrying in %.1fs", exc, backoff)
                    await asyncio.sleep(backoff)
                    backoff = min(backoff * 2, 2.0)
        except asyncio.CancelledError:
            pass
        finally:
            self._publish(None)
            await self._leave()

    async def _membership(self) -> None:
        """One coordinator connection: join, sync, heartbeat; rejoin as the group requires."""
        conn = await self._find_coordinator()
        try:
            while not self._stopping.is_set():
                try:
                    await self._join_and_sync(conn)
                    await self._heartbeat(conn)
                except _Rejoin:
                    continue
        finally:
            await conn.close()

    async def _find_coordinator(self) -> KafkaConnection:
        bootstrap = await KafkaConnection.open_any(self.bootstrap_servers, self.client_id, security=self.security)
        try:
            request = FindCoordinatorRequest(key=self.group_id, key_type=0)
            response, _ = await bootstrap.call(request, FindCoordinatorResponse, cap=3)
        finally:
            await bootstrap.close()
        if response.error_code:
            raise error_for_code(response.error_code)(response.error_message or "FindCoordinator failed")
        self._coordinator = (response.host, response.port)
        return await KafkaConnection.open(response.host, response.port, self.client_id, security=self.security)

    def _check(self, code: int, what: str) -> None:
        if code == 0:
            return
        if code == UnknownMemberIdError.code:
            self._member_id = ""
        if code in _REJOIN_CODES:
            raise _Rejoin(what)
        raise error_for_code(code)(f"{what} failed")

    async def _join_and_sync(self, conn: KafkaConnection) -> None:
        self._publish(None)  # no leader while the group rebalances
        protocols = [JoinGroupRequestProtocol(name=PROTOCOL_NAME, metadata=self._metadata())]
        while True:
            join = JoinGroupRequest(
                group_id=self.group_id,
                session_timeout_ms=int(self.session_timeout * 1000),
                rebalance_timeout_ms=int(self.rebalance_timeout * 1000),
                member_id=self._member_id,
                protocol_type=PROTOCOL_TYPE,
                protocols=protocols,
            )
            joined, _ = await conn.call(join, JoinGroupResponse, cap=7, timeout=self.rebalance_timeout + 10)
            if joined.error_code == MemberIdRequiredError.code:  # KIP-394: rejoin with the id handed out
                self._member_id = joined.member_id
                continue
            self._check(joined.error_code, "JoinGroup")
            break
        self._member_id, self._generation = joined.member_id, joined.generation_id
        assignments = []
        if joined.leader == joined.member_id:
            decision = assign([(m.member_id, bytes(m.metadata)) for m in joined.members]).encode()
            assignments = [SyncGroupRequestAssignment(member_id=m.member_id, assignment=decision)
                           for m in joined.members]
        sync = SyncGroupRequest(
            group_id=self.group_id,
            generation_id=self._generation,
            member_id=self._member_id,
            protocol_type=PROTOCOL_TYPE,
            protocol_name=PROTOCOL_NAME,
            assignments=assignments,
        )
        synced, _ = await conn.call(sync, SyncGroupResponse, cap=5, timeout=self.rebalance_timeout + 10)
        self._check(synced.error_code, "SyncGroup")
        self._publish(Assignment.decode(bytes(synced.assignment)))

    async def _heartbeat(self, conn: KafkaConnection) -> None:
        while not self._stopping.is_set():
            await asyncio.sleep(self.heartbeat_interval)
            request = HeartbeatRequest(
                group_id=self.group_id, generation_id=self._generation, member_id=self._member_id
            )
            response, _ = await conn.call(request, HeartbeatResponse, cap=4, timeout=self.session_timeout)
            self._check(response.error_code, "Heartbeat")
            with self._cond:
                self._alive_at = time.monotonic()

    async def _leave(self) -> None:
        member_id, coordinator = self._member_id, self._coordinator
        if not member_id or coordinator is None:
            return
        try:
            conn = await KafkaConnection.open(*coordinator, self.client_id, timeout=2.0, security=self.security)
            try:
                request = LeaveGroupRequest(
                    group_id=self.group_id,
                    member_id=member_id,
                    members=[MemberIdentity(member_id=member_id, reason="registry stopping")],
                )
                await conn.call(request, LeaveGroupResponse, cap=4, timeout=2.0)
            finally:
                await conn.close()
        except (KafkaWireError, OSError) as exc:  # the session timeout will expire us instead
            log.info("could not leave the group cleanly: %s", exc)
        self._member_id = ""

    def _metadata(self) -> bytes:
        return json.dumps(self.identity.to_json(), separators=(",", ":")).encode()

    def _publish(self, assignment: Assignment | None) -> None:
        with self._cond:
            before = self._current()
            self._assignment = assignment
            self._alive_at = time.monotonic()
            if assignment is not None and assignment != before:
                url = None if assignment.leader_identity is None else assignment.leader_identity.url
                role = "leader" if assignment.leader == self._member_id else "follower"
                log.info("registry %s is %s (leader %s, generation %d)", self.identity.url, role, url,
                         self._generation)
            self._cond.notify_all()
