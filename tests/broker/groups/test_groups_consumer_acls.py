"""KIP-848 APIs under ACLs, as Kafka's ``handleConsumerGroupHeartbeat`` / ``handleConsumerGroupDescribe``.

ConsumerGroupHeartbeat needs READ on the group and DESCRIBE on every subscribed topic name;
a regex resolves only to topics the member may DESCRIBE. ConsumerGroupDescribe needs
DESCRIBE on the group. A real broker with the StandardAuthorizer
(``allow.everyone.if.no.acl.found=true``: only resources with ACLs are guarded, here for
someone else); the client is ``User:ANONYMOUS`` on PLAINTEXT.
"""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import pytest
from confluent_kafka.admin import (  # type: ignore[attr-defined]  # re-exported without __all__
    AclBinding,
    AclOperation,
    AclPermissionType,
    AdminClient,
    NewTopic,
    ResourcePatternType,
    ResourceType,
)
from seaway.protocol.errors import GroupAuthorizationFailedError, TopicAuthorizationFailedError
from seaway.protocol.messages.consumer_group_describe_request import ConsumerGroupDescribeRequest
from seaway.protocol.messages.consumer_group_describe_response import ConsumerGroupDescribeResponse
from seaway.protocol.messages.consumer_group_heartbeat_request import ConsumerGroupHeartbeatRequest
from seaway.protocol.messages.consumer_group_heartbeat_response import ConsumerGroupHeartbeatResponse

from tests.broker.groups.grouptest_client import FAST_GROUPS, RawClient
from tests.support.broker import BrokerProcess


def _join(group: str, names: list[str] | None = None, regex: str | None = None) -> ConsumerGroupHeartbeatRequest:
    return ConsumerGroupHeartbeatRequest(group_id=group, member_epoch=0, rebalance_timeout_ms=5000,
                                         subscribed_topic_names=names, subscribed_topic_regex=regex,
                                         topic_partitions=[])


async def _heartbeat(client: RawClient, req: ConsumerGroupHeartbeatRequest) -> ConsumerGroupHeartbeatResponse:
    for _ in range(100):  # the coordinator may still be creating __consumer_offsets
        resp: ConsumerGroupHeartbeatResponse = await client.call(req, ConsumerGroupHeartbeatResponse, 1)
        if resp.error_code not in (14, 15):
            return resp
        await asyncio.sleep(0.1)
    raise AssertionError("coordinator never became available")


@pytest.mark.timeout(90)
async def test_heartbeat_and_describe_need_their_acls(tmp_path: Path) -> None:
    tag = uuid.uuid4().hex[:8]
    open_topic, guarded_topic = f"open-{tag}", f"guarded-{tag}"
    guarded_group, open_group = f"guarded-g-{tag}", f"open-g-{tag}"
    overrides = {**FAST_GROUPS, "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
                 "allow.everyone.if.no.acl.found": "true"}
    with BrokerProcess(tmp_path, overrides) as broker:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        for future in admin.create_topics([NewTopic(open_topic, 2, 1), NewTopic(guarded_topic, 1, 1)]).values():
            future.result(20)
        bindings = [AclBinding(kind, name, ResourcePatternType.LITERAL, "User:someone-else", "*", AclOperation.ALL,
                               AclPermissionType.ALLOW)
                    for kind, name in ((ResourceType.TOPIC, guarded_topic), (ResourceType.GROUP, guarded_group))]
        for future in admin.create_acls(bindings).values():
            future.result(20)

        client = await RawClient.connect(broker.bootstrap, "acls")
        try:
            denied_group = await _heartbeat(client, _join(guarded_group, [open_topic]))
            assert denied_group.error_code == GroupAuthorizationFailedError.code
            denied_topic = await _heartbeat(client, _join(open_group, [open_topic, guarded_topic]))
            assert denied_topic.error_code == TopicAuthorizationFailedError.code
            assert guarded_topic in (denied_topic.error_message or "")

            by_regex = await _heartbeat(client, _join(open_group, regex=f"(open|guarded)-{tag}"))
            assert by_regex.error_code == 0, by_regex.error_message
            assert by_regex.assignment is not None
            assert sum(len(tp.partitions) for tp in by_regex.assignment.topic_partitions) == 2  # open-* only

            described: ConsumerGroupDescribeResponse = await client.call(
                ConsumerGroupDescribeRequest(group_ids=[open_group, guarded_group]), ConsumerGroupDescribeResponse, 0)
            assert [(g.group_id, g.error_code) for g in described.groups] == [
                (open_group, 0), (guarded_group, GroupAuthorizationFailedError.code)]
            topics = {tp.topic_name for m in described.groups[0].members for tp in m.assignment.topic_partitions}
            assert topics == {open_topic}
        finally:
            await client.close()
