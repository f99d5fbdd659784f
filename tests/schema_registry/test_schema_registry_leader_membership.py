"""The registry's leader election rides on the shared group member (issue 16 item 3).

Against a real broker: the elector's membership is :class:`~seaway.protocol.group_member.GroupMember`'s,
so it survives what the Connect worker survives, and reports what the worker reports:

- another ``sr`` member (a foreign registry as group leader) sends an assignment we cannot read:
  no leader meanwhile, and once that member leaves we elect ourselves (the registry's own loop used
  to die on it, leaving the instance without election until restarted);
- the broker goes away and comes back: leadership is dropped at once (not a session timeout
  later) and regained after;
- over SASL_SSL the election works; a wrong password is logged as an ERROR (not a quiet INFO retry).
"""

from __future__ import annotations

import asyncio
import json
import logging
import ssl
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from seaway.protocol.client import PLAINTEXT, ClientSecurity
from seaway.protocol.group_member import GroupHandler, GroupMember, JoinedMember
from seaway.schema_registry.leader_election import PROTOCOL_NAME, PROTOCOL_TYPE, KafkaLeaderElector, RegistryIdentity

from tests.schema_registry.registry_support import FAST_GROUPS
from tests.support.broker import BrokerProcess
from tests.support.secure_broker import ADMIN_PASSWORD, start_secure
from tests.support.tls_material import make_material

# Confluent's shape, but master_identity lacks its port: what a broken or future foreign leader might send.
UNREADABLE = b'{"version":1,"error":0,"master":"someone","master_identity":{"host":"h","scheme":"http"}}'


class ForeignLeader(GroupHandler):
    """Another ``sr`` member of the group (as a different registry implementation would join)."""

    def __init__(self) -> None:
        self.generations: list[int] = []

    def protocols(self) -> list[tuple[str, bytes]]:
        return [(PROTOCOL_NAME, json.dumps(RegistryIdentity("foreign", 1).to_json()).encode())]

    async def perform_assignment(self, leader_id: str, protocol: str, members: list[JoinedMember],
                                 generation: int) -> dict[str, bytes]:
        return {m.member_id: UNREADABLE for m in members}

    async def on_join_complete(self, generation: int, member_id: str, leader_id: str, protocol: str,
                               assignment: bytes) -> None:
        self.generations.append(generation)


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[BrokerProcess]:
    with BrokerProcess(tmp_path / "broker", FAST_GROUPS) as process:
        yield process


def _elector(bootstrap: str, port: int, security: ClientSecurity = PLAINTEXT,
             group_id: str = "schema-registry", session_timeout_ms: int = 1500) -> KafkaLeaderElector:
    return KafkaLeaderElector(bootstrap, RegistryIdentity("127.0.0.1", port), group_id=group_id,
                              session_timeout_ms=session_timeout_ms, heartbeat_interval_ms=300,
                              rebalance_timeout_ms=5000, security=security)


async def _until(check: Callable[[], bool], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "condition not reached in time"
        await asyncio.sleep(0.05)


@pytest.mark.timeout(90)
async def test_an_unreadable_assignment_from_a_foreign_leader_does_not_end_the_election(
        broker: BrokerProcess) -> None:
    foreign = ForeignLeader()
    member = GroupMember(bootstrap_servers=broker.bootstrap, group_id="schema-registry", protocol_type=PROTOCOL_TYPE,
                         handler=foreign, session_timeout_ms=1500, heartbeat_interval_ms=300,
                         rebalance_timeout_ms=5000)
    member.start()
    elector = _elector(broker.bootstrap, 18081)
    try:
        await _until(lambda: bool(foreign.generations), 20)  # the foreign member is the group leader
        elector.start()
        # It hands us what we cannot read: we hold an assignment, and nobody leads.
        await _until(lambda: len(foreign.generations) >= 2 and elector.generation == foreign.generations[-1], 20)
        decided = await asyncio.to_thread(elector.wait_for_election, 10)
        assert decided is not None and decided.leader is None
        assert not elector.is_leader() and elector.leader_url() is None
        # The foreign member leaves: the group rebalances around us and we lead.
        await member.stop()
        url = await asyncio.to_thread(elector.wait_for_leader, 20)
        assert url == "http://127.0.0.1:18081"
        assert elector.is_leader()
    finally:
        await member.stop()
        await asyncio.to_thread(elector.stop)


@pytest.mark.timeout(120)
def test_the_leader_lets_go_while_the_broker_is_away_and_leads_again_after(broker: BrokerProcess) -> None:
    # A 12 s session: were leadership only dropped when the session runs out, it would take
    # > 11.7 s; the next heartbeat (300 ms) fails at once, and 8 s leave a loaded box room.
    elector = _elector(broker.bootstrap, 18082, session_timeout_ms=12_000)
    elector.start()
    try:
        assert elector.wait_for_leader(60) == "http://127.0.0.1:18082"
        assert elector.is_leader()
        broker.kill()  # the coordinator vanishes without a word
        start = time.monotonic()
        while elector.is_leader():  # the next heartbeat fails: leadership ends at once
            assert time.monotonic() - start < 8.0, "still leader with no coordinator"
            time.sleep(0.05)
        broker.start()  # same port, same data: the coordinator comes back
        assert elector.wait_for_leader(60) == "http://127.0.0.1:18082"
        assert elector.is_leader()
    finally:
        elector.stop()


@pytest.mark.timeout(120)
def test_over_sasl_ssl_the_election_works_and_a_wrong_password_is_an_error(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    material = make_material(tmp_path / "tls")
    secure = start_secure(tmp_path / "broker", material, **{"group.min.session.timeout.ms": "500"})
    context = ssl.create_default_context(cafile=str(material.ca))
    bootstrap = secure.bootstrap("SASL_SSL")
    good = ClientSecurity("SASL_SSL", context, "PLAIN", "admin", ADMIN_PASSWORD)
    bad = ClientSecurity("SASL_SSL", context, "PLAIN", "admin", "not-the-password")
    elector = _elector(bootstrap, 18083, good)
    refused = _elector(bootstrap, 18084, bad, group_id="other-registry")
    try:
        with caplog.at_level(logging.INFO):
            elector.start()
            refused.start()
            assert elector.wait_for_leader(30) == "http://127.0.0.1:18083"
            assert refused.wait_for_election(3) is None
        errors = [r for r in caplog.records if r.levelno == logging.ERROR and "authentication failed" in r.getMessage()]
        assert errors, "a wrong password must be logged as an ERROR"
    finally:
        refused.stop()
        elector.stop()
        secure.process.stop()
