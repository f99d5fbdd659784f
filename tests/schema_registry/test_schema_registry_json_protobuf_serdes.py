"""confluent-kafka's JSON Schema and Protobuf serdes against our registry and our serdes, both ways.

A real uvicorn serves an in-memory registry. confluent-kafka's ``ProtobufSerializer`` registers
its file as a base64 descriptor and each import under its import path (a subject holding
``/``), and reads schemas back with ``format=serialized``; ``JSONSerializer`` validates and
registers JSON Schema. Frames written by either side decode to equal values on the other, and
the frames are byte for byte the same (same id, same message-index array, same payload).
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka.schema_registry import Schema
from confluent_kafka.schema_registry import SchemaRegistryClient as ConfluentClient
from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer as ConfluentProtobufDeserializer
from confluent_kafka.schema_registry.protobuf import ProtobufSerializer as ConfluentProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from google.protobuf import message_factory
from seaway.schema_registry.client import SchemaRegistryClient
from seaway.schema_registry.json_serde import JsonSchemaDeserializer, JsonSchemaSerializer
from seaway.schema_registry.protobuf_schema import compile_protobuf
from seaway.schema_registry.protobuf_serde import ProtobufDeserializer, ProtobufSerializer
from seaway.schema_registry.wire import SerdeError

from tests.schema_registry.registry_server import serve_registry

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
message Refund { int64 order_id = 1; Order.Line line = 2; }
"""
PERSON = {"$schema": "http://json-schema.org/draft-07/schema#", "title": "Person", "type": "object",
          "properties": {"name": {"type": "string"}, "age": {"type": "integer", "minimum": 0},
                         "tags": {"type": "array", "items": {"type": "string"}}},
          "required": ["name"]}
VALUE = SerializationContext("orders", MessageField.VALUE)


@pytest.fixture
def url() -> Iterator[str]:
    yield from serve_registry()


def message_classes() -> dict[str, Any]:
    """Dynamic message classes for ORDER (as generated code would have them, same descriptors)."""
    model = compile_protobuf(ORDER, [("acme/common.proto", MONEY)])[0]
    return {name: message_factory.GetMessageClass(model.pool.FindMessageTypeByName(f"acme.orders.{name}"))
            for name in ("Order", "Refund", "Order.Line")}


def an_order(classes: dict[str, Any]) -> Any:
    order = classes["Order"](id=7)
    order.total.currency, order.total.units = "EUR", 1250
    order.placed_at.FromDatetime(datetime.datetime(2026, 5, 4, 3, 2, 1, tzinfo=datetime.UTC))
    order.labels["channel"] = "web"
    order.lines.add(sku="kite", quantity=2)
    return order


@pytest.mark.timeout(60)
def test_protobuf_both_ways(url: str) -> None:
    classes = message_classes()
    order = an_order(classes)
    refund = classes["Refund"](order_id=7)
    refund.line.sku, refund.line.quantity = "kite", 1
    with ConfluentClient({"url": url}) as confluent, SchemaRegistryClient(url) as ours:
        theirs_order = ConfluentProtobufSerializer(classes["Order"], confluent)(order, VALUE)
        refunds = SerializationContext("refunds", MessageField.VALUE)
        theirs_refund = ConfluentProtobufSerializer(classes["Refund"], confluent)(refund, refunds)
        assert theirs_order is not None and theirs_refund is not None
        assert theirs_refund[5:7] == b"\x02\x02"  # message index [1]: the second message of the file
        # ours reads theirs, into a dynamic message built from the registry's schema
        dynamic = ProtobufDeserializer(ours)
        decoded = dynamic(theirs_order)
        assert decoded.SerializeToString(deterministic=True) == order.SerializeToString(deterministic=True)
        assert decoded.DESCRIPTOR.full_name == "acme.orders.Order" and decoded.labels["channel"] == "web"
        assert dynamic(theirs_refund).line.sku == "kite"
        assert ProtobufDeserializer(ours, classes["Refund"])(theirs_refund) == refund
        # ours writes the very same frames (the registry found the same schema: same id)
        assert ProtobufSerializer(ours, classes["Order"])(order, "orders") == theirs_order
        ours_refund = ProtobufSerializer(ours, classes["Refund"])(refund, "refunds")
        assert ours_refund == theirs_refund
        # theirs reads ours (it asks for the schema with format=serialized)
        assert ConfluentProtobufDeserializer(classes["Refund"], {}, confluent)(ours_refund, refunds) == refund
        assert sorted(confluent.get_subjects()) == ["acme/common.proto", "orders-value", "refunds-value"]
        assert confluent.get_latest_version("orders-value").schema.references[0].subject == "acme/common.proto"


@pytest.mark.timeout(60)
def test_json_schema_both_ways(url: str) -> None:
    value = {"name": "Ada", "age": 36, "tags": ["math"]}
    users = SerializationContext("users", MessageField.VALUE)
    with ConfluentClient({"url": url}) as confluent, SchemaRegistryClient(url) as ours:
        theirs = JSONSerializer(json.dumps(PERSON), confluent)(value, users)
        assert theirs is not None
        assert JsonSchemaDeserializer(ours)(theirs) == value
        mine = JsonSchemaSerializer(ours, PERSON)(value, "users")
        assert mine == theirs
        assert JSONDeserializer(Schema(json.dumps(PERSON), "JSON"), schema_registry_client=confluent)(
            mine, users) == value
        assert JSONDeserializer(None, schema_registry_client=confluent)(mine, users) == value
        # values the schema refuses are refused before anything is written
        with pytest.raises(SerdeError, match="is a required property"):
            JsonSchemaSerializer(ours, PERSON)({"age": 1}, "users")
        with pytest.raises(SerdeError, match="-1 is less than the minimum of 0"):
            JsonSchemaSerializer(ours, PERSON)({"name": "x", "age": -1}, "users")


@pytest.mark.timeout(60)
def test_json_schema_with_a_reference(url: str) -> None:
    address = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    person = {"type": "object", "title": "Resident",
              "properties": {"name": {"type": "string"}, "home": {"$ref": "address.json"}}}
    from seaway.schema_registry.schemas import SchemaReference

    with SchemaRegistryClient(url) as ours:
        version = ours.register("address", json.dumps(address), schema_type="JSON")
        assert version == 1
        refs = [SchemaReference("address.json", "address", 1)]
        frame = JsonSchemaSerializer(ours, person, references=refs)({"name": "Bo", "home": {"city": "Oslo"}}, "p")
        assert frame is not None
        assert JsonSchemaDeserializer(ours)(frame) == {"name": "Bo", "home": {"city": "Oslo"}}
        with pytest.raises(SerdeError, match="'city' is a required property"):
            JsonSchemaSerializer(ours, person, references=refs)({"name": "Bo", "home": {}}, "p")
