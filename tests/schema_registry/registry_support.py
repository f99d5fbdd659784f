"""Helpers for registry tests against real brokers: a registry app served by uvicorn in a thread."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time
from typing import Any

import httpx
import uvicorn
from fastapi import FastAPI

from tests.support.ports import free_port as free_port  # re-exported: the registry tests' port helper
from tests.support.process import STACKS_ENV, abort_for_stacks

# Brokers for registry tests: groups rebalance at once and allow short sessions, so leader
# elections take well under a second.
FAST_GROUPS = {
    "group.initial.rebalance.delay.ms": "0",
    "group.min.session.timeout.ms": "500",
    "offsets.topic.num.partitions": "3",
}


class ServedApp:
    """One registry app on uvicorn in a daemon thread; ``url`` once started."""

    def __init__(self, app: FastAPI, port: int = 0) -> None:
        self.app = app
        config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", ws="none", lifespan="on")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.url = ""

    def start(self, timeout: float = 20.0) -> ServedApp:
        self.thread.start()
        deadline = time.monotonic() + timeout
        while not self.server.started:
            assert self.thread.is_alive(), "uvicorn exited during startup"
            assert time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.01)
        port = self.server.servers[0].sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        return self

    def stop(self, timeout: float = 20.0) -> None:
        self.server.should_exit = True
        self.thread.join(timeout)

    def __enter__(self) -> ServedApp:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.stop()


def register(url: str, subject: str, schema: str, **params: Any) -> httpx.Response:
    return httpx.post(
        f"{url}/subjects/{subject}/versions",
        json={"schema": schema},
        params=params,
        headers={"Content-Type": "application/vnd.schemaregistry.v1+json"},
        timeout=30,
    )


def record_schema(name: str, *fields: str) -> str:
    """A small record schema text: ``record_schema("A", "x")`` has one string field ``x``."""
    import json

    return json.dumps(
        {"type": "record", "name": name, "fields": [{"name": f, "type": "string"} for f in fields]}
    )


class RegistryProcess:
    """``seaway registry`` as a subprocess; ``url`` once its ready line is printed."""

    READY = "seaway registry ready on "

    def __init__(self, bootstrap: str, *overrides: str, port: int = 0) -> None:
        self.args = [
            sys.executable, "-m", "seaway.cli.main", "registry", "--log-level", "WARNING",
            "--override", f"listeners=http://127.0.0.1:{port}",
            "--override", f"kafkastore.bootstrap.servers={bootstrap}",
        ]
        for item in overrides:
            self.args += ["--override", item]
        self.proc: subprocess.Popen[str] | None = None
        self.url = ""
        self.output: list[str] = []

    def start(self, timeout: float = 75.0) -> RegistryProcess:
        """Start and wait for the ready line. ``timeout`` is above the registry's own wait for its
        first leader election (``kafkastore.init.timeout.ms``, 60 s), so a slow election serves
        late rather than failing here. On a timeout the error shows every thread's stack (in CI
        once, a registry printed nothing for 30 s)."""
        self.proc = subprocess.Popen(self.args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                     env={**os.environ, "PYTHONUNBUFFERED": "1", **STACKS_ENV})
        ready: queue.Queue[str | None] = queue.Queue()
        proc = self.proc

        def pump() -> None:
            assert proc.stdout is not None
            with proc.stdout:
                for line in proc.stdout:
                    self.output.append(line)
                    if line.startswith(self.READY):
                        ready.put(line[len(self.READY):].strip())
            ready.put(None)

        self._pump = threading.Thread(target=pump, daemon=True)
        self._pump.start()
        try:
            url = ready.get(timeout=timeout)
        except queue.Empty:
            url = None
        if url is None:
            abort_for_stacks(proc, self._pump)
            raise RuntimeError(f"registry did not start within {timeout:g} s:\n" + "".join(self.output[-200:]))
        self.url = url
        return self

    def stop(self, timeout: float = 20.0) -> int:
        """SIGTERM and wait; returns the exit status."""
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                raise
        self._pump.join(5)
        return self.proc.returncode

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def __enter__(self) -> RegistryProcess:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.kill()
