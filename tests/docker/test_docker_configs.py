"""The configs docker/compose.cluster.yaml runs, run as the same commands on loopback.

There is no Docker engine here, so the image itself is not built in CI; what the
containers would run is: ``seaway broker --config server.properties``, ``seaway registry
--config schema-registry.properties`` and ``seaway connect distributed
connect-distributed.properties`` with a ``CONNECT_*`` variable per worker. Only the
addresses change (container names become loopback ports, the volume a temp dir).
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from confluent_kafka.admin import AdminClient
from seaway.broker.config import BrokerConfig

from tests.cli.clirun import SEAWAY
from tests.support.ports import free_ports
from tests.support.process import stop

pytestmark = pytest.mark.timeout(150)

CONFIG = Path(__file__).resolve().parents[2] / "docker" / "config"


@contextlib.contextmanager
def running(args: list[str], log: Path, ready: Callable[[], bool], env: dict[str, str] | None = None,
            timeout: float = 60) -> Iterator[subprocess.Popen[bytes]]:
    """Start ``seaway *args``, wait until ``ready()``, stop it with SIGTERM afterwards."""
    with log.open("wb") as out:
        proc = subprocess.Popen([SEAWAY, *args], stdout=out, stderr=subprocess.STDOUT,
                                env={**os.environ, **(env or {})})
        try:
            deadline = time.monotonic() + timeout
            while not ready():
                assert proc.poll() is None, log.read_text()
                assert time.monotonic() < deadline, f"not ready in {timeout}s:\n{log.read_text()}"
                time.sleep(0.2)
            yield proc
        finally:
            stop(proc)


def http_ok(url: str) -> Callable[[], bool]:
    def check() -> bool:
        try:
            return httpx.get(url, timeout=1).status_code == 200
        except httpx.HTTPError:
            return False
    return check


def broker_up(bootstrap: str) -> Callable[[], bool]:
    def check() -> bool:
        try:
            with socket.create_connection(tuple(bootstrap.rsplit(":", 1)), timeout=1):  # type: ignore[arg-type]
                return True
        except OSError:
            return False
    return check


def test_server_properties_are_all_known_keys_with_valid_values(caplog: pytest.LogCaptureFixture) -> None:
    config = BrokerConfig.load(CONFIG / "server.properties")
    assert "unknown broker config" not in caplog.text
    assert [name for name, _, _ in config.listeners] == ["INTERNAL", "EXTERNAL"]
    assert [(name, host, port) for name, host, port in config.advertised_listeners] == [
        ("INTERNAL", "broker", 19092), ("EXTERNAL", "localhost", 9092)
    ]


def test_cluster_configs_serve_a_pipeline(tmp_path: Path) -> None:
    internal, external, registry_port, rest_port = free_ports(4)
    inside = f"127.0.0.1:{internal}"  # what the containers call broker:19092
    broker_args = [
        "broker", "--config", str(CONFIG / "server.properties"),
        "--override", f"listeners=INTERNAL://127.0.0.1:{internal},EXTERNAL://127.0.0.1:{external}",
        "--override", f"advertised.listeners=INTERNAL://{inside},EXTERNAL://localhost:{external}",
        "--override", f"log.dirs={tmp_path / 'broker'}",
    ]
    registry_url = f"http://127.0.0.1:{registry_port}"
    registry_args = [
        "registry", "--config", str(CONFIG / "schema-registry.properties"),
        "--override", f"kafkastore.bootstrap.servers={inside}",
        "--override", f"listeners={registry_url}",
    ]
    worker_url = f"http://127.0.0.1:{rest_port}"
    worker_env = {  # how compose gives each worker its identity
        "CONNECT_BOOTSTRAP_SERVERS": inside,
        "CONNECT_LISTENERS": worker_url,
        "CONNECT_REST_ADVERTISED_HOST_NAME": "127.0.0.1",
        "CONNECT_VALUE_CONVERTER_SCHEMA_REGISTRY_URL": registry_url,
    }
    source = tmp_path / "input.txt"
    source.write_text("".join(f"line {i}\n" for i in range(50)))
    with (
        running(broker_args, tmp_path / "broker.log", broker_up(inside)),
        running(registry_args, tmp_path / "registry.log", http_ok(registry_url + "/subjects")),
        running(["connect", "distributed", str(CONFIG / "connect-distributed.properties")],
                tmp_path / "worker.log", http_ok(worker_url + "/connectors"), env=worker_env),
    ):
        # Each listener hands out its own advertised address, as Kafka's do.
        for bootstrap, expected in ((inside, f"127.0.0.1:{internal}"), (f"127.0.0.1:{external}",
                                                                        f"localhost:{external}")):
            brokers = AdminClient({"bootstrap.servers": bootstrap}).list_topics(timeout=10).brokers
            assert [f"{b.host}:{b.port}" for b in brokers.values()] == [expected]

        body = {"name": "lines", "config": {"connector.class": "FileStreamSource", "file": str(source),
                                            "topic": "lines"}}
        deadline = time.monotonic() + 60
        while True:  # 409 until the worker has joined its group (the broker delays the first join 3 s)
            created = httpx.post(worker_url + "/connectors", timeout=30, json=body)
            if created.status_code != 409 or time.monotonic() > deadline:
                break
            time.sleep(0.3)
        assert created.status_code == 201, created.text
        while time.monotonic() < deadline:
            subjects = httpx.get(registry_url + "/subjects", timeout=5).json()
            if subjects == ["lines-value"]:
                break
            time.sleep(0.3)
        assert subjects == ["lines-value"]  # the worker's AvroConverter registered it
        topics = AdminClient({"bootstrap.servers": inside}).list_topics(timeout=10).topics
        assert {"connect-configs", "connect-offsets", "connect-status", "_schemas", "lines"} <= set(topics)
        status = httpx.get(worker_url + "/connectors/lines/status", timeout=10).json()
        assert status["connector"]["state"] == "RUNNING"
        assert status["connector"]["worker_id"] == f"127.0.0.1:{rest_port}"
