"""``/connector-plugins`` and ``/admin/loggers`` routes."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import httpx
import pytest

from tests.connect.rest.memory_herder import CONFIG_KEYS, SINK, SOURCE


async def test_plugin_list_order_and_filter(client: httpx.AsyncClient) -> None:
    connectors = (await client.get("/connector-plugins")).json()
    assert connectors == [
        {"class": SINK, "type": "sink", "version": "2.1"},
        {"class": "org.example.BrokenConnector", "type": "source",
         "error": "ImportError: no module named nope"},
        {"class": SOURCE, "type": "source", "version": "2.1"},
    ]
    everything = (await client.get("/connector-plugins?connectorsOnly=false")).json()
    assert [p["type"] for p in everything] == ["sink", "source", "source", "transformation", "predicate",
                                               "converter", "header_converter"]
    assert "version" not in everything[5]  # "undefined" is omitted, as Kafka does


async def test_plugin_config(client: httpx.AsyncClient) -> None:
    for name in (SOURCE, "FakeSource"):
        r = await client.get(f"/connector-plugins/{name}/config")
        assert (r.status_code, r.json()) == (200, CONFIG_KEYS)
    r = await client.get("/connector-plugins/Nope/config")
    assert (r.status_code, r.json()) == (404, {"error_code": 404, "message": "Unknown plugin Nope."})


async def test_validate(client: httpx.AsyncClient) -> None:
    invalid = await client.put("/connector-plugins/FakeSource/config/validate",
                               json={"connector.class": SOURCE, "tasks.max": "many"})
    assert invalid.status_code == 200
    body = invalid.json()
    assert (body["name"], body["error_count"], body["groups"]) == (SOURCE, 2, ["Common"])
    assert body["configs"][1]["value"] == {"name": "tasks.max", "value": "many", "recommended_values": [],
                                           "errors": ["Invalid value many for configuration tasks.max: "
                                                      "Not a number of type INT"], "visible": True}
    valid = await client.put("/connector-plugins/FakeSourceConnector/config/validate",
                             json={"connector.class": SOURCE, "topic": "t"})
    assert (valid.status_code, valid.json()["error_count"]) == (200, 0)
    mismatch = await client.put("/connector-plugins/FakeSink/config/validate", json={"connector.class": SOURCE})
    assert mismatch.json() == {"error_code": 400, "message": f"Included connector type {SOURCE} does not match "
                                                             "request type FakeSink"}


@pytest.fixture
def restore_levels() -> Iterator[None]:
    manager = logging.Logger.manager
    before = {n: lg.level for n, lg in manager.loggerDict.items() if isinstance(lg, logging.Logger)}
    root = logging.getLogger().level
    yield
    for name, logger in list(manager.loggerDict.items()):
        if isinstance(logger, logging.Logger):
            logger.setLevel(before.get(name, logging.NOTSET))
    logging.getLogger().setLevel(root)


@pytest.mark.usefixtures("restore_levels")
async def test_loggers(client: httpx.AsyncClient) -> None:
    logging.getLogger("restproof.a.b")
    logging.getLogger("restproof.a.c").setLevel(logging.ERROR)
    logging.getLogger("restproofx")  # shares the prefix text, not the namespace
    listed = (await client.get("/admin/loggers")).json()
    assert "root" in listed and listed["restproof.a.c"] == {"level": "ERROR", "last_modified": None}
    assert "restproof.a.b" not in listed  # no level of its own

    r = await client.put("/admin/loggers/restproof.a", json={"level": "debug"})
    assert (r.status_code, r.json()) == (200, ["restproof.a", "restproof.a.b", "restproof.a.c"])
    assert logging.getLogger("restproof.a.c").level == logging.DEBUG
    assert logging.getLogger("restproofx").level == logging.NOTSET
    one = (await client.get("/admin/loggers/restproof.a.b")).json()
    assert one["level"] == "DEBUG" and isinstance(one["last_modified"], int)
    assert (await client.put("/admin/loggers/restproof.a", json={"level": "WARNING"})).status_code == 200
    assert (await client.get("/admin/loggers/restproof.a")).json()["level"] == "WARN"
    cluster = await client.put("/admin/loggers/restproof.new?scope=cluster", json={"level": "TRACE"})
    assert (cluster.status_code, cluster.content) == (204, b"")
    assert logging.getLogger("restproof.new").level == 5
    assert (await client.put("/admin/loggers/restproof.a?scope=galaxy", json={"level": "INFO"})).status_code == 200

    missing = await client.get("/admin/loggers/never.created.logger")
    assert missing.json() == {"error_code": 404, "message": "Logger never.created.logger not found."}
    no_level = await client.put("/admin/loggers/restproof.a", json={})
    assert no_level.json() == {"error_code": 400, "message": "Desired 'level' parameter was not specified in request."}
    bad = await client.put("/admin/loggers/restproof.a", json={"level": "LOUD"})
    assert bad.json() == {"error_code": 404, "message": "invalid log level 'LOUD'."}
