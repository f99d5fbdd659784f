"""The Iceberg and Delta sinks across SIGKILLs of real worker processes (``seaway connect standalone``).

Records flow into a 6-partition topic the whole time; the worker is killed with SIGKILL several times,
each time a moment after a commit to the table (so the next data files are being written, and for
Iceberg announced on the control topic, when it dies). A last worker catches up. Then, read with
pyiceberg / delta-rs and the Delta log alone:

* the table equals the topic by (kafka_partition, kafka_offset), values as produced, no duplicate;
* Iceberg: every snapshot's summary holds the offsets of exactly the rows its data files add (from its
  parent's offsets up to its own, per partition);
* Delta: every commit's ``txn`` actions (app id ``<connector>-<partition>``) advance exactly over the
  rows its ``add`` actions bring.

The control topic's clients take ``bootstrap.servers`` from the worker's properties file (no
``iceberg.kafka.*`` in the config), as Iceberg's sink reads the worker's file.

``SEAWAY_LAKE_TABLES_KILL_RECORDS`` / ``SEAWAY_LAKE_TABLES_KILLS`` scale it (default: 500,000 records
in total, 5 kills).
"""

from __future__ import annotations

import os
import random
import threading
import time
from pathlib import Path

import pytest
from lake_tables_support import (
    assert_delta_versions_hold_their_offsets,
    assert_rows_equal_topic,
    assert_snapshots_hold_their_offsets,
    delta_rows,
    iceberg_rows,
    wait_for,
    wait_iceberg_offsets,
)
from lake_tables_worker import TableWorker
from seaway.connectors.lake_tables import delta_app_id

from tests.connectors.spark_sink import lake_check
from tests.support.broker import BrokerProcess

RECORDS = int(os.environ.get("SEAWAY_LAKE_TABLES_KILL_RECORDS", "500000"))
KILLS = int(os.environ.get("SEAWAY_LAKE_TABLES_KILLS", "5"))
PARTITIONS = 6
TOPIC = "chaos"


def iceberg_connector(catalog: dict[str, str]) -> dict[str, str]:
    return {"name": "ice", "connector.class": "org.apache.iceberg.connect.IcebergSinkConnector", "tasks.max": "2",
            "topics": TOPIC, "iceberg.tables": "lake.chaos", "iceberg.tables.auto-create-enabled": "true",
            "iceberg.control.commit.interval-ms": "1000", "iceberg.control.commit.timeout-ms": "1000",
            "flush.size": "20000", "include.kafka.metadata": "true",
            "consumer.override.session.timeout.ms": "2000", "consumer.override.heartbeat.interval.ms": "500",
            **{f"iceberg.catalog.{k}": v for k, v in catalog.items()}}


def delta_connector(location: Path) -> dict[str, str]:
    return {"name": "delta", "connector.class": "DeltaSink", "tasks.max": "2", "topics": TOPIC,
            "delta.tables.location": location.as_uri(), "flush.size": "20000", "rotate.schedule.interval.ms": "1000",
            "include.kafka.metadata": "true",
            "consumer.override.session.timeout.ms": "2000", "consumer.override.heartbeat.interval.ms": "500"}


def wait_delta_offsets(path: Path, app_id: str, ends: dict[int, int], timeout: float) -> None:
    from deltalake import DeltaTable

    def reached() -> bool:
        table = DeltaTable(path.as_uri())
        return all(table.transaction_version(delta_app_id(app_id, p)) == n - 1 for p, n in ends.items() if n)

    wait_for(reached, timeout, f"the Delta table at {ends}")


@pytest.mark.timeout(600)
@pytest.mark.parametrize("table_format", ["iceberg", "delta"])
def test_sigkill_while_records_flow_lands_each_offset_once(table_format: str, broker: BrokerProcess,
                                                           tmp_path: Path) -> None:
    delta = tmp_path / "delta"
    config = (iceberg_connector if table_format == "iceberg" else lambda _: delta_connector(delta))
    committed_line = ": commit " if table_format == "iceberg" else " Delta commits in "
    seed = int(os.environ.get("SEAWAY_CHAOS_SEED", time.time_ns() % 1_000_000))
    rng = random.Random(seed)
    catalog = {"type": "sql", "uri": f"sqlite:///{tmp_path}/catalog.db", "warehouse": f"file://{tmp_path}/wh"}
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
            worker = TableWorker(tmp_path / f"worker-{n}", broker.bootstrap, [config(catalog)])
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
    final = TableWorker(tmp_path / "worker-final", broker.bootstrap, [config(catalog)])
    try:
        if table_format == "iceberg":
            table = wait_iceberg_offsets(catalog, "lake.chaos", "ice", ends, TOPIC, 240)
        else:
            wait_delta_offsets(delta / TOPIC, "delta", ends, 240)
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
        commits = assert_delta_versions_hold_their_offsets(delta / TOPIC, "delta", PARTITIONS)
        rows = delta_rows((delta / TOPIC).as_uri())
    print(f"{table_format}, seed {seed}: {RECORDS} records, {KILLS} SIGKILLs ({killed_after_commit} after a "
          f"commit), {commits} commits, {elapsed:.1f} s")
    assert killed_after_commit == KILLS
    assert commits >= 2
    assert assert_rows_equal_topic(rows, broker.bootstrap, TOPIC, PARTITIONS) == RECORDS
