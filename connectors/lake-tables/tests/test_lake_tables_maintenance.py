"""``seaway lake compact|expire`` (a subprocess, as cron runs it) on tables the sinks landed in several commits.

Compaction leaves fewer data files and the same rows, and the table's offsets where they were (Iceberg:
in the compaction's snapshot summary; Delta: the txn versions), so a restarted task still resumes from
them; expiry leaves the newest snapshot only (``--older-than-ms 0 --retain-last 1``) and deletes the data
files no snapshot references any more (``--orphans``; Delta: ``vacuum``); rows and offsets stay.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest
from deltalake import DeltaTable
from lake_tables_support import assert_rows_equal_topic, iceberg_table, wait_for, wait_iceberg_offsets
from seaway.connect.testing import EmbeddedConnect
from seaway.connectors.lake_tables import delta_app_id, table_offsets

from tests.connectors.spark_sink import lake_check
from tests.support.broker import BrokerProcess

WORKER = {"value.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter.schemas.enable": "true"}
PARTITIONS = 2


def lake(*args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "seaway.cli.main", "lake", *args], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def data_files(path: Path) -> set[Path]:
    return {p for p in path.rglob("*.parquet") if "metadata" not in p.parts and "_delta_log" not in p.parts}


@pytest.mark.timeout(240)
async def test_compact_and_expire_keep_rows_and_offsets(broker: BrokerProcess, tmp_path: Path) -> None:
    catalog = {"type": "sql", "uri": f"sqlite:///{tmp_path}/catalog.db", "warehouse": f"file://{tmp_path}/warehouse"}
    iceberg = {"name": "ice", "connector.class": "org.apache.iceberg.connect.IcebergSinkConnector", "topics": "t",
               "iceberg.tables": "db.t", "iceberg.tables.auto-create-enabled": "true",
               "iceberg.kafka.bootstrap.servers": broker.bootstrap, "iceberg.control.commit.interval-ms": "1000",
               "iceberg.control.commit.timeout-ms": "1000", "include.kafka.metadata": "true",
               **{f"iceberg.catalog.{k}": v for k, v in catalog.items()}}
    delta = {"name": "delta", "connector.class": "DeltaSink", "topics": "t",
             "delta.tables.location": f"file://{tmp_path}/delta", "rotate.schedule.interval.ms": "1000",
             "include.kafka.metadata": "true"}
    lake_check.create_topic(broker.bootstrap, "t", PARTITIONS)
    async with EmbeddedConnect(broker.bootstrap, tmp_path / "connect", worker_props=WORKER) as connect:
        for config in (iceberg, delta):
            await connect.create_connector(config["name"], config)
            await connect.wait_for_running(config["name"])
        for batch in range(4):  # four commits of each table, so four small files per partition
            lake_check.produce_json(broker.bootstrap, "t", batch * 300, 300, PARTITIONS)
            ends = lake_check.end_offsets(broker.bootstrap, "t", PARTITIONS)
            await asyncio.to_thread(wait_iceberg_offsets, catalog, "db.t", "ice", ends, "t", 90)

            def delta_at(ends: dict[int, int] = ends) -> bool:
                try:
                    table = DeltaTable(f"{tmp_path}/delta/t")
                except Exception:  # not created yet
                    return False
                return all(table.transaction_version(delta_app_id("delta", p)) == n - 1 for p, n in ends.items())

            await asyncio.to_thread(wait_for, delta_at, 90, f"delta at {ends}")
    ice_config = tmp_path / "ice.json"
    ice_config.write_text(json.dumps(iceberg))
    delta_config = tmp_path / "delta.properties"
    delta_config.write_text("".join(f"{k}={v}\n" for k, v in delta.items()))

    before = iceberg_table(catalog, "db.t")
    assert before is not None
    offsets = table_offsets(before, "ice")
    files_before = data_files(tmp_path / "warehouse")
    delta_files_before = len(DeltaTable(f"{tmp_path}/delta/t").file_uris())
    assert len(files_before) >= 4 and delta_files_before >= 4

    print(lake("compact", "--config", str(ice_config)), lake("compact", "--config", str(delta_config)))
    after = iceberg_table(catalog, "db.t")
    assert after is not None
    assert len(after.inspect.files()) < len(files_before)
    assert table_offsets(after, "ice") == offsets
    assert assert_rows_equal_topic(after.scan().to_arrow(), broker.bootstrap, "t", PARTITIONS) == 1200
    compacted = DeltaTable(f"{tmp_path}/delta/t")
    assert len(compacted.file_uris()) < delta_files_before
    assert all(compacted.transaction_version(delta_app_id("delta", p)) == n - 1 for p, n in ends.items())
    assert assert_rows_equal_topic(compacted.to_pyarrow_table(), broker.bootstrap, "t", PARTITIONS) == 1200

    print(lake("expire", "--config", str(ice_config), "--older-than-ms", "0", "--retain-last", "1", "--orphans",
               "--orphan-age-ms", "0"))
    expired = iceberg_table(catalog, "db.t")
    assert expired is not None
    assert len(expired.snapshots()) == 1
    assert table_offsets(expired, "ice") == offsets
    live = {Path(p.removeprefix("file://")) for p in expired.inspect.files().column("file_path").to_pylist()}
    assert data_files(tmp_path / "warehouse") == live  # the replaced small files are gone
    assert assert_rows_equal_topic(expired.scan().to_arrow(), broker.bootstrap, "t", PARTITIONS) == 1200

    print(lake("expire", "--config", str(delta_config), "--retention-hours", "0"))
    vacuumed = DeltaTable(f"{tmp_path}/delta/t")
    live_delta = {Path(u.removeprefix("file://")) for u in vacuumed.file_uris()}
    assert data_files(tmp_path / "delta") == live_delta  # vacuum deleted the compacted-away files
    assert all(vacuumed.transaction_version(delta_app_id("delta", p)) == n - 1 for p, n in ends.items())
    assert assert_rows_equal_topic(vacuumed.to_pyarrow_table(), broker.bootstrap, "t", PARTITIONS) == 1200
