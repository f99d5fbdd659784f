"""The JDBC connectors against hand-written loops doing the same work, on PostgreSQL, in the same run.

Run from the repository root (PostgreSQL from ``scripts/start_databases.sh``, or
``SEAWAY_TEST_POSTGRES_URL``)::

    .venv/bin/python bench/jdbc.py [--quick] [--rows N] [--repeat R] [--case all|sink|source]

Rows are ``(id BIGINT, name TEXT ~30 chars, qty INT, price DOUBLE PRECISION, created TIMESTAMP)``;
topics hold JSON with schemas (JsonConverter, ``schemas.enable=true``), one partition, one task.

- ``sink insert``: JdbcSink (``insert.mode=insert``, which writes through ``COPY``) reading a
  topic of values without keys into a table, against a hand-written loop: confluent-kafka
  ``consume(500)``, ``json.loads`` each value, one ``COPY ... FROM STDIN`` (psycopg
  ``write_row``) and a commit per batch.
- ``sink upsert``: JdbcSink (``insert.mode=upsert``, ``pk.mode=record_key``) reading a topic
  with JSON keys, against the same loop that also ``json.loads`` each key and runs psycopg's
  ``executemany`` of ``INSERT ... ON CONFLICT (id) DO UPDATE``.
  Both sinks are timed from the first row in the table to the last (an observer polls
  ``max(id)``), so neither side's consumer-group join is timed; the worker's sink consumer
  gets 500 records per poll, as the loop.
- ``source``: JdbcSource (``mode=incrementing``, ``batch.max.rows=1000``) into a topic,
  against ``SELECT ... WHERE id > -1 ORDER BY id`` on a psycopg server-side cursor,
  ``fetchmany(1000)``, each row as the same JSON envelope (``json.dumps``) and ``produce()``
  with the worker's producer settings. Timed from the start (``create_connector``, or the
  loop's first statement) to the topic's high watermark reaching the row count, and again from
  the first record on the topic (so without the task's start-up: connecting, listing and
  reflecting the table, reading offsets).

Beside rows per wall-clock second it prints rows per CPU-second of this process (the worker
and the loops run here; PostgreSQL and the broker are other processes), which the other
engineers' load disturbs less, and the load average. Rounds are interleaved; the best of
``--repeat`` is kept. Target (issue 21): each JDBC figure >= 0.7 of its hand loop. Exits 0
when every wall-clock ratio meets it, 1 otherwise.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import os
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import psycopg  # noqa: E402
import sqlalchemy as sa  # noqa: E402
from confluent_kafka import Consumer, Producer  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]  # noqa: E402
from connect_pipeline import PRODUCER_PROPS, Best, Observer, Rate, topic_progress  # noqa: E402
from seaway.connect.testing import EmbeddedBroker, EmbeddedConnect  # noqa: E402

TARGET = 0.7
TIMEOUT = 300.0
JSON_WORKER = {"key.converter": "org.apache.kafka.connect.json.JsonConverter",
               "value.converter": "org.apache.kafka.connect.json.JsonConverter"}
VALUE_SCHEMA = {"type": "struct", "name": "rows", "optional": False, "fields": [
    {"field": "id", "type": "int64", "optional": False}, {"field": "name", "type": "string", "optional": False},
    {"field": "qty", "type": "int32", "optional": False}, {"field": "price", "type": "double", "optional": False},
    {"field": "created", "type": "int64", "optional": False, "name": "org.apache.kafka.connect.data.Timestamp",
     "version": 1}]}
KEY_SCHEMA = {"type": "struct", "optional": False, "fields": [{"field": "id", "type": "int64", "optional": False}]}
EPOCH = datetime.datetime(1970, 1, 1)
DDL = 'CREATE TABLE "{t}" (id BIGINT PRIMARY KEY, name TEXT NOT NULL, qty INT NOT NULL, ' \
      'price DOUBLE PRECISION NOT NULL, created TIMESTAMP NOT NULL)'


class Postgres:
    """A schema of its own in the test PostgreSQL; ``jdbc`` is the connectors' URL for it."""

    def __init__(self) -> None:
        url = sa.make_url(os.environ.get("SEAWAY_TEST_POSTGRES_URL")
                          or "postgresql://seaway:seaway@127.0.0.1:5432/seaway")
        self.schema = f"bench_{uuid.uuid4().hex[:8]}"
        self.dsn = (f"host={url.host} port={url.port or 5432} dbname={url.database} user={url.username} "
                    f"password={url.password} options=-csearch_path={self.schema}")
        self.jdbc = f"jdbc:postgresql://{url.host}:{url.port or 5432}/{url.database}?currentSchema={self.schema}"
        self.user, self.password = url.username or "", url.password or ""
        with psycopg.connect(self.dsn.replace(f" options=-csearch_path={self.schema}", ""), autocommit=True) as c:
            c.execute(f'CREATE SCHEMA "{self.schema}"')

    def connect(self) -> psycopg.Connection[Any]:
        return psycopg.connect(self.dsn)

    def fresh_table(self, table: str, rows: int = 0) -> None:
        with self.connect() as c:
            c.execute(f'DROP TABLE IF EXISTS "{table}"')
            c.execute(DDL.format(t=table))
            if rows:
                with c.cursor().copy(f'COPY "{table}" FROM STDIN') as copy:
                    for row in make_rows(rows):
                        copy.write_row(row)

    def max_id(self, table: str) -> Callable[[], int]:
        connection = psycopg.connect(self.dsn, autocommit=True)

        def progress() -> int:
            value = connection.execute(f'SELECT max(id) FROM "{table}"').fetchone()
            return 0 if value is None or value[0] is None else int(value[0]) + 1

        return progress

    def drop(self) -> None:
        with psycopg.connect(self.dsn, autocommit=True) as c:
            c.execute(f'DROP SCHEMA "{self.schema}" CASCADE')


def make_rows(count: int) -> list[tuple[Any, ...]]:
    base = datetime.datetime(2024, 1, 1)
    return [(i, f"customer {i:08d} of the bench", i % 1000, i * 0.25,
             base + datetime.timedelta(milliseconds=i * 7)) for i in range(count)]


def create_topic(bootstrap: str, topic: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(10)


def fill_topic(bootstrap: str, topic: str, rows: int, keyed: bool) -> None:
    """JSON values with schemas; ``keyed``: JSON keys ``{"id": n}`` too (for the upserts by record key)."""
    create_topic(bootstrap, topic)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20})
    for i, name, qty, price, created in make_rows(rows):
        value = {"id": i, "name": name, "qty": qty, "price": price,
                 "created": int((created - EPOCH).total_seconds() * 1000)}
        key = json.dumps({"schema": KEY_SCHEMA, "payload": {"id": i}}, separators=(",", ":")).encode() \
            if keyed else None
        producer.produce(topic, key=key, value=json.dumps(
            {"schema": VALUE_SCHEMA, "payload": value}, separators=(",", ":")).encode())
        if i % 10000 == 0:
            producer.poll(0)
    assert producer.flush(60) == 0


# --- hand-written loops ----------------------------------------------------------------------------

def hand_sink(bootstrap: str, topic: str, pg: Postgres, table: str, total: int, upsert: bool) -> None:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"bench-hand-{uuid.uuid4().hex}",
                         "auto.offset.reset": "earliest", "fetch.queue.backoff.ms": 10})
    consumer.subscribe([topic])
    sql = (f'INSERT INTO "{table}" (id, name, qty, price, created) VALUES (%s, %s, %s, %s, %s) '
           "ON CONFLICT (id) DO UPDATE SET name=EXCLUDED.name, qty=EXCLUDED.qty, price=EXCLUDED.price, "
           "created=EXCLUDED.created")
    seen = 0
    deadline = time.monotonic() + TIMEOUT
    loads, delta = json.loads, datetime.timedelta
    with pg.connect() as connection:
        cursor = connection.cursor()
        try:
            while seen < total and time.monotonic() < deadline:
                messages = [m for m in consumer.consume(500, 0.5) if m.error() is None]
                if not messages:
                    continue
                rows = []
                for message in messages:
                    p = loads(message.value())["payload"]
                    # the upsert's key comes from the record key, as with pk.mode=record_key
                    key = loads(message.key())["payload"]["id"] if upsert else p["id"]
                    rows.append((key, p["name"], p["qty"], p["price"], EPOCH + delta(milliseconds=p["created"])))
                if upsert:
                    cursor.executemany(sql, rows)
                else:
                    with cursor.copy(f'COPY "{table}" (id, name, qty, price, created) FROM STDIN') as copy:
                        for row in rows:
                            copy.write_row(row)
                connection.commit()
                seen += len(messages)
        finally:
            consumer.close()


def hand_source(bootstrap: str, pg: Postgres, table: str, topic: str) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, **PRODUCER_PROPS})
    produce, poll = producer.produce, producer.poll
    dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
    with pg.connect() as connection, connection.cursor(name="bench_hand") as cursor:
        cursor.execute(f'SELECT id, name, qty, price, created FROM "{table}" WHERE id > %s ORDER BY id ASC', (-1,))
        while True:
            rows = cursor.fetchmany(1000)
            if not rows:
                break
            for i, name, qty, price, created in rows:
                value = dumps({"schema": VALUE_SCHEMA, "payload": {
                    "id": i, "name": name, "qty": qty, "price": price,
                    "created": (created - EPOCH) // datetime.timedelta(milliseconds=1)}}).encode()
                while True:
                    try:
                        produce(topic, value)
                        break
                    except BufferError:
                        poll(0.05)
            poll(0)
    if producer.flush(60):
        raise RuntimeError("hand-written producer: records not delivered")


# --- runs ----------------------------------------------------------------------------------------

async def jdbc_sink(bootstrap: str, topic: str, pg: Postgres, table: str, total: int, upsert: bool,
                    workdir: Path) -> Rate:
    pg.fresh_table(table)
    props = {**JSON_WORKER, "offset.flush.interval.ms": "1000", "consumer.max.poll.records": "500"}
    async with EmbeddedConnect(bootstrap, workdir, worker_props=props) as connect:
        observer = Observer(pg.max_id(table), total, from_first=True)
        observer.start()
        name = f"bench-sink-{uuid.uuid4().hex}"
        config = {"connector.class": "JdbcSink", "topics": topic, "table.name.format": table,
                  "connection.url": pg.jdbc, "connection.user": pg.user, "connection.password": pg.password}
        if upsert:
            config.update({"insert.mode": "upsert", "pk.mode": "record_key", "pk.fields": "id"})
        await connect.create_connector(name, config)
        rate = await asyncio.to_thread(observer.wait, TIMEOUT)
        await connect.herder.delete_connector(name)
    return rate


async def hand_sink_run(bootstrap: str, topic: str, pg: Postgres, table: str, total: int, upsert: bool) -> Rate:
    pg.fresh_table(table)
    observer = Observer(pg.max_id(table), total, from_first=True)
    observer.start()
    await asyncio.to_thread(hand_sink, bootstrap, topic, pg, table, total, upsert)
    return await asyncio.to_thread(observer.wait, TIMEOUT)


async def jdbc_source(bootstrap: str, pg: Postgres, table: str, total: int, workdir: Path) -> tuple[Rate, Rate]:
    prefix = f"bench-src-{uuid.uuid4().hex[:8]}-"
    topic = prefix + table
    create_topic(bootstrap, topic)
    props = {**JSON_WORKER, "offset.flush.interval.ms": "1000",
             "offset.storage.file.filename": str(workdir / f"{uuid.uuid4().hex}.offsets")}
    async with EmbeddedConnect(bootstrap, workdir, worker_props=props) as connect:
        observer = Observer(topic_progress(bootstrap, topic), total)
        steady = Observer(topic_progress(bootstrap, topic), total, from_first=True)
        observer.start()
        steady.start()
        name = f"bench-source-{uuid.uuid4().hex}"
        await connect.create_connector(name, {
            "connector.class": "JdbcSource", "connection.url": pg.jdbc, "connection.user": pg.user,
            "connection.password": pg.password, "mode": "incrementing", "incrementing.column.name": "id",
            "table.whitelist": table, "topic.prefix": prefix, "batch.max.rows": "1000",
            "schema.pattern": pg.schema})
        rate = await asyncio.to_thread(observer.wait, TIMEOUT)
        steady_rate = await asyncio.to_thread(steady.wait, TIMEOUT)
        await connect.herder.delete_connector(name)
    return rate, steady_rate


async def hand_source_run(bootstrap: str, pg: Postgres, table: str, total: int) -> tuple[Rate, Rate]:
    topic = f"bench-hand-{uuid.uuid4().hex[:8]}"
    create_topic(bootstrap, topic)
    observer = Observer(topic_progress(bootstrap, topic), total)
    steady = Observer(topic_progress(bootstrap, topic), total, from_first=True)
    observer.start()
    steady.start()
    await asyncio.to_thread(hand_source, bootstrap, pg, table, topic)
    return await asyncio.to_thread(observer.wait, TIMEOUT), await asyncio.to_thread(steady.wait, TIMEOUT)


def load() -> str:
    return "/".join(f"{v:.1f}" for v in os.getloadavg())


async def main_async(args: argparse.Namespace) -> int:
    rows = args.rows or (30_000 if args.quick else 200_000)
    repeat = 1 if args.quick else args.repeat
    pg = Postgres()
    print(f"rows {rows}, rounds {repeat}, load average {load()}", flush=True)
    best = Best()
    try:
        with EmbeddedBroker() as broker:
            bootstrap = broker.bootstrap
            plain, keyed = f"bench-rows-{uuid.uuid4().hex[:8]}", f"bench-keyed-{uuid.uuid4().hex[:8]}"
            fill_topic(bootstrap, plain, rows, keyed=False)
            fill_topic(bootstrap, keyed, rows, keyed=True)
            pg.fresh_table("source_rows", rows)
            workdir = Path(f"/tmp/bench-jdbc-{uuid.uuid4().hex[:8]}")
            workdir.mkdir()
            for rnd in range(repeat):
                runs: list[tuple[str, Any]] = [
                    ("sink insert: jdbc", lambda: jdbc_sink(bootstrap, plain, pg, "sink_rows", rows, False, workdir)),
                    ("sink insert: hand COPY", lambda: hand_sink_run(bootstrap, plain, pg, "sink_rows", rows, False)),
                    ("sink upsert: jdbc", lambda: jdbc_sink(bootstrap, keyed, pg, "sink_rows", rows, True, workdir)),
                    ("sink upsert: hand executemany",
                     lambda: hand_sink_run(bootstrap, keyed, pg, "sink_rows", rows, True)),
                    ("source: jdbc", lambda: jdbc_source(bootstrap, pg, "source_rows", rows, workdir)),
                    ("source: hand SELECT->produce", lambda: hand_source_run(bootstrap, pg, "source_rows", rows)),
                ]
                if rnd % 2:
                    runs = [r for pair in zip(runs[1::2], runs[0::2], strict=True) for r in pair]
                runs = [r for r in runs if args.case == "all" or r[0].startswith(args.case)]
                for label, run in runs:
                    result = await run()
                    measured = [(label, result)] if isinstance(result, Rate) else \
                        [(label, result[0]), (label + " (from 1st row)", result[1])]
                    for name, rate in measured:
                        best.keep(name, rate)
                        print(f"  round {rnd + 1} {name:45s} {rate.wall:10,.0f} rows/s  {rate.cpu:10,.0f} "
                              f"rows/CPU-s  (load {load()})", flush=True)
    finally:
        pg.drop()
    ok = True
    print(f"\nbest of {repeat} (rows/s wall, rows per CPU-second), load average now {load()}:")
    pairs = [("sink insert: jdbc", "sink insert: hand COPY"),
                         ("sink upsert: jdbc", "sink upsert: hand executemany"),
                         ("source: jdbc", "source: hand SELECT->produce"),
                         ("source: jdbc (from 1st row)", "source: hand SELECT->produce (from 1st row)")]
    for ours, theirs in [(a, b) for a, b in pairs if a in best.wall]:
        ratio, cpu_ratio = best.wall[ours] / best.wall[theirs], best.cpu[ours] / best.cpu[theirs]
        ok &= ratio >= TARGET
        print(f"  {ours:28s} {best.wall[ours]:10,.0f} vs {theirs:44s} {best.wall[theirs]:10,.0f}  "
              f"ratio {ratio:.2f} (cpu {cpu_ratio:.2f})  {'ok' if ratio >= TARGET else 'BELOW'} target {TARGET}")
    return 0 if ok else 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="30,000 rows, one round")
    parser.add_argument("--rows", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--case", choices=["all", "sink", "source"], default="all")
    sys.exit(asyncio.run(main_async(parser.parse_args())))


if __name__ == "__main__":
    main()
