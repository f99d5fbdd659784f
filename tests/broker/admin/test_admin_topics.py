"""Topic administration with librdkafka's AdminClient, kcat and raw requests, answered as Kafka does."""

from __future__ import annotations

import json
import subprocess
import uuid

import pytest
from confluent_kafka import KafkaError, KafkaException, Producer
from confluent_kafka.admin import AdminClient, NewPartitions, NewTopic  # type: ignore[attr-defined]
from seaway.protocol.messages.create_topics_request import CreatableTopic, CreatableTopicConfig, CreateTopicsRequest
from seaway.protocol.messages.create_topics_response import CreateTopicsResponse
from seaway.protocol.messages.delete_topics_request import DeleteTopicsRequest, DeleteTopicState
from seaway.protocol.messages.delete_topics_response import DeleteTopicsResponse
from seaway.protocol.messages.describe_cluster_request import DescribeClusterRequest
from seaway.protocol.messages.describe_cluster_response import DescribeClusterResponse

from tests.broker.admin.rawclient import call
from tests.support.broker import BrokerProcess

pytestmark = pytest.mark.timeout(60)


def _admin(broker: BrokerProcess) -> AdminClient:
    return AdminClient({"bootstrap.servers": broker.bootstrap})


def _error(future: object) -> KafkaError:
    with pytest.raises(KafkaException) as info:
        future.result(timeout=20)  # type: ignore[attr-defined]
    err = info.value.args[0]
    assert isinstance(err, KafkaError)
    return err


def _partitions(admin: AdminClient, topic: str) -> int | None:
    meta = admin.list_topics(timeout=10).topics.get(topic)
    return None if meta is None else len(meta.partitions)


def test_create_list_delete(shared_broker: BrokerProcess, topic_name: str) -> None:
    admin = _admin(shared_broker)
    assert admin.create_topics([NewTopic(topic_name, 3, 1)])[topic_name].result(timeout=20) is None
    meta = admin.list_topics(timeout=10).topics[topic_name]
    assert sorted(meta.partitions) == [0, 1, 2]
    node = admin.describe_cluster().result(timeout=20).nodes[0].id
    for p in meta.partitions.values():
        assert (p.leader, p.replicas, p.isrs) == (node, [node], [node])
    assert admin.delete_topics([topic_name])[topic_name].result(timeout=20) is None
    assert _partitions(admin, topic_name) is None
    assert _error(admin.delete_topics([topic_name])[topic_name]).code() == KafkaError.UNKNOWN_TOPIC_OR_PART


def test_create_errors_as_kafka_sends_them(shared_broker: BrokerProcess, topic_name: str) -> None:
    admin = _admin(shared_broker)
    admin.create_topics([NewTopic(topic_name, 1, 1)])[topic_name].result(timeout=20)
    futures = admin.create_topics([
        NewTopic("bad name!", 1, 1),
        NewTopic(topic_name, 1, 1),
        NewTopic(topic_name + "-rf", 1, 3),
        NewTopic(topic_name + "-cfg", 1, 1, config={"retention.ms": "soon"}),
        NewTopic(topic_name + "-unknown", 1, 1, config={"no.such.config": "1"}),
    ])
    bad_name = _error(futures["bad name!"])
    assert bad_name.code() == KafkaError.TOPIC_EXCEPTION and "illegal" in bad_name.str()
    assert _error(futures[topic_name]).code() == KafkaError.TOPIC_ALREADY_EXISTS
    rf = _error(futures[topic_name + "-rf"])
    assert rf.code() == KafkaError.INVALID_REPLICATION_FACTOR and "single-node" in rf.str()
    cfg = _error(futures[topic_name + "-cfg"])
    assert cfg.code() == KafkaError.INVALID_CONFIG and "retention.ms" in cfg.str()
    unknown = _error(futures[topic_name + "-unknown"])
    assert unknown.code() == KafkaError.INVALID_CONFIG and "no.such.config" in unknown.str()
    for failed in ("-rf", "-cfg", "-unknown"):
        assert _partitions(admin, topic_name + failed) is None


def test_validate_only_creates_nothing(shared_broker: BrokerProcess, topic_name: str) -> None:
    admin = _admin(shared_broker)
    ok = admin.create_topics([NewTopic(topic_name, 2, 1, config={"cleanup.policy": "compact"})],
                             validate_only=True)
    assert ok[topic_name].result(timeout=20) is None
    bad = admin.create_topics([NewTopic(topic_name, 2, 1, config={"segment.ms": "0"})], validate_only=True)
    assert _error(bad[topic_name]).code() == KafkaError.INVALID_CONFIG
    assert _partitions(admin, topic_name) is None


def test_defaults_and_manual_assignment(shared_broker: BrokerProcess, topic_name: str) -> None:
    admin = _admin(shared_broker)
    node = admin.describe_cluster().result(timeout=20).nodes[0].id
    futures = admin.create_topics([
        NewTopic(topic_name),  # -1/-1: num.partitions (1) and default.replication.factor
        NewTopic(topic_name + "-m", 2, replica_assignment=[[node], [node]]),
        NewTopic(topic_name + "-other", 1, replica_assignment=[[node + 7]]),
    ])
    futures[topic_name].result(timeout=20)
    futures[topic_name + "-m"].result(timeout=20)
    assert _error(futures[topic_name + "-other"]).code() == KafkaError.INVALID_REPLICA_ASSIGNMENT
    assert _partitions(admin, topic_name) == 1
    assert _partitions(admin, topic_name + "-m") == 2


def test_create_partitions(shared_broker: BrokerProcess, topic_name: str) -> None:
    admin = _admin(shared_broker)
    admin.create_topics([NewTopic(topic_name, 1, 1)])[topic_name].result(timeout=20)
    admin.create_partitions([NewPartitions(topic_name, 3)])[topic_name].result(timeout=20)
    assert _partitions(admin, topic_name) == 3
    shrink = admin.create_partitions([NewPartitions(topic_name, 2)])[topic_name]
    assert _error(shrink).code() == KafkaError.INVALID_PARTITIONS
    same = admin.create_partitions([NewPartitions(topic_name, 3)])[topic_name]
    assert _error(same).code() == KafkaError.INVALID_PARTITIONS
    admin.create_partitions([NewPartitions(topic_name, 6)], validate_only=True)[topic_name].result(timeout=20)
    assert _partitions(admin, topic_name) == 3
    missing = admin.create_partitions([NewPartitions(topic_name + "-nope", 2)])[topic_name + "-nope"]
    assert _error(missing).code() == KafkaError.UNKNOWN_TOPIC_OR_PART
    # The new partition is a real log: it takes writes.
    producer = Producer({"bootstrap.servers": shared_broker.bootstrap})
    delivered: list[int | None] = []
    producer.produce(topic_name, b"x", partition=2, on_delivery=lambda err, msg: delivered.append(msg.offset()))
    assert producer.flush(20) == 0
    assert delivered == [0]


def test_describe_cluster(shared_broker: BrokerProcess) -> None:
    admin = _admin(shared_broker)  # kept referenced: a collected client cancels its futures
    cluster = admin.describe_cluster().result(timeout=20)
    assert cluster.cluster_id
    assert len(cluster.nodes) == 1
    node = cluster.nodes[0]
    assert f"{node.host}:{node.port}" == shared_broker.bootstrap
    assert cluster.controller.id == node.id
    raw = call(shared_broker.bootstrap, DescribeClusterRequest(endpoint_type=2), DescribeClusterResponse, 1)
    assert raw.error_code == 114  # MISMATCHED_ENDPOINT_TYPE: this is a broker endpoint
    raw = call(shared_broker.bootstrap, DescribeClusterRequest(), DescribeClusterResponse, 1)
    assert (raw.error_code, raw.cluster_id, raw.controller_id) == (0, cluster.cluster_id, node.id)


def test_kcat_lists_topics(shared_broker: BrokerProcess, topic_name: str) -> None:
    admin = _admin(shared_broker)
    admin.create_topics([NewTopic(topic_name, 2, 1)])[topic_name].result(timeout=20)
    out = subprocess.run(["kcat", "-b", shared_broker.bootstrap, "-L", "-J"], capture_output=True, text=True,
                         timeout=30, check=True).stdout
    listing = json.loads(out)
    topics = {t["topic"]: t for t in listing["topics"]}
    assert [p["partition"] for p in topics[topic_name]["partitions"]] == [0, 1]
    assert len(listing["brokers"]) == 1


def test_create_topics_v7_answer_carries_layout_and_configs(shared_broker: BrokerProcess, topic_name: str) -> None:
    request = CreateTopicsRequest(topics=[
        CreatableTopic(name=topic_name, num_partitions=2, replication_factor=-1,
                       configs=[CreatableTopicConfig(name="retention.ms", value="12345")]),
        CreatableTopic(name=topic_name + "-dup", num_partitions=1, replication_factor=1),
        CreatableTopic(name=topic_name + "-dup", num_partitions=1, replication_factor=1),
        CreatableTopic(name=topic_name + "-zero", num_partitions=0, replication_factor=1),
    ], timeout_ms=10000)
    response = call(shared_broker.bootstrap, request, CreateTopicsResponse, 7)
    results = {t.name: t for t in response.topics}
    created = results[topic_name]
    assert (created.error_code, created.num_partitions, created.replication_factor) == (0, 2, 1)
    assert created.topic_id != uuid.UUID(int=0)
    configs = {c.name: c for c in created.configs or []}
    assert configs["retention.ms"].value == "12345" and configs["retention.ms"].config_source == 1
    assert configs["cleanup.policy"].value == "delete" and configs["cleanup.policy"].config_source == 5
    assert results[topic_name + "-dup"].error_code == 42  # INVALID_REQUEST: named twice
    zero = results[topic_name + "-zero"]
    assert zero.error_code == 37 and zero.error_message  # INVALID_PARTITIONS


def test_delete_topics_v6_by_id(shared_broker: BrokerProcess, topic_name: str) -> None:
    created = call(shared_broker.bootstrap, CreateTopicsRequest(topics=[
        CreatableTopic(name=topic_name, num_partitions=1, replication_factor=1)]), CreateTopicsResponse, 7)
    topic_id = created.topics[0].topic_id
    unknown = call(shared_broker.bootstrap, DeleteTopicsRequest(topics=[DeleteTopicState(topic_id=uuid.uuid4())]),
                   DeleteTopicsResponse, 6)
    assert unknown.responses[0].error_code == 100  # UNKNOWN_TOPIC_ID
    deleted = call(shared_broker.bootstrap, DeleteTopicsRequest(topics=[DeleteTopicState(topic_id=topic_id)]),
                   DeleteTopicsResponse, 6)
    assert [(r.name, r.topic_id, r.error_code) for r in deleted.responses] == [(topic_name, topic_id, 0)]
    assert _partitions(_admin(shared_broker), topic_name) is None
