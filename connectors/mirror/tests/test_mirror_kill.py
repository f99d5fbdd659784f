"""kill -9 of the worker mid-mirror, five times, while records keep arriving on A: at-least-once holds.

After the last restart B holds every record of A, each partition in A's order (a restart may
resend what was sent after the last offset commit, so a partition's copy may repeat a stretch).
The duplicates are counted and bounded: each kill resends at most what the task sent since its
last offset commit (``offset.flush.interval.ms`` = 500 ms here) plus one poll batch.
"""

from __future__ import annotations

import itertools
import random
import threading
import time
from pathlib import Path

import pytest
from confluent_kafka import Producer
from mirror_support import (
    Clusters,
    connector_config,
    create_topic,
    end_offsets,
    put_connector,
    read_partition,
    start_worker,
)
from seaway.connectors.mirror.source_task import BATCH

from tests.connect.distributed.dist_support import wait_for

PARTITIONS = 3
RATE = 1000  # records/s written to A during the test
KILLS = 5
FLUSH_S = 0.5


class Writer:
    """Writes ``<partition>:<seq>`` records to A at ``RATE`` until stopped; ``sent`` counts acknowledged ones."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        self.producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "enable.idempotence": True})
        self.topic = topic
        self.seq = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(0.05):
            for _ in range(RATE // 20):
                p = self.seq % PARTITIONS
                self.producer.produce(self.topic, f"{p}:{self.seq}".encode(), None, p)
                self.seq += 1
            self.producer.poll(0)

    def __enter__(self) -> Writer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        assert self.producer.flush(30) == 0


@pytest.mark.timeout(240)
def test_kill_9_five_times_loses_nothing(clusters: Clusters, tmp_path: Path) -> None:
    topic, remote = "ledger", "A.ledger"
    create_topic(clusters.a.bootstrap, topic, PARTITIONS)
    worker = start_worker(tmp_path / "worker", clusters.b.bootstrap,
                          {"offset.flush.interval.ms": str(int(FLUSH_S * 1000))})
    rng = random.Random(7)
    try:
        with Writer(clusters.a.bootstrap, topic):
            put_connector(worker, "ledger-mirror", connector_config("MirrorSourceConnector", clusters, topics=topic))
            for _ in range(KILLS):
                target = sum(end_offsets(clusters.a.bootstrap, topic, PARTITIONS))
                # caught up with A before the kill, so the kill lands in steady mirroring
                wait_for(lambda t=target: remote in _topics_b(clusters)
                         and sum(end_offsets(clusters.b.bootstrap, remote, PARTITIONS)) >= t, 60, 0.2, "catch up")
                time.sleep(rng.uniform(0.3, 1.2))
                worker.kill()
                worker.start()
        expected = end_offsets(clusters.a.bootstrap, topic, PARTITIONS)

        def complete() -> bool:
            return all(len({r.value for _, r in read_partition(clusters.b.bootstrap, remote, p)}) == expected[p]
                       for p in range(PARTITIONS))

        wait_for(complete, 90, 1.0, "every record of A on B")
    finally:
        worker.stop()
    duplicates = 0
    for p in range(PARTITIONS):
        source = [r.value for _, r in read_partition(clusters.a.bootstrap, topic, p)]
        copy = [r.value for _, r in read_partition(clusters.b.bootstrap, remote, p)]
        assert set(copy) == set(source), f"partition {p}: {len(set(source) - set(copy))} records lost"
        # in order: the copy is A's sequence, resumed from an earlier record after each restart
        index = {value: i for i, value in enumerate(source)}
        positions = [index[v] for v in copy]
        resumes = [(a, b) for a, b in itertools.pairwise(positions) if b != a + 1]
        assert all(b <= a for a, b in resumes), "out of order"
        assert len(resumes) <= KILLS
        duplicates += len(copy) - len(source)
    bound = KILLS * int(RATE * (FLUSH_S + 1.0)) + BATCH
    print(f"kill -9 x{KILLS}: {sum(expected)} records on A, {duplicates} duplicates on B (bound {bound})")
    assert duplicates <= bound


def _topics_b(clusters: Clusters) -> set[str]:
    from mirror_support import topics

    return topics(clusters.b.bootstrap)
