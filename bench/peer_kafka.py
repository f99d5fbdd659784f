"""Seaway vs Apache Kafka 4.x on this machine: the same clients and workloads, interleaved, in one run.

Run from the repository root (Kafka's jars are fetched with Maven on first use)::

    .venv/bin/python bench/peer_kafka.py [--quick] [--repeat N] [--skip broker|connect]
        [--cases librdkafka,java-produce,java-consume,many,e2e,rebalance,tls] [--extra-seaway KEY=VALUE]

Brokers: a single-node KRaft Apache Kafka broker (``tests.peer.apache_kafka``: storage
formatted, server.properties written, ``-Xmx1g -Xms1g`` as ``kafka-server-start.sh``
gives it) and a Seaway broker (``tests.support.broker``), both on loopback with data on
the same disk and the same group settings, each with a PLAINTEXT and an SSL listener (one
certificate, ECDSA P-256, made by ``tests/support/tls_material.py``). Every workload runs
against one, then the other (the order alternates each round), ``--repeat`` rounds. For
each case it prints the best run of each side (the fastest rate, the lowest time), Seaway /
Kafka of those, the range of the per-round ratios (each Seaway run against the Kafka run of
the same round: the load of this shared machine moves both), and each side's broker CPU
per record (the mean over the rounds, from /proc). Cases (``--cases``, default all):

- ``librdkafka``: confluent-kafka ``produce()`` of 100 B and 1 KiB records to 1 and 6
  partitions, acks=1 and acks=all (linger.ms 10, batch.size 1 MB, no compression), timed
  from the first call to the end of ``flush()``; then ``fetch``: a consumer ``assign()``-ed
  from the beginning reading what the acks=all case wrote, with librdkafka's defaults, timed
  from the first record to the last (its start-up, ~0.5 s of its own timers before the first
  ListOffsets, is left out), in batches of at most 10,000 records (a ``consume()`` asking for
  more than remain would wait out its timeout). ``stalls`` counts the pauses of 0.5 s or more:
  librdkafka stops fetching for ``fetch.queue.backoff.ms`` (1 s) whenever its prefetch queue
  holds ``queued.min.messages`` (100,000) or ``queued.max.messages.kbytes`` (64 MiB), which
  happens when the broker streams faster than the application takes records. With 100 B
  records the 100,000-record limit is 10 MB, which Python drains in ~0.07 s, so such a run
  is a train of 1 s pauses on either broker (15-18 per million records, librdkafka's debug
  log says ``Fetch backoff for 1000ms: Local: Queue full``) and its rate counts the records
  that get in between two pauses, not how fast the broker serves them. Every fetch case
  therefore runs twice: with the client's defaults, and with ``fetch.queue.backoff.ms=10``
  (as Seaway's Connect tasks set it), which measures the stream without those pauses;
- ``java-produce``: Kafka's own ``ProducerPerformance`` (kafka-producer-perf-test), the Java
  producer with its defaults (idempotent, linger.ms 5, batch.size 16 KiB, 5 requests in
  flight), 100 B and 1 KiB, 1 and 6 partitions, acks=1 and acks=all: records/s and the
  tool's p99 latency (send to acknowledgement, so it includes time queued in the producer);
- ``java-consume``: ``ConsumerPerformance`` (kafka-consumer-perf-test) reading the acks=all
  1- and 6-partition topics (the Java consumer has no such pause: it fetches as ``poll()``
  drains its buffer). Each broker's run lays out its own topic: a broker that acknowledges
  sooner gets smaller batches from the Java producer (Seaway's 100 B x 6 p topic held 20,046
  batches to Kafka's 14,963), and the consumer pays per batch. So the consumer also reads a
  topic laid out the same on both (``same batches``): librdkafka writes full 16 KiB batches
  (the Java producer's ``batch.size``) with a linger long enough that no batch leaves early.
  The Java consumer has one fetch in flight per broker and asks for the next only when
  ``poll()`` has drained the last one, so it waits a whole round trip per 1 MiB answer: the
  ``fetch round trip`` cases time that wait alone: a raw client fetching each same-layout
  topic with the consumer's ``max.partition.fetch.bytes`` (1 MiB) for every partition, one
  request at a time (mean of every request; lower is better);
- ``fetch-rtt``: the ``fetch round trip`` alone, on two 6-partition same-layout topics (100 B and
  1 KiB records) written once per broker and read :data:`RTT_WARMUP_PASSES` times before
  the first timed pass, then one timed pass per round: ``java-consume`` times one pass per
  topic right after writing it and reading it with the Java consumer, when a fresh Kafka is
  still compiling, and single passes spread 2.7-6 ms on both brokers; run this group with
  ``--repeat 8`` or more to compare the brokers' round trips;
- ``many``: 50 Java producers (each its own connection, client defaults) sending 1,000
  records/s each (100 B, 6 partitions) and one Java consumer, in one JVM
  (``bench/java/ManyProducers.java``): end-to-end latency (send to the consumer's poll)
  p50 / p99 / p99.9 and acknowledgement p99, over all records but the first and last second;
- ``e2e``: Kafka's ``EndToEndLatency`` tool (one record at a time, produce then poll until it
  arrives; acks=1, 100 B): average and p99 in ms;
- ``rebalance``: two confluent-kafka consumers (range assignor, heartbeat 100 ms) on a
  6-partition topic: first join until assigned, second join until both hold 3, second
  close until the first holds 6 again;
- ``tls``: over each broker's SSL listener: librdkafka produce of 1 KiB records to 6
  partitions (acks=all) and fetch of 1 KiB from 1 partition, and the Java producer's
  defaults at 1 KiB x 6 partitions; with the plaintext case of the same round beside it,
  the share of the plaintext rate kept and the broker CPU that TLS adds per GiB;
- each broker's RSS (now and peak ``VmHWM``) after the run.

``--extra-seaway KEY=VALUE`` adds a third side, a Seaway broker with that override (e.g.
``socket.send.buffer.bytes=-1``), run in the same rounds.

Connect (``--skip connect`` to leave out): Apache Kafka's distributed Connect worker and
Seaway's, each on the Apache Kafka broker (the neutral ground) with the same worker
properties: create -> RUNNING of a FileStreamSource (median), FileStreamSource and
FileStreamSink records/s with StringConverter (100-byte lines; from the first record to
the last, so start-up is not in the rate), and task failover after ``kill -9`` of one of
two workers (a 2-task FileStreamSink), whose floor is session.timeout.ms +
scheduled.rebalance.max.delay.ms (3 s + 2 s).

Targets (reported, not asserted; issues 17 and 34): Seaway's broker >= 1.0x Kafka's
throughput in every case, TLS included, p99 <= Kafka's, RSS <= 1/4 of Kafka's, CPU per
record no worse than before; Seaway's worker >= 1.0x Kafka Connect's FileStream
throughput, create -> RUNNING <= Kafka Connect's.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import shutil
import socket
import statistics
import struct
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
from _common import MIB, create_topic, delete_topic, recv_exact
from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition
from confluent_kafka import libversion as librdkafka_version
from seaway.protocol.framing import request_frame
from seaway.protocol.messages.fetch_request import FetchPartition, FetchRequest, FetchTopic
from seaway.protocol.messages.fetch_response import FetchResponse
from seaway.protocol.primitives import Reader

from tests.connect.distributed.dist_support import WorkerProcess, free_port, worker_properties
from tests.peer.apache_kafka import (
    KafkaBroker,
    KafkaConnect,
    ProcStats,
    _tool_log4j,
    create_internal_topics,
    proc_stats,
    run_tool,
)
from tests.peer.jars import classpath, ensure_jars, kafka_version
from tests.support.broker import BrokerProcess
from tests.support.tls_material import Material, make_material

BROKER_SETTINGS = {"group.initial.rebalance.delay.ms": "0", "group.min.session.timeout.ms": "1000",
                   "auto.create.topics.enable": "false", "num.partitions": "1"}
"""The same on both brokers: rebalances start at once, so the protocol is what is timed."""

CASE_GROUPS = ("librdkafka", "java-produce", "java-consume", "fetch-rtt", "many", "e2e", "rebalance", "tls")
RTT_WARMUP_PASSES = 3
"""Passes over a fetch-rtt topic before timing it (Kafka's 6 MiB round trip falls from 3-6 ms to ~2 ms as
its JIT compiles the fetch path; Seaway's is flat)."""
JAVA_SOURCE = Path(__file__).resolve().parent / "java" / "ManyProducers.java"
GIB = 1 << 30


@dataclass
class Side:
    """One broker under test: its name, PLAINTEXT and SSL addresses, process id (for /proc)."""

    name: str
    bootstrap: str
    pid: int
    ssl_bootstrap: str = ""

    def stats(self) -> ProcStats:
        return proc_stats(self.pid)


@dataclass
class Figure:
    """One run of a case on one side: ``value`` (rate or time), its unit, the broker CPU."""

    value: float
    unit: str
    cpu: float = 0.0
    note: str = ""
    records: int = 0
    """Records the run moved (for the broker CPU per record; 0: not a per-record case)."""
    nbytes: int = 0
    """Bytes of record values the run moved (for the broker CPU per GiB)."""


@dataclass
class Case:
    """Every run of a case, per side, in round order (None: that side's run failed)."""

    name: str
    higher_is_better: bool
    runs: dict[str, list[Figure | None]] = field(default_factory=dict)

    def offer(self, side: str, figure: Figure | None) -> None:
        self.runs.setdefault(side, []).append(figure)

    def best(self, side: str) -> Figure | None:
        figures = [f for f in self.runs.get(side, []) if f is not None]
        if not figures:
            return None
        return (max if self.higher_is_better else min)(figures, key=lambda f: f.value)

    def round_ratios(self, side: str, base: str = "kafka") -> list[float]:
        """``side`` / ``base`` of each round both ran (same round: the same load on the machine)."""
        return [a.value / b.value for a, b in zip(self.runs.get(side, []), self.runs.get(base, []), strict=False)
                if a is not None and b is not None and b.value]

    def cpu_per_record_us(self, side: str) -> float | None:
        figures = [f for f in self.runs.get(side, []) if f is not None and f.records]
        if not figures:
            return None
        return 1e6 * sum(f.cpu for f in figures) / sum(f.records for f in figures)


# --- broker workloads (each returns a Figure; the caller adds the broker's CPU) ------------------

def _tls(material: Material | None) -> dict[str, str]:
    """confluent-kafka settings for an SSL listener (none for PLAINTEXT)."""
    return {} if material is None else {"security.protocol": "SSL", "ssl.ca.location": str(material.ca)}


def _java_tls(material: Material | None) -> list[str]:
    """Java client settings (``k=v``) for an SSL listener: the CA as a PEM truststore."""
    if material is None:
        return []
    return ["security.protocol=SSL", "ssl.truststore.type=PEM", f"ssl.truststore.location={material.ca}"]


SAME_BATCHES: dict[str, Any] = {"batch.size": 16_384, "linger.ms": 5_000}
"""librdkafka settings that write only full 16 KiB batches (the Java producer's ``batch.size``):
the queue is filled faster than a batch lingers, so every broker gets the same layout."""


def librdkafka_produce(bootstrap: str, topic: str, partitions: int, size: int, count: int, acks: str,
                       material: Material | None = None, **settings: Any) -> Figure:
    producer = Producer({"bootstrap.servers": bootstrap, "acks": acks, "linger.ms": 10, "batch.size": 1_000_000,
                         "compression.type": "none", "queue.buffering.max.messages": 2_000_000,
                         "queue.buffering.max.kbytes": 2_000_000, "log_level": 4, **_tls(material), **settings})
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
    return Figure(count / elapsed, "rec/s", note=f"{count * size / elapsed / MIB:.0f} MiB/s", records=count,
                  nbytes=count * size)


def librdkafka_fetch(bootstrap: str, topic: str, partitions: int, count: int,
                     material: Material | None = None, **settings: Any) -> Figure:
    """Records/s from the first record to the last (see the module docstring), and the stalls."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"bench-{uuid.uuid4().hex[:8]}",
                         "enable.auto.commit": False, "log_level": 4, **_tls(material), **settings})
    consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)])
    seen = nbytes = stalls = first_batch = 0
    t0 = time.perf_counter()
    first = last = 0.0
    try:
        while seen < count and time.perf_counter() - t0 < 120:
            asked = time.perf_counter()
            batch = consumer.consume(num_messages=min(10_000, count - seen), timeout=1.0)
            if not batch:
                continue
            if seen == 0:
                first, first_batch = time.perf_counter(), len(batch)
            elif time.perf_counter() - asked >= 0.5:
                stalls += 1
            for msg in batch:
                if msg.error():
                    raise RuntimeError(str(msg.error()))
                nbytes += len(msg.value() or b"")
                seen += 1
            last = time.perf_counter()
    finally:
        consumer.close()
    if seen < count:
        raise RuntimeError(f"consumed {seen} of {count}")
    elapsed = max(last - first, 1e-6)
    # The first batch arrived at ``first``: the rate is over the records after it.
    return Figure((seen - first_batch) / elapsed, "rec/s", records=seen, nbytes=nbytes,
                  note=f"{nbytes / elapsed / MIB:.0f} MiB/s, {stalls} stalls, first record after {first - t0:.2f} s")


_PERF_PRODUCER = re.compile(r"(\d+) records sent, ([\d.]+) records/sec \(([\d.]+) MB/sec\), ([\d.]+) ms avg latency, "
                            r"([\d.]+) ms max latency, (\d+) ms 50th, (\d+) ms 95th, (\d+) ms 99th")


def perf_producer(bootstrap: str, topic: str, size: int, count: int, acks: str = "all",
                  material: Material | None = None) -> tuple[Figure, Figure]:
    """ProducerPerformance with the Java producer's defaults: (records/s, p99 ms)."""
    done = run_tool("org.apache.kafka.tools.ProducerPerformance", "--topic", topic, "--num-records", str(count),
                    "--record-size", str(size), "--throughput", "-1", "--producer-props",
                    f"bootstrap.servers={bootstrap}", f"acks={acks}", *_java_tls(material), timeout=600)
    found = list(_PERF_PRODUCER.finditer(done.stdout))
    if done.returncode != 0 or not found:
        raise RuntimeError(f"ProducerPerformance failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    m = found[-1]
    rate = Figure(float(m[2]), "rec/s", note=f"{float(m[3]):.0f} MB/s, latency avg {m[4]} p50 {m[6]} p99 {m[8]} ms",
                  records=count, nbytes=count * size)
    return rate, Figure(float(m[8]), "ms", note=f"avg {m[4]} ms, max {m[5]} ms")


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
    return Figure(float(row[9]), "rec/s", note=f"{float(row[8]):.0f} MB/s (after its {row[6]} ms group join)",
                  records=count)


_BATCH_HEAD = struct.Struct(">qi")  # a record batch's baseOffset and batchLength
_RECORD_COUNT_AT = 57  # a v2 record batch's record count, from the batch's start


def fetch_round_trip(bootstrap: str, topic: str, partitions: int, count: int,
                     partition_max_bytes: int = MIB) -> Figure:
    """Mean ms from sending a Fetch (v11, every partition) to the last byte of its answer, one at a time."""
    host, port = bootstrap.rsplit(":", 1)
    waits: list[float] = []
    buffer = memoryview(bytearray(64 * MIB))
    head = bytearray(4)
    offsets = [0] * partitions
    ends = [count // partitions + (1 if p < count % partitions else 0) for p in range(partitions)]
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        while offsets != ends:
            request = FetchRequest(
                replica_id=-1, max_wait_ms=500, min_bytes=1, max_bytes=50 * MIB, isolation_level=0, session_id=0,
                session_epoch=-1, topics=[FetchTopic(topic=topic, partitions=[
                    FetchPartition(partition=p, fetch_offset=o, partition_max_bytes=partition_max_bytes)
                    for p, o in enumerate(offsets) if o < ends[p]])])
            frame = request_frame(request, 11, len(waits) + 1, "seaway-bench-rtt")
            t0 = time.perf_counter()
            sock.sendall(frame)
            recv_exact(sock, memoryview(head))
            size = int.from_bytes(head, "big")
            recv_exact(sock, buffer[:size])
            waits.append(time.perf_counter() - t0)
            before = list(offsets)
            for answer in FetchResponse.decode(Reader(buffer[:size], 4), 11).responses[0].partitions:
                records, pos = answer.records, 0
                while pos + _RECORD_COUNT_AT + 4 <= len(records):  # whole batches (Kafka may end on a partial one)
                    base, length = _BATCH_HEAD.unpack_from(records, pos)
                    if pos + 12 + length > len(records):
                        break
                    at = pos + _RECORD_COUNT_AT
                    offsets[answer.partition_index] = base + int.from_bytes(records[at:at + 4], "big")
                    pos += 12 + length
            if offsets == before:
                raise RuntimeError(f"a fetch at offsets {offsets} returned no whole batch")
    ms = sorted(w * 1000 for w in waits)
    return Figure(statistics.fmean(ms), "ms", records=count,
                  note=f"{len(ms)} fetches, p50 {ms[len(ms) // 2]:.2f} p90 {ms[int(len(ms) * 0.9)]:.2f} ms")



def compile_java(folder: Path) -> Path:
    """``bench/java/ManyProducers.java`` compiled against Kafka's jars into ``folder``."""
    out = folder / "java"
    out.mkdir(exist_ok=True)
    done = subprocess.run(["javac", "-d", str(out), "-cp", classpath(), str(JAVA_SOURCE)],
                          capture_output=True, text=True, timeout=180, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"javac ManyProducers failed:\n{done.stderr[-3000:]}")
    return out


def many_producers(compiled: Path, bootstrap: str, topic: str, producers: int, rate: int, seconds: int,
                   size: int) -> dict[str, Figure]:
    """``ManyProducers``: e2e p50/p99/p99.9 and ack p99 (ms), every record delivered."""
    done = subprocess.run(
        ["java", "-Xmx1g", "-XX:+UseG1GC", _tool_log4j(), "-cp", f"{compiled}:{classpath()}", "ManyProducers",
         bootstrap, topic, str(producers), str(rate), str(seconds), str(size)],
        capture_output=True, text=True, timeout=seconds + 180, check=False)
    lines = dict(line.split(" ", 1) for line in done.stdout.splitlines() if " " in line)
    if done.returncode != 0 or "e2e_ms" not in lines or lines["e2e_ms"] == "none":
        raise RuntimeError(f"ManyProducers failed:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}")
    sent, acked, received = int(lines["sent"]), int(lines["acked"]), int(lines["received"])
    if not sent == acked == received:
        raise RuntimeError(f"ManyProducers: sent {sent}, acked {acked}, received {received}")
    p50, p99, p999, top = (float(v) for v in lines["e2e_ms"].split())
    ack = [float(v) for v in lines["ack_ms"].split()]
    note = f"{sent} records, e2e max {top:.1f} ms"
    return {"e2e p50": Figure(p50, "ms", note=note), "e2e p99": Figure(p99, "ms", note=note, records=sent),
            "e2e p99.9": Figure(p999, "ms", note=note), "ack p99": Figure(ack[1], "ms", note=f"ack p50 {ack[0]} ms")}


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

def run_brokers(args: argparse.Namespace, sides: list[Side], material: Material, folder: Path) -> list[Case]:
    n100, n1k = (200_000, 50_000) if args.quick else (1_000_000, 250_000)
    perf_n = 300_000 if args.quick else 2_000_000
    e2e_n = 500 if args.quick else 5_000
    many_s = 8 if args.quick else 20

    def java_records(size: int) -> int:
        """Records per Java-tool topic (and fetch-rtt topic): a quarter as many at 1 KiB as at 100 B."""
        return perf_n if size == 100 else perf_n // 4

    groups = set(args.cases)
    compiled = compile_java(folder) if "many" in groups else None
    cases: dict[str, Case] = {}

    def case(name: str, higher: bool = True) -> Case:
        return cases.setdefault(name, Case(name, higher))

    def timed(side: Side, name: str, higher: bool, work: Callable[[], Figure]) -> Figure | None:
        """Run ``work`` on ``side`` and file it; a failure is printed and filed as None (the run goes on)."""
        cpu0 = side.stats().cpu_seconds
        try:
            figure: Figure | None = work()
        except (RuntimeError, subprocess.TimeoutExpired) as exc:
            print(f"  {side.name:<7} {name:<40} FAILED: {exc}", flush=True)
            figure = None
        if figure is not None:
            figure.cpu = side.stats().cpu_seconds - cpu0
            print(f"  {side.name:<7} {name:<40} {fmt(figure)}  [broker cpu {figure.cpu:.2f} s]", flush=True)
        case(name, higher).offer(side.name, figure)
        return figure

    def topic_on(side: Side, prefix: str, partitions: int) -> str:
        topic = f"{prefix}-{uuid.uuid4().hex[:6]}"
        create_topic(side.bootstrap, topic, partitions)
        return topic

    rtt_topics: dict[tuple[str, int], str] = {}  # (side, size): the fetch-rtt group's topic, kept across rounds
    for r in range(args.repeat):
        order = sides[r % len(sides):] + sides[:r % len(sides)]
        print(f"round {r + 1}/{args.repeat}", flush=True)
        if "fetch-rtt" in groups:
            for size in (100, 1024):
                n = java_records(size)
                for side in order:
                    topic = rtt_topics.get((side.name, size))
                    if topic is None:  # laid out once, then warmed: a fresh JVM's first passes time its JIT
                        topic = rtt_topics[(side.name, size)] = topic_on(side, f"rtt-{size}", 6)
                        librdkafka_produce(side.bootstrap, topic, 6, size, n, "all", **SAME_BATCHES)
                        for _ in range(RTT_WARMUP_PASSES):
                            fetch_round_trip(side.bootstrap, topic, 6, n)
                    timed(side, f"fetch round trip {size:>4} B x6p, warm", False,
                          partial(fetch_round_trip, side.bootstrap, topic, 6, n))
        if "librdkafka" in groups:
            for size, count in ((100, n100), (1024, n1k)):
                for partitions in (1, 6):
                    for acks in ("1", "all"):
                        for side in order:
                            topic = topic_on(side, f"produce-{size}-{partitions}-{acks}", partitions)
                            timed(side, f"produce {size:>4} B x{partitions}p acks={acks}", True,
                                  partial(librdkafka_produce, side.bootstrap, topic, partitions, size, count, acks))
                            if acks == "all":
                                timed(side, f"fetch {size:>4} B x{partitions}p", True,
                                      partial(librdkafka_fetch, side.bootstrap, topic, partitions, count))
                                timed(side, f"fetch {size:>4} B x{partitions}p, fetch.queue.backoff.ms=10", True,
                                      partial(librdkafka_fetch, side.bootstrap, topic, partitions, count,
                                              **{"fetch.queue.backoff.ms": 10}))
                            delete_topic(side.bootstrap, topic)
        if "java-produce" in groups or "java-consume" in groups:
            for size in (100, 1024):
                n = java_records(size)
                for partitions in (1, 6):
                    for acks in ("1", "all"):
                        if "java-produce" not in groups and acks != "all":
                            continue
                        for side in order:
                            topic = topic_on(side, f"perf-{size}-{partitions}-{acks}", partitions)
                            label = f"java producer {size:>4} B x{partitions}p acks={acks}"
                            got: list[Figure] = []

                            def produce(side: Side = side, topic: str = topic, size: int = size, n: int = n,
                                        acks: str = acks, got: list[Figure] = got) -> Figure:
                                rate, p99 = perf_producer(side.bootstrap, topic, size, n, acks)
                                got.append(p99)
                                return rate

                            timed(side, label, True, produce)
                            case(f"{label} p99", False).offer(side.name, got[0] if got else None)
                            if "java-consume" in groups and acks == "all" and got:
                                timed(side, f"java consumer {size:>4} B x{partitions}p", True,
                                      partial(perf_consumer, side.bootstrap, topic, n))
                            delete_topic(side.bootstrap, topic)
                            if "java-consume" in groups and acks == "all":
                                same = topic_on(side, f"same-{size}-{partitions}", partitions)
                                librdkafka_produce(side.bootstrap, same, partitions, size, n, "all", **SAME_BATCHES)
                                timed(side, f"java consumer {size:>4} B x{partitions}p, same batches", True,
                                      partial(perf_consumer, side.bootstrap, same, n))
                                timed(side, f"fetch round trip {size:>4} B x{partitions}p, same batches", False,
                                      partial(fetch_round_trip, side.bootstrap, same, partitions, n))
                                delete_topic(side.bootstrap, same)
        if "many" in groups and compiled is not None:
            for side in order:
                topic = topic_on(side, "many", 6)
                cpu0 = side.stats().cpu_seconds
                label = "50 producers x 1000 rec/s, 100 B"
                try:
                    figures: dict[str, Figure] | None = many_producers(compiled, side.bootstrap, topic, 50, 1000,
                                                                       many_s, 100)
                except (RuntimeError, subprocess.TimeoutExpired) as exc:
                    print(f"  {side.name:<7} {label} FAILED: {exc}", flush=True)
                    figures = None
                cpu = side.stats().cpu_seconds - cpu0
                for what in ("e2e p50", "e2e p99", "e2e p99.9", "ack p99"):
                    figure = None if figures is None else figures[what]
                    if figure is not None:
                        figure.cpu = cpu
                    case(f"{label}: {what}", False).offer(side.name, figure)
                if figures is not None:
                    print(f"  {side.name:<7} {label}: e2e p50 / p99 / p99.9 {figures['e2e p50'].value:.2f} / "
                          f"{figures['e2e p99'].value:.2f} / {figures['e2e p99.9'].value:.2f} ms, ack p99 "
                          f"{figures['ack p99'].value:.2f} ms ({figures['e2e p99'].note})  [broker cpu {cpu:.2f} s]",
                          flush=True)
                delete_topic(side.bootstrap, topic)
        if "e2e" in groups:
            for side in order:
                topic = topic_on(side, "e2e", 1)
                cpu0 = side.stats().cpu_seconds
                avg, p99 = e2e_latency(side.bootstrap, topic, e2e_n)
                avg.cpu = p99.cpu = side.stats().cpu_seconds - cpu0
                case("e2e latency avg (EndToEndLatency)", False).offer(side.name, avg)
                case("e2e latency p99 (EndToEndLatency)", False).offer(side.name, p99)
                print(f"  {side.name:<7} e2e latency avg / p99                  {avg.value:.3f} / {p99.value:.0f} ms "
                      f"({avg.note})", flush=True)
                delete_topic(side.bootstrap, topic)
        if "rebalance" in groups:
            for side in order:
                topic = topic_on(side, "rebalance", 6)
                join, second, leave = rebalance(side.bootstrap, topic)
                for label, figure in (("first join", join), ("second joins", second), ("second leaves", leave)):
                    case(f"rebalance: {label}", False).offer(side.name, figure)
                print(f"  {side.name:<7} rebalance join / second / leave         {join.value:.3f} / "
                      f"{second.value:.3f} / {leave.value:.3f} s", flush=True)
                delete_topic(side.bootstrap, topic)
        if "tls" in groups:
            for side in order:
                for tls in (None, material):  # plaintext then SSL, same round: the ratio and CPU/GiB added
                    address = side.bootstrap if tls is None else side.ssl_bootstrap
                    tag = "SSL" if tls is not None else "PLAINTEXT"
                    topic = topic_on(side, "tls-produce", 6)
                    timed(side, f"{tag} produce 1024 B x6p acks=all", True,
                          partial(librdkafka_produce, address, topic, 6, 1024, n1k, "all", tls))
                    delete_topic(side.bootstrap, topic)
                    topic = topic_on(side, "tls-fetch", 1)
                    librdkafka_produce(side.bootstrap, topic, 1, 1024, n1k, "all")
                    timed(side, f"{tag} fetch 1024 B x1p", True, partial(librdkafka_fetch, address, topic, 1, n1k, tls))
                    delete_topic(side.bootstrap, topic)
                    topic = topic_on(side, "tls-java", 6)
                    got = []

                    def java(address: str = address, topic: str = topic, tls: Material | None = tls,
                             got: list[Figure] = got) -> Figure:
                        rate, p99 = perf_producer(address, topic, 1024, java_records(1024), "all", tls)
                        got.append(p99)
                        return rate

                    timed(side, f"{tag} java producer 1024 B x6p acks=all", True, java)
                    case(f"{tag} java producer 1024 B x6p acks=all p99", False).offer(side.name,
                                                                                      got[0] if got else None)
                    delete_topic(side.bootstrap, topic)
    for (name, _), topic in rtt_topics.items():
        delete_topic(next(side for side in sides if side.name == name).bootstrap, topic)
    return list(cases.values())


def tls_costs(cases: list[Case], sides: list[str]) -> list[str]:
    """Per TLS case and side: the share of the plaintext rate kept, and the broker CPU s/GiB TLS adds."""
    by_name = {c.name: c for c in cases}
    lines = []
    for c in cases:
        if not c.name.startswith("SSL "):
            continue
        plain = by_name.get("PLAINTEXT " + c.name[4:])
        if plain is None or c.name.endswith("p99"):
            continue
        for side in sides:
            kept = [a.value / b.value for a, b in zip(c.runs.get(side, []), plain.runs.get(side, []), strict=False)
                    if a is not None and b is not None and b.value]
            added = [(a.cpu / a.nbytes - b.cpu / b.nbytes) * GIB
                     for a, b in zip(c.runs.get(side, []), plain.runs.get(side, []), strict=False)
                     if a is not None and b is not None and a.nbytes and b.nbytes]
            if kept:
                lines.append(f"{c.name[4:]:<36} {side:<8} SSL/PLAINTEXT {min(kept):.2f}-{max(kept):.2f}   "
                             f"TLS adds {min(added):.2f}-{max(added):.2f} broker CPU s per GiB")
    return lines


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


def print_table(title: str, cases: list[Case], sides: list[str] | None = None) -> None:
    """Best of each side, best/best ratio, the per-round ratios' range, broker CPU µs per record."""
    sides = sides or ["seaway", "kafka"]
    others = [s for s in sides if s not in ("seaway", "kafka")]
    print(f"\n{title}")
    print(f"{'case':<46} {'Seaway':>14} {'Kafka':>14}  {'S/K best':>8}  {'S/K rounds':>11}   "
          f"µs cpu/rec S / K" + "".join(f"   {o}: best, S'/K rounds" for o in others))
    for c in cases:
        s, k = c.best("seaway"), c.best("kafka")
        if s is None or k is None:
            continue
        ratio = s.value / k.value if k.value else float("inf")
        rounds = c.round_ratios("seaway")
        spread = f"{min(rounds):.2f}-{max(rounds):.2f}" if rounds else ""
        cs, ck = c.cpu_per_record_us("seaway"), c.cpu_per_record_us("kafka")
        cpu = f"{cs:.2f} / {ck:.2f}" if cs is not None and ck is not None else ""
        line = f"{c.name:<46} {fmt(s)[:14]:>14} {fmt(k)[:14]:>14}  {ratio:>8.2f}  {spread:>11}   {cpu:<14}"
        for o in others:
            b = c.best(o)
            rr = c.round_ratios(o)
            if b is not None:
                line += f"   {fmt(b)[:14]}, {min(rr):.2f}-{max(rr):.2f}" if rr else f"   {fmt(b)[:14]}"
        print(line + ("" if c.higher_is_better else "  (lower is better)"))


def machine() -> str:
    java = subprocess.run(["java", "-version"], capture_output=True, text=True, check=False).stderr.splitlines()
    return (f"{os.cpu_count()} cores, {os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30:.0f} GiB, "
            f"load avg {os.getloadavg()[0]:.2f}; Apache Kafka {kafka_version()} on {java[0] if java else 'java'}; "
            f"Python {platform.python_version()}; librdkafka {librdkafka_version()[0]}")


def start_brokers(folder: Path, material: Material, extra: list[str]) -> tuple[list[Side], list[Any]]:
    """Kafka and Seaway (and any ``--extra-seaway`` variants), each with PLAINTEXT and SSL listeners."""
    kafka_ssl = free_port()
    kafka = KafkaBroker(folder / "kafka", BROKER_SETTINGS)
    kafka.props.update({
        "listeners": f"{kafka.props['listeners']},SSL://127.0.0.1:{kafka_ssl}",
        "advertised.listeners": f"{kafka.props['advertised.listeners']},SSL://127.0.0.1:{kafka_ssl}",
        "listener.security.protocol.map": f"{kafka.props['listener.security.protocol.map']},SSL:SSL",
        "ssl.keystore.type": "PEM", "ssl.keystore.location": str(material.server_pem),
    })
    kafka.start()
    sides = [Side("kafka", kafka.bootstrap, kafka.pid, f"127.0.0.1:{kafka_ssl}")]
    processes: list[Any] = [kafka]
    tls = {"listeners": "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0", "ssl.keystore.type": "PEM",
           "ssl.keystore.location": str(material.server_pem)}
    for name, override in [("seaway", None), *((f"seaway[{e}]", e) for e in extra)]:
        settings = {**BROKER_SETTINGS, **tls}
        if override is not None:
            key, _, value = override.partition("=")
            settings[key] = value
        broker = BrokerProcess(folder / name.replace("[", "-").replace("]", "").replace("=", "-"), settings).start()
        processes.append(broker)
        assert broker.proc is not None
        ready = [line for line in broker.output if line.startswith("seaway broker ready on ")][-1]
        plain, ssl_address = ready.rsplit(" ", 1)[1].strip().split(",")
        side = Side(name, plain, broker.proc.pid, ssl_address)
        sides.insert(len(sides) - 1 if name == "seaway" else len(sides), side)
    return sides, processes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small volumes, one round (a few minutes)")
    parser.add_argument("--repeat", type=int, default=None, help="rounds (default 3, quick 1)")
    parser.add_argument("--skip", choices=["broker", "connect"], action="append", default=[])
    parser.add_argument("--cases", default=",".join(CASE_GROUPS),
                        help=f"broker case groups, comma-separated (default all: {','.join(CASE_GROUPS)})")
    parser.add_argument("--extra-seaway", action="append", default=[], metavar="KEY=VALUE",
                        help="also run a Seaway broker with this override (repeatable)")
    args = parser.parse_args()
    args.repeat = args.repeat or (1 if args.quick else 3)
    args.cases = [c.strip() for c in args.cases.split(",") if c.strip()]
    unknown = set(args.cases) - set(CASE_GROUPS)
    if unknown:
        parser.error(f"unknown case groups {sorted(unknown)}; choose from {', '.join(CASE_GROUPS)}")
    ensure_jars()
    print(machine(), flush=True)
    folder = Path(tempfile.mkdtemp(prefix="seaway-bench-peer-"))
    material = make_material(folder / "tls")
    sides, processes = start_brokers(folder, material, args.extra_seaway)
    kafka = processes[0]
    start_cpu = {s.name: s.stats().cpu_seconds for s in sides}
    try:
        broker_cases = [] if "broker" in args.skip else run_brokers(args, sides, material, folder)
        memory = {s.name: s.stats() for s in sides}
        connect_cases, worker_memory = ([], {}) if "connect" in args.skip else run_connect(args, kafka, folder)
    finally:
        for process in processes[1:]:
            process.stop()
        kafka.stop()
        shutil.rmtree(folder, ignore_errors=True)  # the brokers' data: gigabytes after a full run
    print(f"\n{machine()}")
    if broker_cases:
        names = [s.name for s in sides]
        print_table("Brokers (best of each side; per-round ratios; rates: higher is better)", broker_cases, names)
        for line in tls_costs(broker_cases, names):
            print(line)
        s, k = memory["seaway"], memory["kafka"]
        peak = s.peak_rss_bytes / k.peak_rss_bytes
        print(f"{'broker RSS now / peak (MiB)':<46} {s.rss_bytes / MIB:>6.0f} / {s.peak_rss_bytes / MIB:<5.0f} "
              f"{k.rss_bytes / MIB:>6.0f} / {k.peak_rss_bytes / MIB:<5.0f}  {peak:>8.2f} (peak; target <= 0.25)")
        print(f"{'broker CPU s, whole broker run':<46} {s.cpu_seconds - start_cpu['seaway']:>14.1f} "
              f"{k.cpu_seconds - start_cpu['kafka']:>14.1f}")
    if connect_cases:
        print_table("Connect workers on the Apache Kafka broker (worker cpu during source+sink)", connect_cases)
        for name, text in worker_memory.items():
            print(f"{name} worker: {text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
