"""Every API enforces ACLs with Kafka's error code: one request per API from a principal
without ACLs (``eve``, SCRAM over SASL_SSL), then the same request once she holds the ACL
Kafka requires for it, which must then pass the authorization check."""

from __future__ import annotations

import ssl
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import (  # type: ignore[attr-defined]  # re-exported without __all__
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    NewTopic,
    ResourcePatternType,
    ResourceType,
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialUpsertion,
)
from seaway.protocol.messages import alter_configs_request as ac
from seaway.protocol.messages import create_partitions_request as cp
from seaway.protocol.messages import create_topics_request as ct
from seaway.protocol.messages import delete_records_request as dr
from seaway.protocol.messages import delete_topics_request as dt
from seaway.protocol.messages import describe_configs_request as dc
from seaway.protocol.messages import fetch_request as fe
from seaway.protocol.messages import incremental_alter_configs_request as iac
from seaway.protocol.messages import list_offsets_request as lo
from seaway.protocol.messages import offset_commit_request as oc
from seaway.protocol.messages import offset_delete_request as od
from seaway.protocol.messages import offset_fetch_request as of
from seaway.protocol.messages import produce_request as pr
from seaway.protocol.messages.alter_configs_response import AlterConfigsResponse
from seaway.protocol.messages.create_partitions_response import CreatePartitionsResponse
from seaway.protocol.messages.create_topics_response import CreateTopicsResponse
from seaway.protocol.messages.delete_groups_request import DeleteGroupsRequest
from seaway.protocol.messages.delete_groups_response import DeleteGroupsResponse
from seaway.protocol.messages.delete_records_response import DeleteRecordsResponse
from seaway.protocol.messages.delete_topics_response import DeleteTopicsResponse
from seaway.protocol.messages.describe_configs_response import DescribeConfigsResponse
from seaway.protocol.messages.describe_groups_request import DescribeGroupsRequest
from seaway.protocol.messages.describe_groups_response import DescribeGroupsResponse
from seaway.protocol.messages.fetch_response import FetchResponse
from seaway.protocol.messages.find_coordinator_request import FindCoordinatorRequest
from seaway.protocol.messages.find_coordinator_response import FindCoordinatorResponse
from seaway.protocol.messages.heartbeat_request import HeartbeatRequest
from seaway.protocol.messages.heartbeat_response import HeartbeatResponse
from seaway.protocol.messages.incremental_alter_configs_response import IncrementalAlterConfigsResponse
from seaway.protocol.messages.init_producer_id_request import InitProducerIdRequest
from seaway.protocol.messages.init_producer_id_response import InitProducerIdResponse
from seaway.protocol.messages.join_group_request import JoinGroupRequest, JoinGroupRequestProtocol
from seaway.protocol.messages.join_group_response import JoinGroupResponse
from seaway.protocol.messages.leave_group_request import LeaveGroupRequest, MemberIdentity
from seaway.protocol.messages.leave_group_response import LeaveGroupResponse
from seaway.protocol.messages.list_groups_request import ListGroupsRequest
from seaway.protocol.messages.list_groups_response import ListGroupsResponse
from seaway.protocol.messages.list_offsets_response import ListOffsetsResponse
from seaway.protocol.messages.metadata_request import MetadataRequest, MetadataRequestTopic
from seaway.protocol.messages.metadata_response import MetadataResponse
from seaway.protocol.messages.offset_commit_response import OffsetCommitResponse
from seaway.protocol.messages.offset_delete_response import OffsetDeleteResponse
from seaway.protocol.messages.offset_fetch_response import OffsetFetchResponse
from seaway.protocol.messages.produce_response import ProduceResponse
from seaway.protocol.messages.sync_group_request import SyncGroupRequest
from seaway.protocol.messages.sync_group_response import SyncGroupResponse
from seaway.protocol.records import Record, build_batch

from tests.broker.security.wire import Wire
from tests.support.secure_broker import SecureBroker

pytestmark = pytest.mark.timeout(120)

TOPIC_DENIED, GROUP_DENIED, CLUSTER_DENIED = 29, 30, 31
AUTH_ERRORS = {TOPIC_DENIED, GROUP_DENIED, CLUSTER_DENIED, 53}
EVE_PASSWORD = "eve-secret"
TOPIC_RESOURCE, BROKER_RESOURCE = 2, 4  # DescribeConfigs' resource types


@dataclass
class Names:
    topic: str  # exists, eve may do nothing to it
    group: str  # exists (committed offsets), eve may do nothing to it
    spare: str  # a topic name nobody created


@pytest.fixture(scope="module")
def names(secure_broker: SecureBroker) -> Iterator[Names]:
    suffix = uuid.uuid4().hex[:8]
    result = Names(f"enf-{suffix}", f"enf-group-{suffix}", f"enf-new-{suffix}")
    admin = AdminClient(secure_broker.admin_config())
    upsert = UserScramCredentialUpsertion("eve", ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 4096),
                                          EVE_PASSWORD.encode())
    admin.alter_user_scram_credentials([upsert])["eve"].result(15)
    admin.create_topics([NewTopic(result.topic, 2, 1)])[result.topic].result(15)
    producer = Producer(secure_broker.admin_config())
    producer.produce(result.topic, b"x", partition=0)
    producer.flush(15)
    consumer = Consumer({**secure_broker.admin_config(), "group.id": result.group, "auto.offset.reset": "earliest",
                         "enable.auto.commit": False})
    consumer.subscribe([result.topic])  # a real member, so the group is listed once it is empty again
    try:
        message = None
        deadline = time.monotonic() + 20
        while message is None and time.monotonic() < deadline:
            message = consumer.poll(0.5)
        assert message is not None and message.error() is None
        consumer.commit(message=message, asynchronous=False)
    finally:
        consumer.close()
    yield result


def _eve(broker: SecureBroker) -> Wire:
    wire = Wire(broker.bootstrap("SASL_SSL"), ssl.create_default_context(cafile=str(broker.material.ca)))
    wire.scram_login("eve", EVE_PASSWORD)
    return wire


# Each case: (request, response class, version, extract the error code, the ACL that lets it through)
Acl = tuple[ResourceType, str, AclOperation]
Case = tuple[Any, Any, int, Callable[[Any], int], int, Acl | list[Acl]]


def _cases(n: Names) -> dict[str, Case]:
    t, g = n.topic, n.group
    batch = build_batch([Record(0, 0, None, b"v")])
    topic_acl = (ResourceType.TOPIC, t, AclOperation.ALL)
    group_acl = (ResourceType.GROUP, g, AclOperation.ALL)
    cluster_acl = (ResourceType.BROKER, "kafka-cluster", AclOperation.ALL)
    return {
        "Produce": (pr.ProduceRequest(transactional_id=None, acks=1, timeout_ms=5000, topic_data=[
            pr.TopicProduceData(name=t, partition_data=[pr.PartitionProduceData(index=0, records=batch)])]),
            ProduceResponse, 9, lambda r: r.responses[0].partition_responses[0].error_code, TOPIC_DENIED, topic_acl),
        "Fetch": (fe.FetchRequest(replica_id=-1, max_wait_ms=0, min_bytes=1, max_bytes=1 << 20, isolation_level=0,
                                  session_id=0, session_epoch=-1, topics=[fe.FetchTopic(topic=t, partitions=[
                                      fe.FetchPartition(partition=0, fetch_offset=0, partition_max_bytes=1 << 20)])]),
                  FetchResponse, 11, lambda r: r.responses[0].partitions[0].error_code, TOPIC_DENIED, topic_acl),
        "ListOffsets": (lo.ListOffsetsRequest(replica_id=-1, isolation_level=0, topics=[lo.ListOffsetsTopic(
            name=t, partitions=[lo.ListOffsetsPartition(partition_index=0, timestamp=-1)])]),
            ListOffsetsResponse, 7, lambda r: r.topics[0].partitions[0].error_code, TOPIC_DENIED, topic_acl),
        "Metadata": (MetadataRequest(topics=[MetadataRequestTopic(name=t)], allow_auto_topic_creation=False),
                     MetadataResponse, 9, lambda r: r.topics[0].error_code, TOPIC_DENIED, topic_acl),
        "OffsetCommit": (oc.OffsetCommitRequest(group_id=g, generation_id_or_member_epoch=-1, member_id="",
                                                topics=[oc.OffsetCommitRequestTopic(name=t, partitions=[
                                                    oc.OffsetCommitRequestPartition(partition_index=0,
                                                                                    committed_offset=0)])]),
                         OffsetCommitResponse, 8, lambda r: r.topics[0].partitions[0].error_code, GROUP_DENIED,
                         [group_acl, (ResourceType.TOPIC, t, AclOperation.READ)]),
        "OffsetFetch": (of.OffsetFetchRequest(group_id=g, topics=None), OffsetFetchResponse, 7,
                        lambda r: r.error_code, GROUP_DENIED, group_acl),
        "OffsetFetch-v8": (of.OffsetFetchRequest(groups=[of.OffsetFetchRequestGroup(group_id=g, topics=None)]),
                           OffsetFetchResponse, 8, lambda r: r.groups[0].error_code, GROUP_DENIED, group_acl),
        "FindCoordinator": (FindCoordinatorRequest(key=g, key_type=0), FindCoordinatorResponse, 3,
                            lambda r: r.error_code, GROUP_DENIED, group_acl),
        "JoinGroup": (JoinGroupRequest(group_id=g, session_timeout_ms=10000, rebalance_timeout_ms=10000,
                                       member_id="", protocol_type="consumer",
                                       protocols=[JoinGroupRequestProtocol(name="range", metadata=b"")]),
                      JoinGroupResponse, 5, lambda r: r.error_code, GROUP_DENIED, group_acl),
        "Heartbeat": (HeartbeatRequest(group_id=g, generation_id=1, member_id="m"), HeartbeatResponse, 4,
                      lambda r: r.error_code, GROUP_DENIED, group_acl),
        "SyncGroup": (SyncGroupRequest(group_id=g, generation_id=1, member_id="m", assignments=[]),
                      SyncGroupResponse, 3, lambda r: r.error_code, GROUP_DENIED, group_acl),
        "LeaveGroup": (LeaveGroupRequest(group_id=g, members=[MemberIdentity(member_id="m")]), LeaveGroupResponse,
                       4, lambda r: r.error_code, GROUP_DENIED, group_acl),
        "DescribeGroups": (DescribeGroupsRequest(groups=[g]), DescribeGroupsResponse, 5,
                           lambda r: r.groups[0].error_code, GROUP_DENIED, group_acl),
        "DeleteGroups": (DeleteGroupsRequest(groups_names=[g + "-x"]), DeleteGroupsResponse, 2,  # keep g
                         lambda r: r.results[0].error_code, GROUP_DENIED, (ResourceType.GROUP, g + "-x",
                                                                            AclOperation.DELETE)),
        "OffsetDelete": (od.OffsetDeleteRequest(group_id=g, topics=[od.OffsetDeleteRequestTopic(
            name=t, partitions=[od.OffsetDeleteRequestPartition(partition_index=1)])]), OffsetDeleteResponse, 0,
            lambda r: r.error_code, GROUP_DENIED, group_acl),
        "CreateTopics": (ct.CreateTopicsRequest(topics=[ct.CreatableTopic(name=n.spare, num_partitions=1,
                                                                          replication_factor=1)],
                                                timeout_ms=5000, validate_only=True),
                         CreateTopicsResponse, 7, lambda r: r.topics[0].error_code, TOPIC_DENIED,
                         (ResourceType.TOPIC, n.spare, AclOperation.CREATE)),
        "DeleteTopics": (dt.DeleteTopicsRequest(topic_names=[n.spare], timeout_ms=5000), DeleteTopicsResponse, 5,
                         lambda r: r.responses[0].error_code, TOPIC_DENIED,
                         (ResourceType.TOPIC, n.spare, AclOperation.DELETE)),
        "DeleteRecords": (dr.DeleteRecordsRequest(topics=[dr.DeleteRecordsTopic(name=t, partitions=[
            dr.DeleteRecordsPartition(partition_index=1, offset=0)])], timeout_ms=5000), DeleteRecordsResponse, 2,
            lambda r: r.topics[0].partitions[0].error_code, TOPIC_DENIED, topic_acl),
        "CreatePartitions": (cp.CreatePartitionsRequest(topics=[cp.CreatePartitionsTopic(name=t, count=3)],
                                                        timeout_ms=5000, validate_only=True),
                             CreatePartitionsResponse, 3, lambda r: r.results[0].error_code, TOPIC_DENIED, topic_acl),
        "DescribeConfigs-topic": (dc.DescribeConfigsRequest(resources=[dc.DescribeConfigsResource(
            resource_type=TOPIC_RESOURCE, resource_name=t, configuration_keys=None)]), DescribeConfigsResponse, 4,
            lambda r: r.results[0].error_code, TOPIC_DENIED, topic_acl),
        "DescribeConfigs-broker": (dc.DescribeConfigsRequest(resources=[dc.DescribeConfigsResource(
            resource_type=BROKER_RESOURCE, resource_name="1", configuration_keys=None)]), DescribeConfigsResponse, 4,
            lambda r: r.results[0].error_code, CLUSTER_DENIED, cluster_acl),
        "AlterConfigs": (ac.AlterConfigsRequest(resources=[ac.AlterConfigsResource(
            resource_type=TOPIC_RESOURCE, resource_name=t, configs=[])], validate_only=True), AlterConfigsResponse, 2,
            lambda r: r.responses[0].error_code, TOPIC_DENIED, topic_acl),
        "IncrementalAlterConfigs": (iac.IncrementalAlterConfigsRequest(resources=[iac.AlterConfigsResource(
            resource_type=BROKER_RESOURCE, resource_name="1", configs=[])], validate_only=True),
            IncrementalAlterConfigsResponse, 1, lambda r: r.responses[0].error_code, CLUSTER_DENIED, cluster_acl),
        "InitProducerId": (InitProducerIdRequest(transactional_id=None, transaction_timeout_ms=60000),
                           InitProducerIdResponse, 4, lambda r: r.error_code, CLUSTER_DENIED,
                           (ResourceType.BROKER, "kafka-cluster", AclOperation.IDEMPOTENT_WRITE)),
    }


@pytest.mark.parametrize("api", list(_cases(Names("t", "g", "s"))))
def test_denied_then_allowed(api: str, secure_broker: SecureBroker, names: Names) -> None:
    request, response_cls, version, error_of, denied, needed = _cases(names)[api]
    with _eve(secure_broker) as wire:
        assert error_of(wire.call(request, response_cls, version)) == denied
    admin = AdminClient(secure_broker.admin_config())
    bindings = [AclBinding(kind, name, ResourcePatternType.LITERAL, "User:eve", "*", op, AclPermissionType.ALLOW)
                for kind, name, op in (needed if isinstance(needed, list) else [needed])]
    for future in admin.create_acls(bindings).values():
        future.result(15)
    try:
        with _eve(secure_broker) as wire:
            assert error_of(wire.call(request, response_cls, version)) not in AUTH_ERRORS
    finally:
        filters = [AclBindingFilter(b.restype, b.name, b.resource_pattern_type, b.principal, b.host, b.operation,
                                    b.permission_type) for b in bindings]
        for future in admin.delete_acls(filters).values():
            future.result(15)


def test_list_groups_shows_only_describable_groups(secure_broker: SecureBroker, names: Names) -> None:
    with _eve(secure_broker) as wire:
        listed = wire.call(ListGroupsRequest(), ListGroupsResponse, 4)
    assert listed.error_code == 0 and names.group not in [g.group_id for g in listed.groups]
    with Wire(secure_broker.bootstrap("SASL_SSL"), ssl.create_default_context(
            cafile=str(secure_broker.material.ca))) as wire:
        from seaway.protocol.messages.sasl_authenticate_request import SaslAuthenticateRequest
        from seaway.protocol.messages.sasl_authenticate_response import SaslAuthenticateResponse
        from seaway.protocol.messages.sasl_handshake_request import SaslHandshakeRequest
        from seaway.protocol.messages.sasl_handshake_response import SaslHandshakeResponse

        from tests.support.secure_broker import ADMIN_PASSWORD

        wire.call(SaslHandshakeRequest(mechanism="PLAIN"), SaslHandshakeResponse, 1)
        wire.call(SaslAuthenticateRequest(auth_bytes=f"\x00admin\x00{ADMIN_PASSWORD}".encode()),
                  SaslAuthenticateResponse, 2)
        assert names.group in [g.group_id for g in wire.call(ListGroupsRequest(), ListGroupsResponse, 4).groups]


def test_describe_cluster_reports_the_callers_operations(secure_broker: SecureBroker, names: Names) -> None:
    from seaway.protocol.messages.describe_cluster_request import DescribeClusterRequest
    from seaway.protocol.messages.describe_cluster_response import DescribeClusterResponse

    request = DescribeClusterRequest(include_cluster_authorized_operations=True, endpoint_type=1)
    with _eve(secure_broker) as wire:
        assert wire.call(request, DescribeClusterResponse, 1).cluster_authorized_operations == 0
    admin = AdminClient(secure_broker.admin_config())
    binding = AclBinding(ResourceType.BROKER, "kafka-cluster", ResourcePatternType.LITERAL, "User:eve", "*",
                         AclOperation.ALTER_CONFIGS, AclPermissionType.ALLOW)
    admin.create_acls([binding])[binding].result(15)
    try:
        with _eve(secure_broker) as wire:
            bits = wire.call(request, DescribeClusterResponse, 1).cluster_authorized_operations
        assert bits == (1 << 11) | (1 << 10)  # ALTER_CONFIGS, and DESCRIBE_CONFIGS which it implies
    finally:
        acl_filter = AclBindingFilter(ResourceType.BROKER, "kafka-cluster", ResourcePatternType.LITERAL,
                                      "User:eve", "*", AclOperation.ALTER_CONFIGS, AclPermissionType.ALLOW)
        admin.delete_acls([acl_filter])[acl_filter].result(15)
