"""``seaway up`` as a user runs it: real processes, health checks, supervision, clean stops."""

from __future__ import annotations

import http.server
import os
import re
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from confluent_kafka.admin import AdminClient
from seaway.properties import load_properties_file

from tests.cli.clirun import SEAWAY
from tests.support.ports import free_port

LINE = re.compile(r"^(\w+)\s+(\S+)\s+\(pid (\d+)\)$")
METRICS_LINE = re.compile(r"^metrics\s+(\S+/metrics)\s+\((\w+)\)$")



def start_up(data: Path, *extra: str, ports: tuple[int, int, int] | None = None
             ) -> tuple[subprocess.Popen[str], dict[str, tuple[str, int]], list[str]]:
    """Run ``seaway up``; return it, {part: (address, pid)} once ready, and its output so far.

    ``ports``: (broker, registry, REST) ports, default three free ones.
    """
    broker, registry, rest = ports or (free_port(), free_port(), free_port())
    proc = subprocess.Popen([SEAWAY, "up", "--data-dir", str(data), "--broker-port", str(broker),
                             "--registry-port", str(registry), "--rest-port", str(rest),
                             "--broker-metrics-port", str(free_port()), "--console-port", str(free_port()), *extra],
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


def _assert_docs_offline(url: str) -> None:
    """/docs loads Swagger UI from the app itself: every script, stylesheet and icon it names is a
    local path the app serves (before, they came from a CDN, so /docs was blank offline)."""
    page = httpx.get(url + "/docs", timeout=10)
    assert page.status_code == 200 and "swagger" in page.text.lower(), page.text[:500]
    assets = re.findall(r"""(?:src|href)=['"]([^'"]+)['"]""", page.text)
    assert len(assets) >= 3 and all(a.startswith("/docs/assets/") for a in assets), assets
    for asset in assets:
        got = httpx.get(url + asset, timeout=10)
        assert got.status_code == 200 and len(got.content) > 1000, (asset, got.status_code)
    assert re.search(r"""url: ['"]/openapi.json['"]""", page.text)
    assert httpx.get(url + "/openapi.json", timeout=10).json()["openapi"].startswith("3.")


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
    proc, parts, output = start_up(tmp_path / "data")
    try:
        assert set(parts) == {"broker", "registry", "connect", "console"}
        # the web console, over the three others: its pages show what they hold
        console = httpx.get(parts["console"][0] + "/health/cards", timeout=30)
        assert console.status_code == 200, console.text[:500]
        assert console.text.count('class="badge ok">up<') == 3, console.text  # broker, worker, registry
        admin = AdminClient({"bootstrap.servers": parts["broker"][0]})
        assert admin.list_topics(timeout=10).brokers
        assert httpx.get(parts["registry"][0] + "/subjects", timeout=10).json() == []
        assert httpx.get(parts["connect"][0] + "/health", timeout=10).json()["status"] == "healthy"
        assert httpx.get(parts["connect"][0] + "/connectors", timeout=10).json() == []
        assert (tmp_path / "data" / "logs" / "broker.log").exists()
        assert (tmp_path / "data" / "run" / "worker.properties").exists()
        for app in ("registry", "connect"):
            _assert_docs_offline(parts[app][0])
        # every part's /metrics URL is printed with the addresses, and serves Prometheus text
        metrics = {m[2]: m[1] for m in (METRICS_LINE.match(line.strip()) for line in output) if m}
        assert set(metrics) == {"broker", "registry", "connect"}, "".join(output)
        assert metrics["registry"] == parts["registry"][0] + "/metrics"
        assert metrics["connect"] == parts["connect"][0] + "/metrics"
        broker_page = httpx.get(metrics["broker"], timeout=10)
        assert broker_page.status_code == 200 and "kafka_server_" in broker_page.text, broker_page.text[:300]
        assert "kafka_connect_connect_worker_rebalance_metrics_" in httpx.get(metrics["connect"], timeout=10).text
        assert "kafka_schema_registry_" in httpx.get(metrics["registry"], timeout=10).text
    finally:
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0, out
    assert out.strip().endswith("seaway up: stopping")
    assert all(wait_gone(pid) for _, pid in parts.values())


@pytest.mark.timeout(60)
def test_up_stops_the_others_when_one_dies(tmp_path: Path) -> None:
    proc, parts, _ = start_up(tmp_path / "data", "--no-connect")
    assert set(parts) == {"broker", "registry", "console"}
    os.kill(parts["broker"][1], signal.SIGKILL)
    out, _ = proc.communicate(timeout=45)
    assert proc.returncode == 1
    assert re.search(r"seaway up: broker exited with status -9; stopping the others", out), out
    assert wait_gone(parts["registry"][1])
    assert wait_gone(parts["console"][1])


@pytest.mark.timeout(90)
def test_up_on_every_interface_advertises_the_given_host(tmp_path: Path) -> None:
    """What the Docker image runs: listen on 0.0.0.0, tell clients the name they can reach."""
    proc, parts, _ = start_up(tmp_path / "data", "--host", "0.0.0.0", "--advertised-host", "localhost")
    try:
        broker_port = parts["broker"][0].rsplit(":", 1)[1]
        metadata = AdminClient({"bootstrap.servers": f"127.0.0.1:{broker_port}"}).list_topics(timeout=10)
        assert [f"{b.host}:{b.port}" for b in metadata.brokers.values()] == [f"localhost:{int(broker_port)}"]
        worker = httpx.get(parts["connect"][0] + "/", timeout=10)
        assert worker.status_code == 200
        properties = load_properties_file(tmp_path / "data" / "run" / "worker.properties")  # Java's escaping
        assert properties["rest.advertised.host.name"] == "localhost"
        assert properties["listeners"].startswith("http://0.0.0.0:")
        assert properties["bootstrap.servers"] == f"127.0.0.1:{broker_port}"
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


def _stop_up(proc: subprocess.Popen[str]) -> str:
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0, out
    return out


def _topic_values(bootstrap: str, topic: str, registry: str) -> list[str]:
    """Every value of ``topic`` (one partition), decoded from Avro through the registry."""
    from confluent_kafka import Consumer, KafkaError, TopicPartition
    from seaway.schema_registry.client import SchemaRegistryClient
    from seaway.schema_registry.serde import AvroDeserializer

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "check", "enable.partition.eof": True})
    consumer.assign([TopicPartition(topic, 0, 0)])
    values: list[str] = []
    with SchemaRegistryClient(registry) as client:
        decode = AvroDeserializer(client)
        try:
            while True:
                msg = consumer.poll(10)
                assert msg is not None, f"no end of {topic} within 10 s"
                error = msg.error()
                if error is not None:
                    assert error.code() == KafkaError._PARTITION_EOF, error
                    return values
                values.append(decode(msg.value()))
        finally:
            consumer.close()


def _wait(check: Callable[[], object], timeout: float, what: str) -> object:
    deadline = time.monotonic() + timeout
    last: object = None
    while time.monotonic() < deadline:
        try:
            last = check()
        except httpx.HTTPError as exc:
            last = exc
        if last:
            return last
        time.sleep(0.3)
    raise AssertionError(f"timed out waiting for {what}; last: {last!r}")


@pytest.mark.timeout(240)
def test_up_keeps_connectors_and_offsets_across_restarts(tmp_path: Path) -> None:
    """The worker is a distributed cluster of one: a connector created through REST, its offsets
    and its state come back after a restart, and it does not emit its records again. The user's
    config file is never rewritten, and --override wins over it."""
    data = tmp_path / "data"
    ports = (free_port(), free_port(), free_port())
    source = tmp_path / "in.txt"
    source.write_text("".join(f"line {i}\n" for i in range(1, 6)))
    proc, parts, _ = start_up(data, ports=ports)
    try:
        rest, registry, bootstrap = parts["connect"][0], parts["registry"][0], parts["broker"][0]
        created = httpx.post(rest + "/connectors", timeout=30, json={"name": "lines", "config": {
            "connector.class": "FileStreamSource", "file": str(source), "topic": "lines"}})
        assert created.status_code == 201, created.text
        _wait(lambda: len(_topic_values(bootstrap, "lines", registry)) == 5, 30, "5 records in lines")
        # README's first pipeline: the worker writes Avro, `seaway consume` shows it as JSON
        shown = subprocess.run([SEAWAY, "consume", "lines", "--bootstrap-server", bootstrap, "--schema-registry-url",
                                registry, "--from-beginning", "--max-messages", "2"],
                               capture_output=True, timeout=30)
        assert shown.stdout == b'"line 1"\n"line 2"\n', shown
    finally:
        _stop_up(proc)

    user_file = data / "config" / "worker.properties"
    assert user_file.read_text().startswith("# Your settings for the worker")
    user_file.write_text(user_file.read_text() + "task.shutdown.graceful.timeout.ms=7000\n")
    edited = user_file.read_text()
    proc, parts, _ = start_up(data, "--override", "worker.offset.flush.interval.ms=1000",
                              "--override", "broker.log.retention.hours=200", ports=ports)
    try:
        rest, registry, bootstrap = parts["connect"][0], parts["registry"][0], parts["broker"][0]
        assert user_file.read_text() == edited
        run = (data / "run" / "worker.properties").read_text().splitlines()
        assert "task.shutdown.graceful.timeout.ms=7000" in run and "offset.flush.interval.ms=1000" in run
        assert "log.retention.hours=200" in (data / "run" / "broker.properties").read_text().splitlines()
        assert httpx.get(rest + "/connectors", timeout=10).json() == ["lines"]
        _wait(lambda: httpx.get(rest + "/connectors/lines/status", timeout=10).json()["tasks"][0]["state"]
              == "RUNNING", 30, "the restored task RUNNING")
        offsets = httpx.get(rest + "/connectors/lines/offsets", timeout=10).json()["offsets"]
        assert [o["offset"] for o in offsets] == [{"position": len(source.read_bytes())}], offsets
        with source.open("a") as f:
            f.write("line 6\nline 7\n")
        _wait(lambda: len(_topic_values(bootstrap, "lines", registry)) >= 7, 30, "7 records in lines")
        time.sleep(1.0)  # anything emitted twice would have arrived by now
        assert _topic_values(bootstrap, "lines", registry) == [f"line {i}" for i in range(1, 8)]
    finally:
        _stop_up(proc)


class _Impostor:
    """Another process's HTTP server answering 200 on every path, on a port `up` is told to use."""

    def __init__(self, port: int) -> None:
        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(b'{"status": "healthy"}')

            def log_message(self, *args: object) -> None:
                return None

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> _Impostor:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.mark.timeout(60)
@pytest.mark.parametrize(("taken", "label"), [(2, "Connect worker"), (1, "schema registry"), (3, "web console")])
def test_up_names_the_port_another_process_holds(tmp_path: Path, taken: int, label: str) -> None:
    """Another server on a port: `up` says which part and port, starts nothing and never says ready
    (it used to report ready on the impostor's answers, then fail blaming the wrong part)."""
    ports = [free_port(), free_port(), free_port(), free_port()]
    with _Impostor(ports[taken]):
        result = subprocess.run([SEAWAY, "up", "--data-dir", str(tmp_path / "data"), "--broker-port", str(ports[0]),
                                 "--registry-port", str(ports[1]), "--rest-port", str(ports[2]),
                                 "--broker-metrics-port", str(free_port()), "--console-port", str(ports[3])],
                                capture_output=True, text=True, timeout=50)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "seaway up: ready" not in result.stdout
    assert f"cannot start the {label}: port {ports[taken]} on 127.0.0.1 is already in use by another process" \
        in result.stdout, result.stdout
    assert "Traceback" not in result.stdout + result.stderr
    assert not (tmp_path / "data" / "logs" / "broker.log").exists()  # nothing was started


def test_up_rejects_bad_settings_before_starting(tmp_path: Path) -> None:
    bad_component = subprocess.run([SEAWAY, "up", "--data-dir", str(tmp_path / "d1"), "--override", "kafka.x=1"],
                                   capture_output=True, text=True, timeout=30)
    assert bad_component.returncode == 2
    assert 'component must be one of broker, registry, worker, not "kafka"' in bad_component.stdout
    missing = subprocess.run([SEAWAY, "up", "--data-dir", str(tmp_path / "d2"), "--worker-config",
                              str(tmp_path / "nope.properties")], capture_output=True, text=True, timeout=30)
    assert missing.returncode == 2
    assert f"--worker-config {tmp_path / 'nope.properties'}: No such file or directory" in missing.stdout
