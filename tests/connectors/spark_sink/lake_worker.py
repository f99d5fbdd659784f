"""A real Connect worker process running the Spark sink: ``seaway connect standalone`` with its own Spark JVM.

The worker and the JVM pyspark launches form one process group; killing the group with SIGKILL
is a machine dying (the Spark executors of a cluster are the cluster's, and go when the driver's
connection drops).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

__all__ = ["FAST_JVM", "Worker"]

#: JVM flags for short-lived test JVMs: C1 only and serial GC start Spark about twice as fast
FAST_JVM = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"


class Worker:
    """One ``seaway connect standalone`` process running the sink (or several connectors: a list)."""

    def __init__(self, tmp: Path, bootstrap: str, connector: dict[str, str] | list[dict[str, str]], n: int) -> None:
        folder = tmp / f"worker-{n}"
        folder.mkdir()
        worker = folder / "worker.properties"
        worker.write_text("\n".join([
            f"bootstrap.servers={bootstrap}",
            "key.converter=org.apache.kafka.connect.storage.StringConverter",
            "value.converter=org.apache.kafka.connect.json.JsonConverter",
            "value.converter.schemas.enable=true",
            f"offset.storage.file.filename={tmp / 'connect.offsets'}",
            "offset.flush.interval.ms=1000",
            "listeners=http://127.0.0.1:0"]) + "\n")
        files = []
        for i, config in enumerate(connector if isinstance(connector, list) else [connector]):
            files.append(folder / f"connector-{i}.json")
            files[-1].write_text(json.dumps(config))
        self.log = folder / "worker.log"
        self._out = self.log.open("w")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "seaway.cli.main", "connect", "standalone", str(worker), *map(str, files)],
            stdout=self._out, stderr=subprocess.STDOUT, start_new_session=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"})

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def wait_for(self, text: str, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self.proc.poll() is None:
            if text in self.output():
                return True
            time.sleep(0.2)
        return text in self.output()

    def kill(self) -> None:
        """SIGKILL to the worker's process group (its Spark driver JVM included)."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(30)
        if not self._out.closed:
            self._out.close()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(30)
        self.kill()
