"""Connect workers as real processes on loopback, for the distributed-mode tests and the benchmark."""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from tests.support.ports import free_port
from tests.support.process import STACKS_ENV, abort_for_stacks

__all__ = ["BROKER_OVERRIDES", "WorkerProcess", "dump_logs", "free_port", "start_all", "wait_for",
           "worker_properties"]

BROKER_OVERRIDES = {"group.initial.rebalance.delay.ms": "200", "group.min.session.timeout.ms": "1000"}
"""Test brokers allow the short session timeouts the tests use and start groups quickly."""

READY = "seaway connect worker ready on "



def worker_properties(bootstrap: str, port: int, group: str, *, session_ms: int = 3000, heartbeat_ms: int = 300,
                      delay_ms: int = 2000, extra: dict[str, str] | None = None) -> dict[str, str]:
    props = {
        "bootstrap.servers": bootstrap,
        "group.id": group,
        "config.storage.topic": f"{group}-configs",
        "offset.storage.topic": f"{group}-offsets",
        "status.storage.topic": f"{group}-status",
        "config.storage.replication.factor": "1",
        "offset.storage.replication.factor": "1",
        "status.storage.replication.factor": "1",
        "offset.storage.partitions": "5",
        "status.storage.partitions": "3",
        "key.converter": "org.apache.kafka.connect.storage.StringConverter",
        "value.converter": "org.apache.kafka.connect.storage.StringConverter",
        "listeners": f"http://127.0.0.1:{port}",
        "session.timeout.ms": str(session_ms),
        "heartbeat.interval.ms": str(heartbeat_ms),
        "rebalance.timeout.ms": "10000",
        "scheduled.rebalance.max.delay.ms": str(delay_ms),
        "offset.flush.interval.ms": "500",
        "task.shutdown.graceful.timeout.ms": "3000",
        # sink tasks' consumer group: a killed worker's consumers must expire quickly too
        "consumer.session.timeout.ms": "3000",
        "consumer.heartbeat.interval.ms": "300",
    }
    props.update(extra or {})
    return props


def wait_for(check: Callable[[], Any], timeout: float, interval: float = 0.1, what: str = "condition") -> Any:
    """Poll ``check`` until it returns something truthy (returned) or raise after ``timeout``."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        try:
            last = check()
            if last:
                return last
        except (httpx.HTTPError, KeyError, ValueError) as e:
            last = e
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}; last: {last!r}")


class WorkerProcess:
    """One ``seaway connect distributed`` process (``mode="standalone"``: ``seaway connect
    standalone``); ``url`` is its REST URL."""

    def __init__(self, directory: Path, props: dict[str, str], *, mode: str = "distributed") -> None:
        self.directory = directory
        self.props = props
        self.mode = mode
        self.url = props["listeners"]
        self.proc: subprocess.Popen[str] | None = None
        self.output: list[str] = []
        self._pump: threading.Thread | None = None

    def start(self, timeout: float = 60.0) -> WorkerProcess:
        self.directory.mkdir(parents=True, exist_ok=True)
        path = self.directory / "worker.properties"
        path.write_text("".join(f"{k}={v}\n" for k, v in self.props.items()), encoding="utf-8")
        args = [sys.executable, "-m", "seaway.cli.main", "connect", self.mode, str(path)]
        env = {k: v for k, v in os.environ.items() if not k.startswith("CONNECT_")}
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                     env={**env, "PYTHONUNBUFFERED": "1", **STACKS_ENV}, cwd=self.directory)
        lines: queue.Queue[str | None] = queue.Queue()
        proc = self.proc

        def pump() -> None:
            assert proc.stdout is not None
            with proc.stdout:
                for line in proc.stdout:
                    self.output.append(line)
                    lines.put(line)
            lines.put(None)

        self._pump = threading.Thread(target=pump, daemon=True)
        self._pump.start()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = lines.get(timeout=max(0.01, min(0.2, deadline - time.monotonic())))
            except queue.Empty:
                if self.mode == "standalone" and self._serving():  # it prints no ready line
                    return self
                continue
            if line is None:
                break
            if line.startswith(READY):
                return self
        abort_for_stacks(proc, self._pump)  # the stacks say where a start that never ended waited
        self.kill()
        raise RuntimeError(f"worker did not start within {timeout:g} s:\n" + "".join(self.output[-200:]))

    def _serving(self) -> bool:
        try:
            return httpx.get(self.url + "/", timeout=1).status_code == 200
        except httpx.HTTPError:
            return False

    def stop(self, timeout: float = 30.0) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self._pump is not None:
            self._pump.join(5)

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        if self._pump is not None:
            self._pump.join(5)

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def is_leader(self) -> bool:
        """What the worker last logged about its role in the group."""
        for line in reversed(self.output):
            if "Joined group at generation" in line:
                return " as leader " in line
        return False

    def generation(self) -> int | None:
        """The group generation the worker last joined, from its log."""
        for line in reversed(self.output):
            found = re.search(r"Joined group at generation (\d+) as ", line)
            if found:
                return int(found.group(1))
        return None

    @property
    def worker_id(self) -> str:
        return self.url.split("://", 1)[1]

    def get(self, path: str, **kw: Any) -> httpx.Response:
        return httpx.get(self.url + path, timeout=30, **kw)

    def request(self, method: str, path: str, **kw: Any) -> httpx.Response:
        return httpx.request(method, self.url + path, timeout=60, **kw)


def wait_settled(workers: list[WorkerProcess], timeout: float = 30) -> WorkerProcess:
    """Wait until every worker has joined the same generation, with one leader; that leader.

    "Some worker is leader" is not enough before a write: a follower still inside the next
    rebalance knows no leader yet and answers 409 (as Kafka Connect does, asking to retry).
    """
    def settled() -> WorkerProcess | None:
        generations = {w.generation() for w in workers}
        leaders = [w for w in workers if w.is_leader()]
        return leaders[0] if len(generations) == 1 and None not in generations and len(leaders) == 1 else None

    leader: WorkerProcess = wait_for(settled, timeout, what="every worker in the same generation")
    return leader


def start_all(workers: list[WorkerProcess]) -> None:
    """Start workers concurrently (each start waits for its ready line)."""
    errors: list[BaseException] = []

    def run(w: WorkerProcess) -> None:
        try:
            w.start()
        except BaseException as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=run, args=(w,)) for w in workers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        for w in workers:
            w.kill()
        raise errors[0]


def dump_logs(workers: list[WorkerProcess], lines: int = 150) -> None:
    """Print the tail of every worker's log (librdkafka chatter left out), to diagnose a failure."""
    for w in workers:
        print(f"===== worker {w.worker_id} =====")
        print("".join([line for line in w.output if not line.startswith("%")][-lines:]))
