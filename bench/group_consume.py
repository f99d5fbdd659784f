"""Consumer-group consumption against the same consumers with manual assignment.

Run from the repository root::

    .venv/bin/python bench/group_consume.py [--records N] [--seconds S]

Two phases, one broker:

1. Throughput. ``--records`` 100-byte records are preloaded into a 6-partition topic
   (prebuilt Produce frames, see _common.py). Then three confluent-kafka consumer
   processes read them all twice, each run on a fresh group id: once as a consumer
   group (``subscribe``: JoinGroup/SyncGroup, heartbeats, auto-commit), once with
   ``assign()`` of two partitions each (the baseline: no group membership, same
   auto-commit). Figures are records/s from the first record any process received to
   the moment all were received; "incl. join" counts from process start. The ratio is
   group / assign (target >= 0.9).
2. End-to-end latency. A 3-member group on a fresh 6-partition topic; once everyone has
   its partitions, one producer (acks=1, linger.ms=0) sends timestamped records at 1k
   and then 10k records/s for ``--seconds``; p50/p99 of receive time - produce() time
   (target p99 <= 10 ms at 1k records/s). ``--repeat`` runs the whole latency phase
   several times and prints every run, then the median p99 per rate.

Everything (broker, 3 consumers, producer) shares this machine's cores, so absolute
figures are noisy; the group/assign ratio is measured in the same run for that reason.
For latency, each run also prints ``wake-up delay``: p50/p99/max of how late an idle
probe process wakes from a 1 ms sleep during the measurement. That is the scheduling
delay every process (broker, consumers, producer) is exposed to at each hop, with no
Kafka work at all: when its p99 is several ms, so is the end-to-end tail.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import struct
import sys
import tempfile
import time
from multiprocessing.sharedctypes import Synchronized
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import build_produce_frames, create_topic, replay, start_broker

PARTITIONS = 6
MEMBERS = 3
_TS = struct.Struct(">q")


def _consumer_conf(bootstrap: str, group: str) -> dict[str, Any]:
    return {
        "bootstrap.servers": bootstrap,
        "group.id": group,
        "auto.offset.reset": "earliest",
        "enable.auto.commit": True,
        "session.timeout.ms": 10000,
        "fetch.wait.max.ms": 100,
    }


def _throughput_member(bootstrap: str, topic: str, group: str, index: int, mode: str, total: int,
                       done: Synchronized, start: Any, out: Any) -> None:  # type: ignore[type-arg]
    from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

    c = Consumer(_consumer_conf(bootstrap, group))
    start.wait()  # every process is up before anyone subscribes or assigns
    started = time.perf_counter()
    if mode == "group":
        c.subscribe([topic])
    else:
        parts = range(index * PARTITIONS // MEMBERS, (index + 1) * PARTITIONS // MEMBERS)
        c.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in parts])
    first = last = 0.0
    count = 0
    while done.value < total:
        msgs = c.consume(num_messages=10000, timeout=0.2)
        n = sum(1 for m in msgs if m.error() is None)
        if n:
            now = time.perf_counter()
            first = first or now
            last = now
            count += n
            with done.get_lock():
                done.value += n
    c.close()
    out.put((started, first, last, count))


def run_throughput(bootstrap: str, topic: str, mode: str, total: int) -> tuple[float, float]:
    ctx = mp.get_context("spawn")
    done = ctx.Value("q", 0)
    out = ctx.Queue()
    start = ctx.Barrier(MEMBERS)
    group = f"bench-{mode}-{time.time_ns()}"
    procs = [ctx.Process(target=_throughput_member, args=(bootstrap, topic, group, i, mode, total, done, start, out))
             for i in range(MEMBERS)]
    for p in procs:
        p.start()
    results = [out.get(timeout=300) for _ in procs]
    for p in procs:
        p.join()
    consumed = sum(r[3] for r in results)
    if consumed < total:
        raise RuntimeError(f"{mode}: consumed {consumed} of {total}")
    start = min(r[0] for r in results)
    first = min(r[1] for r in results if r[1])
    last = max(r[2] for r in results)
    return total / (last - first), total / (last - start)


def _latency_member(bootstrap: str, topic: str, group: str, ready: Any, stop: Any, out: Any) -> None:
    from confluent_kafka import Consumer

    c = Consumer(_consumer_conf(bootstrap, group))
    owned: set[int] = set()
    c.subscribe([topic], on_assign=lambda _c, ps: owned.update(p.partition for p in ps))
    latencies: list[int] = []
    signalled = False
    while not stop.is_set():
        m = c.poll(0.05)  # returns as soon as one record is there (consume() would wait to fill a batch)
        if m is not None and m.error() is None:
            value = m.value()
            if value is not None:
                latencies.append(time.time_ns() - _TS.unpack_from(value)[0])
        if owned and not signalled:
            ready.put(len(owned))
            signalled = True
    c.close()
    out.put(latencies)


def _wakeup_probe(stop: Any, out: Any) -> None:
    """Sleep 1 ms in a loop; report how late each wake-up was (ns), until ``stop``."""
    delays: list[int] = []
    while not stop.is_set():
        t = time.perf_counter_ns()
        time.sleep(0.001)
        delays.append(time.perf_counter_ns() - t - 1_000_000)
    out.put(delays)


def _percentiles_ms(values_ns: list[int]) -> tuple[float, float, float]:
    ordered = sorted(values_ns)
    if not ordered:
        return (0.0, 0.0, 0.0)
    return (ordered[len(ordered) // 2] / 1e6, ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] / 1e6,
            ordered[-1] / 1e6)


def run_latency(bootstrap: str, rates: list[int], seconds: float, linger_ms: float
                ) -> dict[int, tuple[float, float, int, tuple[float, float, float]]]:
    from confluent_kafka import Producer

    ctx = mp.get_context("spawn")
    results: dict[int, tuple[float, float, int, tuple[float, float, float]]] = {}
    for rate in rates:
        topic = f"bench-latency-{rate}-{time.time_ns()}"
        create_topic(bootstrap, topic, PARTITIONS)
        ready, out, stop = ctx.Queue(), ctx.Queue(), ctx.Event()
        group = f"bench-lat-{rate}-{time.time_ns()}"
        procs = [ctx.Process(target=_latency_member, args=(bootstrap, topic, group, ready, stop, out))
                 for _ in range(MEMBERS)]
        for p in procs:
            p.start()
        for _ in procs:
            ready.get(timeout=60)
        time.sleep(1.5)  # let any follow-up rebalance settle before measuring
        producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": linger_ms, "acks": 1})
        probe_stop, probe_out = ctx.Event(), ctx.Queue()
        probe = ctx.Process(target=_wakeup_probe, args=(probe_stop, probe_out))
        probe.start()
        interval = 1.0 / rate
        sent = 0
        t0 = time.perf_counter()
        while (elapsed := time.perf_counter() - t0) < seconds:
            due = int(elapsed / interval) + 1
            while sent < due:
                producer.produce(topic, value=_TS.pack(time.time_ns()) + b"x" * 92, partition=sent % PARTITIONS)
                sent += 1
            producer.poll(0)
            time.sleep(min(interval, 0.001))
        producer.flush(10)
        probe_stop.set()
        wakeups = _percentiles_ms(probe_out.get(timeout=60))
        probe.join()
        time.sleep(0.5)
        stop.set()
        latencies = sorted(lat for _ in procs for lat in out.get(timeout=60))
        for p in procs:
            p.join()
        if not latencies:
            raise RuntimeError("no record was consumed")
        p50 = latencies[len(latencies) // 2] / 1e6
        p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))] / 1e6
        results[rate] = (p50, p99, len(latencies), wakeups)
        if len(latencies) < sent:
            print(f"  warning: {rate}/s: consumed {len(latencies)} of {sent}")
    return results


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--records", type=int, default=600_000)
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--linger-ms", type=float, default=0.0, help="producer linger.ms in the latency phase")
    ap.add_argument("--phase", choices=("all", "throughput", "latency"), default="all")
    ap.add_argument("--repeat", type=int, default=1, help="latency phase runs (each printed)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="seaway-bench-groups-") as tmp:
        broker = start_broker(Path(tmp), group_initial_rebalance_delay_ms="500", offsets_topic_num_partitions="10")
        try:
            if args.phase in ("all", "throughput"):
                throughput_phase(broker, args.records)
            if args.phase in ("all", "latency"):
                print(f"end-to-end latency (produce() -> consumer), 3-member group, linger.ms={args.linger_ms:g}, "
                      f"{args.seconds:.0f}s per rate:")
                p99s: dict[int, list[float]] = {}
                for run in range(args.repeat):
                    results = run_latency(broker.bootstrap, [1000, 10000], args.seconds, args.linger_ms)
                    for rate, (p50, p99, n, (w50, w99, wmax)) in results.items():
                        p99s.setdefault(rate, []).append(p99)
                        print(f"  run {run + 1}: {rate:>6}/s  p50 {p50:6.2f} ms  p99 {p99:6.2f} ms  ({n:,} records)"
                              f"   wake-up delay p50 {w50:.2f} p99 {w99:.2f} max {wmax:.1f} ms")
                if args.repeat > 1:
                    for rate, values in p99s.items():
                        ordered = sorted(values)
                        print(f"  {rate:>6}/s  median p99 {ordered[len(ordered) // 2]:6.2f} ms over {len(values)} runs"
                              f" (all: {', '.join(f'{v:.1f}' for v in values)})")
        finally:
            broker.stop()
    return 0


def throughput_phase(broker: Any, records: int) -> None:
    topic = "bench-groups"
    create_topic(broker.bootstrap, topic, PARTITIONS)
    frames, per_request = build_produce_frames(topic, PARTITIONS, 100, 3000)
    requests = max(1, records // per_request)
    replay(broker.port, frames, requests)
    total = requests * per_request
    print(f"throughput: {total:,} records of 100 bytes, {PARTITIONS} partitions, {MEMBERS} consumer processes")
    figures = {}
    for mode in ("assign", "group"):
        steady, with_join = run_throughput(broker.bootstrap, topic, mode, total)
        figures[mode] = steady
        print(f"  {mode:<6} {steady:>12,.0f} rec/s   ({with_join:,.0f} rec/s incl. startup and join)")
    print(f"  ratio group/assign: {figures['group'] / figures['assign']:.2f} (target >= 0.9)")


if __name__ == "__main__":
    sys.exit(main())
