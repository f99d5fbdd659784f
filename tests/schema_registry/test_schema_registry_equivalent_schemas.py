"""The same schema spelled differently finds its version, as in Confluent (Avro ``Schema.equals``).

Confluent's register and lookup compare a request with a subject's versions structurally, so
reordered keys, a namespace written into the name, reordered custom properties or
``normalize=true`` against a version registered without it all find the existing version
and id. Real HTTP to a uvicorn on loopback.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from seaway.schema_registry.app import create_app
from seaway.schema_registry.log import MemorySchemaLog

from tests.schema_registry.registry_support import ServedApp

CT = {"Content-Type": "application/vnd.schemaregistry.v1+json"}

ORIGINAL = (
    '{"type":"record","name":"User","namespace":"ex","doc":"a user","x-owner":"team-a","x-tier":1,'
    '"fields":[{"name":"name","type":"string"},'
    '{"name":"age","type":["null","int"],"default":null,"doc":"years"},'
    '{"name":"kind","type":{"type":"enum","name":"Kind","symbols":["A","B"]}}]}'
)
REORDERED = (
    '{"fields":[{"type":"string","name":"name"},'
    '{"doc":"years","default":null,"type":["null","int"],"name":"age"},'
    '{"type":{"symbols":["A","B"],"name":"Kind","type":"enum"},"name":"kind"}],'
    '"x-tier":1,"x-owner":"team-a","doc":"a user","namespace":"ex","name":"User","type":"record"}'
)
QUALIFIED = (
    '{"type":"record","name":"ex.User","doc":"a user","x-owner":"team-a","x-tier":1,'
    '"fields":[{"name":"name","type":{"type":"string"}},'
    '{"name":"age","type":["null","int"],"default":null,"doc":"years"},'
    '{"name":"kind","type":{"type":"enum","name":"ex.Kind","symbols":["A","B"]}}]}'
)
DIFFERENT = ORIGINAL.replace('"symbols":["A","B"]', '"symbols":["A","B","C"]')


@pytest.fixture
def client() -> Iterator[httpx.Client]:
    with ServedApp(create_app(log=MemorySchemaLog())) as served, httpx.Client(base_url=served.url) as c:
        yield c


def _post(client: httpx.Client, path: str, schema: str, **params: Any) -> httpx.Response:
    return client.post(path, content=json.dumps({"schema": schema}), headers=CT, params=params)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("first_normalized", [False, True])
@pytest.mark.parametrize("again", [REORDERED, QUALIFIED])
@pytest.mark.parametrize("again_normalized", [False, True])
def test_re_registering_the_same_schema_spelled_otherwise_returns_the_existing_id(
    client: httpx.Client, first_normalized: bool, again: str, again_normalized: bool
) -> None:
    first = _post(client, "/subjects/users-value/versions", ORIGINAL, normalize=str(first_normalized).lower())
    assert first.json() == {"id": 1}
    second = _post(client, "/subjects/users-value/versions", again, normalize=str(again_normalized).lower())
    assert second.json() == {"id": 1}
    assert client.get("/subjects/users-value/versions").json() == [1]
    found = _post(client, "/subjects/users-value", again, normalize=str(again_normalized).lower()).json()
    assert (found["id"], found["version"]) == (1, 1)
    # A schema that really differs is still a new version.
    assert _post(client, "/subjects/users-value/versions", DIFFERENT).json() == {"id": 2}
    assert client.get("/subjects/users-value/versions").json() == [1, 2]


@pytest.mark.timeout(60)
def test_a_soft_deleted_version_is_found_only_when_deleted_versions_are_asked_for(client: httpx.Client) -> None:
    assert _post(client, "/subjects/s/versions", ORIGINAL).json() == {"id": 1}
    assert _post(client, "/subjects/s/versions", DIFFERENT).json() == {"id": 2}
    assert client.delete("/subjects/s/versions/1").json() == 1
    assert _post(client, "/subjects/s", REORDERED).json()["error_code"] == 40403
    assert _post(client, "/subjects/s", REORDERED, deleted="true").json()["version"] == 1
    # Registering it again makes a new version (max + 1) with the same id.
    assert client.put("/config/s", content=json.dumps({"compatibility": "NONE"}), headers=CT).status_code == 200
    assert _post(client, "/subjects/s/versions", ORIGINAL).json() == {"id": 1}
    assert client.get("/subjects/s/versions").json() == [2, 3]
