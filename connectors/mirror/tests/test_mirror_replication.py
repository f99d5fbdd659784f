"""MirrorSourceConnector on a real worker between two real brokers: records, offset syncs, topics, configs."""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator

import pytest
from confluent_kafka.admin import (  # type: ignore[attr-defined]
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    NewPartitions,
    ResourceType,
)
from mirror_support import (
    Clusters,
    Rec,
    connector_config,
    create_topic,
    end_offsets,
    produce,
    put_connector,
    read_partition,
    start_worker,
    topics,
)
from seaway.connectors.mirror import DefaultReplicationPolicy, OffsetSync

from tests.connect.distributed.dist_support import WorkerProcess, wait_for

pytestmark = pytest.mark.timeout(120)

PARTITIONS = 6
COUNT = 3000
LAG_MAX = 20


@pytest.fixture(scope="module")
def worker(clusters: Clusters, tmp_path_factory: pytest.TempPathFactory) -> Iterator[WorkerProcess]:
    """A worker bound to B whose *default* converters would rewrite bytes (JSON): the mirror connectors
    must still copy bytes unchanged, through the ByteArrayConverter they declare."""
    w = start_worker(tmp_path_factory.mktemp("mirror-worker"), clusters.b.bootstrap, {
        "key.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "header.converter": "org.apache.kafka.connect.storage.SimpleHeaderConverter"})
    try:
        yield w
    finally:
        w.stop()


def _records(n: int) -> list[tuple[int, Rec]]:
    out = []
    for i in range(n):
        headers: tuple[tuple[str, bytes | None], ...] = (("trace", f"t{i}".encode()), ("bin", bytes([i % 256, 0])))
        if i % 7 == 0:
            headers += (("empty", None),)
        key = None if i % 11 == 0 else f"key-{i % 50}".encode()
        value = None if i % 97 == 0 else f"value {i} ".encode() + bytes(range(i % 200))
        out.append((i % PARTITIONS, Rec(key, value, headers, 1_600_000_000_000 + i * 1000)))
    return out


def _offset_syncs(clusters: Clusters, topic: str) -> list[OffsetSync]:
    """Every offset sync of ``topic`` in mm2-offset-syncs.B.internal (on the source cluster A)."""
    syncs_topic = "mm2-offset-syncs.B.internal"
    out = []
    for _, rec in read_partition(clusters.a.bootstrap, syncs_topic, 0):
        sync = OffsetSync.decode(rec.key, rec.value)
        if sync.topic == topic:
            out.append(sync)
    return out


def test_six_partitions_mirrored_byte_for_byte(clusters: Clusters, worker: WorkerProcess) -> None:
    create_topic(clusters.a.bootstrap, "orders", PARTITIONS)
    produce(clusters.a.bootstrap, "orders", _records(COUNT))
    expected_ends = end_offsets(clusters.a.bootstrap, "orders", PARTITIONS)
    put_connector(worker, "mirror-orders", connector_config("MirrorSourceConnector", clusters, topics="orders",
                                                            **{"offset.lag.max": str(LAG_MAX), "tasks.max": "2"}),
                  tasks=2)
    wait_for(lambda: "A.orders" in topics(clusters.b.bootstrap)
             and end_offsets(clusters.b.bootstrap, "A.orders", PARTITIONS) == expected_ends,
             60, 0.3, "every record on B")
    for partition in range(PARTITIONS):
        source = read_partition(clusters.a.bootstrap, "orders", partition)
        remote = read_partition(clusters.b.bootstrap, "A.orders", partition)
        # same partition, same records in the same order: keys, values, headers (incl. null), timestamps
        assert [r for _, r in remote] == [r for _, r in source], f"partition {partition}"
    # the offset syncs pair an upstream record with the very same record downstream, at most
    # offset.lag.max apart (Kafka's rule), and the last record of each partition is synced
    syncs = _offset_syncs(clusters, "orders")
    assert {s.partition for s in syncs} == set(range(PARTITIONS))
    for partition in range(PARTITIONS):
        upstream = dict(read_partition(clusters.a.bootstrap, "orders", partition))
        downstream_recs = dict(read_partition(clusters.b.bootstrap, "A.orders", partition))
        mine = sorted((s for s in syncs if s.partition == partition), key=lambda s: s.downstream_offset)
        for sync in mine:
            assert downstream_recs[sync.downstream_offset] == upstream[sync.upstream_offset]
        downstream = [s.downstream_offset for s in mine]
        assert downstream[0] == 0
        assert max(b - a for a, b in itertools.pairwise(downstream)) <= LAG_MAX + 1
        def tail_synced(p: int = partition) -> bool:
            return max(s.downstream_offset for s in _offset_syncs(clusters, "orders")
                       if s.partition == p) == expected_ends[p] - 1

        wait_for(tail_synced, 30, 0.5, f"tail of partition {partition} synced")
    # (A's heartbeats topic, if another test made one, is mirrored too: heartbeats.replication.enabled)
    offsets = [o for o in worker.get("/connectors/mirror-orders/offsets").json()["offsets"]
               if o["partition"]["topic"] == "orders"]
    assert sorted((o["partition"]["partition"], o["offset"]["offset"]) for o in offsets) == [
        (p, end - 1) for p, end in enumerate(expected_ends)]
    assert all(o["partition"]["cluster"] == "A" for o in offsets)


def test_new_topics_partitions_and_configs_follow(clusters: Clusters, worker: WorkerProcess) -> None:
    put_connector(worker, "mirror-late", connector_config("MirrorSourceConnector", clusters, topics="late-.*"),
                  tasks=0)  # nothing to mirror yet: no tasks, as Kafka
    admin_a = AdminClient({"bootstrap.servers": clusters.a.bootstrap})
    admin_b = AdminClient({"bootstrap.servers": clusters.b.bootstrap})
    created = time.monotonic()
    create_topic(clusters.a.bootstrap, "late-1", 2, {"retention.ms": "123456000", "cleanup.policy": "compact"})
    wait_for(lambda: "A.late-1" in topics(clusters.b.bootstrap), 30, 0.1, "A.late-1 on B")
    appeared = time.monotonic() - created
    assert appeared <= 1 + 5, appeared  # refresh.topics.interval.seconds=1, plus a worker's slack

    def remote_config() -> dict[str, str]:
        resource = ConfigResource(ResourceType.TOPIC, "A.late-1")
        entries = admin_b.describe_configs([resource])[resource].result(10)
        return {k: e.value for k, e in entries.items()}

    assert (remote_config()["retention.ms"], remote_config()["cleanup.policy"]) == ("123456000", "compact")
    # partitions added on A are added on B, and their records mirrored
    admin_a.create_partitions([NewPartitions("late-1", 4)])["late-1"].result(10)
    wait_for(lambda: len(admin_b.list_topics("A.late-1", timeout=10).topics["A.late-1"].partitions) == 4,
             30, 0.2, "4 partitions on B")
    produce(clusters.a.bootstrap, "late-1", [(p, Rec(b"k", f"v{p}".encode(), (), 1_700_000_000_000))
                                             for p in range(4)])
    wait_for(lambda: end_offsets(clusters.b.bootstrap, "A.late-1", 4) == [1, 1, 1, 1], 30, 0.2, "records in 4")
    # a topic config change on A reaches B
    resource = ConfigResource(ResourceType.TOPIC, "late-1", incremental_configs=[
        ConfigEntry("retention.ms", "654321000", incremental_operation=AlterConfigOpType.SET)])
    admin_a.incremental_alter_configs([resource])[resource].result(10)
    wait_for(lambda: remote_config()["retention.ms"] == "654321000", 30, 0.2, "config synced")


def test_topics_from_the_target_are_not_mirrored_back(clusters: Clusters, worker: WorkerProcess) -> None:
    """A topic that the policy says came from B is never copied to B, even when the filter takes it."""
    create_topic(clusters.a.bootstrap, "B.came-from-b", 1)
    create_topic(clusters.a.bootstrap, "own-topic", 1)
    put_connector(worker, "mirror-all", connector_config("MirrorSourceConnector", clusters,
                                                         topics=r"own-topic, B\.came-from-b, __consumer_offsets"))
    wait_for(lambda: "A.own-topic" in topics(clusters.b.bootstrap), 30, 0.2, "A.own-topic")
    time.sleep(1.5)  # another refresh
    on_b = topics(clusters.b.bootstrap)
    assert "A.B.came-from-b" not in on_b
    internal_on_a = {t for t in topics(clusters.a.bootstrap) if DefaultReplicationPolicy().is_internal_topic(t)}
    assert internal_on_a and not {f"A.{t}" for t in internal_on_a} & on_b  # e.g. __consumer_offsets


def test_rest_lists_the_plugins_and_names_bad_keys(clusters: Clusters, worker: WorkerProcess) -> None:
    listed = {p["class"].rsplit(".", 1)[-1].rsplit(":", 1)[-1]: p["type"]
              for p in worker.get("/connector-plugins").json()}
    for name in ("MirrorSourceConnector", "MirrorCheckpointConnector", "MirrorHeartbeatConnector"):
        assert listed.get(name) == "source", listed
    good = {**connector_config("MirrorSourceConnector", clusters, topics="x"), "name": "bad-mirror"}
    for bad, key in ((dict(good, **{"topics.exclude": "a(b"}), "topics.exclude"),
                     ({k: v for k, v in good.items() if k != "source.cluster.alias"}, "source.cluster.alias"),
                     (dict(good, **{"value.converter": "org.apache.kafka.connect.json.JsonConverter"}),
                      "value.converter"),
                     (dict(good, **{"replication.policy.class": "os.system"}), "replication.policy.class")):
        reply = worker.request("PUT", "/connector-plugins/MirrorSourceConnector/config/validate", json=bad)
        assert reply.status_code == 200
        body = reply.json()
        errors = {c["value"]["name"] for c in body["configs"] if c["value"] and c["value"]["errors"]}
        assert errors == {key}, body
        created = worker.request("PUT", "/connectors/bad-mirror/config", json=bad)
        assert created.status_code == 400 and key in created.json()["message"], created.text
    reply = worker.request("PUT", "/connector-plugins/MirrorSourceConnector/config/validate", json=good)
    names = [c["value"]["name"] for c in reply.json()["configs"] if c["value"]]
    assert reply.json()["error_count"] == 0 and len(names) == len(set(names))
