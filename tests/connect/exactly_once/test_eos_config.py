"""Exactly-once configs: KIP-618's preflight checks (400s naming the key), boundaries, standalone refusal.

On a distributed worker with ``exactly.once.source.support=enabled`` (Seaway's broker):

* ``exactly.once.support=required`` against a connector that does not declare support: 400
  naming ``exactly.once.support`` with Kafka's message; against FileStreamSource on stdin
  (which declares UNSUPPORTED): 400; on a file: 201.
* ``transaction.boundary=connector`` against a connector that cannot define boundaries: 400;
  a negative ``transaction.boundary.interval.ms``: 400.
* Connector-defined boundaries run: a task commits after every 30th record and aborts every
  4th such transaction; ``read_committed`` holds exactly the committed groups, in order, and
  the aborted ones are never read again (their offsets were committed).

On a standalone worker: ``required`` is a 400 ("This worker does not have exactly-once source
support enabled."), ``PUT /connectors/{c}/fence`` a 500 with Kafka's message, and
``exactly.once.source.support=enabled`` in its config an error naming the key at start.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from seaway.connect.api import ConfigError
from seaway.connect.runtime.config import StandaloneConfig
from seaway.connect.runtime.murmur2 import partition_for

from tests.connect.acceptance.acceptance_support import StandaloneWorker
from tests.connect.distributed.dist_support import WorkerProcess, dump_logs, wait_for, wait_settled
from tests.connect.exactly_once.eos_support import (
    EOS_CONNECTORS,
    ROOT,
    Broker,
    create_topic,
    eos_worker_props,
    lines,
    read_values,
    write_lines,
)

SEAWAY_ONLY = pytest.mark.parametrize("eos_broker", ["seaway"], indirect=True)  # configs: one broker will do


@pytest.fixture(scope="module")
def seaway(eos_broker: Broker) -> Broker:
    return eos_broker


@pytest.fixture(scope="module")
def worker(seaway: Broker, tmp_path_factory: pytest.TempPathFactory) -> Iterator[WorkerProcess]:
    with pytest.MonkeyPatch.context() as env:  # the test connectors must import in the worker process
        env.setenv("PYTHONPATH", os.pathsep.join(p for p in [str(ROOT), os.environ.get("PYTHONPATH")] if p))
        w = WorkerProcess(tmp_path_factory.mktemp("eos-config-worker"),
                          eos_worker_props(seaway.bootstrap, f"eos-config-{uuid.uuid4().hex[:8]}")).start()
    try:
        wait_settled([w])
        yield w
    except BaseException:
        dump_logs([w])
        raise
    finally:
        w.stop()


UNSUPPORTED = "The connector does not support exactly-once semantics with the provided configuration."


def _errors(reply_json: dict[str, object]) -> str:
    return str(reply_json.get("message", ""))


@SEAWAY_ONLY
@pytest.mark.timeout(120)
def test_required_against_a_connector_that_does_not_declare_it_is_a_400(worker: WorkerProcess, tmp_path: Path) -> None:
    undeclared = worker.request("PUT", "/connectors/undeclared/config", json={
        "connector.class": f"{EOS_CONNECTORS}.UndeclaredSource", "exactly.once.support": "required"})
    assert undeclared.status_code == 400, undeclared.text
    assert ("exactly.once.support: The connector does not implement the API required for preflight validation of "
            "exactly-once source support.") in _errors(undeclared.json())
    assert worker.get("/connectors/undeclared").status_code == 404

    stdin = worker.request("PUT", "/connectors/stdin/config", json={
        "connector.class": "FileStreamSource", "topic": "t", "exactly.once.support": "REQUIRED"})
    assert stdin.status_code == 400, stdin.text
    assert f"exactly.once.support: {UNSUPPORTED}" in _errors(stdin.json())

    (tmp_path / "f.txt").write_text("a\n")
    on_file = worker.request("PUT", "/connectors/onfile/config", json={
        "connector.class": "FileStreamSource", "topic": "t", "file": str(tmp_path / "f.txt"),
        "exactly.once.support": "required"})
    assert on_file.status_code == 201, on_file.text
    assert worker.request("DELETE", "/connectors/onfile").status_code == 204

    validated = worker.request("PUT", "/connector-plugins/FileStreamSource/config/validate", json={
        "connector.class": "FileStreamSource", "name": "v", "topic": "t", "exactly.once.support": "required"}).json()
    errors = [(c["value"]["name"], c["value"]["errors"]) for c in validated["configs"] if c["value"]["errors"]]
    assert errors == [("exactly.once.support", [UNSUPPORTED])], errors
    entry = next(c for c in validated["configs"] if c["value"]["name"] == "exactly.once.support")
    assert entry["definition"]["group"] == "Exactly Once Support"


@SEAWAY_ONLY
@pytest.mark.timeout(120)
def test_transaction_boundaries_are_checked(worker: WorkerProcess) -> None:
    boundary = worker.request("PUT", "/connectors/fs/config", json={
        "connector.class": "FileStreamSource", "topic": "t", "file": "/nonexistent",
        "transaction.boundary": "connector"})
    assert boundary.status_code == 400, boundary.text
    assert ("transaction.boundary: The connector does not support connector-defined transaction boundaries with the "
            "given configuration.") in _errors(boundary.json())
    interval = worker.request("PUT", "/connectors/fs/config", json={
        "connector.class": "FileStreamSource", "topic": "t", "file": "/nonexistent",
        "transaction.boundary": "interval", "transaction.boundary.interval.ms": "-1"})
    assert interval.status_code == 400 and "transaction.boundary.interval.ms" in _errors(interval.json())
    bad = worker.request("PUT", "/connectors/fs/config", json={
        "connector.class": "FileStreamSource", "topic": "t", "file": "/nonexistent", "transaction.boundary": "batch"})
    assert bad.status_code == 400 and "transaction.boundary" in _errors(bad.json())


@SEAWAY_ONLY
@pytest.mark.timeout(180)
def test_connector_defined_boundaries_commit_and_abort_where_the_task_says(worker: WorkerProcess,
                                                                         seaway: Broker) -> None:
    topic = f"eos-boundaries-{uuid.uuid4().hex[:8]}"
    create_topic(seaway.bootstrap, topic)
    limit, every, abort_every = 600, 30, 4
    reply = worker.request("PUT", "/connectors/bounded/config", json={
        "connector.class": f"{EOS_CONNECTORS}.BoundarySource", "topic": topic, "limit": str(limit),
        "batch": "25", "interval.ms": "5", "commit.every": str(every), "abort.every": str(abort_every),
        "transaction.boundary": "connector", "exactly.once.support": "required"})
    assert reply.status_code == 201, reply.text

    def done() -> bool:
        offsets = worker.get("/connectors/bounded/offsets").json()["offsets"]
        return bool(offsets) and offsets[0]["offset"]["next"] == limit

    wait_for(done, 90, 0.2, "the task to commit its last transaction")
    expected = [n for n in range(limit) if (n // every + 1) % abort_every != 0]
    assert [int(v) for v in read_values(seaway.bootstrap, topic)] == expected
    assert worker.request("DELETE", "/connectors/bounded").status_code == 204


@SEAWAY_ONLY
@pytest.mark.timeout(120)
def test_standalone_refuses_exactly_once(seaway: Broker, tmp_path: Path) -> None:
    eos = StandaloneWorker(seaway.bootstrap, tmp_path / "eos", worker_props={"exactly.once.source.support": "enabled"},
                           python_m=True)
    eos.start(wait=False)
    assert eos.proc is not None
    assert eos.proc.wait(60) == 1
    assert "exactly.once.source.support" in eos.log() and "only available in distributed mode" in eos.log()

    with StandaloneWorker(seaway.bootstrap, tmp_path / "plain", python_m=True) as plain:
        (tmp_path / "f.txt").write_text("a\n")
        required = _put(plain.url + "/connectors/fs/config", {
            "connector.class": "FileStreamSource", "topic": "t", "file": str(tmp_path / "f.txt"),
            "exactly.once.support": "required"})
        assert required[0] == 400
        assert "exactly.once.support: This worker does not have exactly-once source support enabled." in required[1]
        fence = _put(plain.url + "/connectors/fs/fence", None)
        assert fence == (500, '{"error_code":500,"message":"Kafka Connect in standalone mode does not support '
                              'exactly-once source connectors."}')


def _put(url: str, body: dict[str, str] | None) -> tuple[int, str]:
    reply = httpx.put(url, json=body, timeout=30) if body is not None else httpx.put(url, timeout=30)
    return reply.status_code, reply.text


def test_standalone_config_names_the_key() -> None:
    """Parsing alone (no broker): the error names ``exactly.once.source.support``; ``disabled`` is fine."""
    base = {"key.converter": "StringConverter", "value.converter": "StringConverter",
            "offset.storage.file.filename": "x"}
    with pytest.raises(ConfigError) as refused:
        StandaloneConfig({**base, "exactly.once.source.support": "preparing"})
    assert refused.value.name == "exactly.once.source.support"
    assert "distributed mode" in str(refused.value)
    StandaloneConfig({**base, "exactly.once.source.support": "disabled"})


@SEAWAY_ONLY
@pytest.mark.timeout(180)
def test_a_connector_of_its_own_offsets_topic(worker: WorkerProcess, seaway: Broker, tmp_path: Path) -> None:
    """``offsets.storage.topic``: created compacted, written in the task's transactions, read back on restart."""
    topic, own = f"eos-own-{uuid.uuid4().hex[:8]}", f"own-offsets-{uuid.uuid4().hex[:8]}"
    create_topic(seaway.bootstrap, topic)
    source = tmp_path / "in.txt"
    write_lines(source, 3000)
    reply = worker.request("PUT", "/connectors/own/config", json={
        "connector.class": "FileStreamSource", "file": str(source), "topic": topic, "offsets.storage.topic": own,
        "exactly.once.support": "required"})
    assert reply.status_code == 201, reply.text

    def position() -> int:
        offsets = worker.get("/connectors/own/offsets").json()["offsets"]
        return int(offsets[0]["offset"]["position"]) if offsets else 0

    wait_for(lambda: position() == source.stat().st_size, 60, 0.2, "the whole file")
    key = json.dumps(["own", {"filename": str(source)}], sort_keys=True, separators=(",", ":")).encode()
    partitions = int(worker.props["offset.storage.partitions"])
    stored = [json.loads(v) for v in read_values(seaway.bootstrap, own, partition=partition_for(key, partitions))]
    assert stored and stored[-1] == {"position": source.stat().st_size}
    worker_offsets = worker.props["offset.storage.topic"]
    assert not [v for p in range(partitions) for v in read_values(seaway.bootstrap, worker_offsets, partition=p)
                if b'"position"' in v and str(source).encode() in v], "exactly-once tasks write their own topic only"

    # restarted, the task resumes from its own topic: appended lines follow, none repeats
    assert worker.request("POST", "/connectors/own/restart?includeTasks=true").status_code == 202
    with source.open("ab") as f:
        f.write(b"".join(line + b"\n" for line in lines(500, start=3000)))
    wait_for(lambda: position() == source.stat().st_size, 60, 0.2, "the appended lines")
    assert read_values(seaway.bootstrap, topic) == lines(3500)
    assert worker.request("DELETE", "/connectors/own").status_code == 204


@SEAWAY_ONLY
@pytest.mark.timeout(120)
def test_pause_and_stop_commit_the_open_transaction(worker: WorkerProcess, seaway: Broker) -> None:
    """With a long interval boundary nothing is visible until the task pauses (commit) or stops (commit)."""
    topic = f"eos-pause-{uuid.uuid4().hex[:8]}"
    create_topic(seaway.bootstrap, topic)
    reply = worker.request("PUT", "/connectors/paused/config", json={
        "connector.class": f"{EOS_CONNECTORS}.CounterSource", "topic": topic, "batch": "10", "interval.ms": "20",
        "transaction.boundary": "interval", "transaction.boundary.interval.ms": "600000"})
    assert reply.status_code == 201, reply.text

    def task_state() -> str:
        tasks = worker.get("/connectors/paused/status").json().get("tasks") or [{}]
        return str(tasks[0].get("state"))

    wait_for(lambda: task_state() == "RUNNING", 60, what="the task to run")
    wait_for(lambda: read_values(seaway.bootstrap, topic, isolation="read_uncommitted"), 30, 0.2,
             "records in the open transaction")
    assert read_values(seaway.bootstrap, topic) == [], "an open transaction's records are not visible"
    assert worker.request("PUT", "/connectors/paused/pause").status_code == 202
    wait_for(lambda: task_state() == "PAUSED", 60, what="the task to pause")
    paused = [int(v) for v in read_values(seaway.bootstrap, topic)]
    assert paused and paused == list(range(len(paused))), "pausing commits what was sent"
    assert worker.get("/connectors/paused/offsets").json()["offsets"][0]["offset"] == {"next": len(paused)}
    assert worker.request("PUT", "/connectors/paused/resume").status_code == 202
    wait_for(lambda: task_state() == "RUNNING", 60, what="the task to resume")
    wait_for(lambda: len(read_values(seaway.bootstrap, topic, isolation="read_uncommitted")) > len(paused) + 50,
             30, 0.2, "more records")
    assert worker.request("PUT", "/connectors/paused/stop").status_code == 204
    wait_for(lambda: not worker.get("/connectors/paused/status").json().get("tasks"), 60, what="the task to stop")
    counts = [int(v) for v in read_values(seaway.bootstrap, topic)]
    assert len(counts) > len(paused) + 50 and counts == list(range(len(counts))), "stopping commits the rest"
    assert worker.request("DELETE", "/connectors/paused").status_code == 204
