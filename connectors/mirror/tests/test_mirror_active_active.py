"""Active/active: A -> B on a worker bound to B, B -> A on a worker bound to A, DefaultReplicationPolicy.

Both clusters have a topic ``events``; every topic is mirrored both ways. Each side gets the
other's ``events`` under the other's alias, and nothing loops: no ``A.B.events``, no
``B.A.events``, and the mirrored copies hold exactly the records written once.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from mirror_support import (
    Clusters,
    Rec,
    connector_config,
    create_topic,
    end_offsets,
    produce,
    put_connector,
    start_worker,
    topics,
)

from tests.connect.distributed.dist_support import wait_for

COUNT = 400


@pytest.mark.timeout(120)
def test_active_active_does_not_loop(clusters: Clusters, tmp_path: Path) -> None:
    for alias in ("A", "B"):
        create_topic(clusters.bootstrap(alias), "events", 2)
        produce(clusters.bootstrap(alias), "events", [(i % 2, Rec(None, f"{alias}{i}".encode(), (), 1_700_000_000_000))
                                                      for i in range(COUNT)])
    on_b = start_worker(tmp_path / "on-b", clusters.b.bootstrap)
    on_a = start_worker(tmp_path / "on-a", clusters.a.bootstrap)
    try:
        # the filter takes every copy of events too: only the replication policy's cycle check stops a loop
        put_connector(on_b, "a-to-b", connector_config("MirrorSourceConnector", clusters, "A", "B",
                                                       topics=".*events"))
        put_connector(on_a, "b-to-a", connector_config("MirrorSourceConnector", clusters, "B", "A",
                                                       topics=".*events"))
        wait_for(lambda: "A.events" in topics(clusters.b.bootstrap) and "B.events" in topics(clusters.a.bootstrap)
                 and sum(end_offsets(clusters.b.bootstrap, "A.events", 2)) == COUNT
                 and sum(end_offsets(clusters.a.bootstrap, "B.events", 2)) == COUNT, 60, 0.3, "both directions")
        time.sleep(3)  # three more topic refreshes on each side: time for a loop to show
        for alias, other in (("A", "B"), ("B", "A")):
            names = topics(clusters.bootstrap(alias))
            looped = [t for t in names if t.startswith((f"{alias}.{other}.", f"{other}.{alias}.", f"{alias}."))]
            assert not looped, f"{alias}: {looped}"
            assert sum(end_offsets(clusters.bootstrap(alias), f"{other}.events", 2)) == COUNT
            assert sum(end_offsets(clusters.bootstrap(alias), "events", 2)) == COUNT
    finally:
        on_a.stop()
        on_b.stop()
