"""DescribeTopicPartitions under ACLs: Kafka's handler rules, through the central authorization helper.

The answers without an authorizer are compared with Apache Kafka's in
``tests/peer/test_describe_topic_partitions.py`` (P-C1); this adds what the peer broker, run
without an authorizer, cannot show: a topic the caller may not DESCRIBE is
TOPIC_AUTHORIZATION_FAILED with no topic id when named, listed after the others, and left out
when all topics are asked for. A real broker with the StandardAuthorizer
(``allow.everyone.if.no.acl.found=true``: only topics with ACLs are guarded); the client is
``User:ANONYMOUS`` on PLAINTEXT.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from confluent_kafka.admin import (  # type: ignore[attr-defined]
    AclBinding,
    AclOperation,
    AclPermissionType,
    AdminClient,
    NewTopic,
    ResourcePatternType,
    ResourceType,
)
from seaway.protocol.errors import TopicAuthorizationFailedError
from seaway.protocol.messages.describe_topic_partitions_request import (
    Cursor,
    DescribeTopicPartitionsRequest,
    TopicRequest,
)
from seaway.protocol.messages.describe_topic_partitions_response import DescribeTopicPartitionsResponse
from seaway.protocol.primitives import ZERO_UUID

from tests.broker.admin.rawclient import call
from tests.support.broker import BrokerProcess

OPERATIONS_UNSET = -(2**31)


@pytest.mark.timeout(60)
def test_unauthorized_topics_are_flagged_when_named_and_hidden_when_listing(tmp_path: Path) -> None:
    tag = uuid.uuid4().hex[:8]
    open_topic, guarded = f"open-{tag}", f"guarded-{tag}"
    overrides = {"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
                 "allow.everyone.if.no.acl.found": "true"}
    with BrokerProcess(tmp_path, overrides) as broker:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        for future in admin.create_topics([NewTopic(open_topic, 2, 1), NewTopic(guarded, 1, 1)]).values():
            future.result(20)
        binding = AclBinding(ResourceType.TOPIC, guarded, ResourcePatternType.LITERAL, "User:someone-else", "*",
                             AclOperation.DESCRIBE, AclPermissionType.ALLOW)
        for future in admin.create_acls([binding]).values():
            future.result(20)

        named = DescribeTopicPartitionsRequest(topics=[TopicRequest(name=guarded), TopicRequest(name=open_topic)])
        topics = call(broker.bootstrap, named, DescribeTopicPartitionsResponse, 0).topics
        assert [(t.name, t.error_code) for t in topics] == [(open_topic, 0),
                                                             (guarded, TopicAuthorizationFailedError.code)]
        assert [p.partition_index for p in topics[0].partitions] == [0, 1]
        assert topics[0].topic_id != ZERO_UUID and topics[0].topic_authorized_operations != OPERATIONS_UNSET
        denied = topics[1]
        assert (denied.topic_id, denied.partitions, denied.topic_authorized_operations) == (
            ZERO_UUID, [], OPERATIONS_UNSET)  # nothing about the topic is disclosed

        every = DescribeTopicPartitionsRequest(topics=[], cursor=Cursor(topic_name=guarded, partition_index=0))
        listed = [t.name for t in call(broker.bootstrap, every, DescribeTopicPartitionsResponse, 0).topics]
        assert open_topic in listed and guarded not in listed
