"""Exactly-once FileStreamSource vs at-least-once, on distributed workers and Seaway's broker.

Run from the repository root::

    .venv/bin/python bench/eos_source.py [--quick] [--lines N] [--repeat R] [--broker seaway|kafka]

The worker half of issue 20's benchmark (the broker halves are ``bench/transactions.py``).
Two ``seaway connect distributed`` workers run side by side on one broker, each its own
cluster: one with ``exactly.once.source.support=enabled``, one with it disabled. Each round,
a FileStreamSource (1 task, StringConverter) reads the same file of 100-byte lines (default
1,000,000; ``--quick``: 200,000) into a fresh 1-partition topic:

* ``alo``: at-least-once, Kafka's default ``batch.size`` (2,000 lines per poll); timed by the
  topic's high watermark (every record acknowledged);
* ``poll``: exactly-once, ``transaction.boundary=poll`` (the default): one transaction per
  poll, i.e. 2,000 records and their offset;
* ``interval``: exactly-once, a transaction every 200 ms (``transaction.boundary=interval``,
  ``transaction.boundary.interval.ms=200``); records become visible only at a commit, so a run
  of a few seconds also counts the last transaction's wait for its tick;
* ``alo-10k`` and ``poll-10k``: the same two with ``batch.size=10000`` (10,000-record
  transactions), to show what the transaction size does.

Exactly-once runs are timed by the file position in the connector's offset, read from the
offsets topic with ``read_committed``: when it reaches the file's size, the last
transaction (records and offset together) has committed and every line is visible to
read_committed consumers. Each run is timed from its first progress to the last, so the
rebalances that start a connector do not count against either side. The ratio (target >=
0.7) is exactly-once / at-least-once records/s, per round; rounds are interleaved, and the
range, the median and the load average before and after are printed (the machine is
shared). Every run's topic is checked to hold each line once, in order. Exits 0 when the
median poll-boundary ratio meets the target.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from confluent_kafka import Consumer, TopicPartition  # noqa: E402
from seaway.connect.runtime.murmur2 import partition_for  # noqa: E402

from tests.connect.distributed.dist_support import BROKER_OVERRIDES, WorkerProcess, wait_settled  # noqa: E402
from tests.connect.exactly_once.eos_support import (  # noqa: E402
    create_internal_topics,
    create_topic,
    eos_worker_props,
    read_values,
)

LINE = 100  # bytes per line, without its newline
MODES = {"alo": "at-least-once (batch.size 2,000)", "poll": "exactly-once, poll (2,000/txn)",
         "interval": "exactly-once, interval 200 ms", "alo-10k": "at-least-once (batch.size 10,000)",
         "poll-10k": "exactly-once, poll (10,000/txn)"}
TARGET = 0.7
TIMEOUT = 600.0


def make_input(path: Path, lines: int) -> None:
    with path.open("wb") as f:
        for start in range(0, lines, 100_000):
            f.write(b"".join(f"{i:0{LINE}d}\n".encode() for i in range(start, min(lines, start + 100_000))))


def _consumer(bootstrap: str) -> Consumer:
    return Consumer({"bootstrap.servers": bootstrap, "group.id": f"bench-{uuid.uuid4().hex[:6]}",
                     "isolation.level": "read_committed", "enable.auto.commit": False, "fetch.wait.max.ms": 10})


def watermark_progress(bootstrap: str, topic: str) -> tuple[Callable[[], int], Callable[[], None]]:
    """Records acknowledged so far (the topic's high watermark; no transactions on this topic)."""
    consumer = _consumer(bootstrap)
    tp = TopicPartition(topic, 0)
    return (lambda: int(consumer.get_watermark_offsets(tp, timeout=5, cached=False)[1])), consumer.close


def offset_progress(bootstrap: str, offsets_topic: str, partitions: int, connector: str,
                    source: Path) -> tuple[Callable[[], int], Callable[[], None]]:
    """Lines committed so far: the connector's last committed offset (position / line size)."""
    key = json.dumps([connector, {"filename": str(source)}], sort_keys=True, separators=(",", ":")).encode()
    consumer = _consumer(bootstrap)
    consumer.assign([TopicPartition(offsets_topic, partition_for(key, partitions), 0)])
    last = [0]

    def progress() -> int:
        for message in consumer.consume(1000, 0.005):
            value = message.value()
            if message.error() is None and message.key() == key and value:
                last[0] = int(json.loads(value)["position"]) // (LINE + 1)
        return last[0]

    return progress, consumer.close


def observe(progress: Callable[[], int], total: int) -> tuple[float, int]:
    """Poll ``progress`` until ``total``; (seconds from first progress to the end, records in that time)."""
    deadline = time.monotonic() + TIMEOUT
    first: tuple[float, int] | None = None
    while time.monotonic() < deadline:
        done = progress()
        now = time.monotonic()
        if done and first is None:
            first = (now, done)
        if done >= total:
            assert first is not None
            return max(now - first[0], 1e-6), total - first[1]
        time.sleep(0.01)
    raise TimeoutError(f"not done within {TIMEOUT}s")


def run(worker: WorkerProcess, bootstrap: str, source: Path, lines: int, mode: str) -> float:
    """One connector run on ``worker``; records/s. ``mode``: see the module docstring."""
    name = f"bench-{mode}-{uuid.uuid4().hex[:6]}"
    topic = f"{name}-out"
    create_topic(bootstrap, topic)
    config = {"connector.class": "FileStreamSource", "file": str(source), "topic": topic, "tasks.max": "1"}
    if mode == "interval":
        config.update({"transaction.boundary": "interval", "transaction.boundary.interval.ms": "200"})
    if mode.endswith("-10k"):
        config["batch.size"] = "10000"
    if mode.startswith("alo"):
        progress, close = watermark_progress(bootstrap, topic)
    else:
        progress, close = offset_progress(bootstrap, worker.props["offset.storage.topic"],
                                          int(worker.props["offset.storage.partitions"]), name, source)
    try:
        reply = worker.request("PUT", f"/connectors/{name}/config", json=config)
        assert reply.status_code == 201, reply.text
        seconds, records = observe(progress, lines)
    finally:
        close()
    assert worker.request("DELETE", f"/connectors/{name}").status_code == 204
    values = read_values(bootstrap, topic, timeout=300)
    assert len(values) == lines and values[0] == b"0" * LINE and values[-1] == f"{lines - 1:0{LINE}d}".encode(), \
        f"{mode}: {len(values)} records for {lines} lines"
    return records / seconds


@contextmanager
def broker_of(kind: str, directory: Path) -> Iterator[str]:
    if kind == "seaway":
        from tests.support.broker import BrokerProcess

        with BrokerProcess(directory, BROKER_OVERRIDES) as seaway:
            yield seaway.bootstrap
    else:
        from tests.peer.apache_kafka import KafkaBroker
        from tests.peer.jars import ensure_jars

        ensure_jars()
        with KafkaBroker(directory, BROKER_OVERRIDES) as kafka:
            yield kafka.bootstrap


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="200,000 lines, 2 rounds")
    parser.add_argument("--lines", type=int, default=None)
    parser.add_argument("--repeat", type=int, default=None)
    parser.add_argument("--broker", choices=("seaway", "kafka"), default="seaway")
    args = parser.parse_args()
    lines = args.lines or (200_000 if args.quick else 1_000_000)
    repeat = args.repeat or (2 if args.quick else 3)
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in [str(ROOT), os.environ.get("PYTHONPATH")] if p)
    print(f"load average before: {load()}", flush=True)
    with tempfile.TemporaryDirectory(prefix="seaway-bench-eos-") as tmp_name:
        tmp = Path(tmp_name)
        source = tmp / "input.txt"
        make_input(source, lines)
        with broker_of(args.broker, tmp / "broker") as bootstrap:
            workers = {}
            for label, support in (("eos", "enabled"), ("alo", "disabled")):
                props = eos_worker_props(bootstrap, f"bench-{label}-{uuid.uuid4().hex[:6]}",
                                         **{"exactly.once.source.support": support,
                                            "offset.flush.interval.ms": "1000"})
                if args.broker == "kafka":
                    create_internal_topics(bootstrap, props)
                workers[label] = WorkerProcess(tmp / label, props).start()
            try:
                for w in workers.values():
                    wait_settled([w])
                rates: dict[str, list[float]] = {mode: [] for mode in MODES}
                orders = (("alo", "poll", "alo", "interval", "alo-10k", "poll-10k"),
                          ("poll", "alo", "interval", "alo", "poll-10k", "alo-10k"))
                for rnd in range(repeat):
                    for mode in orders[rnd % 2]:
                        rate = run(workers["alo" if mode.startswith("alo") else "eos"], bootstrap, source, lines,
                                   mode)
                        rates[mode].append(rate)
                        print(f"round {rnd + 1} {mode:>8}: {rate:>10,.0f} records/s  (load {load()})", flush=True)
            finally:
                threads = [threading.Thread(target=w.stop) for w in workers.values()]
                for t in threads:
                    t.start()
                for t in threads:
                    t.join()
    print(f"\n{lines:,} lines of {LINE} bytes, {repeat} rounds, broker {args.broker}, records/s (min / median / max)")
    for mode, label in MODES.items():
        r = rates[mode]
        print(f"  {label:<36} {min(r):>10,.0f} {statistics.median(r):>10,.0f} {max(r):>10,.0f}")
    ok = True
    for mode, baseline, per_round in (("poll", "alo", 2), ("interval", "alo", 2), ("poll-10k", "alo-10k", 1)):
        # each exactly-once run against the at-least-once run(s) of its own round
        base = rates[baseline]
        ratios = [rates[mode][i] / statistics.mean(base[per_round * i:per_round * (i + 1)]) for i in range(repeat)]
        median = statistics.median(ratios)
        print(f"  ratio {mode:<9} / {baseline:<8}: {' '.join(f'{x:.2f}' for x in ratios)}  median {median:.2f}"
              f"  (target >= {TARGET})")
        ok = ok and (mode != "poll" or median >= TARGET)
    print(f"load average after: {load()}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
