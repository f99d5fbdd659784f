"""Every write endpoint gives the same answer on a follower (forwarded) as on the leader."""

from __future__ import annotations

import base64
import functools
import json
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]

from tests.connect.distributed.dist_support import (
    BROKER_OVERRIDES,
    WorkerProcess,
    dump_logs,
    free_port,
    start_all,
    wait_for,
    wait_settled,
    worker_properties,
)
from tests.connect.exactly_once.eos_support import config_records, session_key, signed
from tests.support.broker import BrokerProcess


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[WorkerProcess]]:
    """One broker and two workers for the module (the tests use distinct connector names)."""
    tmp_path = tmp_path_factory.mktemp("forwarding")
    with BrokerProcess(tmp_path / "broker", overrides=BROKER_OVERRIDES) as broker:
        group = f"fwd-{uuid.uuid4().hex[:8]}"
        workers = [WorkerProcess(tmp_path / f"w{i}", worker_properties(broker.bootstrap, free_port(), group))
                   for i in range(2)]
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})  # the sinks' topics exist up front
        for future in admin.create_topics([NewTopic(f"t-{n}", 2, 1) for n in ("viale", "viafo", "s", "rw")]).values():
            future.result(30)
        start_all(workers)
        try:
            yield workers
        finally:
            for w in workers:
                w.kill()


def _normalize(response: httpx.Response, name: str) -> tuple[int, Any]:
    text = response.text.replace(name, "<name>")
    try:
        body: Any = json.loads(text) if text else None
    except ValueError:
        body = text
    if isinstance(body, dict) and isinstance(body.get("config"), dict):
        body["config"].pop("file", None)
    if isinstance(body, dict) and isinstance(body.get("connector"), dict):  # planned restart states
        body["connector"].pop("worker_id", None)
        for task in body.get("tasks", []):
            task.pop("worker_id", None)
    return response.status_code, body


def _config(tmp: Path, name: str) -> dict[str, str]:
    return {"connector.class": "FileStreamSink", "file": str(tmp / f"{name}.txt"), "topics": f"t-{name}",
            "tasks.max": "2"}


def _tasks_running(worker: WorkerProcess, name: str) -> bool:
    status = worker.get(f"/connectors/{name}/status")
    return status.status_code == 200 and len(status.json()["tasks"]) == 2 and all(
        t["state"] == "RUNNING" for t in status.json()["tasks"])


def _stopped(worker: WorkerProcess, name: str) -> bool:
    status = worker.get(f"/connectors/{name}/status").json()
    return bool(status["connector"]["state"] == "STOPPED" and not status["tasks"])


@pytest.mark.timeout(90)
def test_writes_on_a_follower_match_writes_on_the_leader(cluster: list[WorkerProcess], tmp_path: Path) -> None:
    try:
        _writes_on_a_follower_match_writes_on_the_leader(cluster, tmp_path)
    except BaseException:
        dump_logs(cluster)
        raise


def _writes_on_a_follower_match_writes_on_the_leader(cluster: list[WorkerProcess], tmp_path: Path) -> None:
    leader = wait_settled(cluster)
    follower = next(w for w in cluster if w is not leader)
    results: dict[str, list[tuple[int, Any]]] = {}
    for via, name in ((leader, "viale"), (follower, "viafo")):
        calls: list[tuple[str, str, Any]] = [
            ("POST", "/connectors", {"name": name, "config": _config(tmp_path, name)}),
            ("POST", "/connectors", {"name": name, "config": _config(tmp_path, name)}),  # 409 exists
            ("WAIT", name, None),
            ("PUT", f"/connectors/{name}/config", {**_config(tmp_path, name), "tasks.max": "2"}),
            ("PATCH", f"/connectors/{name}/config", {"errors.log.enable": "true"}),
            ("PUT", f"/connectors/{name}-2/config", {"connector.class": "Nope"}),  # 400 invalid
            ("WAIT", name, None),
            ("POST", f"/connectors/{name}/restart", None),
            ("POST", f"/connectors/{name}/tasks/1/restart", None),
            ("WAIT", name, None),  # a restarted task is UNASSIGNED until it runs again: let it settle
            ("POST", f"/connectors/{name}/restart?includeTasks=true&onlyFailed=true", None),
            ("PUT", f"/connectors/{name}/pause", None),
            ("PUT", f"/connectors/{name}/resume", None),
            ("PUT", f"/connectors/{name}/stop", None),
            ("STOPPED", name, None),  # the tasks' consumers have left the group
            ("PATCH", f"/connectors/{name}/offsets", {"offsets": [
                {"partition": {"kafka_topic": f"t-{name}", "kafka_partition": 0}, "offset": {"kafka_offset": 5}}]}),
            ("DELETE", f"/connectors/{name}/offsets", None),
            ("DELETE", f"/connectors/{name}", None),
            ("DELETE", f"/connectors/{name}", None),  # 404
        ]
        out = []
        for method, path, body in calls:
            if method == "WAIT":
                wait_for(functools.partial(_tasks_running, leader, path), 30, what=f"{path} tasks RUNNING")
                continue
            if method == "STOPPED":
                wait_for(functools.partial(_stopped, leader, path), 30, what=f"{path} STOPPED without tasks")
                continue
            response = via.request(method, path, json=body) if body is not None else via.request(method, path)
            out.append(_normalize(response, name))
        results[name] = out
    assert results["viale"] == results["viafo"]
    codes = [code for code, _ in results["viafo"]]
    assert codes == [201, 409, 200, 200, 400, 204, 204, 202, 202, 202, 204, 200, 200, 204, 404], codes


@pytest.mark.timeout(60)
def test_internal_task_endpoint_requires_a_valid_signature(cluster: list[WorkerProcess], tmp_path: Path) -> None:
    leader = wait_settled(cluster)
    created = leader.request("POST", "/connectors", json={"name": "s", "config": _config(tmp_path, "s")})
    assert created.status_code == 201
    path = "/connectors/s/tasks"
    body = json.dumps([{"task.class": "x"}]).encode()
    missing = leader.request("POST", path, content=body, headers={"Content-Type": "application/json"})
    assert missing.status_code == 400 and missing.json()["message"] == "Internal request missing required signature"
    forged = leader.request("POST", path, content=body, headers={
        "Content-Type": "application/json", "X-Connect-Authorization": base64.b64encode(b"x" * 32).decode(),
        "X-Connect-Request-Signature-Algorithm": "HmacSHA256"})
    assert forged.status_code == 403 and forged.json()["message"] == "Internal request contained invalid signature."
    wait_for(lambda: _tasks_running(leader, "s"), 30, what="tasks published (signed) and RUNNING")
    time.sleep(0.1)


@pytest.mark.timeout(90)
def test_the_leader_reads_a_resume_another_worker_wrote_before_refusing_task_configs(
        cluster: list[WorkerProcess], tmp_path: Path) -> None:
    """Task configs posted right after a resume record (written by any worker, as Connect allows)
    are written, though the leader's snapshot may still say STOPPED when they arrive."""
    leader = wait_settled(cluster)
    bootstrap, topic = leader.props["bootstrap.servers"], leader.props["config.storage.topic"]
    assert leader.request("PUT", "/connectors/rw/config", json=_config(tmp_path, "rw")).status_code == 201
    wait_for(functools.partial(_tasks_running, leader, "rw"), 30, what="rw tasks RUNNING")
    key = session_key(bootstrap, topic)
    producer = Producer({"bootstrap.servers": bootstrap})
    try:
        for round_ in range(3):
            assert leader.request("PUT", "/connectors/rw/stop").status_code == 204
            wait_for(functools.partial(_stopped, leader, "rw"), 30, what=f"rw STOPPED (round {round_})")
            marker = f"round-{round_}-{uuid.uuid4().hex[:6]}"
            configs = [{**_config(tmp_path, "rw"), "task.class": "FileStreamSinkTask", "test.marker": marker}]
            body = json.dumps(configs).encode()
            # the resume record, as another worker writes it, then at once the owner's configs
            producer.produce(topic, key=b"target-state-rw", value=json.dumps(
                {"state": "STARTED", "state.v2": "STARTED"}).encode())
            assert producer.flush(10) == 0
            reply = leader.request("POST", "/connectors/rw/tasks?forward=true", content=body,
                                   headers={"Content-Type": "application/json", **signed(key, body)})
            assert reply.status_code == 204, reply.text
            written = [v for k, v in config_records(bootstrap, topic) if k == "task-rw-0" and v]
            assert any(v["properties"].get("test.marker") == marker for v in written), (
                f"round {round_}: the leader dropped task configs posted after the resume")
            wait_for(lambda: leader.get("/connectors/rw/status").json()["tasks"], 30,
                     what=f"rw tasks back (round {round_})")
    except BaseException:
        dump_logs(cluster)
        raise
    finally:
        producer.flush(10)
