"""Per-worker connector task counts and the startups of a connector created PAUSED, on two real
distributed workers (subprocesses, a real broker), scraped with prometheus_client's parser.

Kafka's ``Worker.ConnectorStatusMetricsGroup`` counts only the tasks a worker runs, so the
connector-*-task-count values summed over the cluster's workers equal the connector's task
count (not workers x tasks). A connector created with ``initial_state`` PAUSED reports
``onPause`` and, when resumed, ``onResume`` (Kafka's ``WorkerConnector`` reports ``onStartup``
only from INIT), so Kafka's WorkerMetricsGroup counts no connector startup for it; its tasks,
first started after the resume, each count a task startup success.
"""

from __future__ import annotations

import time
import uuid
from pathlib import Path

import httpx
import pytest

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
from tests.metrics.support import sample_value, scrape
from tests.support.broker import BrokerProcess

pytestmark = pytest.mark.timeout(240)

ROOT = Path(__file__).resolve().parents[2]
MODULE = "tests.connect.runtime.rt_support"
W = "kafka_connect_connect_worker_metrics_"
STATES = ("total", "running", "paused", "failed", "unassigned", "destroyed", "restarting")
TASKS_MAX = 4


def _sums(workers: list[WorkerProcess], connector: str) -> tuple[dict[str, float], list[float]]:
    """connector-*-task-count summed over the workers, and each worker's total."""
    sums = dict.fromkeys(STATES, 0.0)
    per_worker: list[float] = []
    for w in workers:
        s = scrape(w.url + "/metrics")
        for state in STATES:
            sums[state] += sample_value(s, W + f"connector_{state}_task_count", {"connector": connector}) or 0
        per_worker.append(sample_value(s, W + "connector_total_task_count", {"connector": connector}) or 0)
    return sums, per_worker


def _startups(workers: list[WorkerProcess]) -> dict[str, float]:
    out: dict[str, float] = {}
    for w in workers:
        s = scrape(w.url + "/metrics")
        for kind in ("connector", "task"):
            for what in ("attempts", "success", "failure"):
                key = f"{kind}_startup_{what}_total"
                out[key] = out.get(key, 0) + (sample_value(s, W + key) or 0)
    return out


def _status(url: str, name: str) -> tuple[str, list[str]]:
    reply = httpx.get(f"{url}/connectors/{name}/status", timeout=10)
    if reply.status_code != 200:
        return "", []
    body = reply.json()
    return body["connector"]["state"], [t["state"] for t in body["tasks"]]


def _settled(workers: list[WorkerProcess], tasks: float, quiet_s: float = 2.0) -> dict[str, float]:
    """The startup totals once ``tasks`` task startups are in and nothing moved for ``quiet_s``.

    A worker that started its tasks from an assignment and then reads the connector's task
    configs restarts them (Kafka's stopReconfiguredTasks does too), so a connector's task
    startups can exceed its task count; how many depends on that race.
    """
    last = wait_for(lambda: (t := _startups(workers))["task_startup_success_total"] >= tasks and t, 60,
                    what=f"{tasks} task startups")
    while True:
        time.sleep(quiet_s)
        now = _startups(workers)
        if now == last:
            return now
        last = now


def test_task_counts_are_per_worker_and_a_paused_creation_is_no_startup(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", str(ROOT))  # the workers import the test sink connector
    with BrokerProcess(tmp_path / "broker", overrides=BROKER_OVERRIDES) as broker:
        group = f"tc-{uuid.uuid4().hex[:8]}"
        extra = {"plugin.allowlist": f"{MODULE}.*", "metrics.sample.window.ms": "60000"}
        workers = [WorkerProcess(tmp_path / f"w{i}", worker_properties(broker.bootstrap, free_port(), group,
                                                                       extra=extra)) for i in range(2)]
        try:
            start_all(workers)
            url = wait_settled(workers).url
            config = {"connector.class": f"{MODULE}:CollectingSinkConnector", "topics": f"tc-{group}",
                      "tasks.max": str(TASKS_MAX)}
            reply = httpx.post(url + "/connectors", timeout=60, json={"name": "spread", "config": config})
            assert reply.status_code == 201, reply.text
            wait_for(lambda: _status(url, "spread") == ("RUNNING", ["RUNNING"] * TASKS_MAX), 60,
                     what="spread's tasks running")
            wait_for(lambda: _sums(workers, "spread")[0]["total"] == TASKS_MAX, 30, what="the task counts")
            sums, per_worker = _sums(workers, "spread")
            assert sums == {**dict.fromkeys(STATES, 0.0), "total": TASKS_MAX, "running": TASKS_MAX}, sums
            assert all(0 < n < TASKS_MAX for n in per_worker), per_worker  # the tasks are spread over both
            base = _settled(workers, TASKS_MAX)
            assert base["connector_startup_attempts_total"] == base["connector_startup_success_total"] == 1, base
            assert base["task_startup_attempts_total"] == base["task_startup_success_total"], base
            assert base["connector_startup_failure_total"] == base["task_startup_failure_total"] == 0, base

            # created PAUSED: PAUSED, no startup; resumed: RUNNING, still no connector startup (Kafka's
            # onResume), and each of its tasks, first started now, a task startup success
            reply = httpx.post(url + "/connectors", timeout=60, json={
                "name": "held", "config": {**config, "tasks.max": "2"}, "initial_state": "PAUSED"})
            assert reply.status_code == 201, reply.text
            wait_for(lambda: _status(url, "held")[0] == "PAUSED", 60, what="held paused")
            assert _startups(workers) == base
            assert httpx.put(f"{url}/connectors/held/resume", timeout=30).status_code == 202
            wait_for(lambda: _status(url, "held") == ("RUNNING", ["RUNNING"] * 2), 60, what="held running")
            after = _settled(workers, base["task_startup_success_total"] + 2)
            connector_keys = [k for k in after if k.startswith("connector_")]
            assert {k: after[k] for k in connector_keys} == {k: base[k] for k in connector_keys}, (base, after)
            assert after["task_startup_attempts_total"] == after["task_startup_success_total"], after
            assert after["task_startup_failure_total"] == 0, after
            wait_for(lambda: _sums(workers, "held")[0]["running"] == 2, 30, what="held's task counts")
            assert _sums(workers, "held")[0]["total"] == 2
        except BaseException:
            dump_logs(workers)
            raise
        finally:
            for w in workers:
                w.stop()


def test_a_standalone_connector_created_paused_then_resumed_is_no_connector_startup(tmp_path: Path) -> None:
    """The same rule on a standalone worker (its resume reaches the same WorkerConnector)."""
    from tests.cli.connect_worker import connect_worker

    with BrokerProcess(tmp_path / "broker", overrides=BROKER_OVERRIDES) as broker, \
            connect_worker(broker.bootstrap, tmp_path / "worker") as url:
        reply = httpx.post(url + "/connectors", timeout=60, json={"name": "held", "initial_state": "PAUSED", "config": {
            "connector.class": "FileStreamSink", "topics": "held-t", "file": str(tmp_path / "out.txt")}})
        assert reply.status_code == 201, reply.text
        wait_for(lambda: _status(url, "held")[0] == "PAUSED", 30, what="held paused")
        assert httpx.put(f"{url}/connectors/held/resume", timeout=30).status_code == 202
        wait_for(lambda: _status(url, "held") == ("RUNNING", ["RUNNING"]), 30, what="held running")
        s = scrape(url + "/metrics")
        assert sample_value(s, W + "connector_startup_attempts_total") == 0
        assert sample_value(s, W + "connector_startup_success_total") == 0
        assert sample_value(s, W + "task_startup_success_total") == 1
        assert sample_value(s, W + "connector_total_task_count", {"connector": "held"}) == 1
