"""The KIP-848 error contract on the wire: member epochs, offset commits with epochs, one type per group id.

Driven by hand (``RawClient``) because real clients hide these answers: FENCED_MEMBER_EPOCH,
STALE_MEMBER_EPOCH on OffsetCommit v9 / OffsetFetch v9, UNSUPPORTED_VERSION for a member
committing with v8, INVALID_REQUEST / UNSUPPORTED_ASSIGNOR for bad heartbeats, and a group id
being either classic or consumer (INCONSISTENT_GROUP_PROTOCOL / GROUP_ID_NOT_FOUND), as Kafka 4.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]  # re-exported without __all__
from seaway.protocol.errors import (
    FencedInstanceIdError,
    FencedMemberEpochError,
    GroupIdNotFoundError,
    InconsistentGroupProtocolError,
    InvalidRegularExpressionError,
    InvalidRequestError,
    NonEmptyGroupError,
    StaleMemberEpochError,
    UnknownMemberIdError,
    UnreleasedInstanceIdError,
    UnsupportedAssignorError,
    UnsupportedVersionError,
)
from seaway.protocol.messages.consumer_group_heartbeat_request import (
    ConsumerGroupHeartbeatRequest,
    TopicPartitions,
)
from seaway.protocol.messages.consumer_group_heartbeat_response import ConsumerGroupHeartbeatResponse
from seaway.protocol.messages.delete_groups_request import DeleteGroupsRequest
from seaway.protocol.messages.delete_groups_response import DeleteGroupsResponse
from seaway.protocol.messages.describe_groups_request import DescribeGroupsRequest
from seaway.protocol.messages.describe_groups_response import DescribeGroupsResponse
from seaway.protocol.messages.list_groups_request import ListGroupsRequest
from seaway.protocol.messages.list_groups_response import ListGroupsResponse
from seaway.protocol.messages.offset_commit_request import (
    OffsetCommitRequest,
    OffsetCommitRequestPartition,
    OffsetCommitRequestTopic,
)
from seaway.protocol.messages.offset_commit_response import OffsetCommitResponse
from seaway.protocol.messages.offset_fetch_request import OffsetFetchRequest, OffsetFetchRequestGroup
from seaway.protocol.messages.offset_fetch_response import OffsetFetchResponse

from tests.broker.groups.grouptest_client import FAST_GROUPS, RawClient
from tests.support.broker import BrokerProcess

pytestmark = pytest.mark.timeout(90)


@pytest.fixture(scope="module")
def wbroker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    with BrokerProcess(tmp_path_factory.mktemp("groups-kip848-wire"),
                       {**FAST_GROUPS, "group.consumer.heartbeat.interval.ms": "1234",
                        "group.consumer.min.heartbeat.interval.ms": "1000"}) as broker:
        yield broker


@pytest.fixture(scope="module")
def topic(wbroker: BrokerProcess) -> str:
    name = f"t-{uuid.uuid4().hex[:10]}"
    admin = AdminClient({"bootstrap.servers": wbroker.bootstrap})
    admin.create_topics([NewTopic(name, 3, 1)])[name].result(10)
    return name


def _hb(group: str, member_id: str = "", epoch: int = 0, **kw: Any) -> ConsumerGroupHeartbeatRequest:
    return ConsumerGroupHeartbeatRequest(group_id=group, member_id=member_id, member_epoch=epoch, **kw)


async def _heartbeat(client: RawClient, req: ConsumerGroupHeartbeatRequest,
                     version: int = 0) -> ConsumerGroupHeartbeatResponse:
    for _ in range(100):  # the coordinator may still be creating __consumer_offsets
        resp: ConsumerGroupHeartbeatResponse = await client.call(req, ConsumerGroupHeartbeatResponse, version)
        if resp.error_code not in (14, 15):
            return resp
        await asyncio.sleep(0.1)
    raise AssertionError("coordinator never became available")


def _commit(group: str, member_id: str, epoch: int, topic: str, offset: int, partition: int = 0) -> OffsetCommitRequest:
    return OffsetCommitRequest(group_id=group, generation_id_or_member_epoch=epoch, member_id=member_id,
                               topics=[OffsetCommitRequestTopic(name=topic, partitions=[
                                   OffsetCommitRequestPartition(partition_index=partition, committed_offset=offset)])])


async def _commit_error(client: RawClient, req: OffsetCommitRequest, version: int) -> int:
    resp: OffsetCommitResponse = await client.call(req, OffsetCommitResponse, version)
    return int(resp.topics[0].partitions[0].error_code)


async def test_member_epochs_and_offset_commits(wbroker: BrokerProcess, topic: str) -> None:
    group = f"g-{uuid.uuid4().hex[:10]}"
    client = await RawClient.connect(wbroker.bootstrap, "wire")
    try:
        bad = await _heartbeat(client, _hb(group, subscribed_topic_names=[topic], topic_partitions=[]))
        assert bad.error_code == InvalidRequestError.code  # no RebalanceTimeoutMs in the first request
        assert "RebalanceTimeoutMs" in (bad.error_message or "")
        bad = await _heartbeat(client, _hb(group, rebalance_timeout_ms=5000, subscribed_topic_names=[topic],
                                           topic_partitions=[], server_assignor="nope"))
        assert bad.error_code == UnsupportedAssignorError.code

        joined = await _heartbeat(client, _hb(group, rebalance_timeout_ms=5000, subscribed_topic_names=[topic],
                                              topic_partitions=[]))
        assert joined.error_code == 0, joined.error_message
        assert joined.member_epoch == 1 and joined.member_id and joined.heartbeat_interval_ms == 1234
        assert joined.assignment is not None
        owned = joined.assignment.topic_partitions
        assert sorted(p for tp in owned for p in tp.partitions) == [0, 1, 2]
        member, epoch = joined.member_id, joined.member_epoch
        assert member is not None

        ahead = await _heartbeat(client, _hb(group, member, epoch + 5))
        assert ahead.error_code == FencedMemberEpochError.code
        unknown = await _heartbeat(client, _hb(group, "nobody", 1))
        assert unknown.error_code == UnknownMemberIdError.code
        steady = await _heartbeat(client, _hb(group, member, epoch, topic_partitions=[
            TopicPartitions(topic_id=tp.topic_id, partitions=tp.partitions) for tp in owned]))
        assert steady.error_code == 0 and steady.member_epoch == epoch

        assert await _commit_error(client, _commit(group, member, epoch, topic, 7), 9) == 0
        assert await _commit_error(client, _commit(group, member, epoch - 1, topic, 8), 9) == StaleMemberEpochError.code
        assert await _commit_error(client, _commit(group, member, epoch, topic, 8), 8) == UnsupportedVersionError.code
        assert await _commit_error(client, _commit(group, "nobody", epoch, topic, 8), 9) == UnknownMemberIdError.code
        assert await _commit_error(client, _commit(f"{group}-none", "m", 3, topic, 8), 9) == GroupIdNotFoundError.code

        fetch = OffsetFetchRequest(groups=[OffsetFetchRequestGroup(group_id=group, member_id=member,
                                                                   member_epoch=epoch, topics=None)])
        fetched: OffsetFetchResponse = await client.call(fetch, OffsetFetchResponse, 9)
        assert fetched.groups[0].error_code == 0
        assert [(t.name, p.partition_index, p.committed_offset) for t in fetched.groups[0].topics
                for p in t.partitions] == [(topic, 0, 7)]
        ahead_fetch = OffsetFetchRequest(groups=[OffsetFetchRequestGroup(group_id=group, member_id=member,
                                                                         member_epoch=epoch + 1, topics=None)])
        stale: OffsetFetchResponse = await client.call(ahead_fetch, OffsetFetchResponse, 9)
        assert stale.groups[0].error_code == StaleMemberEpochError.code

        listed: ListGroupsResponse = await client.call(ListGroupsRequest(types_filter=["consumer"]),
                                                       ListGroupsResponse, 5)
        mine = [g for g in listed.groups if g.group_id == group]
        assert [(g.group_type, g.protocol_type, g.group_state) for g in mine] == [("consumer", "consumer", "Stable")]
        classic_only: ListGroupsResponse = await client.call(ListGroupsRequest(types_filter=["classic"]),
                                                             ListGroupsResponse, 5)
        assert group not in {g.group_id for g in classic_only.groups}

        busy: DeleteGroupsResponse = await client.call(DeleteGroupsRequest(groups_names=[group]),
                                                       DeleteGroupsResponse, 2)
        assert busy.results[0].error_code == NonEmptyGroupError.code
        left = await _heartbeat(client, _hb(group, member, -1))
        assert left.error_code == 0 and left.member_epoch == -1
        listed = await client.call(ListGroupsRequest(types_filter=["consumer"]), ListGroupsResponse, 5)
        assert [g.group_state for g in listed.groups if g.group_id == group] == ["Empty"]
        # An empty group keeps its offsets and accepts a commit without a member (the admin client's).
        assert await _commit_error(client, _commit(group, "", -1, topic, 9), 9) == 0
        deleted: DeleteGroupsResponse = await client.call(DeleteGroupsRequest(groups_names=[group]),
                                                          DeleteGroupsResponse, 2)
        assert deleted.results[0].error_code == 0
        listed = await client.call(ListGroupsRequest(), ListGroupsResponse, 5)
        assert group not in {g.group_id for g in listed.groups}
        gone: OffsetFetchResponse = await client.call(OffsetFetchRequest(groups=[OffsetFetchRequestGroup(
            group_id=group, topics=None)]), OffsetFetchResponse, 9)
        assert gone.groups[0].error_code == 0 and gone.groups[0].topics == []
    finally:
        await client.close()


def _owned(resp: ConsumerGroupHeartbeatResponse) -> list[TopicPartitions]:
    assert resp.assignment is not None
    return [TopicPartitions(topic_id=tp.topic_id, partitions=tp.partitions) for tp in resp.assignment.topic_partitions]


async def test_a_lagging_epoch_commits_the_partitions_held_since_then(wbroker: BrokerProcess, topic: str) -> None:
    """KIP-1251 (Kafka 4.3): a commit sent at an older member epoch, before the heartbeat that moved
    the member on, is accepted for the partitions the member has held since that epoch and refused
    for one it gave up; a newer epoch is refused as before."""
    group = f"g-{uuid.uuid4().hex[:10]}"
    first, second = await RawClient.connect(wbroker.bootstrap, "a"), await RawClient.connect(wbroker.bootstrap, "b")
    try:
        joined = await _heartbeat(first, _hb(group, rebalance_timeout_ms=5000, subscribed_topic_names=[topic],
                                             topic_partitions=[]))
        member, old_epoch = joined.member_id, joined.member_epoch
        assert member is not None and old_epoch == 1
        owned = _owned(joined)
        assert await _heartbeat(second, _hb(group, rebalance_timeout_ms=5000, subscribed_topic_names=[topic],
                                            topic_partitions=[]))
        # The first member heartbeats with what it owns until it has revoked and reached the new epoch.
        epoch = old_epoch
        for _ in range(20):
            resp = await _heartbeat(first, _hb(group, member, epoch, topic_partitions=owned))
            assert resp.error_code == 0, resp.error_message
            epoch = resp.member_epoch
            if resp.assignment is not None:
                owned = _owned(resp)
            if epoch > old_epoch and resp.assignment is not None:
                break
        kept = sorted(p for tp in owned for p in tp.partitions)
        given_up = sorted({0, 1, 2} - set(kept))
        assert epoch > old_epoch and kept and given_up, (epoch, kept)

        assert await _commit_error(first, _commit(group, member, old_epoch, topic, 5, kept[0]), 9) == 0
        assert await _commit_error(first, _commit(group, member, old_epoch, topic, 5, given_up[0]), 9) \
            == StaleMemberEpochError.code
        assert await _commit_error(first, _commit(group, member, epoch + 1, topic, 5, kept[0]), 9) \
            == StaleMemberEpochError.code
        assert await _commit_error(first, _commit(group, member, epoch, topic, 6, kept[0]), 9) == 0
    finally:
        await first.close()
        await second.close()


async def test_a_group_id_is_one_type(wbroker: BrokerProcess, topic: str) -> None:
    consumer_group, classic_group = f"g-{uuid.uuid4().hex[:10]}", f"g-{uuid.uuid4().hex[:10]}"
    client = await RawClient.connect(wbroker.bootstrap, "types")
    try:
        joined = await _heartbeat(client, _hb(consumer_group, rebalance_timeout_ms=5000,
                                              subscribed_topic_names=[topic], topic_partitions=[]))
        assert joined.error_code == 0, joined.error_message
        classic = await client.join_fully(consumer_group, protocol_type="consumer")
        assert classic.error_code == InconsistentGroupProtocolError.code
        described: DescribeGroupsResponse = await client.call(DescribeGroupsRequest(groups=[consumer_group]),
                                                              DescribeGroupsResponse, 5)
        assert described.groups[0].group_state == "Dead"

        first = await client.join_fully(classic_group, protocol_type="consumer")
        assert first.error_code == 0
        refused = await _heartbeat(client, _hb(classic_group, rebalance_timeout_ms=5000,
                                               subscribed_topic_names=[topic], topic_partitions=[]))
        assert refused.error_code == GroupIdNotFoundError.code
    finally:
        await client.close()


async def test_regex_subscription(wbroker: BrokerProcess, topic: str) -> None:
    """SubscribedTopicRegex (v1) is resolved by the broker with RE2, matching whole names only."""
    group = f"g-{uuid.uuid4().hex[:10]}"
    client = await RawClient.connect(wbroker.bootstrap, "regex")
    try:
        bad = await _heartbeat(client, _hb(group, rebalance_timeout_ms=5000, subscribed_topic_regex="(a",
                                           topic_partitions=[]), 1)
        assert bad.error_code == InvalidRegularExpressionError.code, bad
        backreference = await _heartbeat(client, _hb(group, rebalance_timeout_ms=5000,
                                                     subscribed_topic_regex=r"(t)\1.*", topic_partitions=[]), 1)
        assert backreference.error_code == InvalidRegularExpressionError.code  # RE2 (as RE2J) has none
        partial = await _heartbeat(client, _hb(group, rebalance_timeout_ms=5000,
                                               subscribed_topic_regex=topic[:-1], topic_partitions=[]), 1)
        assert partial.error_code == 0 and partial.assignment is not None and partial.member_id is not None
        assert partial.assignment.topic_partitions == []  # a prefix does not match: whole names only
        joined = await _heartbeat(client, _hb(group, partial.member_id, partial.member_epoch,
                                              subscribed_topic_regex=f"{topic[:-1]}.|__.*"), 1)
        assert joined.error_code == 0, joined.error_message
        assert joined.assignment is not None  # the assignment changed: it is sent
        assert sorted(p for tp in joined.assignment.topic_partitions for p in tp.partitions) == [0, 1, 2]
    finally:
        await client.close()


async def test_static_member_leaves_for_now_and_its_successor_keeps_the_partitions(wbroker: BrokerProcess,
                                                                                   topic: str) -> None:
    """KIP-345 under KIP-848: epoch -2 keeps the partitions for the instance id; a new member id
    with that instance id takes them over at once; a second live claim is UNRELEASED_INSTANCE_ID."""
    group = f"g-{uuid.uuid4().hex[:10]}"
    client = await RawClient.connect(wbroker.bootstrap, "static")
    try:
        first = await _heartbeat(client, _hb(group, rebalance_timeout_ms=5000, subscribed_topic_names=[topic],
                                             topic_partitions=[], instance_id="inst-1"))
        assert first.error_code == 0 and first.assignment is not None and first.member_id is not None, first
        partitions = sorted(p for tp in first.assignment.topic_partitions for p in tp.partitions)
        assert partitions == [0, 1, 2]
        claim = await _heartbeat(client, _hb(group, rebalance_timeout_ms=5000, subscribed_topic_names=[topic],
                                             topic_partitions=[], instance_id="inst-1"))
        assert claim.error_code == UnreleasedInstanceIdError.code

        paused = await _heartbeat(client, _hb(group, first.member_id, -2, instance_id="inst-1"))
        assert paused.error_code == 0 and paused.member_epoch == -2
        successor = await _heartbeat(client, _hb(group, rebalance_timeout_ms=5000, subscribed_topic_names=[topic],
                                                 topic_partitions=[], instance_id="inst-1"))
        assert successor.error_code == 0 and successor.member_id != first.member_id
        assert successor.assignment is not None
        assert sorted(p for tp in successor.assignment.topic_partitions for p in tp.partitions) == partitions
        stale = await _heartbeat(client, _hb(group, first.member_id, first.member_epoch, instance_id="inst-1"))
        assert stale.error_code == FencedInstanceIdError.code
    finally:
        await client.close()
