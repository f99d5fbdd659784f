"""Stopping the server processes tests start, and asking a stuck one where it is."""

from __future__ import annotations

import signal
import subprocess
import threading
from typing import Any

STACKS_ENV = {"PYTHONFAULTHANDLER": "1"}
"""Environment for a Python server a test starts: with it, SIGABRT prints every thread's stack."""


def stop(proc: subprocess.Popen[Any], timeout: float = 30.0, sig: int = signal.SIGTERM) -> None:
    """``sig`` (SIGTERM: a clean stop, as a user's Ctrl-C), then SIGKILL after ``timeout`` seconds."""
    proc.send_signal(sig)
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def abort_for_stacks(proc: subprocess.Popen[Any], pump: threading.Thread | None, timeout: float = 10.0) -> None:
    """End a server that did not start in time with SIGABRT: started with :data:`STACKS_ENV`, it
    prints every thread's stack (faulthandler) to the output ``pump`` collects, so the failure
    says where it waited instead of showing only what it had logged."""
    if proc.poll() is None:
        stop(proc, timeout, signal.SIGABRT)
    if pump is not None:
        pump.join(timeout)
