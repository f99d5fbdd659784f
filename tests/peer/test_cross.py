"""Each side's Connect worker on the other side's broker.

- Apache Kafka's Connect worker on Seaway's broker: it creates its three internal topics
  (compacted) with its own admin client, joins its group with the ``connect`` protocol
  type and the ``sessioned`` (incremental cooperative) subprotocol, runs a
  FileStreamSource whose records must arrive in Seaway's log in order, and a FileStreamSink
  writing them back. A second Kafka worker then joins, a two-task sink spreads over both,
  and after ``kill -9`` of the second its task must run on the first (the coordinator's
  session expiry, the leader's delayed reassignment).
- Seaway's worker on Apache Kafka's broker: the same pipeline, checked with Kafka's view
  of the group and topics.
"""

from __future__ import annotations

import asyncio
import functools
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic  # type: ignore[attr-defined]  # re-exported without __all__
from seaway.protocol.client import KafkaConnection
from seaway.protocol.messages.describe_groups_request import DescribeGroupsRequest
from seaway.protocol.messages.describe_groups_response import DescribedGroup, DescribeGroupsResponse

from tests.connect.distributed.dist_support import WorkerProcess, free_port, wait_for, worker_properties
from tests.peer.apache_kafka import KafkaConnect
from tests.support.broker import BrokerProcess

pytestmark = [pytest.mark.peer, pytest.mark.timeout(240)]

LINES = [f"line {i} {'x' * 40}" for i in range(500)]


def _read_topic(bootstrap: str, topic: str, count: int, timeout: float = 30.0) -> list[str]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"peer-read-{uuid.uuid4().hex[:8]}",
                         "enable.auto.commit": False})
    try:
        consumer.assign([TopicPartition(topic, 0, 0)])
        out: list[str] = []
        deadline = time.monotonic() + timeout
        while len(out) < count and time.monotonic() < deadline:
            for msg in consumer.consume(500, 0.2):
                if msg.error() is None:
                    out.append((msg.value() or b"").decode())
        return out
    finally:
        consumer.close()


def _status(url: str, name: str) -> dict[str, Any] | None:
    response = httpx.get(f"{url}/connectors/{name}/status", timeout=10)
    return response.json() if response.status_code == 200 else None


def _running(url: str, name: str, tasks: int) -> dict[str, Any] | None:
    status = _status(url, name)
    if status is None or status["connector"]["state"] != "RUNNING" or len(status["tasks"]) != tasks:
        return None
    return status if all(t["state"] == "RUNNING" for t in status["tasks"]) else None


def _pipeline(url: str, bootstrap: str, folder: Path, prefix: str) -> None:
    """FileStreamSource -> topic -> FileStreamSink: every line arrives in the topic and the file, in order."""
    folder.mkdir(parents=True, exist_ok=True)
    source, sink = folder / "in.txt", folder / "out.txt"
    source.write_text("".join(line + "\n" for line in LINES), encoding="utf-8")
    topic = f"{prefix}-lines"
    connectors = {f"{prefix}-src": {"connector.class": "FileStreamSource", "file": str(source), "topic": topic},
                  f"{prefix}-sink": {"connector.class": "FileStreamSink", "file": str(sink), "topics": topic}}
    for name, config in connectors.items():
        response = httpx.post(f"{url}/connectors", json={"name": name, "config": config}, timeout=60)
        assert response.status_code == 201, response.text
        wait_for(functools.partial(_running, url, name, 1), 30, what=f"{name} RUNNING")
    assert _read_topic(bootstrap, topic, len(LINES)) == LINES
    wait_for(lambda: sink.is_file() and sink.read_text(encoding="utf-8").splitlines() == LINES, 30,
             what="the sink file to hold every line")


def _group(bootstrap: str, group: str) -> DescribedGroup:
    """DescribeGroups, sent with Seaway's protocol client: librdkafka's admin refuses to describe a
    group whose protocol type is not ``consumer``, and a single node is every group's coordinator."""
    async def describe() -> DescribedGroup:
        conn = await KafkaConnection.open_any(bootstrap, "peer-tests")
        try:
            response, _ = await conn.call(DescribeGroupsRequest(groups=[group]), DescribeGroupsResponse)
            return response.groups[0]
        finally:
            await conn.close()

    return asyncio.run(describe())


def _summary(group: DescribedGroup) -> tuple[int, str, str, str, int]:
    return group.error_code, group.protocol_type, group.protocol_data, group.group_state, len(group.members)


# --- Apache Kafka's Connect worker on Seaway's broker ---------------------------------------

GROUP = "peer-kafka-connect-on-seaway"


@pytest.fixture(scope="module")
def kafka_connect_on_seaway(seaway_broker: BrokerProcess,
                            tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaConnect]:
    props = worker_properties(seaway_broker.bootstrap, free_port(), GROUP)
    with KafkaConnect(tmp_path_factory.mktemp("kafka-connect-on-seaway"), props) as worker:
        yield worker


def test_kafka_connect_creates_compacted_internal_topics_on_seaway(
        kafka_connect_on_seaway: KafkaConnect, seaway_broker: BrokerProcess) -> None:
    admin = AdminClient({"bootstrap.servers": seaway_broker.bootstrap})
    topics = admin.list_topics(timeout=10).topics
    expected = {f"{GROUP}-configs": 1, f"{GROUP}-offsets": 5, f"{GROUP}-status": 3}
    assert {t: len(topics[t].partitions) for t in expected if t in topics} == expected
    resources = [ConfigResource(ConfigResource.Type.TOPIC, t) for t in expected]
    for resource, future in admin.describe_configs(resources).items():
        assert future.result(10)["cleanup.policy"].value == "compact", resource


def test_kafka_connect_joins_a_connect_group_on_seaway(kafka_connect_on_seaway: KafkaConnect,
                                                       seaway_broker: BrokerProcess) -> None:
    assert _summary(_group(seaway_broker.bootstrap, GROUP)) == (0, "connect", "sessioned", "Stable", 1)


def test_kafka_connect_file_pipeline_on_seaway(kafka_connect_on_seaway: KafkaConnect,
                                               seaway_broker: BrokerProcess, tmp_path: Path) -> None:
    _pipeline(kafka_connect_on_seaway.url, seaway_broker.bootstrap, tmp_path, "peer-kc")


def test_kafka_connect_failover_on_seaway(kafka_connect_on_seaway: KafkaConnect, seaway_broker: BrokerProcess,
                                          tmp_path: Path) -> None:
    """Two Kafka workers in one group on Seaway's coordinator; kill -9 one, its task moves."""
    props = worker_properties(seaway_broker.bootstrap, free_port(), GROUP)
    second = KafkaConnect(tmp_path / "second", props, name="kafka-connect-2").start()
    try:
        url = kafka_connect_on_seaway.url
        wait_for(lambda: len(_group(seaway_broker.bootstrap, GROUP).members) == 2, 30, what="two members")
        admin = AdminClient({"bootstrap.servers": seaway_broker.bootstrap})
        admin.create_topics([NewTopic("peer-kc-two", 2, 1)])["peer-kc-two"].result(10)
        config = {"connector.class": "FileStreamSink", "file": str(tmp_path / "two.txt"), "topics": "peer-kc-two",
                  "tasks.max": "2"}
        response = httpx.put(f"{url}/connectors/peer-kc-two/config", json=config, timeout=60)
        assert response.status_code == 201, response.text

        def spread() -> bool:
            status = _running(url, "peer-kc-two", 2)
            return status is not None and len({t["worker_id"] for t in status["tasks"]}) == 2

        wait_for(spread, 60, what="two tasks on two workers")
        second.kill()
        started = time.monotonic()

        def moved() -> bool:
            status = _running(url, "peer-kc-two", 2)
            return status is not None and {t["worker_id"] for t in status["tasks"]} == {
                kafka_connect_on_seaway.worker_id}

        wait_for(moved, 60, what="both tasks on the surviving worker")
        # floor: session.timeout.ms 3 s + scheduled.rebalance.max.delay.ms 2 s; allow for a busy host
        assert time.monotonic() - started < 30
    finally:
        second.kill()


# --- Seaway's worker on Apache Kafka's broker ------------------------------------------------

def test_seaway_worker_joins_a_connect_group_on_kafka(seaway_connect_on_kafka: WorkerProcess,
                                                      kafka_broker: Any) -> None:
    group = _group(kafka_broker.bootstrap, seaway_connect_on_kafka.props["group.id"])
    assert _summary(group) == (0, "connect", "sessioned", "Stable", 1)


def test_seaway_worker_file_pipeline_on_kafka(seaway_connect_on_kafka: WorkerProcess, kafka_broker: Any,
                                              tmp_path: Path) -> None:
    _pipeline(seaway_connect_on_kafka.url, kafka_broker.bootstrap, tmp_path, "peer-sw")
