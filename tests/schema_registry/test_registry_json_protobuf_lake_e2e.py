"""A Connect pipeline over JSON Schema and Protobuf, landing typed columns in the Parquet lake.

Everything is real: a broker subprocess, our registry on Kafka (``_schemas``), a Connect worker
whose converters are found by Confluent's class names through the installed entry points, and
the Spark sink writing Parquet (its pyarrow writer, on a file:// lake):

* a source connector writes Connect structs through ``JsonSchemaConverter``; confluent-kafka's
  ``JSONDeserializer`` reads them, and a lake sink reads them back through the same converter;
* confluent-kafka's ``ProtobufSerializer`` writes orders (a file with an import, a nested
  message, a map, a Timestamp); the lake sink reads them through ``ProtobufConverter``.

The Parquet files carry typed columns: integers, doubles, decimals, timestamps, structs,
lists and maps, not JSON strings.
"""

from __future__ import annotations

import asyncio
import datetime
import decimal
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from confluent_kafka import Producer
from confluent_kafka.schema_registry import SchemaRegistryClient as ConfluentClient
from confluent_kafka.schema_registry.json_schema import JSONDeserializer
from confluent_kafka.schema_registry.protobuf import ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from google.protobuf import message_factory
from seaway.connect.api import (
    ConfigDef,
    Schema,
    SchemaBuilder,
    SourceConnector,
    SourceRecord,
    SourceTask,
    Struct,
    Task,
)
from seaway.connect.api.data.logical import Decimal, Timestamp
from seaway.connect.testing import EmbeddedConnect, consume_records
from seaway.connectors.spark_sink import SparkParquetSinkConnector
from seaway.schema_registry.app import create_app
from seaway.schema_registry.protobuf_schema import compile_protobuf
from seaway.schema_registry.settings import RegistrySettings

from tests.connectors.spark_sink import lake_check
from tests.schema_registry.registry_support import FAST_GROUPS, ServedApp, free_port
from tests.support.broker import BrokerProcess

READING = (SchemaBuilder.struct().name("plant.Reading")
           .field("sensor", Schema.STRING_SCHEMA).field("value", Schema.FLOAT64_SCHEMA)
           .field("cost", Decimal.schema(3)).field("at", Timestamp.SCHEMA)
           .field("tag", Schema.OPTIONAL_STRING_SCHEMA).build())
T0 = datetime.datetime(2026, 3, 1, 12, 0, tzinfo=datetime.UTC)
MONEY = 'syntax = "proto3";\npackage acme.common;\nmessage Money { string currency = 1; int64 units = 2; }\n'
ORDER = """syntax = "proto3";
package acme.orders;
import "acme/common.proto";
import "google/protobuf/timestamp.proto";
message Order {
  int64 id = 1;
  acme.common.Money total = 2;
  google.protobuf.Timestamp placed_at = 3;
  map<string, string> labels = 4;
  message Line { string sku = 1; int32 quantity = 2; }
  repeated Line lines = 5;
}
"""


class ReadingsTask(SourceTask):
    """Emits four Reading structs once."""

    def version(self) -> str:
        return "1.0"

    def start(self, props: Mapping[str, str]) -> None:
        self.topic, self.done, self.stopped = props["topic"], False, threading.Event()

    def poll(self) -> list[SourceRecord] | None:
        if self.done:
            self.stopped.wait(0.05)
            return None
        self.done = True
        return [SourceRecord({"s": 1}, {"n": n}, self.topic, value_schema=READING, value=Struct(READING)
                             .put("sensor", f"s{n}").put("value", n / 2).put("cost", decimal.Decimal(n) / 1000)
                             .put("at", T0 + datetime.timedelta(seconds=n)).put("tag", None if n % 2 else "even"))
                for n in range(4)]

    def stop(self) -> None:
        self.stopped.set()


class ReadingsSource(SourceConnector):
    def version(self) -> str:
        return "1.0"

    def start(self, props: Mapping[str, str]) -> None:
        self.props = dict(props)

    def task_class(self) -> type[Task]:
        return ReadingsTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [self.props]

    def stop(self) -> None:
        pass

    def config(self) -> ConfigDef:
        return ConfigDef()


@pytest.fixture
def stack(tmp_path: Path) -> Iterator[tuple[BrokerProcess, str]]:
    with BrokerProcess(tmp_path / "broker", FAST_GROUPS) as broker:
        port = free_port()
        settings = RegistrySettings(kafkastore_bootstrap_servers=broker.bootstrap,
                                    listeners=f"http://127.0.0.1:{port}", kafkastore_topic_replication_factor=1)
        with ServedApp(create_app(settings), port) as registry:
            yield broker, registry.url


def produce_orders(bootstrap: str, url: str) -> None:
    model = compile_protobuf(ORDER, [("acme/common.proto", MONEY)])[0]
    order_class = message_factory.GetMessageClass(model.pool.FindMessageTypeByName("acme.orders.Order"))
    producer = Producer({"bootstrap.servers": bootstrap})
    with ConfluentClient({"url": url}) as client:
        serialize = ProtobufSerializer(order_class, client)
        for n in range(3):
            order = order_class(id=100 + n)
            order.total.currency, order.total.units = "EUR", 1000 * n
            order.placed_at.seconds = int(T0.timestamp()) + n
            order.labels["n"] = str(n)
            order.lines.add(sku=f"kite{n}", quantity=n + 1)
            producer.produce("orders", key=str(n).encode(),
                             value=serialize(order, SerializationContext("orders", MessageField.VALUE)))
    assert producer.flush(30) == 0


def lake_table(lake: Path, topic: str) -> pa.Table:
    files = sorted((lake / topic).rglob("*.parquet"))
    assert files, f"no Parquet file under {lake / topic}"
    return pa.concat_tables([pq.read_table(f) for f in files]).sort_by("kafka_offset")


@pytest.mark.timeout(240)
async def test_json_schema_source_and_protobuf_sink_land_typed_parquet(
        stack: tuple[BrokerProcess, str], tmp_path: Path) -> None:
    broker, url = stack
    lake = tmp_path / "lake"
    lake_check.create_topic(broker.bootstrap, "orders", 1)
    await asyncio.to_thread(produce_orders, broker.bootstrap, url)
    sink = {"connector.class": "SparkParquetSinkConnector", "lake.path": lake.as_uri(), "flush.size": "3",
            "parquet.writer": "pyarrow", "include.kafka.metadata": "true",
            "key.converter": "org.apache.kafka.connect.storage.StringConverter"}
    plugins = [ReadingsSource, SparkParquetSinkConnector]
    async with EmbeddedConnect(broker.bootstrap, tmp_path, plugins=plugins) as connect:
        await connect.create_connector("json-source", {
            "connector.class": f"{__name__}:ReadingsSource", "topic": "readings",
            "value.converter": "io.confluent.connect.json.JsonSchemaConverter",
            "value.converter.schema.registry.url": url})
        readings = await asyncio.to_thread(consume_records, broker.bootstrap, "readings", 4)
        await connect.create_connector("orders-lake", {
            **sink, "topics": "orders", "value.converter": "io.confluent.connect.protobuf.ProtobufConverter",
            "value.converter.schema.registry.url": url})
        await connect.create_connector("readings-lake", {
            **sink, "topics": "readings", "flush.size": "4",
            "value.converter": "io.confluent.connect.json.JsonSchemaConverter",
            "value.converter.schema.registry.url": url})
        await asyncio.to_thread(lake_check.wait_landed, lake, "orders", {0: 3}, 120)
        await asyncio.to_thread(lake_check.wait_landed, lake, "readings", {0: 4}, 120)

    # the source's frames are Confluent's JSON Schema frames
    with ConfluentClient({"url": url}) as client:
        deserialize = JSONDeserializer(None, schema_registry_client=client)
        decoded = [deserialize(m.value(), SerializationContext("readings", MessageField.VALUE)) for m in readings]
        assert client.get_latest_version("readings-value").schema.schema_type == "JSON"
    assert [(d["sensor"], d["value"], d["tag"]) for d in decoded] == [
        (f"s{n}", n / 2, None if n % 2 else "even") for n in range(4)]

    orders = lake_table(lake, "orders")
    types = {f.name: f.type for f in orders.schema}
    assert types["id"] == pa.int64() and pa.types.is_timestamp(types["placed_at"])
    assert pa.types.is_struct(types["total"]) and types["total"].field("units").type == pa.int64()
    assert pa.types.is_map(types["labels"]) and pa.types.is_list(types["lines"])
    rows: list[dict[str, Any]] = orders.to_pylist()
    assert [r["id"] for r in rows] == [100, 101, 102]
    assert rows[2]["total"] == {"currency": "EUR", "units": 2000}
    assert rows[1]["placed_at"].replace(tzinfo=datetime.UTC) == T0 + datetime.timedelta(seconds=1)
    assert dict(rows[0]["labels"]) == {"n": "0"} and rows[0]["lines"] == [{"sku": "kite0", "quantity": 1}]

    table = lake_table(lake, "readings")
    types = {f.name: f.type for f in table.schema}
    assert types["value"] == pa.float64() and pa.types.is_decimal(types["cost"])
    assert pa.types.is_timestamp(types["at"]) and types["sensor"] == pa.string()
    assert [(r["sensor"], r["cost"], r["tag"]) for r in table.to_pylist()] == [
        (f"s{n}", decimal.Decimal(n) / 1000, None if n % 2 else "even") for n in range(4)]
