"""The table sinks' landing rate: Iceberg and Delta sinks in a real worker against hand-written append loops.

Run from the repository root::

    .venv/bin/python bench/lake_tables.py [--records N] [--repeat R] [--tasks T] [--commit-interval-ms MS]

One broker (``tests/support/broker.py``), one 6-partition topic preloaded with ``--records``
JSON-with-schema records (default 1,200,000: runs of 300,000 are mostly the sinks' ~2.5 s of start-up and
commit-interval waiting; JsonConverter's envelope, as the sinks' tests use: an int64 id, a short
string, a double, a boolean and a 100-byte string that is null in every fifth record; about 525-byte
values, 2/3 of each the schema). Then ``--repeat`` interleaved rounds of four runs, each into a
new table under a fresh temporary folder:

* **iceberg sink**: ``org.apache.iceberg.connect.IcebergSinkConnector`` in a real
  ``seaway connect standalone`` process (consumer group, JsonConverter, the runtime), exactly-once as
  the sink always runs it: data files announced on a control topic of the round's own, one committer,
  the offsets in each snapshot's summary; SQLite catalog (``iceberg.catalog.type=sql``), ``file://``
  warehouse, ``iceberg.tables.auto-create-enabled``, ``iceberg.control.commit.interval-ms`` =
  ``--commit-interval-ms`` (default 1000), ``flush.size`` left at 50000. The worker is started and its
  REST API answering before the clock starts; records/s = records / (from the ``PUT`` that creates the
  connector until the table's current snapshot summary holds every partition's end offset; polled
  every 0.2 s by this process). The table's row count is checked afterwards.
* **iceberg hand**: what one would write by hand in this process: a pyiceberg ``SqlCatalog`` on
  SQLite, ``create_table`` (inside the clock, as the sink creates its table inside it), one
  confluent-kafka consumer assigned every partition (``fetch.queue.backoff.ms`` 10, as the worker
  sets), ``json.loads`` of each value, the payload dicts buffered, and every K records one
  ``table.append(pyarrow.Table.from_pylist(rows))``: one snapshot, no offsets kept anywhere. **K is
  matched to the sink's run of the same round**: K = ceil(records / the number of snapshots the sink
  made), so both make the same number of commits of the same size on average (the sink commits on
  its interval, the hand loop on a count). Clock: from before the catalog is opened until the last
  append returns.
* **delta sink**: ``DeltaSink`` in the same kind of worker, exactly-once as kafka-delta-ingest does it
  (a ``txn`` action per partition in each commit), ``rotate.schedule.interval.ms`` =
  ``--commit-interval-ms`` (which closes every partition's file set, so the task commits them: one
  Delta commit per interval, as the Iceberg sink), checkpoints every 10 commits (its default); until
  every partition's txn version is its end offset - 1.
* **delta hand**: the same hand loop with ``deltalake.write_deltalake(uri, table, mode="append")``
  per K records (K matched to the Delta sink's number of commits the same way), the table created by
  the first write with ``delta.checkpointInterval=10`` as the sink creates its tables.

Both sinks run with ``--tasks`` tasks (default 1: one consumer, as the hand loops). Printed per run:
records/s, seconds, commits, and the CPU seconds of the process doing the work (the worker process
for a sink, this process for a hand loop; the broker's CPU, the same work for both, is not
counted); then the best of rounds and the ratios sink / hand (target >= 0.8) per round and best/best,
and the CPU ratio hand / sink, which other engineers' load on this shared 2-core machine moves far
less than wall time.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
for path in (ROOT, ROOT / "connectors" / "lake-tables" / "tests"):  # tests.support, lake_tables_worker
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

import pyarrow as pa  # noqa: E402
from confluent_kafka import Consumer, TopicPartition  # noqa: E402
from lake_tables_worker import TableWorker  # noqa: E402

from bench._common import cpu_seconds  # noqa: E402
from tests.connectors.spark_sink import lake_check  # noqa: E402
from tests.support.broker import BrokerProcess  # noqa: E402

PARTITIONS = 6
TOPIC = "bench"
#: the columns the sinks create from the JsonConverter schema (lake_check.SCHEMA): required unless optional
ARROW_SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("kind", pa.string(), nullable=False),
                          pa.field("amount", pa.float64(), nullable=False), pa.field("ok", pa.bool_(), nullable=False),
                          pa.field("note", pa.string())])
RUNS = ("iceberg sink", "iceberg hand", "delta sink", "delta hand")


@dataclass
class Run:
    label: str
    round: int
    records: int
    seconds: float
    commits: int
    cpu: float

    @property
    def rate(self) -> float:
        return self.records / self.seconds


# -- the sinks, in a real worker process ---------------------------------------------------------------
def iceberg_config(name: str, warehouse: Path, tasks: int, interval_ms: int) -> dict[str, str]:
    return {"connector.class": "org.apache.iceberg.connect.IcebergSinkConnector", "tasks.max": str(tasks),
            "topics": TOPIC, "iceberg.tables": f"bench.{name}", "iceberg.tables.auto-create-enabled": "true",
            "iceberg.control.topic": f"control-{name}", "iceberg.control.commit.interval-ms": str(interval_ms),
            "iceberg.control.commit.timeout-ms": str(interval_ms),  # at most the interval (the sink's rule)
            "iceberg.catalog.type": "sql", "iceberg.catalog.uri": f"sqlite:///{warehouse}/catalog.db",
            "iceberg.catalog.warehouse": warehouse.as_uri()}


def delta_config(location: Path, tasks: int, interval_ms: int) -> dict[str, str]:
    return {"connector.class": "DeltaSink", "tasks.max": str(tasks), "topics": TOPIC,
            "delta.tables.location": location.as_uri(), "rotate.schedule.interval.ms": str(interval_ms)}


def iceberg_catalog(warehouse: Path, name: str = "iceberg") -> Any:
    from pyiceberg.catalog.sql import SqlCatalog

    return SqlCatalog(name, uri=f"sqlite:///{warehouse}/catalog.db", warehouse=warehouse.as_uri())


def iceberg_landed(warehouse: Path, table: str, connector: str, ends: dict[int, int]) -> Callable[[], int | None]:
    """A probe: the sink's snapshot count once the table's offsets reach ``ends``, else ``None``."""
    from pyiceberg.exceptions import NoSuchTableError
    from seaway.connect.api import TopicPartition as Tp
    from seaway.connectors.lake_tables import table_offsets

    want = {Tp(TOPIC, p): n for p, n in ends.items() if n}
    catalog: list[Any] = []

    def probe() -> int | None:
        if not catalog:
            if not (warehouse / "catalog.db").exists():
                return None
            catalog.append(iceberg_catalog(warehouse))
        try:
            loaded = catalog[0].load_table(table)
        except NoSuchTableError:
            return None
        if table_offsets(loaded, connector) != want:
            return None
        summary = loaded.current_snapshot().summary
        rows = int(summary["total-records"])
        if rows != sum(ends.values()):
            raise RuntimeError(f"{table} holds {rows} rows at the topic's end offsets, not {sum(ends.values())}")
        return len(loaded.snapshots())

    return probe


def delta_landed(uri: str, app_id: str, ends: dict[int, int]) -> Callable[[], int | None]:
    """A probe: the Delta sink's commit count once every partition's txn version is its end offset - 1."""
    from deltalake import DeltaTable
    from deltalake.exceptions import TableNotFoundError
    from seaway.connectors.lake_tables import delta_app_id

    def probe() -> int | None:
        try:
            table = DeltaTable(uri)
        except TableNotFoundError:
            return None
        for p, n in ends.items():
            version = table.transaction_version(delta_app_id(app_id, p))
            if n and (version is None or int(version) != n - 1):
                return None
        rows = table.to_pyarrow_dataset().count_rows()
        if rows != sum(ends.values()):
            raise RuntimeError(f"{uri} holds {rows} rows at the topic's end offsets, not {sum(ends.values())}")
        return int(table.version()) + 1  # the sink's first write creates the table: version 0

    return probe


def run_sink(folder: Path, bootstrap: str, name: str, config: dict[str, str], landed: Callable[[], int | None],
             timeout: float) -> tuple[float, int, float]:
    """(seconds, commits, worker CPU seconds) from the connector's creation until ``landed`` answers."""
    worker = TableWorker(folder / "worker", bootstrap, [])
    try:
        status, _ = worker.request("GET", "/connectors", timeout=120)  # up and idle before the clock starts
        if status != 200:
            raise RuntimeError(f"the worker's REST API answered {status}:\n{worker.output()[-3000:]}")
        cpu0 = cpu_seconds(worker.proc.pid)
        started = time.monotonic()
        status, body = worker.request("PUT", f"/connectors/{name}/config", config)
        if status not in (200, 201):
            raise RuntimeError(f"creating {name} answered {status}: {body}")
        next_check = started + 2.0
        while True:
            commits = landed()
            if commits is not None:
                seconds = time.monotonic() - started
                return seconds, commits, cpu_seconds(worker.proc.pid) - cpu0
            now = time.monotonic()
            if worker.proc.poll() is not None or now - started > timeout:
                raise RuntimeError(f"{name} did not land in {timeout:.0f} s:\n{worker.output()[-5000:]}")
            if now >= next_check:  # a failed task ends the run with its trace, not a long wait
                _, state = worker.request("GET", f"/connectors/{name}/status")
                failed = [t.get("trace", "") for t in (state or {}).get("tasks", []) if t.get("state") == "FAILED"]
                if failed:
                    raise RuntimeError(f"{name} failed:\n{failed[0]}")
                next_check = now + 2.0
            time.sleep(0.2)
    finally:
        worker.stop()


# -- the hand-written loops, in this process --------------------------------------------------------------
def consume_in_batches(bootstrap: str, total: int, per_commit: int, group: str,
                       commit: Callable[[pa.Table], None]) -> int:
    """One consumer on every partition, ``json.loads`` of each value, ``commit`` every ``per_commit`` rows."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False,
                         "fetch.queue.backoff.ms": 10})
    rows: list[dict[str, Any]] = []
    seen = commits = 0
    try:
        consumer.assign([TopicPartition(TOPIC, p, 0) for p in range(PARTITIONS)])
        while seen < total:
            for msg in consumer.consume(1000, 1.0):
                if msg.error() is not None:
                    continue
                seen += 1
                rows.append(json.loads(msg.value())["payload"])
                if len(rows) >= per_commit:
                    commit(pa.Table.from_pylist(rows, schema=ARROW_SCHEMA))
                    commits += 1
                    rows.clear()
        if rows:
            commit(pa.Table.from_pylist(rows, schema=ARROW_SCHEMA))
            commits += 1
        return commits
    finally:
        consumer.close()


def hand_iceberg(bootstrap: str, warehouse: Path, total: int, per_commit: int, group: str) -> tuple[float, int, float]:
    cpu0, started = time.process_time(), time.monotonic()
    warehouse.mkdir(parents=True)
    catalog = iceberg_catalog(warehouse, "hand")
    catalog.create_namespace_if_not_exists("bench")
    table = catalog.create_table("bench.hand", schema=ARROW_SCHEMA)
    commits = consume_in_batches(bootstrap, total, per_commit, group, table.append)
    seconds, cpu = time.monotonic() - started, time.process_time() - cpu0
    rows = int(catalog.load_table("bench.hand").current_snapshot().summary["total-records"])
    if rows != total:
        raise RuntimeError(f"the hand-written Iceberg loop landed {rows} rows, not {total}")
    return seconds, commits, cpu


def hand_delta(bootstrap: str, location: Path, total: int, per_commit: int, group: str) -> tuple[float, int, float]:
    from deltalake import DeltaTable, write_deltalake

    uri = location.as_uri()
    first = [True]

    def commit(data: pa.Table) -> None:
        write_deltalake(uri, data, mode="append",
                        configuration={"delta.checkpointInterval": "10"} if first[0] else None)
        first[0] = False

    cpu0, started = time.process_time(), time.monotonic()
    commits = consume_in_batches(bootstrap, total, per_commit, group, commit)
    seconds, cpu = time.monotonic() - started, time.process_time() - cpu0
    rows = DeltaTable(uri).to_pyarrow_dataset().count_rows()
    if rows != total:
        raise RuntimeError(f"the hand-written Delta loop landed {rows} rows, not {total}")
    return seconds, commits, cpu


# -- the orchestration ------------------------------------------------------------------------------------
def one_round(n: int, work: Path, bootstrap: str, ends: dict[int, int], args: argparse.Namespace) -> list[Run]:
    total = sum(ends.values())
    timeout = max(300.0, total / 500)
    here = work / f"round-{n}"
    out: list[Run] = []

    def record(label: str, result: tuple[float, int, float]) -> int:
        run = Run(label, n, total, *result)
        out.append(run)
        print(f"  round {n + 1} {label:<13} {run.rate:10,.0f} records/s  {run.seconds:6.1f} s  "
              f"{run.commits:4d} commits  CPU {run.cpu:6.1f} s", flush=True)
        return run.commits

    name = f"ice{n}"
    warehouse = here / "iceberg-sink" / "warehouse"
    warehouse.mkdir(parents=True)
    commits = record("iceberg sink", run_sink(
        here / "iceberg-sink", bootstrap, name, iceberg_config(name, warehouse, args.tasks, args.commit_interval_ms),
        iceberg_landed(warehouse, f"bench.{name}", name, ends), timeout))
    record("iceberg hand", hand_iceberg(bootstrap, here / "iceberg-hand", total, math.ceil(total / commits),
                                        f"hand-ice-{n}-{time.time_ns()}"))
    name = f"delta{n}"
    location = here / "delta-sink" / "tables"
    commits = record("delta sink", run_sink(
        here / "delta-sink", bootstrap, name, delta_config(location, args.tasks, args.commit_interval_ms),
        delta_landed((location / TOPIC).as_uri(), name, ends), timeout))
    record("delta hand", hand_delta(bootstrap, here / "delta-hand", total, math.ceil(total / commits),
                                    f"hand-delta-{n}-{time.time_ns()}"))
    shutil.rmtree(here, ignore_errors=True)  # the next round's tables start on an empty disk cache as well
    return out


def report(runs: list[Run], args: argparse.Namespace, records: int) -> None:
    by = {(r.label, r.round): r for r in runs}
    rounds = sorted({r.round for r in runs})
    print(f"\n{records} records in {PARTITIONS} partitions, {len(rounds)} rounds, tasks {args.tasks}, commit "
          f"interval {args.commit_interval_ms} ms; load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    best = {label: max(by[(label, n)].rate for n in rounds) for label in RUNS}
    for label in RUNS:
        rates = ", ".join(f"{by[(label, n)].rate:,.0f}" for n in rounds)
        print(f"{label:<13} best {best[label]:10,.0f} records/s   rounds: {rates}")
    for fmt in ("iceberg", "delta"):
        sink, hand = f"{fmt} sink", f"{fmt} hand"
        ratios = ", ".join(f"{by[(sink, n)].rate / by[(hand, n)].rate:.2f}" for n in rounds)
        cpu = ", ".join(f"{by[(hand, n)].cpu / by[(sink, n)].cpu:.2f}" for n in rounds)
        print(f"{fmt + ':':<8} sink/hand {best[sink] / best[hand]:.2f} best/best; per round {ratios} "
              f"(target >= 0.8); CPU hand/sink per round {cpu}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=1_200_000)
    parser.add_argument("--repeat", type=int, default=3, help="interleaved rounds")
    parser.add_argument("--tasks", type=int, default=1, help="tasks.max of both sinks")
    parser.add_argument("--commit-interval-ms", type=int, default=1000,
                        help="iceberg.control.commit.interval-ms and the Delta sink's rotate.schedule.interval.ms")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="seaway-bench-tables-"))
    runs: list[Run] = []
    try:
        with BrokerProcess(work / "broker", {"group.initial.rebalance.delay.ms": "0"}) as broker:
            lake_check.create_topic(broker.bootstrap, TOPIC, PARTITIONS)
            started = time.monotonic()
            lake_check.produce_json(broker.bootstrap, TOPIC, 0, args.records, PARTITIONS)
            ends = lake_check.end_offsets(broker.bootstrap, TOPIC, PARTITIONS)
            print(f"{sum(ends.values())} records produced in {time.monotonic() - started:.1f} s; "
                  f"load average {os.getloadavg()[0]:.2f}", flush=True)
            for n in range(max(1, args.repeat)):
                runs += one_round(n, work, broker.bootstrap, ends, args)
        report(runs, args, sum(ends.values()))
    finally:
        with contextlib.suppress(OSError):
            shutil.rmtree(work)


if __name__ == "__main__":
    main()
