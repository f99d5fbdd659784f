"""The table sinks on each warehouse: the embedded SQLite + file:// default, a PostgreSQL catalog, s3:// on moto.

Through the Connect runtime and a real broker, four connectors at once: an Iceberg table and a Delta
table of an append topic, and an Iceberg table and a Delta table with id columns of an upsert topic
(updates, tombstones, a key deleted and written again). Half way the worker stops and a new one runs
the connectors with new consumer groups (which start from the topics' beginning): the tasks resume from
the tables' offsets, so nothing lands twice.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from deltalake import DeltaTable
from lake_tables_fixtures import Warehouse
from lake_tables_support import (
    assert_rows_equal_topic,
    assert_snapshots_hold_their_offsets,
    delta_rows,
    iceberg_rows,
    wait_for,
    wait_iceberg_offsets,
)
from seaway.connect.testing import EmbeddedConnect
from seaway.connectors.lake_tables import delta_app_id

from tests.connectors.spark_sink import lake_check
from tests.support.broker import BrokerProcess

WORKER = {"value.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter.schemas.enable": "true",
          "key.converter": "org.apache.kafka.connect.json.JsonConverter", "key.converter.schemas.enable": "false",
          "offset.flush.interval.ms": "500",
          # eight tasks stop together at the end of a phase; within Kafka's default 5 s in total a task still
          # writing on a loaded machine is cancelled and lives on past the test, its control-topic clients
          # still in use while the test's teardown stops the broker and closes leaked clients (the likely
          # cause of a teardown seen once hanging on a committer's control-topic producer)
          "task.shutdown.graceful.timeout.ms": "30000"}
USER = {"type": "struct", "name": "User", "version": 1, "optional": False, "fields": [
    {"field": "id", "type": "int64", "optional": False},
    {"field": "name", "type": "string", "optional": False},
    {"field": "version", "type": "int32", "optional": False}]}
KEYS = 300
PARTITIONS = 3


def produce_users(bootstrap: str, rows: list[tuple[int, int | None]]) -> None:
    """(key, version) pairs, version None = a tombstone; a key always goes to partition key % 3."""
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    try:
        for key, version in rows:
            value = None if version is None else json.dumps(
                {"schema": USER, "payload": {"id": key, "name": f"user-{key}-v{version}", "version": version}}).encode()
            producer.produce("users", value=value, key=str(key).encode(), partition=key % PARTITIONS)
        assert producer.flush(30) == 0
    finally:
        producer.flush(5)


def phase_rows(phase: int) -> list[tuple[int, int | None]]:
    """Phase 1: every key v1, then updates; phase 2: deletes, a deleted key back, more updates."""
    rows: list[tuple[int, int | None]] = []
    if phase == 1:
        rows += [(k, 1) for k in range(KEYS)]
        rows += [(k, 2) for k in range(0, KEYS, 3)]
        return rows
    rows += [(k, None) for k in range(0, KEYS, 5)]
    rows += [(k, 3) for k in range(0, KEYS, 10)]
    rows += [(k, 4) for k in range(1, KEYS, 7)]
    return rows


def expected_users() -> dict[int, int]:
    latest: dict[int, int | None] = {}
    for phase in (1, 2):
        for key, version in phase_rows(phase):
            latest[key] = version
    return {k: v for k, v in latest.items() if v is not None}


def connectors(bootstrap: str, wh: Warehouse) -> dict[str, dict[str, str]]:
    iceberg = {"connector.class": "org.apache.iceberg.connect.IcebergSinkConnector", "tasks.max": "2",
               **wh.iceberg, "iceberg.kafka.bootstrap.servers": bootstrap, "iceberg.tables.auto-create-enabled": "true",
               "iceberg.control.commit.interval-ms": "1000", "iceberg.control.commit.timeout-ms": "1000",
               "include.kafka.metadata": "true"}
    delta = {"connector.class": "DeltaSink", "tasks.max": "2", **wh.delta(), "rotate.schedule.interval.ms": "1000",
             "include.kafka.metadata": "true"}
    return {
        "ice-events": {**iceberg, "topics": "events", "iceberg.tables": "db.events", "flush.size": "3000",
                       "iceberg.tables.default-partition-by": "kind, bucket(id, 4)"},
        "ice-users": {**iceberg, "topics": "users", "iceberg.tables": "db.users",
                      "iceberg.tables.default-id-columns": "id"},
        "delta-events": {**delta, "topics": "events", "flush.size": "3000"},
        "delta-users": {**delta, "topics": "users", "delta.id-columns": "id"},
    }


async def run_phase(broker: BrokerProcess, tmp_path: Path, wh: Warehouse, phase: int, events: int) -> None:
    lake_check.produce_json(broker.bootstrap, "events", (phase - 1) * events, events, PARTITIONS)
    produce_users(broker.bootstrap, phase_rows(phase))
    event_ends = lake_check.end_offsets(broker.bootstrap, "events", PARTITIONS)
    user_ends = lake_check.end_offsets(broker.bootstrap, "users", PARTITIONS)
    async with EmbeddedConnect(broker.bootstrap, tmp_path / f"connect-{phase}", worker_props=WORKER) as connect:
        for name, config in connectors(broker.bootstrap, wh).items():
            # phase 2 in a new consumer group, which starts from the topic's beginning: only the tables'
            # offsets keep the first phase's records from landing twice
            await connect.create_connector(name, {**config, "consumer.override.group.id": f"{name}-{phase}"})
        for name in ("ice-events", "ice-users", "delta-events", "delta-users"):
            await connect.wait_for_running(name, tasks=2)
        await asyncio.to_thread(wait_iceberg_offsets, wh.catalog, "db.events", "ice-events", event_ends, "events", 90,
                                catalog_name=wh.catalog_name)
        await asyncio.to_thread(wait_iceberg_offsets, wh.catalog, "db.users", "ice-users", user_ends, "users", 90,
                                catalog_name=wh.catalog_name)
        for topic, connector, ends in (("events", "delta-events", event_ends), ("users", "delta-users", user_ends)):
            await asyncio.to_thread(wait_delta, wh, topic, connector, ends)
    # A task's stop gives its Iceberg committer 30 s; a commit still running then (seen on a loaded CI
    # machine, against the REST catalog) finishes on its own thread and closes the control topic's
    # clients itself, by design. The test waits for that rather than leave the clients to the leak check.
    await asyncio.to_thread(wait_for, lambda: not any(t.name.startswith("iceberg-coordinator-") and t.is_alive()
                                                      for t in threading.enumerate()),
                            180, "the Iceberg committers to finish")


def wait_delta(wh: Warehouse, topic: str, app_id: str, ends: dict[int, int]) -> None:
    def reached() -> bool:
        try:
            table = DeltaTable(f"{wh.delta_location}/{topic}", storage_options=wh.delta_storage or None)
        except Exception:
            return False
        return all(table.transaction_version(delta_app_id(app_id, p)) == end - 1 for p, end in ends.items() if end)

    wait_for(reached, 90, f"delta table {topic} at {ends}")


def users_of(rows: Any) -> dict[int, int]:
    ids, versions, names = (rows.column(c).to_pylist() for c in ("id", "version", "name"))
    assert len(ids) == len(set(ids)), f"{len(ids) - len(set(ids))} keys with more than one row"
    for i, v, n in zip(ids, versions, names, strict=True):
        assert n == f"user-{i}-v{v}"
    return dict(zip(ids, versions, strict=True))


@pytest.mark.timeout(300)
async def test_exactly_once_and_upserts_on_each_warehouse(warehouse: Warehouse, broker: BrokerProcess,
                                                         tmp_path: Path) -> None:
    events = 6000
    lake_check.create_topic(broker.bootstrap, "events", PARTITIONS)
    lake_check.create_topic(broker.bootstrap, "users", PARTITIONS)
    started = time.monotonic()
    await run_phase(broker, tmp_path, warehouse, 1, events)
    await run_phase(broker, tmp_path, warehouse, 2, events)
    print(f"{warehouse.kind}: both phases landed in {time.monotonic() - started:.1f} s")

    table = await asyncio.to_thread(wait_iceberg_offsets, warehouse.catalog, "db.events", "ice-events",
                                    lake_check.end_offsets(broker.bootstrap, "events", PARTITIONS), "events", 5,
                                    catalog_name=warehouse.catalog_name)
    assert assert_rows_equal_topic(iceberg_rows(table), broker.bootstrap, "events", PARTITIONS) == 2 * events
    assert assert_snapshots_hold_their_offsets(table, "ice-events", "events") >= 2
    assert [f.name for f in table.spec().fields] == ["kind", "id_bucket"]
    landed = delta_rows(f"{warehouse.delta_location}/events", storage_options=warehouse.delta_storage)
    assert assert_rows_equal_topic(landed, broker.bootstrap, "events", PARTITIONS) == 2 * events

    expected = expected_users()
    users = await asyncio.to_thread(wait_iceberg_offsets, warehouse.catalog, "db.users", "ice-users",
                                    lake_check.end_offsets(broker.bootstrap, "users", PARTITIONS), "users", 5,
                                    catalog_name=warehouse.catalog_name)
    assert users.schema().identifier_field_names() == {"id"}
    assert users_of(iceberg_rows(users)) == expected
    delta = delta_rows(f"{warehouse.delta_location}/users", storage_options=warehouse.delta_storage)
    assert users_of(delta) == expected
