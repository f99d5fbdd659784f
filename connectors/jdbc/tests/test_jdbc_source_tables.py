"""The source's table handling on each database: tables over tasks, new tables found while running, the
custom query mode, Confluent's offset format, and schemas from column metadata (with numeric.mapping)."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest
from jdbc_support import JSON_WORKER, Db, read_topic, unique
from seaway.connect.testing import EmbeddedBroker, EmbeddedConnect

pytestmark = pytest.mark.timeout(90)


def _table(db: Db, name: str) -> str:
    auto = {"postgresql": "SERIAL PRIMARY KEY", "mariadb": "INT AUTO_INCREMENT PRIMARY KEY",
            "sqlite": "INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL"}[db.kind]
    return f"CREATE TABLE {db.q(name)} (id {auto}, label VARCHAR(20) NOT NULL)"


def _fill(db: Db, name: str, labels: list[str]) -> None:
    db.execute(f"INSERT INTO {db.q(name)} (label) VALUES (:label)", params=[{"label": x} for x in labels])


async def test_tables_over_tasks_and_new_tables(db: Db, jdbc_broker: EmbeddedBroker, tmp_path: Path) -> None:
    stem = unique("t")
    names = [f"{stem}_a", f"{stem}_b"]
    for name in names:
        db.execute(_table(db, name))
        _fill(db, name, [f"{name}-1", f"{name}-2"])
    db.execute(_table(db, unique("other")))  # not matched by the include list
    prefix = unique("tables") + "-"
    config = {"connector.class": "JdbcSource", **db.connection_config, "mode": "incrementing",
              "table.include.list": f"(.*\\.)?{stem}_.*", "topic.prefix": prefix, "tasks.max": "2",
              "poll.interval.ms": "100", "table.poll.interval.ms": "300"}
    async with EmbeddedConnect(jdbc_broker.bootstrap, tmp_path, worker_props=JSON_WORKER) as connect:
        await connect.create_connector("tables", config)
        status = await connect.wait_for_running("tables", tasks=2)
        assert len(status.tasks) == 2
        tasks = await connect.herder.task_configs("tables")
        shares = sorted(len(json.loads(t.config["tables"])) for t in tasks)
        assert shares == [1, 1]
        for name in names:
            got = await asyncio.to_thread(read_topic, jdbc_broker.bootstrap, prefix + name, at_least=2, settle=0.3)
            assert [v["label"] for _k, v in got] == [f"{name}-1", f"{name}-2"]
        late = f"{stem}_c"
        db.execute(_table(db, late))
        _fill(db, late, ["late-1"])
        got = await asyncio.to_thread(read_topic, jdbc_broker.bootstrap, prefix + late, at_least=1, settle=0.3)
        assert [v["label"] for _k, v in got] == ["late-1"]
        tasks = await connect.herder.task_configs("tables")
        assert sorted(len(json.loads(t.config["tables"])) for t in tasks) == [1, 2]


async def test_query_mode_and_confluents_offsets(db: Db, jdbc_broker: EmbeddedBroker, tmp_path: Path) -> None:
    people, pets = unique("people"), unique("pets")
    db.execute(_table(db, people), f"CREATE TABLE {db.q(pets)} (owner INT NOT NULL, pet VARCHAR(20) NOT NULL)")
    _fill(db, people, ["ann", "bob"])
    db.execute(f"INSERT INTO {db.q(pets)} (owner, pet) VALUES (1, 'cat'), (2, 'dog')")
    query = (f"SELECT p.id AS id, p.label AS label, x.pet AS pet FROM {db.q(people)} p "
             f"JOIN {db.q(pets)} x ON x.owner = p.id")
    topic = unique("joined")
    config = {"connector.class": "JdbcSource", **db.connection_config, "mode": "incrementing",
              "incrementing.column.name": "id", "query": query, "topic.prefix": topic, "poll.interval.ms": "100"}
    config.pop("schema.pattern", None)
    worker = {**JSON_WORKER, "offset.storage.file.filename": str(tmp_path / "connect.offsets")}
    async with EmbeddedConnect(jdbc_broker.bootstrap, tmp_path, worker_props=worker) as connect:
        await connect.create_connector("joined", config)
        await connect.wait_for_running("joined")
        got = await asyncio.to_thread(read_topic, jdbc_broker.bootstrap, topic, at_least=2, settle=0.3)
        assert [(v["id"], v["label"], v["pet"]) for _k, v in got] == [(1, "ann", "cat"), (2, "bob", "dog")]
        deadline = time.monotonic() + 60  # offsets are flushed every offset.flush.interval.ms
        while (await connect.herder.connector_offsets("joined")).offsets != [({"query": "query"},
                                                                              {"incrementing": 2})]:
            assert time.monotonic() < deadline, await connect.herder.connector_offsets("joined")
            await asyncio.sleep(0.1)


def _schema_fields(jdbc_broker: EmbeddedBroker, topic: str) -> dict[str, dict[str, Any]]:
    consumer_records = read_topic(jdbc_broker.bootstrap, topic, at_least=1, settle=0.3, decode=False)
    envelope = json.loads(consumer_records[0][1])
    return {f["field"]: f for f in envelope["schema"]["fields"]}


async def test_schemas_from_column_metadata(db: Db, jdbc_broker: EmbeddedBroker, tmp_path: Path) -> None:
    table = unique("typed")
    ints = {"postgresql": ("SMALLINT", "INTEGER", "BIGINT"), "mariadb": ("SMALLINT", "INT", "BIGINT"),
            "sqlite": ("SMALLINT", "INT", "BIGINT")}[db.kind]
    db.execute(f"CREATE TABLE {db.q(table)} (id {ints[2]} PRIMARY KEY NOT NULL, s {ints[0]} NOT NULL, "
               f"i {ints[1]}, whole NUMERIC(5,0), frac NUMERIC(10,2), big NUMERIC(30,4), flag BOOLEAN, "
               "t VARCHAR(10) NOT NULL, d DATE, ts TIMESTAMP NULL)")
    db.execute(f"INSERT INTO {db.q(table)} (id, s, i, whole, frac, big, flag, t, d, ts) VALUES "
               "(1, 2, 3, 12345, 12.5, 123456789012345678901234.5678, TRUE, 'x', '2024-01-02', "
               "'2024-01-02 03:04:05')")
    prefix = unique("typed") + "-"
    config = {"connector.class": "JdbcSource", **db.connection_config, "mode": "bulk", "table.whitelist": table,
              "topic.prefix": prefix, "numeric.mapping": "best_fit", "poll.interval.ms": "60000"}
    async with EmbeddedConnect(jdbc_broker.bootstrap, tmp_path, worker_props=JSON_WORKER) as connect:
        await connect.create_connector("typed", config)
        await connect.wait_for_running("typed")
        fields = await asyncio.to_thread(_schema_fields, jdbc_broker, prefix + table)
    types = {name: (f["type"], f.get("name"), f["optional"]) for name, f in fields.items()}
    decimal = "org.apache.kafka.connect.data.Decimal"
    expected = {
        "id": ("int64", None, False), "s": ("int16", None, False), "i": ("int32", None, True),
        # best_fit: NUMERIC(5,0) -> int32, NUMERIC(10,2) -> float64, NUMERIC(30,4) stays Decimal;
        # MariaDB's DECIMAL is never mapped (as Confluent's MySQL driver reports DECIMAL, not NUMERIC)
        "whole": ("int32", None, True) if db.kind != "mariadb" else ("bytes", decimal, True),
        "frac": ("double", None, True) if db.kind != "mariadb" else ("bytes", decimal, True),
        "big": ("bytes", decimal, True), "flag": ("boolean", None, True), "t": ("string", None, False),
        "d": ("int32", "org.apache.kafka.connect.data.Date", True),
        "ts": ("int64", "org.apache.kafka.connect.data.Timestamp", True),
    }
    if db.kind == "sqlite":  # SQLite's integers are all 64-bit, whatever their declared width
        expected.update({"s": ("int64", None, False), "i": ("int64", None, True)})
    assert types == expected
    assert fields["big"]["parameters"] == {"scale": "4", "connect.decimal.precision": "30"}
