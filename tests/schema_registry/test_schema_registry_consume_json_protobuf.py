"""``seaway consume`` prints JSON Schema and Protobuf frames as JSON (the installed command, a real broker)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from confluent_kafka import Producer
from google.protobuf import message_factory
from seaway.schema_registry.client import SchemaRegistryClient
from seaway.schema_registry.json_serde import JsonSchemaSerializer
from seaway.schema_registry.protobuf_schema import compile_protobuf
from seaway.schema_registry.protobuf_serde import ProtobufSerializer
from seaway.schema_registry.wire import record_name_strategy

from tests.cli.clirun import seaway
from tests.schema_registry.registry_server import serve_registry
from tests.support.broker import BrokerProcess

ORDER = 'syntax = "proto3"; package shop; message Order { int64 id = 1; string item_name = 2; repeated int32 qty = 3; }'


@pytest.fixture
def registry() -> Iterator[str]:
    yield from serve_registry()


@pytest.mark.timeout(90)
def test_consume_decodes_json_schema_and_protobuf(shared_broker: BrokerProcess, topic_name: str,
                                                  registry: str) -> None:
    order_class = message_factory.GetMessageClass(
        compile_protobuf(ORDER)[0].pool.FindMessageTypeByName("shop.Order"))
    with SchemaRegistryClient(registry) as client:
        as_json = JsonSchemaSerializer(client, {"type": "object", "properties": {"n": {"type": "integer"}}})
        as_proto = ProtobufSerializer(client, order_class, subject_name_strategy=record_name_strategy)
        frames = [as_json({"n": 1}, topic_name), as_proto(order_class(id=7, item_name="kite", qty=[1, 2]), topic_name)]
    producer = Producer({"bootstrap.servers": shared_broker.bootstrap})
    for frame in frames:
        producer.produce(topic_name, value=frame)
    assert producer.flush(30) == 0
    consumed = seaway("consume", topic_name, "--from-beginning", "--max-messages", "2",
                      "--bootstrap-server", shared_broker.bootstrap, "--schema-registry-url", registry)
    assert consumed.returncode == 0, consumed.stderr
    lines = consumed.stdout.decode().splitlines()
    assert [json.loads(line) for line in lines] == [{"n": 1}, {"id": "7", "item_name": "kite", "qty": [1, 2]}]
