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

The membership itself (find the coordinator, JoinGroup, SyncGroup, heartbeats, LeaveGroup, and
every group error: rebalance in progress, unknown member id, illegal generation, coordinator moved
or not available, authentication failures) is :class:`~seaway.protocol.group_member.GroupMember`'s,
the same loop the Connect worker runs; this module only speaks the ``sr`` payloads.

Guarantees this module gives the registry (the :class:`~seaway.schema_registry.service.Leadership`
seam):

* ``is_leader()`` is true only while this instance holds the latest assignment naming it,
  and its last successful heartbeat is younger than the session timeout: an instance cut off
  from the coordinator stops writing before the coordinator can elect another leader.
* While a rebalance runs, and from the moment the coordinator connection fails until the next
  join, nobody is leader here (writes get 50004, clients retry), as in Confluent.
* An assignment this instance cannot read (a foreign group leader's) means no leader until the
  next rebalance; it never ends the membership.
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

from seaway.protocol.client import PLAINTEXT, ClientSecurity
from seaway.protocol.group_member import GroupHandler, GroupMember, JoinedMember
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
        """Confluent's assignment JSON. It comes from another member: any other shape is a ValueError."""
        try:
            data = json.loads(raw)
            identity = data.get("master_identity")
            leader = data.get("master")
            return cls(
                int(data.get("error") or NO_ERROR),
                None if leader is None else str(leader),
                None if identity is None else RegistryIdentity.from_json(identity),
            )
        except (KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"not a registry assignment: {exc!r}") from exc


def assign(members: Sequence[tuple[str, bytes]]) -> Assignment:
    """The group leader's decision: the eligible member with the smallest URL leads."""
    identities: dict[str, RegistryIdentity] = {}
    for member_id, metadata in members:
        try:
            identities[member_id] = RegistryIdentity.from_json(json.loads(metadata))
        except (ValueError, KeyError, TypeError, AttributeError):
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


class KafkaLeaderElector(GroupHandler):
    """The registry's :class:`GroupMember` (protocol type ``sr``), on a thread of its own; implements ``Leadership``.

    Joining, syncing, heartbeats, rejoining and every group error are :class:`GroupMember`'s, the
    very loop the Connect worker runs; this class only encodes Confluent's metadata and assignment
    and publishes the result to the request threads. It runs its own asyncio loop on its own thread
    because the registry's request handlers block on ``_schemas`` reads: heartbeats must not wait
    for them (nor they for a rebalance).
    """

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
        self.identity = identity
        self.session_timeout = session_timeout_ms / 1000
        self._member = GroupMember(
            bootstrap_servers=bootstrap_servers, group_id=group_id, protocol_type=PROTOCOL_TYPE, handler=self,
            session_timeout_ms=session_timeout_ms, rebalance_timeout_ms=rebalance_timeout_ms,
            heartbeat_interval_ms=heartbeat_interval_ms, client_id=client_id, security=security)
        self._cond = threading.Condition()
        self._assignment: Assignment | None = None
        self._assigned_to = ""  # the member id the assignment was sent to
        self._stopping = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wake: asyncio.Event | None = None
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
        if self._assignment is None or time.monotonic() - self._member.alive_at > self.session_timeout:
            return None
        return self._assignment

    def is_leader(self) -> bool:
        with self._cond:
            current = self._current()
            return (
                current is not None
                and current.leader == self._assigned_to
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
        return self._member.member_id

    @property
    def generation(self) -> int:
        return self._member.generation

    # -- lifecycle ------------------------------------------------------------------------

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        """Leave the group (so the others re-elect at once) and stop the thread."""
        self._stopping.set()
        loop, wake = self._loop, self._wake
        if loop is not None and wake is not None:
            with contextlib.suppress(RuntimeError):  # the loop already finished
                loop.call_soon_threadsafe(wake.set)
        if self._thread.is_alive():
            self._thread.join(timeout)

    def _thread_main(self) -> None:
        asyncio.run(self._main())

    async def _main(self) -> None:
        self._wake = asyncio.Event()
        self._loop = asyncio.get_running_loop()  # stop() wakes us through it from now on
        self._member.start()
        try:
            if not self._stopping.is_set():
                await self._wake.wait()
        finally:
            self._publish(None)  # stop writing before the others can elect a new leader
            await self._member.stop()  # LeaveGroup

    # -- GroupHandler: Confluent's "sr" payloads ------------------------------------------

    def protocols(self) -> list[tuple[str, bytes]]:
        return [(PROTOCOL_NAME, json.dumps(self.identity.to_json(), separators=(",", ":")).encode())]

    async def on_join_prepare(self, generation: int, member_id: str, lost: bool) -> None:
        self._publish(None)  # no leader while the group rebalances

    async def perform_assignment(self, leader_id: str, protocol: str, members: list[JoinedMember],
                                 generation: int) -> dict[str, bytes]:
        decision = assign([(m.member_id, m.metadata) for m in members]).encode()
        return {m.member_id: decision for m in members}

    async def on_join_complete(self, generation: int, member_id: str, leader_id: str, protocol: str,
                               assignment: bytes) -> None:
        try:
            decided = Assignment.decode(assignment)
        except ValueError as exc:  # another instance's group leader sent what we cannot read
            log.error("unreadable registry assignment from group leader %s (%s): %r; no leader until the next "
                      "rebalance", leader_id, exc, assignment[:200])
            decided = Assignment()
        self._publish(decided, member_id, generation)

    async def on_coordinator_lost(self, reason: str) -> None:
        self._publish(None)

    def _publish(self, assignment: Assignment | None, member_id: str = "", generation: int = -1) -> None:
        with self._cond:
            before = self._current()
            self._assignment = assignment
            self._assigned_to = member_id
            if assignment is not None and assignment != before:
                url = None if assignment.leader_identity is None else assignment.leader_identity.url
                role = "leader" if assignment.leader == member_id else "follower"
                log.info("registry %s is %s (leader %s, generation %d)", self.identity.url, role, url, generation)
            self._cond.notify_all()
