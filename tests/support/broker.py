"""Start real Seaway brokers as subprocesses on loopback port 0 for tests.

A subprocess (not a thread) so tests can SIGKILL it mid-write and restart it on the same
data directory, exactly as an operator's crash would look.
"""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from tests.support.process import STACKS_ENV, abort_for_stacks

__all__ = ["BrokerProcess"]

READY = "seaway broker ready on "


class BrokerProcess:
    """One broker process; ``bootstrap`` is its host:port once :meth:`start` returns."""

    def __init__(self, data_dir: Path, overrides: dict[str, str] | None = None, port: int = 0) -> None:
        self.data_dir = data_dir
        self.overrides = dict(overrides or {})
        self.port = port
        self.proc: subprocess.Popen[str] | None = None
        self.bootstrap = ""
        self.output: list[str] = []

    def start(self, timeout: float = 90.0) -> BrokerProcess:
        """Start and wait for the ready line. The deadline only bounds a failure: a start takes
        seconds on a loaded 2-core box (and more under tracemalloc)."""
        args = [sys.executable, "-m", "seaway.broker", "--log-level", "INFO",
                "--override", f"log.dirs={self.data_dir}",
                "--override", f"listeners=PLAINTEXT://127.0.0.1:{self.port}"]
        for k, v in self.overrides.items():
            args += ["--override", f"{k}={v}"]
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                     env={**os.environ, "PYTHONUNBUFFERED": "1", **STACKS_ENV})
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
                line = lines.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                break
            if line is None:
                break
            if line.startswith(READY):
                self.bootstrap = line[len(READY):].strip().split(",")[0]
                self.port = int(self.bootstrap.rsplit(":", 1)[1])
                return self
        abort_for_stacks(proc, self._pump)  # the stacks say where a start that never ended waited
        self.kill()
        raise RuntimeError(f"broker did not start within {timeout:g} s:\n" + "".join(self.output[-200:]))

    def stop(self, timeout: float = 20.0) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._join_pump()

    def _join_pump(self) -> None:
        pump = getattr(self, "_pump", None)
        if pump is not None:
            pump.join(5)

    def kill(self) -> None:
        """SIGKILL: no flush, no clean-shutdown marker, as a power cut would look."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self._join_pump()

    def restart(self, timeout: float = 90.0) -> BrokerProcess:
        """Start again on the same data directory and the same port."""
        self.stop()
        return self.start(timeout)

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def __enter__(self) -> BrokerProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
