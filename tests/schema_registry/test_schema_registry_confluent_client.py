"""confluent-kafka's own SchemaRegistryClient and Avro serdes against our registry (real uvicorn).

The strongest compatibility proof we have without Confluent itself. confluent-kafka's
schema-registry module needs its ``schemaregistry`` extra, which the ``dev`` extra installs.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from confluent_kafka.schema_registry import Schema
from confluent_kafka.schema_registry import SchemaRegistryClient as ConfluentClient
from confluent_kafka.schema_registry.avro import AvroDeserializer as ConfluentAvroDeserializer
from confluent_kafka.schema_registry.avro import AvroSerializer as ConfluentAvroSerializer
from confluent_kafka.schema_registry.error import SchemaRegistryError
from confluent_kafka.serialization import MessageField, SerializationContext
from seaway.schema_registry.client import SchemaRegistryClient
from seaway.schema_registry.serde import AvroDeserializer, AvroSerializer

from tests.schema_registry.registry_server import USER, USER_BAD, USER_V2, serve_registry
from tests.support.optional import present


@pytest.fixture
def registry_url() -> Iterator[str]:
    yield from serve_registry()


@pytest.mark.timeout(30)
def test_confluent_kafka_client(registry_url: str) -> None:
    with ConfluentClient({"url": registry_url}) as client:
        _exercise_confluent_client(client)


def _exercise_confluent_client(client: ConfluentClient) -> None:
    schema_id = client.register_schema("users-value", Schema(USER, "AVRO"))
    assert schema_id == 1
    assert client.register_schema("other", Schema(USER, "AVRO")) == 1
    fetched = client.get_schema(schema_id)
    assert json.loads(present(fetched.schema_str)) == json.loads(USER)
    assert fetched.schema_type == "AVRO"
    latest = client.get_latest_version("users-value")
    assert (latest.schema_id, latest.version, latest.subject) == (1, 1, "users-value")
    assert client.lookup_schema("users-value", Schema(USER, "AVRO")).version == 1
    assert client.get_subjects() == ["other", "users-value"]
    assert client.get_versions("users-value") == [1]
    assert client.get_version("users-value", 1).schema_id == 1
    assert client.test_compatibility("users-value", Schema(USER_V2, "AVRO")) is True
    assert client.test_compatibility("users-value", Schema(USER_BAD, "AVRO"), verbose=True) is False
    assert client.test_compatibility_all_versions("users-value", Schema(USER_V2, "AVRO")) is True
    with pytest.raises(SchemaRegistryError) as info:
        client.register_schema("users-value", Schema(USER_BAD, "AVRO"))
    assert info.value.http_status_code == 409
    assert client.register_schema("users-value", Schema(USER_V2, "AVRO"), normalize_schemas=True) == 2
    # confluent-kafka declares str, but returns the registry's JSON body: checked as what it is
    answer: object = client.set_compatibility("users-value", "FULL")
    assert answer == {"compatibility": "FULL"}
    assert client.get_compatibility("users-value") == "FULL"
    assert client.get_compatibility() == "BACKWARD"
    assert client.get_schema_types() == ["JSON", "PROTOBUF", "AVRO"]
    assert client.get_global_mode() == "READWRITE"
    assert client.delete_version("other", 1) == 1
    assert client.delete_subject("users-value") == [1, 2]
    assert client.delete_subject("users-value", permanent=True) == [1, 2]
    with pytest.raises(SchemaRegistryError) as info:
        client.get_versions("users-value")  # (get_latest_version would answer from its cache)
    assert (info.value.http_status_code, info.value.error_code) == (404, 40401)
    assert client.update_global_mode("IMPORT") == "IMPORT"
    assert client.get_contexts() == ["."]


@pytest.mark.timeout(30)
def test_confluent_serdes_interoperate_with_ours(registry_url: str) -> None:
    with ConfluentClient({"url": registry_url}) as confluent:
        _exercise_confluent_serdes(confluent, registry_url)


def _exercise_confluent_serdes(confluent: ConfluentClient, registry_url: str) -> None:
    ctx = SerializationContext("users", MessageField.VALUE)
    value = {"name": "Ada", "age": 36}
    theirs = ConfluentAvroSerializer(confluent, USER)(value, ctx)
    assert theirs is not None
    with SchemaRegistryClient(registry_url) as ours_client:
        assert AvroDeserializer(ours_client)(theirs) == value
        ours = AvroSerializer(ours_client, USER)(value, "users")
        assert ours == theirs  # byte-identical frames: same id, same Avro encoding
        assert ConfluentAvroDeserializer(confluent)(ours, ctx) == value
