"""Root, health, OpenAPI, error mapping, request timeout and forwarding between workers."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from seaway.connect.rest import create_app
from seaway.connect.rest.forwarding import CONFLICTING_OPERATION, NO_KNOWN_LEADER

from tests.connect.rest.memory_herder import SOURCE, MemoryHerder

SRC = {"connector.class": SOURCE, "topic": "t"}


def _last_call(calls: list[tuple[str, Any]]) -> tuple[str, Any]:
    """The herder's latest call, read through a function: mypy keeps ``calls[-1]`` narrowed by an earlier assert."""
    return calls[-1]


def client_for(app: object) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://worker")  # type: ignore[arg-type]


async def test_root_and_health(client: httpx.AsyncClient, herder: MemoryHerder) -> None:
    info = (await client.get("/")).json()
    assert set(info) == {"version", "commit", "kafka_cluster_id"}
    assert info["kafka_cluster_id"] == "cluster-1" and info["version"]
    r = await client.get("/health")
    assert (r.status_code, r.json()) == (200, {"status": "healthy", "message": "Worker has completed startup and "
                                                                                "is ready to handle requests."})
    herder.ready = False
    r = await client.get("/health")
    assert r.status_code == 503 and r.json()["status"] == "starting"


async def test_openapi_lists_every_route(client: httpx.AsyncClient) -> None:
    spec = (await client.get("/openapi.json")).json()
    paths = spec["paths"]
    for path in ["/", "/health", "/connectors", "/connectors/{connector}", "/connectors/{connector}/config",
                 "/connectors/{connector}/status", "/connectors/{connector}/restart", "/connectors/{connector}/offsets",
                 "/connectors/{connector}/tasks/{task}/restart", "/connector-plugins",
                 "/connector-plugins/{plugin}/config/validate", "/admin/loggers/{logger}"]:
        assert path in paths, path
    assert set(paths["/connectors/{connector}/offsets"]) == {"get", "patch", "delete"}


async def test_unknown_routes_and_media_types(client: httpx.AsyncClient) -> None:
    r = await client.get("/no/such/path")
    assert (r.status_code, r.json()) == (404, {"error_code": 404, "message": "HTTP 404 Not Found"})  # Jersey's words
    r = await client.delete("/connector-plugins")
    assert r.status_code == 405 and r.json()["error_code"] == 405
    form = await client.put("/connectors/a/config", content=b'{"connector.class": "x"}',
                            headers={"content-type": "application/x-www-form-urlencoded"})
    assert form.status_code == 415 and form.json()["error_code"] == 415
    no_type = await client.put("/connectors/a/config", content=b'{"connector.class": "%s", "topic": "t"}'
                               % SOURCE.encode())
    assert no_type.status_code == 415 and no_type.json()["error_code"] == 415  # a CORS "simple request"
    assert (await client.get("/connectors/a")).status_code == 404
    with_charset = await client.put("/connectors/a/config", content=b'{"connector.class": "%s", "topic": "t"}'
                                    % SOURCE.encode(), headers={"content-type": "application/json; charset=utf-8"})
    assert with_charset.status_code == 201


async def test_unexpected_errors_are_500_with_the_message() -> None:
    class Broken(MemoryHerder):
        async def connectors(self) -> list[str]:
            raise RuntimeError("store unavailable")

    async with client_for(create_app(Broken())) as c:
        r = await c.get("/connectors")
    assert (r.status_code, r.json()) == (500, {"error_code": 500, "message": "store unavailable"})


@pytest.mark.timeout(10)
async def test_request_timeout_is_500() -> None:
    herder = MemoryHerder()
    herder.delay = 5
    async with client_for(create_app(herder, request_timeout=0.05)) as c:
        r = await c.put("/connectors/a/config", json=SRC)
    assert (r.status_code, r.json()) == (500, {"error_code": 500, "message": "Request timed out"})


async def test_admin_loggers_can_be_disabled() -> None:
    async with client_for(create_app(MemoryHerder(), admin_listeners_enabled=False)) as c:
        assert (await c.get("/admin/loggers")).status_code == 404
        assert (await c.get("/connectors")).status_code == 200


def follower_of(leader_app: object, leader: str = "http://leader:8083") -> tuple[MemoryHerder, object]:
    herder = MemoryHerder()
    herder.not_leader, herder.leader_url = True, leader
    return herder, create_app(herder, forward_transport=httpx.ASGITransport(app=leader_app))  # type: ignore[arg-type]


async def test_forwarding_to_the_leader_keeps_status_location_and_params() -> None:
    leader = MemoryHerder()
    _, follower_app = follower_of(create_app(leader))
    async with client_for(follower_app) as c:
        created = await c.post("/connectors", json={"name": "a", "config": SRC})
        assert (created.status_code, created.headers["location"]) == (201, "/connectors/a")
        assert leader.calls[-1] == ("put", ("a", False, None))
        assert (await c.put("/connectors/a/config", json=SRC)).status_code == 200
        dup = await c.post("/connectors", json={"name": "a", "config": SRC})
        assert (dup.status_code, dup.json()) == (409, {"error_code": 409, "message": "Connector a already exists"})
        restarted = await c.post("/connectors/a/restart?includeTasks=true&onlyFailed=true")
        assert restarted.status_code == 202
        assert _last_call(leader.calls) == ("restart", ("a", True, True))


async def test_forwarding_makes_at_most_two_hops() -> None:
    final = MemoryHerder()
    _, middle_app = follower_of(create_app(final), "http://final")
    _, first_app = follower_of(middle_app, "http://middle")
    async with client_for(first_app) as c:
        assert (await c.put("/connectors/a/config", json=SRC)).status_code == 201  # first -> middle -> final
    assert "a" in final.configs

    _, app = follower_of(create_app(final), "http://final")
    async with client_for(app) as c:  # a worker reached with forward=false may not forward again
        r = await c.put("/connectors/b/config?forward=false", json=SRC)
    assert r.json() == {"error_code": 409, "message": CONFLICTING_OPERATION}
    assert "b" not in final.configs


async def test_forward_false_chain_gives_409() -> None:
    never = MemoryHerder()
    never.not_leader, never.leader_url = True, "http://elsewhere"
    _, second = follower_of(create_app(never), "http://never")
    _, first = follower_of(second, "http://second")
    async with client_for(first) as c:
        r = await c.put("/connectors/a/config", json=SRC)
    assert (r.status_code, r.json()) == (409, {"error_code": 409, "message": CONFLICTING_OPERATION})
    assert never.configs == {}


async def test_no_known_leader_and_io_errors() -> None:
    herder = MemoryHerder()
    herder.not_leader = True
    async with client_for(create_app(herder)) as c:
        r = await c.put("/connectors/a/config", json=SRC)
    assert r.json() == {"error_code": 409, "message": NO_KNOWN_LEADER}

    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    herder.leader_url = "http://leader"
    app = create_app(herder, forward_transport=httpx.MockTransport(refuse))
    async with client_for(app) as c:
        r = await c.put("/connectors/a/config", json=SRC)
    assert r.status_code == 500
    assert r.json()["message"] == "IO Error trying to forward REST request: connection refused"
