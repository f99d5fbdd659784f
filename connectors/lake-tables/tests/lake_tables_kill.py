"""The issue's kill -9 proof, one body for every catalog and warehouse it runs on.

Half of the records are in the topic when the first worker starts, the other half arrive while workers
run; a ``seaway connect standalone`` worker is SIGKILLed a moment after a commit, several times, then a
last worker runs until the table holds the topic's end offsets. Checked against the topic and the tables
themselves (pyiceberg, delta-rs and the Delta log, never the sink's code):

* the table equals the topic by (partition, offset): no loss, no duplicate;
* Iceberg: every snapshot's summary holds the offsets of exactly the rows its data files add (from its
  parent's offsets up to its own, per partition);
* Delta: every commit's ``txn`` actions (app id ``<connector>-<partition>``) advance exactly over the
  rows its ``add`` actions bring.

The control topic's clients take ``bootstrap.servers`` from the worker's properties file (no
``iceberg.kafka.*`` in the config), as Iceberg's sink reads the worker's file.

``SEAWAY_LAKE_TABLES_KILL_RECORDS`` / ``SEAWAY_LAKE_TABLES_KILLS`` scale it (default: the issue's 500,000
records in total, 5 kills); ``SEAWAY_CHAOS_SEED`` repeats a run's kill timings. The SQLite + ``file://``
runs are test_lake_tables_kill9.py; the PostgreSQL catalog and the ``s3://`` (moto) warehouse are
test_lake_tables_kill9_remote.py, a file of their own so another pytest-xdist process can run them.
"""

from __future__ import annotations

import os
import random
import threading
import time
from pathlib import Path

from lake_tables_fixtures import Warehouse
from lake_tables_support import (
    assert_delta_versions_hold_their_offsets,
    assert_rows_equal_topic,
    assert_snapshots_hold_their_offsets,
    delta_rows,
    iceberg_rows,
    wait_delta_offsets,
    wait_iceberg_offsets,
)
from lake_tables_worker import TableWorker

from tests.connectors.spark_sink import lake_check
from tests.support.broker import BrokerProcess

__all__ = ["KILLS", "RECORDS", "run_sigkill_while_records_flow"]

RECORDS = int(os.environ.get("SEAWAY_LAKE_TABLES_KILL_RECORDS", "500000"))
KILLS = int(os.environ.get("SEAWAY_LAKE_TABLES_KILLS", "5"))
PARTITIONS = 6
TOPIC = "chaos"
_SHORT_SESSIONS = {"consumer.override.session.timeout.ms": "2000", "consumer.override.heartbeat.interval.ms": "500"}


def iceberg_connector(wh: Warehouse) -> dict[str, str]:
    return {"name": "ice", "connector.class": "org.apache.iceberg.connect.IcebergSinkConnector", "tasks.max": "2",
            "topics": TOPIC, "iceberg.tables": "lake.chaos", "iceberg.tables.auto-create-enabled": "true",
            "iceberg.control.commit.interval-ms": "1000", "iceberg.control.commit.timeout-ms": "1000",
            "flush.size": "20000", "include.kafka.metadata": "true", **_SHORT_SESSIONS, **wh.iceberg}


def delta_connector(wh: Warehouse) -> dict[str, str]:
    return {"name": "delta", "connector.class": "DeltaSink", "tasks.max": "2", "topics": TOPIC, **wh.delta(),
            "flush.size": "20000", "rotate.schedule.interval.ms": "1000", "include.kafka.metadata": "true",
            **_SHORT_SESSIONS}


def run_sigkill_while_records_flow(table_format: str, wh: Warehouse, broker: BrokerProcess, tmp_path: Path) -> None:
    """The whole proof for ``table_format`` (``iceberg`` or ``delta``) on the warehouse ``wh``."""
    config = iceberg_connector(wh) if table_format == "iceberg" else delta_connector(wh)
    committed_line = ": commit " if table_format == "iceberg" else " Delta commits in "
    delta_uri = f"{wh.delta_location}/{TOPIC}"
    seed = int(os.environ.get("SEAWAY_CHAOS_SEED", time.time_ns() % 1_000_000))
    rng = random.Random(seed)
    lake_check.create_topic(broker.bootstrap, TOPIC, PARTITIONS)
    first = RECORDS // 2
    lake_check.produce_json(broker.bootstrap, TOPIC, 0, first, PARTITIONS)
    produced = [first]
    batch = max(1, (RECORDS - first) // (KILLS * 10))
    flowing = threading.Event()
    flowing.set()

    def produce() -> None:  # the second half arrives while the workers run and die
        while flowing.is_set() and produced[0] < RECORDS:
            count = min(batch, RECORDS - produced[0])
            lake_check.produce_json(broker.bootstrap, TOPIC, produced[0], count, PARTITIONS)
            produced[0] += count
            time.sleep(0.3)

    producer = threading.Thread(target=produce, daemon=True)
    producer.start()
    started = time.monotonic()
    killed_after_commit = 0
    try:
        for n in range(KILLS):
            worker = TableWorker(tmp_path / f"worker-{n}", broker.bootstrap, [config])
            try:
                # die a moment after a commit: the next interval's data files are being written
                committed = worker.wait_for(committed_line, 120)
                time.sleep(rng.uniform(0.2, 2.0))
                assert worker.proc.poll() is None, worker.output()[-3000:]
                killed_after_commit += committed
            finally:
                worker.kill()
    finally:
        producer.join(120)
        flowing.clear()
    assert produced[0] == RECORDS
    ends = lake_check.end_offsets(broker.bootstrap, TOPIC, PARTITIONS)
    assert sum(ends.values()) == RECORDS
    final = TableWorker(tmp_path / "worker-final", broker.bootstrap, [config])
    try:
        if table_format == "iceberg":
            table = wait_iceberg_offsets(wh.catalog, "lake.chaos", "ice", ends, TOPIC, 240,
                                         catalog_name=wh.catalog_name)
        else:
            wait_delta_offsets(delta_uri, "delta", ends, 240, wh.delta_storage)
    except AssertionError:
        print(final.output()[-5000:])
        raise
    finally:
        final.stop()
    elapsed = time.monotonic() - started
    if table_format == "iceberg":
        commits = assert_snapshots_hold_their_offsets(table, "ice", TOPIC)
        rows = iceberg_rows(table)
    else:
        commits = assert_delta_versions_hold_their_offsets(delta_uri, "delta", PARTITIONS, wh.delta_storage)
        rows = delta_rows(delta_uri, storage_options=wh.delta_storage)
    print(f"{table_format} on {wh.kind}, seed {seed}: {RECORDS} records, {KILLS} SIGKILLs ({killed_after_commit} "
          f"after a commit), {commits} commits, {elapsed:.1f} s")
    assert killed_after_commit == KILLS
    assert commits >= 2
    assert assert_rows_equal_topic(rows, broker.bootstrap, TOPIC, PARTITIONS) == RECORDS
