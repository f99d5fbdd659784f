"""A ``seaway connect standalone`` worker run as a real subprocess, as a user would start it.

The acceptance tests drive it only from the outside: ``.properties`` files in, the REST API,
the topic (read with confluent-kafka) and the worker's own stdout/stderr out. Its output goes
to a file, not a pipe, so a chatty worker can never block on a full pipe buffer.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TypeVar

import httpx
from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]

from tests.cli.clirun import SEAWAY
from tests.support.ports import free_port

__all__ = ["StandaloneWorker", "create_topic", "eventually", "high_watermark", "read_topic", "write_properties"]

ROOT = Path(__file__).resolve().parents[3]
TEST_CONNECTORS = "tests.connect.runtime.rt_support"
T = TypeVar("T")


def _python_path() -> list[str]:
    """The caller's own ``PYTHONPATH`` entries, kept after ``ROOT``."""
    return [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]


def write_properties(path: Path, props: Mapping[str, str]) -> Path:
    path.write_text("".join(f"{k}={v}\n" for k, v in props.items()), encoding="utf-8")
    return path


def eventually(check: Callable[[], T], what: str, timeout: float = 30.0, interval: float = 0.05) -> T:
    """Poll ``check`` until it returns a truthy value; fail naming ``what`` and the last value."""
    deadline = time.monotonic() + timeout
    last: T = check()
    while not last:
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}; last: {last!r}")
        time.sleep(interval)
        last = check()
    return last


def create_topic(bootstrap: str, topic: str, partitions: int = 1) -> None:
    """Up front, so a sink never subscribes to a topic that does not exist yet."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(10)


def high_watermark(bootstrap: str, topic: str, partition: int = 0) -> int:
    """How many records partition ``partition`` holds (no transactions or compaction here)."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "acceptance-watermarks"})
    try:
        return int(consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=10)[1])
    finally:
        consumer.close()


def read_topic(bootstrap: str, topic: str, count: int, timeout: float = 30.0,
               partition: int = 0) -> list[tuple[bytes | None, list[tuple[str, bytes]]]]:
    """The first ``count`` records of one partition, as ``(value, headers)``, read without a group commit."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "acceptance-reader",
                         "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic, partition, 0)])
    out: list[tuple[bytes | None, list[tuple[str, bytes]]]] = []
    deadline = time.monotonic() + timeout
    try:
        while len(out) < count:
            if time.monotonic() > deadline:
                raise AssertionError(f"read {len(out)} of {count} records from {topic} in {timeout}s")
            for message in consumer.consume(min(10_000, count - len(out)), 0.5):
                if message.error() is None:
                    raw = message.headers() or []
                    pairs = list(raw.items()) if isinstance(raw, dict) else raw  # consumed: always a list
                    out.append((message.value(), [(k, v.encode() if isinstance(v, str) else v or b"")
                                                  for k, v in pairs]))
    finally:
        consumer.close()
    return out


class StandaloneWorker:
    """``seaway connect standalone worker.properties <connector files>`` in its own process.

    ``worker_props`` are added to (and override) a minimal worker config: the broker, a free
    loopback REST port, StringConverters, an offsets file in ``data_dir`` and a fast offset
    flush. Start and stop as often as needed; the log file accumulates across runs.
    """

    def __init__(self, bootstrap: str, data_dir: Path, connector_files: Sequence[Path] = (),
                 worker_props: Mapping[str, str] | None = None, log_level: str = "INFO", *,
                 cwd: Path | None = None, python_m: bool = False) -> None:
        data_dir.mkdir(parents=True, exist_ok=True)
        self.data_dir = data_dir
        self.cwd = cwd or data_dir
        self.python_m = python_m
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = data_dir / "worker.log"
        self.connector_files = list(connector_files)
        self.log_level = log_level
        self.worker_file = write_properties(data_dir / "worker.properties", {
            "bootstrap.servers": bootstrap,
            "listeners": f"http://127.0.0.1:{self.port}",
            "offset.storage.file.filename": str(data_dir / "connect.offsets"),
            "key.converter": "org.apache.kafka.connect.storage.StringConverter",
            "value.converter": "org.apache.kafka.connect.storage.StringConverter",
            "offset.flush.interval.ms": "500",
            # the test connectors are not installed plugins: the operator's allowlist admits them
            "plugin.allowlist": f"{TEST_CONNECTORS}.*",
            **(worker_props or {})})
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 30.0, *, wait: bool = True) -> StandaloneWorker:
        """Start and (unless not ``wait``) wait until ``GET /health`` answers 200 (connector files are
        created by then)."""
        entry = [sys.executable, "-m", "seaway.cli.main"] if self.python_m else [SEAWAY]
        args = [*entry, "connect", "standalone", str(self.worker_file), *map(str, self.connector_files),
                "--log-level", self.log_level]
        with self.log_path.open("ab") as log:
            # PYTHONPATH: connector classes given as tests.<module>:Class must import in the worker too
            # (the working directory never is on a worker's sys.path, so it cannot be ROOT's stand-in)
            self.proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, cwd=self.cwd,
                                         env={**os.environ, "PYTHONUNBUFFERED": "1",
                                              "PYTHONPATH": os.pathsep.join([str(ROOT), *_python_path()])})
        if not wait:
            return self
        deadline = time.monotonic() + timeout
        while True:
            if self.proc.poll() is not None:
                raise AssertionError(f"worker exited with {self.proc.returncode}:\n{self.log()}")
            if time.monotonic() > deadline:
                self.kill()
                raise AssertionError(f"worker not healthy in {timeout}s:\n{self.log()}")
            try:
                if httpx.get(self.url + "/health", timeout=1).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.1)

    def stop(self, timeout: float = 30.0) -> int:
        """SIGTERM (a clean stop: tasks stop, offsets commit); the exit code."""
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                raise AssertionError(f"worker ignored SIGTERM for {timeout}s:\n{self.log()}") from None
        return int(self.proc.returncode)

    def kill(self) -> None:
        """SIGKILL: no offset commit, no flush, as a crash would look."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace") if self.log_path.exists() else ""

    def get(self, path: str) -> httpx.Response:
        return httpx.get(self.url + path, timeout=10)

    def __enter__(self) -> StandaloneWorker:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        try:
            self.stop()
        finally:
            self.kill()
