"""Apache Kafka's own MirrorMaker classes read what Seaway's connectors write, and the other way round.

``KafkaMirrorClient.java`` (beside this file) runs Kafka 4.x's ``OffsetSync``, ``Checkpoint`` and
``Heartbeat`` serializers and ``RemoteClusterUtils`` (connect-mirror-client, from the jars the
peer tests fetch): Kafka decodes the records Seaway encodes and encodes the same bytes, and
``RemoteClusterUtils.translateOffsets`` / ``upstreamClusters`` / ``replicationHops`` on a
cluster Seaway's connectors mirrored into answer what Seaway's client API answers. Marked
``peer``: it needs java and Kafka's jars (skipped without them, except under CI).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from mirror_support import Clusters, Rec, connector_config, create_topic, produce, put_connector, start_worker, topics
from seaway.connectors.mirror import (
    Checkpoint,
    Heartbeat,
    OffsetSync,
    checkpoint_topics,
    heartbeat_topics,
    replication_hops,
    translate_offsets,
    upstream_clusters,
)

from tests.connect.distributed.dist_support import wait_for

pytestmark = pytest.mark.peer

JAVA = Path(__file__).with_name("KafkaMirrorClient.java")


@pytest.fixture(scope="module")
def kafka_lib() -> Path:
    from tests.peer.jars import ensure_jars, missing_tools

    missing = missing_tools()
    if missing:
        message = f"needs {', '.join(missing)} (scripts/test.sh fetches Kafka's jars with mvn)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return ensure_jars()


def _kafka(lib: Path, commands: list[str]) -> list[str]:
    """Run the commands through Kafka's classes in one JVM; one answer line per command."""
    done = subprocess.run(["java", "-cp", f"{lib}/*", str(JAVA)], input="\n".join(commands) + "\n",
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    return [line for line in done.stdout.splitlines() if line.strip()]


@pytest.mark.timeout(180)
def test_kafka_reads_our_records_and_mirrored_cluster(clusters: Clusters, kafka_lib: Path, tmp_path: Path) -> None:
    # a cluster mirrored by Seaway: a group's checkpoints, and A's heartbeats copied to B
    create_topic(clusters.a.bootstrap, "kc-orders", 1)
    produce(clusters.a.bootstrap, "kc-orders", [(0, Rec(None, f"v{i}".encode(), (), 1_700_000_000_000))
                                                for i in range(200)])
    from confluent_kafka import Consumer

    group = Consumer({"bootstrap.servers": clusters.a.bootstrap, "group.id": "kc-app",
                      "auto.offset.reset": "earliest", "enable.auto.commit": False})
    group.subscribe(["kc-orders"])
    read = 0
    while read < 120:
        read += len([m for m in group.consume(120 - read, 1.0) if m.error() is None])
    group.commit(asynchronous=False)
    group.close()
    if "heartbeats" not in topics(clusters.a.bootstrap):
        create_topic(clusters.a.bootstrap, "heartbeats", 1, {"cleanup.policy": "compact"})
    beat = Heartbeat("B", "A", 1_700_000_000_000)  # as a B->A heartbeat connector writes it into A
    produce(clusters.a.bootstrap, "heartbeats", [(0, Rec(beat.record_key(), beat.record_value(), (), beat.timestamp))])
    worker = start_worker(tmp_path / "worker", clusters.b.bootstrap)
    props = {"bootstrap.servers": clusters.b.bootstrap}
    try:
        put_connector(worker, "kc-source", connector_config("MirrorSourceConnector", clusters, topics="kc-orders",
                                                            **{"offset.lag.max": "10"}))
        put_connector(worker, "kc-checkpoints", connector_config("MirrorCheckpointConnector", clusters,
                                                                 topics="kc-orders", groups="kc-app"))
        wait_for(lambda: "A.heartbeats" in topics(clusters.b.bootstrap), 30, 0.2, "A.heartbeats on B")
        ours = wait_for(lambda: translate_offsets(props, "A", "kc-app", 5), 60, 0.5, "a checkpoint of kc-app")
    finally:
        worker.stop()
    sync, checkpoint = OffsetSync("orders", 3, 100, 42), Checkpoint("app", "A.orders", 3, 1000, 990, "meta")
    answers = _kafka(kafka_lib, [
        f"decode offset-sync {sync.record_key().hex()} {sync.record_value().hex()}",
        f"decode checkpoint {checkpoint.record_key().hex()} {checkpoint.record_value().hex()}",
        f"decode heartbeat {beat.record_key().hex()} {beat.record_value().hex()}",
        "encode offset-sync orders 3 100 42",
        "encode checkpoint app A.orders 3 1000 990 meta",
        "encode heartbeat B A 1700000000000",
        f"client {clusters.b.bootstrap} A kc-app",
    ])
    assert answers[:3] == ["orders 3 100 42", "app A.orders 3 1000 990 meta", "B A 1700000000000"]
    assert answers[3:6] == [f"{o.record_key().hex()} {o.record_value().hex()}" for o in (sync, checkpoint, beat)]
    translated, upstream, heartbeats, checkpoints, hops = answers[6].split(" | ")
    expected = ", ".join(f"{tp.topic}-{tp.partition}={o.offset}" for tp, o in sorted(ours.items()))
    # syncs every offset.lag.max + 1 = 11 records: the group at 120 resumes after the sync at 110
    assert translated == "{" + expected + "}" and expected == "A.kc-orders-0=111"
    assert upstream == ",".join(sorted(upstream_clusters(props))) == "A"
    assert heartbeats == ",".join(sorted(heartbeat_topics(props)))
    assert checkpoints == ",".join(sorted(checkpoint_topics(props)))
    assert int(hops) == replication_hops(props, "A") == 1
