"""Proof: each source mode on each database, with inserts and updates while the connector runs, rows
whose timestamps commit late, and a stop and start in the middle: every change arrives once.

The connector runs in a real standalone worker (``seaway.connect.testing.EmbeddedConnect``)
against a real broker, producing JSON with schemas; offsets go to the worker's offsets file,
which the second worker reads.
"""

from __future__ import annotations

import asyncio
import datetime
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from jdbc_support import JSON_WORKER, Db, read_topic, unique
from seaway.connect.testing import EmbeddedBroker, EmbeddedConnect

pytestmark = pytest.mark.timeout(120)

MODES = ["bulk", "incrementing", "timestamp", "timestamp+incrementing"]
DELAY_MS = 1000


def _ddl(db: Db, table: str) -> str:
    t = db.q(table)
    if db.kind == "postgresql":
        return f"CREATE TABLE {t} (id SERIAL PRIMARY KEY, name VARCHAR(40) NOT NULL, updated TIMESTAMP(3) NOT NULL)"
    if db.kind == "mariadb":
        return (f"CREATE TABLE {t} (id INT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(40) NOT NULL, "
                "updated DATETIME(3) NOT NULL)")
    return (f"CREATE TABLE {t} (id INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL, name TEXT NOT NULL, "
            "updated TIMESTAMP NOT NULL)")


class Changes:
    """Inserts and updates with strictly increasing timestamps (ms), and the state they leave."""

    def __init__(self, db: Db, table: str) -> None:
        self.db, self.table = db, table
        self.state: dict[int, str] = {}
        self.log: list[tuple[int, str]] = []  # (id, name) of every insert and update, in commit order
        self.next_id = 1
        self._last = datetime.datetime(2000, 1, 1)

    def now(self) -> datetime.datetime:
        moment = datetime.datetime.now(datetime.UTC).replace(tzinfo=None)
        moment = moment.replace(microsecond=moment.microsecond // 1000 * 1000)
        if moment <= self._last:
            moment = self._last + datetime.timedelta(milliseconds=1)
        self._last = moment
        return moment

    def _ts(self, moment: datetime.datetime) -> Any:
        return moment.strftime("%Y-%m-%d %H:%M:%S.%f") if self.db.kind == "sqlite" else moment

    def insert(self, name: str, moment: datetime.datetime | None = None) -> int:
        row_id = self.next_id
        self.next_id += 1
        self.db.execute(f"INSERT INTO {self.db.q(self.table)} (name, updated) VALUES (:name, :updated)",
                        params={"name": name, "updated": self._ts(moment or self.now())})
        self.state[row_id] = name
        self.log.append((row_id, name))
        return row_id

    def update(self, row_id: int, name: str) -> None:
        self.db.execute(f"UPDATE {self.db.q(self.table)} SET name = :name, updated = :updated WHERE id = :id",
                        params={"name": name, "updated": self._ts(self.now()), "id": row_id})
        self.state[row_id] = name
        self.log.append((row_id, name))

    def late_commit(self) -> None:
        """A row whose timestamp is older than a row committed before it (a transaction that committed late)."""
        if self.db.kind == "sqlite":  # one writer at a time: model it with an explicit earlier timestamp
            early = self.now()
            time.sleep(0.05)
            on_time = self.insert("on-time")
            self.db.execute(f"INSERT INTO {self.db.q(self.table)} (name, updated) VALUES (:name, :updated)",
                            params={"name": "late", "updated": self._ts(early)})
            late = self.next_id
            self.next_id += 1
        else:
            late_moment = self.now()
            late = self.next_id
            self.next_id += 1
            started, release = threading.Event(), threading.Event()

            def slow_transaction() -> None:
                with self.db.engine.begin() as connection:
                    connection.exec_driver_sql(
                        f"INSERT INTO {self.db.q(self.table)} (name, updated) VALUES ('late', "
                        f"'{late_moment.strftime('%Y-%m-%d %H:%M:%S.%f')}')")  # takes the next id now
                    started.set()
                    release.wait(10)

            thread = threading.Thread(target=slow_transaction)
            thread.start()
            started.wait(10)
            time.sleep(0.05)
            on_time = self.insert("on-time")
            time.sleep(0.4)  # the connector polls meanwhile: it must not move past the late row's timestamp
            release.set()
            thread.join(10)
        self.state[late] = "late"
        # the late row commits after on-time, but its timestamp is earlier: that is the order ts modes deliver
        self.log.insert(len(self.log) - 1, (late, "late"))
        assert on_time != late


def _config(db: Db, table: str, mode: str, topic_prefix: str) -> dict[str, str]:
    config = {"connector.class": "io.confluent.connect.jdbc.JdbcSourceConnector", "tasks.max": "1",
              **db.connection_config, "mode": mode, "table.whitelist": table, "topic.prefix": topic_prefix,
              "poll.interval.ms": "1000" if mode == "bulk" else "100", "batch.max.rows": "3"}
    if mode in ("incrementing", "timestamp+incrementing"):
        config["incrementing.column.name"] = "id"
    if mode in ("timestamp", "timestamp+incrementing"):
        config["timestamp.column.name"] = "updated"
        config["timestamp.delay.interval.ms"] = str(DELAY_MS)
    return config


def _pairs(records: list[tuple[Any, Any]]) -> list[tuple[int, str]]:
    return [(value["id"], value["name"]) for _key, value in records]


def _expected(mode: str, changes: Changes) -> list[tuple[int, str]]:
    return list(changes.log)


async def _wait_for(bootstrap: str, topic: str, mode: str, changes: Changes, timeout: float = 40) -> None:
    if mode == "bulk":  # every poll is a snapshot: wait until the last one is the table as it is now
        deadline = time.monotonic() + timeout
        want = sorted(changes.state.items())
        while True:
            got = _pairs(await asyncio.to_thread(read_topic, bootstrap, topic, at_least=len(want), settle=0.3))
            if sorted(got[-len(want):]) == want:
                return
            assert time.monotonic() < deadline, f"last snapshot {got[-len(want):]} != {want}"
            await asyncio.sleep(0.3)
    expected = _expected(mode, changes)
    if mode == "incrementing":  # new rows only, each once, in id order (read before or after an update)
        expected = [(row_id, "") for row_id in sorted(changes.state)]
    got = _pairs(await asyncio.to_thread(read_topic, bootstrap, topic, at_least=len(expected), settle=1.0,
                                         timeout=timeout))
    if mode == "incrementing":
        got = [(row_id, "") for row_id, _name in got]
    assert got == expected


@pytest.mark.parametrize("mode", MODES)
async def test_each_change_once_across_a_restart(db: Db, jdbc_broker: EmbeddedBroker, tmp_path: Path,
                                                 mode: str) -> None:
    table = unique("accounts")
    db.execute(_ddl(db, table))
    changes = Changes(db, table)
    for i in range(5):
        changes.insert(f"first-{i}")
    prefix = unique("src") + "-"
    topic = prefix + table
    config = _config(db, table, mode, prefix)
    worker = {**JSON_WORKER, "offset.storage.file.filename": str(tmp_path / "connect.offsets")}

    async with EmbeddedConnect(jdbc_broker.bootstrap, tmp_path, worker_props=worker) as connect:
        await connect.create_connector("jdbc-source", config)
        await connect.wait_for_running("jdbc-source")
        await _wait_for(jdbc_broker.bootstrap, topic, mode, changes)
        # while it runs: inserts, then updates of old and new rows, then a late commit; each step is
        # read before the next (a row changed twice before a query sees it is read once, as it is then)
        for i in range(4):
            changes.insert(f"second-{i}")
        await _wait_for(jdbc_broker.bootstrap, topic, mode, changes)
        changes.update(2, "second-update-2")
        changes.update(6, "second-update-6")
        await _wait_for(jdbc_broker.bootstrap, topic, mode, changes)
        if mode.startswith("timestamp"):
            changes.late_commit()
            await _wait_for(jdbc_broker.bootstrap, topic, mode, changes)

    # stopped: changes meanwhile are read by the next worker, from the stored offsets, once
    for i in range(3):
        changes.insert(f"third-{i}")
    changes.update(1, "third-update-1")
    async with EmbeddedConnect(jdbc_broker.bootstrap, tmp_path, worker_props=worker) as connect:
        await connect.create_connector("jdbc-source", config)
        await connect.wait_for_running("jdbc-source")
        changes.insert("fourth")
        await _wait_for(jdbc_broker.bootstrap, topic, mode, changes)
