"""Server processes that outlive the command that started them, stopped by PID: what HDFS and Spark's daemons share.

Each daemon runs in its own session (``start_new_session``: a Ctrl-C in the shell that started
it does not reach it), writes its output to ``<name>.log`` and its PID to ``<name>.pid`` in the
cluster's folder, so the fixture that started it, a later ``python -m tests.lake_cluster ... stop``
or an operator can stop it. Before signalling a PID read from a file, :func:`alive` checks that
the process's command line still names the daemon's main class, so a recycled PID is never hit.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
import urllib.request
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from tests.support.ports import free_port

__all__ = ["Daemon", "free_port", "http_json", "wait_until"]


def http_json(url: str, timeout: float = 5.0) -> Any:
    with urllib.request.urlopen(url, timeout=timeout) as response:
        return json.loads(response.read())


def wait_until(check: Callable[[], bool], timeout: float, what: str, alive: Callable[[], bool] | None = None,
               log: Path | None = None) -> None:
    """Poll ``check`` (exceptions count as not yet) until it holds; fail after ``timeout`` or once ``alive`` is not."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(Exception):
            if check():
                return
        if alive is not None and not alive():
            break
        time.sleep(0.2)
    tail = log.read_text(errors="replace")[-4000:] if log is not None and log.exists() else ""
    raise TimeoutError(f"{what} within {timeout:.0f} s" + (f"; last output:\n{tail}" if tail else ""))


class Daemon:
    """One JVM daemon: ``<folder>/<name>.pid`` and ``<folder>/<name>.log``; ``marker`` is its main class."""

    def __init__(self, folder: Path, name: str, marker: str) -> None:
        self.folder = folder
        self.name = name
        self.marker = marker
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def pid_file(self) -> Path:
        return self.folder / f"{self.name}.pid"

    @property
    def log(self) -> Path:
        return self.folder / f"{self.name}.log"

    def pid(self) -> int | None:
        """The daemon's PID if it runs (from the pid file, checked against /proc)."""
        try:
            pid = int(self.pid_file.read_text())
        except (OSError, ValueError):
            return None
        return pid if self.alive(pid) else None

    def alive(self, pid: int | None = None) -> bool:
        pid = pid if pid is not None else (self.proc.pid if self.proc is not None else None)
        if pid is None:
            return False
        if self.proc is not None and self.proc.pid == pid:
            # our own child: its /proc cmdline reads empty for a moment after exec
            return self.proc.poll() is None
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            return False
        return self.marker.encode() in cmdline and state != "Z"

    def start(self, args: Sequence[str], env: dict[str, str] | None = None) -> int:
        """Launch ``args`` (appending to the log); refuses when the daemon already runs."""
        if self.pid() is not None:
            raise RuntimeError(f"{self.name} already runs (pid {self.pid()}, {self.pid_file})")
        self.folder.mkdir(parents=True, exist_ok=True)
        with self.log.open("ab") as out:
            out.write(f"---- {time.strftime('%Y-%m-%d %H:%M:%S')} starting {self.name}\n".encode())
            out.flush()
            self.proc = subprocess.Popen(list(args), stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                         start_new_session=True, env={**os.environ, **(env or {})})
        self.pid_file.write_text(str(self.proc.pid))
        return self.proc.pid

    def stop(self, timeout: float = 30.0, kill: bool = False) -> None:
        """SIGTERM (SIGKILL with ``kill``: a crash), then SIGKILL after ``timeout``; waits until it is gone."""
        pid = self.pid()
        if pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL if kill else signal.SIGTERM)
            deadline = time.monotonic() + timeout
            while self.alive(pid) and time.monotonic() < deadline:
                self._reap()
                time.sleep(0.1)
            if self.alive(pid):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
                while self.alive(pid):
                    self._reap()
                    time.sleep(0.1)
        self._reap()
        self.pid_file.unlink(missing_ok=True)

    def _reap(self) -> None:
        if self.proc is not None:
            self.proc.poll()
