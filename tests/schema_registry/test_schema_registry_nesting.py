"""Deeply nested JSON (schemas and bodies) answers 42201 with the depth limit, never a 500.

Over one real keep-alive HTTP connection to uvicorn on loopback: each refusal must leave
the connection usable for the next request (a ``RecursionError`` used to reset it).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import httpx
import pytest
from seaway.schema_registry.app import create_app
from seaway.schema_registry.log import MemorySchemaLog
from seaway.schema_registry.schemas import parse_schema

from tests.schema_registry.registry_support import ServedApp

CT = {"Content-Type": "application/vnd.schemaregistry.v1+json"}
MAX_JSON_DEPTH = 200  # seaway.schema_registry.nesting.MAX_JSON_DEPTH, the documented limit
SIMPLE = json.dumps({"type": "record", "name": "R", "fields": [{"name": "a", "type": "int"}]})


def arrays(depth: int, leaf: str = '"int"') -> str:
    return '{"type":"array","items":' * depth + leaf + "}" * depth


def records(depth: int, leaf: str = '"int"', doc: str = "") -> str:
    text = leaf
    for i in range(depth):
        text = f'{{"type":"record","name":"R{i}","doc":"{doc}","fields":[{{"name":"f","type":{text}}}]}}'
    return text


@pytest.fixture
def client() -> Iterator[httpx.Client]:
    limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)
    with ServedApp(create_app(log=MemorySchemaLog())) as served, httpx.Client(
        base_url=served.url, limits=limits, timeout=30
    ) as c:
        yield c


def _too_deep(r: httpx.Response) -> None:
    assert r.status_code == 422, r.text[:500]
    body = r.json()
    assert body["error_code"] == 42201
    assert f"deeper than {MAX_JSON_DEPTH} levels" in body["message"]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("depth", [MAX_JSON_DEPTH + 1, 400, 1000, 50_000])
def test_a_schema_nested_too_deep_is_422_on_every_route(client: httpx.Client, depth: int) -> None:
    body = json.dumps({"schema": arrays(depth)})
    for path in ("/subjects/s/versions", "/subjects/s", "/compatibility/subjects/s/versions/latest"):
        _too_deep(client.post(path, content=body, headers=CT))
        # The same keep-alive connection goes on serving.
        assert client.get("/subjects").status_code == 200
    assert client.post("/subjects/s/versions", content=json.dumps({"schema": SIMPLE}), headers=CT).json() == {"id": 1}


@pytest.mark.timeout(120)
def test_the_deepest_accepted_schema_registers_and_checks(client: httpx.Client) -> None:
    """Within the limit everything works, compatibility walk included (no RecursionError)."""
    for depth, make in ((MAX_JSON_DEPTH - 1, arrays), (MAX_JSON_DEPTH // 3, records)):
        first = make(depth)
        second = make(depth, '"long"')  # int -> long at the bottom: a promotion, compatible
        subject = f"deep-{make.__name__}"
        r1 = client.post(f"/subjects/{subject}/versions", content=json.dumps({"schema": first}), headers=CT)
        assert r1.status_code == 200, r1.text[:300]
        r2 = client.post(f"/subjects/{subject}/versions", content=json.dumps({"schema": second}), headers=CT)
        assert r2.status_code == 200, r2.text[:300]
        back = client.post(f"/subjects/{subject}", content=json.dumps({"schema": first}), headers=CT)
        assert back.json()["version"] == 1


@pytest.mark.timeout(120)
@pytest.mark.parametrize("route", ["/subjects/s/versions", "/subjects/s", "/config", "/mode"])
def test_a_request_body_nested_too_deep_is_422_before_json_parses_it(client: httpx.Client, route: str) -> None:
    body = '{"schema":"\\"int\\"","compatibility":"FULL","mode":"READWRITE","x":' + "[" * 100_000 + "]" * 100_000 + "}"
    method = "PUT" if route in ("/config", "/mode") else "POST"
    _too_deep(client.request(method, route, content=body, headers=CT))
    assert client.get("/subjects").status_code == 200


@pytest.mark.timeout(120)
def test_a_failing_deep_schema_gets_a_short_message_quickly(client: httpx.Client) -> None:
    """avro quotes each level's JSON in its error: with a padded doc that was 17 MB of message."""
    schema = records(60, '"nosuchtype"', doc="x" * 10_000)  # 600 KB, 180 levels: within the limit
    started = time.monotonic()
    r = client.post("/subjects/s/versions", content=json.dumps({"schema": schema}), headers=CT)
    assert r.status_code == 422 and r.json()["error_code"] == 42201
    assert len(r.content) < 8192
    assert time.monotonic() - started < 10


def test_reference_chains_that_nest_too_deep_together_are_422_not_recursion_error() -> None:
    """Each text within the limit, but referenced types nested into each other: the guard catches it."""
    dependencies = []
    previous = '"int"'
    for level in range(8):  # 8 schemas of 190 array levels each, each ending in the previous record
        name = f"L{level}"
        inner = arrays(190, previous)
        dependencies.append(f'{{"type":"record","name":"{name}","fields":[{{"name":"f","type":{inner}}}]}}')
        previous = f'"{name}"'
    with pytest.raises(Exception) as failure:
        parsed = parse_schema(
            '{"type":"record","name":"Top","fields":[{"name":"t","type":"L7"}]}', dependencies=dependencies
        )
        parsed.resolved()
    assert getattr(failure.value, "error_code", None) == 42201, failure.value
    assert f"deeper than {MAX_JSON_DEPTH} levels" in str(failure.value)
