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
from typing import Any

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

from tests.connect.distributed.dist_support import dump_logs, wait_for

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
def test_kafka_reads_our_records_and_mirrored_cluster(fresh_clusters: Clusters, kafka_lib: Path,
                                                      tmp_path: Path) -> None:
    clusters = fresh_clusters  # offset syncs, checkpoints and heartbeats of its own, none left by other tests
    # a cluster mirrored by Seaway: a group's checkpoints, and A's heartbeats copied to B
    from confluent_kafka import Consumer, TopicPartition

    create_topic(clusters.a.bootstrap, "kc-orders", 1)
    group_config = {"bootstrap.servers": clusters.a.bootstrap, "group.id": "kc-app",
                    "auto.offset.reset": "earliest", "enable.auto.commit": False}
    group = Consumer(group_config)  # the group exists (at 0) for the checkpoint connector to find
    group.commit(offsets=[TopicPartition("kc-orders", 0, 0)], asynchronous=False)
    group.close()
    create_topic(clusters.a.bootstrap, "heartbeats", 1, {"cleanup.policy": "compact"})
    beat = Heartbeat("B", "A", 1_700_000_000_000)  # as a B->A heartbeat connector writes it into A
    produce(clusters.a.bootstrap, "heartbeats", [(0, Rec(beat.record_key(), beat.record_value(), (), beat.timestamp))])
    worker = start_worker(tmp_path / "worker", clusters.b.bootstrap)
    props = {"bootstrap.servers": clusters.b.bootstrap}
    seen: list[object] = []

    def translated_after_the_last_sync() -> dict[Any, Any] | None:
        # syncs every offset.lag.max + 1 = 11 records: the group at 120 resumes after the sync at 110
        offsets = translate_offsets(props, "A", "kc-app", 5)
        seen.append(offsets)
        return offsets if [o.offset for o in offsets.values()] == [111] else None

    try:
        put_connector(worker, "kc-source", connector_config("MirrorSourceConnector", clusters, topics="kc-orders",
                                                            **{"offset.lag.max": "10"}))
        put_connector(worker, "kc-checkpoints", connector_config("MirrorCheckpointConnector", clusters,
                                                                 topics="kc-orders", groups="kc-app"))
        # The checkpoint task translates only offsets mirrored after it read the checkpoints topic
        # and the offset syncs, unless it could read earlier checkpoints (as Kafka's): the records
        # come once it is ready (when they were mirrored before, the group went unchecked once in CI).
        wait_for(lambda: any("checkpointing from here" in line for line in worker.output), 60, 0.2,
                 "the checkpoint task's stores")
        produce(clusters.a.bootstrap, "kc-orders", [(0, Rec(None, f"v{i}".encode(), (), 1_700_000_000_000))
                                                    for i in range(200)])
        group = Consumer(group_config)
        group.subscribe(["kc-orders"])
        read = 0
        while read < 120:
            read += len([m for m in group.consume(120 - read, 1.0) if m.error() is None])
        group.commit(asynchronous=False)
        group.close()
        wait_for(lambda: "A.heartbeats" in topics(clusters.b.bootstrap), 30, 0.2, "A.heartbeats on B")
        ours = wait_for(translated_after_the_last_sync, 60, 0.5, "kc-app's checkpoint after the sync at 110")
    except AssertionError:
        print(f"kc-app translated on B: {seen[-1:]}")
        dump_logs([worker], 400)
        raise
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
    assert translated == "{" + expected + "}" and expected == "A.kc-orders-0=111"
    assert upstream == ",".join(sorted(upstream_clusters(props))) == "A"
    assert heartbeats == ",".join(sorted(heartbeat_topics(props)))
    assert checkpoints == ",".join(sorted(checkpoint_topics(props)))
    assert int(hops) == replication_hops(props, "A") == 1
