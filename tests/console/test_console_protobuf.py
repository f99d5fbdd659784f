"""The message browser decodes Protobuf (with an import of another subject) and JSON Schema frames.

A real broker and registry; confluent-kafka's own ``ProtobufSerializer`` writes an order whose
``.proto`` imports ``acme/common.proto`` (registered by the serializer under that subject, and
referenced from ``orders-value``) and the well-known ``google/protobuf/timestamp.proto``, and
its ``JSONSerializer`` a JSON Schema value. ``seaway console`` shows the order as
``kafka-protobuf-console-consumer`` prints it (protobuf's JSON mapping with default values:
JSON names, int64 as strings, timestamps in RFC 3339, fields by number), and the person as its
JSON document.
"""

from __future__ import annotations

import datetime
import html
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from confluent_kafka import Producer
from confluent_kafka.schema_registry import SchemaRegistryClient as ConfluentClient
from confluent_kafka.schema_registry.json_schema import JSONSerializer
from confluent_kafka.schema_registry.protobuf import ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from google.protobuf import message_factory
from seaway.schema_registry.protobuf_schema import compile_protobuf

from tests.broker.clients.test_confluent_clients import create_topic
from tests.console.console_support import ConsoleProcess
from tests.schema_registry.registry_support import RegistryProcess
from tests.support.broker import BrokerProcess

pytestmark = pytest.mark.timeout(180)

MONEY = 'syntax = "proto3";\npackage acme.common;\nmessage Money { string currency = 1; int64 units = 2; }\n'
ORDER = """syntax = "proto3";
package acme.orders;
import "acme/common.proto";
import "google/protobuf/timestamp.proto";
message Order {
  int64 id = 1;
  acme.common.Money total = 2;
  google.protobuf.Timestamp placed_at = 3;
  repeated string tags = 4;
  int32 priority = 5;
}
"""
PERSON = {"$schema": "http://json-schema.org/draft-07/schema#", "title": "Person", "type": "object",
          "properties": {"name": {"type": "string"}, "age": {"type": "integer"}}, "required": ["name"]}
_ROW = re.compile(r'<span class="kind">(\w+) · schema (\d+)</span><br><code>(.*?)</code>'
                  r"(<br><small[^>]*>(.*?)</small>)?", re.S)


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[BrokerProcess, RegistryProcess]]:
    broker = BrokerProcess(tmp_path_factory.mktemp("console-protobuf") / "broker").start()
    try:
        registry = RegistryProcess(broker.bootstrap, "kafkastore.topic.replication.factor=1").start()
        try:
            yield broker, registry
        finally:
            registry.stop()
    finally:
        broker.stop()


def _order() -> Any:
    model = compile_protobuf(ORDER, [("acme/common.proto", MONEY)])[0]
    order = message_factory.GetMessageClass(model.pool.FindMessageTypeByName("acme.orders.Order"))(id=7)
    order.total.currency, order.total.units = "EUR", 1250
    order.placed_at.FromDatetime(datetime.datetime(2026, 5, 4, 3, 2, 1, tzinfo=datetime.UTC))
    order.tags.append("gift")
    return order


def _produce(bootstrap: str, topic: str, value: bytes) -> None:
    producer = Producer({"bootstrap.servers": bootstrap})
    try:
        producer.produce(topic, value=value, key=b"k")
        assert producer.flush(30) == 0
    finally:
        producer.close()


def _shown(console: ConsoleProcess, topic: str) -> list[tuple[str, int, Any, str | None]]:
    """(kind, schema id, decoded value, note) of each framed row the message browser streams."""
    page = httpx.get(f"{console.url}/topics/{topic}/messages", params={"mode": "oldest"}, timeout=60)
    assert page.status_code == 200, page.text[:2000]
    return [(kind, int(schema_id), json.loads(html.unescape(text)), html.unescape(note) or None)
            for kind, schema_id, text, _, note in _ROW.findall(page.text)]


def test_protobuf_with_an_imported_subject_and_json_schema_decode(
        servers: tuple[BrokerProcess, RegistryProcess], tmp_path: Path) -> None:
    broker, registry = servers
    for topic in ("orders", "people"):
        create_topic(broker.bootstrap, topic)
    with ConfluentClient({"url": registry.url}) as client:
        order = _order()
        framed = ProtobufSerializer(type(order), client)(order, SerializationContext("orders", MessageField.VALUE))
        person = JSONSerializer(json.dumps(PERSON), client)({"name": "Ada", "age": 36},
                                                             SerializationContext("people", MessageField.VALUE))
        assert framed is not None and person is not None
        assert sorted(client.get_subjects()) == ["acme/common.proto", "orders-value", "people-value"]
        reference = client.get_latest_version("orders-value").schema.references[0]
        assert (reference.name, reference.subject) == ("acme/common.proto", "acme/common.proto")
        order_id = client.get_latest_version("orders-value").schema_id
        person_id = client.get_latest_version("people-value").schema_id
    _produce(broker.bootstrap, "orders", framed)
    _produce(broker.bootstrap, "people", person)
    with ConsoleProcess("--bootstrap-server", broker.bootstrap, "--schema-registry-url", registry.url,
                        "--override", "connect.connect.url=") as console:
        assert _shown(console, "orders") == [("protobuf", order_id, {
            "id": "7", "total": {"currency": "EUR", "units": "1250"}, "placedAt": "2026-05-04T03:02:01Z",
            "tags": ["gift"], "priority": 0}, None)]
        page = httpx.get(f"{console.url}/topics/orders/messages", params={"mode": "oldest"}, timeout=60).text
        assert '"id":"7","total":{"currency":"EUR","units":"1250"},"placedAt"' in html.unescape(page)  # by number
        assert _shown(console, "people") == [("json", person_id, {"name": "Ada", "age": 36}, None)]
