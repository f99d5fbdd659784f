"""Proof: the sink refuses records it cannot map to columns at once, and never makes a database file by accident.

Records without a Struct value schema (JsonConverter with ``schemas.enable=false``,
StringConverter, ByteArrayConverter) used to keep the task RUNNING for ~33 s while it retried
``CREATE TABLE "t" ()`` ten times, then fail with the database's ``near ")": syntax error``.
Now the first such record fails the task, as Confluent's ``RecordValidator`` does, with a trace
naming the record, why it does not fit and the converter setting that gives it a schema; no
table is created and no retry is logged.

A relative SQLite path (``jdbc:sqlite:test.db``) is resolved against the *worker's* working
directory; when no such file exists there the connector is refused with a 400 naming
``connection.url`` instead of silently creating an empty database where the worker runs
(``seaway up``'s folder), which the user never looks at.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
import sqlalchemy as sa
from confluent_kafka import Producer
from jdbc_support import Db, WorkerProcess, create_topic, unique
from seaway.connect.testing import EmbeddedBroker

pytestmark = pytest.mark.timeout(180)

# (connector name, converter settings, key, value, what the trace must say)
CASES: list[tuple[str, dict[str, str], bytes | None, bytes, list[str]]] = [
    ("json-schemaless", {"value.converter": "org.apache.kafka.connect.json.JsonConverter",
                         "value.converter.schemas.enable": "false"},
     None, b'{"id": 1, "name": "alice"}',
     ["requires records with a non-null Struct value and non-null Struct schema",
      "with a dict value and null value schema", "value.converter.schemas.enable=true"]),
    ("string-values", {"value.converter": "org.apache.kafka.connect.storage.StringConverter"},
     None, b"alice",
     ["requires records with a non-null Struct value and non-null Struct schema",
      "with a str value and STRING value schema", "HoistField$Value"]),
    ("json-schemaless-key", {"key.converter": "org.apache.kafka.connect.json.JsonConverter",
                             "key.converter.schemas.enable": "false", "pk.mode": "record_key"},
     b'{"id": 1}', json.dumps({"schema": {"type": "struct", "optional": False, "fields": [
         {"field": "name", "type": "string", "optional": True}]}, "payload": {"name": "alice"}}).encode(),
     ["configured with 'delete.enabled=false' and 'pk.mode=record_key'",
      "requires non-null record keys with schemas", "with a dict key and null key schema",
      "key.converter.schemas.enable=true"]),
]


def _wait_task_failed(url: str, name: str, timeout: float = 60) -> dict[str, Any]:
    """The task's status once FAILED (the deadline only bounds a failure of this test)."""
    deadline = time.monotonic() + timeout
    status: Any = None
    while time.monotonic() < deadline:
        response = httpx.get(f"{url}/connectors/{name}/status", timeout=5)
        if response.status_code == 200:
            status = response.json()
            tasks = status["tasks"]
            if tasks and tasks[0]["state"] == "FAILED":
                return dict(tasks[0])
        time.sleep(0.1)
    raise AssertionError(f"{name}: task not FAILED: {status}")


def _tables(db: Db) -> list[str]:
    return sa.inspect(db.engine).get_table_names(schema=db.namespace if db.kind == "postgresql" else None)


def test_records_without_a_struct_schema_fail_the_task_at_once(db: Db, jdbc_broker: EmbeddedBroker,
                                                               tmp_path: Path) -> None:
    topics = {name: unique(name.replace("-", "_")) for name, *_ in CASES}
    producer = Producer({"bootstrap.servers": jdbc_broker.bootstrap})
    try:
        for name, _converters, key, value, _expected in CASES:
            create_topic(jdbc_broker.bootstrap, topics[name])
            producer.produce(topics[name], key=key, value=value)
        assert producer.flush(30) == 0
    finally:
        producer.close()
    with WorkerProcess(jdbc_broker.bootstrap, tmp_path / "worker") as worker:
        for name, converters, *_ in CASES:
            created = httpx.put(f"{worker.url}/connectors/{name}/config", json={
                "connector.class": "io.confluent.connect.jdbc.JdbcSinkConnector", "topics": topics[name],
                "auto.create": "true", **db.connection_config, **converters}, timeout=30)
            assert created.status_code == 201, created.text
        for name, _converters, _key, _value, expected in CASES:
            task = _wait_task_failed(worker.url, name)
            trace = task["trace"]
            assert f"The JDBC sink connector '{name}'" in trace, trace
            assert f"topic='{topics[name]}',partition=0,offset=0" in trace, trace
            for text in expected:
                assert text in trace, (text, trace)
        log = worker.log_path.read_text()
    assert "retries left" not in log  # failed on the first put, not after max.retries
    assert "syntax error" not in log
    assert [t for t in _tables(db) if t in topics.values()] == []


def test_a_relative_sqlite_path_that_names_no_file_is_refused(jdbc_broker: EmbeddedBroker, tmp_path: Path) -> None:
    """What ``seaway up`` users met: the worker runs in one folder, the database is in another."""
    worker_dir, user_dir = tmp_path / "worker-cwd", tmp_path / "user"
    worker_dir.mkdir()
    user_dir.mkdir()
    with sa.create_engine(f"sqlite:///{user_dir / 'test.db'}").begin() as connection:
        connection.exec_driver_sql("CREATE TABLE accounts(id INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL, name TEXT)")
    source = {"connector.class": "io.confluent.connect.jdbc.JdbcSourceConnector", "connection.url":
              "jdbc:sqlite:test.db", "mode": "incrementing", "topic.prefix": "rel-"}
    sink = {"connector.class": "io.confluent.connect.jdbc.JdbcSinkConnector", "topics": "t",
            "connection.url": "jdbc:sqlite:test.db", "auto.create": "true"}
    with WorkerProcess(jdbc_broker.bootstrap, tmp_path / "worker", cwd=worker_dir) as worker:
        for config in (source, sink):
            response = httpx.put(f"{worker.url}/connectors/relative/config", json=config, timeout=30)
            assert response.status_code == 400, response.text
            message = response.json()["message"]
            assert "connection.url" in message, message
            assert f"{worker_dir / 'test.db'} does not exist" in message, message
            assert "jdbc:sqlite:/" in message, message  # the advice: an absolute path
        assert not (worker_dir / "test.db").exists()
        # an absolute path, or a relative one naming a file in the worker's folder, is accepted
        absolute = httpx.put(f"{worker.url}/connectors/absolute/config", json={
            **source, "connection.url": f"jdbc:sqlite:{user_dir / 'test.db'}"}, timeout=30)
        assert absolute.status_code == 201, absolute.text
        worker.wait_running("absolute")
        (worker_dir / "test.db").write_bytes((user_dir / "test.db").read_bytes())
        relative = httpx.put(f"{worker.url}/connectors/relative/config", json=source, timeout=30)
        assert relative.status_code == 201, relative.text
        worker.wait_running("relative")
