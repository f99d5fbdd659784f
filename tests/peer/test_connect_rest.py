"""Kafka Connect's REST API: one scripted sequence sent to Apache Kafka Connect and to Seaway.

Both workers are distributed workers on the same Apache Kafka broker (so the broker is no
variable), with the same worker properties but their own group, internal topics, files
and topic. ``SCRIPT`` walks every endpoint with good and bad input: create (POST and PUT),
read, patch, pause, resume, restart, stop, offsets, topics, loggers, delete, errors. It runs
against both workers at once (two threads); ``Wait`` steps poll until a state is reached
on each, so the two stay in step.

Per step, the test compares the HTTP status and the JSON *shape*: objects by their keys,
lists element by element, and scalars by type, except the values that carry meaning
(``state``, ``type``, ``error_code``, names, levels, counts: ``KEEP``). Ids, times, worker
ids, versions, messages and documentation texts are not compared. Each step passes
against Kafka when Kafka answers the status written in the script (Kafka's behaviour,
checked every run) and against Seaway when Seaway's status and shape equal Kafka's.

Known mismatches are ``xfail(strict=True)`` on the Seaway side with their finding id
(docs/performance.md, "Conformance").
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.connect.distributed.dist_support import WorkerProcess, free_port, worker_properties
from tests.peer.apache_kafka import KafkaBroker, KafkaConnect

pytestmark = [pytest.mark.peer, pytest.mark.timeout(300)]

FILE_SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"
FILE_SINK = "org.apache.kafka.connect.file.FileStreamSinkConnector"


@dataclass(frozen=True)
class Req:
    """One request; ``{dir}``, ``{topic}`` in path and body are the worker's own."""

    id: str
    method: str
    path: str
    status: int
    body: Any = None
    raw: str | None = None
    """A body sent as is (malformed JSON), with ``content_type``."""
    content_type: str = "application/json"
    pick: Callable[[Any], Any] | None = None
    """What of the JSON to compare, where the rest differs by nature (plugin lists, loggers)."""
    seaway_status: int | None = None
    """Where Seaway answers otherwise on purpose (Kafka's answer is a bug), Seaway's status;
    the bodies are then not compared."""


@dataclass(frozen=True)
class Wait:
    """Poll ``GET path`` until ``ready(json)`` on the worker (90 s at most), and has stayed so
    for ``stable_s`` seconds (a status read before an asynchronous restart began looks ready)."""

    id: str
    path: str
    ready: Callable[[Any], bool] = field(repr=False)
    stable_s: float = 0.0


def _states(connector: str, task: str | None) -> Callable[[Any], bool]:
    def ready(status: Any) -> bool:
        tasks = [t["state"] for t in status.get("tasks", [])]
        return bool(status.get("connector", {}).get("state") == connector
                    and (tasks == [task] if task else tasks == []))
    return ready


def _file_plugins(plugins: Any) -> Any:
    """The FileStream entries, with their full class names (Seaway lists Kafka's, as Kafka does)."""
    return sorted((p.get("class", ""), sorted(p)) for p in plugins
                  if p.get("class", "").endswith((".FileStreamSourceConnector", ".FileStreamSinkConnector")))


def _plugin_types(plugins: Any) -> Any:
    return sorted({p.get("type") for p in plugins})


def _root_logger(loggers: Any) -> Any:
    return {"root": loggers.get("root"), "peer.rest.test": loggers.get("peer.rest.test")}


SOURCE = {"connector.class": FILE_SOURCE, "file": "{dir}/in.txt", "topic": "{topic}", "tasks.max": "1"}
SINK = {"connector.class": FILE_SINK, "file": "{dir}/out.txt", "topics": "{topic}", "tasks.max": "1"}

SCRIPT: list[Req | Wait] = [
    Req("root", "GET", "/", 200),
    Req("health", "GET", "/health", 200),
    Req("plugins", "GET", "/connector-plugins", 200, pick=_file_plugins),
    Req("plugins-all-types", "GET", "/connector-plugins?connectorsOnly=false", 200, pick=_plugin_types),
    Req("plugin-config", "GET", f"/connector-plugins/{FILE_SINK}/config", 200,
        pick=lambda keys: sorted(k["name"] for k in keys if k["name"] in ("file", "topics", "name", "tasks.max"))),
    Req("plugin-config-alias", "GET", "/connector-plugins/FileStreamSink/config", 200, pick=len),
    Req("plugin-config-unknown", "GET", "/connector-plugins/NoSuchConnector/config", 404),
    Req("validate-ok", "PUT", f"/connector-plugins/{FILE_SINK}/config/validate", 200,
        body={**SINK, "name": "v"}, pick=lambda v: (v["name"], v["error_count"])),
    Req("validate-missing-topics", "PUT", f"/connector-plugins/{FILE_SINK}/config/validate", 200,
        body={"connector.class": FILE_SINK, "name": "v"}, pick=lambda v: v["error_count"]),
    Req("validate-bad-tasks-max", "PUT", "/connector-plugins/FileStreamSink/config/validate", 200,
        body={**SINK, "name": "v", "tasks.max": "zero"},
        pick=lambda v: [c["value"]["name"] for c in v["configs"] if c["value"]["errors"]]),
    Req("validate-type-mismatch", "PUT", f"/connector-plugins/{FILE_SOURCE}/config/validate", 400,
        body={**SINK, "name": "v"}),
    Req("validate-shape", "PUT", f"/connector-plugins/{FILE_SINK}/config/validate", 200,
        body={**SINK, "name": "v"},
        pick=lambda v: (sorted(v), sorted(v["configs"][0]), sorted(v["configs"][0]["definition"]),
                        sorted(v["configs"][0]["value"]))),
    Req("list-empty", "GET", "/connectors", 200),
    Req("create-no-class", "POST", "/connectors", 400, body={"name": "nc", "config": {"file": "x"}}),
    Req("create-invalid", "POST", "/connectors", 400, body={"name": "bad", "config": {"connector.class": FILE_SINK}}),
    Req("create-unknown-class", "POST", "/connectors", 400,
        body={"name": "bad", "config": {"connector.class": "com.example.NoSuchConnector"}}),
    Req("create-name-mismatch", "POST", "/connectors", 400, body={"name": "a", "config": {**SOURCE, "name": "b"}}),
    # Kafka answers malformed JSON and a bad enum value with 500 (Jackson's exception unmapped);
    # Seaway's rule is that bad input is a 400 that says what is wrong
    Req("create-malformed-json", "POST", "/connectors", 500, raw='{"name": "x", "config": {', seaway_status=400),
    Req("create-text-plain", "POST", "/connectors", 415, raw='{"name": "x", "config": {}}', content_type="text/plain"),
    Req("create-source", "POST", "/connectors", 201, body={"name": "src", "config": SOURCE}),
    Req("create-duplicate", "POST", "/connectors", 409, body={"name": "src", "config": SOURCE}),
    Wait("source-running", "/connectors/src/status", _states("RUNNING", "RUNNING")),
    Req("get", "GET", "/connectors/src", 200),
    Req("get-config", "GET", "/connectors/src/config", 200),
    Req("get-status", "GET", "/connectors/src/status", 200),
    Req("get-tasks", "GET", "/connectors/src/tasks", 200),
    Req("get-tasks-config", "GET", "/connectors/src/tasks-config", 404),  # removed in Kafka 4.0 (KIP-970)
    Req("task-status", "GET", "/connectors/src/tasks/0/status", 200),
    Req("task-status-unknown", "GET", "/connectors/src/tasks/9/status", 404),
    Wait("source-topic-tracked", "/connectors/src/topics", lambda t: bool(t.get("src", {}).get("topics"))),
    Req("topics", "GET", "/connectors/src/topics", 200),
    Req("topics-unknown-connector", "GET", "/connectors/nope/topics", 200),
    Req("list", "GET", "/connectors", 200),
    Req("list-expand-status", "GET", "/connectors?expand=status", 200),
    Req("list-expand-both", "GET", "/connectors?expand=info&expand=status", 200),
    Req("list-expand-unknown", "GET", "/connectors?expand=nonsense", 200),
    Req("put-config-update", "PUT", "/connectors/src/config", 200, body=SOURCE),
    Req("put-config-create", "PUT", "/connectors/sink/config", 201, body=SINK),
    Req("put-config-invalid", "PUT", "/connectors/sink2/config", 400, body={"connector.class": FILE_SINK}),
    Req("put-config-name-mismatch", "PUT", "/connectors/sink3/config", 400, body={**SINK, "name": "other"}),
    Req("patch-config", "PATCH", "/connectors/src/config", 200, body={"batch.size": "100"}),
    Req("patch-config-unknown", "PATCH", "/connectors/nope/config", 404, body={"batch.size": "100"}),
    Wait("sink-running", "/connectors/sink/status", _states("RUNNING", "RUNNING")),
    Wait("source-running-again", "/connectors/src/status", _states("RUNNING", "RUNNING")),
    Req("pause", "PUT", "/connectors/src/pause", 202),
    Wait("source-paused", "/connectors/src/status", _states("PAUSED", "PAUSED")),
    Req("status-paused", "GET", "/connectors/src/status", 200),
    Req("resume", "PUT", "/connectors/src/resume", 202),
    Wait("source-resumed", "/connectors/src/status", _states("RUNNING", "RUNNING")),
    Req("restart-connector", "POST", "/connectors/src/restart", 204),
    Wait("source-restarted", "/connectors/src/status", _states("RUNNING", "RUNNING")),
    Req("restart-with-tasks", "POST", "/connectors/src/restart?includeTasks=true", 202),
    # the restart runs after the 202 (Kafka: a restart request through the config topic), so the
    # old RUNNING may still show at first: wait until RUNNING has held for 1.5 s
    Wait("source-restarted-with-tasks", "/connectors/src/status", _states("RUNNING", "RUNNING"), stable_s=1.5),
    Req("restart-only-failed", "POST", "/connectors/src/restart?includeTasks=true&onlyFailed=true", 202),
    Req("restart-unknown", "POST", "/connectors/nope/restart", 404),
    Req("task-restart", "POST", "/connectors/src/tasks/0/restart", 204),
    Req("task-restart-unknown", "POST", "/connectors/src/tasks/7/restart", 404),
    Wait("source-running-after-task-restart", "/connectors/src/status", _states("RUNNING", "RUNNING")),
    Req("offsets-running", "GET", "/connectors/src/offsets", 200, pick=lambda o: sorted(o)),
    Req("alter-offsets-running", "PATCH", "/connectors/src/offsets", 400,
        body={"offsets": [{"partition": {"filename": "{dir}/in.txt"}, "offset": {"position": 0}}]}),
    Req("stop", "PUT", "/connectors/src/stop", 204),
    Wait("source-stopped", "/connectors/src/status", _states("STOPPED", None)),
    Req("status-stopped", "GET", "/connectors/src/status", 200),
    Req("tasks-stopped", "GET", "/connectors/src/tasks", 200),
    Req("offsets-stopped", "GET", "/connectors/src/offsets", 200),
    Req("alter-offsets-empty", "PATCH", "/connectors/src/offsets", 400, body={"offsets": []}),
    Req("alter-offsets", "PATCH", "/connectors/src/offsets", 200,
        body={"offsets": [{"partition": {"filename": "{dir}/in.txt"}, "offset": {"position": 7}}]}),
    Req("offsets-altered", "GET", "/connectors/src/offsets", 200),
    Req("reset-offsets", "DELETE", "/connectors/src/offsets", 200),
    Req("offsets-reset", "GET", "/connectors/src/offsets", 200),
    Req("sink-offsets", "GET", "/connectors/sink/offsets", 200, pick=lambda o: sorted(o)),
    Req("sink-alter-offsets-running", "PATCH", "/connectors/sink/offsets", 400,
        body={"offsets": [{"partition": {"kafka_topic": "{topic}", "kafka_partition": 0},
                           "offset": {"kafka_offset": 1}}]}),
    Req("topics-reset", "PUT", "/connectors/src/topics/reset", 202),
    Wait("topics-forgotten", "/connectors/src/topics", lambda t: t.get("src", {}).get("topics") == []),
    Req("topics-after-reset", "GET", "/connectors/src/topics", 200),
    Req("resume-stopped", "PUT", "/connectors/src/resume", 202),
    Wait("source-resumed-from-stop", "/connectors/src/status", _states("RUNNING", "RUNNING")),
    Req("create-initially-stopped", "POST", "/connectors", 201,
        body={"name": "idle", "config": {**SOURCE, "file": "{dir}/idle.txt"}, "initial_state": "STOPPED"}),
    Wait("idle-stopped", "/connectors/idle/status", _states("STOPPED", None)),
    Req("create-bad-initial-state", "POST", "/connectors", 500,
        body={"name": "idle2", "config": SOURCE, "initial_state": "SLEEPING"}, seaway_status=400),
    Req("loggers", "GET", "/admin/loggers", 200, pick=lambda m: m.get("root")),
    Req("logger-root", "GET", "/admin/loggers/root", 200),
    Req("logger-set", "PUT", "/admin/loggers/peer.rest.test", 200, body={"level": "DEBUG"}),
    Req("logger-get", "GET", "/admin/loggers/peer.rest.test", 200),
    Req("loggers-after-set", "GET", "/admin/loggers", 200, pick=_root_logger),
    Req("logger-bad-level", "PUT", "/admin/loggers/peer.rest.test", 404, body={"level": "LOUD"}),
    Req("logger-no-level", "PUT", "/admin/loggers/peer.rest.test", 400, body={}),
    Req("logger-unknown", "GET", "/admin/loggers/never.seen.logger", 404),
    Req("get-unknown", "GET", "/connectors/nope", 404),
    Req("status-unknown", "GET", "/connectors/nope/status", 404),
    Req("config-unknown", "GET", "/connectors/nope/config", 404),
    Req("pause-unknown", "PUT", "/connectors/nope/pause", 404),
    Req("stop-unknown", "PUT", "/connectors/nope/stop", 404),
    Req("offsets-unknown", "GET", "/connectors/nope/offsets", 404),
    Req("delete-unknown", "DELETE", "/connectors/nope", 404),
    Req("delete-source", "DELETE", "/connectors/src", 204),
    Req("delete-sink", "DELETE", "/connectors/sink", 204),
    Req("delete-idle", "DELETE", "/connectors/idle", 204),
    Wait("all-deleted", "/connectors", lambda names: names == []),
    Req("list-after-delete", "GET", "/connectors", 200),
    Req("unknown-path", "GET", "/no/such/path", 404),
    Req("method-not-allowed", "DELETE", "/connector-plugins", 405),
]

KEEP = {"state", "type", "error_code", "name", "connector", "task", "id", "class", "level", "status",
        "error_count", "required", "initial_state", "topics", "task.class"}
"""Keys whose values are compared, not only their types (``task.class``: Seaway's FileStream
tasks are Kafka's, by Kafka's name)."""

KNOWN: dict[str, str] = {}
"""step id -> finding id in docs/performance.md ("Conformance"), where Seaway differs today."""


def shape(value: Any, key: str | None = None) -> Any:
    """``value`` with every scalar not under a ``KEEP`` key replaced by its type name."""
    if isinstance(value, dict):
        return {k: shape(v, k) for k, v in sorted(value.items())}
    if isinstance(value, list):
        return [shape(v, key) for v in value]
    if key in KEEP:
        return value
    return type(value).__name__


@dataclass
class Answer:
    status: int
    body: Any

    def comparable(self) -> tuple[int, Any]:
        return self.status, shape(self.body)


class Worker:
    """One worker's side of the script: its URL, folder and topic (substituted in requests)."""

    def __init__(self, url: str, folder: Path, topic: str) -> None:
        self.url = url
        self.folder = folder
        self.topic = topic
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "in.txt").write_text("".join(f"line {i}\n" for i in range(100)), encoding="utf-8")
        (folder / "idle.txt").write_text("", encoding="utf-8")

    def fill(self, text: str) -> str:
        return text.replace("{dir}", str(self.folder)).replace("{topic}", self.topic)

    def unfill(self, text: str) -> str:
        """The worker's own folder and topic back to ``{dir}``, ``{topic}``, so answers compare."""
        return text.replace(str(self.folder), "{dir}").replace(self.topic, "{topic}")

    def send(self, client: httpx.Client, req: Req) -> Answer:
        content = (self.fill(req.raw) if req.raw is not None
                   else self.fill(json.dumps(req.body)) if req.body is not None else None)
        response = client.request(req.method, self.url + self.fill(req.path), content=content,
                                  headers={"Content-Type": req.content_type, "Accept": "application/json"})
        try:
            body: Any = json.loads(self.unfill(response.text)) if response.content else None
        except ValueError:
            body = {"non-json": response.headers.get("content-type", "")}
        if req.pick is not None and response.status_code < 300 and body is not None:
            try:
                body = {"picked": req.pick(body)}
            except (KeyError, TypeError, AttributeError, IndexError) as e:
                body = {"pick-failed": repr(e)}
        return Answer(response.status_code, body)

    def wait(self, client: httpx.Client, step: Wait) -> Answer:
        deadline = time.monotonic() + 90  # Kafka's JVM worker on a loaded 2-core box too
        last: Any = None
        since: float | None = None
        while time.monotonic() < deadline:
            response = client.get(self.url + step.path)
            last = response.json() if response.status_code == 200 else response.status_code
            if response.status_code == 200 and step.ready(last):
                since = time.monotonic() if since is None else since
                if time.monotonic() - since >= step.stable_s:
                    return Answer(200, {"ready": True})
            else:
                since = None
            time.sleep(0.1)
        return Answer(0, {"timed out; last": last})

    def run(self) -> dict[str, Answer]:
        out = {}
        with httpx.Client(timeout=60) as client:
            for step in SCRIPT:
                out[step.id] = self.send(client, step) if isinstance(step, Req) else self.wait(client, step)
        return out


@pytest.fixture(scope="module")
def kafka_connect(kafka_broker: KafkaBroker, tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaConnect]:
    props = worker_properties(kafka_broker.bootstrap, free_port(), "peer-rest-kafka")
    with KafkaConnect(tmp_path_factory.mktemp("kafka-connect-rest"), props) as worker:
        yield worker


@pytest.fixture(scope="module")
def answers(kafka_connect: KafkaConnect, seaway_connect_on_kafka: WorkerProcess,
            tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Answer]]:
    """``{"kafka": {step id: Answer}, "seaway": {...}}``; both scripts run at the same time."""
    folder = tmp_path_factory.mktemp("rest")
    workers = {"kafka": Worker(kafka_connect.url, folder / "kafka", "peer-rest-kafka-lines"),
               "seaway": Worker(seaway_connect_on_kafka.url, folder / "seaway", "peer-rest-seaway-lines")}
    with ThreadPoolExecutor(2) as pool:
        futures = {name: pool.submit(w.run) for name, w in workers.items()}
        return {name: future.result() for name, future in futures.items()}


CASES = [
    pytest.param(step, broker, id=f"{broker}-{step.id}",
                 marks=[pytest.mark.xfail(strict=True, reason=KNOWN[step.id])]
                 if broker == "seaway" and step.id in KNOWN else [])
    for step in SCRIPT for broker in ("kafka", "seaway")
]


@pytest.mark.parametrize(("step", "worker"), CASES)
def test_rest_step(answers: dict[str, dict[str, Answer]], step: Req | Wait, worker: str) -> None:
    answer = answers[worker][step.id]
    expected_status = step.status if isinstance(step, Req) else 200
    if worker == "seaway" and isinstance(step, Req) and step.seaway_status is not None:
        assert answer.status == step.seaway_status, f"{worker}: {answer}"
        assert answers["kafka"][step.id].status == expected_status, "Kafka's answer changed"
        return
    assert answer.status == expected_status, f"{worker}: {answer}"
    if worker != "kafka":
        assert answer.comparable() == answers["kafka"][step.id].comparable(), (
            f"\nkafka:  {answers['kafka'][step.id]}\nseaway: {answer}")
