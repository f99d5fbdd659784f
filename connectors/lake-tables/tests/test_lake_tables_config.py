"""Apache Iceberg's Kafka Connect config names through a real worker's REST API: an Iceberg user's config runs
unchanged; what the sink does not support is a 400 that names the key (never a setting silently ignored).
The Delta sink's keys likewise.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from lake_tables_support import iceberg_table, wait_iceberg_offsets
from lake_tables_worker import TableWorker
from seaway.connect.api import ConfigError
from seaway.connectors.lake_tables import DeltaSinkConfig, IcebergSinkConfig

from tests.connectors.spark_sink import lake_check
from tests.support.broker import BrokerProcess


def iceberg_users_config(bootstrap: str, tmp_path: Path) -> dict[str, str]:
    """A config as Iceberg's docs write it (class name, catalog, control topic, commit interval)."""
    return {
        "connector.class": "org.apache.iceberg.connect.IcebergSinkConnector",
        "tasks.max": "2",
        "topics": "events",
        "iceberg.tables": "db.events",
        "iceberg.tables.auto-create-enabled": "true",
        "iceberg.tables.evolve-schema-enabled": "true",
        "iceberg.tables.default-partition-by": "kind",
        "iceberg.control.topic": "control-iceberg",
        "iceberg.control.commit.interval-ms": "1000",
        "iceberg.control.commit.timeout-ms": "1000",
        "iceberg.catalog": "demo",
        "iceberg.catalog.type": "sql",
        "iceberg.catalog.uri": f"sqlite:///{tmp_path}/catalog.db",
        "iceberg.catalog.warehouse": f"file://{tmp_path}/warehouse",
        "iceberg.kafka.bootstrap.servers": bootstrap,
        "iceberg.tables.auto-create-props.write.format.default": "parquet",
        "include.kafka.metadata": "true",
    }


def status(worker: TableWorker, name: str) -> dict[str, Any]:
    code, body = worker.request("GET", f"/connectors/{name}/status")
    assert code == 200, body
    assert isinstance(body, dict)
    return body


@pytest.mark.timeout(180)
def test_iceberg_names_run_and_unsupported_keys_are_400s(broker: BrokerProcess, tmp_path: Path) -> None:
    lake_check.create_topic(broker.bootstrap, "events", 3)
    lake_check.produce_json(broker.bootstrap, "events", 0, 3000, 3)
    good = iceberg_users_config(broker.bootstrap, tmp_path)
    worker = TableWorker(tmp_path / "worker", broker.bootstrap, [])
    try:
        for key, value, says in [
            ("iceberg.tables.upsert-mode-enabled", "true", "iceberg.tables.default-id-columns"),
            ("iceberg.tables.cdc-field", "op", "not supported"),
            ("iceberg.tables.schema-case-insensitive", "true", "exact name"),
            ("iceberg.tables.default-commit-branch", "audit", "main branch"),
            ("iceberg.hadoop-conf-dir", "/etc/hadoop", "no Hadoop configuration"),
            ("iceberg.catalog.type", "hive", "'hive' is not supported"),
            ("iceberg.control.commit.interval-ms", "500", "must not exceed"),  # timeout 1000 > interval
            ("iceberg.tables.default-partition-by", "kind, months(ts, 3)", "iceberg.tables.default-partition-by"),
            ("iceberg.tabels", "db.events", "not an Iceberg sink setting"),
        ]:
            code, body = worker.request("PUT", "/connectors/bad/config", {**good, key: value})
            assert code == 400, (key, code, body)
            assert isinstance(body, dict) and body["error_code"] == 400
            named = "iceberg.control.commit.timeout-ms" if key == "iceberg.control.commit.interval-ms" else key
            assert named in body["message"] and says in body["message"], (key, body["message"])
        code, body = worker.request("GET", "/connectors")
        assert code == 200 and body == []  # nothing was created by the refused configs

        code, body = worker.request("PUT", "/connectors/ice/config", good)
        assert code == 201, body
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            current = status(worker, "ice")
            if [t["state"] for t in current["tasks"]] == ["RUNNING", "RUNNING"]:
                break
            time.sleep(0.3)
        assert [t["state"] for t in status(worker, "ice")["tasks"]] == ["RUNNING", "RUNNING"]
        catalog = {"type": "sql", "uri": good["iceberg.catalog.uri"], "warehouse": good["iceberg.catalog.warehouse"]}
        table = wait_iceberg_offsets(catalog, "db.events", "ice", lake_check.end_offsets(broker.bootstrap, "events", 3),
                                     "events", 60, catalog_name="demo")
        assert [f.name for f in table.spec().fields] == ["kind"]
        assert table.properties.get("write.format.default") == "parquet"
        assert len(table.scan().to_arrow()) == 3000
    finally:
        worker.stop()
    assert iceberg_table(catalog, "db.events", "demo") is not None
    assert iceberg_table(catalog, "db.events") is None  # the catalog's name is iceberg.catalog's, not the default


@pytest.mark.parametrize(("props", "key"), [
    ({"iceberg.tables": "events"}, "iceberg.tables"),  # no namespace
    ({"iceberg.tables": "", "iceberg.tables.dynamic-enabled": "true"}, "iceberg.tables.route-field"),
    ({"iceberg.tables.dynamic-enabled": "true", "iceberg.tables.route-field": "t"}, "iceberg.tables"),
    ({"iceberg.table.db.events.route-regex": "(unclosed"}, "iceberg.table.db.events.route-regex"),
    ({"iceberg.catalog.uri": ""}, "iceberg.catalog.uri"),
])
def test_cross_key_rules_name_the_key(props: dict[str, str], key: str, tmp_path: Path) -> None:
    base = {"topics": "events", "iceberg.tables": "db.events", "iceberg.catalog.type": "sql",
            "iceberg.catalog.uri": f"sqlite:///{tmp_path}/c.db", "iceberg.catalog.warehouse": "s3://bucket/wh"}
    with pytest.raises(ConfigError) as info:
        IcebergSinkConfig.from_props({**base, **props})
    assert info.value.name == key, info.value


def test_iceberg_defaults_and_per_table_keys(tmp_path: Path) -> None:
    config = IcebergSinkConfig.from_props({
        "name": "c", "topics": "events", "iceberg.tables": "db.a,db.b", "iceberg.tables.default-id-columns": "id",
        "iceberg.table.db.b.id-columns": "k1, k2", "iceberg.table.db.b.partition-by": "day(ts), bucket(8, id)",
        "iceberg.catalog.warehouse": f"file://{tmp_path}/wh"})
    assert (config.control_topic, config.commit_interval_ms, config.commit_timeout_ms, config.catalog_name,
            config.connect_group_id) == ("control-iceberg", 300_000, 30_000, "iceberg", "connect-c")
    assert config.table("db.a").id_columns == ("id",)
    assert config.table("db.b").id_columns == ("k1", "k2")
    assert [(t.transform, t.column, t.arg) for t in config.table("db.b").partition_by] == [
        ("day", "ts", None), ("bucket", "id", 8)]


@pytest.mark.parametrize(("props", "key"), [
    ({"delta.tables.location": ""}, "delta.tables.location"),
    ({"delta.app-id": "x"}, "delta.app-id"),  # a typo of delta.app.id
    ({"delta.checkpoint.interval": "0"}, "delta.checkpoint.interval"),
    ({"partitioner.class": "hourly"}, "partitioner.class"),  # Delta partitions by column values only
])
def test_delta_bad_keys_name_the_key(props: dict[str, str], key: str, tmp_path: Path) -> None:
    base = {"name": "d", "topics": "events", "delta.tables.location": (tmp_path / "delta").as_uri()}
    with pytest.raises(ConfigError) as info:
        DeltaSinkConfig.from_props({**base, **props})
    assert info.value.name == key, info.value


def test_delta_defaults(tmp_path: Path) -> None:
    config = DeltaSinkConfig.from_props({"name": "d", "topics": "events",
                                         "delta.tables.location": (tmp_path / "delta").as_uri() + "/",
                                         "delta.storage.AWS_REGION": "eu-west-1"})
    assert (config.app_id, config.checkpoints, config.checkpoint_interval, config.flush_size, config.id_columns) == (
        "d", True, 10, 50_000, ())
    assert config.table_uri("events") == f"{(tmp_path / 'delta').as_uri()}/events"
    assert config.storage_options == {"AWS_REGION": "eu-west-1"}


def test_catalog_properties_defaults_and_jdbc_uris(tmp_path: Path) -> None:
    from seaway.connectors.lake_tables.catalog import catalog_properties

    assert catalog_properties({"warehouse": f"file://{tmp_path}/wh"}) == {
        "type": "sql", "uri": f"sqlite:///{tmp_path}/wh/iceberg_catalog.db", "warehouse": f"file://{tmp_path}/wh"}
    jdbc = catalog_properties({"type": "jdbc", "uri": "jdbc:postgresql://db:5432/lake", "jdbc.user": "u",
                               "jdbc.password": "p w", "warehouse": "s3://bucket/wh"})
    assert jdbc["type"] == "sql" and jdbc["uri"].startswith("postgresql+psycopg2://u:p%20w@db:5432/lake"), jdbc
    assert catalog_properties({"uri": "jdbc:sqlite:/data/c.db", "warehouse": "file:///data/wh"})["uri"] == \
        "sqlite:////data/c.db"
    rest = catalog_properties({"uri": "https://catalog.example/api", "warehouse": "lake"})
    assert rest["type"] == "rest" and rest["uri"] == "https://catalog.example/api"
