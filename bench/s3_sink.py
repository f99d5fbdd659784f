"""The S3 sink's landing rate against a hand-written consume -> pyarrow -> boto3 put_object loop.

Run from the repository root::

    .venv/bin/python bench/s3_sink.py [--records N] [--flush-size F] [--tasks T] [--repeat R]

One broker, one 6-partition topic preloaded with ``--records`` JSON-with-schema records
(JsonConverter's envelope; an int64 id, a short string, a double, a boolean and a 100-byte
string), and one S3 API server (moto's, a subprocess on loopback: the same server for both).
Then, interleaved for ``--repeat`` rounds, each with a new bucket:

1. **Hand loop**: one confluent-kafka consumer assigned all partitions (``fetch.queue.backoff.ms``
   10, as the worker sets for sink tasks), ``json.loads`` of each value, rows buffered per
   partition and, every ``--flush-size`` rows, ``pyarrow.Table.from_pylist`` ->
   ``pyarrow.parquet.write_table`` (snappy) into memory -> boto3 ``put_object``. No offsets kept
   anywhere, no commit records: the least work that lands the same objects.
2. **Sink**: the S3 sink (``io.confluent.connect.s3.S3SinkConnector``, ParquetFormat, snappy)
   in a standalone worker in this process (the real runtime: consumer group, JsonConverter,
   SinkRecords) with exactly-once on (it cannot be turned off): pending record, uploads, commit
   record per file set, seek to the bucket's offsets on assignment. Records/s = records / (time
   from connector creation until every partition's commit record reaches its end offset).
   Sets close by ``flush.size`` only, so choose ``--records`` as a multiple of 6 x ``--flush-size``,
   or give ``--schedule-ms`` (``rotate.schedule.interval.ms``) to land the tails: 1,000,000 records
   (166,666 or 166,667 per partition) need it, at a cost of up to that interval at the end.

With ``--record-path`` each round also runs the sink once more with the runtime's record path
(the sink plan's ``value_columns`` strategy declining every poll: a SinkRecord and a Struct per record, as before
value columns existed), alternating which sink run goes first: a before/after in one run.

It prints both rates and the ratio sink / hand loop (target >= 0.8) per round, the ratio of
the best rates and the median of the rounds' ratios, and the load average around the run. On a
shared machine wall time follows everyone else's load, so it also prints the CPU seconds each
run cost this process (the worker, or the hand loop) plus the S3 server, and their ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
for extra in (ROOT, ROOT / "connectors" / "s3" / "tests"):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402
import s3_lake  # noqa: E402
from confluent_kafka import Consumer, TopicPartition  # noqa: E402
from s3_support import MotoServer  # noqa: E402
from seaway.connect.runtime.pipeline.sink import ValueColumns  # noqa: E402
from seaway.connect.testing import EmbeddedConnect  # noqa: E402

from tests.connectors.spark_sink import lake_check  # noqa: E402
from tests.support.broker import BrokerProcess  # noqa: E402

PARTITIONS = 6
ARROW_SCHEMA = pa.schema([("id", pa.int64()), ("kind", pa.string()), ("amount", pa.float64()),
                          ("ok", pa.bool_()), ("note", pa.string())])
WORKER = {"value.converter": "org.apache.kafka.connect.json.JsonConverter",
          "value.converter.schemas.enable": "true"}


@contextlib.contextmanager
def record_path(enabled: bool) -> Iterator[None]:
    """With ``enabled``, the runtime hands put SinkRecords (no value columns), as it did before them."""
    if not enabled:
        yield
        return
    original = ValueColumns.convert
    ValueColumns.convert = lambda self, messages, out: None  # type: ignore[method-assign]
    try:
        yield
    finally:
        ValueColumns.convert = original  # type: ignore[method-assign]


async def run_sink(s3: MotoServer, bucket: str, bootstrap: str, topic: str, work: Path, flush_size: int,
                   tasks: int, ends: dict[int, int], name: str, schedule_ms: int) -> tuple[float, float]:
    """(seconds, CPU seconds of this process and the S3 server) from connector creation until landed."""
    assert s3.proc is not None
    async with EmbeddedConnect(bootstrap, work, worker_props=WORKER) as connect:
        client = s3.client()
        started, cpu = time.monotonic(), cpu_seconds() + cpu_seconds(s3.proc.pid)
        await connect.create_connector(name, {
            "connector.class": "io.confluent.connect.s3.S3SinkConnector", "tasks.max": str(tasks), "topics": topic,
            **s3.props(bucket), "format.class": "io.confluent.connect.s3.format.parquet.ParquetFormat",
            "flush.size": str(flush_size), "rotate.schedule.interval.ms": str(schedule_ms), "timezone": "UTC"})
        await asyncio.to_thread(s3_lake.wait_landed, client, bucket, topic, ends, 1800)
        return time.monotonic() - started, cpu_seconds() + cpu_seconds(s3.proc.pid) - cpu


def run_hand_loop(s3: MotoServer, bucket: str, bootstrap: str, topic: str, flush_size: int, total: int) -> float:
    client = s3.client()
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"bench-hand-{bucket}",
                         "enable.auto.commit": False, "fetch.queue.backoff.ms": 10})
    started = time.monotonic()
    consumer.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
    buffers: dict[int, list[dict[str, Any]]] = {p: [] for p in range(PARTITIONS)}
    first: dict[int, int] = {}
    seen = 0

    def write(p: int) -> None:
        out = io.BytesIO()
        pq.write_table(pa.Table.from_pylist(buffers[p], schema=ARROW_SCHEMA), out, compression="snappy")
        client.put_object(Bucket=bucket, Key=f"hand/{topic}/partition={p}/{topic}+{p}+{first[p]:010d}.parquet",
                          Body=out.getvalue())
        buffers[p] = []

    while seen < total:
        for msg in consumer.consume(1000, 1.0):
            if msg.error() is not None:
                continue
            seen += 1
            p = msg.partition()
            if not buffers[p]:
                first[p] = msg.offset()
            buffers[p].append(json.loads(msg.value())["payload"])
            if len(buffers[p]) >= flush_size:
                write(p)
    for p in range(PARTITIONS):
        if buffers[p]:
            write(p)
    elapsed = time.monotonic() - started
    consumer.close()
    return elapsed


def cpu_seconds(pid: int | None = None) -> float:
    """CPU time (user + system) of this process, or of process ``pid`` (from /proc)."""
    if pid is None:
        return time.process_time()
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=300_000)
    parser.add_argument("--flush-size", type=int, default=25_000)
    parser.add_argument("--tasks", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=3, help="interleaved rounds (best and median printed)")
    parser.add_argument("--record-path", action="store_true",
                        help="also run the sink on the runtime's record path each round (before/after in one run)")
    parser.add_argument("--schedule-ms", type=int, default=-1,
                        help="the sink's rotate.schedule.interval.ms: lands the tails of partitions whose record "
                             "count is not a multiple of --flush-size (e.g. 1000 for --records 1000000)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="seaway-bench-s3-"))
    load_before = os.getloadavg()
    try:
        rounds: list[tuple[float, float]] = []  # (sink, hand) records/s
        cpu: list[tuple[float, float]] = []  # (sink, hand) CPU seconds of this process + the S3 server
        old_rounds: list[tuple[float, float]] = []  # --record-path: (records/s, CPU seconds)
        with BrokerProcess(work / "broker", {"group.initial.rebalance.delay.ms": "0"}) as broker, \
                MotoServer() as s3:
            topic = "bench"
            lake_check.create_topic(broker.bootstrap, topic, PARTITIONS)
            lake_check.produce_json(broker.bootstrap, topic, 0, args.records, PARTITIONS)
            ends = lake_check.end_offsets(broker.bootstrap, topic, PARTITIONS)
            assert s3.proc is not None
            server = s3.proc.pid
            for r in range(max(1, args.repeat)):
                c0 = cpu_seconds() + cpu_seconds(server)
                hand = run_hand_loop(s3, s3.new_bucket(), broker.bootstrap, topic, args.flush_size, args.records)
                c1 = cpu_seconds() + cpu_seconds(server)
                order = [False, True] if args.record_path and r % 2 == 0 else [True, False] if args.record_path \
                    else [False]
                for old_path in order:
                    bucket = s3.new_bucket()
                    label = f"bench-s3-{r}{'-records' if old_path else ''}"
                    with record_path(old_path):
                        sink, sink_cpu = asyncio.run(run_sink(s3, bucket, broker.bootstrap, topic, work / label,
                                                              args.flush_size, args.tasks, ends, label,
                                                              args.schedule_ms))
                    if old_path:
                        old_rounds.append((args.records / sink, sink_cpu))
                        print(f"round {r + 1}: sink, record path {args.records / sink:10,.0f} records/s  "
                              f"cpu {sink_cpu:.1f} s", flush=True)
                        continue
                    cpu.append((sink_cpu, c1 - c0))
                    rounds.append((args.records / sink, args.records / hand))
                    print(f"round {r + 1}: sink {rounds[-1][0]:10,.0f}  hand {rounds[-1][1]:10,.0f} records/s  "
                          f"ratio {rounds[-1][0] / rounds[-1][1]:.2f}   cpu: sink {cpu[-1][0]:.1f} s, hand "
                          f"{cpu[-1][1]:.1f} s, ratio {cpu[-1][1] / cpu[-1][0]:.2f}", flush=True)
        sink_rate, hand_rate = max(s for s, _ in rounds), max(h for _, h in rounds)
        ratios = sorted(s / h for s, h in rounds)
        print(f"records: {args.records} in {PARTITIONS} partitions, flush.size {args.flush_size}, tasks {args.tasks}, "
              f"best of {len(rounds)}")
        print(f"s3 sink (exactly-once):            {sink_rate:10,.0f} records/s  ({args.records / sink_rate:.1f} s)")
        print(f"hand loop (consume+pyarrow+put):   {hand_rate:10,.0f} records/s  ({args.records / hand_rate:.1f} s)")
        print(f"ratio sink / hand loop:            {sink_rate / hand_rate:10.2f}   best/best; median of rounds "
              f"{ratios[len(ratios) // 2]:.2f} (range {ratios[0]:.2f}-{ratios[-1]:.2f}; target >= 0.8)")
        cpu_ratios = sorted(h / s for s, h in cpu)
        print(f"cpu ratio hand / sink:             {cpu_ratios[len(cpu_ratios) // 2]:10.2f}   median (range "
              f"{cpu_ratios[0]:.2f}-{cpu_ratios[-1]:.2f}): CPU seconds of this process and the S3 server per run, "
              "steadier than wall time on a loaded machine")
        if old_rounds:
            best_old = max(rate for rate, _ in old_rounds)
            cpus = sorted(c for _, c in old_rounds)
            print(f"s3 sink, record path:              {best_old:10,.0f} records/s  best; ratio to hand loop "
                  f"{best_old / hand_rate:.2f} best/best; CPU median {cpus[len(cpus) // 2]:.1f} s against "
                  f"{sorted(s for s, _ in cpu)[len(cpu) // 2]:.1f} s with value columns")
        print(f"load average before {load_before[0]:.2f}, after {os.getloadavg()[0]:.2f} (1 min)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
