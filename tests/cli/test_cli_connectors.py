"""``seaway connectors`` against a real HTTP server: the REST app over an in-memory herder.

The command runs in-process (``main(argv)``) for speed; one test runs the installed
``seaway`` executable. The end-to-end run against a live worker is in tests/connect/rest.
"""

from __future__ import annotations

import http.server
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import uvicorn
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]
from seaway.cli.connectors import load_connector_file, main, render_table
from seaway.cli.topics import CliError
from seaway.connect.rest import create_app

from tests.cli.clirun import seaway
from tests.cli.connect_worker import connect_worker
from tests.connect.rest.memory_herder import SINK, SOURCE, MemoryHerder
from tests.support.broker import BrokerProcess
from tests.support.ports import free_port

pytestmark = pytest.mark.timeout(30)


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[str, MemoryHerder]]:
    herder = MemoryHerder()
    server = uvicorn.Server(uvicorn.Config(create_app(herder), host="127.0.0.1", port=0, log_level="warning",
                                           lifespan="off"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}", herder
    finally:
        server.should_exit = True
        thread.join(10)


def create_topic(bootstrap: str, topic: str) -> None:
    """Create ``topic`` up front, so the sink's first poll finds it (a sink also waits for a topic
    that appears later: tests/connect/test_sink_waits_for_topic.py)."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(10)


def run(url: str, *args: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["--url", url, *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_render_table() -> None:
    assert render_table(["A", "LONGER"], [["xyz", 1], ["q", None]]).splitlines() == [
        "A    LONGER", "xyz  1", "q"]


def test_load_connector_file(tmp_path: Path) -> None:
    props = tmp_path / "c.properties"
    props.write_text("# comment\nname=p\nconnector.class=FileStreamSource\ntopic = t\n")
    assert load_connector_file(str(props)) == ("p", {"name": "p", "connector.class": "FileStreamSource", "topic": "t"})
    request = tmp_path / "r.json"
    request.write_text(json.dumps({"name": "r", "config": {"connector.class": "X", "tasks.max": 2}}))
    assert load_connector_file(str(request)) == ("r", {"connector.class": "X", "tasks.max": "2", "name": "r"})
    flat = tmp_path / "f.json"
    flat.write_text(json.dumps({"connector.class": "X"}))
    assert load_connector_file(str(flat), "given") == ("given", {"connector.class": "X", "name": "given"})
    with pytest.raises(CliError, match="names no connector"):
        load_connector_file(str(flat))
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(CliError, match="not valid JSON"):
        load_connector_file(str(tmp_path / "bad.json"))


def test_lifecycle(served: tuple[str, MemoryHerder], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url, herder = served
    config = tmp_path / "src.json"
    config.write_text(json.dumps({"name": "cli-src", "config": {"connector.class": SOURCE, "topic": "t",
                                                                "tasks.max": "2"}}))
    assert run(url, "create", str(config), capsys=capsys) == (0, "Created connector cli-src.\n", "")
    code, out, _ = run(url, "list", capsys=capsys)
    assert code == 0
    assert out.splitlines()[0].split() == ["NAME", "TYPE", "STATE", "TASKS", "CLASS"]
    assert "cli-src  source  RUNNING  2/2    " + SOURCE in out
    code, out, _ = run(url, "--json", "list", capsys=capsys)
    assert json.loads(out)["cli-src"]["status"]["connector"]["state"] == "RUNNING"

    code, out, _ = run(url, "get", "cli-src", capsys=capsys)
    assert "Type:   source" in out and "  topic = t" in out and "Tasks:  0, 1" in out
    assert run(url, "config", "cli-src", "--set", "topic=u", "--unset", "tasks.max", capsys=capsys)[0] == 0
    assert herder.configs["cli-src"] == {"connector.class": SOURCE, "topic": "u", "name": "cli-src"}
    code, out, _ = run(url, "config", "cli-src", "--json", capsys=capsys)
    assert json.loads(out)["topic"] == "u"

    assert run(url, "pause", "cli-src", capsys=capsys)[1] == "Paused connector cli-src.\n"
    code, out, _ = run(url, "status", "cli-src", capsys=capsys)
    assert out.splitlines()[0] == "cli-src (source)"
    assert out.splitlines()[2].split()[:3] == ["connector", "PAUSED", "127.0.0.1:8083"]
    assert run(url, "resume", "cli-src", capsys=capsys)[1] == "Resumed connector cli-src.\n"
    assert run(url, "restart", "cli-src", capsys=capsys)[1] == "Restarted connector cli-src.\n"
    code, out, _ = run(url, "restart", "cli-src", "--include-tasks", capsys=capsys)
    assert out == "Restarting cli-src: connector, task 0.\n"
    assert run(url, "restart", "cli-src", "--task", "0", capsys=capsys)[1] == \
        "Restarted task 0 of connector cli-src.\n"

    assert run(url, "stop", "cli-src", capsys=capsys)[1] == "Stopped connector cli-src.\n"
    offsets = tmp_path / "offsets.json"
    offsets.write_text(json.dumps({"offsets": [{"partition": {"filename": "a"}, "offset": {"position": 3}}]}))
    code, out, _ = run(url, "offsets", "cli-src", "--set", str(offsets), capsys=capsys)
    assert (code, out) == (0, "The offsets for this connector have been altered successfully\n")
    code, out, _ = run(url, "offsets", "cli-src", capsys=capsys)
    assert out.splitlines() == ["PARTITION          OFFSET", '{"filename": "a"}  {"position": 3}']
    assert run(url, "offsets", "cli-src", "--reset", capsys=capsys)[0] == 0
    assert run(url, "offsets", "cli-src", capsys=capsys)[1] == "No offsets.\n"
    assert run(url, "delete", "cli-src", capsys=capsys)[1] == "Deleted connector cli-src.\n"
    assert "cli-src" not in herder.configs


def test_create_from_properties_and_plugins(served: tuple[str, MemoryHerder], tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    url, herder = served
    props = tmp_path / "sink.properties"
    props.write_text(f"name=cli-sink\nconnector.class={SINK}\ntopics=t\n")
    assert run(url, "create", str(props), "--initial-state", "paused", capsys=capsys)[0] == 0
    assert herder.targets["cli-sink"] == "PAUSED"
    code, out, _ = run(url, "plugins", capsys=capsys)
    assert [line.split()[:2] for line in out.splitlines()] == [
        ["CLASS", "TYPE"], [SINK, "sink"], ["org.example.BrokenConnector", "source"], [SOURCE, "source"]]
    assert code == 0 and "ImportError" in out
    _, out, _ = run(url, "--json", "plugins", "--all", capsys=capsys)
    assert [p["type"] for p in json.loads(out)][-3:] == ["predicate", "converter", "header_converter"]


def test_errors_are_one_line(served: tuple[str, MemoryHerder], tmp_path: Path,
                             capsys: pytest.CaptureFixture[str]) -> None:
    url, _ = served
    assert run(url, "status", "nope", capsys=capsys) == (
        1, "", "Error: No status found for connector nope (HTTP 404)\n")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"name": "bad", "config": {"connector.class": SOURCE, "tasks.max": "x"}}))
    code, _, err = run(url, "create", str(bad), capsys=capsys)
    assert code == 1 and err.count("\n") == 1
    assert err.startswith("Error: Connector configuration is invalid and contains the following 2 error(s):; topic:")
    code, _, err = run("http://127.0.0.1:1", "list", capsys=capsys)
    assert code == 1 and err.startswith("Error: cannot reach the Connect REST API at http://127.0.0.1:1:")
    assert run(url, "create", str(tmp_path / "missing.json"), capsys=capsys)[2].startswith("Error: cannot read")


def test_installed_command(served: tuple[str, MemoryHerder]) -> None:
    url, _ = served
    done = seaway("connectors", "--url", url, "--json", "plugins")
    assert done.returncode == 0, done.stderr
    assert {p["class"] for p in json.loads(done.stdout)} >= {SOURCE, SINK}
    assert b"connectors" in seaway("--help").stdout


@pytest.mark.timeout(60)
def test_against_a_live_worker(shared_broker: BrokerProcess, tmp_path: Path, topic_name: str) -> None:
    source, sink = tmp_path / "in.txt", tmp_path / "out.txt"
    source.write_text("hello\nworld\n")
    create_topic(shared_broker.bootstrap, topic_name)
    (tmp_path / "src.properties").write_text(
        f"name=live-src\nconnector.class=FileStreamSource\nfile={source}\ntopic={topic_name}\n")
    (tmp_path / "snk.json").write_text(json.dumps({"name": "live-snk", "config": {
        "connector.class": "FileStreamSink", "file": str(sink), "topics": topic_name}}))
    with connect_worker(shared_broker.bootstrap, tmp_path / "worker") as url:
        def cli(*args: str) -> str:
            done = seaway("connectors", "--url", url, *args)
            assert done.returncode == 0, done.stderr
            return done.stdout.decode()

        assert cli("create", str(tmp_path / "src.properties")) == "Created connector live-src.\n"
        assert cli("create", str(tmp_path / "snk.json")) == "Created connector live-snk.\n"
        deadline = time.monotonic() + 20
        while not (sink.exists() and sink.read_text() == "hello\nworld\n"):
            assert time.monotonic() < deadline, "the sink file never got the lines"
            time.sleep(0.1)
        listed = cli("list").splitlines()
        assert [row.split()[:4] for row in listed[1:]] == [["live-snk", "sink", "RUNNING", "1/1"],
                                                           ["live-src", "source", "RUNNING", "1/1"]]
        assert cli("pause", "live-src") == "Paused connector live-src.\n"
        while json.loads(cli("--json", "status", "live-src"))["connector"]["state"] != "PAUSED":
            assert time.monotonic() < deadline, "never PAUSED"
            time.sleep(0.1)
        assert "FileStreamSource" in cli("plugins")
        missing = seaway("connectors", "--url", url, "delete", "nope")
        assert (missing.returncode, missing.stderr) == (1, b"Error: Connector nope not found (HTTP 404)\n")
        assert cli("delete", "live-src") == "Deleted connector live-src.\n"


def test_get_says_why_a_connector_has_no_tasks(served: tuple[str, MemoryHerder], tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """Right after a create, `get` waits (--wait) for the tasks of a starting connector, then says
    why there are none instead of printing an empty list (it printed "Tasks:  -")."""
    url, _ = served
    stopped, zero = tmp_path / "stopped.properties", tmp_path / "zero.properties"
    stopped.write_text(f"name=cli-stopped\nconnector.class={SOURCE}\ntopic=t\n")
    zero.write_text(f"name=cli-zero\nconnector.class={SOURCE}\ntopic=t\ntasks.max=0\n")
    assert run(url, "create", str(stopped), "--initial-state", "STOPPED", capsys=capsys)[0] == 0
    assert run(url, "create", str(zero), capsys=capsys)[0] == 0
    started = time.monotonic()
    out = run(url, "get", "cli-stopped", capsys=capsys)[1]
    # no wait for a STOPPED connector: well under --wait's 10 s default, with room for a loaded machine
    assert "Tasks:  none (the connector is STOPPED)\n" in out and time.monotonic() - started < 8
    started = time.monotonic()
    out = run(url, "get", "cli-zero", "--wait", "1", capsys=capsys)[1]
    assert time.monotonic() - started >= 1
    assert "Tasks:  none yet (the connector is RUNNING and has not started its tasks; run again in a moment)" in out
    for name in ("cli-stopped", "cli-zero"):
        assert run(url, "delete", name, capsys=capsys)[0] == 0


class _ForeignWorker(http.server.BaseHTTPRequestHandler):
    """Some other REST server (a proxy, another implementation) whose error message is not a string."""

    def do_GET(self) -> None:
        body = json.dumps({"error_code": 500, "message": {"reason": "upstream 'down'", "retry": True}}).encode()
        self.send_response(500)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        return None


def test_error_messages_are_json_not_python_reprs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _ForeignWorker)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        assert run(url, "list", capsys=capsys) == (
            1, "", 'Error: {"reason": "upstream \'down\'", "retry": true} (HTTP 500)\n')
    finally:
        server.shutdown()
        server.server_close()
    code, _, err = run(url, "config", "x", "--set", "no-equals", capsys=capsys)
    assert (code, err) == (1, 'Error: expected key=value, got "no-equals"\n')
    topics = seaway("topics", "alter-config", "t", "--add-config", "a=1,b", "--bootstrap-server", "127.0.0.1:1")
    assert topics.stderr == b'Error: expected key=value, got "b"\n'
    registry = seaway("registry", "--memory", "--override", "http.request.max.size=abc")
    assert registry.returncode == 2
    assert registry.stderr.decode() == ("seaway registry: Invalid value abc for configuration http.request.max.size: "
                                        "Not a number of type INT\n")


def test_version_and_a_bad_worker_config_without_traceback(tmp_path: Path) -> None:
    version = seaway("--version")
    assert version.returncode == 0 and version.stdout.decode().startswith("seaway 0.1")
    props = tmp_path / "worker.properties"
    props.write_text(f"bootstrap.servers=127.0.0.1:1\nlisteners=http://127.0.0.1:{free_port()}\n"
                     f"offset.storage.file.filename={tmp_path / 'offsets'}\n"
                     "key.converter=NoSuchConverter\nvalue.converter=org.apache.kafka.connect.storage.StringConverter\n")
    done = seaway("connect", "standalone", str(props))
    assert done.returncode == 1
    assert b"Traceback" not in done.stderr and b"Traceback" not in done.stdout
    assert done.stderr.decode().splitlines()[-1].startswith(
        "Error: Invalid value NoSuchConverter for configuration key.converter:")
