"""Schema evolution of an Iceberg and of a Delta table through the schema registry, with a real worker process
and AvroConverter.

* v1 (id, name) creates the table;
* v2 adds an optional ``email`` (BACKWARD-compatible in the registry): the table gains the column, older
  rows read null, newer ones their value;
* v3 turns ``name`` into a long (registered under compatibility NONE, so the registry takes it): the task
  fails with a message naming the table and the column, and the table takes nothing more: neither rows
  nor offsets nor snapshots (Delta: versions).
"""

from __future__ import annotations

import json
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lake_tables_support import iceberg_table, wait_for, wait_iceberg_offsets
from lake_tables_worker import TableWorker
from seaway.schema_registry.app import create_app
from seaway.schema_registry.client import SchemaRegistryClient
from seaway.schema_registry.serde import AvroSerializer
from seaway.schema_registry.settings import RegistrySettings

from tests.connectors.spark_sink import lake_check
from tests.schema_registry.registry_support import ServedApp
from tests.support.broker import BrokerProcess
from tests.support.ports import free_port

TOPIC = "people"
PARTITIONS = 2
V1: dict[str, Any] = {"type": "record", "name": "Person", "namespace": "lake", "fields": [
    {"name": "id", "type": "long"}, {"name": "name", "type": "string"}]}
V2: dict[str, Any] = {**V1, "fields": [*V1["fields"], {"name": "email", "type": ["null", "string"], "default": None}]}
V3: dict[str, Any] = {**V1, "fields": [{"name": "id", "type": "long"}, {"name": "name", "type": "long"}]}


@pytest.fixture
def registry_url(broker: BrokerProcess) -> Iterator[str]:
    """Seaway's schema registry, keeping its schemas in ``_schemas`` on the test's broker."""
    port = free_port()
    settings = RegistrySettings(kafkastore_bootstrap_servers=broker.bootstrap,
                                listeners=f"http://127.0.0.1:{port}", kafkastore_topic_replication_factor=1)
    with ServedApp(create_app(settings), port) as registry:
        yield registry.url


def produce(bootstrap: str, registry: str, schema: dict[str, Any], start: int, count: int,
            value: Any) -> None:
    with SchemaRegistryClient(registry) as client:
        serialize = AvroSerializer(client, json.dumps(schema))
        lake_check.produce_bodies(bootstrap, TOPIC, PARTITIONS, start, count,
                                  lambda i: serialize(value(i), TOPIC))


def set_compatibility(registry: str, subject: str, level: str) -> None:
    request = urllib.request.Request(f"{registry}/config/{subject}", method="PUT",
                                     data=json.dumps({"compatibility": level}).encode(),
                                     headers={"Content-Type": "application/vnd.schemaregistry.v1+json"})
    with urllib.request.urlopen(request, timeout=30) as answer:
        assert answer.status == 200


def delta_connector(tmp_path: Path) -> dict[str, str]:
    return {"name": "delta", "connector.class": "DeltaSink", "tasks.max": "1", "topics": TOPIC,
            "delta.tables.location": (tmp_path / "delta").as_uri(), "delta.evolve-schema-enabled": "true",
            "rotate.schedule.interval.ms": "1000", "include.kafka.metadata": "true"}


def wait_delta(path: Path, ends: dict[int, int]) -> Any:
    from deltalake import DeltaTable

    def reached() -> Any:
        try:
            table = DeltaTable(path.as_uri())
        except Exception:  # not created yet
            return None
        done = all(table.transaction_version(f"delta-{p}") == n - 1 for p, n in ends.items() if n)
        return table if done else None

    return wait_for(reached, 90, f"the Delta table at {ends}")


def connector(tmp_path: Path) -> dict[str, str]:
    return {"name": "ice", "connector.class": "IcebergSinkConnector", "tasks.max": "1", "topics": TOPIC,
            "iceberg.tables": "crm.people", "iceberg.tables.auto-create-enabled": "true",
            "iceberg.tables.evolve-schema-enabled": "true", "iceberg.control.commit.interval-ms": "1000",
            "iceberg.control.commit.timeout-ms": "1000", "include.kafka.metadata": "true",
            "iceberg.catalog.type": "sql", "iceberg.catalog.uri": f"sqlite:///{tmp_path}/catalog.db",
            "iceberg.catalog.warehouse": f"file://{tmp_path}/warehouse"}


@pytest.mark.timeout(240)
def test_iceberg_compatible_change_adds_a_column_incompatible_fails_and_writes_nothing(
        broker: BrokerProcess, registry_url: str, tmp_path: Path) -> None:
    catalog = {"type": "sql", "uri": f"sqlite:///{tmp_path}/catalog.db", "warehouse": f"file://{tmp_path}/warehouse"}
    lake_check.create_topic(broker.bootstrap, TOPIC, PARTITIONS)
    produce(broker.bootstrap, registry_url, V1, 0, 100, lambda i: {"id": i, "name": f"p{i}"})
    worker = TableWorker(tmp_path / "worker", broker.bootstrap, [connector(tmp_path)], {
        "value.converter": "io.confluent.connect.avro.AvroConverter",
        "value.converter.schema.registry.url": registry_url})
    try:
        ends = lake_check.end_offsets(broker.bootstrap, TOPIC, PARTITIONS)
        table = wait_iceberg_offsets(catalog, "crm.people", "ice", ends, TOPIC, 90)
        assert "email" not in table.schema().column_names

        produce(broker.bootstrap, registry_url, V2, 100, 50, lambda i: {"id": i, "name": f"p{i}", "email": f"{i}@x"})
        ends = lake_check.end_offsets(broker.bootstrap, TOPIC, PARTITIONS)
        table = wait_iceberg_offsets(catalog, "crm.people", "ice", ends, TOPIC, 90)
        rows = table.scan().to_arrow().sort_by("id")
        assert rows.num_rows == 150
        assert table.schema().find_field("email").optional
        assert rows.column("email").to_pylist() == [None] * 100 + [f"{i}@x" for i in range(100, 150)]
        assert rows.column("name").to_pylist() == [f"p{i}" for i in range(150)]
        snapshots = len(table.snapshots())

        set_compatibility(registry_url, f"{TOPIC}-value", "NONE")
        produce(broker.bootstrap, registry_url, V3, 150, 10, lambda i: {"id": i, "name": i})

        def failed() -> str | None:
            _, status = worker.request("GET", "/connectors/ice/status")
            tasks = status.get("tasks", []) if isinstance(status, dict) else []
            return tasks[0].get("trace") if tasks and tasks[0]["state"] == "FAILED" else None

        trace = wait_for(failed, 60, "the task to fail on the incompatible schema")
        assert "Table crm.people" in trace and "name" in trace and "Nothing of them was written" in trace, trace
        time.sleep(3)  # three commit intervals: nothing may land after the failure
        after = iceberg_table(catalog, "crm.people")
        assert after is not None
        assert len(after.snapshots()) == snapshots
        assert after.scan().to_arrow().num_rows == 150
        assert after.schema().find_field("name").field_type.__class__.__name__ == "StringType"
    finally:
        worker.stop()


@pytest.mark.timeout(240)
def test_delta_compatible_change_adds_a_column_incompatible_fails_and_writes_nothing(
        broker: BrokerProcess, registry_url: str, tmp_path: Path) -> None:
    path = tmp_path / "delta" / TOPIC
    lake_check.create_topic(broker.bootstrap, TOPIC, PARTITIONS)
    produce(broker.bootstrap, registry_url, V1, 0, 100, lambda i: {"id": i, "name": f"p{i}"})
    worker = TableWorker(tmp_path / "worker", broker.bootstrap, [delta_connector(tmp_path)], {
        "value.converter": "io.confluent.connect.avro.AvroConverter",
        "value.converter.schema.registry.url": registry_url})
    try:
        table = wait_delta(path, lake_check.end_offsets(broker.bootstrap, TOPIC, PARTITIONS))
        assert "email" not in table.schema().to_arrow().names

        produce(broker.bootstrap, registry_url, V2, 100, 50, lambda i: {"id": i, "name": f"p{i}", "email": f"{i}@x"})
        table = wait_delta(path, lake_check.end_offsets(broker.bootstrap, TOPIC, PARTITIONS))
        rows = table.to_pyarrow_table().sort_by("id")
        assert rows.num_rows == 150
        assert rows.column("email").to_pylist() == [None] * 100 + [f"{i}@x" for i in range(100, 150)]
        assert rows.column("name").to_pylist() == [f"p{i}" for i in range(150)]
        version = table.version()

        set_compatibility(registry_url, f"{TOPIC}-value", "NONE")
        produce(broker.bootstrap, registry_url, V3, 150, 10, lambda i: {"id": i, "name": i})

        def failed() -> str | None:
            _, status = worker.request("GET", "/connectors/delta/status")
            tasks = status.get("tasks", []) if isinstance(status, dict) else []
            return tasks[0].get("trace") if tasks and tasks[0]["state"] == "FAILED" else None

        trace = wait_for(failed, 60, "the task to fail on the incompatible schema")
        assert "Delta table" in trace and "name" in trace and "Nothing of them was written" in trace, trace
        time.sleep(3)
        from deltalake import DeltaTable

        after = DeltaTable(path.as_uri())
        assert after.version() == version
        assert after.to_pyarrow_table().num_rows == 150
    finally:
        worker.stop()
