"""Issue 20's proof for the JDBC source: exactly-once (KIP-618) through five kill -9s of the worker.

A real ``seaway connect distributed`` worker with ``exactly.once.source.support=enabled`` (on
Seaway's broker) runs a JdbcSourceConnector in ``incrementing`` mode with
``exactly.once.support=required`` on a SQLite file and on PostgreSQL (when
``SEAWAY_TEST_POSTGRES_URL`` is set: ``scripts/start_databases.sh`` sets it). A thread inserts
rows the whole time, also while the worker is down. Five times, once the (re)started worker
committed its first transaction, it is SIGKILLed at a random moment up to 0.2 s later and started
again; the last run reads the rest. A ``read_committed`` consumer must then see every row exactly
once and in id order, and a ``read_uncommitted`` one must see more (the killed runs' aborted
transactions: the kills did land inside transactions). Transactions end every 500 ms
(``transaction.boundary=interval``) so that they stay open across polls: with the default ``poll``
boundary the restarted task catches up within a fraction of a second and then commits a few-
millisecond transaction per insert, so the kills landed between transactions (checked: every row
once in two runs, but no aborted records, which proves less). The same loop with
``exactly.once.source.support=disabled`` (``SEAWAY_JDBC_EOS_CONTROL=disabled``, by hand) fails the
exactly-once check with duplicates.

The declaration per mode is checked by itself and through the worker's REST validation
(``mode=bulk`` with ``exactly.once.support=required`` is a 400 naming the key).
"""

from __future__ import annotations

import json
import os
import random
import threading
import time
import uuid
from collections.abc import Iterator
from functools import partial
from pathlib import Path

import pytest
from jdbc_support import Db, make_db
from seaway.connect.api import ExactlyOnceSupport
from seaway.connectors.jdbc import JdbcSourceConnector

from tests.connect.distributed.dist_support import WorkerProcess, dump_logs, wait_for, wait_settled
from tests.connect.exactly_once.eos_support import (
    Broker,
    StableEnd,
    create_topic,
    eos_worker_props,
    read_values,
    start_broker,
)

KILLS = 5
BACKLOG = 20000  # rows in the table before the connector starts
CHUNK, EVERY_S = 50, 0.05  # the inserter: CHUNK rows per transaction every EVERY_S (1,000 rows/s)
SUPPORT = os.environ.get("SEAWAY_JDBC_EOS_CONTROL", "enabled")  # "disabled": the control run (by hand)
JSON_VALUES = {"value.converter": "org.apache.kafka.connect.json.JsonConverter",
               "value.converter.schemas.enable": "false"}


@pytest.mark.parametrize(("mode", "query", "expected"), [
    ("incrementing", "", "SUPPORTED"),
    ("timestamp+incrementing", "", "SUPPORTED"),
    ("incrementing", "SELECT * FROM t", "SUPPORTED"),
    ("timestamp+incrementing", "SELECT * FROM t", "SUPPORTED"),
    ("timestamp", "", "UNSUPPORTED"),  # rows sharing a timestamp may be written again after a crash
    ("timestamp", "SELECT * FROM t", "UNSUPPORTED"),
    ("bulk", "", "UNSUPPORTED"),
    ("bulk", "SELECT * FROM t", "UNSUPPORTED"),
    ("", "", "UNSUPPORTED"),  # no mode: validate() reports it
    ("sideways", "", "UNSUPPORTED"),  # not a mode: validate() reports it
])
def test_exactly_once_support_per_mode(mode: str, query: str, expected: str) -> None:
    config = {"connection.url": "jdbc:sqlite:x.db", "mode": mode, "topic.prefix": "p",
              "incrementing.column.name": "id", "timestamp.column.name": "ts", "query": query}
    assert JdbcSourceConnector().exactly_once_support(config) is ExactlyOnceSupport[expected]


@pytest.fixture(scope="module")
def eos_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Broker]:
    yield from start_broker("seaway", tmp_path_factory.mktemp("jdbc-eos-broker"))


@pytest.fixture(params=["sqlite", "postgresql"])
def source_db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Db]:
    """A SQLite file, and a PostgreSQL schema when the test databases run (skipped only without the variable)."""
    kind = request.param
    url = os.environ.get("SEAWAY_TEST_POSTGRES_URL") if kind == "postgresql" else None
    if kind == "postgresql" and not url:
        message = "SEAWAY_TEST_POSTGRES_URL is not set (scripts/start_databases.sh sets it)"
        if os.environ.get("CI"):  # CI starts PostgreSQL: a missing server there is a failure, not a skip
            pytest.fail(message)
        pytest.skip(message)
    database = make_db(kind, url, tmp_path, f"seaway_{uuid.uuid4().hex[:10]}")
    try:
        yield database
    finally:
        database.drop()


class Inserter:
    """Inserts CHUNK rows per transaction every EVERY_S on a thread of its own, until stopped."""

    def __init__(self, db: Db) -> None:
        self.db = db
        self.rows = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self.error: BaseException | None = None

    def insert(self, n: int) -> None:
        self.db.execute("INSERT INTO events (note) VALUES (:note)",
                        params=[{"note": f"row-{self.rows + i}"} for i in range(n)])
        self.rows += n

    def _run(self) -> None:
        try:
            while not self._stop.wait(EVERY_S):
                self.insert(CHUNK)
        except BaseException as e:  # reported by stop()
            self.error = e

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """Idempotent; a failure of the thread is in ``error``."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(30)


def _beyond(end: StableEnd, start: int) -> bool:
    return end() > start


def _resumed_at(worker: WorkerProcess) -> int:
    """The last id in the connector's committed source offsets (GET /connectors/{c}/offsets)."""
    offsets = worker.get("/connectors/events/offsets").json()["offsets"]
    return max((int(o["offset"]["incrementing"]) for o in offsets), default=0)


@pytest.mark.timeout(150)
def test_kill9_five_times_every_row_once_in_order(eos_broker: Broker, source_db: Db, tmp_path: Path) -> None:
    db, bootstrap = source_db, eos_broker.bootstrap
    serial = "BIGSERIAL PRIMARY KEY" if db.kind == "postgresql" else "INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL"
    db.execute(f"CREATE TABLE events (id {serial}, note TEXT NOT NULL)")
    inserter = Inserter(db)
    inserter.insert(BACKLOG)
    prefix = f"jdbc-eos-{uuid.uuid4().hex[:8]}-"
    topic = prefix + "events"
    create_topic(bootstrap, topic)
    props = eos_worker_props(bootstrap, f"jdbc-eos-{uuid.uuid4().hex[:8]}", **{"exactly.once.source.support": SUPPORT})
    connector = {"connector.class": "io.confluent.connect.jdbc.JdbcSourceConnector", **db.connection_config,
                 "mode": "incrementing", "incrementing.column.name": "id", "table.whitelist": "events",
                 "topic.prefix": prefix, "poll.interval.ms": "20", "batch.max.rows": "1000", "tasks.max": "1",
                 "transaction.boundary": "interval", "transaction.boundary.interval.ms": "500",
                 "exactly.once.support": "required" if SUPPORT == "enabled" else "requested", **JSON_VALUES}
    worker = WorkerProcess(tmp_path / "worker", props).start()
    workers = [worker]
    rng = random.Random(20)
    try:
        wait_settled([worker])
        if SUPPORT == "enabled":
            refused = worker.request("PUT", "/connectors/bulk/config", json={**connector, "mode": "bulk"})
            assert refused.status_code == 400, refused.text
            assert "exactly.once.support" in refused.text and "does not support exactly-once" in refused.text
        reply = worker.request("PUT", "/connectors/events/config", json=connector)
        assert reply.status_code == 201, reply.text
        inserter.start()
        lso = StableEnd(bootstrap, topic)
        try:
            for kill in range(KILLS):
                start = lso()
                wait_for(partial(_beyond, lso, start), 60, 0.02,
                         f"run {kill + 1} to commit its first transaction (from offset {start})")
                time.sleep(rng.uniform(0.0, 0.2))  # somewhere inside the following transactions
                worker.kill()
                worker = WorkerProcess(tmp_path / "worker", props).start()
                workers.append(worker)
        finally:
            lso.close()
        inserter.stop()
        assert inserter.error is None, f"the inserter failed: {inserter.error!r}"
        ids = [int(row[0]) for row in db.rows("SELECT id FROM events ORDER BY id")]
        assert len(ids) == inserter.rows
        wait_for(lambda: _resumed_at(worker) == ids[-1], 60, 0.2, "the last run to read the last row")
        committed = [int(json.loads(v)["id"]) for v in read_values(bootstrap, topic)]
        if committed != ids:
            seen = set(committed)
            pytest.fail(f"read_committed holds {len(committed)} records for {len(ids)} rows: "
                        f"{sum(1 for i in ids if i not in seen)} missing, {len(committed) - len(seen)} duplicated, "
                        f"in order: {committed == sorted(committed)}")
        everything = read_values(bootstrap, topic, isolation="read_uncommitted")
        assert len(everything) > len(ids), "no kill landed inside a transaction: the test proved nothing"
        assert worker.get("/connectors/events/status").json()["tasks"][0]["state"] == "RUNNING"
    except BaseException:
        dump_logs(workers[-2:], 60)
        raise
    finally:
        inserter.stop()
        worker.stop()
