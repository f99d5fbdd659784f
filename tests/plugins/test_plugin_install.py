"""A third-party plugin distribution, pip-installed during the test, appears in a worker and runs.

Nothing in Seaway names it: discovery is only through its entry points (``seaway.connectors``
and ``seaway.transforms``). It is uninstalled at the end.
"""

from __future__ import annotations

import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from confluent_kafka import Consumer

from tests.cli.connect_worker import connect_worker
from tests.support.broker import BrokerProcess

PLUGIN = Path(__file__).parent / "seaway-test-plugin"


def pip(*args: str) -> None:
    done = subprocess.run([sys.executable, "-m", "pip", *args], capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.fixture
def installed_plugin() -> Iterator[None]:
    pip("install", "--no-deps", "--no-build-isolation", "--no-index", "--quiet", str(PLUGIN))
    try:
        yield
    finally:
        pip("uninstall", "--yes", "--quiet", "seaway-test-plugin")


def consume(bootstrap: str, topic: str, count: int, timeout: float = 20) -> list[bytes]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": uuid.uuid4().hex,
                        "auto.offset.reset": "earliest"})
    consumer.subscribe([topic])
    values: list[bytes] = []
    deadline = time.monotonic() + timeout
    try:
        while len(values) < count and time.monotonic() < deadline:
            values += [m.value() for m in consumer.consume(count, 0.5) if m.error() is None]
    finally:
        consumer.close()
    return values


@pytest.mark.timeout(120)
@pytest.mark.usefixtures("installed_plugin")
def test_installed_plugin_is_listed_and_runs(shared_broker: BrokerProcess, tmp_path: Path, topic_name: str) -> None:
    with connect_worker(shared_broker.bootstrap, tmp_path / "worker") as url:
        plugins = httpx.get(url + "/connector-plugins?connectorsOnly=false", timeout=10).json()
        counter = [p for p in plugins if p["class"].endswith("CounterSourceConnector")]
        shout = [p for p in plugins if p["class"].endswith("Shout")]
        assert counter == [{"class": counter[0]["class"], "type": "source", "version": "1.2.3"}], plugins
        assert shout and shout[0]["type"] == "transformation"
        assert counter[0] in httpx.get(url + "/connector-plugins", timeout=10).json()

        created = httpx.put(url + "/connectors/counter/config", timeout=30, json={
            "connector.class": "CounterSource", "topic": topic_name, "count": "5",
            "transforms": "shout", "transforms.shout.type": "Shout"})
        assert created.status_code == 201, created.text
        assert consume(shared_broker.bootstrap, topic_name, 5) == [f"VALUE {i}".encode() for i in range(5)]
        status = httpx.get(url + "/connectors/counter/status", timeout=10).json()
        assert status["connector"]["state"] == "RUNNING" and status["tasks"][0]["state"] == "RUNNING"
