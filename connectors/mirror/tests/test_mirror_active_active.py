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

from tests.connect.distributed.dist_support import dump_logs, wait_for

COUNT = 400


@pytest.mark.timeout(120)
def test_active_active_does_not_loop(fresh_clusters: Clusters, tmp_path: Path) -> None:
    # a pair of its own: the filter takes any topic ending in "events", and the heartbeats topics
    # are mirrored by default, so what earlier tests left on the shared pair would be mirrored too
    clusters = fresh_clusters
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
        seen: dict[str, tuple[list[str], list[int] | None]] = {}

        def both_directions() -> bool:
            for alias, other in (("A", "B"), ("B", "A")):
                remote = f"{other}.events"
                names = topics(clusters.bootstrap(alias))
                seen[alias] = (sorted(names), end_offsets(clusters.bootstrap(alias), remote, 2)
                               if remote in names else None)
            return all(ends is not None and sum(ends) == COUNT for _, ends in seen.values())

        try:
            wait_for(both_directions, 60, 0.3, "both directions")
        except AssertionError:
            print("topics and remote end offsets:", seen)
            dump_logs([on_b, on_a], 400)
            raise
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
