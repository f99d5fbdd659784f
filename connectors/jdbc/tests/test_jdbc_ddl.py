"""Proof: auto.create and auto.evolve issue the DDL docs/jdbc.md documents, per dialect, and the table works.

The sink runs in a real worker; the statements it logs are compared with the ``sql`` blocks
of docs/jdbc.md marked ``<!-- ddl:<database>:create -->`` and ``<!-- ddl:<database>:evolve -->``
(the table is called ``orders`` there), then rows written before and after the evolution are
read back.
"""

from __future__ import annotations

import json
import logging
import re
import time
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Producer
from jdbc_support import JSON_WORKER, Db, create_topic, unique
from seaway.connect.testing import EmbeddedBroker, EmbeddedConnect

pytestmark = pytest.mark.timeout(90)

DOCS = Path(__file__).resolve().parents[3] / "docs" / "jdbc.md"

V1: dict[str, Any] = {"type": "struct", "name": "orders", "optional": False, "fields": [
    {"field": "id", "type": "int64", "optional": False},
    {"field": "product", "type": "string", "optional": False},
    {"field": "quantity", "type": "int32", "optional": False},
    {"field": "price", "type": "bytes", "optional": True, "name": "org.apache.kafka.connect.data.Decimal",
     "version": 1, "parameters": {"scale": "2", "connect.decimal.precision": "10"}},
    {"field": "gift", "type": "boolean", "optional": True},
    {"field": "ordered_at", "type": "int64", "optional": False, "name": "org.apache.kafka.connect.data.Timestamp",
     "version": 1},
]}
V2 = {**V1, "fields": [*V1["fields"],
                       {"field": "note", "type": "string", "optional": True},
                       {"field": "ship_by", "type": "int32", "optional": True,
                        "name": "org.apache.kafka.connect.data.Date", "version": 1}]}


def documented(database: str, step: str) -> list[str]:
    """The statements of the docs' block for ``database`` and ``step`` (create, evolve)."""
    text = DOCS.read_text()
    match = re.search(rf"<!-- ddl:{database}:{step} -->\s*```sql\n(.*?)```", text, re.DOTALL)
    assert match, f"docs/jdbc.md has no ddl:{database}:{step} block"
    return [s.strip() for s in match.group(1).split(";") if s.strip()]


def _produce(bootstrap: str, topic: str, schema: dict[str, Any], payloads: list[dict[str, Any]]) -> None:
    producer = Producer({"bootstrap.servers": bootstrap})
    for payload in payloads:
        producer.produce(topic, value=json.dumps({"schema": schema, "payload": payload}).encode())
    assert producer.flush(30) == 0


def _wait_rows(db: Db, table: str, count: int, timeout: float = 30) -> list[tuple[Any, ...]]:
    deadline = time.monotonic() + timeout
    rows: list[tuple[Any, ...]] = []
    while time.monotonic() < deadline:
        try:
            rows = db.rows(f"SELECT * FROM {db.q(table)} ORDER BY {db.q('id')}")
        except Exception:
            rows = []
        if len(rows) == count:
            return rows
        time.sleep(0.2)
    raise AssertionError(f"{table}: {rows}")


async def test_auto_create_and_evolve_issue_the_documented_ddl(db: Db, jdbc_broker: EmbeddedBroker, tmp_path: Path,
                                                                caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="seaway.connectors.jdbc.writer")
    topic = unique("orders")
    create_topic(jdbc_broker.bootstrap, topic)
    config = {"connector.class": "JdbcSink", "topics": topic, **db.connection_config, "auto.create": "true",
              "auto.evolve": "true", "pk.mode": "record_value", "pk.fields": "id", "insert.mode": "upsert"}
    first = {"id": 1, "product": "foo", "quantity": 100, "price": "E4g=", "gift": True, "ordered_at": 1700000000123}
    second = {**first, "id": 2, "price": None, "gift": None, "note": "évolué", "ship_by": 19700}
    async with EmbeddedConnect(jdbc_broker.bootstrap, tmp_path, worker_props=JSON_WORKER) as connect:
        await connect.create_connector("ddl-sink", config)
        await connect.wait_for_running("ddl-sink")
        _produce(jdbc_broker.bootstrap, topic, V1, [first])
        _wait_rows(db, topic, 1)
        _produce(jdbc_broker.bootstrap, topic, V2, [second])
        rows = _wait_rows(db, topic, 2)

    home = {"postgresql": '"public"', "mariadb": "`shop`"}.get(db.kind)
    quote = '"' if db.kind != "mariadb" else "`"
    issued = [r.getMessage().split(": ", 1)[1].replace(topic, "orders")
              .replace(f"{quote}{db.namespace}{quote}", home or "") for r in caplog.records
              if r.name == "seaway.connectors.jdbc.writer" and r.getMessage().startswith(("Creating table",
                                                                                        "Amending table"))]
    assert issued == documented(db.kind, "create") + documented(db.kind, "evolve")
    assert rows[0][:3] == (1, "foo", 100) and rows[1][:3] == (2, "foo", 100)
    assert rows[1][-2:][0] == "évolué" and rows[0][-2] is None
