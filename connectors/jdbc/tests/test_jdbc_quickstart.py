"""Proof: Confluent's SQLite quickstart configs work as they are, in a real ``seaway connect standalone``.

The two files are Confluent's ``config/source-quickstart-sqlite.properties`` and
``config/sink-quickstart-sqlite.properties`` verbatim (``jdbc:sqlite:test.db`` is relative to
the worker's directory, as in the quickstart); the table and the order are the quickstart's.
"""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

import pytest
from confluent_kafka import Producer
from jdbc_support import WorkerProcess, read_topic
from seaway.connect.testing import EmbeddedBroker

pytestmark = pytest.mark.timeout(90)

SOURCE_QUICKSTART = """\
# A simple example that copies all tables from a SQLite database. The first few settings are
# required for all connectors: a name, the connector class to run, and the maximum number of
# tasks to create:
name=test-source-sqlite-jdbc-autoincrement
connector.class=io.confluent.connect.jdbc.JdbcSourceConnector
tasks.max=1
# The remaining configs are specific to the JDBC source connector. In this example, we connect to a
# SQLite database stored in the file test.db, use and auto-incrementing column called 'id' to
# detect new rows as they are added, and output to topics prefixed with 'test-sqlite-jdbc-', e.g.
# a table called 'users' will be written to the topic 'test-sqlite-jdbc-users'.
connection.url=jdbc:sqlite:test.db
mode=incrementing
incrementing.column.name=id
topic.prefix=test-sqlite-jdbc-
"""

SINK_QUICKSTART = """\
# A simple example that copies from a topic to a SQLite database.
# The first few settings are required for all connectors:
# a name, the connector class to run, and the maximum number of tasks to create:
name=test-sink
connector.class=io.confluent.connect.jdbc.JdbcSinkConnector
tasks.max=1

# The topics to consume from - required for sink connectors like this one
topics=orders

# Configuration specific to the JDBC sink connector.
# We want to connect to a SQLite database stored in the file test.db and auto-create tables.
connection.url=jdbc:sqlite:test.db
auto.create=true
"""

ORDERS_SCHEMA = {"type": "struct", "name": "myrecord", "optional": False, "fields": [
    {"field": "id", "type": "int32", "optional": False}, {"field": "product", "type": "string", "optional": False},
    {"field": "quantity", "type": "int32", "optional": False},
    {"field": "price", "type": "float", "optional": False}]}


def test_confluents_sqlite_quickstarts_as_they_are(jdbc_broker: EmbeddedBroker, tmp_path: Path) -> None:
    with sqlite3.connect(tmp_path / "test.db") as db:  # the quickstart's sqlite3 session
        db.executescript("CREATE TABLE accounts(id INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL, name VARCHAR(255));"
                         "INSERT INTO accounts(name) VALUES('alice');"
                         "INSERT INTO accounts(name) VALUES('bob');")
        db.execute("PRAGMA journal_mode=WAL")
    source = tmp_path / "source-quickstart-sqlite.properties"
    source.write_text(SOURCE_QUICKSTART)
    sink = tmp_path / "sink-quickstart-sqlite.properties"
    sink.write_text(SINK_QUICKSTART)
    producer = Producer({"bootstrap.servers": jdbc_broker.bootstrap})
    producer.produce("orders", value=json.dumps({"schema": ORDERS_SCHEMA, "payload": {
        "id": 999, "product": "foo", "quantity": 100, "price": 50}}).encode())
    assert producer.flush(30) == 0

    with WorkerProcess(jdbc_broker.bootstrap, tmp_path / "worker", [source, sink], cwd=tmp_path) as worker:
        worker.wait_running("test-source-sqlite-jdbc-autoincrement")
        worker.wait_running("test-sink")
        records = read_topic(jdbc_broker.bootstrap, "test-sqlite-jdbc-accounts", at_least=2, settle=0.5)
        assert [value for _key, value in records] == [{"id": 1, "name": "alice"}, {"id": 2, "name": "bob"}]
        with sqlite3.connect(tmp_path / "test.db") as db:
            db.execute("INSERT INTO accounts(name) VALUES('cathy')")
        records = read_topic(jdbc_broker.bootstrap, "test-sqlite-jdbc-accounts", at_least=3, settle=0.5)
        assert [value["name"] for _key, value in records] == ["alice", "bob", "cathy"]
        deadline = time.monotonic() + 30
        rows: list[tuple[object, ...]] = []
        while time.monotonic() < deadline and not rows:
            with sqlite3.connect(tmp_path / "test.db") as db:  # the quickstart's `SELECT * FROM orders;`
                if db.execute("SELECT name FROM sqlite_master WHERE name = 'orders'").fetchall():
                    rows = db.execute("SELECT * FROM orders").fetchall()
            time.sleep(0.2)
        assert rows == [(999, "foo", 100, 50.0)]
