"""Stopping the server processes tests start."""

from __future__ import annotations

import signal
import subprocess
from typing import Any


def stop(proc: subprocess.Popen[Any], timeout: float = 30.0) -> None:
    """SIGTERM (a clean stop, as a user's Ctrl-C), then SIGKILL after ``timeout`` seconds."""
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
