"""A sink created before its topic exists waits for it (issue 15.1), as Kafka Connect's does.

Each test runs two pipelines on one real worker (standalone or a distributed cluster of one) and
a real broker: in "sink first" the FileStreamSink is created, and its FileStreamSource only
10 s later; in "source first" the source is created first on an empty file and the sink right
after it, and the file gets its lines 10 s later. Either way the sink's consumer sees
UNKNOWN_TOPIC_OR_PART for about 10 s; its task must stay RUNNING throughout and then copy every
line once the topic appears.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.cli.connect_worker import connect_worker
from tests.connect.distributed.dist_support import BROKER_OVERRIDES, WorkerProcess, free_port, worker_properties
from tests.support.broker import BrokerProcess

LATE_S = 10.0
HOLD_S = 5.0
"""How long the tasks must stay RUNNING without their topic, at least."""
START_S = 60.0
"""A deadline for the tasks to start (bounds a failure only)."""
LINES = [f"line {i}" for i in range(1, 21)]


@contextmanager
def _standalone(bootstrap: str, data: Path) -> Iterator[str]:
    with connect_worker(bootstrap, data) as url:
        yield url


@contextmanager
def _distributed(bootstrap: str, data: Path) -> Iterator[str]:
    worker = WorkerProcess(data, worker_properties(bootstrap, free_port(), f"g-{uuid.uuid4().hex[:8]}"))
    worker.start()
    try:
        yield worker.url
    finally:
        worker.stop()


WORKERS: dict[str, Callable[[str, Path], AbstractContextManager[str]]] = {
    "standalone": _standalone, "distributed": _distributed}


def _create(url: str, name: str, config: dict[str, str]) -> None:
    # a distributed worker may answer 409 while it (re)joins its group: retry as Kafka's docs say
    deadline = time.monotonic() + 30
    while True:
        reply = httpx.post(url + "/connectors", json={"name": name, "config": config}, timeout=30)
        if reply.status_code != 409 or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert reply.status_code == 201, reply.text


def _task_states(url: str, name: str) -> list[str]:
    reply = httpx.get(f"{url}/connectors/{name}/status", timeout=10)
    if reply.status_code != 200:
        return []
    status: dict[str, Any] = reply.json()
    failed = [t.get("trace", "") for t in status["tasks"] if t["state"] == "FAILED"]
    assert not failed, f"{name}'s task FAILED: {failed[0]}"
    return [t["state"] for t in status["tasks"]]


@pytest.mark.timeout(180)
@pytest.mark.parametrize("mode", sorted(WORKERS))
def test_sinks_wait_for_a_topic_that_appears_late(mode: str, tmp_path: Path) -> None:
    with BrokerProcess(tmp_path / "broker", overrides=BROKER_OVERRIDES) as broker, \
            WORKERS[mode](broker.bootstrap, tmp_path / "worker") as url:
        tag = uuid.uuid4().hex[:8]
        topic_a, topic_b = f"late-a-{tag}", f"late-b-{tag}"
        in_a, in_b = tmp_path / "in-a.txt", tmp_path / "in-b.txt"
        out_a, out_b = tmp_path / "out-a.txt", tmp_path / "out-b.txt"
        in_a.write_text("".join(f"{line}\n" for line in LINES))
        in_b.write_text("")
        started = time.monotonic()
        # pipeline a: the sink first, its source 10 s later
        _create(url, "sink-a", {"connector.class": "FileStreamSink", "topics": topic_a, "file": str(out_a)})
        # pipeline b: the source first (nothing to read yet, so no topic), then the sink
        _create(url, "source-b", {"connector.class": "FileStreamSource", "topic": topic_b, "file": str(in_b)})
        _create(url, "sink-b", {"connector.class": "FileStreamSink", "topics": topic_b, "file": str(out_b)})

        # while the topics are missing the sinks' tasks run (the old code failed them within ~2 s):
        # watched for LATE_S and for at least HOLD_S after both were first seen RUNNING, since a
        # loaded machine may take most of LATE_S to start them; once RUNNING they must stay so
        running_since: float | None = None
        while True:
            states = [_task_states(url, "sink-a"), _task_states(url, "sink-b")]
            now = time.monotonic()
            if running_since is None:
                assert all(s in ([], ["RUNNING"]) for s in states), states
                if states == [["RUNNING"], ["RUNNING"]]:
                    running_since = now
                else:
                    assert now - started < START_S, f"the sinks' tasks not RUNNING after {START_S:.0f} s: {states}"
            else:
                assert states == [["RUNNING"], ["RUNNING"]], states
                if now - started >= LATE_S and now - running_since >= HOLD_S:
                    break
            time.sleep(0.5)

        _create(url, "source-a", {"connector.class": "FileStreamSource", "topic": topic_a, "file": str(in_a)})
        with in_b.open("a") as f:
            f.write("".join(f"{line}\n" for line in LINES))

        deadline = time.monotonic() + 45
        while time.monotonic() < deadline:
            got = [p.read_text().splitlines() if p.exists() else [] for p in (out_a, out_b)]
            if got == [LINES, LINES]:
                break
            _task_states(url, "sink-a")
            _task_states(url, "sink-b")
            time.sleep(0.3)
        assert got == [LINES, LINES], got
        assert _task_states(url, "sink-a") == ["RUNNING"]
        assert _task_states(url, "sink-b") == ["RUNNING"]
