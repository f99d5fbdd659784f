"""docs/lake-tables.md's walk-through: a topic -> an Iceberg table and a Delta table -> Spark, time travel included.

Spark 4.3 (PySpark 4.3.0) has no Iceberg or Delta reader of its own on Maven Central (see
:mod:`seaway.connectors.lake_tables.spark`), so Spark reads the tables through pyiceberg / delta-rs as Arrow;
``spark.read.table`` and SQL work on the view each read registers.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from lake_tables_support import wait_for, wait_iceberg_offsets
from seaway.connect.testing import EmbeddedConnect
from seaway.connectors.lake_tables import delta_app_id
from seaway.connectors.lake_tables.spark import read_delta, read_iceberg

from tests.connectors.spark_sink import lake_check
from tests.lake_cluster.spark_session import shared_test_session
from tests.support.broker import BrokerProcess

WORKER = {"value.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter.schemas.enable": "true"}


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return shared_test_session(tmp_path_factory.mktemp("spark-events"))


def wait_delta(uri: str, ends: dict[int, int]) -> None:
    from deltalake import DeltaTable

    def reached() -> bool:
        try:
            table = DeltaTable(uri)
        except Exception:  # not created yet
            return False
        return all(table.transaction_version(delta_app_id("orders-delta", p)) == n - 1 for p, n in ends.items())

    wait_for(reached, 90, f"{uri} at {ends}")


@pytest.mark.timeout(240)
async def test_topic_to_tables_to_spark_with_time_travel(spark: Any, broker: BrokerProcess, tmp_path: Path) -> None:
    catalog = {"type": "sql", "uri": f"sqlite:///{tmp_path}/catalog.db", "warehouse": f"file://{tmp_path}/warehouse"}
    delta = f"file://{tmp_path}/delta"
    lake_check.create_topic(broker.bootstrap, "orders", 2)
    async with EmbeddedConnect(broker.bootstrap, tmp_path / "connect", worker_props=WORKER) as connect:
        await connect.create_connector("orders-iceberg", {
            "connector.class": "org.apache.iceberg.connect.IcebergSinkConnector", "topics": "orders",
            "iceberg.tables": "shop.orders", "iceberg.tables.auto-create-enabled": "true",
            "iceberg.kafka.bootstrap.servers": broker.bootstrap, "iceberg.control.commit.interval-ms": "1000",
            "iceberg.control.commit.timeout-ms": "1000", "include.kafka.metadata": "true",
            **{f"iceberg.catalog.{k}": v for k, v in catalog.items()}})
        await connect.create_connector("orders-delta", {
            "connector.class": "DeltaSink", "topics": "orders", "delta.tables.location": delta,
            "rotate.schedule.interval.ms": "1000", "include.kafka.metadata": "true"})
        await connect.wait_for_running("orders-iceberg")
        await connect.wait_for_running("orders-delta")
        versions = []
        for batch in range(2):
            lake_check.produce_json(broker.bootstrap, "orders", batch * 500, 500, 2)
            ends = lake_check.end_offsets(broker.bootstrap, "orders", 2)
            table = await asyncio.to_thread(wait_iceberg_offsets, catalog, "shop.orders", "orders-iceberg", ends,
                                            "orders", 90)
            await asyncio.to_thread(wait_delta, f"{delta}/orders", ends)
            from deltalake import DeltaTable

            snapshot = table.current_snapshot()
            assert snapshot is not None
            versions.append((snapshot.snapshot_id, DeltaTable(f"{delta}/orders").version()))

    read_iceberg(spark, catalog, "shop.orders", view="orders_iceberg")
    assert spark.read.table("orders_iceberg").count() == 1000
    by_kind = {r["kind"]: r["n"] for r in spark.sql(
        "SELECT kind, count(*) AS n FROM orders_iceberg GROUP BY kind").collect()}
    assert sum(by_kind.values()) == 1000 and len(by_kind) > 1
    first = read_iceberg(spark, catalog, "shop.orders", snapshot_id=versions[0][0])
    assert first.count() == 500
    assert sorted(r["id"] for r in first.select("id").collect()) == list(range(500))

    read_delta(spark, f"{delta}/orders", view="orders_delta")
    assert spark.sql("SELECT count(*) AS n FROM orders_delta").collect()[0]["n"] == 1000
    assert read_delta(spark, f"{delta}/orders", version=versions[0][1]).count() == 500
    assert spark.sql("SELECT count(*) AS n FROM orders_iceberg i JOIN orders_delta d "
                     "ON i.kafka_partition = d.kafka_partition AND i.kafka_offset = d.kafka_offset "
                     "WHERE i.id = d.id").collect()[0]["n"] == 1000
