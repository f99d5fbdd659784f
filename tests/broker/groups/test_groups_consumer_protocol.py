"""KIP-848 consumer groups (``group.protocol=consumer``) with librdkafka, against a real broker.

librdkafka 2.16 consumers (confluent-kafka) run the new protocol: ConsumerGroupHeartbeat
(API 68), server-side assignment, OffsetCommit/OffsetFetch v9 with member epochs. The
workers are separate processes (``grouptest_worker.py --protocol consumer``) so a member
can be SIGKILLed. The broker's ``group.consumer.*`` configs are lowered so the session
timeout is seconds, not 45 s. Each test would fail on a broker without the protocol: the
consumers could not join at all (librdkafka needs ConsumerGroupHeartbeat in ApiVersions).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, ConsumerGroupDescription  # type: ignore[attr-defined]  # re-exported without __all__

from tests.broker.groups.test_groups_confluent import PARTITIONS, Worker, make_topic, produce, wait_for
from tests.support.broker import BrokerProcess

pytestmark = pytest.mark.timeout(150)

SESSION_MS = 4000
OVERRIDES = {
    "offsets.topic.num.partitions": "3",
    "group.consumer.session.timeout.ms": str(SESSION_MS),
    "group.consumer.min.session.timeout.ms": "1000",
    "group.consumer.heartbeat.interval.ms": "300",
    "group.consumer.min.heartbeat.interval.ms": "100",
}


@pytest.fixture(scope="module")
def cbroker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    with BrokerProcess(tmp_path_factory.mktemp("groups-kip848"), OVERRIDES) as broker:
        yield broker


@pytest.fixture
def workers() -> Iterator[list[Worker]]:
    started: list[Worker] = []
    yield started
    for w in started:
        if w.proc.poll() is None:
            w.proc.kill()
            w.proc.wait()


def _worker(broker: BrokerProcess, topic: str, group: str, out: Path) -> Worker:
    return Worker(broker, topic, group, out, protocol="consumer")


def _split(ws: list[Worker], sizes: list[int]) -> bool:
    """Each worker owns the given number of partitions and together they own all of them."""
    parts = [w.assignment() for w in ws]
    return sorted(len(p) for p in parts) == sorted(sizes) and set().union(*parts) == set(range(PARTITIONS)) \
        and sum(len(p) for p in parts) == PARTITIONS


def _describe(broker: BrokerProcess, group: str) -> ConsumerGroupDescription:
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    description: ConsumerGroupDescription = admin.describe_consumer_groups([group])[group].result(10)
    return description


def test_members_share_take_over_and_lose_or_duplicate_nothing(cbroker: BrokerProcess, workers: list[Worker],
                                                               tmp_path: Path) -> None:
    """Two members split 6 partitions 3/3, a third makes it 2/2/2, two leave and the last gets
    all 6; records produced throughout are each consumed exactly once (commit after every batch,
    revoke-before-assign)."""
    topic, group = make_topic(cbroker), f"g-{uuid.uuid4().hex[:8]}"
    produced: set[tuple[int, int]] = set()
    produce(cbroker, topic, 1200, produced)
    workers += [_worker(cbroker, topic, group, tmp_path / f"w{i}.txt") for i in range(2)]
    wait_for(lambda: _split(workers, [3, 3]), 40, "a 3/3 split")
    produce(cbroker, topic, 1200, produced)

    workers.append(_worker(cbroker, topic, group, tmp_path / "w2.txt"))
    wait_for(lambda: _split(workers, [2, 2, 2]), 30, "a 2/2/2 split")
    produce(cbroker, topic, 600, produced)

    workers[1].stop()  # a clean leave: heartbeat with member epoch -1
    wait_for(lambda: _split([workers[0], workers[2]], [3, 3]), 30, "the two others to take over")
    workers[2].stop()
    wait_for(lambda: workers[0].assignment() == set(range(PARTITIONS)), 30, "the last member to own all 6")
    produce(cbroker, topic, 600, produced)

    wait_for(lambda: {r for w in workers for r in w.consumed()} >= produced, 40, "every record to be consumed")
    workers[0].stop()
    seen = [r for w in workers for r in w.consumed()]
    assert set(seen) == produced
    duplicates = len(seen) - len(set(seen))
    assert duplicates == 0, (duplicates, [w.commit_errors() for w in workers])
    # Revoke before assign: no partition was ever owned by two members at once, so no
    # member saw a REVOKE of something it was not assigned.
    for w in workers:
        assert not any(e.startswith("LOST") for e in w.events()), w.events()


def test_member_that_stops_heartbeating_is_expelled(cbroker: BrokerProcess, workers: list[Worker],
                                                    tmp_path: Path) -> None:
    """A SIGKILLed member holds its partitions until group.consumer.session.timeout.ms, then the
    survivor gets them."""
    topic, group = make_topic(cbroker), f"g-{uuid.uuid4().hex[:8]}"
    workers += [_worker(cbroker, topic, group, tmp_path / f"k{i}.txt") for i in range(2)]
    wait_for(lambda: _split(workers, [3, 3]), 40, "a 3/3 split")
    victim, survivor = workers
    victim.proc.kill()
    victim.proc.wait()
    killed_at = time.monotonic()
    wait_for(lambda: survivor.assignment() == set(range(PARTITIONS)), SESSION_MS / 1000 + 40,
             "the survivor to take over")
    took = time.monotonic() - killed_at
    print(f"partitions reassigned {took:.1f}s after the SIGKILL (session timeout {SESSION_MS} ms)")
    assert took >= SESSION_MS / 1000 - 0.5, f"expelled after {took:.1f}s, before the session timeout"
    description = _describe(cbroker, group)
    assert len(description.members) == 1
    survivor.stop()


@pytest.mark.timeout(120)
def test_group_and_committed_offsets_survive_a_restart(tmp_path: Path) -> None:
    """The group's records and offsets in __consumer_offsets are the group after a restart:
    the member is still known with its partitions, and a new member resumes at the commits."""
    with BrokerProcess(tmp_path / "data", OVERRIDES) as broker:
        topic, group = make_topic(broker), f"g-{uuid.uuid4().hex[:8]}"
        produce(broker, topic, 600, set())
        conf = {"bootstrap.servers": broker.bootstrap, "group.id": group, "group.protocol": "consumer",
                "auto.offset.reset": "earliest", "enable.auto.commit": False}
        first = Consumer(conf)
        first.subscribe([topic])
        consumed = 0
        deadline = time.monotonic() + 40
        while consumed < 600 and time.monotonic() < deadline:
            consumed += sum(1 for m in first.consume(500, 0.2) if m.error() is None)
        assert consumed == 600
        first.commit(asynchronous=False)
        before = _describe(broker, group)

        broker.restart()
        after = _describe(broker, group)
        assert [m.member_id for m in after.members] == [m.member_id for m in before.members]
        assert after.members[0].assignment.topic_partitions
        first.close()  # leaves the restored group

        produce(broker, topic, 60, set())
        second = Consumer(conf)
        try:
            committed = second.committed([TopicPartition(topic, p) for p in range(PARTITIONS)], timeout=10)
            assert sum(tp.offset for tp in committed) == 600
            second.subscribe([topic])
            values: list[bytes | None] = []
            deadline = time.monotonic() + 40
            while len(values) < 60 and time.monotonic() < deadline:
                values += [m.value() for m in second.consume(500, 0.2) if m.error() is None]
            time.sleep(0.5)
            values += [m.value() for m in second.consume(500, 0.5) if m.error() is None]
            assert len(values) == 60  # only the records after the commits: none re-read, none lost
        finally:
            second.close()
