"""MirrorMaker 2 (MirrorSourceConnector on a Connect worker) vs a hand-written consume -> produce loop.

Run from the repository root::

    .venv/bin/python bench/mirror.py [--quick] [--records N] [--repeat R] [--lag-seconds S]

Two Seaway brokers (processes A and B) and one ``seaway connect distributed`` worker bound to
B, for each record size (100 B and 1 KiB values, 8-16 byte keys, one header, 6 partitions):

- ``hand``: a confluent-kafka loop in this process assigned to the 6 partitions of a topic on A
  that ``consume(2000)``\\s and ``produce()``\\s each record to the same partition of a topic on
  B with its key, value, headers and timestamp, serving delivery reports with ``poll(0)`` per
  batch. Its producer has the settings the worker gives a source task (acks=all,
  max.in.flight 1, linger.ms 5), so both sides ask the same of broker B.
- ``mirror``: a MirrorSourceConnector (``tasks.max=1``: one thread, as the loop) copying a
  topic of the same records from A to B, offset syncs and offset commits included.

Both copy a preloaded topic of ``--records`` records; an observer polls B's end offsets and
times from the first record there to the last (so neither side's start-up counts). Runs are
interleaved and repeated; the ratio is mirror / hand of the same round. Beside the rates it
prints CPU microseconds per record (the worker process; this process for the hand loop) and
the load average, because the machine is shared.

Then the lag: a producer writes 10,000 records/s to A for ``--lag-seconds`` with each record's
timestamp its send time; a consumer on B reads the mirrored topic and records, per record,
receive time - timestamp (end to end: produce, A, mirror, B, fetch). The same measured on A
directly gives the part that is not the mirror's. Targets (issue 19): mirror >= 0.8 of the hand
loop, lag p99 <= 100 ms at 10k records/s. Exits 0 when met, 1 otherwise.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402
from confluent_kafka import Consumer, Producer, TopicPartition  # noqa: E402
from seaway.kafka_clients import STREAMING_CONSUMER  # noqa: E402

from bench._common import cpu_seconds, create_topic, delete_topic, start_broker  # noqa: E402
from tests.connect.distributed.dist_support import (  # noqa: E402
    WorkerProcess,
    free_port,
    wait_for,
    worker_properties,
)

PARTITIONS = 6
SIZES = (100, 1024)
PRODUCER_PROPS = {"acks": "all", "max.in.flight.requests.per.connection": "1", "enable.idempotence": "false",
                  "linger.ms": "5"}  # what the worker gives a source task's producer
LAG_RATE = 10_000
TIMEOUT = 300.0


def preload(bootstrap: str, topic: str, records: int, size: int) -> None:
    """``records`` records on 6 partitions: 8-16 byte keys, ``size``-byte values, one header, timestamps."""
    create_topic(bootstrap, topic, PARTITIONS)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, "batch.num.messages": 10_000,
                         "queue.buffering.max.messages": 1_000_000, "queue.buffering.max.kbytes": 1_048_576})
    payload = os.urandom(size)
    now = int(time.time() * 1000)
    for i in range(records):
        while True:
            try:
                producer.produce(topic, payload, f"key-{i:010d}"[: 8 + i % 9].encode(), i % PARTITIONS,
                                 None, None, now + i, [("trace", b"0123456789")])
                break
            except BufferError:
                producer.poll(0.01)
        if i % 10_000 == 0:
            producer.poll(0)
    if producer.flush(120):
        raise RuntimeError("preload: records not delivered")


def end_offsets(bootstrap: str, topic: str) -> Callable[[], int]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"bench-watch-{uuid.uuid4().hex}"})
    partitions = [TopicPartition(topic, p) for p in range(PARTITIONS)]

    def total() -> int:
        try:
            return sum(int(consumer.get_watermark_offsets(tp, timeout=5, cached=False)[1]) for tp in partitions)
        except Exception:
            return 0  # not created yet

    return total


def observe(progress: Callable[[], int], total: int, stop: threading.Event | None = None) -> float:
    """Records/s from the first record seen to ``total``."""
    deadline = time.monotonic() + TIMEOUT
    first_t, first_n = 0.0, 0
    while time.monotonic() < deadline and not (stop is not None and stop.is_set()):
        n = progress()
        now = time.perf_counter()
        if n and not first_t:
            first_t, first_n = now, n
        if n >= total:
            if n - first_n <= 0 or now <= first_t:
                raise RuntimeError("too few records to time: use more --records")
            return (n - first_n) / (now - first_t)
        time.sleep(0.005)
    raise TimeoutError(f"only {progress()} of {total} records after {TIMEOUT} s")


def hand_loop(source: str, target: str, topic: str, out_topic: str, total: int, done: threading.Event) -> None:
    # The mirror task's own consumer settings (no 1 s pause on a full prefetch queue), so the
    # ratio compares the copy, not librdkafka's backoff.
    consumer = Consumer({"bootstrap.servers": source, "group.id": f"bench-hand-{uuid.uuid4().hex}",
                         "enable.auto.commit": False, **STREAMING_CONSUMER})
    consumer.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
    producer = Producer({"bootstrap.servers": target, **PRODUCER_PROPS})
    errors: list[object] = []

    def report(err: object, _msg: object) -> None:
        if err is not None:
            errors.append(err)

    produce, poll = producer.produce, producer.poll
    seen = 0
    try:
        while seen < total and not done.is_set():
            messages = consumer.consume(2000, 0.1)
            for m in messages:
                value, key, partition, timestamp, headers = m.value(), m.key(), m.partition() or 0, m.timestamp()[1], \
                    m.headers()
                while True:
                    try:
                        produce(out_topic, value, key, partition, report, None, timestamp, headers)
                        break
                    except BufferError:
                        poll(0.01)
            seen += len(messages)
            poll(0)
        if producer.flush(120) or errors:
            raise RuntimeError(f"hand loop: {len(errors)} delivery errors")
    finally:
        consumer.close()


def run_hand(a: str, b: str, topic: str, records: int) -> tuple[float, float]:
    out_topic = f"hand-{topic}"
    create_topic(b, out_topic, PARTITIONS)
    done = threading.Event()
    cpu0 = time.process_time()
    thread = threading.Thread(target=hand_loop, args=(a, b, topic, out_topic, records, done), daemon=True)
    thread.start()
    try:
        rate = observe(end_offsets(b, out_topic), records)
    finally:
        done.set()
        thread.join(60)
    cpu = time.process_time() - cpu0
    delete_topic(b, out_topic)
    return rate, cpu / records * 1e6


def put_connector(worker: WorkerProcess, name: str, config: dict[str, str]) -> None:
    def put() -> httpx.Response | None:
        reply = worker.request("PUT", f"/connectors/{name}/config", json=config)
        if reply.status_code == 400:
            raise RuntimeError(reply.text)
        return reply if reply.status_code < 300 else None

    wait_for(put, 60, 0.3, f"PUT {name}")


def mirror_config(a: str, b: str, topic: str) -> dict[str, str]:
    return {"connector.class": "org.apache.kafka.connect.mirror.MirrorSourceConnector",
            "source.cluster.alias": "A", "target.cluster.alias": "B", "source.cluster.bootstrap.servers": a,
            "target.cluster.bootstrap.servers": b, "topics": topic, "tasks.max": "1", "replication.factor": "1",
            "offset-syncs.topic.replication.factor": "1", "sync.topic.acls.enabled": "false"}


def run_mirror(worker: WorkerProcess, a: str, b: str, topic: str, records: int) -> tuple[float, float]:
    assert worker.proc is not None
    name = f"mirror-{topic}"
    cpu0 = cpu_seconds(worker.proc.pid)
    put_connector(worker, name, mirror_config(a, b, topic))
    rate = observe(end_offsets(b, f"A.{topic}"), records)
    cpu = cpu_seconds(worker.proc.pid) - cpu0
    worker.request("DELETE", f"/connectors/{name}")
    delete_topic(b, f"A.{topic}")
    return rate, cpu / records * 1e6


def measure_lag(producer_bootstrap: str, consumer_bootstrap: str, topic: str, read_topic: str,
                seconds: float) -> list[float]:
    """Lags (ms) of records written at ``LAG_RATE`` to ``topic`` and read from ``read_topic``."""
    consumer = Consumer({"bootstrap.servers": consumer_bootstrap, "group.id": f"bench-lag-{uuid.uuid4().hex}",
                         "auto.offset.reset": "earliest", "fetch.wait.max.ms": 10, "enable.auto.commit": False})
    lags: list[float] = []
    stop = threading.Event()
    expected = int(LAG_RATE * seconds)
    since = time.time() * 1000  # records from before (a warm-up) are not counted

    def read() -> None:
        wait_for(lambda: _exists(consumer, read_topic), 60, 0.1, read_topic)
        consumer.assign([TopicPartition(read_topic, p, 0) for p in range(PARTITIONS)])
        while len(lags) < expected and not stop.is_set():
            lags.extend(time.time() * 1000 - m.timestamp()[1] for m in consumer.consume(1000, 0.05)
                        if m.error() is None and m.timestamp()[1] >= since)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    producer = Producer({"bootstrap.servers": producer_bootstrap, "linger.ms": 1})
    tick, per_tick = 0.01, LAG_RATE // 100
    start = time.monotonic()
    for i in range(int(seconds / tick)):
        wake = start + i * tick
        delay = wake - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        now = int(time.time() * 1000)
        for j in range(per_tick):
            producer.produce(topic, b"x" * 100, None, (i * per_tick + j) % PARTITIONS, None, None, now)
        producer.poll(0)
    producer.flush(30)
    reader.join(60)
    stop.set()
    consumer.close()
    return lags


def _exists(consumer: Consumer, topic: str) -> bool:
    return topic in consumer.list_topics(timeout=5).topics


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))] if ordered else float("nan")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer records, one repeat")
    parser.add_argument("--records", type=int, default=300_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--lag-seconds", type=float, default=10.0)
    args = parser.parse_args()
    records, repeat = (100_000, 1) if args.quick else (args.records, args.repeat)
    ok = True
    with tempfile.TemporaryDirectory(prefix="bench-mirror-") as tmp:
        # the group settings the worker's short session timeout needs (as the tests' brokers)
        a = start_broker(Path(tmp) / "a", group_initial_rebalance_delay_ms="0", group_min_session_timeout_ms="1000")
        b = start_broker(Path(tmp) / "b", group_initial_rebalance_delay_ms="0", group_min_session_timeout_ms="1000")
        worker = WorkerProcess(Path(tmp) / "worker", worker_properties(b.bootstrap, free_port(), "bench-mirror"))
        try:
            worker.start()
            print(f"load average at start: {os.getloadavg()[0]:.2f}")
            for size in SIZES:
                ratios, hands, mirrors = [], [], []
                for r in range(repeat):
                    topic = f"bench-{size}-{r}-{uuid.uuid4().hex[:6]}"
                    preload(a.bootstrap, topic, records, size)
                    order = ("hand", "mirror") if r % 2 == 0 else ("mirror", "hand")
                    result: dict[str, tuple[float, float]] = {}
                    for side in order:
                        load = os.getloadavg()[0]
                        result[side] = (run_hand(a.bootstrap, b.bootstrap, topic, records) if side == "hand"
                                        else run_mirror(worker, a.bootstrap, b.bootstrap, topic, records))
                        print(f"  {size:>5} B round {r + 1}: {side:<6} {result[side][0]:>10,.0f} rec/s "
                              f"{result[side][0] * (size + 40) / 2**20:7.1f} MiB/s  "
                              f"{result[side][1]:6.1f} us CPU/record  (load {load:.2f})")
                    delete_topic(a.bootstrap, topic)
                    hands.append(result["hand"][0])
                    mirrors.append(result["mirror"][0])
                    ratios.append(result["mirror"][0] / result["hand"][0])
                median = statistics.median(ratios)
                print(f"{size:>5} B: hand {min(hands):,.0f}-{max(hands):,.0f} rec/s, mirror {min(mirrors):,.0f}-"
                      f"{max(mirrors):,.0f} rec/s, ratio {min(ratios):.2f}-{max(ratios):.2f} "
                      f"(median {median:.2f}; target >= 0.8)")
                ok = ok and median >= 0.8
            lag_topic = f"bench-lag-{uuid.uuid4().hex[:6]}"
            create_topic(a.bootstrap, lag_topic, PARTITIONS)
            put_connector(worker, "mirror-lag", mirror_config(a.bootstrap, b.bootstrap, lag_topic))
            warm = Producer({"bootstrap.servers": a.bootstrap})
            for p in range(PARTITIONS):
                warm.produce(lag_topic, b"warm-up", None, p)
            warm.flush(30)
            wait_for(lambda: end_offsets(b.bootstrap, f"A.{lag_topic}")() >= PARTITIONS, 60, 0.1, "mirror running")
            load = os.getloadavg()[0]
            mirrored = measure_lag(a.bootstrap, b.bootstrap, lag_topic, f"A.{lag_topic}", args.lag_seconds)
            direct_topic = f"bench-direct-{uuid.uuid4().hex[:6]}"
            create_topic(a.bootstrap, direct_topic, PARTITIONS)
            direct = measure_lag(a.bootstrap, a.bootstrap, direct_topic, direct_topic, args.lag_seconds / 2)
            p50, p99 = pct(mirrored, 0.5), pct(mirrored, 0.99)
            print(f"lag at {LAG_RATE:,} rec/s (load {load:.2f}): A -> mirror -> B p50 {p50:.1f} ms, p99 {p99:.1f} ms, "
                  f"max {max(mirrored):.1f} ms ({len(mirrored):,} records); on A alone p50 "
                  f"{pct(direct, 0.5):.1f} ms, p99 {pct(direct, 0.99):.1f} ms (target p99 <= 100 ms)")
            ok = ok and p99 <= 100
            print(f"load average at end: {os.getloadavg()[0]:.2f}")
        finally:
            worker.stop()
            a.stop()
            b.stop()
    print("targets met" if ok else "targets NOT met")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
