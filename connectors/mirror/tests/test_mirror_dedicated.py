"""``seaway mirror`` runs Kafka's own example ``connect-mirror-maker.properties``, edited only for addresses.

The file beside this test is Kafka's ``config/connect-mirror-maker.properties`` as shipped
(active/active A <-> B, every topic, replication factors of 1). The test replaces the two
example ``bootstrap.servers`` lines' hosts with the test brokers and runs it: topics cross in
both directions under the other cluster's alias, nothing loops, the internal topics (offset
syncs, checkpoints, heartbeats) appear where Kafka puts them, and SIGTERM exits 0.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from mirror_support import Clusters, Rec, create_topic, end_offsets, produce, topics

from tests.connect.distributed.dist_support import wait_for

EXAMPLE = Path(__file__).with_name("connect-mirror-maker.properties")
READY = "seaway mirror ready: "


@pytest.mark.timeout(150)
def test_seaway_mirror_runs_kafkas_example_file(fresh_clusters: Clusters, tmp_path: Path) -> None:
    clusters = fresh_clusters
    text = EXAMPLE.read_text(encoding="utf-8")
    edited = (text.replace("A.bootstrap.servers = A_host1:9092, A_host2:9092, A_host3:9092",
                           f"A.bootstrap.servers = {clusters.a.bootstrap}")
              .replace("B.bootstrap.servers = B_host1:9092, B_host2:9092, B_host3:9092",
                       f"B.bootstrap.servers = {clusters.b.bootstrap}"))
    assert edited.count("127.0.0.1") == 2  # the two addresses, nothing else changed
    config = tmp_path / "mm2.properties"
    config.write_text(edited, encoding="utf-8")
    for alias, name in (("A", "dedicated-a"), ("B", "dedicated-b")):
        create_topic(clusters.bootstrap(alias), name, 2)
        produce(clusters.bootstrap(alias), name, [(i % 2, Rec(b"k", f"{alias}{i}".encode(), (("h", b"1"),),
                                                            1_700_000_000_000 + i)) for i in range(200)])
    output: list[str] = []
    proc = subprocess.Popen([sys.executable, "-m", "seaway.cli.main", "mirror", str(config)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=tmp_path,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    stdout = proc.stdout
    assert stdout is not None

    def read() -> None:
        with stdout:
            output.extend(stdout)

    pump = threading.Thread(target=read, daemon=True)
    pump.start()
    try:
        wait_for(lambda: any(line.startswith(READY) for line in output), 60, 0.1, "ready")
        assert [line for line in output if line.startswith(READY)] == [READY + "A->B, B->A\n"]
        wait_for(lambda: "A.dedicated-a" in topics(clusters.b.bootstrap) and "B.dedicated-b" in topics(
            clusters.a.bootstrap) and end_offsets(clusters.b.bootstrap, "A.dedicated-a", 2) == [100, 100]
                 and end_offsets(clusters.a.bootstrap, "B.dedicated-b", 2) == [100, 100], 90, 0.5, "both flows")
        on_a, on_b = topics(clusters.a.bootstrap), topics(clusters.b.bootstrap)
        assert {"mm2-offset-syncs.B.internal", "B.checkpoints.internal", "heartbeats",
                "mm2-configs.B.internal", "mm2-offsets.B.internal", "mm2-status.B.internal"} <= on_a
        assert {"mm2-offset-syncs.A.internal", "A.checkpoints.internal", "heartbeats",
                "mm2-configs.A.internal", "mm2-offsets.A.internal", "mm2-status.A.internal"} <= on_b
        time.sleep(2)
        assert not [t for t in topics(clusters.a.bootstrap) if t.startswith(("A.", "B.A."))]
        assert not [t for t in topics(clusters.b.bootstrap) if t.startswith(("B.", "A.B."))]
    finally:
        proc.terminate()
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        pump.join(5)
    assert proc.returncode == 0, "".join(output[-40:])
