"""The published OpenAPI document: every route described, Confluent's envelope and media type, Allow on 405."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from seaway.schema_registry.api.openapi import OPERATIONS
from seaway.schema_registry.app import create_app
from seaway.schema_registry.log import MemorySchemaLog

from tests.schema_registry.registry_support import ServedApp

CT = "application/vnd.schemaregistry.v1+json"


@pytest.fixture
def client() -> Iterator[httpx.Client]:
    with ServedApp(create_app(log=MemorySchemaLog())) as served, httpx.Client(base_url=served.url) as c:
        yield c


@pytest.mark.timeout(60)
def test_every_route_is_described_with_confluents_shapes(client: httpx.Client) -> None:
    doc = client.get("/openapi.json").json()
    described = {(m.upper(), path) for path, ops in doc["paths"].items() for m in ops}
    assert described == set(OPERATIONS)
    for method, path in OPERATIONS:
        op = doc["paths"][path][method.lower()]
        for status, response in op["responses"].items():
            assert list(response["content"]) == [CT], (method, path, status)
            if status != "200":
                assert response["content"][CT]["schema"] == {"$ref": "#/components/schemas/ErrorMessage"}
        assert ("requestBody" in op) == (method in ("POST", "PUT")), (method, path)
    assert "HTTPValidationError" not in doc["components"]["schemas"]


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    ("method", "path", "allow"),
    [
        ("PATCH", "/subjects/s/versions", "GET, HEAD, POST"),
        ("PUT", "/subjects/s", "DELETE, POST"),
        ("POST", "/config", "DELETE, GET, HEAD, PUT"),
        ("DELETE", "/schemas/ids/1", "GET, HEAD"),
        ("OPTIONS", "/mode/s", "DELETE, GET, HEAD, PUT"),
    ],
)
def test_405_lists_every_method_of_the_path(client: httpx.Client, method: str, path: str, allow: str) -> None:
    r = client.request(method, path)
    assert r.status_code == 405
    assert r.json() == {"error_code": 405, "message": "HTTP 405 Method Not Allowed"}
    assert r.headers["allow"] == allow
