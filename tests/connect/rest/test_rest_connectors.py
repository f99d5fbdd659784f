"""``/connectors`` routes over an in-memory herder: shapes, status codes, messages."""

from __future__ import annotations

from typing import Any

import httpx

from tests.connect.rest.memory_herder import SINK, SOURCE, WORKER, MemoryHerder

SRC = {"connector.class": SOURCE, "topic": "t", "tasks.max": "2"}


async def create(client: httpx.AsyncClient, name: str = "src", **extra: object) -> httpx.Response:
    return await client.post("/connectors", json={"name": name, "config": SRC, **extra})


async def test_create_returns_201_location_and_info(client: httpx.AsyncClient) -> None:
    r = await create(client, "  src  ")
    assert r.status_code == 201
    assert r.headers["location"] == "/connectors/src"
    assert r.json() == {"name": "src", "config": {**SRC, "name": "src"},
                        "tasks": [{"connector": "src", "task": 0}, {"connector": "src", "task": 1}],
                        "type": "source"}
    assert (await client.get("/connectors")).json() == ["src"]


async def test_create_coerces_scalars_and_injects_name(client: httpx.AsyncClient) -> None:
    r = await client.post("/connectors", json={"name": "a b", "config": {"connector.class": SINK, "tasks.max": 1,
                                                                       "x": True, "y": 1.5}})
    assert r.status_code == 201 and r.headers["location"] == "/connectors/a%20b"
    assert r.json()["config"] == {"connector.class": SINK, "tasks.max": "1", "x": "true", "y": "1.5", "name": "a b"}


async def test_create_errors(client: httpx.AsyncClient) -> None:
    assert (await create(client)).status_code == 201
    dup = await create(client)
    assert (dup.status_code, dup.json()) == (409, {"error_code": 409, "message": "Connector src already exists"})

    mismatch = await client.post("/connectors", json={"name": "a", "config": {**SRC, "name": "b"}})
    assert mismatch.json() == {"error_code": 400, "message": "Connector name configuration (b) doesn't match "
                                                            "connector name in the URL (a)"}
    no_class = await client.post("/connectors", json={"name": "a", "config": {"topic": "t"}})
    assert no_class.status_code == 400
    assert no_class.json()["message"] == "Connector config {'topic': 't', 'name': 'a'} contains no connector type"

    invalid = await client.post("/connectors", json={"name": "a", "config": {"connector.class": SOURCE,
                                                                             "tasks.max": "x"}})
    assert invalid.status_code == 400
    assert invalid.json()["message"].splitlines() == [
        "Connector configuration is invalid and contains the following 2 error(s):",
        'topic: Missing required configuration "topic" which has no default value.',
        "tasks.max: Invalid value x for configuration tasks.max: Not a number of type INT",
        "You can also find the above list of errors at the endpoint "
        "`/connector-plugins/{connectorType}/config/validate`",
    ]
    nulls = await client.post("/connectors", json={"name": "a", "config": {**SRC, "topic": None}})
    assert nulls.status_code == 400
    assert "topic: Null value can not be supplied as the configuration value." in nulls.json()["message"]
    bad_state = await create(client, "b", initial_state="SLEEPING")
    assert bad_state.status_code == 400 and "SLEEPING" in bad_state.json()["message"]


async def test_create_with_initial_state(client: httpx.AsyncClient, herder: MemoryHerder) -> None:
    assert (await create(client, "p", initial_state="paused")).status_code == 201
    assert (await create(client, "s", initial_state="STOPPED")).status_code == 201
    assert herder.calls[-2:] == [("put", ("p", False, "PAUSED")), ("put", ("s", False, "STOPPED"))]
    assert (await client.get("/connectors/p/status")).json()["connector"]["state"] == "PAUSED"
    stopped = (await client.get("/connectors/s/status")).json()
    assert (stopped["connector"]["state"], stopped["tasks"]) == ("STOPPED", [])


async def test_malformed_bodies_are_400(client: httpx.AsyncClient) -> None:
    for method, path in [("POST", "/connectors"), ("PUT", "/connectors/x/config"),
                         ("PATCH", "/connectors/x/config"), ("PATCH", "/connectors/x/offsets"),
                         ("PUT", "/connector-plugins/FakeSource/config/validate"), ("PUT", "/admin/loggers/x")]:
        r = await client.request(method, path, content=b'{"name": ', headers={"content-type": "application/json"})
        assert r.status_code == 400, (method, path, r.text)
        assert r.json()["error_code"] == 400 and r.json()["message"].startswith("Request body is not valid JSON")
    wrong_shape = await client.put("/connectors/x/config", json={"a": {"nested": 1}})
    assert wrong_shape.status_code == 400 and "a" in wrong_shape.json()["message"]
    not_object = await client.post("/connectors", json=[1, 2])
    assert not_object.status_code == 400
    empty = await client.put("/connectors/x/config")
    assert (empty.status_code, empty.json()["message"]) == (400, "Request body is required")


async def test_list_with_expand(client: httpx.AsyncClient) -> None:
    await create(client, "src")
    await client.put("/connectors/snk/config", json={"connector.class": SINK, "topics": "t"})
    assert (await client.get("/connectors")).json() == ["snk", "src"]
    both = (await client.get("/connectors?expand=status&expand=info")).json()
    assert set(both) == {"snk", "src"}
    assert both["src"]["info"]["type"] == "source"
    assert both["src"]["status"] == {"name": "src", "type": "source",
                                     "connector": {"state": "RUNNING", "worker_id": WORKER, "version": "2.1"},
                                     "tasks": [{"id": 0, "state": "RUNNING", "worker_id": WORKER, "version": "2.1"},
                                               {"id": 1, "state": "RUNNING", "worker_id": WORKER,
                                                "version": "2.1"}]}
    assert (await client.get("/connectors?expand=bogus")).json() == {"snk": {}, "src": {}}


async def test_get_config_tasks_and_status(client: httpx.AsyncClient, herder: MemoryHerder) -> None:
    await create(client)
    assert (await client.get("/connectors/src")).json()["name"] == "src"
    assert (await client.get("/connectors/src/config")).json() == {**SRC, "name": "src"}
    tasks = (await client.get("/connectors/src/tasks")).json()
    assert tasks[1] == {"id": {"connector": "src", "task": 1}, "config": {**SRC, "name": "src", "task.id": "1"}}
    removed = await client.get("/connectors/src/tasks-config")  # removed in Kafka 4.0 (KIP-970)
    assert (removed.status_code, removed.json()) == (404, {"error_code": 404, "message": "HTTP 404 Not Found"})
    assert (await client.get("/connectors/src/tasks/1/status")).json() == {"id": 1, "state": "RUNNING",
                                                                           "worker_id": WORKER, "version": "2.1"}
    herder.failed.add("src")
    status = (await client.get("/connectors/src/status")).json()
    assert status["connector"] == {"state": "FAILED", "worker_id": WORKER, "trace": "Traceback: boom",
                                   "version": "2.1"}
    for path, message in [("/connectors/nope", "Connector nope not found"),
                          ("/connectors/nope/config", "Connector nope not found"),
                          ("/connectors/nope/tasks", "Connector nope not found"),
                          ("/connectors/nope/status", "No status found for connector nope"),
                          ("/connectors/src/tasks/7/status", "No status found for task src-7")]:
        r = await client.get(path)
        assert (r.status_code, r.json()) == (404, {"error_code": 404, "message": message}), path


async def test_put_and_patch_config(client: httpx.AsyncClient) -> None:
    created = await client.put("/connectors/c/config", json=SRC)
    assert created.status_code == 201 and created.headers["location"] == "/connectors/c"
    updated = await client.put("/connectors/c/config", json={**SRC, "topic": "u"})
    assert updated.status_code == 200 and "location" not in updated.headers
    assert updated.json()["config"]["topic"] == "u"
    patched = await client.patch("/connectors/c/config", json={"topic": "v", "tasks.max": None})
    assert patched.status_code == 200
    assert patched.json()["config"] == {"connector.class": SOURCE, "topic": "v", "name": "c"}
    missing = await client.patch("/connectors/nope/config", json={"topic": "v"})
    assert missing.status_code == 404
    mismatch = await client.put("/connectors/c/config", json={**SRC, "name": "d"})
    assert mismatch.status_code == 400 and "doesn't match" in mismatch.json()["message"]
    invalid = await client.patch("/connectors/c/config", json={"topic": None})
    assert invalid.status_code == 400 and "1 error(s)" in invalid.json()["message"]


async def test_pause_resume_stop_delete(client: httpx.AsyncClient) -> None:
    await create(client)

    async def state() -> str:
        return str((await client.get("/connectors/src/status")).json()["connector"]["state"])

    r = await client.put("/connectors/src/pause")
    assert (r.status_code, r.content) == (202, b"")
    assert await state() == "PAUSED"
    assert (await client.put("/connectors/src/pause")).status_code == 202  # idempotent
    assert (await client.put("/connectors/src/resume")).status_code == 202
    assert await state() == "RUNNING"
    r = await client.put("/connectors/src/stop")
    assert (r.status_code, r.content) == (204, b"")
    assert await state() == "STOPPED"
    for verb in ("pause", "resume", "stop"):
        assert (await client.put(f"/connectors/nope/{verb}")).status_code == 404
    r = await client.delete("/connectors/src")
    assert (r.status_code, r.content) == (204, b"")
    assert (await client.get("/connectors")).json() == []
    gone = await client.delete("/connectors/src")
    assert gone.json() == {"error_code": 404, "message": "Connector src not found"}


async def test_restart(client: httpx.AsyncClient, herder: MemoryHerder) -> None:
    await create(client)
    plain = await client.post("/connectors/src/restart")
    assert (plain.status_code, plain.content) == (204, b"")
    assert herder.calls[-1] == ("restart", ("src", False, False))
    full = await client.post("/connectors/src/restart?includeTasks=true&onlyFailed=false")
    assert full.status_code == 202
    body = full.json()
    assert body["connector"]["state"] == "RESTARTING"
    assert [t["state"] for t in body["tasks"]] == ["RESTARTING", "RESTARTING"]
    only_failed = (await client.post("/connectors/src/restart?includeTasks=true&onlyFailed=true")).json()
    assert only_failed["connector"]["state"] == "RUNNING"
    assert [t["state"] for t in only_failed["tasks"]] == ["RUNNING", "RUNNING"]
    unknown = await client.post("/connectors/nope/restart")
    assert unknown.json() == {"error_code": 404, "message": "Unknown connector: nope"}
    task = await client.post("/connectors/src/tasks/1/restart")
    assert (task.status_code, task.content) == (204, b"")
    bad_task = await client.post("/connectors/src/tasks/5/restart")
    assert bad_task.json() == {"error_code": 404, "message": "Unknown task: src-5"}
    not_int = await client.post("/connectors/src/tasks/x/restart")
    assert not_int.status_code == 400


async def test_topics(client: httpx.AsyncClient, herder: MemoryHerder) -> None:
    herder.topics["src"] = ["t"]
    assert (await client.get("/connectors/src/topics")).json() == {"src": {"topics": ["t"]}}
    assert (await client.get("/connectors/other/topics")).json() == {"other": {"topics": []}}
    reset = await client.put("/connectors/src/topics/reset")
    assert (reset.status_code, reset.content) == (202, b"")
    assert (await client.get("/connectors/src/topics")).json() == {"src": {"topics": []}}
    herder.topic_tracking = False
    r = await client.get("/connectors/src/topics")
    assert (r.status_code, r.json()) == (403, {"error_code": 403, "message": "Topic tracking is disabled."})


async def test_offsets(client: httpx.AsyncClient) -> None:
    await create(client)
    assert (await client.get("/connectors/src/offsets")).json() == {"offsets": []}
    body = {"offsets": [{"partition": {"filename": "a"}, "offset": {"position": 5}},
                        {"partition": {"filename": "b"}, "offset": None}]}
    running = await client.patch("/connectors/src/offsets", json=body)
    assert running.status_code == 400
    assert running.json()["message"].startswith("Connectors must be in the STOPPED state")
    assert (await client.put("/connectors/src/stop")).status_code == 204
    empties: tuple[dict[str, Any], ...] = ({}, {"offsets": []}, {"offsets": None})
    for empty in empties:
        r = await client.patch("/connectors/src/offsets", json=empty)
        assert r.json() == {"error_code": 400,
                            "message": "Partitions / offsets need to be provided for an alter offsets request"}
    null_partition = await client.patch("/connectors/src/offsets", json={"offsets": [{"partition": None}]})
    assert null_partition.status_code == 400
    altered = await client.patch("/connectors/src/offsets", json=body)
    assert altered.status_code == 200
    assert altered.json() == {"message": "The offsets for this connector have been altered successfully"}
    assert (await client.get("/connectors/src/offsets")).json() == body
    reset = await client.delete("/connectors/src/offsets")
    assert reset.json() == {"message": "The offsets for this connector have been reset successfully"}
    assert (await client.get("/connectors/nope/offsets")).status_code == 404
