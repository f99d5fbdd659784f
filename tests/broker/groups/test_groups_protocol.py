"""The group state machine through the wire protocol, with a hand-driven client.

Protocol type "connect" on purpose: the coordinator must not care what the members say.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from seaway.protocol.errors import (
    FencedInstanceIdError,
    GroupMaxSizeReachedError,
    IllegalGenerationError,
    InconsistentGroupProtocolError,
    InvalidSessionTimeoutError,
    RebalanceInProgressError,
    UnknownMemberIdError,
)
from seaway.protocol.messages.describe_groups_request import DescribeGroupsRequest
from seaway.protocol.messages.describe_groups_response import DescribeGroupsResponse
from seaway.protocol.messages.leave_group_request import LeaveGroupRequest, MemberIdentity
from seaway.protocol.messages.leave_group_response import LeaveGroupResponse

from tests.broker.groups.grouptest_client import FAST_GROUPS, MEMBER_ID_REQUIRED, RawClient
from tests.support.broker import BrokerProcess

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(scope="module")
def gbroker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    data: Path = tmp_path_factory.mktemp("groups-protocol")
    with BrokerProcess(data, {**FAST_GROUPS, "group.max.size": "2"}) as broker:
        yield broker


@pytest.fixture
def group() -> str:
    return f"g-{uuid.uuid4().hex[:10]}"


async def _client(broker: BrokerProcess, name: str) -> RawClient:
    for _ in range(100):  # the coordinator may still be creating __consumer_offsets
        client = await RawClient.connect(broker.bootstrap, name)
        resp = await client.join("probe-" + name, protocols=[])
        if resp.error_code not in (14, 15):
            return client
        await client.close()
        await asyncio.sleep(0.1)
    raise AssertionError("coordinator never became available")


async def test_member_id_required_then_leader_and_protocol_choice(gbroker: BrokerProcess, group: str) -> None:
    a = await _client(gbroker, "a")
    b = await _client(gbroker, "b")
    try:
        first = await a.join(group, protocols=[("x", b"A-x"), ("y", b"A-y")])
        assert first.error_code == MEMBER_ID_REQUIRED
        assert first.member_id.startswith("a-")
        ja = await a.join(group, member_id=first.member_id, protocols=[("x", b"A-x"), ("y", b"A-y")])
        assert ja.error_code == 0 and ja.generation_id == 1 and ja.leader == ja.member_id
        assert ja.protocol_name == "x"
        assert (await a.sync(group, 1, ja.member_id, {ja.member_id: b"all"})).assignment == b"all"

        # b only speaks "y": the group must switch to the protocol everyone supports.
        jb_task = asyncio.create_task(b.join_fully(group, protocols=[("y", b"B-y")]))
        await asyncio.sleep(0.3)
        assert not jb_task.done(), "b must wait for a to rejoin"
        assert await a.heartbeat(group, 1, ja.member_id) == RebalanceInProgressError.code
        ja2 = await a.join(group, member_id=ja.member_id, protocols=[("x", b"A-x"), ("y", b"A-y")])
        jb = await jb_task
        assert ja2.error_code == jb.error_code == 0
        assert ja2.generation_id == jb.generation_id == 2
        assert ja2.protocol_name == jb.protocol_name == "y"
        assert ja2.leader == jb.leader == ja.member_id
        assert {(m.member_id, m.metadata) for m in ja2.members} == {(ja.member_id, b"A-y"), (jb.member_id, b"B-y")}
        assert jb.members == []

        # The follower waits for the leader's assignment.
        follower = asyncio.create_task(b.sync(group, 2, jb.member_id))
        await asyncio.sleep(0.2)
        assert not follower.done()
        leader = await a.sync(group, 2, ja.member_id, {ja.member_id: b"to-a", jb.member_id: b"to-b"})
        assert leader.assignment == b"to-a"
        assert (await follower).assignment == b"to-b"
        assert await b.heartbeat(group, 2, jb.member_id) == 0
    finally:
        await a.close()
        await b.close()


async def test_error_codes(gbroker: BrokerProcess, group: str) -> None:
    a = await _client(gbroker, "a")
    try:
        ja = await a.join_fully(group)
        assert ja.error_code == 0
        await a.sync(group, ja.generation_id, ja.member_id, {ja.member_id: b""})
        assert await a.heartbeat(group, ja.generation_id + 5, ja.member_id) == IllegalGenerationError.code
        assert await a.heartbeat(group, ja.generation_id, "nobody") == UnknownMemberIdError.code
        assert (await a.join(group, member_id="nobody")).error_code == UnknownMemberIdError.code
        assert (await a.sync(group, ja.generation_id + 1, ja.member_id)).error_code == IllegalGenerationError.code
        other_type = await a.join(group, protocol_type="consumer")
        assert other_type.error_code == InconsistentGroupProtocolError.code
        no_common = await a.join(group, protocols=[("zzz", b"")])
        assert no_common.error_code == InconsistentGroupProtocolError.code
        assert (await a.join(group, session_ms=100)).error_code == InvalidSessionTimeoutError.code
        # v3 (before KIP-394) joins directly without MEMBER_ID_REQUIRED.
        fresh = f"{group}-v3"
        direct = await a.join(fresh, version=3)
        assert direct.error_code == 0 and direct.member_id
    finally:
        await a.close()


async def test_session_expiry_rebalances(gbroker: BrokerProcess, group: str) -> None:
    a = await _client(gbroker, "a")
    b = await _client(gbroker, "b")
    try:
        ja = await a.join_fully(group, session_ms=800)
        await a.sync(group, 1, ja.member_id, {ja.member_id: b""})
        jb_task = asyncio.create_task(b.join_fully(group, session_ms=800))
        await asyncio.sleep(0.1)
        ja2 = await a.join(group, member_id=ja.member_id, session_ms=800)
        jb = await jb_task
        gen = ja2.generation_id
        await asyncio.gather(a.sync(group, gen, ja.member_id, {}), b.sync(group, gen, jb.member_id))
        # a keeps heartbeating, b goes silent: after b's session, a is told to rebalance.
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 5
        code = 0
        while loop.time() < deadline:
            code = await a.heartbeat(group, gen, ja.member_id)
            if code:
                break
            await asyncio.sleep(0.2)
        assert code == RebalanceInProgressError.code
        ja3 = await a.join(group, member_id=ja.member_id, session_ms=800)
        assert ja3.generation_id == gen + 1
        assert [m.member_id for m in ja3.members] == [ja.member_id]
        assert await b.heartbeat(group, gen, jb.member_id) == UnknownMemberIdError.code
    finally:
        await a.close()
        await b.close()


async def test_static_member_rejoins_without_rebalance_and_fences_old_id(
        gbroker: BrokerProcess, group: str) -> None:
    a = await _client(gbroker, "a")
    b = await _client(gbroker, "b")
    try:
        ja = await a.join(group, instance_id="inst-a")  # static members skip MEMBER_ID_REQUIRED
        assert ja.error_code == 0 and ja.member_id.startswith("inst-a-")
        jb_task = asyncio.create_task(b.join(group, instance_id="inst-b"))
        await asyncio.sleep(0.1)
        ja = await a.join(group, member_id=ja.member_id, instance_id="inst-a")
        jb = await jb_task
        gen = ja.generation_id
        await asyncio.gather(
            a.sync(group, gen, ja.member_id, {ja.member_id: b"pa", jb.member_id: b"pb"}, instance_id="inst-a"),
            b.sync(group, gen, jb.member_id, instance_id="inst-b"))

        # b "restarts": same instance id, no member id. Same generation, same assignment.
        b2 = await _client(gbroker, "b")
        try:
            again = await b2.join(group, instance_id="inst-b")
            assert again.error_code == 0
            assert again.generation_id == gen
            assert again.member_id != jb.member_id
            assert again.leader == ja.member_id
            synced = await b2.sync(group, gen, again.member_id, instance_id="inst-b")
            assert synced.error_code == 0 and synced.assignment == b"pb"
            assert await a.heartbeat(group, gen, ja.member_id, "inst-a") == 0  # no rebalance for a
            old = await b.heartbeat(group, gen, jb.member_id, "inst-b")
            assert old == FencedInstanceIdError.code
        finally:
            await b2.close()
    finally:
        await a.close()
        await b.close()


async def test_batched_leave_and_describe(gbroker: BrokerProcess, group: str) -> None:
    a = await _client(gbroker, "a")
    try:
        ja = await a.join_fully(group)
        await a.sync(group, ja.generation_id, ja.member_id, {ja.member_id: b"asg"})
        desc = await a.call(DescribeGroupsRequest(groups=[group, "no-such-group"]), DescribeGroupsResponse, 5)
        g, missing = desc.groups
        assert (g.group_state, g.protocol_type, g.protocol_data) == ("Stable", "connect", "x")
        assert [(m.member_id, m.member_metadata, m.member_assignment) for m in g.members] == [
            (ja.member_id, b"meta", b"asg")]
        assert g.members[0].client_id == "a" and g.members[0].client_host == "/127.0.0.1"
        assert missing.group_state == "Dead" and missing.error_code == 0
        leave = await a.call(LeaveGroupRequest(group_id=group, members=[
            MemberIdentity(member_id=ja.member_id), MemberIdentity(member_id="ghost")]), LeaveGroupResponse, 4)
        assert leave.error_code == 0
        assert [m.error_code for m in leave.members] == [0, UnknownMemberIdError.code]
        desc = await a.call(DescribeGroupsRequest(groups=[group]), DescribeGroupsResponse, 5)
        assert desc.groups[0].group_state == "Empty" and desc.groups[0].members == []
    finally:
        await a.close()


async def test_group_max_size(gbroker: BrokerProcess, group: str) -> None:
    clients = [await _client(gbroker, n) for n in ("a", "b", "c")]
    try:
        ja = await clients[0].join_fully(group)
        jb_task = asyncio.create_task(clients[1].join_fully(group))
        await asyncio.sleep(0.1)
        ja = await clients[0].join(group, member_id=ja.member_id)
        jb = await jb_task
        await asyncio.gather(clients[0].sync(group, ja.generation_id, ja.member_id, {}),
                             clients[1].sync(group, jb.generation_id, jb.member_id))
        # group.max.size=2 and two members: a third is refused and nobody rebalances.
        assert (await clients[2].join_fully(group)).error_code == GroupMaxSizeReachedError.code
        assert await clients[0].heartbeat(group, ja.generation_id, ja.member_id) == 0
    finally:
        for c in clients:
            await c.close()


async def test_rebalance_timeout_drops_members_that_do_not_rejoin(gbroker: BrokerProcess, group: str) -> None:
    a = await _client(gbroker, "a")
    b = await _client(gbroker, "b")
    try:
        ja = await a.join_fully(group, rebalance_ms=1000)
        jb_task = asyncio.create_task(b.join_fully(group, rebalance_ms=1000))
        await asyncio.sleep(0.1)
        ja = await a.join(group, member_id=ja.member_id, rebalance_ms=1000)
        jb = await jb_task
        await asyncio.gather(a.sync(group, ja.generation_id, ja.member_id, {}),
                             b.sync(group, jb.generation_id, jb.member_id))
        # b rejoins with new metadata (a rebalance); a keeps heartbeating but never rejoins.
        loop = asyncio.get_running_loop()
        started = loop.time()
        rejoin = asyncio.create_task(b.join(group, member_id=jb.member_id, protocols=[("x", b"new")],
                                            rebalance_ms=1000))
        await asyncio.sleep(0.2)
        assert await a.heartbeat(group, ja.generation_id, ja.member_id) == RebalanceInProgressError.code
        jb2 = await rejoin
        assert 0.8 <= loop.time() - started <= 3.0
        assert jb2.generation_id == jb.generation_id + 1
        assert jb2.leader == jb.member_id and [m.member_id for m in jb2.members] == [jb.member_id]
        assert await a.heartbeat(group, ja.generation_id, ja.member_id) == UnknownMemberIdError.code
    finally:
        await a.close()
        await b.close()
