"""kill -9 of the worker mid-mirror, five times, while records keep arriving on A: at-least-once holds.

After the last restart B holds every record of A, each partition in A's order (a restart may
resend what was sent after the last offset commit, so a partition's copy may repeat a stretch).
The duplicates are counted and bounded: each kill resends at most what the task sent since its
last offset commit (``offset.flush.interval.ms`` = 500 ms here) plus one poll batch.

The exactly-once variant runs the same loop on a worker with ``exactly.once.source.support=enabled``
(KIP-618) and the connector with ``exactly.once.support=required`` and a ``read_committed`` source
consumer; A is written in transactions, some aborted. B read with ``read_committed`` must then hold
A's committed records exactly once, in A's order, and every offset sync must point at a committed
copy of its upstream record (syncs are sent only after the transaction that wrote the record
committed, as Kafka's ExactlyOnceWorkerSourceTask calls ``commitRecord``).
"""

from __future__ import annotations

import itertools
import random
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition
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
from seaway.connectors.mirror.formats import Heartbeat, OffsetSync
from seaway.connectors.mirror.source_task import BATCH

from tests.connect.distributed.dist_support import WorkerProcess, dump_logs, wait_for

PARTITIONS = 3
RATE = 1000  # records/s written to A during the test
KILLS = 5
FLUSH_S = 0.5


class Writer:
    """Writes ``<partition>:<seq>`` records to A at ``RATE`` until stopped.

    With ``abort_every`` the writer is transactional: each 50 ms chunk is one transaction, and
    every ``abort_every``-th is aborted (its values say ``aborted``), so a ``read_committed``
    source consumer has something to leave out.
    """

    def __init__(self, bootstrap: str, topic: str, abort_every: int = 0) -> None:
        config: dict[str, object] = {"bootstrap.servers": bootstrap, "linger.ms": 5, "enable.idempotence": True}
        if abort_every:
            config["transactional.id"] = f"writer-{topic}"
        self.producer = Producer(config)
        if abort_every:
            self.producer.init_transactions(30)
        self.topic = topic
        self.abort_every = abort_every
        self.seq = 0
        self.chunks = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(0.05):
            self.chunks += 1
            abort = bool(self.abort_every) and self.chunks % self.abort_every == 0
            if self.abort_every:
                self.producer.begin_transaction()
            for _ in range(RATE // 20):
                p = self.seq % PARTITIONS
                self.producer.produce(self.topic, f"{p}:{self.seq}{' aborted' if abort else ''}".encode(), None, p)
                self.seq += 1
            if not self.abort_every:
                self.producer.poll(0)
            elif abort:
                self.producer.flush(30)  # sent first: an abort purges what is queued
                self.producer.abort_transaction(30)
            else:
                self.producer.commit_transaction(30)

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
                def caught_up(t: int = target) -> bool:
                    return remote in _topics_b(clusters) and sum(end_offsets(clusters.b.bootstrap, remote,
                                                                             PARTITIONS)) >= t

                wait_for(caught_up, 60, 0.2, "catch up")
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


EOS_CONNECTOR = "eos-mirror"


def _committed_source_offsets(worker: WorkerProcess, topic: str) -> dict[int, int]:
    """Per partition of ``topic``, the upstream offset in the connector's committed Connect offsets (GET .../offsets).

    Only ``topic``'s entries: the connector also mirrors A's heartbeats topic when there is one
    (``heartbeats.replication.enabled``, as Kafka's), so the answer holds a ``heartbeats``
    partition 0 too, whose offset must not be taken for ``topic``'s partition 0.
    """
    reply = worker.get(f"/connectors/{EOS_CONNECTOR}/offsets")
    if reply.status_code != 200:
        return {}
    return {int(o["partition"]["partition"]): int(o["offset"]["offset"]) for o in reply.json()["offsets"]
            if o["partition"].get("topic") == topic}


def _ensure_heartbeats(bootstrap: str) -> None:
    """A's ``heartbeats`` topic with a beat in it, as the earlier tests of this directory leave it on the
    session's A (test_mirror_kafka_client): the mirror source then replicates it beside the test's topic."""
    if "heartbeats" not in topics(bootstrap):
        create_topic(bootstrap, "heartbeats", 1, {"cleanup.policy": "compact"})
    beat = Heartbeat("B", "A", 1_700_000_000_000)  # as a B->A heartbeat connector writes it into A
    produce(bootstrap, "heartbeats", [(0, Rec(beat.record_key(), beat.record_value(), (), beat.timestamp))])


def _read(bootstrap: str, topic: str, partition: int, isolation: str = "read_committed") -> list[tuple[int, bytes]]:
    """Every ``(offset, value)`` of one partition up to its end (the last stable offset for read_committed)."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"mirror-eos-check-{time.monotonic_ns()}",
                         "isolation.level": isolation, "enable.auto.commit": False, "fetch.wait.max.ms": 50})
    try:
        tp = TopicPartition(topic, partition)
        end = int(consumer.get_watermark_offsets(tp, timeout=10, cached=False)[1])
        consumer.assign([TopicPartition(topic, partition, OFFSET_BEGINNING)])
        out: list[tuple[int, bytes]] = []
        deadline = time.monotonic() + 60
        # by position, not by the last record: a partition may end with a transaction marker
        while end and consumer.position([tp])[0].offset < end:
            assert time.monotonic() < deadline, f"could not read {topic}-{partition} to {end}"
            for message in consumer.consume(10000, 0.2):
                assert message.error() is None, message.error()
                value, offset = message.value(), message.offset()
                assert value is not None and offset is not None
                out.append((offset, value))
        return out
    finally:
        consumer.close()


def run_exactly_once_kill_loop(clusters: Clusters, tmp_path: Path, support: str = "enabled") -> MirrorRun:
    """The kill loop on a worker with ``exactly.once.source.support=<support>``; what A and B hold afterwards.

    With ``support="disabled"`` (and no ``exactly.once.support=required``, which such a worker
    refuses) the same loop shows what the transactions prevent: checked by hand, see the test.
    """
    topic = f"eos-ledger-{support}-{time.monotonic_ns() % 1_000_000}"
    remote = f"A.{topic}"
    create_topic(clusters.a.bootstrap, topic, PARTITIONS)
    _ensure_heartbeats(clusters.a.bootstrap)
    worker = start_worker(tmp_path / "worker", clusters.b.bootstrap,
                          {"exactly.once.source.support": support, "scheduled.rebalance.max.delay.ms": "0",
                           "offset.flush.interval.ms": str(int(FLUSH_S * 1000))})
    config = connector_config("MirrorSourceConnector", clusters, topics=topic,
                              **{"consumer.isolation.level": "read_committed"})
    if support == "enabled":
        # transactions of half a second, so a kill nearly always lands inside one (per-poll ones at this
        # rate are open for a few milliseconds of each hundred)
        config.update({"exactly.once.support": "required", "transaction.boundary": "interval",
                       "transaction.boundary.interval.ms": str(int(FLUSH_S * 1000))})
    rng = random.Random(618)
    try:
        with Writer(clusters.a.bootstrap, topic, abort_every=5):
            put_connector(worker, EOS_CONNECTOR, config)
            for _ in range(KILLS):
                target = sum(end_offsets(clusters.a.bootstrap, topic, PARTITIONS))

                def progressed(t: int = target) -> bool:
                    # this run's task committed past A's end at its start: the kill lands mid-stream
                    offsets = _committed_source_offsets(worker, topic)
                    return len(offsets) == PARTITIONS and sum(offsets.values()) >= t

                wait_for(progressed, 60, 0.1, "mirror catching up")
                time.sleep(rng.uniform(0.2, 0.8))
                worker.kill()
                worker.start()
        source = {p: _read(clusters.a.bootstrap, topic, p) for p in range(PARTITIONS)}

        def complete() -> bool:
            offsets = _committed_source_offsets(worker, topic)
            return all(offsets.get(p) == source[p][-1][0] for p in range(PARTITIONS))

        try:
            wait_for(complete, 120, 0.2, "the last run to commit A's last records")
        except AssertionError as e:
            ends = {p: source[p][-1][0] for p in range(PARTITIONS)}
            seen = _committed_source_offsets(worker, topic)
            raise AssertionError(f"{e}: committed {seen}, A's last committed {ends}") from e
        # the case _committed_source_offsets guards against was there: heartbeats' partition 0 beside topic's
        reply = worker.get(f"/connectors/{EOS_CONNECTOR}/offsets").json()
        assert {o["partition"]["topic"] for o in reply["offsets"]} == {topic, "heartbeats"}, reply
        copies = {p: _read(clusters.b.bootstrap, remote, p) for p in range(PARTITIONS)}
        everything = sum(len(_read(clusters.b.bootstrap, remote, p, "read_uncommitted")) for p in range(PARTITIONS))
        syncs = [OffsetSync.decode(key, value) for key, value in _read_keyed(clusters.a.bootstrap,
                                                                                "mm2-offset-syncs.B.internal")]
    except BaseException:
        dump_logs([worker], 80)
        raise
    finally:
        worker.stop()
    return MirrorRun(source, copies, everything, [s for s in syncs if s.topic == topic])


@dataclass
class MirrorRun:
    """What a kill loop left: per partition A's committed ``(offset, value)`` s and B's (read_committed)."""

    source: dict[int, list[tuple[int, bytes]]]
    copies: dict[int, list[tuple[int, bytes]]]
    uncommitted: int
    """How many records B holds read_uncommitted (aborted transactions included)."""
    syncs: list[OffsetSync]

    def duplicates(self) -> int:
        return sum(len(self.copies[p]) - len(self.source[p]) for p in self.source)

    def lost(self) -> int:
        return sum(len({v for _, v in self.source[p]} - {v for _, v in self.copies[p]}) for p in self.source)

    def wrong_syncs(self) -> list[OffsetSync]:
        """Offset syncs whose downstream offset is not a committed copy of their upstream record."""
        upstream = {p: dict(self.source[p]) for p in self.source}
        downstream = {p: dict(self.copies[p]) for p in self.copies}
        return [s for s in self.syncs if downstream[s.partition].get(s.downstream_offset) is None
                or downstream[s.partition][s.downstream_offset] != upstream[s.partition].get(s.upstream_offset)]

    def summary(self, support: str) -> str:
        return (f"exactly.once.source.support={support}, kill -9 x{KILLS}: "
                f"{sum(len(v) for v in self.source.values())} records committed on A, {self.lost()} lost, "
                f"{self.duplicates()} duplicates on B read_committed, {self.uncommitted} records on B "
                f"read_uncommitted, {len(self.syncs)} offset syncs ({len(self.wrong_syncs())} naming no "
                f"committed copy)")


def _read_keyed(bootstrap: str, topic: str) -> list[tuple[bytes, bytes]]:
    return [(r.key or b"", r.value or b"") for _, r in read_partition(bootstrap, topic, 0)]


@pytest.mark.timeout(300)
def test_exactly_once_kill_9_five_times_every_record_once_in_order(clusters: Clusters, tmp_path: Path) -> None:
    """KIP-618 end to end for the mirror: after five kill -9s, B holds A's committed records exactly once."""
    run = run_exactly_once_kill_loop(clusters, tmp_path)
    print(run.summary("enabled"))
    for p in range(PARTITIONS):
        expected, copy = [v for _, v in run.source[p]], [v for _, v in run.copies[p]]
        assert not any(v.endswith(b" aborted") for v in expected)  # A's aborted transactions stay out
        assert copy == expected, (f"partition {p}: {len(copy)} copies of {len(expected)} records, "
                                  f"{len(set(expected) - set(copy))} lost, {len(copy) - len(set(copy))} twice")
    assert run.uncommitted > sum(len(v) for v in run.copies.values()), "no kill landed inside a transaction"
    assert run.syncs, "no offset syncs"
    wrong = run.wrong_syncs()
    assert not wrong, f"{len(wrong)} of {len(run.syncs)} offset syncs name no committed copy: {wrong[:3]}"


def _topics_b(clusters: Clusters) -> set[str]:
    return topics(clusters.b.bootstrap)
