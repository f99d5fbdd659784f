"""A Protobuf schema is compiled by protoc once: re-registrations, lookups and checks reuse it.

protoc writes the files, compiles them and generates Python for every registration it runs
for, the largest part of a Protobuf registration's cost (bench/registry_types.py). The
compilation is cached by (text, references) and by (canonical text, references), so the same
schema registered under another subject, looked up, checked for compatibility or registered
again in its canonical spelling never runs protoc a second time, with or without references.
The cache is bounded by an estimate of the memory its models hold (their descriptor pools).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from seaway.schema_registry.app import create_app
from seaway.schema_registry.log import MemorySchemaLog
from seaway.schema_registry.protobuf_schema import _CompiledCache, _weight, compile_protobuf, protoc_runs

CT = "application/vnd.schemaregistry.v1+json"


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(log=MemorySchemaLog())
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://registry") as c:
        yield c


async def post(c: httpx.AsyncClient, path: str, body: dict[str, Any]) -> Any:
    r = await c.post(path, content=json.dumps(body), headers={"Content-Type": CT})
    assert r.status_code == 200, r.text
    return r.json()


def unique() -> str:
    """A message name no other test compiled (the cache is the process's)."""
    return "M" + uuid.uuid4().hex


async def test_the_same_schema_is_compiled_once(client: httpx.AsyncClient) -> None:
    name = unique()
    text = f'syntax = "proto3";\npackage cache.test;\n// a comment\nmessage {name} {{ string a = 1; int64 b = 2; }}\n'
    body = {"schema": text, "schemaType": "PROTOBUF"}
    before = protoc_runs()
    assert await post(client, "/subjects/a/versions", body) == {"id": 1}
    assert protoc_runs() - before == 1
    canonical = (await client.get("/subjects/a/versions/1")).json()["schema"]
    assert canonical != text  # the comment is gone: another spelling of the same schema
    assert await post(client, "/subjects/b/versions", body) == {"id": 1}
    assert (await post(client, "/subjects/b", body))["version"] == 1
    assert await post(client, "/subjects/c/versions", {"schema": canonical, "schemaType": "PROTOBUF"}) == {"id": 1}
    assert (await post(client, "/subjects/c", {"schema": canonical, "schemaType": "PROTOBUF"}))["id"] == 1
    verdict = await post(client, "/compatibility/subjects/a/versions/latest", body)
    assert verdict == {"is_compatible": True}
    assert protoc_runs() - before == 1


async def test_a_schema_with_references_is_compiled_once(client: httpx.AsyncClient) -> None:
    dep, root = unique(), unique()
    dep_text = f'syntax = "proto3";\npackage cache.dep;\nmessage {dep} {{ string id = 1; }}\n'
    root_text = (f'syntax = "proto3";\npackage cache.root;\nimport "cache/dep.proto";\n'
                 f"message {root} {{ cache.dep.{dep} dep = 1; int32 n = 2; }}\n")
    before = protoc_runs()
    assert await post(client, "/subjects/cache%2Fdep.proto/versions",
                      {"schema": dep_text, "schemaType": "PROTOBUF"}) == {"id": 1}
    refs = [{"name": "cache/dep.proto", "subject": "cache/dep.proto", "version": 1}]
    body = {"schema": root_text, "schemaType": "PROTOBUF", "references": refs}
    assert await post(client, "/subjects/root-a/versions", body) == {"id": 2}
    runs = protoc_runs() - before
    assert runs == 2  # the referenced file, then the root with it
    assert await post(client, "/subjects/root-b/versions", body) == {"id": 2}
    assert (await post(client, "/subjects/root-a", body))["version"] == 1
    assert protoc_runs() - before == runs
    other_refs = [{"name": "cache/dep.proto", "subject": "cache/dep.proto", "version": 1}]
    changed = {**body, "schema": root_text.replace("int32 n = 2;", "int32 n = 2; string s = 3;"),
               "references": other_refs}
    assert await post(client, "/subjects/root-a/versions", changed) == {"id": 3}
    assert protoc_runs() - before == runs + 1  # a new text is compiled, of course


def test_the_cache_is_bounded_by_an_estimate_of_its_memory() -> None:
    texts = [f'syntax = "proto3";\nmessage {unique()} {{ string a = 1; }}\n' for _ in range(6)]
    compiled = [(text, *compile_protobuf(text)) for text in texts]
    one = _weight((texts[0], ()), compiled[0][1], compiled[0][2])
    assert one > 60 * sum(len(f) for f in compiled[0][1].files)  # the descriptor pool counts, not just text
    cache = _CompiledCache(budget=3 * one + one // 2)  # room for three
    for text, model, canonical in compiled:
        cache.put((text, ()), model, canonical)
        cache.get((texts[2], ()))  # used again and again: stays
    assert cache.get((texts[2], ())) is not None and cache.get((texts[5], ())) is not None
    assert cache.get((texts[0], ())) is None and cache.get((texts[1], ())) is None  # least recently used: gone
    cache.put(("x" * (4 * one), ()), compiled[0][1], compiled[0][2])  # heavier than the budget: not kept
    assert cache.get(("x" * (4 * one), ())) is None and cache.get((texts[2], ())) is not None
