"""``seaway up``: a broker, a schema registry and a Connect worker on one data directory.

The main command: one line gives a working Kafka-compatible platform on this machine::

    seaway up --data-dir ./seaway-data

Each part runs as its own process (exactly the commands an operator would run by hand), with
its log in ``<data-dir>/logs/<part>.log``. ``up`` starts the broker and waits until it answers
metadata requests, then the registry (``GET /``) and the worker (``GET /health``), prints the
addresses, and supervises: if any part exits, it says so and stops the others (exit status 1);
Ctrl-C or SIGTERM stops them all cleanly, last started first (exit status 0).

The worker runs in standalone mode with its offsets in ``<data-dir>/connect/connect.offsets``.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import httpx

__all__ = ["Part", "main", "wait_healthy"]

STOP_TIMEOUT = 20.0


@dataclass
class Part:
    """One supervised process and how to tell that it is ready."""

    name: str
    args: list[str]
    address: str
    healthy: Callable[[], bool]
    env: dict[str, str] = field(default_factory=dict)
    proc: subprocess.Popen[bytes] | None = None
    log_path: Path | None = None
    _log: IO[bytes] | None = None

    def start(self, logs: Path) -> None:
        self.log_path = logs / f"{self.name}.log"
        self._log = self.log_path.open("ab")
        # a session of its own: Ctrl-C reaches only `seaway up`, which stops the parts in order
        self.proc = subprocess.Popen(self.args, stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                     env={**os.environ, "PYTHONUNBUFFERED": "1", **self.env},
                                     start_new_session=True)

    @property
    def exit_code(self) -> int | None:
        return None if self.proc is None else self.proc.poll()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self._log is not None:
            self._log.close()
            self._log = None

    def tail(self, lines: int = 5) -> str:
        if self.log_path is None or not self.log_path.exists():
            return ""
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])


def _http_ok(url: str) -> Callable[[], bool]:
    def check() -> bool:
        try:
            return httpx.get(url, timeout=2.0).status_code == 200
        except httpx.HTTPError:
            return False
    return check


def _broker_ok(bootstrap: str) -> Callable[[], bool]:
    def check() -> bool:
        from confluent_kafka import KafkaException
        from confluent_kafka.admin import AdminClient

        admin = AdminClient({"bootstrap.servers": bootstrap, "logger": _silent_logger()})
        try:
            admin.list_topics(timeout=2.0)
            return True
        except KafkaException:
            return False
    return check


def _silent_logger() -> Any:
    import logging

    logger = logging.getLogger("seaway.cli.up.librdkafka")
    logger.addHandler(logging.NullHandler())
    logger.propagate = False
    return logger


def wait_healthy(part: Part, timeout: float, stopping: threading.Event) -> str | None:
    """None once ``part`` is healthy, else why not (it exited, timed out, or we are stopping)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if stopping.is_set():
            return "interrupted"
        code = part.exit_code
        if code is not None:
            return f"{part.name} exited with status {code} while starting"
        if part.healthy():
            return None
        stopping.wait(0.2)
    return f"{part.name} was not healthy within {timeout:g}s"


def _worker_properties(
    data: Path, host: str, bootstrap: str, rest_port: int, registry_url: str | None, advertised_host: str | None
) -> Path:
    """The worker's config. With a registry, values default to Avro through it (Confluent's
    usual setup) and keys to strings; without one, both default to JSON with schemas."""
    connect_dir = data / "connect"
    connect_dir.mkdir(parents=True, exist_ok=True)
    path = connect_dir / "worker.properties"
    path.write_text("\n".join([
        "# written by `seaway up`; edit freely, it is rewritten at each start",
        f"bootstrap.servers={bootstrap}",
        f"listeners=http://{host}:{rest_port}",
        *([f"rest.advertised.host.name={advertised_host}"] if advertised_host else []),
        f"offset.storage.file.filename={connect_dir / 'connect.offsets'}",
        *(
            [
                "key.converter=org.apache.kafka.connect.storage.StringConverter",
                "value.converter=io.confluent.connect.avro.AvroConverter",
                f"value.converter.schema.registry.url={registry_url}",
            ]
            if registry_url
            else [
                "key.converter=org.apache.kafka.connect.json.JsonConverter",
                "value.converter=org.apache.kafka.connect.json.JsonConverter",
            ]
        ),
        "",
    ]), encoding="utf-8")
    return path


def plan(args: argparse.Namespace) -> list[Part]:
    """The parts to start, in order, from the command line."""
    data: Path = args.data_dir.resolve()
    host = args.host
    # The parts reach each other on loopback when listening on every interface.
    local = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(host, host)
    bootstrap = f"{local}:{args.broker_port}"
    (data / "broker").mkdir(parents=True, exist_ok=True)
    broker = [sys.executable, "-m", "seaway.broker", "--override", f"log.dirs={data / 'broker'}",
              "--override", f"listeners=PLAINTEXT://{host}:{args.broker_port}"]
    if args.advertised_host:
        broker += ["--override", f"advertised.listeners=PLAINTEXT://{args.advertised_host}:{args.broker_port}"]
    parts = [Part("broker", broker, bootstrap, _broker_ok(bootstrap))]
    if not args.no_registry:
        url = f"http://{local}:{args.registry_port}"
        settings = {"kafkastore.bootstrap.servers": bootstrap, "kafkastore.topic.replication.factor": "1",
                    "listeners": f"http://{host}:{args.registry_port}"}
        if args.advertised_host:
            settings["host.name"] = args.advertised_host
        if importlib.util.find_spec("seaway.cli.registry") is not None:
            command = [sys.executable, "-m", "seaway.cli.main", "registry"]
            for key, value in settings.items():
                command += ["--override", f"{key}={value}"]
        else:  # the registry's own command is newer than this one: serve its app directly
            command = [sys.executable, "-m", "uvicorn", "seaway.schema_registry.app:create_app", "--factory",
                       "--host", host, "--port", str(args.registry_port), "--log-level", "warning"]
        env = {"SCHEMA_REGISTRY_" + k.upper().replace(".", "_"): v for k, v in settings.items()}
        parts.append(Part("registry", command, url, _http_ok(url + "/"), env=env))
    if not args.no_connect:
        url = f"http://{local}:{args.rest_port}"
        registry_url = None if args.no_registry else f"http://{local}:{args.registry_port}"
        worker = _worker_properties(data, host, bootstrap, args.rest_port, registry_url, args.advertised_host)
        parts.append(Part("connect", [sys.executable, "-m", "seaway.cli.main", "connect", "standalone", str(worker)],
                          url, _http_ok(url + "/health")))
    return parts


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="seaway up", description="Start a broker, a schema registry and a Connect "
                                "worker on one data directory, and supervise them until Ctrl-C.")
    p.add_argument("--data-dir", type=Path, default=Path("seaway-data"), metavar="DIR",
                   help="where every part keeps its data and logs (default ./seaway-data)")
    p.add_argument("--host", default="127.0.0.1", help="interface to listen on (default 127.0.0.1)")
    p.add_argument("--advertised-host", metavar="HOST",
                   help="the name clients use to reach this machine, given to them in the broker's metadata "
                   "(advertised.listeners) and the worker's REST identity (rest.advertised.host.name); "
                   "default: --host, or this machine's name when --host is 0.0.0.0")
    p.add_argument("--broker-port", type=int, default=9092)
    p.add_argument("--rest-port", type=int, default=8083, help="the Connect worker's REST API")
    p.add_argument("--registry-port", type=int, default=8081)
    p.add_argument("--no-registry", action="store_true", help="do not start the schema registry")
    p.add_argument("--no-connect", action="store_true", help="do not start a Connect worker")
    p.add_argument("--startup-timeout", type=float, default=60.0, metavar="SECONDS",
                   help="how long each part may take to become healthy (default 60)")
    return p


def _stop_all(parts: Sequence[Part]) -> None:
    for part in reversed(parts):
        part.stop()


def _say(message: str) -> None:
    print(f"seaway up: {message}", flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    logs = args.data_dir.resolve() / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    stopping = threading.Event()

    def on_signal(signum: int, _: object) -> None:
        stopping.set()

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    started: list[Part] = []
    try:
        for part in plan(args):
            part.start(logs)
            started.append(part)
            problem = wait_healthy(part, args.startup_timeout, stopping)
            if problem == "interrupted":
                _say("interrupted, stopping")
                return 0
            if problem is not None:
                _say(f"{problem}; last lines of {part.log_path}:\n{part.tail()}")
                return 1
        width = max(len(p.name) for p in started)
        for part in started:
            pid = part.proc.pid if part.proc else "?"
            print(f"{part.name.ljust(width)}  {part.address}  (pid {pid})", flush=True)
        _say(f"ready; logs in {logs}; press Ctrl-C to stop")
        while not stopping.wait(0.5):
            for part in started:
                code = part.exit_code
                if code is not None:
                    _say(f"{part.name} exited with status {code}; stopping the others "
                         f"(see {part.log_path})")
                    return 1
        _say("stopping")
        return 0
    finally:
        _stop_all(started)
        for signum, handler in previous.items():
            signal.signal(signum, handler)


if __name__ == "__main__":
    sys.exit(main())
