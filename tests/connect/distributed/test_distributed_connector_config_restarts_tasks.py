"""A new connector config reaches the running tasks even when their task configs stay equal.

Tasks run with the connector's config as well as their own (converters, transforms, error
handling). A connector that hands its tasks only their share of the work (the test's
TickerConnector gives the topic) produces equal task configs after such a change; Kafka
restarts the tasks anyway since KAFKA-9228 (ClusterConfigState.appliedConnectorConfig), and so
must Seaway's distributed herder, or the tasks keep the old converter until the next restart.
A task is restarted only then: the task-config notice that follows the assignment it was
started from leaves it alone.
"""

from __future__ import annotations

import time
import uuid
from pathlib import Path

import httpx
import pytest
from confluent_kafka import Consumer

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

pytestmark = pytest.mark.timeout(180)

ROOT = Path(__file__).resolve().parents[3]
MODULE = "tests.connect.runtime.rt_support"


def _task_startups(url: str) -> float:
    name = "kafka_connect_connect_worker_metrics_task_startup_attempts_total"
    return sample_value(scrape(url + "/metrics"), name) or 0


def _values(consumer: Consumer, seconds: float) -> list[bytes]:
    out: list[bytes] = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for message in consumer.consume(500, 0.2):
            value = message.value()
            if message.error() is None and value is not None:
                out.append(value)
    return out


def test_a_converter_change_restarts_tasks_whose_configs_are_equal(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", str(ROOT))  # the worker imports the test connector
    with BrokerProcess(tmp_path / "broker", overrides=BROKER_OVERRIDES) as broker:
        group = f"cc-{uuid.uuid4().hex[:8]}"
        topic = f"ticks-{group}"
        worker = WorkerProcess(tmp_path / "w0", worker_properties(
            broker.bootstrap, free_port(), group, extra={"plugin.allowlist": f"{MODULE}.*"}))
        consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": f"read-{group}",
                             "auto.offset.reset": "earliest", "enable.auto.commit": False})
        try:
            start_all([worker])
            url = wait_settled([worker]).url
            config = {"connector.class": f"{MODULE}:TickerConnector", "topic": topic, "tasks.max": "1",
                      "value.converter": "org.apache.kafka.connect.storage.StringConverter"}
            reply = httpx.put(f"{url}/connectors/ticker/config", json=config, timeout=60)
            assert reply.status_code == 201, reply.text
            consumer.subscribe([topic])
            wait_for(lambda: any(v.startswith(b"tick-") for v in _values(consumer, 1)), 60,
                     what="plain ticks (StringConverter)")
            tasks_before = httpx.get(f"{url}/connectors/ticker/tasks", timeout=10).json()
            time.sleep(2)
            # started once: the task-config notice that follows its assignment restarts nothing
            assert _task_startups(url) == 1

            json_config = {**config, "value.converter": "org.apache.kafka.connect.json.JsonConverter",
                           "value.converter.schemas.enable": "false"}
            reply = httpx.put(f"{url}/connectors/ticker/config", json=json_config, timeout=60)
            assert reply.status_code == 200, reply.text
            assert httpx.get(f"{url}/connectors/ticker/tasks", timeout=10).json() == tasks_before  # equal

            # the restarted task writes JSON strings: "tick-<n>" with its quotes
            wait_for(lambda: any(v.startswith(b'"tick-') for v in _values(consumer, 1)), 60,
                     what="quoted ticks (JsonConverter) from the restarted task")
            assert _task_startups(url) == 2
        except BaseException:
            dump_logs([worker])
            raise
        finally:
            consumer.close()
            worker.stop()
