"""``seaway up`` as a user runs it: real processes, health checks, supervision, clean stops."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import time
from pathlib import Path

import httpx
import pytest
from confluent_kafka.admin import AdminClient

from tests.cli.clirun import SEAWAY

LINE = re.compile(r"^(\w+)\s+(\S+)\s+\(pid (\d+)\)$")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_up(data: Path, *extra: str) -> tuple[subprocess.Popen[str], dict[str, tuple[str, int]], list[str]]:
    """Run ``seaway up``; return it, {part: (address, pid)} once ready, and its output so far."""
    proc = subprocess.Popen([SEAWAY, "up", "--data-dir", str(data), "--broker-port", str(free_port()),
                             "--registry-port", str(free_port()), "--rest-port", str(free_port()), *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert proc.stdout is not None
    parts: dict[str, tuple[str, int]] = {}
    output: list[str] = []
    for line in proc.stdout:
        output.append(line)
        match = LINE.match(line.strip())
        if match:
            parts[match[1]] = (match[2], int(match[3]))
        if "ready;" in line or "exited" in line or "not healthy" in line:
            break
    assert "ready;" in output[-1], "".join(output)
    return proc, parts, output


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie (exited, not yet reaped by `up`) counts as gone
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except FileNotFoundError:
        return False


def wait_gone(pid: int, timeout: float = 25) -> bool:
    deadline = time.monotonic() + timeout
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    return not alive(pid)


@pytest.mark.timeout(90)
def test_up_starts_everything_and_stops_on_sigterm(tmp_path: Path) -> None:
    proc, parts, _ = start_up(tmp_path / "data")
    try:
        assert set(parts) == {"broker", "registry", "connect"}
        admin = AdminClient({"bootstrap.servers": parts["broker"][0]})
        assert admin.list_topics(timeout=10).brokers
        assert httpx.get(parts["registry"][0] + "/subjects", timeout=10).json() == []
        assert httpx.get(parts["connect"][0] + "/health", timeout=10).json()["status"] == "healthy"
        assert httpx.get(parts["connect"][0] + "/connectors", timeout=10).json() == []
        assert (tmp_path / "data" / "logs" / "broker.log").exists()
        assert (tmp_path / "data" / "connect" / "worker.properties").exists()
    finally:
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0, out
    assert out.strip().endswith("seaway up: stopping")
    assert all(wait_gone(pid) for _, pid in parts.values())


@pytest.mark.timeout(60)
def test_up_stops_the_others_when_one_dies(tmp_path: Path) -> None:
    proc, parts, _ = start_up(tmp_path / "data", "--no-connect")
    assert set(parts) == {"broker", "registry"}
    os.kill(parts["broker"][1], signal.SIGKILL)
    out, _ = proc.communicate(timeout=45)
    assert proc.returncode == 1
    assert re.search(r"seaway up: broker exited with status -9; stopping the others", out), out
    assert wait_gone(parts["registry"][1])


@pytest.mark.timeout(90)
def test_up_on_every_interface_advertises_the_given_host(tmp_path: Path) -> None:
    """What the Docker image runs: listen on 0.0.0.0, tell clients the name they can reach."""
    proc, parts, _ = start_up(tmp_path / "data", "--host", "0.0.0.0", "--advertised-host", "localhost")
    try:
        broker_port = parts["broker"][0].rsplit(":", 1)[1]
        metadata = AdminClient({"bootstrap.servers": f"127.0.0.1:{broker_port}"}).list_topics(timeout=10)
        assert [(b.host, b.port) for b in metadata.brokers.values()] == [("localhost", int(broker_port))]
        worker = httpx.get(parts["connect"][0] + "/", timeout=10)
        assert worker.status_code == 200
        properties = (tmp_path / "data" / "connect" / "worker.properties").read_text()
        assert "rest.advertised.host.name=localhost" in properties
        assert "listeners=http://0.0.0.0:" in properties
        assert f"bootstrap.servers=127.0.0.1:{broker_port}" in properties
        # Listening on every interface: reachable on another loopback address too (a server
        # bound to 127.0.0.1 is not reachable on 127.0.0.2).
        registry_port = parts["registry"][0].rsplit(":", 1)[1]
        rest_port = parts["connect"][0].rsplit(":", 1)[1]
        assert httpx.get(f"http://127.0.0.2:{registry_port}/subjects", timeout=10).json() == []
        assert httpx.get(f"http://127.0.0.2:{rest_port}/connectors", timeout=10).json() == []
        with socket.create_connection(("127.0.0.2", int(broker_port)), timeout=10):
            pass
    finally:
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0, out
