"""Subject names no route could reach once created are refused at create, with Confluent's 42208;
a subject holding ``/`` is reached through ``%2F``, as in Confluent.

Real HTTP to a uvicorn on loopback; the names are sent percent-encoded, as a client that
encodes path segments does (``.`` and ``..`` as they are would be folded away by the client
itself, which is exactly why a subject with that name could never be read back).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from urllib.parse import quote

import httpx
import pytest
from seaway.schema_registry.app import create_app
from seaway.schema_registry.log import MemorySchemaLog

from tests.schema_registry.registry_support import ServedApp

CT = {"Content-Type": "application/vnd.schemaregistry.v1+json"}
SCHEMA = json.dumps({"type": "record", "name": "R", "fields": [{"name": "a", "type": "int"}]})


@pytest.fixture
def client() -> Iterator[httpx.Client]:
    with ServedApp(create_app(log=MemorySchemaLog())) as served, httpx.Client(base_url=served.url) as c:
        yield c


def _encoded(name: str) -> str:
    """Every byte percent-encoded, dots included (``%2E``), so no client folds the segment away."""
    return "".join(f"%{b:02X}" for b in name.encode())


BAD = [".", "..", "a\x7fb", "a\x85b", "\x00", "__GLOBAL", "__EMPTY"]


@pytest.mark.timeout(60)
@pytest.mark.parametrize("name", BAD)
def test_unreachable_or_reserved_subjects_are_refused_at_every_create(client: httpx.Client, name: str) -> None:
    path = _encoded(name)
    creates = [
        client.post(f"/subjects/{path}/versions", content=json.dumps({"schema": SCHEMA}), headers=CT),
        client.put(f"/config/{path}", content=json.dumps({"compatibility": "FULL"}), headers=CT),
        client.put(f"/mode/{path}", content=json.dumps({"mode": "READONLY"}), headers=CT),
    ]
    for r in creates:
        assert r.status_code == 422, r.text
        assert r.json() == {"error_code": 42208, "message": f"The specified subject '{name}' is not valid."}
    assert client.get("/subjects", params={"deleted": "true"}).json() == []
    assert client.get("/schemas").json() == []


@pytest.mark.timeout(60)
def test_a_subject_with_a_slash_is_addressed_encoded(client: httpx.Client) -> None:
    """``a%2Fb`` reaches subject ``a/b`` (Confluent routes the raw path; confluent-kafka's Protobuf
    serializer registers imports under their paths); an unencoded ``/`` is a path separator."""
    encoded = quote("a/b", safe="")
    r = client.post(f"/subjects/{encoded}/versions", content=json.dumps({"schema": SCHEMA}), headers=CT)
    assert r.status_code == 200 and r.json() == {"id": 1}, r.text
    assert client.get("/subjects").json() == ["a/b"]
    assert client.get(f"/subjects/{encoded}/versions").json() == [1]
    assert client.get(f"/subjects/{encoded}/versions/1").json()["subject"] == "a/b"
    put = client.put(f"/config/{encoded}", content=json.dumps({"compatibility": "FULL"}), headers=CT)
    assert put.status_code == 200
    assert client.get(f"/config/{encoded}").json()["compatibilityLevel"] == "FULL"
    r = client.get("/subjects/a/b/versions")
    assert r.status_code == 404 and r.json()["error_code"] == 404
    assert client.delete(f"/subjects/{encoded}").json() == [1]


@pytest.mark.timeout(60)
def test_ordinary_names_still_work_including_dots_and_unicode(client: httpx.Client) -> None:
    for name in ("orders-value", "com.example.Order", "...x", "a.b.", "ünïcode-value", ":.ctx:sub"):
        path = quote(name, safe="")
        r = client.post(f"/subjects/{path}/versions", content=json.dumps({"schema": SCHEMA}), headers=CT)
        assert r.status_code == 200, (name, r.text)
        assert client.get(f"/subjects/{path}/versions").json() == [1]
