"""Run the installed ``seaway`` command as a user would, capturing bytes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SEAWAY = str(Path(sys.executable).with_name("seaway"))


def seaway(*args: str, stdin: bytes = b"", timeout: float = 40) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([SEAWAY, *args], input=stdin, capture_output=True, timeout=timeout, check=False)
