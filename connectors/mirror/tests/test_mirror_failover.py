"""Failover of a consumer group from A to B through checkpoints and synced group offsets.

A confluent-kafka consumer group reads half of a topic on A and commits; the checkpoint
connector (``sync.group.offsets.enabled``) commits the translated offsets on B; the same
group id on B then resumes there and reads the rest: nothing lost, and per partition no more
records read twice than ``offset.lag.max`` allows. Kafka's client API gives the same offsets.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, TopicPartition
from mirror_support import Clusters, Rec, connector_config, create_topic, produce, put_connector, start_worker
from seaway.connectors.mirror import to_topic_partitions, translate_offsets

from tests.connect.distributed.dist_support import wait_for

PARTITIONS = 3
PER_PARTITION = 1000
LAG_MAX = 50


def _consume(bootstrap: str, group: str, topic: str, limit: int | None) -> list[tuple[int, bytes]]:
    """(partition, value) read by ``group`` from its committed position; commits what it read."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "auto.offset.reset": "earliest",
                         "enable.auto.commit": False, "session.timeout.ms": 6000})
    consumer.subscribe([topic])
    seen: list[tuple[int, bytes]] = []
    idle = 0
    try:
        while (limit is None or len(seen) < limit) and idle < 20:
            messages = consumer.consume(100 if limit is None else min(100, limit - len(seen)), 0.25)
            idle = 0 if messages else idle + 1
            for m in messages:
                assert m.error() is None, m.error()
                value = m.value()
                assert value is not None
                seen.append((int(m.partition() or 0), value))
        consumer.commit(asynchronous=False)
    finally:
        consumer.close()
    return seen


@pytest.mark.timeout(150)
def test_group_fails_over_with_translated_offsets(clusters: Clusters, tmp_path: Path) -> None:
    topic, group = "payments", "payments-app"
    create_topic(clusters.a.bootstrap, topic, PARTITIONS)
    produce(clusters.a.bootstrap, topic, [(p, Rec(None, f"{p}:{i}".encode(), (), 1_700_000_000_000 + i))
                                          for i in range(PER_PARTITION) for p in range(PARTITIONS)])
    first = _consume(clusters.a.bootstrap, group, topic, PARTITIONS * PER_PARTITION // 2)
    worker = start_worker(tmp_path / "worker", clusters.b.bootstrap)
    try:
        put_connector(worker, "source", connector_config("MirrorSourceConnector", clusters, topics=topic,
                                                         **{"offset.lag.max": str(LAG_MAX)}))
        put_connector(worker, "checkpoints", connector_config("MirrorCheckpointConnector", clusters,
                                                              topics=topic, groups=group,
                                                              **{"sync.group.offsets.enabled": "true"}))
        put_connector(worker, "heartbeats", connector_config("MirrorHeartbeatConnector", clusters))
        remote = f"A.{topic}"
        committed_on_a = {tp.partition: tp.offset for tp in _committed(clusters.a.bootstrap, group, topic)}

        def synced() -> dict[int, int] | None:
            on_b = {tp.partition: tp.offset for tp in _committed(clusters.b.bootstrap, group, remote)}
            wanted = [p for p, o in committed_on_a.items() if o > 0]
            return on_b if all(on_b.get(p, -1) > 0 for p in wanted) else None

        wait_for(synced, 60, 0.5, "group offsets synced to B")

        def agreed() -> tuple[dict[int, int], Any] | None:
            # Kafka's RemoteClusterUtils.translateOffsets reads the same checkpoints as the offset sync;
            # a newer checkpoint can land between the two reads, so they are compared until they agree
            on_b = synced()
            translated = translate_offsets({"bootstrap.servers": clusters.b.bootstrap}, "A", group, 10)
            mine = {tp.partition: o.offset for tp, o in translated.items() if tp.topic == remote}
            if on_b is None or mine != {p: o for p, o in on_b.items() if o >= 0}:
                return None
            return on_b, translated

        _, translated = wait_for(agreed, 60, 0.5, "translated offsets equal to the offsets synced to B")
        assert all(tp.topic == remote for tp in to_topic_partitions(translated))
    finally:
        worker.stop()
    rest = _consume(clusters.b.bootstrap, group, remote, None)
    read = Counter(first) + Counter(rest)
    everything = {(p, f"{p}:{i}".encode()) for i in range(PER_PARTITION) for p in range(PARTITIONS)}
    assert set(read) == everything, f"lost {len(everything - set(read))} records"
    duplicates = Counter(p for (p, _), n in read.items() for _ in range(n - 1))
    print(f"failover: {len(first)} read on A, {len(rest)} on B, duplicates per partition {dict(duplicates)}")
    assert all(n <= LAG_MAX for n in duplicates.values()), duplicates
    assert len(rest) < PARTITIONS * PER_PARTITION  # it resumed, it did not start over


def _committed(bootstrap: str, group: str, topic: str) -> list[TopicPartition]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group})
    try:
        return list(consumer.committed([TopicPartition(topic, p) for p in range(PARTITIONS)], timeout=10))
    finally:
        consumer.close()
