"""Several registry instances on one ``_schemas`` topic: election, forwarding, failover, restarts."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from seaway.schema_registry.app import create_app
from seaway.schema_registry.leader_election import DUPLICATE_URLS, Assignment, RegistryIdentity, assign
from seaway.schema_registry.log import MemorySchemaLog
from seaway.schema_registry.service import StaticLeadership
from seaway.schema_registry.settings import RegistrySettings

from tests.schema_registry.registry_support import (
    FAST_GROUPS,
    RegistryProcess,
    ServedApp,
    free_port,
    record_schema,
    register,
)
from tests.support.broker import BrokerProcess

FAST_ELECTION = {"session.timeout.ms": "1500", "heartbeat.interval.ms": "300"}


def _meta(host: str, port: int, eligible: bool = True) -> bytes:
    return json.dumps(RegistryIdentity(host, port, "http", eligible).to_json()).encode()


def test_assign_picks_the_eligible_member_with_the_smallest_url() -> None:
    members = [("m-b", _meta("h2", 8081)), ("m-a", _meta("h1", 8082)), ("m-c", _meta("h0", 1, eligible=False))]
    decision = assign(members)
    assert (decision.error, decision.leader) == (0, "m-a")
    assert decision.leader_identity == RegistryIdentity("h1", 8082)
    assert assign(list(reversed(members))) == decision  # order of members does not matter


def test_assign_without_eligible_members_or_with_duplicate_urls_has_no_leader() -> None:
    assert assign([("m", _meta("h", 1, eligible=False))]) == Assignment()
    duplicate = assign([("m1", _meta("h", 1)), ("m2", _meta("h", 1))])
    assert (duplicate.error, duplicate.leader) == (DUPLICATE_URLS, None)
    assert assign([("junk", b"not json"), ("m", _meta("h", 2))]).leader == "m"


def test_assignment_and_identity_speak_confluents_json() -> None:
    identity = RegistryIdentity("sr1", 8081, "http", True)
    assert identity.to_json() == {
        "version": 1, "host": "sr1", "port": 8081, "master_eligibility": True, "scheme": "http"}
    raw = Assignment(0, "member-1", identity).encode()
    assert json.loads(raw) == {"version": 1, "error": 0, "master": "member-1", "master_identity": identity.to_json()}
    assert Assignment.decode(raw) == Assignment(0, "member-1", identity)
    # What a Confluent group leader sends (its field order, no leader yet) is understood too.
    assert Assignment.decode(b'{"error":0,"master":null,"master_identity":null,"version":1}') == Assignment()


@pytest.fixture
def fast_broker(tmp_path: Path) -> Iterator[BrokerProcess]:
    with BrokerProcess(tmp_path / "broker", FAST_GROUPS) as broker:
        yield broker


def _instance(bootstrap: str, port: int, **extra: Any) -> ServedApp:
    settings = RegistrySettings(
        kafkastore_bootstrap_servers=bootstrap,
        listeners=f"http://127.0.0.1:{port}",
        session_timeout_ms=1500,
        heartbeat_interval_ms=300,
        kafkastore_init_timeout_ms=20_000,
        **extra,
    )
    return ServedApp(create_app(settings), port).start()


def _eventually(check: Callable[[], bool], timeout: float = 60.0) -> float:
    """Seconds until ``check()`` holds; fails the test after ``timeout``."""
    start = time.monotonic()
    while not check():
        assert time.monotonic() - start < timeout, "condition not reached in time"
        time.sleep(0.05)
    return time.monotonic() - start


def _leader_of(served: ServedApp) -> str | None:
    url: str | None = served.app.state.leadership.leader_url()
    return url


@pytest.mark.timeout(120)
def test_two_instances_elect_forward_fail_over_and_restart(fast_broker: BrokerProcess) -> None:
    ports = sorted([free_port(), free_port()])
    first = _instance(fast_broker.bootstrap, ports[1])
    second = _instance(fast_broker.bootstrap, ports[0])  # smaller URL: it takes over the lead
    try:
        urls = {first.url, second.url}
        _eventually(lambda: _leader_of(first) == _leader_of(second) == second.url)
        assert second.app.state.leadership.is_leader()
        assert not first.app.state.leadership.is_leader()

        # A write at the follower is forwarded; both serve it at once after it returns.
        a, b = record_schema("A", "x"), record_schema("B", "y")
        assert register(first.url, "a-value", a).json() == {"id": 1}
        assert register(second.url, "b-value", b).json() == {"id": 2}
        for url in urls:
            assert httpx.get(f"{url}/subjects").json() == ["a-value", "b-value"]
            assert httpx.get(f"{url}/schemas/ids/1/versions").json() == [{"subject": "a-value", "version": 1}]
        # Errors come back from the leader unchanged, through the follower.
        bad = httpx.post(f"{first.url}/subjects/a-value/versions", json={"schema": "{not json"})
        assert bad.status_code == 422 and bad.json()["error_code"] == 42201
        put = httpx.put(f"{first.url}/config/a-value", json={"compatibility": "FULL"})
        assert put.json() == {"compatibility": "FULL"}
        assert httpx.get(f"{second.url}/config/a-value").json() == {"compatibilityLevel": "FULL"}

        # The leader stops: the other takes over writes, ids continue. The deadline stays under
        # rebalance.timeout.ms (30 s): a takeover that waited for it would still fail.
        second.stop()
        _eventually(lambda: first.app.state.leadership.is_leader(), timeout=25)
        assert register(first.url, "c-value", record_schema("C", "z")).json() == {"id": 3}
    finally:
        first.stop()
        second.stop()

    # Restart everything (other ports even): the same ids for the same schemas.
    again = [_instance(fast_broker.bootstrap, free_port()) for _ in range(2)]
    try:
        for served in again:
            assert httpx.get(f"{served.url}/subjects/a-value/versions/1").json()["id"] == 1
            assert httpx.get(f"{served.url}/subjects/c-value/versions/latest").json()["id"] == 3
        assert register(again[0].url, "d-value", record_schema("D", "w")).json() == {"id": 4}
        assert register(again[1].url, "a2-value", a).json() == {"id": 1}  # known schema, known id
    finally:
        for served in again:
            served.stop()


@pytest.mark.timeout(60)
def test_without_an_eligible_leader_writes_fail_with_50004(fast_broker: BrokerProcess) -> None:
    served = _instance(fast_broker.bootstrap, free_port(), leader_eligibility=False)
    try:
        response = register(served.url, "x-value", record_schema("X", "x"))
        assert (response.status_code, response.json()["error_code"]) == (500, 50004)
        assert httpx.get(f"{served.url}/subjects").json() == []  # reads still work
    finally:
        served.stop()


@pytest.mark.timeout(120)
def test_killing_the_leader_process_hands_writes_to_the_survivor(fast_broker: BrokerProcess) -> None:
    overrides = [f"{k}={v}" for k, v in FAST_ELECTION.items()]
    ports = sorted([free_port(), free_port()])
    leader = RegistryProcess(fast_broker.bootstrap, *overrides, port=ports[0]).start()
    follower = RegistryProcess(fast_broker.bootstrap, *overrides, port=ports[1]).start()
    try:
        _eventually(lambda: register(follower.url, "a-value", record_schema("A", "x")).status_code == 200)
        assert httpx.get(f"{leader.url}/subjects/a-value/versions/1").json()["id"] == 1
        leader.kill()  # SIGKILL: no LeaveGroup, the session timeout (1.5 s) must expire
        # The deadline stays under rebalance.timeout.ms (30 s): a takeover that waited for it
        # instead of the session timeout would still fail.
        _eventually(lambda: register(follower.url, "b-value", record_schema("B", "y")).status_code == 200,
                    timeout=25)
        assert httpx.get(f"{follower.url}/subjects/b-value/versions/1").json()["id"] == 2
        assert follower.stop() == 0
    finally:
        leader.kill()
        follower.kill()


@pytest.mark.timeout(30)
def test_forwarding_without_a_broker_leader_answer_loops_and_unknown_leader() -> None:
    shared = MemorySchemaLog()  # one "topic" for both instances
    leader_port, follower_port, lost_port = free_port(), free_port(), free_port()
    leader = ServedApp(create_app(log=shared, leadership=StaticLeadership(True)), leader_port).start()
    follower = ServedApp(create_app(log=shared, leadership=StaticLeadership(
        False, f"http://127.0.0.1:{leader_port}")), follower_port).start()
    # Two instances that each believe the other leads: the request must not bounce for ever.
    confused = ServedApp(create_app(log=shared, leadership=StaticLeadership(
        False, f"http://127.0.0.1:{follower_port}")), lost_port).start()
    orphan = ServedApp(create_app(log=MemorySchemaLog(), leadership=StaticLeadership(False, None))).start()
    try:
        response = register(follower.url, "a-value", record_schema("A", "x"), normalize="true")
        assert (response.status_code, response.json()) == (200, {"id": 1})
        assert httpx.get(f"{follower.url}/subjects/a-value/versions").json() == [1]  # read-your-write here
        deleted = httpx.delete(f"{follower.url}/subjects/a-value")
        assert deleted.json() == [1]
        assert httpx.get(f"{leader.url}/subjects").json() == []
        looped = register(confused.url, "b-value", record_schema("B", "y"))
        assert (looped.status_code, looped.json()["error_code"]) == (500, 50003)
        unknown = httpx.put(f"{orphan.url}/config", json={"compatibility": "NONE"})
        assert (unknown.status_code, unknown.json()["error_code"]) == (500, 50004)
    finally:
        for served in (leader, follower, confused, orphan):
            served.stop()
