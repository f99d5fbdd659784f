"""Committed offsets and the admin APIs, against an in-process broker (real server, real log).

In-process so a test can run one offset-expiry pass "in the future" instead of waiting
offsets.retention.minutes, and restart the coordinator on the same log directory.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from seaway.broker.config import BrokerConfig
from seaway.broker.coordinator import GroupCoordinator
from seaway.broker.coordinator.offsets import expire_offsets
from seaway.broker.server import BrokerServer
from seaway.protocol.errors import (
    GroupIdNotFoundError,
    GroupSubscribedToTopicError,
    IllegalGenerationError,
    NonEmptyGroupError,
    OffsetMetadataTooLargeError,
    UnknownMemberIdError,
    UnknownTopicOrPartitionError,
)
from seaway.protocol.messages.consumer_protocol_subscription import ConsumerProtocolSubscription
from seaway.protocol.messages.delete_groups_request import DeleteGroupsRequest
from seaway.protocol.messages.delete_groups_response import DeleteGroupsResponse
from seaway.protocol.messages.list_groups_request import ListGroupsRequest
from seaway.protocol.messages.list_groups_response import ListGroupsResponse
from seaway.protocol.messages.offset_commit_request import (
    OffsetCommitRequest,
    OffsetCommitRequestPartition,
    OffsetCommitRequestTopic,
)
from seaway.protocol.messages.offset_commit_response import OffsetCommitResponse
from seaway.protocol.messages.offset_delete_request import (
    OffsetDeleteRequest,
    OffsetDeleteRequestPartition,
    OffsetDeleteRequestTopic,
)
from seaway.protocol.messages.offset_delete_response import OffsetDeleteResponse
from seaway.protocol.messages.offset_fetch_request import (
    OffsetFetchRequest,
    OffsetFetchRequestGroup,
    OffsetFetchRequestTopic,
    OffsetFetchRequestTopics,
)
from seaway.protocol.messages.offset_fetch_response import OffsetFetchResponse
from seaway.protocol.primitives import Writer

from tests.broker.groups.grouptest_client import FAST_GROUPS, RawClient

pytestmark = pytest.mark.timeout(30)


async def _start(data: Path, **overrides: str) -> tuple[BrokerServer, GroupCoordinator]:
    config = BrokerConfig({**FAST_GROUPS, "log.dirs": str(data), "listeners": "PLAINTEXT://127.0.0.1:0",
                           **overrides})
    server = BrokerServer(config)
    await server.start()
    assert server.context is not None
    coord = server.context.components.group_coordinator
    assert coord is not None
    for _ in range(200):
        if coord.loaded:
            break
        await asyncio.sleep(0.02)
    assert coord.loaded
    return server, coord


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[tuple[BrokerServer, GroupCoordinator, RawClient]]:
    srv, coord = await _start(tmp_path / "data")
    srv.logs.create_topic("t", 2)
    client = await RawClient.connect(srv.bootstrap_servers, "offsets-test")
    yield srv, coord, client
    await client.close()
    await srv.stop()


def _commit_req(group: str, offsets: dict[tuple[str, int], int], generation: int = -1, member: str = "",
                metadata: str = "m") -> OffsetCommitRequest:
    topics: dict[str, list[OffsetCommitRequestPartition]] = {}
    for (t, p), off in offsets.items():
        topics.setdefault(t, []).append(OffsetCommitRequestPartition(
            partition_index=p, committed_offset=off, committed_leader_epoch=3, committed_metadata=metadata))
    return OffsetCommitRequest(group_id=group, generation_id_or_member_epoch=generation, member_id=member,
                               topics=[OffsetCommitRequestTopic(name=t, partitions=ps) for t, ps in topics.items()])


async def _commit(client: RawClient, req: OffsetCommitRequest, version: int = 8) -> dict[tuple[str, int], int]:
    resp: OffsetCommitResponse = await client.call(req, OffsetCommitResponse, version)
    return {(t.name, p.partition_index): p.error_code for t in resp.topics for p in t.partitions}


async def _fetch(client: RawClient, group: str, version: int = 7) -> dict[tuple[str, int], tuple[int, int, str | None]]:
    resp: OffsetFetchResponse = await client.call(OffsetFetchRequest(group_id=group, topics=None),
                                                  OffsetFetchResponse, version)
    assert resp.error_code == 0
    return {(t.name, p.partition_index): (p.committed_offset, p.committed_leader_epoch, p.metadata)
            for t in resp.topics for p in t.partitions}


async def test_simple_consumer_commit_fetch_and_errors(
        server: tuple[BrokerServer, GroupCoordinator, RawClient]) -> None:
    _, _, client = server
    assert await _commit(client, _commit_req("simple", {("t", 0): 10, ("t", 1): 20})) == {
        ("t", 0): 0, ("t", 1): 0}
    assert await _fetch(client, "simple") == {("t", 0): (10, 3, "m"), ("t", 1): (20, 3, "m")}
    # Older commit version (no leader epoch before v6) and per-partition errors.
    errs = await _commit(client, _commit_req("simple", {("t", 0): 11, ("nope", 0): 1}), version=2)
    assert errs == {("t", 0): 0, ("nope", 0): UnknownTopicOrPartitionError.code}
    big = await _commit(client, _commit_req("simple", {("t", 1): 5}, metadata="x" * 5000))
    assert big == {("t", 1): OffsetMetadataTooLargeError.code}
    assert (await _fetch(client, "simple", version=2))[("t", 1)][0] == 20
    # A generation for a group that does not exist is refused; so is a stranger in a live group.
    assert await _commit(client, _commit_req("ghost", {("t", 0): 1}, generation=4)) == {
        ("t", 0): IllegalGenerationError.code}
    live = await client.join_fully("live")
    await client.sync("live", live.generation_id, live.member_id, {live.member_id: b""})
    assert await _commit(client, _commit_req("live", {("t", 0): 1})) == {("t", 0): UnknownMemberIdError.code}
    assert await _commit(client, _commit_req("live", {("t", 0): 7}, live.generation_id, live.member_id)) == {
        ("t", 0): 0}

    # v8 fetch of several groups at once; unknown partitions answer -1.
    def _group(name: str, parts: list[int] | None) -> OffsetFetchRequestGroup:
        topics = None if parts is None else [OffsetFetchRequestTopics(name="t", partition_indexes=parts)]
        return OffsetFetchRequestGroup(group_id=name, topics=topics)

    req = OffsetFetchRequest(groups=[_group("simple", [0, 1]), _group("live", None), _group("unknown", [0])],
                             require_stable=True)
    resp: OffsetFetchResponse = await client.call(req, OffsetFetchResponse, 8)
    got = {g.group_id: {(t.name, p.partition_index): p.committed_offset for t in g.topics for p in t.partitions}
           for g in resp.groups}
    assert got == {"simple": {("t", 0): 11, ("t", 1): 20}, "live": {("t", 0): 7}, "unknown": {("t", 0): -1}}
    # v1 (no top-level error code) with an explicit partition list.
    v1 = await client.call(OffsetFetchRequest(group_id="simple", topics=[
        OffsetFetchRequestTopic(name="t", partition_indexes=[1])]), OffsetFetchResponse, 1)
    assert [(p.partition_index, p.committed_offset) for t in v1.topics for p in t.partitions] == [(1, 20)]


async def test_list_delete_and_offset_delete(server: tuple[BrokerServer, GroupCoordinator, RawClient]) -> None:
    _, _, client = server
    await _commit(client, _commit_req("idle", {("t", 0): 1}))
    sub = Writer()
    sub.int16(1)
    ConsumerProtocolSubscription(topics=["t"]).encode(sub, 1)
    busy = await client.join_fully("busy", protocol_type="consumer", protocols=[("range", sub.getvalue())])
    await client.sync("busy", busy.generation_id, busy.member_id, {busy.member_id: b""})
    await _commit(client, _commit_req("busy", {("t", 0): 5}, busy.generation_id, busy.member_id))

    listed: ListGroupsResponse = await client.call(ListGroupsRequest(), ListGroupsResponse, 3)
    states = {g.group_id: g.protocol_type for g in listed.groups}
    assert states["idle"] == "" and states["busy"] == "consumer"
    only_stable = await client.call(ListGroupsRequest(states_filter=["Stable"]), ListGroupsResponse, 4)
    assert [(g.group_id, g.group_state) for g in only_stable.groups] == [("busy", "Stable")]
    classic = await client.call(ListGroupsRequest(types_filter=["classic"]), ListGroupsResponse, 5)
    assert {g.group_type for g in classic.groups} == {"classic"} and len(classic.groups) == len(listed.groups)
    assert (await client.call(ListGroupsRequest(types_filter=["share"]), ListGroupsResponse, 5)).groups == []

    def _odel(group: str, parts: list[int]) -> OffsetDeleteRequest:
        return OffsetDeleteRequest(group_id=group, topics=[OffsetDeleteRequestTopic(
            name="t", partitions=[OffsetDeleteRequestPartition(partition_index=p) for p in parts])])

    subscribed: OffsetDeleteResponse = await client.call(_odel("busy", [0]), OffsetDeleteResponse, 0)
    assert subscribed.error_code == 0
    assert subscribed.topics[0].partitions[0].error_code == GroupSubscribedToTopicError.code
    missing: OffsetDeleteResponse = await client.call(_odel("nobody", [0]), OffsetDeleteResponse, 0)
    assert missing.error_code == GroupIdNotFoundError.code

    deleted: DeleteGroupsResponse = await client.call(DeleteGroupsRequest(groups_names=["idle", "busy", "nobody"]),
                                                      DeleteGroupsResponse, 2)
    assert {r.group_id: r.error_code for r in deleted.results} == {
        "idle": 0, "busy": NonEmptyGroupError.code, "nobody": GroupIdNotFoundError.code}
    assert await _fetch(client, "idle") == {}
    # Deleting the last offset of an empty group removes the group itself.
    await _commit(client, _commit_req("solo", {("t", 1): 9}))
    solo: OffsetDeleteResponse = await client.call(_odel("solo", [1]), OffsetDeleteResponse, 0)
    assert solo.error_code == 0 and solo.topics[0].partitions[0].error_code == 0
    names = {g.group_id for g in (await client.call(ListGroupsRequest(), ListGroupsResponse, 3)).groups}
    assert "solo" not in names and "busy" in names


async def test_expiry_and_replay_after_restart(tmp_path: Path) -> None:
    data = tmp_path / "data"
    srv, coord = await _start(data)
    srv.logs.create_topic("t", 2)
    client = await RawClient.connect(srv.bootstrap_servers)
    await _commit(client, _commit_req("old", {("t", 0): 1}))
    await _commit(client, _commit_req("kept", {("t", 0): 2, ("t", 1): 3}))
    member = await client.join_fully("members", session_ms=30_000)
    await client.sync("members", member.generation_id, member.member_id, {member.member_id: b"asg"})
    await _commit(client, _commit_req("members", {("t", 1): 4}, member.generation_id, member.member_id))
    # Age only "old" past the retention; the group with a live member never expires.
    coord.groups["old"].offsets[("t", 0)].commit_timestamp -= coord.settings.offsets_retention_ms + 1
    assert expire_offsets(coord) == 1
    assert "old" not in coord.groups
    await client.close()
    await srv.stop()

    srv, coord = await _start(data)
    try:
        client = await RawClient.connect(srv.bootstrap_servers)
        assert await _fetch(client, "old") == {}
        assert await _fetch(client, "kept") == {("t", 0): (2, 3, "m"), ("t", 1): (3, 3, "m")}
        assert await _fetch(client, "members") == {("t", 1): (4, 3, "m")}
        # The group's membership came back too: the member carries on in its generation.
        assert await client.heartbeat("members", member.generation_id, member.member_id) == 0
        synced = await client.sync("members", member.generation_id, member.member_id)
        assert synced.assignment == b"asg"
        await client.close()
    finally:
        await srv.stop()


async def test_initial_rebalance_delay_gathers_early_joiners(tmp_path: Path) -> None:
    srv, _ = await _start(tmp_path / "data", **{"group.initial.rebalance.delay.ms": "600"})
    a = await RawClient.connect(srv.bootstrap_servers, "a")
    b = await RawClient.connect(srv.bootstrap_servers, "b")
    try:
        loop = asyncio.get_running_loop()
        started = loop.time()
        ja_task = asyncio.create_task(a.join("early", version=3))
        await asyncio.sleep(0.3)
        jb = await b.join("early", version=3)
        ja = await ja_task
        assert loop.time() - started >= 0.6
        # One generation with both members, not one per arrival.
        assert ja.generation_id == jb.generation_id == 1
        assert sorted(m.member_id for m in ja.members) == sorted([ja.member_id, jb.member_id])
    finally:
        await a.close()
        await b.close()
        await srv.stop()
