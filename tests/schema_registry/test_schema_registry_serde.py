"""Our client and serde against a real uvicorn on loopback."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from seaway.schema_registry.client import SchemaRegistryClient
from seaway.schema_registry.errors import ErrorCode, RegistryError
from seaway.schema_registry.serde import AvroDeserializer, AvroSerializer, SerdeError, pack, unpack

from tests.schema_registry.registry_server import USER, USER_BAD, USER_V2, serve_registry


@pytest.fixture
def registry_url() -> Iterator[str]:
    yield from serve_registry()


@pytest.mark.timeout(30)
def test_our_client_and_serde(registry_url: str) -> None:
    with SchemaRegistryClient(registry_url) as client:
        assert client.register("users-value", USER) == 1
        assert client.register("users-value", USER) == 1  # cached
        assert json.loads(client.get_by_id(1)) == json.loads(USER)
        latest = client.get_latest("users-value")
        assert (latest.subject, latest.version, latest.schema_id) == ("users-value", 1, 1)
        assert client.lookup("users-value", USER).version == 1
        assert client.test_compatibility("users-value", USER_V2) is True
        with pytest.raises(RegistryError) as info:
            client.register("users-value", USER_BAD)
        assert info.value.code is ErrorCode.INCOMPATIBLE_SCHEMA
        with pytest.raises(RegistryError) as info:
            client.get_by_id(77)
        assert info.value.code is ErrorCode.SCHEMA_NOT_FOUND

        frame = AvroSerializer(client, USER)({"name": "Bo", "age": 7}, "users")
        schema_id, payload = unpack(frame)
        assert (frame[0], schema_id) == (0, 1)
        assert frame[1:5] == b"\x00\x00\x00\x01"
        assert payload == b"\x04Bo\x0e"
        # schema evolution at read time: old data through the new reader schema
        assert AvroDeserializer(client, USER_V2)(frame) == {"name": "Bo", "age": 7, "email": None}
        v2 = AvroSerializer(client, USER_V2)({"name": "Cy", "age": 2**40, "email": "c@x"}, "users")
        assert unpack(v2)[0] == 2
        assert AvroDeserializer(client)(v2) == {"name": "Cy", "age": 2**40, "email": "c@x"}


def test_wire_format_framing_errors() -> None:
    assert pack(258, b"x") == b"\x00\x00\x00\x01\x02x"
    assert unpack(b"\x00\x00\x00\x01\x02x") == (258, b"x")
    with pytest.raises(SerdeError):
        unpack(b"\x01\x00\x00\x00\x01")
    with pytest.raises(SerdeError):
        unpack(b"\x00\x00")
