"""``seaway registry`` as a real process against a real broker, driven by Confluent's own client."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

from tests.schema_registry.registry_support import FAST_GROUPS, RegistryProcess
from tests.support.broker import BrokerProcess

ORDER = json.dumps({
    "type": "record", "name": "Order", "namespace": "shop",
    "fields": [{"name": "id", "type": "long"}, {"name": "item", "type": "string"}],
})


@pytest.fixture
def fast_broker(tmp_path: Path) -> Iterator[BrokerProcess]:
    with BrokerProcess(tmp_path / "broker", FAST_GROUPS) as broker:
        yield broker


@pytest.mark.timeout(120)
def test_registry_command_serves_confluent_clients_and_stops_cleanly(
    fast_broker: BrokerProcess, tmp_path: Path, topic_name: str
) -> None:
    props = tmp_path / "schema-registry.properties"
    props.write_text(
        f"# Confluent's names\nkafkastore.topic={topic_name}\nschema.registry.group.id={topic_name}\n"
        "schema.compatibility.level=full\n"
    )
    registry = RegistryProcess(fast_broker.bootstrap)
    registry.args += ["--config", str(props)]
    with registry, SchemaRegistryClient({"url": registry.url}) as client:
        schema_id = client.register_schema("orders-value", Schema(ORDER, "AVRO"))
        latest = client.get_latest_version("orders-value")
        assert (latest.schema_id, latest.version, latest.subject) == (schema_id, 1, "orders-value")
        assert client.get_compatibility() == "FULL"  # from the properties file
        ctx = SerializationContext("orders", MessageField.VALUE)
        frame = AvroSerializer(client, ORDER)({"id": 7, "item": "kite"}, ctx)
        assert frame is not None and frame[1:5] == schema_id.to_bytes(4, "big")
        assert AvroDeserializer(client)(frame, ctx) == {"id": 7, "item": "kite"}
        assert registry.stop() == 0  # SIGTERM: clean exit

    with (RegistryProcess(fast_broker.bootstrap, f"kafkastore.topic={topic_name}",
                          f"schema.registry.group.id={topic_name}") as again,
          SchemaRegistryClient({"url": again.url}) as client):
        assert client.get_schema(schema_id).schema_str == latest.schema.schema_str
        assert client.get_versions("orders-value") == [1]
        assert again.stop() == 0


@pytest.mark.timeout(30)
def test_registry_command_rejects_bad_properties(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "seaway.cli.main", "registry", "--override", "schema.compatibility.level=sideways"],
        capture_output=True, text=True, timeout=25,
    )
    assert result.returncode == 2
    assert "sideways" in result.stderr
    result = subprocess.run(
        [sys.executable, "-m", "seaway.cli.main", "registry", "--override", "listeners"],
        capture_output=True, text=True, timeout=25,
    )
    assert result.returncode == 2 and "KEY=VALUE" in result.stderr
