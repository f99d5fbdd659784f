"""The cached fast paths of GET /schemas/ids/{id} and POST /subjects/{s} never answer stale data.

Both endpoints answer from caches (serialized bytes per store object, parse results per schema
text, request bodies per bytes): these tests change the state between identical requests and
check that the answers follow, and that hand-read parameters behave as declared ones did.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from seaway.schema_registry.app import create_app
from seaway.schema_registry.log import MemorySchemaLog

CT = "application/vnd.schemaregistry.v1+json"
SPACED = json.dumps(
    {"type": "record", "name": "R", "namespace": "n", "fields": [{"name": "a", "type": "int"}]}, indent=2
)
CANONICAL = '{"type":"record","name":"R","namespace":"n","fields":[{"name":"a","type":"int"}]}'
OTHER = json.dumps({"type": "record", "name": "S", "fields": [{"name": "b", "type": "long"}]})


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(log=MemorySchemaLog())
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://registry") as c:
        yield c


async def post(c: httpx.AsyncClient, path: str, body: Any) -> httpx.Response:
    return await c.post(path, content=json.dumps(body), headers={"Content-Type": CT})


def error_code(r: httpx.Response) -> tuple[int, int]:
    return r.status_code, int(r.json()["error_code"])


async def test_lookup_follows_deletes_and_re_registration(client: httpx.AsyncClient) -> None:
    assert (await post(client, "/subjects/s/versions", {"schema": SPACED})).json() == {"id": 1}
    for _ in range(3):  # repeated: parse cache, body cache and response cache all hit
        r = await post(client, "/subjects/s", {"schema": SPACED})
        assert r.json() == {"subject": "s", "version": 1, "id": 1, "schema": CANONICAL}
        assert r.headers["content-type"] == CT
    assert (await client.delete("/subjects/s/versions/1")).json() == 1
    assert error_code(await post(client, "/subjects/s", {"schema": SPACED})) == (404, 40401)
    found = await post(client, "/subjects/s?deleted=true", {"schema": SPACED})
    assert found.json() == {"subject": "s", "version": 1, "id": 1, "schema": CANONICAL}
    assert (await post(client, "/subjects/s/versions", {"schema": SPACED})).json() == {"id": 1}
    again = await post(client, "/subjects/s", {"schema": SPACED})
    assert again.json() == {"subject": "s", "version": 2, "id": 1, "schema": CANONICAL}
    assert error_code(await post(client, "/subjects/s", {"schema": OTHER})) == (404, 40403)
    assert error_code(await post(client, "/subjects/nope", {"schema": SPACED})) == (404, 40401)


async def test_lookup_cache_respects_the_subject_normalize_config(client: httpx.AsyncClient) -> None:
    short = json.dumps({"type": "record", "name": "R", "namespace": "n", "fields": [{"name": "a", "type": "int"}]})
    full = json.dumps({"type": "record", "name": "n.R", "fields": [{"name": "a", "type": "int"}]})
    await post(client, "/subjects/s/versions?normalize=true", {"schema": short})
    # The same schema spelled otherwise: Confluent matches versions structurally (Avro's
    # Schema.equals), with or without normalize, and so do we.
    assert (await post(client, "/subjects/s", {"schema": full})).json()["id"] == 1
    r = await client.put("/config/s", content=json.dumps({"compatibility": "BACKWARD", "normalize": True}),
                         headers={"Content-Type": CT})
    assert r.status_code == 200
    found = (await post(client, "/subjects/s", {"schema": full})).json()
    assert (found["id"], found["version"]) == (1, 1)


async def test_schema_by_id_follows_permanent_deletes(client: httpx.AsyncClient) -> None:
    await post(client, "/subjects/s/versions", {"schema": SPACED})
    for _ in range(2):
        r = await client.get("/schemas/ids/1")
        assert (r.status_code, r.json(), r.headers["content-type"]) == (200, {"schema": CANONICAL}, CT)
    assert (await client.get("/schemas/ids/1?fetchMaxId=true")).json() == {"schema": CANONICAL, "maxId": 1}
    await client.delete("/subjects/s")
    assert (await client.get("/schemas/ids/1")).status_code == 200  # soft delete keeps the id
    await client.delete("/subjects/s?permanent=true")
    assert error_code(await client.get("/schemas/ids/1")) == (404, 40403)
    # An import may put another schema under the freed id: the cached answer must not survive.
    mode = await client.put("/mode", content=json.dumps({"mode": "IMPORT"}), headers={"Content-Type": CT})
    assert mode.status_code == 200, mode.text
    imported = await post(client, "/subjects/t/versions", {"schema": OTHER, "id": 1, "version": 1})
    assert imported.json() == {"id": 1}
    assert json.loads((await client.get("/schemas/ids/1")).json()["schema"]) == json.loads(OTHER)
    assert (await post(client, "/subjects/t", {"schema": OTHER})).json()["subject"] == "t"


async def test_hand_read_parameters_keep_declared_semantics(client: httpx.AsyncClient) -> None:
    await post(client, "/subjects/s/versions", {"schema": SPACED})
    assert error_code(await client.get("/schemas/ids/x")) == (404, 404)
    assert error_code(await client.get("/schemas/ids/-5")) == (404, 40403)
    assert (await client.get("/schemas/ids/1?fetchMaxId=False")).json() == {"schema": CANONICAL}
    assert (await client.get("/schemas/ids/1?fetchMaxId=maybe")).json() == {"schema": CANONICAL}
    assert (await post(client, "/subjects/s?deleted=maybe", {"schema": SPACED})).json()["version"] == 1
    assert error_code(await post(client, "/subjects/s", {"schema": "{nope"})) == (422, 42201)
    bad = await client.post("/subjects/s", content=b"{", headers={"Content-Type": CT})
    assert error_code(bad) == (400, 400)
    assert (await client.get("/subjects/s")).status_code == 405


async def test_resolved_format_inlines_references_on_the_slow_path(client: httpx.AsyncClient) -> None:
    await post(client, "/subjects/inner/versions", {"schema": OTHER})
    outer = json.dumps({"type": "record", "name": "O", "fields": [{"name": "s", "type": "S"}]})
    refs = [{"name": "S", "subject": "inner", "version": 1}]
    assert (await post(client, "/subjects/outer/versions", {"schema": outer, "references": refs})).json() == {"id": 2}
    plain = (await client.get("/schemas/ids/2")).json()
    assert plain["references"] == refs and '"type":"S"' in plain["schema"]
    resolved = (await client.get("/schemas/ids/2?format=resolved")).json()
    assert '"name":"S"' in resolved["schema"] and '"type":"long"' in resolved["schema"]
    looked_up = await post(client, "/subjects/outer?format=resolved", {"schema": outer, "references": refs})
    assert looked_up.json()["id"] == 2 and '"type":"long"' in looked_up.json()["schema"]
