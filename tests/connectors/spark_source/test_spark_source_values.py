"""Typed value columns: Avro through the real schema registry, JSON with a DDL schema, strings."""

from __future__ import annotations

import datetime
import decimal
import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from pyspark.errors import StreamingQueryException
from seaway.schema_registry.client import SchemaRegistryClient
from seaway.schema_registry.serde import AvroSerializer

from tests.connectors.spark_source.source_support import create_topic, produce, seaway_read, unique_topic
from tests.schema_registry.registry_support import RegistryProcess
from tests.support.broker import BrokerProcess

TRADE: dict[str, Any] = {"type": "record", "name": "Trade", "namespace": "test", "fields": [
    {"name": "id", "type": "long"},
    {"name": "symbol", "type": "string"},
    {"name": "price", "type": "double"},
    {"name": "qty", "type": "int"},
    {"name": "active", "type": "boolean"},
    {"name": "note", "type": ["null", "string"], "default": None},
    {"name": "amount", "type": {"type": "bytes", "logicalType": "decimal", "precision": 12, "scale": 2}},
    {"name": "day", "type": {"type": "int", "logicalType": "date"}},
    {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
    {"name": "venue", "type": {"type": "record", "name": "Venue", "fields": [
        {"name": "code", "type": "string"}, {"name": "lot", "type": "int"}]}},
    {"name": "tags", "type": {"type": "array", "items": "string"}},
    {"name": "attrs", "type": {"type": "map", "values": "long"}},
    {"name": "side", "type": {"type": "enum", "name": "Side", "symbols": ["BUY", "SELL"]}},
    {"name": "uid", "type": {"type": "string", "logicalType": "uuid"}},
    {"name": "clock", "type": {"type": "int", "logicalType": "time-millis"}},
]}
EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)


def trade(i: int) -> dict[str, Any]:
    return {
        "id": i, "symbol": f"S{i % 17}", "price": i * 0.25, "qty": i % 1000, "active": i % 2 == 0,
        "note": None if i % 3 else f"note {i}", "amount": decimal.Decimal(i * 7) / 100,
        "day": datetime.date(2024, 1, 1) + datetime.timedelta(days=i % 300),
        "at": EPOCH + datetime.timedelta(milliseconds=1_700_000_000_000 + i * 1000),
        "venue": {"code": f"V{i % 5}", "lot": i % 7 - 3}, "tags": [f"t{j}" for j in range(i % 3)],
        "attrs": {f"k{j}": i * j for j in range(i % 4)}, "side": "BUY" if i % 2 else "SELL",
        "uid": str(uuid.UUID(int=i)), "clock": datetime.time(i % 24, i % 60, i % 60, (i % 1000) * 1000),
    }


@pytest.fixture(scope="module")
def registry(shared_broker: BrokerProcess) -> Iterator[str]:
    """``seaway registry`` as a process of its own, its schemas in ``_schemas`` on the shared broker.

    Not in a thread of this process: the suite's leak check inspects every consumer alive between
    tests, and the registry's ``_schemas`` consumer polls all the time.
    """
    with RegistryProcess(shared_broker.bootstrap, "kafkastore.topic.replication.factor=1") as served:
        yield served.url


def produce_avro(bootstrap: str, registry: str, topic: str, schema: dict[str, Any], records: list[Any],
                 partitions: int = 1) -> None:
    with SchemaRegistryClient(registry) as client:
        serialize = AvroSerializer(client, json.dumps(schema))
        produce(bootstrap, ({"topic": topic, "key": b"%d" % i, "partition": i % partitions,
                             "value": None if record is None else serialize(record, topic)}
                            for i, record in enumerate(records)))


@pytest.mark.timeout(240)
def test_avro_values_are_typed_columns_equal_to_what_was_produced(spark: Any, shared_broker: BrokerProcess,
                                                                  registry: str) -> None:
    topic, count = unique_topic("avro"), 3000
    create_topic(shared_broker.bootstrap, topic, 3)
    produce_avro(shared_broker.bootstrap, registry, topic, TRADE, [trade(i) for i in range(count)] + [None], 3)
    df = seaway_read(spark, shared_broker.bootstrap, subscribe=topic, valueFormat="avro",
                     **{"schema.registry.url": registry})
    assert df.columns[:7] == ["key", "value", "topic", "partition", "offset", "timestamp", "timestampType"]
    assert df.columns[7:] == [f["name"] for f in TRADE["fields"]]
    types = dict(df.dtypes)
    assert (types["amount"], types["day"], types["at"], types["venue"], types["attrs"], types["clock"]) == (
        "decimal(12,2)", "date", "timestamp", "struct<code:string,lot:int>", "map<string,bigint>", "int")
    assert df.schema["id"].metadata["seaway.value.subject"] == f"{topic}-value"
    rows = df.selectExpr("CAST(key AS STRING) AS k", "value IS NULL AS tombstone", "id", "symbol", "price", "qty",
                         "active", "note", "CAST(amount AS STRING) AS amount", "unix_date(day) AS day",
                         "unix_millis(at) AS at", "venue", "tags", "attrs", "side", "uid", "clock").collect()
    assert len(rows) == count + 1
    for row in rows:
        i = int(row["k"])
        if i == count:  # the tombstone: every typed column null
            assert row["tombstone"] and all(row[c] is None for c in ("id", "symbol", "venue", "attrs"))
            continue
        want = trade(i)
        assert (row["id"], row["symbol"], row["price"], row["qty"], row["active"], row["note"]) == (
            want["id"], want["symbol"], want["price"], want["qty"], want["active"], want["note"])
        assert row["amount"] == str(want["amount"].quantize(decimal.Decimal("0.01")))
        assert row["day"] == (want["day"] - datetime.date(1970, 1, 1)).days
        assert row["at"] == int((want["at"] - EPOCH).total_seconds() * 1000)
        assert row["venue"].asDict() == want["venue"] and row["tags"] == want["tags"]
        assert row["attrs"] == want["attrs"] and (row["side"], row["uid"]) == (want["side"], want["uid"])
        t = want["clock"]
        assert row["clock"] == ((t.hour * 60 + t.minute) * 60 + t.second) * 1000 + t.microsecond // 1000


V1: dict[str, Any] = {"type": "record", "name": "User",
                      "fields": [{"name": "id", "type": "long"}, {"name": "name", "type": "string"}]}
V2 = {"type": "record", "name": "User", "fields": [*V1["fields"],
                                                   {"name": "email", "type": ["null", "string"], "default": None}]}
V3 = {"type": "record", "name": "User", "fields": [{"name": "id", "type": "long"}, {"name": "name", "type": "int"}]}


@pytest.mark.timeout(300)
def test_a_compatible_schema_change_mid_stream_keeps_working(spark: Any, shared_broker: BrokerProcess,
                                                             registry: str, tmp_path: Path) -> None:
    bootstrap, topic = shared_broker.bootstrap, unique_topic("users")
    create_topic(bootstrap, topic, 2)
    produce_avro(bootstrap, registry, topic, V1, [{"id": i, "name": f"n{i}"} for i in range(10)], 2)
    table = topic.replace("-", "_")
    query = (spark.readStream.format("seaway").option("kafka.bootstrap.servers", bootstrap)
             .option("subscribe", topic).option("startingOffsets", "earliest").option("valueFormat", "avro")
             .option("schema.registry.url", registry).load().select("id", "name")
             .writeStream.format("memory").queryName(table).option("checkpointLocation", str(tmp_path / "ck"))
             .trigger(processingTime="500 milliseconds").start())
    try:
        query.processAllAvailable()
        # version 2 adds a field with a default (BACKWARD compatible, the registry's default): the
        # running query reads the new records with the schema it started with
        produce_avro(bootstrap, registry, topic, V2, [{"id": i, "name": f"n{i}", "email": f"e{i}"}
                                                      for i in range(10, 20)], 2)
        query.processAllAvailable()
        got = sorted((r["id"], r["name"]) for r in spark.sql(f"SELECT * FROM {table}").collect())
        assert got == [(i, f"n{i}") for i in range(20)]
        # a change no reader of version 1 can resolve (compatibility switched off to let it in) stops the
        # query with an error that says where and why
        httpx.put(f"{registry}/config/{topic}-value", json={"compatibility": "NONE"}, timeout=30).raise_for_status()
        produce_avro(bootstrap, registry, topic, V3, [{"id": 99, "name": 7}], 2)
        with pytest.raises(StreamingQueryException, match=r"(?s)offset 10: the value \(writer schema id \d+\) cannot "
                                                          r"be read with the query's reader schema"):
            query.processAllAvailable()
    finally:
        query.stop()
    # a new read takes the latest schema: older records get the new field's default
    latest = seaway_read(spark, bootstrap, subscribe=topic, valueFormat="avro", **{"schema.registry.url": registry},
                         endingOffsets=f'{{"{topic}":{{"0":10,"1":10}}}}')
    assert latest.columns[7:] == ["id", "name"]  # version 3 is the latest now: name an int
    v2_read = seaway_read(spark, bootstrap, subscribe=topic, valueFormat="avro", **{"schema.registry.url": registry},
                          valueSchema=json.dumps(V2), endingOffsets=f'{{"{topic}":{{"0":10,"1":10}}}}')
    emails = {r["id"]: r["email"] for r in v2_read.select("id", "email").collect()}
    assert emails == {i: (None if i < 10 else f"e{i}") for i in range(20)}


@pytest.mark.timeout(180)
def test_json_and_string_values(spark: Any, shared_broker: BrokerProcess) -> None:
    bootstrap, topic = shared_broker.bootstrap, unique_topic("json")
    create_topic(bootstrap, topic, 1)
    values: list[bytes | None] = [
        b'{"id": 1, "name": "a", "at": "2024-01-01T10:00:00Z", "day": "2024-01-02", "tags": [1, 2],\n'
        b' "inner": {"x": true}, "timestamp": 5, "extra": "ignored"}',
        b'{"id": 2, "name": "b\\u00e9"}',
        b"{not json",
        None,
        b"[1, 2]",
        b'{"id": "three"}',
        b'{"id": 4, "day": "2024-02-30"}',
    ]
    produce(bootstrap, ({"topic": topic, "value": v, "partition": 0} for v in values))
    df = seaway_read(spark, bootstrap, subscribe=topic, valueFormat="json", valueColumnPrefix="v_",
                     valueSchema="id BIGINT, name STRING, at TIMESTAMP, day DATE, tags ARRAY<INT>, "
                                 "inner STRUCT<x: BOOLEAN>, timestamp BIGINT")
    rows = df.orderBy("offset").selectExpr("v_id", "v_name", "unix_millis(v_at) AS at", "CAST(v_day AS STRING) AS day",
                                           "v_tags", "v_inner.x AS x", "v_timestamp", "timestamp IS NOT NULL AS t")
    got = [tuple(r) for r in rows.collect()]
    assert got == [
        (1, "a", 1_704_103_200_000, "2024-01-02", [1, 2], True, 5, True),
        (2, "bé", None, None, None, None, None, True),
        (None, None, None, None, None, None, None, True),  # not JSON: null columns (from_json's PERMISSIVE)
        (None, None, None, None, None, None, None, True),  # null value
        (None, None, None, None, None, None, None, True),  # not an object
        (None, None, None, None, None, None, None, True),  # a field that does not convert
        (None, None, None, None, None, None, None, True),  # no such date
    ]
    text = seaway_read(spark, bootstrap, subscribe=topic, valueFormat="string").orderBy("offset")
    assert [r["valueData"] for r in text.select("valueData").collect()] == [
        None if v is None else v.decode() for v in values]
