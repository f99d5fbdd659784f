"""kafka-python and aiokafka consumer groups: join, consume, commit, restart, resume;
and committed offsets of every group surviving a broker restart."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]  # re-exported without __all__

from tests.broker.groups.grouptest_client import FAST_GROUPS
from tests.support.broker import BrokerProcess

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def gbroker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    with BrokerProcess(tmp_path_factory.mktemp("groups-clients"), FAST_GROUPS) as broker:
        yield broker


def setup_topic(broker: BrokerProcess, partitions: int, count: int) -> str:
    topic = f"t-{uuid.uuid4().hex[:10]}"
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(10)
    p = Producer({"bootstrap.servers": broker.bootstrap})
    for i in range(count):
        p.produce(topic, value=b"%d" % i, partition=i % partitions)
    assert p.flush(10) == 0
    return topic


def test_kafka_python_group_resumes_after_restart(gbroker: BrokerProcess) -> None:
    from kafka import KafkaConsumer

    topic, group = setup_topic(gbroker, 3, 300), f"kp-{uuid.uuid4().hex[:8]}"

    def run(limit: int) -> list[bytes]:
        consumer = KafkaConsumer(topic, bootstrap_servers=gbroker.bootstrap, group_id=group,
                                 auto_offset_reset="earliest", enable_auto_commit=False,
                                 session_timeout_ms=6000, heartbeat_interval_ms=500, consumer_timeout_ms=8000)
        got: list[bytes] = []
        try:
            for msg in consumer:
                got.append(msg.value)
                if len(got) == limit:
                    break
            consumer.commit()
        finally:
            consumer.close()
        return got

    first = run(120)
    second = run(180)
    assert len(first) == 120 and len(second) == 180
    assert sorted(int(v) for v in first + second) == list(range(300))  # resumed exactly where committed


async def test_aiokafka_group_resumes_after_restart(gbroker: BrokerProcess) -> None:
    from aiokafka import AIOKafkaConsumer

    topic, group = setup_topic(gbroker, 3, 300), f"aio-{uuid.uuid4().hex[:8]}"

    async def run(limit: int) -> list[bytes]:
        consumer = AIOKafkaConsumer(topic, bootstrap_servers=gbroker.bootstrap, group_id=group,
                                    auto_offset_reset="earliest", enable_auto_commit=False,
                                    session_timeout_ms=6000, heartbeat_interval_ms=500)
        await consumer.start()
        got: list[bytes] = []
        try:
            while len(got) < limit:
                batches = await consumer.getmany(timeout_ms=500, max_records=limit - len(got))
                for records in batches.values():
                    got.extend(r.value for r in records if r.value is not None)
            await consumer.commit()
        finally:
            await consumer.stop()
        return got

    first = await run(100)
    second = await run(200)
    assert sorted(int(v) for v in first + second) == list(range(300))


def test_committed_offsets_survive_broker_restart(gbroker: BrokerProcess) -> None:
    topic = setup_topic(gbroker, 4, 40)
    groups = {f"r-{i}-{uuid.uuid4().hex[:6]}": i for i in range(6)}
    for group, i in groups.items():
        c = Consumer({"bootstrap.servers": gbroker.bootstrap, "group.id": group})
        c.commit(offsets=[TopicPartition(topic, p, i * 10 + p) for p in range(4)], asynchronous=False)
        c.close()
    gbroker.kill()  # a crash, not a clean shutdown
    gbroker.start()
    for group, i in groups.items():
        c = Consumer({"bootstrap.servers": gbroker.bootstrap, "group.id": group})
        deadline = time.monotonic() + 15
        while True:
            try:
                got = c.committed([TopicPartition(topic, p) for p in range(4)], timeout=10)
                break
            except Exception:  # COORDINATOR_LOAD_IN_PROGRESS right after start is retried
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        c.close()
        assert [tp.offset for tp in got] == [i * 10 + p for p in range(4)]
