"""Through a real worker's REST API: the password never shows (nor reaches the log), and bad configs are 400s
naming the key.

The password belongs to a PostgreSQL role made for the test (a unique string, so a leak
would be found wherever it went); the connector gets it through ``${file:...}``, the way
docs/jdbc.md recommends, and a second connector gets it in plain text (validation and the
log must still hide it).
"""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path

import httpx
import pytest
from confluent_kafka import Producer
from jdbc_support import Db, WorkerProcess, create_topic, unique
from seaway.connect.testing import EmbeddedBroker

pytestmark = pytest.mark.timeout(120)

SCHEMA = {"type": "struct", "optional": False, "fields": [{"field": "id", "type": "int64", "optional": False},
                                                         {"field": "name", "type": "string", "optional": True}]}


def test_password_is_never_shown_nor_logged(pg: Db, jdbc_broker: EmbeddedBroker, tmp_path: Path) -> None:
    role, secret = f"jdbc_{uuid.uuid4().hex[:8]}", f"Pw-{uuid.uuid4().hex}"
    other = f"Pw2-{uuid.uuid4().hex}"  # the plain-text one: never resolved, so only PASSWORD typing hides it
    table = unique("secret_rows")
    pg.execute(f"CREATE ROLE {role} LOGIN PASSWORD '{secret}'", f"GRANT USAGE ON SCHEMA {pg.namespace} TO {role}",
               f'CREATE TABLE "{table}" (id BIGINT PRIMARY KEY, name TEXT)', f'GRANT ALL ON "{table}" TO {role}')
    secrets = tmp_path / "db.properties"
    secrets.write_text(f"password={secret}\n")
    create_topic(jdbc_broker.bootstrap, table)
    producer = Producer({"bootstrap.servers": jdbc_broker.bootstrap})
    producer.produce(table, value=json.dumps({"schema": SCHEMA, "payload": {"id": 1, "name": "x"}}).encode())
    assert producer.flush(30) == 0
    base = {"connector.class": "JdbcSinkConnector", "topics": table, "connection.url": pg.jdbc_url,
            "connection.user": role, "insert.mode": "upsert", "pk.mode": "record_value", "pk.fields": "id"}
    worker = WorkerProcess(jdbc_broker.bootstrap, tmp_path / "worker", extra={
        "config.providers": "file", "config.providers.file.class": "FileConfigProvider"})
    try:
        with worker:
            url = worker.url
            created = httpx.put(f"{url}/connectors/by-provider/config", json={
                **base, "connection.password": f"${{file:{secrets}:password}}"}, timeout=30)
            assert created.status_code == 201, created.text
            worker.wait_running("by-provider")
            deadline = time.monotonic() + 30
            while not pg.rows(f'SELECT id FROM "{table}"'):  # the password worked
                assert time.monotonic() < deadline
                time.sleep(0.2)
            plain = httpx.put(f"{url}/connectors/plain/config", json={
                **base, "topics": unique("unused"), "connection.password": other}, timeout=30)
            assert plain.status_code == 201, plain.text
            worker.wait_running("plain")
            validated = httpx.put(f"{url}/connector-plugins/JdbcSinkConnector/config/validate",
                                  json={**base, "connection.password": other}, timeout=30)
            assert validated.status_code == 200
            shown = [c["value"]["value"] for c in validated.json()["configs"]
                     if c["value"]["name"] == "connection.password"]
            assert shown == ["[hidden]"]
            answers = [validated.text]
            for path in ("/connectors/by-provider", "/connectors/by-provider/config", "/connectors/by-provider/tasks",
                         "/connectors/by-provider/status", "/connectors/plain/status"):
                response = httpx.get(url + path, timeout=30)
                assert response.status_code == 200, path
                answers.append(response.text)
            expanded = httpx.get(f"{url}/connectors?expand=info&expand=status", timeout=30).json()
            answers.append(json.dumps(expanded["by-provider"]))  # ("plain" shows its config as given, as Kafka)
            assert [a for a in answers if secret in a or other in a] == []
        log = worker.log_path.read_text()
        assert "Creating connector plain" in log and secret not in log and other not in log
    finally:
        pg.execute(f'DROP TABLE "{table}"', f"REVOKE ALL ON SCHEMA {pg.namespace} FROM {role}", f"DROP ROLE {role}")


BAD_CONFIGS = [  # (change, the key the 400 must name)
    ({"mode": "sideways"}, "mode"),
    ({"mode": "timestamp"}, "timestamp.column.name"),
    ({"db.timezone": "Mars/Olympus"}, "db.timezone"),
    ({"connection.url": "jdbc:oracle:thin:@localhost:1521:orcl"}, "connection.url"),
    ({"numeric.mapping": "biggest"}, "numeric.mapping"),
    ({"table.whitelist": "a", "table.blacklist": "b"}, "table.blacklist"),
    ({"batch.max.rows": "0"}, "batch.max.rows"),
]


def test_bad_configs_are_400s_naming_the_key(jdbc_broker: EmbeddedBroker, tmp_path: Path) -> None:
    good = {"connector.class": "io.confluent.connect.jdbc.JdbcSourceConnector",
            "connection.url": f"jdbc:sqlite:{tmp_path / 'x.db'}", "mode": "bulk", "topic.prefix": "x-"}
    sink = {"connector.class": "io.confluent.connect.jdbc.JdbcSinkConnector", "topics": "t",
            "connection.url": f"jdbc:sqlite:{tmp_path / 'x.db'}"}
    with WorkerProcess(jdbc_broker.bootstrap, tmp_path / "worker") as worker:
        for change, key in BAD_CONFIGS:
            response = httpx.put(f"{worker.url}/connectors/bad/config", json={**good, **change}, timeout=30)
            assert response.status_code == 400, (change, response.text)
            assert key in response.json()["message"], (change, response.text)
        for change, key in [({"delete.enabled": "true"}, "delete.enabled"),
                            ({"insert.mode": "upsert"}, "pk.mode"), ({"pk.mode": "kafka", "pk.fields": "a,b"},
                                                                     "pk.fields")]:
            response = httpx.put(f"{worker.url}/connectors/bad/config", json={**sink, **change}, timeout=30)
            assert response.status_code == 400, (change, response.text)
            assert key in response.json()["message"], (change, response.text)
        assert httpx.get(f"{worker.url}/connectors", timeout=30).json() == []
