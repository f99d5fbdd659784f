"""Proof: topic -> JDBC sink -> table -> JDBC source -> topic keeps every value, on each database.

Decimals, dates, times, timestamps (written and read in ``db.timezone=America/New_York``, so a
zone conversion happens both ways), nulls, unicode and bytes, through JSON with schemas. The
values are compared as Connect values (a decimal by its number: the source may read it back
with the column's scale). SQLite keeps NUMERIC values as 64-bit floats (15 significant digits),
so its decimal is a 15-digit one.
"""

from __future__ import annotations

import asyncio
import datetime
import decimal
import math
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Producer
from jdbc_support import JSON_WORKER, Db, create_topic, read_topic, unique
from seaway.connect.api import Date, Decimal, Schema, SchemaBuilder, Struct, Time, Timestamp
from seaway.connect.converters import JsonConverter
from seaway.connect.testing import EmbeddedBroker, EmbeddedConnect

pytestmark = pytest.mark.timeout(120)

UTC = datetime.UTC


def _schema() -> Schema:
    return (SchemaBuilder.struct().name("com.example.Everything")
            .field("id", Schema.INT64_SCHEMA)
            .field("i8", Schema.OPTIONAL_INT8_SCHEMA)
            .field("i16", Schema.OPTIONAL_INT16_SCHEMA)
            .field("i32", Schema.OPTIONAL_INT32_SCHEMA)
            .field("i64", Schema.OPTIONAL_INT64_SCHEMA)
            .field("f32", Schema.OPTIONAL_FLOAT32_SCHEMA)
            .field("f64", Schema.OPTIONAL_FLOAT64_SCHEMA)
            .field("flag", Schema.OPTIONAL_BOOLEAN_SCHEMA)
            .field("text", Schema.OPTIONAL_STRING_SCHEMA)
            .field("blob", Schema.OPTIONAL_BYTES_SCHEMA)
            .field("amount", Decimal.builder(3).parameter("connect.decimal.precision", "20").optional())
            .field("day", Date.builder().optional())
            .field("clock", Time.builder().optional())
            .field("at", Timestamp.builder().optional())
            .build())


def _rows(kind: str) -> list[dict[str, Any]]:
    big = decimal.Decimal("12345678901234567.891") if kind != "sqlite" else decimal.Decimal("123456789012.345")
    return [
        {"id": 1, "i8": -128, "i16": 32767, "i32": -2147483648, "i64": 2**62 + 7, "f32": 1.5, "f64": 1e300,
         "flag": True, "text": "Grüße 🌊 日本 'quoted' \"double\" back\\slash", "blob": b"\x00\xff\x10bytes",
         "amount": big, "day": datetime.date(1999, 12, 31), "clock": datetime.time(23, 59, 59, 999000),
         "at": datetime.datetime(2024, 3, 10, 7, 30, 0, 123000, tzinfo=UTC)},  # just after New York's DST gap
        {"id": 2, "i8": 127, "i16": -32768, "i32": 2147483647, "i64": -(2**63), "f32": -0.25, "f64": -2.5e-300,
         "flag": False, "text": "", "blob": b"", "amount": decimal.Decimal("-0.001"),
         "day": datetime.date(1970, 1, 1), "clock": datetime.time(0, 0), "at": datetime.datetime(
             1970, 1, 1, 0, 0, 0, 1000, tzinfo=UTC)},
        {"id": 3, **dict.fromkeys(("i8", "i16", "i32", "i64", "f32", "f64", "flag", "text", "blob", "amount", "day",
                                   "clock", "at"))},
        {"id": 4, "i8": 0, "i16": 0, "i32": 0, "i64": 0, "f32": 0.0, "f64": 0.0, "flag": True,
         "text": "\u00e9\u0301 combining, \u202e rtl, \U0001f600", "blob": bytes(range(256)),
         "amount": decimal.Decimal("0.000"), "day": datetime.date(2038, 1, 19),
         "clock": datetime.time(12, 0, 0, 1000), "at": datetime.datetime(2038, 1, 19, 3, 14, 8, 999000, tzinfo=UTC)},
    ]


def _same(a: Any, b: Any, name: str) -> bool:
    if a is None or b is None:
        return a is b
    if name == "f32":
        return math.isclose(a, b, rel_tol=1e-6)
    if isinstance(a, decimal.Decimal):
        return a == decimal.Decimal(b)
    if isinstance(a, datetime.datetime):
        return bool(a == b)
    return bool(a == b)


async def test_every_type_survives_sink_then_source(db: Db, jdbc_broker: EmbeddedBroker, tmp_path: Path) -> None:
    schema = _schema()
    rows = _rows(db.kind)
    converter = JsonConverter()
    converter.configure({"schemas.enable": "true"}, is_key=False)
    topic = unique("everything")
    create_topic(jdbc_broker.bootstrap, topic)
    producer = Producer({"bootstrap.servers": jdbc_broker.bootstrap})
    for row in rows:
        struct = Struct(schema)
        for name, value in row.items():
            struct.put(name, value)
        producer.produce(topic, value=converter.from_connect_data(topic, schema, struct))
    assert producer.flush(30) == 0

    zone = {"db.timezone": "America/New_York"}
    sink = {"connector.class": "io.confluent.connect.jdbc.JdbcSinkConnector", "topics": topic,
            **db.connection_config, **zone, "insert.mode": "upsert", "pk.mode": "record_value", "pk.fields": "id",
            "auto.create": "true"}
    prefix = unique("back") + "-"
    source = {"connector.class": "io.confluent.connect.jdbc.JdbcSourceConnector", **db.connection_config, **zone,
              "mode": "incrementing", "incrementing.column.name": "id", "table.whitelist": topic,
              "topic.prefix": prefix, "poll.interval.ms": "200"}
    async with EmbeddedConnect(jdbc_broker.bootstrap, tmp_path, worker_props=JSON_WORKER) as connect:
        await connect.create_connector("sink", sink)
        await connect.wait_for_running("sink")
        for _ in range(100):  # the source lists tables when it starts: wait for the sink's
            if _exists(db, topic) and len(db.rows(f"SELECT id FROM {db.q(topic)}")) == len(rows):
                break
            await asyncio.sleep(0.2)
        await connect.create_connector("source", source)
        await connect.wait_for_running("source")
        back = await asyncio.to_thread(read_topic, jdbc_broker.bootstrap, prefix + topic, at_least=len(rows),
                                       settle=0.5, decode=False)

    decoded = [converter.to_connect_data(prefix + topic, value).value for _key, value in back]
    assert len(decoded) == len(rows)
    for row, struct in zip(rows, decoded, strict=True):
        for name, value in row.items():
            got = struct.get(name)
            assert _same(value, got, name), f"{db.kind} {name}: sent {value!r}, read back {got!r}"


def _exists(db: Db, table: str) -> bool:
    try:
        db.rows(f"SELECT 1 FROM {db.q(table)} WHERE 1 = 0")
        return True
    except Exception:
        return False

