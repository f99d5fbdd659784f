"""The Spark sink's landing rate: Spark writing (local[2] and a standalone cluster), pyarrow, HDFS, hand loops.

Run from the repository root (Java 17 and Maven for Hadoop's jars, as for the tests)::

    .venv/bin/python bench/lake_sink.py [--records N] [--flush-size F] [--repeat R] [--tasks T]

One broker, one 6-partition topic preloaded with ``--records`` JSON-with-schema records
(JsonConverter's envelope; an int64 id, a short string, a double, a boolean and a 100-byte
string), a real HDFS (Hadoop's NameNode and DataNode) and a Spark standalone master and worker
(pyspark's ``spark-class``, 2 cores), all from ``tests/lake_cluster`` on loopback. Then two
measuring processes, one per Spark master (a process has one SparkSession), each running
``--repeat`` interleaved rounds:

* ``local[2]``: the hand loop; the sink with Spark writing (``parquet.writer`` unset) to a
  ``file://`` lake; the sink with ``parquet.writer=pyarrow``; the sink with Spark writing to an
  ``hdfs://`` lake;
* ``local[2]`` again, with the HDFS client's ``dfs.client.block.write.locateFollowingBlock.initial.delay.ms``
  at 50 ms instead of 400 (a client setting: how soon a closing file asks the NameNode again
  whether it is complete), the sink to the ``hdfs://`` lake;
* ``spark://`` (the standalone cluster; the jobs run on its executor): the hand loop; the sink
  with Spark writing to a ``file://`` lake.

**Sink**: the ``SparkParquetSink`` connector in a standalone worker (the real runtime: consumer
group, JsonConverter, SinkRecords) with exactly-once on (temp files, renames, commit log); the
session is started and warmed before the clock starts, as in a running worker. Records/s =
records / (time from connector creation until the lake's commit log covers every partition's
end offset). Sets close by ``flush.size`` only, so choose ``--records`` as a multiple of
6 x ``--flush-size``.

**Hand loop**: what one would write by hand on the same session: one confluent-kafka consumer
assigned every partition (``fetch.queue.backoff.ms`` 10, as the worker sets), ``json.loads`` of
each value, rows buffered, and every ``6 x --flush-size`` rows one
``spark.createDataFrame(pyarrow table).write.mode("append").parquet(...)`` (one Spark job per
that many rows, the sink's job size); no offsets kept anywhere.

Printed: per round and best of rounds, each rate, and the ratios sink / hand loop (target >= 1.0)
on each master, Spark / pyarrow writer, HDFS / local file. The machine is shared and noisy,
which is why all run in the same run, interleaved.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import pyarrow as pa  # noqa: E402
from confluent_kafka import Consumer, TopicPartition  # noqa: E402

from tests.connectors.spark_sink import lake_check  # noqa: E402

PARTITIONS = 6
ARROW_SCHEMA = pa.schema([("id", pa.int64()), ("kind", pa.string()), ("amount", pa.float64()),
                          ("ok", pa.bool_()), ("note", pa.string())])
RESULT = "RESULT "
#: the HDFS client's first wait before asking the NameNode again whether a file it closed is complete
TUNED_HDFS = "dfs.client.block.write.locateFollowingBlock.initial.delay.ms"


# -- a measuring process (one SparkSession) ------------------------------------------------------------
async def run_sink(bootstrap: str, topic: str, lake: str, work: Path, flush_size: int, tasks: int,
                   ends: dict[int, int], name: str, writer: str, spark: Any) -> float:
    from seaway.connect.testing import EmbeddedConnect
    from seaway.connectors.spark_sink import SparkParquetSinkConnector

    worker = {"value.converter": "org.apache.kafka.connect.json.JsonConverter",
              "value.converter.schemas.enable": "true"}
    config = {"connector.class": "SparkParquetSinkConnector", "tasks.max": str(tasks), "topics": topic,
              "lake.path": lake, "flush.size": str(flush_size)}
    if writer != "spark":
        config["parquet.writer"] = writer
    local = Path(lake.removeprefix("file://")) if lake.startswith("file://") else None
    async with EmbeddedConnect(bootstrap, work, worker_props=worker, plugins=[SparkParquetSinkConnector]) as c:
        started = time.monotonic()
        await c.create_connector(name, config)
        await c.wait_for_running(name, tasks=tasks, timeout=120)
        landed = asyncio.ensure_future(
            asyncio.to_thread(lake_check.wait_landed, local, topic, ends, 1800) if local is not None
            else asyncio.to_thread(lake_check.wait_landed_at, spark, lake, topic, ends, 1800))
        while not landed.done():  # a failed task ends the run with its trace, not a 30-minute wait
            status = await c.herder.connector_status(name)
            failed = [t.trace for t in status.tasks if t.state == "FAILED"]
            if failed:
                landed.cancel()
                raise RuntimeError(f"{name} failed:\n{failed[0]}")
            await asyncio.wait([landed], timeout=1.0)
        await landed
        return time.monotonic() - started


def run_hand_loop(spark: Any, bootstrap: str, topic: str, out: str, flush_size: int, total: int, group: str) -> float:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False,
                         "fetch.queue.backoff.ms": 10})
    started = time.monotonic()
    consumer.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
    rows: list[dict[str, Any]] = []
    seen = 0

    def write() -> None:
        spark.createDataFrame(pa.Table.from_pylist(rows, schema=ARROW_SCHEMA)).write.mode("append") \
            .option("compression", "snappy").parquet(out)
        rows.clear()

    try:
        while seen < total:
            for msg in consumer.consume(1000, 1.0):
                if msg.error() is not None:
                    continue
                seen += 1
                rows.append(json.loads(msg.value())["payload"])
                if len(rows) >= flush_size * PARTITIONS:
                    write()
        if rows:
            write()
        return time.monotonic() - started
    finally:
        consumer.close()


def child(spec: dict[str, Any]) -> None:
    """One SparkSession on ``spec["master"]``; ``--repeat`` rounds of the runs named in ``spec["runs"]``."""
    from seaway.connectors.spark_sink import shared_session
    from seaway.connectors.spark_sink.session import wait_warmed

    spark = shared_session(spec["master"], spec["conf"])
    spark.sparkContext.setLogLevel("ERROR")
    wait_warmed(600)  # a running worker's JVM is warm; the warm-up must not share the CPU with a measurement
    work = Path(spec["work"])
    ends = {int(p): e for p, e in spec["ends"].items()}
    for r in range(spec["repeat"]):
        for run in spec["runs"]:
            label, root = run["label"], run["root"].rstrip("/")
            slug = f"{spec['name']}-{label.replace(' ', '-')}-{r}"  # connector and group names: unique per run
            if run["kind"] == "hand":
                seconds = run_hand_loop(spark, spec["bootstrap"], spec["topic"], f"{root}/{slug}", spec["flush_size"],
                                        spec["records"], f"bench-{slug}-{time.time_ns()}")
            else:
                seconds = asyncio.run(run_sink(spec["bootstrap"], spec["topic"], f"{root}/{slug}", work / slug,
                                               spec["flush_size"], spec["tasks"], ends, f"bench-{slug}", run["writer"],
                                               spark))
            print(RESULT + json.dumps({"label": label, "round": r, "rate": spec["records"] / seconds}), flush=True)


# -- the orchestrating process --------------------------------------------------------------------------
def measure(spec: dict[str, Any]) -> list[dict[str, Any]]:
    """Run :func:`child` in a fresh process; its results."""
    log = Path(spec["work"] + ".log")
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("w") as err:
        done = subprocess.run([sys.executable, __file__, "--child", json.dumps(spec)], stdout=subprocess.PIPE,
                              stderr=err, text=True, check=False, timeout=3600)
    results = [json.loads(line[len(RESULT):]) for line in done.stdout.splitlines() if line.startswith(RESULT)]
    if done.returncode != 0:
        raise RuntimeError(f"measuring process failed ({done.returncode}):\n{log.read_text()[-4000:]}")
    for r in results:
        print(f"  {r['label']:<22} round {r['round'] + 1}: {r['rate']:10,.0f} records/s", flush=True)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=300_000)
    parser.add_argument("--flush-size", type=int, default=25_000)
    parser.add_argument("--tasks", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=3, help="interleaved rounds (best and median printed)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(json.loads(args.child))
        return

    from tests.lake_cluster.hdfs import Hdfs
    from tests.lake_cluster.spark_standalone import SparkStandalone
    from tests.support.broker import BrokerProcess

    work = Path(tempfile.mkdtemp(prefix="seaway-bench-lake-"))
    try:
        with BrokerProcess(work / "broker", {"group.initial.rebalance.delay.ms": "0"}) as broker, \
                Hdfs(work / "hdfs") as hdfs, SparkStandalone(work / "spark", cores=2) as cluster:
            topic = "bench"
            lake_check.create_topic(broker.bootstrap, topic, PARTITIONS)
            lake_check.produce_json(broker.bootstrap, topic, 0, args.records, PARTITIONS)
            ends = lake_check.end_offsets(broker.bootstrap, topic, PARTITIONS)
            base = {"bootstrap": broker.bootstrap, "topic": topic, "records": args.records, "ends": ends,
                    "flush_size": args.flush_size, "tasks": args.tasks, "repeat": max(1, args.repeat)}
            conf = {"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "2",
                    "spark.hadoop.dfs.replication": "1"}
            local_root, cluster_root, hdfs_root = (work / "out").as_uri(), (work / "out-cluster").as_uri(), \
                f"{hdfs.uri}/bench"
            on_one_machine = [
                {"label": "hand loop", "kind": "hand", "root": local_root},
                {"label": "sink spark file", "kind": "sink", "root": local_root, "writer": "spark"},
                {"label": "sink pyarrow file", "kind": "sink", "root": local_root, "writer": "pyarrow"},
                {"label": "sink spark hdfs", "kind": "sink", "root": hdfs_root, "writer": "spark"}]
            on_the_cluster = [
                {"label": "hand loop", "kind": "hand", "root": cluster_root},
                {"label": "sink spark file", "kind": "sink", "root": cluster_root, "writer": "spark"}]
            print(f"local[2] (driver JVM only), {args.records} records, flush.size {args.flush_size}:", flush=True)
            local = measure({**base, "name": "local", "master": "local[2]", "conf": conf, "work": str(work / "local"),
                             "runs": on_one_machine})
            print("local[2], HDFS client closing small files sooner "
                  f"({TUNED_HDFS} = 50 instead of 400 ms):", flush=True)
            tuned = measure({**base, "name": "tuned", "master": "local[2]", "work": str(work / "tuned"),
                             "conf": {**conf, f"spark.hadoop.{TUNED_HDFS}": "50"},
                             "runs": [{"label": "sink spark hdfs tuned", "kind": "sink", "root": hdfs_root,
                                       "writer": "spark"}]})
            print(f"{cluster.url} (standalone: one worker, one 2-core executor):", flush=True)
            remote = measure({**base, "name": "cluster", "master": cluster.url, "work": str(work / "cluster"),
                              "conf": {**conf, **cluster.driver_conf(), "spark.executor.memory": "1g"},
                              "runs": on_the_cluster})
        report(local + tuned, remote, args)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def report(local: list[dict[str, Any]], remote: list[dict[str, Any]], args: argparse.Namespace) -> None:
    def best(results: list[dict[str, Any]], label: str) -> float:
        return max(r["rate"] for r in results if r["label"] == label)

    def ratios(results: list[dict[str, Any]], a: str, b: str) -> list[float]:
        rounds = {r["round"] for r in results}
        by = {(r["label"], r["round"]): r["rate"] for r in results}
        return sorted(by[(a, n)] / by[(b, n)] for n in rounds)

    def line(name: str, results: list[dict[str, Any]], a: str, b: str, target: str = "") -> None:
        rs = ratios(results, a, b)
        print(f"{name:<44} {best(results, a) / best(results, b):6.2f}  best/best; median of rounds "
              f"{rs[len(rs) // 2]:.2f} (range {rs[0]:.2f}-{rs[-1]:.2f}){target}")

    print(f"\nrecords: {args.records} in {PARTITIONS} partitions, flush.size {args.flush_size}, tasks {args.tasks}, "
          f"best of {args.repeat} rounds; load average {os.getloadavg()[0]:.2f}")
    for name, results in (("local[2]", local), ("standalone cluster", remote)):
        for label in dict.fromkeys(r["label"] for r in results):
            print(f"{name:<20} {label:<22} {best(results, label):10,.0f} records/s")
    line("sink (Spark) / hand loop, local[2]:", local, "sink spark file", "hand loop", "; target >= 1.0")
    line("sink (Spark) / hand loop, standalone:", remote, "sink spark file", "hand loop", "; target >= 1.0")
    line("sink Spark writer / pyarrow writer:", local, "sink spark file", "sink pyarrow file")
    line("sink on HDFS / on a local file system:", local, "sink spark hdfs", "sink spark file")
    line("the same, HDFS client tuned:", local, "sink spark hdfs tuned", "sink spark file")


if __name__ == "__main__":
    main()
