"""Two tasks auto-creating their first tables at once: the namespace both create is not a failure.

pyiceberg's SQL catalog checks that a namespace is absent, then inserts it; a second task passing the
same check before the first one's insert gets the database's unique-constraint error (CI saw
``sqlite3.IntegrityError`` kill a task of the warehouses test). The interleaving is forced here on a
real SQL catalog: between this catalog's check and its insert another catalog on the same database
creates the namespace.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
from pyiceberg.catalog.sql import SqlCatalog
from seaway.connectors.lake_tables.iceberg_config import IcebergSinkConfig
from seaway.connectors.lake_tables.iceberg_tables import IcebergTables


def test_a_namespace_created_meanwhile_by_another_task_is_used(tmp_path: Path) -> None:
    catalog = {"type": "sql", "uri": f"sqlite:///{tmp_path}/catalog.db", "warehouse": f"file://{tmp_path}/wh"}
    config = IcebergSinkConfig.from_props({
        "name": "race", "topics": "t", "iceberg.tables": "db.events", "iceberg.tables.auto-create-enabled": "true",
        "iceberg.kafka.bootstrap.servers": "127.0.0.1:9",
        **{f"iceberg.catalog.{k}": v for k, v in catalog.items()}})
    tables = IcebergTables(config)
    mine = tables.catalog
    assert isinstance(mine, SqlCatalog)
    other = SqlCatalog(config.catalog_name, **catalog)  # another task's catalog, same database
    checks: list[bool] = []

    def absent_then_created_by_the_other(namespace: Any) -> bool:
        if not checks:  # create_namespace's own check: the other task inserts right after it
            checks.append(False)
            other.create_namespace(namespace)
            return False
        return SqlCatalog.namespace_exists(mine, namespace)

    vars(mine)["namespace_exists"] = absent_then_created_by_the_other  # this instance only
    table = tables.for_write("db.events", pa.table({"id": pa.array([1], pa.int64())}), set(), "records")[0]
    assert checks == [False]  # the race happened
    assert table.name() == ("db", "events")
    assert other.load_table("db.events").schema().find_field("id") is not None
