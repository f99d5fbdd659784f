"""Proof: kill -9 of the worker mid-stream, 5 times, leaves the upsert table equal to the topic's final state.

A real ``seaway connect standalone`` process runs the sink (upsert, pk.mode=record_key, deletes)
into PostgreSQL. Before each of 6 runs another 8,000 records (key updates and tombstones) are
produced; the first 5 runs are killed with SIGKILL while they write, so each restart gets
records whose transaction committed but whose offsets did not, again. The last run drains the
topic, and the table must then hold exactly the last value of every key.
"""

from __future__ import annotations

import random
import time
from pathlib import Path
from typing import Any

import pytest
from jdbc_support import Db, WorkerProcess, create_topic, unique, write_properties
from seaway.connect.testing import EmbeddedBroker
from test_jdbc_sink_upsert import produce_changes, wait_for_table

pytestmark = pytest.mark.timeout(240)


def test_five_kill_9s_leave_the_final_state(pg: Db, jdbc_broker: EmbeddedBroker, tmp_path: Path) -> None:
    topic = unique("killed")
    create_topic(jdbc_broker.bootstrap, topic, partitions=2)
    connector = write_properties(tmp_path / "sink.properties", {
        "name": "jdbc-sink-killed", "connector.class": "io.confluent.connect.jdbc.JdbcSinkConnector",
        "tasks.max": "2", "topics": topic, **pg.connection_config, "insert.mode": "upsert",
        "pk.mode": "record_key", "pk.fields": "k", "delete.enabled": "true", "auto.create": "true"})
    # small polls: many transactions per second, so a kill always lands between or inside some
    worker = WorkerProcess(jdbc_broker.bootstrap, tmp_path / "worker", [connector],
                           extra={"consumer.max.poll.records": "300", "offset.flush.interval.ms": "300",
                                  "consumer.session.timeout.ms": "1500", "consumer.heartbeat.interval.ms": "300"})
    rng = random.Random(11)
    sent: list[tuple[int, dict[str, Any] | None]] = []
    kills = []
    try:  # the worker is stopped whatever fails (an assertion inside the loop too)
        for run in range(6):
            sent += produce_changes(jdbc_broker.bootstrap, topic, 8000, keys=3000, tombstones=True, seed=run)
            worker.start()
            worker.wait_running("jdbc-sink-killed", tasks=2)
            if run == 5:
                break
            time.sleep(rng.uniform(0.3, 1.2))
            kills.append(_count(pg, topic))
            worker.kill()
        final: dict[int, dict[str, Any] | None] = {}
        for k, value in sent:
            final[k] = value
        expected = {(k, v["name"], v["version"], v["note"]) for k, v in final.items() if v is not None}
        wait_for_table(pg, topic, expected, '"k", "name", "version", "note"', timeout=120)
    finally:
        worker.stop()
    assert len(kills) == 5
    log = worker.log_path.read_text()
    assert log.count("Creating table") >= 1


def _count(db: Db, table: str) -> int:
    try:
        return int(db.rows(f"SELECT COUNT(*) FROM {db.q(table)}")[0][0])
    except Exception:
        return 0
