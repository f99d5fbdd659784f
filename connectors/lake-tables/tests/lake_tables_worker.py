"""A real Connect worker process for the table sinks' tests: ``seaway connect standalone`` on a known REST port.

Killing its process group with SIGKILL is a machine dying: no ``stop()``, no ``close()``, no flush. Its
REST port is chosen before it starts (tests/support/ports.py), so a test can PUT connector configs and read
the status codes Kafka Connect's REST API answers.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tests.support.ports import free_port

__all__ = ["TableWorker"]


class TableWorker:
    """One ``seaway connect standalone`` process with ``connectors`` (a list of configs, each with a name)."""

    def __init__(self, folder: Path, bootstrap: str, connectors: list[dict[str, str]],
                 worker: Mapping[str, str] | None = None) -> None:
        folder.mkdir(parents=True)
        self.port = free_port()
        props = {"bootstrap.servers": bootstrap,
                 "key.converter": "org.apache.kafka.connect.storage.StringConverter",
                 "value.converter": "org.apache.kafka.connect.json.JsonConverter",
                 "value.converter.schemas.enable": "true",
                 "offset.storage.file.filename": str(folder.parent / "connect.offsets"),
                 "offset.flush.interval.ms": "1000",
                 "listeners": f"http://127.0.0.1:{self.port}", **(worker or {})}
        properties = folder / "worker.properties"
        properties.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
        files = []
        for i, config in enumerate(connectors):
            files.append(folder / f"connector-{i}.json")
            files[-1].write_text(json.dumps(config))
        self.log = folder / "worker.log"
        self._out = self.log.open("w")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "seaway.cli.main", "connect", "standalone", str(properties), *map(str, files)],
            stdout=self._out, stderr=subprocess.STDOUT, start_new_session=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"})

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def wait_for(self, text: str, timeout: float, count: int = 1) -> bool:
        """Until ``text`` appears ``count`` times in the log (``False`` on timeout or exit)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self.proc.poll() is None:
            if self.output().count(text) >= count:
                return True
            time.sleep(0.2)
        return self.output().count(text) >= count

    def request(self, method: str, path: str, body: Any = None, timeout: float = 60.0) -> tuple[int, Any]:
        """(HTTP status, decoded JSON body) of one REST call; waits for the REST server to come up."""
        data = None if body is None else json.dumps(body).encode()
        deadline = time.monotonic() + timeout
        while True:
            req = urllib.request.Request(self.url + path, data=data, method=method,
                                         headers={"Content-Type": "application/json"})
            try:
                with urllib.request.urlopen(req, timeout=30) as answer:
                    text = answer.read()
                    return answer.status, json.loads(text) if text else None
            except urllib.error.HTTPError as e:
                text = e.read()
                return e.code, json.loads(text) if text else None
            except (urllib.error.URLError, ConnectionError):
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    raise
                time.sleep(0.3)

    def kill(self) -> None:
        """SIGKILL to the worker's process group."""
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
