"""A connector config that passes REST validation but fails to parse when started is a startup
attempt and failure of connect-worker-metrics, on standalone and distributed workers alike.

The real route: the config names a ``${file:...}`` placeholder; the file exists when the
connector is created (so it validates and starts), then is deleted, and a restart with its
tasks resolves the placeholder again, which fails in the herder before the worker starts the
connector or its task. Kafka parses inside ``Worker.startConnector`` / ``startTask`` and counts
that failure; so must Seaway. The success/failure percentages are then 0.5 each.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import httpx
import pytest

from tests.cli.connect_worker import connect_worker
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

pytestmark = pytest.mark.timeout(180)

W = "kafka_connect_connect_worker_metrics_"
PROVIDERS = {"config.providers": "file",
             "config.providers.file.class": "org.apache.kafka.common.config.provider.FileConfigProvider",
             "metrics.sample.window.ms": "600000"}  # both outcomes stay in the window
KEYS = [f"{kind}_startup_{what}" for kind in ("connector", "task")
        for what in ("attempts_total", "success_total", "failure_total", "success_percentage", "failure_percentage")]


def _figures(url: str) -> dict[str, float | None]:
    s = scrape(url + "/metrics")
    return {key: sample_value(s, W + key) for key in KEYS}


def _want(successes: int, failures: int) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    for kind in ("connector", "task"):
        out.update({f"{kind}_startup_attempts_total": successes + failures,
                    f"{kind}_startup_success_total": successes, f"{kind}_startup_failure_total": failures,
                    f"{kind}_startup_success_percentage": successes / (successes + failures),
                    f"{kind}_startup_failure_percentage": failures / (successes + failures)})
    return out


def _await(url: str, want: dict[str, float | None], what: str) -> None:
    try:
        wait_for(lambda: _figures(url) == want, 60, 0.2, what)
    except AssertionError:
        assert _figures(url) == want, what  # shows the figures that differ
        raise


def _break_and_restart(url: str, tmp_path: Path) -> None:
    """Create a connector whose topic comes from a file, let it start, delete the file, restart it."""
    secrets = tmp_path / "topic.properties"
    secrets.write_text(f"topic=parse-{uuid.uuid4().hex[:8]}\n")
    source = tmp_path / "in.txt"
    source.write_text("a\n")
    reply = httpx.post(url + "/connectors", timeout=60, json={"name": "src", "config": {
        "connector.class": "FileStreamSource", "file": str(source), "topic": f"${{file:{secrets}:topic}}"}})
    assert reply.status_code == 201, reply.text
    _await(url, _want(1, 0), "one connector and one task started")
    secrets.unlink()
    reply = httpx.post(url + "/connectors/src/restart?includeTasks=true", timeout=60)
    assert reply.status_code in (200, 202, 204), reply.text
    _await(url, _want(1, 1), "the failed parse counted")
    status = httpx.get(url + "/connectors/src/status", timeout=10).json()
    assert status["connector"]["state"] == "FAILED", status
    assert "Could not read properties from file" in status["connector"].get("trace", ""), status
    assert [t["state"] for t in status["tasks"]] == ["FAILED"], status


def test_standalone_counts_a_config_that_fails_to_parse_at_start(tmp_path: Path) -> None:
    with BrokerProcess(tmp_path / "broker", overrides=BROKER_OVERRIDES) as broker, \
            connect_worker(broker.bootstrap, tmp_path / "worker", extra=PROVIDERS) as url:
        empty = _figures(url)
        assert all(v == 0 for v in empty.values()), empty  # no startup yet: totals 0, percentages 0 (Kafka)
        _break_and_restart(url, tmp_path)


def test_distributed_counts_a_config_that_fails_to_parse_at_start(tmp_path: Path) -> None:
    with BrokerProcess(tmp_path / "broker", overrides=BROKER_OVERRIDES) as broker:
        group = f"parse-{uuid.uuid4().hex[:8]}"
        worker = WorkerProcess(tmp_path / "w", worker_properties(broker.bootstrap, free_port(), group,
                                                                  extra=PROVIDERS))
        worker.start()
        try:
            wait_settled([worker])  # joined: the REST API accepts writes
            _break_and_restart(worker.url, tmp_path)
        except BaseException:
            dump_logs([worker])
            raise
        finally:
            worker.stop()
