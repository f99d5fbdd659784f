"""The Spark sink's landing rate against a hand-written consume -> pyarrow.parquet loop.

Run from the repository root::

    .venv/bin/python bench/lake_sink.py [--records N] [--flush-size F] [--tasks T] [--repeat R]

One broker, one 6-partition topic preloaded with ``--records`` JSON-with-schema records
(JsonConverter's envelope; an int64 id, a short string, a double, a boolean and a 100-byte
string). Then, in this process:

1. **Sink**: the ``SparkParquetSink`` connector in a standalone worker (the real runtime:
   consumer group, JsonConverter, SinkRecords) with exactly-once on (it cannot be turned
   off): temp files, atomic renames, commit log; ``--parquet-writer`` picks who encodes the
   Parquet (``auto``: pyarrow, as on any file:// lake; ``spark``: a Spark job per write, as on
   HDFS). The SparkSession is started (and warmed)
   before the clock starts, as in a running worker. Records/s = records / (time from
   connector creation until the lake's commit log covers every partition's end offset).
   Sets close by ``flush.size`` only (no schedule), so choose ``--records`` as a multiple
   of 6 x ``--flush-size`` or the tail never lands.
2. **Hand loop**: one confluent-kafka consumer assigned all partitions (``fetch.queue.backoff.ms``
   10, as the worker sets for sink tasks), ``json.loads`` of
   each value, rows buffered per partition and written with ``pyarrow.parquet.write_table``
   every ``--flush-size`` rows (the same file count as the sink), no offsets kept anywhere.

It prints both rates and the ratio sink / hand loop (target >= 0.8) for each of ``--repeat``
interleaved rounds (hand loop, then sink, each round with a new lake and connector), the
ratio of the best rates and the median of the rounds' ratios, plus the runtime's
JsonConverter decode rate alone, which bounds the sink (it runs per record in Python).
The machine is shared and noisy, which is why both run in the same process run, interleaved.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402
from confluent_kafka import Consumer, TopicPartition  # noqa: E402
from seaway.connect.converters.json_converter import JsonConverter  # noqa: E402
from seaway.connect.testing import EmbeddedConnect  # noqa: E402
from seaway.connectors.spark_sink import SparkParquetSinkConnector, shared_session  # noqa: E402
from seaway.connectors.spark_sink.session import wait_warmed  # noqa: E402

from tests.connectors.spark_sink import lake_check  # noqa: E402
from tests.support.broker import BrokerProcess  # noqa: E402

PARTITIONS = 6
ARROW_SCHEMA = pa.schema([("id", pa.int64()), ("kind", pa.string()), ("amount", pa.float64()),
                          ("ok", pa.bool_()), ("note", pa.string())])


async def run_sink(bootstrap: str, topic: str, lake: Path, work: Path, flush_size: int, tasks: int,
                   ends: dict[int, int], name: str = "bench-lake", parquet_writer: str = "auto") -> float:
    worker = {"value.converter": "org.apache.kafka.connect.json.JsonConverter",
              "value.converter.schemas.enable": "true"}
    async with EmbeddedConnect(bootstrap, work, worker_props=worker, plugins=[SparkParquetSinkConnector]) as c:
        started = time.monotonic()
        await c.create_connector(name, {
            "connector.class": "SparkParquetSinkConnector", "tasks.max": str(tasks), "topics": topic,
            "lake.path": lake.as_uri(), "flush.size": str(flush_size), "parquet.writer": parquet_writer})
        await asyncio.to_thread(lake_check.wait_landed, lake, topic, ends, 1800)
        return time.monotonic() - started


def run_hand_loop(bootstrap: str, topic: str, out: Path, flush_size: int, total: int) -> float:
    out.mkdir(parents=True)
    # the same fetch.queue.backoff.ms as the worker gives sink tasks (connect runtime worker.py):
    # with librdkafka's 1 s default, a loop slower than the broker idles once its queue fills
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"bench-hand-{out.name}",
                         "enable.auto.commit": False,
                         "fetch.queue.backoff.ms": 10})
    started = time.monotonic()
    consumer.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
    buffers: dict[int, list[dict[str, Any]]] = {p: [] for p in range(PARTITIONS)}
    seen, files = 0, 0

    def write(p: int) -> None:
        nonlocal files
        pq.write_table(pa.Table.from_pylist(buffers[p], schema=ARROW_SCHEMA), out / f"{p}-{files}.parquet",
                       compression="snappy")
        files += 1
        buffers[p] = []

    while seen < total:
        for msg in consumer.consume(1000, 1.0):
            if msg.error() is not None:
                continue
            seen += 1
            p = msg.partition()
            buffers[p].append(json.loads(msg.value())["payload"])
            if len(buffers[p]) >= flush_size:
                write(p)
    for p in range(PARTITIONS):
        if buffers[p]:
            write(p)
    elapsed = time.monotonic() - started
    consumer.close()
    return elapsed


def converter_rate(count: int = 20000) -> float:
    conv = JsonConverter()
    conv.configure({"schemas.enable": "true"}, False)
    values = [json.dumps({"schema": lake_check.SCHEMA, "payload": lake_check.event(i)}).encode() for i in range(count)]
    started = time.perf_counter()
    for v in values:
        conv.to_connect_data("t", v)
    return count / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=300_000)
    parser.add_argument("--flush-size", type=int, default=25_000)
    parser.add_argument("--tasks", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=3, help="interleaved rounds (best and median printed)")
    parser.add_argument("--parquet-writer", choices=("auto", "spark"), default="auto",
                        help="the sink's parquet.writer: auto (pyarrow on this file:// lake) or spark (a Spark job)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="seaway-bench-lake-"))
    try:
        spark = shared_session("local[2]", {"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "2"})
        spark.sparkContext.setLogLevel("ERROR")
        rounds: list[tuple[float, float]] = []  # (sink, hand) records/s
        with BrokerProcess(work / "broker", {"group.initial.rebalance.delay.ms": "0"}) as broker:
            topic = "bench"
            lake_check.create_topic(broker.bootstrap, topic, PARTITIONS)
            lake_check.produce_json(broker.bootstrap, topic, 0, args.records, PARTITIONS)
            ends = lake_check.end_offsets(broker.bootstrap, topic, PARTITIONS)
            per_file = max(1, args.flush_size)
            # the session's background warm-up (a running worker's JVM is warm) must not share
            # the CPU with either measurement
            wait_warmed(600)
            for r in range(max(1, args.repeat)):
                hand = run_hand_loop(broker.bootstrap, topic, work / f"hand-{r}", per_file, args.records)
                sink = asyncio.run(run_sink(broker.bootstrap, topic, work / f"lake-{r}", work / f"connect-{r}",
                                            per_file, args.tasks, ends, name=f"bench-lake-{r}",
                                            parquet_writer=args.parquet_writer))
                rounds.append((args.records / sink, args.records / hand))
                print(f"round {r + 1}: sink {rounds[-1][0]:10,.0f}  hand {rounds[-1][1]:10,.0f} records/s  "
                      f"ratio {rounds[-1][0] / rounds[-1][1]:.2f}", flush=True)
        conv = converter_rate()
        sink_rate, hand_rate = max(s for s, _ in rounds), max(h for _, h in rounds)
        ratios = sorted(s / h for s, h in rounds)
        print(f"records: {args.records} in {PARTITIONS} partitions, flush.size {per_file}, tasks {args.tasks}, "
              f"parquet.writer {args.parquet_writer}, best of {len(rounds)}; load average {os.getloadavg()[0]:.2f}")
        print(f"spark sink (exactly-once):   {sink_rate:10,.0f} records/s  ({args.records / sink_rate:.1f} s)")
        print(f"hand loop (consume+pyarrow): {hand_rate:10,.0f} records/s  ({args.records / hand_rate:.1f} s)")
        print(f"ratio sink / hand loop:      {sink_rate / hand_rate:10.2f}   best/best; median of rounds "
              f"{ratios[len(ratios) // 2]:.2f} (range {ratios[0]:.2f}-{ratios[-1]:.2f}; target >= 0.8)")
        print(f"JsonConverter decode alone:  {conv:10,.0f} records/s  (the runtime's per-record ceiling)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
