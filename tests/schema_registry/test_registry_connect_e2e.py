"""End to end: Confluent's serdes, our registry on Kafka, and a Connect worker using our AvroConverter.

* records produced with confluent-kafka's AvroSerializer are read by a Connect sink through the
  AvroConverter (configured by Confluent's class name, resolved from the installed entry points);
* records produced by a Connect source through the AvroConverter are read by confluent-kafka's
  AvroDeserializer.
"""

from __future__ import annotations

import asyncio
import decimal
import json
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest
from confluent_kafka import Producer
from confluent_kafka.schema_registry import SchemaRegistryClient as ConfluentClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from seaway.connect.api import (
    ConfigDef,
    Schema,
    SchemaBuilder,
    SinkConnector,
    SinkRecord,
    SinkTask,
    SourceConnector,
    SourceRecord,
    SourceTask,
    Struct,
    Task,
)
from seaway.connect.api.data.logical import Decimal
from seaway.connect.testing import EmbeddedConnect, consume_records
from seaway.schema_registry.app import create_app
from seaway.schema_registry.settings import RegistrySettings

from tests.schema_registry.registry_support import FAST_GROUPS, ServedApp, free_port
from tests.support.broker import BrokerProcess
from tests.support.optional import present

CONFLUENT_NAME = "io.confluent.connect.avro.AvroConverter"

ORDER = json.dumps({
    "type": "record", "name": "Order", "namespace": "shop",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "item", "type": "string"},
        {"name": "price", "type": {"type": "bytes", "logicalType": "decimal", "precision": 8, "scale": 2}},
        {"name": "note", "type": ["null", "string"], "default": None},
    ],
})

READING = (SchemaBuilder.struct().name("shop.Reading")
           .field("sensor", Schema.STRING_SCHEMA)
           .field("value", Schema.FLOAT64_SCHEMA)
           .field("cost", Decimal.schema(3))
           .field("tag", Schema.OPTIONAL_STRING_SCHEMA)
           .build())


class CollectingSinkTask(SinkTask):
    records: ClassVar[list[SinkRecord]] = []

    def version(self) -> str:
        return "1.0"

    def start(self, props: Mapping[str, str]) -> None:
        pass

    def put(self, records: Sequence[SinkRecord]) -> None:
        type(self).records.extend(records)

    def stop(self) -> None:
        pass


class CollectingSink(SinkConnector):
    def version(self) -> str:
        return "1.0"

    def start(self, props: Mapping[str, str]) -> None:
        self.props = dict(props)

    def task_class(self) -> type[Task]:
        return CollectingSinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [self.props]

    def stop(self) -> None:
        pass

    def config(self) -> ConfigDef:
        return ConfigDef()


class ReadingsTask(SourceTask):
    """Emits three Reading structs once."""

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
                             .put("tag", None if n % 2 else "even"))
                for n in range(3)]

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
    """A broker and a Kafka-backed registry on it."""
    with BrokerProcess(tmp_path / "broker", FAST_GROUPS) as broker:
        port = free_port()
        settings = RegistrySettings(kafkastore_bootstrap_servers=broker.bootstrap,
                                    listeners=f"http://127.0.0.1:{port}", kafkastore_topic_replication_factor=1)
        with ServedApp(create_app(settings), port) as registry:
            yield broker, registry.url


def _connect(broker: BrokerProcess, tmp_path: Path) -> EmbeddedConnect:
    # The converter is found through the installed entry points (pyproject.toml), as in production.
    return EmbeddedConnect(broker.bootstrap, tmp_path, plugins=[CollectingSink, ReadingsSource])


async def _wait_for(predicate: Any, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.05)


@pytest.mark.timeout(120)
async def test_confluent_producer_to_connect_sink_and_connect_source_to_confluent_consumer(
        stack: tuple[BrokerProcess, str], tmp_path: Path) -> None:
    broker, url = stack
    CollectingSinkTask.records = []
    orders = [{"id": n, "item": f"kite{n}", "price": decimal.Decimal(f"{n}.25"), "note": None if n else "first"}
              for n in range(4)]
    with ConfluentClient({"url": url}) as client:
        serialize = AvroSerializer(client, ORDER)
        producer = Producer({"bootstrap.servers": broker.bootstrap})
        for order in orders:
            producer.produce("orders", key=str(order["id"]).encode(),
                             value=serialize(order, SerializationContext("orders", MessageField.VALUE)))
        assert producer.flush(30) == 0

    async with _connect(broker, tmp_path) as connect:
        await connect.create_connector("sink", {
            "connector.class": f"{__name__}:CollectingSink", "topics": "orders",
            "value.converter": CONFLUENT_NAME, "value.converter.schema.registry.url": url})
        await connect.create_connector("source", {
            "connector.class": f"{__name__}:ReadingsSource", "topic": "readings",
            "value.converter": "AvroConverter", "value.converter.schema.registry.url": url})
        await _wait_for(lambda: len(CollectingSinkTask.records) == 4)
        readings = await asyncio.to_thread(consume_records, broker.bootstrap, "readings", 3)

    # Sink side: Connect structs with the Avro record's shape and values.
    sunk = CollectingSinkTask.records
    assert {present(r.value_schema).name for r in sunk} == {"shop.Order"}
    assert [(r.key, r.value.get("id"), r.value.get("item"), r.value.get("price"), r.value.get("note"))
            for r in sunk] == [(str(o["id"]), o["id"], o["item"], o["price"], o["note"]) for o in orders]

    # Source side: Confluent's deserializer reads what our converter wrote, schema from our registry.
    with ConfluentClient({"url": url}) as client:
        deserialize = AvroDeserializer(client)
        decoded = [deserialize(m.value(), SerializationContext("readings", MessageField.VALUE)) for m in readings]
        registered = client.get_latest_version("readings-value")
    assert decoded == [{"sensor": f"s{n}", "value": n / 2, "cost": decimal.Decimal(n) / 1000,
                        "tag": None if n % 2 else "even"} for n in range(3)]
    assert json.loads(registered.schema.schema_str)["name"] == "Reading"
