"""Proof: the sink's upserts leave each table equal to its topic's final state, for each pk.mode, on each database.

Records carry key updates (the same key again with new values) and, for ``pk.mode=record_key``,
tombstones (``delete.enabled=true``); ``kafka`` makes one row per record, ``record_value``
takes the key from a value field. PostgreSQL gets 100,000 records in the ``record_key`` case;
the other cases use 20,000 to keep the suite fast (the code path is the same).
"""

from __future__ import annotations

import json
import random
import time
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Producer
from jdbc_support import JSON_WORKER, Db, create_topic, unique
from seaway.connect.testing import EmbeddedBroker, EmbeddedConnect

pytestmark = pytest.mark.timeout(240)

KEY_SCHEMA = {"type": "struct", "optional": False, "fields": [{"field": "k", "type": "int32", "optional": False}]}
VALUE_SCHEMA = {"type": "struct", "optional": False, "name": "com.example.Account", "fields": [
    {"field": "k", "type": "int32", "optional": False},
    {"field": "name", "type": "string", "optional": False},
    {"field": "version", "type": "int64", "optional": False},
    {"field": "note", "type": "string", "optional": True},
]}


def _envelope(schema: dict[str, Any], payload: Any) -> bytes:
    return json.dumps({"schema": schema, "payload": payload}, separators=(",", ":")).encode()


def produce_changes(bootstrap: str, topic: str, count: int, keys: int, tombstones: bool,
                    seed: int = 7) -> list[tuple[int, dict[str, Any] | None]]:
    """``count`` records over ``keys`` keys (updates), some tombstones; returns (key, value) in order."""
    rng = random.Random(seed)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, "batch.num.messages": 10000,
                         "queue.buffering.max.messages": 500000})
    sent: list[tuple[int, dict[str, Any] | None]] = []
    for version in range(count):
        k = rng.randrange(keys)
        key = _envelope(KEY_SCHEMA, {"k": k})
        if tombstones and rng.random() < 0.1:
            producer.produce(topic, key=key, value=None)
            sent.append((k, None))
            continue
        value = {"k": k, "name": f"name-{k}-{version} ü", "version": version,
                 "note": None if version % 3 else f"note {version}"}
        producer.produce(topic, key=key, value=_envelope(VALUE_SCHEMA, value))
        sent.append((k, value))
        if version % 20000 == 0:
            producer.poll(0)
    assert producer.flush(60) == 0
    return sent


def wait_for_table(db: Db, table: str, expected: set[tuple[Any, ...]], columns: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    got: set[tuple[Any, ...]] = set()
    while time.monotonic() < deadline:
        try:
            got = set(db.rows(f"SELECT {columns} FROM {db.q(table)}"))
        except Exception:  # not created yet
            got = set()
        if got == expected:
            return
        time.sleep(0.5)
    missing, extra = expected - got, got - expected
    raise AssertionError(f"{table}: {len(got)} rows, {len(expected)} expected; missing {sorted(missing)[:5]}, "
                         f"unexpected {sorted(extra)[:5]}")


CASES = [  # (pk.mode, tombstones, PostgreSQL count)
    ("record_key", True, 100_000),
    ("record_value", False, 20_000),
    ("kafka", False, 20_000),
]


@pytest.mark.parametrize(("pk_mode", "tombstones", "pg_count"), CASES, ids=[c[0] for c in CASES])
async def test_upsert_leaves_the_topics_final_state(db: Db, jdbc_broker: EmbeddedBroker, tmp_path: Path,
                                                    pk_mode: str, tombstones: bool, pg_count: int) -> None:
    count = pg_count if db.kind == "postgresql" else 20_000
    topic = unique("accounts")
    create_topic(jdbc_broker.bootstrap, topic, partitions=2)
    sent = produce_changes(jdbc_broker.bootstrap, topic, count, keys=count // 4, tombstones=tombstones)

    config = {"connector.class": "io.confluent.connect.jdbc.JdbcSinkConnector", "tasks.max": "2", "topics": topic,
              **db.connection_config, "insert.mode": "upsert", "pk.mode": pk_mode, "auto.create": "true",
              "batch.size": "3000"}
    if pk_mode == "record_key":
        config.update({"pk.fields": "k", "delete.enabled": "true"})
    elif pk_mode == "record_value":
        config["pk.fields"] = "k"
    expected_rows: set[tuple[Any, ...]]
    if pk_mode == "kafka":
        # one row per record: the topic's final state is every record, where it is
        expected_rows = {(value["k"], value["name"], value["version"]) for _k, value in sent if value is not None}
        columns = f"{db.q('k')}, {db.q('name')}, {db.q('version')}"
    else:
        final: dict[int, dict[str, Any] | None] = {}
        for k, value in sent:
            final[k] = value
        expected_rows = {(k, v["name"], v["version"], v["note"]) for k, v in final.items() if v is not None}
        columns = f"{db.q('k')}, {db.q('name')}, {db.q('version')}, {db.q('note')}"

    async with EmbeddedConnect(jdbc_broker.bootstrap, tmp_path, worker_props=JSON_WORKER) as connect:
        await connect.create_connector("jdbc-sink", config)
        await connect.wait_for_running("jdbc-sink", tasks=2)
        started = time.monotonic()
        wait_for_table(db, topic, expected_rows, columns, timeout=180)
        elapsed = time.monotonic() - started
    print(f"{db.kind} pk.mode={pk_mode}: {count} records -> {len(expected_rows)} rows in {elapsed:.1f} s")
