"""PATCH /connectors/{name}/config (and the other operations the two herders share through
AbstractHerder) answers the same on a standalone worker as on a distributed one.

Both are real ``seaway connect`` processes on one broker; each gets the same calls on its own
FileStreamSink connector, and the answers (status code and body, the connector's name taken
out) must be equal, with the codes Kafka Connect gives.
"""

from __future__ import annotations

import functools
import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
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
from tests.support.broker import BrokerProcess

NAMES = {"standalone": "sapatch", "distributed": "dipatch"}


@pytest.fixture(scope="module")
def workers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, WorkerProcess]]:
    """A standalone and a one-worker distributed cluster on one broker."""
    tmp_path = tmp_path_factory.mktemp("parity")
    with BrokerProcess(tmp_path / "broker", overrides=BROKER_OVERRIDES) as broker:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})  # the sinks' topics exist up front
        for future in admin.create_topics([NewTopic(f"t-{n}", 2, 1) for n in NAMES.values()]).values():
            future.result(30)
        standalone_port = free_port()
        standalone = WorkerProcess(tmp_path / "standalone", {
            "bootstrap.servers": broker.bootstrap,
            "listeners": f"http://127.0.0.1:{standalone_port}",
            "offset.storage.file.filename": str(tmp_path / "standalone" / "offsets.json"),
            "key.converter": "org.apache.kafka.connect.storage.StringConverter",
            "value.converter": "org.apache.kafka.connect.storage.StringConverter",
            "offset.flush.interval.ms": "500",
        }, mode="standalone")
        distributed = WorkerProcess(tmp_path / "distributed", worker_properties(
            broker.bootstrap, free_port(), f"parity-{uuid.uuid4().hex[:8]}"))
        both = {"standalone": standalone, "distributed": distributed}
        start_all(list(both.values()))
        try:
            yield both
        finally:
            for w in both.values():
                w.kill()


def _normalize(response: httpx.Response, name: str) -> tuple[int, Any]:
    text = response.text.replace(name, "<name>")
    try:
        body: Any = json.loads(text) if text else None
    except ValueError:
        body = text
    return response.status_code, body


def _tasks_running(worker: WorkerProcess, name: str) -> bool:
    status = worker.get(f"/connectors/{name}/status")
    return status.status_code == 200 and len(status.json()["tasks"]) == 2 and all(
        t["state"] == "RUNNING" for t in status.json()["tasks"])


def _stopped(worker: WorkerProcess, name: str) -> bool:
    status = worker.get(f"/connectors/{name}/status").json()
    return bool(status["connector"]["state"] == "STOPPED" and not status["tasks"])


@pytest.mark.timeout(120)
def test_patch_and_shared_operations_answer_alike(workers: dict[str, WorkerProcess], tmp_path: Path) -> None:
    try:
        _answer_alike(workers, tmp_path)
    except BaseException:
        dump_logs(list(workers.values()))
        raise


def _answer_alike(workers: dict[str, WorkerProcess], tmp_path: Path) -> None:
    wait_settled([workers["distributed"]])
    results: dict[str, list[tuple[int, Any]]] = {}
    for mode, worker in workers.items():
        name = NAMES[mode]
        config = {"connector.class": "FileStreamSink", "file": str(tmp_path / f"{name}.txt"), "topics": f"t-{name}",
                  "tasks.max": "2"}
        offsets = {"offsets": [{"partition": {"kafka_topic": f"t-{name}", "kafka_partition": 0},
                                "offset": {"kafka_offset": 3}}]}
        calls: list[tuple[str, str, Any]] = [
            ("POST", "/connectors", {"name": name, "config": config}),
            ("WAIT", name, None),
            ("PATCH", f"/connectors/{name}/config", {"errors.log.enable": "true"}),
            ("PATCH", f"/connectors/{name}/config", {"errors.log.enable": None, "errors.tolerance": "all"}),
            ("GET", f"/connectors/{name}/config", None),
            ("PATCH", f"/connectors/{name}/config", {"name": "another"}),  # 400: not the URL's name
            ("PATCH", f"/connectors/{name}/config", {"tasks.max": "0"}),  # 400: invalid
            ("PATCH", f"/connectors/{name}/config", {"connector.class": None}),  # 400: no connector type
            ("PATCH", f"/connectors/{name}-missing/config", {"tasks.max": "1"}),  # 404
            ("GET", f"/connectors/{name}/config", None),  # the failed patches changed nothing
            ("WAIT", name, None),
            ("POST", f"/connectors/{name}/tasks/7/restart", None),  # 404: no such task
            ("POST", f"/connectors/{name}-missing/restart?includeTasks=true", None),  # 404
            ("PATCH", f"/connectors/{name}/offsets", offsets),  # 400: not STOPPED
            ("DELETE", f"/connectors/{name}/offsets", None),  # 400: not STOPPED
            ("PUT", f"/connectors/{name}/stop", None),
            ("STOPPED", name, None),
            ("PATCH", f"/connectors/{name}/offsets", offsets),
            ("DELETE", f"/connectors/{name}/offsets", None),
            ("PATCH", f"/connectors/{name}/config", {"errors.log.enable": "true"}),  # stays STOPPED, no tasks
            ("DELETE", f"/connectors/{name}", None),
            ("DELETE", f"/connectors/{name}", None),  # 404
        ]
        out = []
        for method, path, body in calls:
            if method == "WAIT":
                wait_for(functools.partial(_tasks_running, worker, path), 90, what=f"{mode}: {path} tasks RUNNING")
                continue
            if method == "STOPPED":
                wait_for(functools.partial(_stopped, worker, path), 90, what=f"{mode}: {path} STOPPED")
                continue
            response = worker.request(method, path, json=body) if body is not None else worker.request(method, path)
            code, answer = _normalize(response, name)
            if method == "POST" and path == "/connectors":
                # as in Kafka: standalone creates the tasks before it answers, a cluster's leader
                # answers with the tasks it knew at the write (none yet)
                assert len(answer.pop("tasks")) == (2 if mode == "standalone" else 0), answer
            out.append((code, answer))
        results[mode] = out
    assert results["standalone"] == results["distributed"]
    codes = [code for code, _ in results["distributed"]]
    assert codes == [201, 200, 200, 200, 400, 400, 400, 404, 200, 404, 404, 400, 400, 204, 200, 200, 200, 204,
                     404], codes
    patched = results["distributed"][1][1]
    assert patched["config"]["errors.log.enable"] == "true" and len(patched["tasks"]) == 2
    assert results["distributed"][3][1] == {**results["distributed"][0][1]["config"], "errors.tolerance": "all"}
    assert "contains no connector type" in results["distributed"][6][1]["message"]
    assert results["distributed"][-3][1]["tasks"] == []  # patched while STOPPED: no tasks
