"""Seaway vs Apache Kafka 4.x on this machine: the same clients and workloads, interleaved, in one run.

Run from the repository root (Kafka's jars are fetched with Maven on first use)::

    .venv/bin/python bench/peer_kafka.py [--quick] [--repeat N] [--skip broker|connect]

Brokers: a single-node KRaft Apache Kafka broker (``tests.peer.apache_kafka``: storage
formatted, server.properties written, ``-Xmx1g -Xms1g`` as ``kafka-server-start.sh``
gives it) and a Seaway broker (``tests.support.broker``), both on loopback with data on
the same disk and the same group settings. Every workload runs against one, then the
other (the order alternates each round), ``--repeat`` rounds; the best run of each side
is kept (the fastest rate, the lowest time). For each case it prints Seaway's and
Kafka's figure and Seaway / Kafka:

- ``produce``: confluent-kafka (librdkafka) ``produce()`` of 100 B and 1 KiB records to 1
  and 6 partitions, acks=1 and acks=all (linger.ms 10, batch.size 1 MB, no compression),
  timed from the first call to the end of ``flush()``;
- ``fetch``: a confluent-kafka consumer ``assign()``-ed from the beginning reading what
  the acks=all case wrote;
- ``perf-producer`` / ``perf-consumer``: Kafka's own ``ProducerPerformance`` and
  ``ConsumerPerformance`` (kafka-producer-perf-test / kafka-consumer-perf-test), Java
  clients with their defaults (acks=all, linger.ms 5, batch.size 16 KiB), 6 partitions;
- ``e2e latency``: Kafka's ``EndToEndLatency`` tool (one record at a time, produce then
  poll until it arrives; acks=1, 100 B): average, p50 and p99 in ms;
- ``rebalance``: two confluent-kafka consumers (range assignor, heartbeat 100 ms) on a
  6-partition topic: first join until assigned, second join until both hold 3, second
  close until the first holds 6 again;
- each broker's CPU seconds in each case and its RSS (now and peak ``VmHWM``), from /proc.

Connect (``--skip connect`` to leave out): Apache Kafka's distributed Connect worker and
Seaway's, each on the Apache Kafka broker (the neutral ground) with the same worker
properties: create -> RUNNING of a FileStreamSource (median), FileStreamSource and
FileStreamSink records/s with StringConverter (100-byte lines; from the first record to
the last, so start-up is not in the rate), and task failover after ``kill -9`` of one of
two workers (a 2-task FileStreamSink), whose floor is session.timeout.ms +
scheduled.rebalance.max.delay.ms (3 s + 2 s).

Targets (reported, not asserted; issue 17): Seaway's broker >= 1.0x Kafka's produce and
fetch throughput, e2e p99 <= Kafka's, RSS <= 1/4 of Kafka's; Seaway's worker >= 1.0x
Kafka Connect's FileStream throughput, create -> RUNNING <= Kafka Connect's.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import httpx
from _common import MIB, create_topic, delete_topic
from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition
from confluent_kafka import libversion as librdkafka_version

from tests.connect.distributed.dist_support import WorkerProcess, free_port, worker_properties
from tests.peer.apache_kafka import (
    KafkaBroker,
    KafkaConnect,
    ProcStats,
    create_internal_topics,
    proc_stats,
    run_tool,
)
from tests.peer.jars import ensure_jars, kafka_version
from tests.support.broker import BrokerProcess

BROKER_SETTINGS = {"group.initial.rebalance.delay.ms": "0", "group.min.session.timeout.ms": "1000",
                   "auto.create.topics.enable": "false", "num.partitions": "1"}
"""The same on both brokers: rebalances start at once, so the protocol is what is timed."""


@dataclass
class Side:
    """One broker under test: its name, address and process id (for /proc)."""

    name: str
    bootstrap: str
    pid: int

    def stats(self) -> ProcStats:
        return proc_stats(self.pid)


@dataclass
class Figure:
    """The best run of a case on one side: ``value`` (rate or time), its unit, the broker CPU."""

    value: float
    unit: str
    cpu: float = 0.0
    note: str = ""


@dataclass
class Case:
    name: str
    higher_is_better: bool
    figures: dict[str, Figure] = field(default_factory=dict)

    def offer(self, side: str, figure: Figure) -> None:
        best = self.figures.get(side)
        if best is None or (figure.value > best.value if self.higher_is_better else figure.value < best.value):
            self.figures[side] = figure


# --- broker workloads (each returns a Figure; the caller adds the broker's CPU) ------------------

def librdkafka_produce(bootstrap: str, topic: str, partitions: int, size: int, count: int, acks: str) -> Figure:
    producer = Producer({"bootstrap.servers": bootstrap, "acks": acks, "linger.ms": 10, "batch.size": 1_000_000,
                         "compression.type": "none", "queue.buffering.max.messages": 2_000_000,
                         "queue.buffering.max.kbytes": 2_000_000, "log_level": 4})
    value = (bytes(range(256)) * (size // 256 + 1))[:size]
    failures: list[object] = []

    def on_delivery(err: object, _msg: object) -> None:
        if err is not None:
            failures.append(err)

    produce = producer.produce
    t0 = time.perf_counter()
    for i in range(count):
        while True:
            try:
                produce(topic, value, partition=i % partitions, on_delivery=on_delivery if i % 1000 == 0 else None)
                break
            except BufferError:
                producer.poll(0.001)
        if i % 10000 == 0:
            producer.poll(0)
    if producer.flush(120):
        raise RuntimeError("librdkafka did not deliver everything")
    elapsed = time.perf_counter() - t0
    if failures:
        raise RuntimeError(f"delivery failed: {failures[0]}")
    return Figure(count / elapsed, "rec/s", note=f"{count * size / elapsed / MIB:.0f} MiB/s")


def librdkafka_fetch(bootstrap: str, topic: str, partitions: int, count: int) -> Figure:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"bench-{uuid.uuid4().hex[:8]}",
                         "enable.auto.commit": False, "log_level": 4})
    consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)])
    seen = nbytes = 0
    t0 = time.perf_counter()
    try:
        while seen < count and time.perf_counter() - t0 < 120:
            for msg in consumer.consume(num_messages=100_000, timeout=1.0):
                if msg.error():
                    raise RuntimeError(str(msg.error()))
                nbytes += len(msg.value() or b"")
                seen += 1
        elapsed = time.perf_counter() - t0
    finally:
        consumer.close()
    if seen < count:
        raise RuntimeError(f"consumed {seen} of {count}")
    return Figure(seen / elapsed, "rec/s", note=f"{nbytes / elapsed / MIB:.0f} MiB/s")


_PERF_PRODUCER = re.compile(r"(\d+) records sent, ([\d.]+) records/sec \(([\d.]+) MB/sec\), ([\d.]+) ms avg latency, "
                            r"([\d.]+) ms max latency, (\d+) ms 50th, (\d+) ms 95th, (\d+) ms 99th")


def perf_producer(bootstrap: str, topic: str, size: int, count: int) -> Figure:
    done = run_tool("org.apache.kafka.tools.ProducerPerformance", "--topic", topic, "--num-records", str(count),
                    "--record-size", str(size), "--throughput", "-1", "--producer-props",
                    f"bootstrap.servers={bootstrap}", timeout=300)
    found = list(_PERF_PRODUCER.finditer(done.stdout))
    if done.returncode != 0 or not found:
        raise RuntimeError(f"ProducerPerformance failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    m = found[-1]
    return Figure(float(m[2]), "rec/s", note=f"{float(m[3]):.0f} MB/s, latency avg {m[4]} p99 {m[8]} ms")


def perf_consumer(bootstrap: str, topic: str, count: int) -> Figure:
    done = run_tool("org.apache.kafka.tools.ConsumerPerformance", "--bootstrap-server", bootstrap, "--topic", topic,
                    "--num-records", str(count), "--timeout", "30000", "--hide-header", timeout=300)
    rows = [line.split(",") for line in done.stdout.splitlines() if line.count(",") >= 9]
    if done.returncode != 0 or not rows:
        raise RuntimeError(f"ConsumerPerformance failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    row = [c.strip() for c in rows[-1]]
    # start, end, MB, MB/s, nMsg, nMsg/s, rebalance ms, fetch ms, fetch MB/s, fetch nMsg/s
    if int(float(row[4])) < count:
        raise RuntimeError(f"ConsumerPerformance read {row[4]} of {count}")
    return Figure(float(row[9]), "rec/s", note=f"{float(row[8]):.0f} MB/s (after its {row[6]} ms group join)")


_E2E_AVG = re.compile(r"Avg latency: ([\d.]+) ms")
_E2E_PCT = re.compile(r"Percentiles: 50th = (\d+), 99th = (\d+), 99.9th = (\d+)")


def e2e_latency(bootstrap: str, topic: str, count: int) -> tuple[Figure, Figure]:
    done = run_tool("org.apache.kafka.tools.EndToEndLatency", bootstrap, topic, str(count), "1", "100", timeout=300)
    avg, pct = _E2E_AVG.search(done.stdout), _E2E_PCT.search(done.stdout)
    if done.returncode != 0 or avg is None or pct is None:
        raise RuntimeError(f"EndToEndLatency failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    note = f"p50 {pct[1]} ms, p99.9 {pct[3]} ms (the tool's percentiles are whole ms)"
    return Figure(float(avg[1]), "ms", note=note), Figure(float(pct[2]), "ms")


def rebalance(bootstrap: str, topic: str) -> tuple[Figure, Figure, Figure]:
    """Seconds: first member joins; second joins (both hold 3); second leaves (first holds 6 again)."""
    group = f"bench-rebalance-{uuid.uuid4().hex[:8]}"
    owned: dict[str, set[int]] = {"a": set(), "b": set()}

    def member(name: str) -> Any:
        def on_assign(_c: object, parts: list[TopicPartition]) -> None:
            owned[name] |= {p.partition for p in parts}

        def on_revoke(_c: object, parts: list[TopicPartition]) -> None:
            owned[name] -= {p.partition for p in parts}

        c = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "partition.assignment.strategy": "range",
                      "session.timeout.ms": 6000, "heartbeat.interval.ms": 100, "enable.auto.commit": False,
                      "log_level": 4})
        c.subscribe([topic], on_assign=on_assign, on_revoke=on_revoke)
        return c

    def until(check: Callable[[], bool], *members: Any) -> float:
        t0 = time.perf_counter()
        while not check():
            if time.perf_counter() - t0 > 60:
                raise RuntimeError(f"rebalance did not settle: {owned}")
            for c in members:
                c.poll(0.005)
        return time.perf_counter() - t0

    a = member("a")
    join = until(lambda: len(owned["a"]) == 6, a)
    b = member("b")
    second = until(lambda: len(owned["a"]) == 3 and len(owned["b"]) == 3, a, b)
    t0 = time.perf_counter()
    b.close()
    until(lambda: len(owned["a"]) == 6, a)
    leave = time.perf_counter() - t0
    a.close()
    return Figure(join, "s"), Figure(second, "s"), Figure(leave, "s")


# --- the broker run -------------------------------------------------------------------------

def run_brokers(args: argparse.Namespace, sides: list[Side]) -> list[Case]:
    n100, n1k = (200_000, 50_000) if args.quick else (1_000_000, 250_000)
    perf_n = 300_000 if args.quick else 2_000_000
    e2e_n = 500 if args.quick else 5_000
    cases: dict[str, Case] = {}

    def case(name: str, higher: bool = True) -> Case:
        return cases.setdefault(name, Case(name, higher))

    def timed(side: Side, name: str, higher: bool, work: Callable[[], Figure]) -> None:
        cpu0 = side.stats().cpu_seconds
        figure = work()
        figure.cpu = side.stats().cpu_seconds - cpu0
        case(name, higher).offer(side.name, figure)
        print(f"  {side.name:<7} {name:<38} {fmt(figure)}  [broker cpu {figure.cpu:.2f} s]", flush=True)

    for r in range(args.repeat):
        order = sides if r % 2 == 0 else sides[::-1]
        print(f"round {r + 1}/{args.repeat}", flush=True)
        for size, count in ((100, n100), (1024, n1k)):
            for partitions in (1, 6):
                for acks in ("1", "all"):
                    for side in order:
                        topic = f"produce-{size}-{partitions}-{acks}-{uuid.uuid4().hex[:6]}"
                        create_topic(side.bootstrap, topic, partitions)
                        label = f"produce {size:>4} B x{partitions}p acks={acks}"
                        timed(side, label, True,
                              partial(librdkafka_produce, side.bootstrap, topic, partitions, size, count, acks))
                        if acks == "all":
                            timed(side, f"fetch {size:>4} B x{partitions}p", True,
                                  partial(librdkafka_fetch, side.bootstrap, topic, partitions, count))
                        delete_topic(side.bootstrap, topic)
        for size in (100, 1024):
            for side in order:
                topic = f"perf-{size}-{uuid.uuid4().hex[:6]}"
                create_topic(side.bootstrap, topic, 6)
                n = perf_n if size == 100 else perf_n // 4
                timed(side, f"perf-producer {size:>4} B x6p acks=all", True,
                      partial(perf_producer, side.bootstrap, topic, size, n))
                timed(side, f"perf-consumer {size:>4} B x6p", True, partial(perf_consumer, side.bootstrap, topic, n))
                delete_topic(side.bootstrap, topic)
        for side in order:
            topic = f"e2e-{uuid.uuid4().hex[:6]}"
            create_topic(side.bootstrap, topic, 1)
            cpu0 = side.stats().cpu_seconds
            avg, p99 = e2e_latency(side.bootstrap, topic, e2e_n)
            avg.cpu = p99.cpu = side.stats().cpu_seconds - cpu0
            case("e2e latency avg (EndToEndLatency)", False).offer(side.name, avg)
            case("e2e latency p99 (EndToEndLatency)", False).offer(side.name, p99)
            print(f"  {side.name:<7} e2e latency avg / p99                  {avg.value:.3f} / {p99.value:.0f} ms "
                  f"({avg.note})", flush=True)
            delete_topic(side.bootstrap, topic)
        for side in order:
            topic = f"rebalance-{uuid.uuid4().hex[:6]}"
            create_topic(side.bootstrap, topic, 6)
            join, second, leave = rebalance(side.bootstrap, topic)
            for label, figure in (("first join", join), ("second joins", second), ("second leaves", leave)):
                case(f"rebalance: {label}", False).offer(side.name, figure)
            print(f"  {side.name:<7} rebalance join / second / leave         {join.value:.3f} / {second.value:.3f} / "
                  f"{leave.value:.3f} s", flush=True)
            delete_topic(side.bootstrap, topic)
    return list(cases.values())


# --- Connect ----------------------------------------------------------------------------------

@dataclass
class ConnectSide:
    """One kind of worker: how to start another one (``start(n)``) and the started ones."""

    name: str
    start: Callable[[int], Any]
    workers: list[Any] = field(default_factory=list)

    @property
    def url(self) -> str:
        return str(self.workers[0].url)

    def pid(self, i: int = 0) -> int:
        w = self.workers[i]
        return int(w.pid if isinstance(w, KafkaConnect) else w.proc.pid)


def _status(url: str, name: str) -> dict[str, Any] | None:
    response = httpx.get(f"{url}/connectors/{name}/status", timeout=30)
    return response.json() if response.status_code == 200 else None


def _all_running(url: str, name: str, tasks: int) -> dict[str, Any] | None:
    s = _status(url, name)
    if s and s["connector"]["state"] == "RUNNING" and len(s["tasks"]) == tasks and all(
            t["state"] == "RUNNING" for t in s["tasks"]):
        return s
    return None


def _poll(check: Callable[[], Any], timeout: float, interval: float = 0.01, what: str = "") -> float:
    t0 = time.perf_counter()
    while not check():
        if time.perf_counter() - t0 > timeout:
            raise RuntimeError(f"timed out after {timeout} s waiting for {what or check}")
        time.sleep(interval)
    return time.perf_counter() - t0


def _create(url: str, name: str, config: dict[str, str]) -> None:
    response = httpx.post(f"{url}/connectors", json={"name": name, "config": config}, timeout=60)
    if response.status_code != 201:
        raise RuntimeError(f"create {name}: {response.status_code} {response.text}")


def _end_offset(bootstrap: str, topic: str) -> int:
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "bench-watermark", "log_level": 3})
    try:
        return int(c.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)[1])
    finally:
        c.close()


def connect_create_to_running(side: ConnectSide, folder: Path, count: int) -> Figure:
    """Median seconds from POST /connectors to connector and task RUNNING, over ``count`` creates.

    The connectors are deleted only after the last create: a delete makes the worker stop
    the task and rebalance, which would delay a create sent right after it.
    """
    empty = folder / "empty.txt"
    empty.touch()
    times, names = [], []
    for i in range(count):
        name = f"c2r-{uuid.uuid4().hex[:6]}"
        names.append(name)
        t0 = time.perf_counter()
        _create(side.url, name, {"connector.class": "FileStreamSource", "file": str(empty),
                                 "topic": f"c2r-{side.name}-{i}"})
        _poll(partial(_all_running, side.url, name, 1), 60,
              what=f"{side.name}: {name} RUNNING; status {_status(side.url, name)}")
        times.append(time.perf_counter() - t0)
        time.sleep(0.5)
    for name in names:
        httpx.delete(f"{side.url}/connectors/{name}", timeout=60)
    return Figure(statistics.median(times), "s", note=f"{count} creates, min {min(times):.3f} s")


def connect_source_sink(side: ConnectSide, bootstrap: str, folder: Path, lines: int) -> tuple[Figure, Figure]:
    """FileStreamSource then FileStreamSink records/s, each from its first record to its last."""
    tag = uuid.uuid4().hex[:6]
    source, sink, topic = folder / f"in-{tag}.txt", folder / f"out-{tag}.txt", f"file-{side.name}-{tag}"
    line = "x" * 99
    source.write_text((line + "\n") * lines, encoding="utf-8")
    create_topic(bootstrap, topic, 1)
    _create(side.url, f"src-{tag}", {"connector.class": "FileStreamSource", "file": str(source), "topic": topic})
    _poll(lambda: _end_offset(bootstrap, topic) > 0, 60, 0.005)
    t_first, first = time.perf_counter(), _end_offset(bootstrap, topic)
    _poll(lambda: _end_offset(bootstrap, topic) >= lines, 300, 0.02)
    source_rate = (lines - first) / (time.perf_counter() - t_first)
    total = lines * 100
    _create(side.url, f"sink-{tag}", {"connector.class": "FileStreamSink", "file": str(sink), "topics": topic})
    _poll(lambda: sink.is_file() and sink.stat().st_size > 0, 60, 0.005)
    t_first, first_bytes = time.perf_counter(), sink.stat().st_size
    _poll(lambda: sink.stat().st_size >= total, 300, 0.02)
    sink_rate = (total - first_bytes) / 100 / (time.perf_counter() - t_first)
    for name in (f"src-{tag}", f"sink-{tag}"):
        httpx.delete(f"{side.url}/connectors/{name}", timeout=30)
    delete_topic(bootstrap, topic)
    return Figure(source_rate, "rec/s"), Figure(sink_rate, "rec/s")


def connect_failover(side: ConnectSide, bootstrap: str, folder: Path) -> Figure:
    """Seconds from kill -9 of the second worker until both tasks of a 2-task sink run on the first."""
    tag = uuid.uuid4().hex[:6]
    topic, name = f"failover-{side.name}-{tag}", f"failover-{tag}"
    create_topic(bootstrap, topic, 2)
    second = side.start(1)
    side.workers.append(second)
    try:
        _poll(lambda: httpx.get(f"{second.url}/connectors", timeout=10).status_code == 200, 60, 0.1)
        _create(side.url, name, {"connector.class": "FileStreamSink", "file": str(folder / f"{tag}.txt"),
                                 "topics": topic, "tasks.max": "2"})

        def spread() -> bool:
            s = _all_running(side.url, name, 2)
            return s is not None and len({t["worker_id"] for t in s["tasks"]}) == 2

        try:
            _poll(spread, 120, 0.05, what=f"two tasks on two workers; status {_status(side.url, name)}")
        except RuntimeError:
            lines = list(second.tail) if isinstance(second, KafkaConnect) else second.output
            print("----- second worker log tail -----\n"
                  + "".join(line for line in lines if not line.startswith("%"))[-6000:], flush=True)
            raise
        survivor = side.workers[0].url.split("://", 1)[1]
        second.kill()
        t0 = time.perf_counter()

        def moved() -> bool:
            s = _all_running(side.url, name, 2)
            return s is not None and {t["worker_id"] for t in s["tasks"]} == {survivor}

        _poll(moved, 120, 0.02)
        elapsed = time.perf_counter() - t0
        httpx.delete(f"{side.url}/connectors/{name}", timeout=60)
        return Figure(elapsed, "s", note="floor 3 s session + 2 s scheduled delay")
    finally:
        second.kill()
        side.workers.remove(second)
        delete_topic(bootstrap, topic)


def run_connect(args: argparse.Namespace, kafka: KafkaBroker, folder: Path) -> tuple[list[Case], dict[str, str]]:
    bootstrap = kafka.bootstrap
    lines = 100_000 if args.quick else 500_000

    def kafka_worker(i: int) -> KafkaConnect:
        props = worker_properties(bootstrap, free_port(), "bench-kafka-connect")
        directory = folder / f"kafka-connect-{i}-{uuid.uuid4().hex[:4]}"
        return KafkaConnect(directory, props, name=f"kafka-connect-{i}").start()

    def seaway_worker(i: int) -> WorkerProcess:
        props = worker_properties(bootstrap, free_port(), "bench-seaway-connect")
        if i == 0:
            create_internal_topics(bootstrap, props)
        worker = WorkerProcess(folder / f"seaway-connect-{i}-{uuid.uuid4().hex[:4]}", props).start()
        _poll(lambda: httpx.get(f"{worker.url}/connectors", timeout=10).status_code == 200, 60, 0.1)
        return worker

    sides = [ConnectSide("seaway", seaway_worker), ConnectSide("kafka", kafka_worker)]
    for side in sides:
        side.workers.append(side.start(0))
        time.sleep(3)  # let the group settle: a create during the first rebalance is a 409 on both
    cases: dict[str, Case] = {}

    def offer(name: str, higher: bool, side: ConnectSide, figure: Figure) -> None:
        cases.setdefault(name, Case(name, higher)).offer(side.name, figure)
        print(f"  {side.name:<7} {name:<38} {fmt(figure)}", flush=True)

    memory: dict[str, str] = {}

    def attempt(side: ConnectSide, work: Callable[[], Any]) -> Any:
        """``work()``, or None after printing why it failed and the worker's log tail (the run goes on)."""
        try:
            return work()
        except (RuntimeError, httpx.HTTPError) as e:
            worker = side.workers[0]
            lines = list(worker.tail) if isinstance(worker, KafkaConnect) else worker.output
            tail = "".join(line for line in lines if not line.startswith("%"))[-6000:]
            print(f"  {side.name:<7} FAILED: {e}\n----- {side.name} worker log tail -----\n{tail}-----", flush=True)
            return None

    try:
        for r in range(args.repeat):
            order = sides if r % 2 == 0 else sides[::-1]
            print(f"connect round {r + 1}/{args.repeat}", flush=True)
            for side in order:
                figure = attempt(side, partial(connect_create_to_running, side, folder, 3 if args.quick else 5))
                if figure is not None:
                    offer("create -> RUNNING (FileStreamSource)", False, side, figure)
            for side in order:
                cpu0 = proc_stats(side.pid()).cpu_seconds
                both = attempt(side, partial(connect_source_sink, side, bootstrap, folder, lines))
                if both is not None:
                    src, sink = both
                    src.cpu = sink.cpu = proc_stats(side.pid()).cpu_seconds - cpu0
                    offer("FileStreamSource 100 B lines", True, side, src)
                    offer("FileStreamSink 100 B lines", True, side, sink)
        for side in sides:
            stats = proc_stats(side.pid())
            memory[side.name] = (f"RSS {stats.rss_bytes / MIB:.0f} MiB (peak {stats.peak_rss_bytes / MIB:.0f}), "
                                 f"CPU {stats.cpu_seconds:.1f} s since start")
        for side in sides:
            figure = attempt(side, partial(connect_failover, side, bootstrap, folder))
            if figure is not None:
                offer("task failover after kill -9", False, side, figure)
    finally:
        for side in sides:
            for w in side.workers:
                w.stop()
    return list(cases.values()), memory


# --- output -----------------------------------------------------------------------------------

def fmt(figure: Figure) -> str:
    value = f"{figure.value:>12,.0f}" if figure.unit == "rec/s" else f"{figure.value:>12.3f}"
    return f"{value} {figure.unit:<5}" + (f" ({figure.note})" if figure.note else "")


def print_table(title: str, cases: list[Case]) -> None:
    print(f"\n{title}")
    print(f"{'case':<40} {'Seaway':>18} {'Kafka':>18}  Seaway/Kafka   Seaway cpu / Kafka cpu")
    for c in cases:
        s, k = c.figures.get("seaway"), c.figures.get("kafka")
        if s is None or k is None:
            continue
        ratio = s.value / k.value if k.value else float("inf")
        cpu = f"{s.cpu:.2f} / {k.cpu:.2f} s" if (s.cpu or k.cpu) else ""
        better = "" if c.higher_is_better else " (lower is better)"
        print(f"{c.name:<40} {fmt(s)[:18]:>18} {fmt(k)[:18]:>18}  {ratio:>8.2f}{better:<18} {cpu}")


def machine() -> str:
    java = subprocess.run(["java", "-version"], capture_output=True, text=True, check=False).stderr.splitlines()
    return (f"{os.cpu_count()} cores, {os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30:.0f} GiB, "
            f"load avg {os.getloadavg()[0]:.2f}; Apache Kafka {kafka_version()} on {java[0] if java else 'java'}; "
            f"Python {platform.python_version()}; librdkafka {librdkafka_version()[0]}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small volumes, one round (a few minutes)")
    parser.add_argument("--repeat", type=int, default=None, help="rounds, best kept (default 3, quick 1)")
    parser.add_argument("--skip", choices=["broker", "connect"], action="append", default=[])
    args = parser.parse_args()
    args.repeat = args.repeat or (1 if args.quick else 3)
    ensure_jars()
    print(machine(), flush=True)
    folder = Path(tempfile.mkdtemp(prefix="seaway-bench-peer-"))
    kafka = KafkaBroker(folder / "kafka", BROKER_SETTINGS).start()
    seaway = BrokerProcess(folder / "seaway", BROKER_SETTINGS).start()
    assert seaway.proc is not None
    sides = [Side("seaway", seaway.bootstrap, seaway.proc.pid), Side("kafka", kafka.bootstrap, kafka.pid)]
    start_cpu = {s.name: s.stats().cpu_seconds for s in sides}
    try:
        broker_cases = [] if "broker" in args.skip else run_brokers(args, sides)
        memory = {s.name: s.stats() for s in sides}
        connect_cases, worker_memory = ([], {}) if "connect" in args.skip else run_connect(args, kafka, folder)
    finally:
        seaway.stop()
        kafka.stop()
    print(f"\n{machine()}")
    if broker_cases:
        print_table("Brokers (best of each side; rates: higher is better)", broker_cases)
        s, k = memory["seaway"], memory["kafka"]
        peak = s.peak_rss_bytes / k.peak_rss_bytes
        print(f"{'broker RSS now / peak (MiB)':<40} {s.rss_bytes / MIB:>10.0f} / {s.peak_rss_bytes / MIB:<5.0f} "
              f"{k.rss_bytes / MIB:>10.0f} / {k.peak_rss_bytes / MIB:<5.0f}  {peak:>8.2f} (peak; target <= 0.25)")
        print(f"{'broker CPU s, whole broker run':<40} {s.cpu_seconds - start_cpu['seaway']:>18.1f} "
              f"{k.cpu_seconds - start_cpu['kafka']:>18.1f}")
    if connect_cases:
        print_table("Connect workers on the Apache Kafka broker (worker cpu during source+sink)", connect_cases)
        for name, text in worker_memory.items():
            print(f"{name} worker: {text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
