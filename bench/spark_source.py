"""format("seaway") batch reads and streaming latency, beside spark-sql-kafka and a hand-written loop.

Run from the repository root (Java 17; Maven fetches spark-sql-kafka's jar once, as the peer test does)::

    .venv/bin/python bench/spark_source.py [--records N] [--repeat R] [--seconds S] [--skip-streaming]

One Seaway broker, one 6-partition topic preloaded with ``--records`` records (default 2,000,000;
~10-byte keys, 100-byte values). One measuring process with one SparkSession (``local[2]``,
spark-sql-kafka on its class path) runs ``--repeat`` interleaved rounds of:

* ``seaway``: ``spark.read.format("seaway")`` of the whole topic, then ``count()``; and the same
  DataFrame ``write.parquet`` (snappy) to a fresh folder;
* ``kafka``: the same with ``format("kafka")`` (spark-sql-kafka, its JVM Kafka consumer);
* ``hand loop``: what one writes without a data source: one confluent-kafka consumer assigned
  every partition, each ``consume()`` batch turned into a ``pyarrow.RecordBatch`` (the columns
  pulled out with list comprehensions), the batches made one ``pyarrow.Table`` and handed to
  ``spark.createDataFrame(table)``, then ``count()`` / ``write.parquet``.

Rows/s = records / wall time of the action (planning included); CPU-us/row = CPU time of the
measuring process and everything under it (its JVM, Spark's Python workers) per record, which moves
far less than wall time on a shared machine. Printed per round, and the best of rounds with the ratios
seaway / kafka (target >= 1.0) and seaway / hand loop (target >= 1.5).

Streaming (``--seconds`` each, default 40): a producer sends 10,000 records/s (timestamps = send
time) while a query reads with a 1 s processing-time trigger and ``foreachBatch`` appends each
micro-batch to Parquet; a record's end-to-end latency = the time its batch's Parquet write
finished - its timestamp. p50/p99 over the records after the first 10 s (warm-up), for
``format("seaway")`` and ``format("kafka")`` in turn.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

RESULT = "RESULT "
PARTITIONS = 6
RATE = 10_000
WARM_UP_S = 10.0


def produce(bootstrap: str, topic: str, records: int) -> None:
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, "batch.size": 1 << 20,
                         "queue.buffering.max.messages": 500_000})
    filler = b"x" * 90
    try:
        for i in range(records):
            while True:
                try:
                    producer.produce(topic, b"%010d" % i + filler, b"key-%06d" % (i % 1_000_000),
                                     partition=i % PARTITIONS)
                    break
                except BufferError:
                    producer.poll(0.05)
        assert producer.flush(300) == 0
    finally:
        producer.close()


# -- the measuring process ---------------------------------------------------------------------
def tree_cpu_seconds(root: int) -> float:
    """CPU time (user + system) of ``root`` and every process under it: the driver, its JVM, Spark's
    Python workers, reaped children included. Moves far less than wall time with other people's load."""
    parents: dict[int, int] = {}
    times: dict[int, float] = {}
    tick = os.sysconf("SC_CLK_TCK")
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(name)] = int(fields[1])
        times[int(name)] = sum(int(x) for x in fields[11:15]) / tick  # utime stime cutime cstime
    total, todo = 0.0, [root]
    while todo:
        pid = todo.pop()
        total += times.get(pid, 0.0)
        todo.extend(child for child, parent in parents.items() if parent == pid)
    return total


def hand_loop_table(bootstrap: str, topic: str, records: int) -> Any:
    """One consumer, every partition; each consume() batch -> a RecordBatch; one Table."""
    import pyarrow as pa
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"hand-{uuid.uuid4()}",
                         "enable.auto.commit": False, "fetch.queue.backoff.ms": 5})
    consumer.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
    batches, seen = [], 0
    try:
        while seen < records:
            msgs = [m for m in consumer.consume(10_000, 1.0) if m.error() is None]
            if not msgs:
                continue
            seen += len(msgs)
            stamps = [m.timestamp() for m in msgs]
            batches.append(pa.RecordBatch.from_pydict({
                "key": pa.array([m.key() for m in msgs], pa.binary()),
                "value": pa.array([m.value() for m in msgs], pa.binary()),
                "topic": pa.array([m.topic() for m in msgs], pa.string()),
                "partition": pa.array([m.partition() for m in msgs], pa.int32()),
                "offset": pa.array([m.offset() for m in msgs], pa.int64()),
                "timestamp": pa.array([s[1] * 1000 for s in stamps], pa.int64()).cast(pa.timestamp("us", tz="UTC")),
                "timestampType": pa.array([s[0] - 1 for s in stamps], pa.int32()),
            }))
    finally:
        consumer.close()
    return pa.Table.from_batches(batches)


def batch_round(spark: Any, spec: dict[str, Any], r: int, work: Path) -> None:
    bootstrap, topic, records = spec["bootstrap"], spec["topic"], spec["records"]

    def source(fmt: str) -> Any:
        return spark.read.format(fmt).option("kafka.bootstrap.servers", bootstrap).option("subscribe", topic).load()

    def hand() -> Any:
        return spark.createDataFrame(hand_loop_table(bootstrap, topic, records))

    for label, make in (("seaway", lambda: source("seaway")), ("kafka", lambda: source("kafka")), ("hand loop", hand)):
        for action in ("count", "parquet"):
            out = work / f"{label.replace(' ', '-')}-{action}-{r}"
            cpu = tree_cpu_seconds(os.getpid())
            started = time.monotonic()
            df = make()
            if action == "count":
                n = df.count()
            else:
                df.write.mode("overwrite").parquet(str(out))
                n = spark.read.parquet(str(out)).count()
            seconds = time.monotonic() - started
            cpu = tree_cpu_seconds(os.getpid()) - cpu
            if n != records:
                raise RuntimeError(f"{label} {action}: {n} rows, expected {records}")
            shutil.rmtree(out, ignore_errors=True)
            print(RESULT + json.dumps({"kind": "batch", "label": label, "action": action, "round": r,
                                       "rate": records / seconds, "cpu_us": cpu / records * 1e6}), flush=True)


def streaming_run(spark: Any, spec: dict[str, Any], fmt: str, work: Path) -> dict[str, float]:
    """10,000 records/s into a fresh topic for ``seconds``; latencies of a 1 s-trigger query into Parquet."""
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]

    bootstrap, seconds = spec["bootstrap"], spec["seconds"]
    topic = f"latency-{fmt}-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})  # held: a dropped client cancels its requests
    for future in admin.create_topics([NewTopic(topic, PARTITIONS, 1)]).values():
        future.result(30)
    samples: list[tuple[int, float]] = []  # (record timestamp, time its batch landed), ms
    out = work / f"stream-{fmt}"

    def each_batch(df: Any, batch_id: int) -> None:
        df.write.mode("append").parquet(str(out))
        landed = time.time() * 1000
        samples.extend((row["t"], landed) for row in df.selectExpr("unix_millis(timestamp) AS t").collect())

    query = (spark.readStream.format(fmt).option("kafka.bootstrap.servers", bootstrap).option("subscribe", topic)
             .option("startingOffsets", "earliest").load().writeStream.foreachBatch(each_batch)
             .option("checkpointLocation", str(work / f"ck-{fmt}")).trigger(processingTime="1 second").start())
    stop = threading.Event()

    def send() -> None:
        producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
        started, i = time.monotonic(), 0
        try:
            while not stop.is_set():
                due = int((time.monotonic() - started) * RATE)
                while i < due:
                    producer.produce(topic, b"%d" % i, partition=i % PARTITIONS)
                    i += 1
                producer.poll(0)
                time.sleep(0.005)
            producer.flush(30)
        finally:
            producer.close()

    warm_from = time.time() * 1000 + WARM_UP_S * 1000
    sender = threading.Thread(target=send, daemon=True)
    sender.start()
    time.sleep(seconds)
    stop.set()
    sender.join(60)
    time.sleep(3)  # the last batch lands
    query.stop()
    kept = sorted(landed - stamp for stamp, landed in samples if stamp >= warm_from)
    if not kept:
        raise RuntimeError(f"{fmt}: no record measured after the warm-up")
    return {"p50": kept[len(kept) // 2], "p99": kept[min(len(kept) - 1, int(len(kept) * 0.99))],
            "records": len(kept)}


def child(spec: dict[str, Any]) -> None:
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    from tests.connectors.spark_source.spark_kafka_jars import spark_kafka_jars

    spark = (SparkSession.builder.master("local[2]").appName("bench-spark-source")
             .config("spark.jars", ",".join(spark_kafka_jars())).config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false").config("spark.sql.shuffle.partitions", "2")
             .config("spark.driver.memory", "2g").config("spark.sql.execution.arrow.pyspark.enabled", "true")
             .config("spark.sql.execution.arrow.localRelationThreshold", "0").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    work = Path(spec["work"])
    # warm-up: one small read of each kind, so no round pays the JVM's and the Python workers' first use
    for fmt in ("seaway", "kafka"):
        spark.read.format(fmt).option("kafka.bootstrap.servers", spec["bootstrap"]).option(
            "subscribe", spec["topic"]).option("endingOffsets", json.dumps(
                {spec["topic"]: {str(p): 1000 for p in range(PARTITIONS)}})).load().count()
    for r in range(spec["repeat"]):
        batch_round(spark, spec, r, work)
    if spec["seconds"] > 0:
        for fmt in ("seaway", "kafka"):
            figures = streaming_run(spark, spec, fmt, work)
            print(RESULT + json.dumps({"kind": "stream", "label": fmt, **figures}), flush=True)


# -- the orchestrating process -----------------------------------------------------------------
def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=2_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=40.0, help="each streaming run (0: none)")
    parser.add_argument("--skip-streaming", action="store_true")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(json.loads(args.child))
        return 0

    from tests.support.broker import BrokerProcess

    work = Path(tempfile.mkdtemp(prefix="seaway-bench-spark-source-"))
    try:
        with BrokerProcess(work / "broker") as broker:
            from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]

            topic = "bench"
            admin = AdminClient({"bootstrap.servers": broker.bootstrap})
            for future in admin.create_topics([NewTopic(topic, PARTITIONS, 1)]).values():
                future.result(30)
            started = time.monotonic()
            produce(broker.bootstrap, topic, args.records)
            print(f"{args.records:,} records in {PARTITIONS} partitions produced in {time.monotonic() - started:.1f} s",
                  flush=True)
            spec = {"bootstrap": broker.bootstrap, "topic": topic, "records": args.records, "repeat": args.repeat,
                    "seconds": 0 if args.skip_streaming else args.seconds, "work": str(work / "out")}
            Path(spec["work"]).mkdir()
            log = work / "child.log"
            with log.open("w") as err:
                proc = subprocess.Popen([sys.executable, __file__, "--child", json.dumps(spec)],
                                        stdout=subprocess.PIPE, stderr=err, text=True,
                                        env={**os.environ, "PYSPARK_PYTHON": sys.executable})
                assert proc.stdout is not None
                results = []
                for line in proc.stdout:
                    if line.startswith(RESULT):
                        result = json.loads(line[len(RESULT):])
                        results.append(result)
                        if result["kind"] == "batch":
                            print(f"  round {result['round'] + 1} {result['label']:<10} {result['action']:<8}"
                                  f"{result['rate']:12,.0f} rows/s {result['cpu_us']:6.2f} CPU-us/row", flush=True)
                if proc.wait() != 0:
                    print(log.read_text()[-5000:])
                    return 1
        return report(results, args.records)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def report(results: list[dict[str, Any]], records: int) -> int:
    best: dict[tuple[str, str], float] = {}
    cpu: dict[tuple[str, str], float] = {}
    for r in results:
        if r["kind"] == "batch":
            key = (r["label"], r["action"])
            best[key] = max(best.get(key, 0.0), r["rate"])
            cpu[key] = min(cpu.get(key, float("inf")), r["cpu_us"])
    ok = True
    print(f"\nbatch read of {records:,} records, best of rounds (rows/s):")
    for action in ("count", "parquet"):
        seaway, kafka, hand = (best[(label, action)] for label in ("seaway", "kafka", "hand loop"))
        vs_kafka, vs_hand = seaway / kafka, seaway / hand
        ok = ok and vs_kafka >= 1.0 and vs_hand >= 1.5
        print(f"  {action:<8} seaway {seaway:10,.0f}  kafka {kafka:10,.0f}  hand loop {hand:10,.0f}   "
              f"seaway/kafka {vs_kafka:.2f} (target 1.0)  seaway/hand {vs_hand:.2f} (target 1.5)")
        print(f"  {'':<8} CPU-us/row, least of rounds: seaway {cpu[('seaway', action)]:.2f}  kafka "
              f"{cpu[('kafka', action)]:.2f}  hand loop {cpu[('hand loop', action)]:.2f}")
    streams = [r for r in results if r["kind"] == "stream"]
    if streams:
        print(f"\nstreaming at {RATE:,} records/s, 1 s trigger, foreachBatch -> Parquet (end-to-end latency):")
        for r in streams:
            print(f"  {r['label']:<7} p50 {r['p50']:7.0f} ms  p99 {r['p99']:7.0f} ms  ({r['records']:,} records)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
