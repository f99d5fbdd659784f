"""Test helpers: one database namespace per test, connector configs for it, topic reading."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
import sqlalchemy as sa
from confluent_kafka import Consumer, KafkaException
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]

from tests.support.ports import free_port

JSON_WORKER = {
    "key.converter": "org.apache.kafka.connect.json.JsonConverter",
    "value.converter": "org.apache.kafka.connect.json.JsonConverter",
    "offset.flush.interval.ms": "200",
}


@dataclass
class Db:
    """A namespace (PostgreSQL schema, MariaDB database or SQLite file) and how connectors reach it."""

    kind: str
    engine: sa.Engine
    jdbc_url: str
    user: str | None
    password: str | None
    namespace: str | None
    cleanup: Callable[[], None] = field(default=lambda: None)

    @property
    def connection_config(self) -> dict[str, str]:
        config = {"connection.url": self.jdbc_url}
        if self.user:
            config["connection.user"] = self.user
        if self.password:
            config["connection.password"] = self.password
        if self.kind == "postgresql":
            config["schema.pattern"] = self.namespace or ""
        return config

    def execute(self, *statements: str, params: Sequence[dict[str, Any]] | dict[str, Any] | None = None) -> None:
        with self.engine.begin() as connection:
            for statement in statements:
                if params is None:
                    connection.exec_driver_sql(statement)
                else:
                    connection.execute(sa.text(statement), params)

    def rows(self, sql: str) -> list[tuple[Any, ...]]:
        with self.engine.connect() as connection:
            return [tuple(r) for r in connection.exec_driver_sql(sql)]

    def q(self, name: str) -> str:
        return self.engine.dialect.identifier_preparer.quote_identifier(name)

    def drop(self) -> None:
        self.cleanup()
        self.engine.dispose()


def _unreachable(kind: str, url: str, error: Exception) -> None:
    variable = "SEAWAY_TEST_POSTGRES_URL" if kind == "postgresql" else "SEAWAY_TEST_MARIADB_URL"
    pytest.fail(f"{kind} is not reachable at {sa.make_url(url).render_as_string(hide_password=True)} ({error}).\n"
                f"Start the test databases with `bash scripts/start_databases.sh` (scripts/test.sh does), or set "
                f"{variable} to a server of yours.", pytrace=False)


def make_db(kind: str, server: str | None, tmp_path: Path, namespace: str) -> Db:
    if kind == "sqlite":
        path = tmp_path / f"{namespace}.db"
        engine = sa.create_engine(f"sqlite:///{path}")
        with engine.begin() as connection:
            connection.exec_driver_sql("PRAGMA journal_mode=WAL")  # readers and writers at once
        return Db("sqlite", engine, f"jdbc:sqlite:{path}", None, None, None)
    url = sa.make_url(server or "")
    if kind == "postgresql":
        admin = sa.create_engine(url.set(drivername="postgresql+psycopg"), isolation_level="AUTOCOMMIT")
        try:
            with admin.connect() as connection:
                connection.exec_driver_sql(f'CREATE SCHEMA "{namespace}"')
        except sa.exc.OperationalError as e:
            _unreachable(kind, str(url), e)
        engine = sa.create_engine(url.set(drivername="postgresql+psycopg").update_query_dict(
            {"options": f"-csearch_path={namespace}"}))
        jdbc = f"jdbc:postgresql://{url.host}:{url.port or 5432}/{url.database}?currentSchema={namespace}"

        def drop() -> None:
            engine.dispose()
            with admin.connect() as connection:
                connection.exec_driver_sql(f'DROP SCHEMA "{namespace}" CASCADE')
            admin.dispose()

        return Db(kind, engine, jdbc, url.username, url.password, namespace, drop)
    admin = sa.create_engine(url.set(drivername="mysql+pymysql"))
    try:
        with admin.begin() as connection:
            connection.exec_driver_sql(f"CREATE DATABASE `{namespace}` CHARACTER SET utf8mb4")
    except sa.exc.OperationalError as e:
        _unreachable(kind, str(url), e)
    engine = sa.create_engine(url.set(drivername="mysql+pymysql", database=namespace).update_query_dict(
        {"charset": "utf8mb4"}))
    jdbc = f"jdbc:mysql://{url.host}:{url.port or 3306}/{namespace}"

    def drop_database() -> None:
        engine.dispose()
        with admin.begin() as connection:
            connection.exec_driver_sql(f"DROP DATABASE `{namespace}`")
        admin.dispose()

    return Db("mariadb", engine, jdbc, url.username, url.password, namespace, drop_database)


def unique(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:8]}"


def create_topic(bootstrap: str, topic: str, partitions: int = 1) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(10)


def read_topic(bootstrap: str, topic: str, *, at_least: int = 0, settle: float = 1.0,
               timeout: float = 60.0, decode: bool = True) -> list[tuple[Any, Any]]:
    """Every record of ``topic`` as (key, value) JSON payloads, once ``at_least`` arrived and ``settle`` s passed
    without more (so duplicates would show)."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": unique("reader"),
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.subscribe([topic])
    out: list[tuple[Any, Any]] = []
    deadline = time.monotonic() + timeout
    quiet_since = time.monotonic()
    try:
        while time.monotonic() < deadline:
            messages = consumer.consume(1000, 0.2)
            for message in messages:
                error = message.error()
                if error is not None:
                    if error.code() == -191:  # partition EOF
                        continue
                    if "UNKNOWN_TOPIC" in str(error):
                        continue
                    raise KafkaException(error)
                if decode:
                    out.append((_payload(message.key()), _payload(message.value())))
                else:
                    out.append((message.key(), message.value()))
            if messages:
                quiet_since = time.monotonic()
            elif len(out) >= at_least and time.monotonic() - quiet_since >= settle:
                return out
    finally:
        consumer.close()
    raise TimeoutError(f"{topic}: {len(out)} records, expected at least {at_least}: {[v for _k, v in out][-20:]}")


def _payload(raw: bytes | None) -> Any:
    if raw is None:
        return None
    decoded = json.loads(raw)
    return decoded["payload"] if isinstance(decoded, dict) and "payload" in decoded else decoded


class WorkerProcess:
    """``seaway connect standalone`` as a real process (REST on a free port), for kill -9 and REST tests."""

    def __init__(self, bootstrap: str, data_dir: Path, connectors: Sequence[Path] = (),
                 extra: dict[str, str] | None = None, cwd: Path | None = None) -> None:
        self.data_dir = data_dir
        data_dir.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        props = {"bootstrap.servers": bootstrap, "listeners": self.url,
                 "offset.storage.file.filename": str(data_dir / "connect.offsets"),
                 "offset.flush.interval.ms": "500", **JSON_WORKER, **(extra or {})}
        self.properties = data_dir / "worker.properties"
        self.properties.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
        self.connectors = list(connectors)
        self.cwd = cwd
        self.log_path = data_dir / "worker.log"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 30) -> WorkerProcess:
        seaway = str(Path(sys.executable).with_name("seaway"))
        log = self.log_path.open("ab")
        self.proc = subprocess.Popen([seaway, "connect", "standalone", str(self.properties),
                                      *map(str, self.connectors)], stdout=log, stderr=subprocess.STDOUT,
                                     cwd=self.cwd)
        log.close()
        deadline = time.monotonic() + timeout
        while True:
            assert self.proc.poll() is None, self.log_path.read_text()[-3000:]
            assert time.monotonic() < deadline, "worker not healthy: " + self.log_path.read_text()[-3000:]
            try:
                if httpx.get(self.url + "/health", timeout=1).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.1)

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def __enter__(self) -> WorkerProcess:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.stop()

    def wait_running(self, name: str, tasks: int = 1, timeout: float = 30) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        status: Any = None
        while time.monotonic() < deadline:
            response = httpx.get(f"{self.url}/connectors/{name}/status", timeout=5)
            if response.status_code == 200:
                status = response.json()
                if status["connector"]["state"] == "RUNNING" and len(status["tasks"]) == tasks and all(
                        t["state"] == "RUNNING" for t in status["tasks"]):
                    return dict(status)
            time.sleep(0.1)
        raise AssertionError(f"{name} not running: {status}\n{self.log_path.read_text()[-3000:]}")


def write_properties(path: Path, props: dict[str, str]) -> Path:
    path.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
    return path
