"""connect-worker-rebalance-metrics and the startup counters of connect-worker-metrics on real
distributed workers (subprocesses, a real broker), scraped with prometheus_client's parser.

A worker's first join completes a rebalance; a second worker joining makes the first
complete another; creating a connector counts a connector and a task startup attempt and
success; a connector whose ``start`` raises counts a connector startup failure.
"""

from __future__ import annotations

import math
import uuid
from pathlib import Path

import httpx
import pytest

from tests.connect.distributed.dist_support import (
    BROKER_OVERRIDES,
    WorkerProcess,
    dump_logs,
    free_port,
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
R = "kafka_connect_connect_worker_rebalance_metrics_"


def _value(url: str, name: str, labels: dict[str, str] | None = None) -> float:
    value = sample_value(scrape(url + "/metrics"), name, labels)
    assert value is not None, f"{name} missing"
    return value


def test_rebalance_and_startup_metrics(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", str(ROOT))  # the workers import the failing test connector
    with BrokerProcess(tmp_path / "broker", overrides=BROKER_OVERRIDES) as broker:
        group = f"rbm-{uuid.uuid4().hex[:8]}"
        extra = {"plugin.allowlist": f"{MODULE}.*", "metrics.sample.window.ms": "60000"}
        workers = [WorkerProcess(tmp_path / f"w{i}", worker_properties(broker.bootstrap, free_port(), group,
                                                                       extra=extra)) for i in range(2)]
        first = workers[0].start()
        try:
            url = first.url
            wait_for(lambda: _value(url, R + "completed_rebalances_total") >= 1, 30, what="the first rebalance")
            s = scrape(url + "/metrics")
            assert sample_value(s, R + "rebalancing") == 0
            assert sample_value(s, R + "epoch") == first.generation()
            assert sample_value(s, R + "leader_name", {"leader_name": url}) == 1
            assert sample_value(s, R + "connect_protocol", {"connect_protocol": "SESSIONED"}) == 1
            since = sample_value(s, R + "time_since_last_rebalance_ms")
            assert since is not None and 0 <= since < 60_000
            avg, peak = sample_value(s, R + "rebalance_avg_time_ms"), sample_value(s, R + "rebalance_max_time_ms")
            assert avg is not None and peak is not None and 0 <= avg <= peak
            before = sample_value(s, R + "completed_rebalances_total") or 0
            for kind in ("connector", "task"):
                assert sample_value(s, W + f"{kind}_startup_attempts_total") == 0

            workers[1].start()
            wait_settled(workers)
            wait_for(lambda: _value(url, R + "completed_rebalances_total") > before, 30,
                     what="a rebalance counted when the second worker joined")
            assert _value(url, R + "epoch") >= 2

            source = tmp_path / "in.txt"
            source.write_text("a\nb\n")
            reply = httpx.post(url + "/connectors", timeout=60, json={"name": "good", "config": {
                "connector.class": "FileStreamSource", "topic": "rbm-t", "file": str(source), "tasks.max": "1"}})
            assert reply.status_code == 201, reply.text
            reply = httpx.post(url + "/connectors", timeout=60, json={"name": "bad", "config": {
                "connector.class": f"{MODULE}:FailingStartConnector", "topic": "rbm-u"}})
            assert reply.status_code == 201, reply.text

            def totals() -> dict[str, float]:
                out: dict[str, float] = {}
                for w in workers:
                    s = scrape(w.url + "/metrics")
                    for kind in ("connector", "task"):
                        for what in ("attempts", "success", "failure"):
                            key = f"{kind}_startup_{what}_total"
                            out[key] = out.get(key, 0) + (sample_value(s, W + key) or 0)
                return out

            want = {"connector_startup_attempts_total": 2, "connector_startup_success_total": 1,
                    "connector_startup_failure_total": 1, "task_startup_attempts_total": 1,
                    "task_startup_success_total": 1, "task_startup_failure_total": 0}
            wait_for(lambda: totals() == want, 60, what=f"startup counts {want}")
            s = scrape(url + "/metrics")
            assert not math.isinf(sample_value(s, R + "time_since_last_rebalance_ms") or math.inf)
        except BaseException:
            dump_logs(workers)
            raise
        finally:
            for w in workers:
                w.stop()
