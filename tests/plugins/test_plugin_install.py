"""The plugin author's path, end to end, with the example plugin the docs show (``acme-connectors/``).

A worker process runs; the example is pip-installed into its environment *while it runs* (its
``seaway`` dependency resolved from this checkout's installed distribution, offline); with no
restart it is listed, created and runs, and its idle source task leaves the worker's CPU near
zero. A distribution whose plugin cannot be imported appears the same way, listed with its
error. Finally the example's own test, written with ``seaway.connect.testing``, passes under
pytest. Nothing in Seaway names the example: discovery is only through its entry points.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.connect.acceptance.acceptance_support import StandaloneWorker, eventually, read_topic
from tests.support.broker import BrokerProcess

EXAMPLE = Path(__file__).parent / "acme-connectors"
IDLE_CPU_LIMIT = 0.05  # of one core


def pip(*args: str) -> None:
    done = subprocess.run([sys.executable, "-m", "pip", *args], capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.fixture
def example_uninstalled_after() -> Iterator[None]:
    subprocess.run([sys.executable, "-m", "pip", "uninstall", "--yes", "--quiet", "acme-connectors"],
                   capture_output=True, timeout=120, check=False)
    try:
        yield
    finally:
        pip("uninstall", "--yes", "--quiet", "acme-connectors")


def _broken_distribution(site: Path) -> None:
    """What a pip install of a plugin whose module is missing (or fails to import) leaves behind."""
    info = site / "acme_broken-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-broken\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[seaway.connectors]\nBrokenSink = acme_missing_module:BrokenSinkConnector\n")


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (``/proc/<pid>/stat`` fields 14 and 15)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _plugins(worker: StandaloneWorker, connectors_only: bool = True) -> list[dict[str, str]]:
    reply = worker.get("/connector-plugins" + ("" if connectors_only else "?connectorsOnly=false"))
    assert reply.status_code == 200, reply.text
    return list(reply.json())


@pytest.mark.timeout(240)
@pytest.mark.usefixtures("example_uninstalled_after")
def test_a_plugin_installed_while_the_worker_runs_is_listed_runs_and_idles(
        shared_broker: BrokerProcess, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site"  # another directory on the worker's sys.path, as a second site-packages
    site.mkdir()
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([p for p in [os.environ.get("PYTHONPATH"), str(site)] if p]))
    topic = f"acme-{uuid.uuid4().hex[:8]}"
    config = {"connector.class": "CounterSource", "topic": topic, "count": "5",
              "transforms": "shout", "transforms.shout.type": "Shout"}
    with StandaloneWorker(shared_broker.bootstrap, tmp_path / "worker") as worker:
        assert not [p for p in _plugins(worker) if "acme" in p["class"]]
        unknown = httpx.put(worker.url + "/connectors/counter/config", json=config, timeout=30)
        assert unknown.status_code == 400, unknown.text

        pip("install", "--no-build-isolation", "--no-index", "--quiet", str(EXAMPLE))  # seaway: from the checkout

        counter = [p for p in _plugins(worker) if p["class"] == "acme_connectors.CounterSourceConnector"]
        assert counter == [{"class": "acme_connectors.CounterSourceConnector", "type": "source", "version": "1.0.0"}]
        assert {"class": "acme_connectors.Shout", "type": "transformation", "version": "1.0.0"} in _plugins(
            worker, connectors_only=False)
        created = httpx.put(worker.url + "/connectors/counter/config", json=config, timeout=30)
        assert created.status_code == 201, created.text
        assert [v for v, _ in read_topic(shared_broker.bootstrap, topic, 5)] == [
            f"VALUE {n}".encode() for n in range(5)]
        eventually(lambda: worker.get("/connectors/counter/status").json()["tasks"][0]["state"] == "RUNNING",
                   "the counter task to run")

        # the task has nothing left to emit: its poll() returns None at once, and the worker must not spin
        assert worker.proc is not None
        time.sleep(1)
        before, started = _cpu_seconds(worker.proc.pid), time.monotonic()
        time.sleep(3)
        idle = (_cpu_seconds(worker.proc.pid) - before) / (time.monotonic() - started)
        assert idle < IDLE_CPU_LIMIT, f"an idle source task kept the worker at {idle:.0%} of a core"

        _broken_distribution(site)
        broken = [p for p in _plugins(worker) if p["class"] == "acme_missing_module.BrokenSinkConnector"]
        assert len(broken) == 1 and broken[0]["type"] == "sink", broken
        assert "ModuleNotFoundError" in broken[0]["error"] and "acme_missing_module" in broken[0]["error"]
        used = httpx.put(worker.url + "/connectors/broken/config", timeout=30,
                         json={"connector.class": "BrokenSink", "topics": topic})
        assert used.status_code == 400 and "ModuleNotFoundError" in used.json()["message"], used.text
    print(f"idle worker with one idle source task: {idle:.1%} of a core")

    # the example's own test (seaway.connect.testing), run as its author would
    own = subprocess.run([sys.executable, "-m", "pytest", "-c", str(EXAMPLE / "pyproject.toml"), "-q",
                          "-p", "no:cacheprovider", str(EXAMPLE / "tests")],
                         cwd=tmp_path, capture_output=True, text=True, timeout=150, check=False)
    assert own.returncode == 0, own.stdout[-4000:] + own.stderr[-2000:]
