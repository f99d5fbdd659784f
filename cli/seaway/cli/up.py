"""``seaway up``: a broker, a schema registry, a Connect worker and the web console on one data directory.

The main command: one line gives a working Kafka-compatible platform on this machine::

    seaway up --data-dir ./seaway-data

Each part runs as its own process (exactly the commands an operator would run by hand), with
its log in ``<data-dir>/logs/<part>.log``. ``up`` first checks that every port it will listen
on is free (naming the part and port that is not), starts the broker and waits until it says
it is ready and answers metadata requests, then the registry, the worker and the web console
(``seaway console`` over the other three, on ``--console-port``, 8080) likewise, prints
the addresses and each part's Prometheus ``/metrics`` URL (the broker's own metrics listener,
``metrics.listener`` on ``--broker-metrics-port``, 9308 by default; the registry's and the
worker's on their REST listeners), and supervises: if any part exits, it says so and stops the others (exit status
1); Ctrl-C or SIGTERM stops them all cleanly, last started first (exit status 0). A part counts
as ready only once its own process has printed its ready line, so another server answering on
the same port is never taken for it.

The worker runs in distributed mode, a Connect cluster of one whose connector configs,
offsets and statuses live in topics of the embedded broker (``connect-configs``,
``connect-offsets``, ``connect-status``), so connectors survive restarts, as with Confluent's
local stack. Values default to Avro through the registry (keys to strings).

Configuration: each part's settings are, later winning, the defaults ``up`` derives from its
options (ports, host, data directory), the part's config file (``--broker-config``,
``--registry-config``, ``--worker-config``, else ``<data-dir>/config/<part>.properties``,
which ``up`` writes, all comments, only when it is missing and never touches again) and
``--override part.key=value``. The merged result each part runs with is written to
``<data-dir>/run/<part>.properties`` at every start.

A secured broker (SSL, SASL_SSL...: its listeners in ``--broker-config``): ``--client-config
FILE`` holds the Kafka client security settings to reach it with (Java's names, as for
``--command-config``, or librdkafka's). ``up`` uses them for its own readiness check and gives
them to the registry (as ``kafkastore.<key>``) and the worker (top-level, ``producer.`` and
``consumer.``) as defaults, which their own files may still override. An HTTPS registry or
worker (``listeners=https://...`` in their files) is checked over HTTPS, verified with
``--ca-file`` (default: the system's CAs), which the worker's AvroConverter also gets as its
``schema.registry.ssl.truststore.*``; a 401 from one with authentication on counts as serving.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import httpx
from seaway.cli.ports import describe, endpoints, first_taken, local_address
from seaway.cli.topics import CliError, parse_properties, shown
from seaway.log_setup import LOG_FORMAT_ENV, add_log_format_argument
from seaway.properties import format_properties

__all__ = ["COMPONENTS", "Part", "main", "plan", "wait_healthy"]

STOP_TIMEOUT = 20.0
COMPONENTS = ("broker", "registry", "worker")
"""The ``component`` of ``--override component.key=value`` and of ``<data-dir>/config/<component>.properties``."""

# what each part prints once it serves (seaway broker / seaway registry / seaway connect distributed)
_READY = {"broker": "seaway broker ready on ", "registry": "seaway registry ready on ",
          "connect": "seaway connect worker ready on ", "console": "seaway console ready on "}
_CONFIG_FLAG = {"broker": "--broker-config", "registry": "--registry-config", "worker": "--worker-config"}
_NAMES = {"broker": "Kafka's broker", "registry": "Confluent Schema Registry's", "worker": "Kafka Connect's worker"}
_LABEL = {"broker": "broker", "registry": "schema registry", "connect": "Connect worker", "console": "web console"}
_BROKER_METRICS = re.compile(rb"serving Prometheus metrics on (https?://\S+/metrics)")
"""The line the broker logs once its metrics listener serves (seaway.broker.server)."""


@dataclass
class Part:
    """One supervised process and how to tell that it is ready."""

    name: str
    args: list[str]
    address: str
    healthy: Callable[[], bool]
    listeners: list[tuple[str, int]]
    ready_line: str = ""
    metrics: str | None = None
    """The part's /metrics URL; None for the broker, whose log says where its listener serves."""
    proc: subprocess.Popen[bytes] | None = None
    log_path: Path | None = None
    _log: IO[bytes] | None = None
    _log_start = 0

    def start(self, logs: Path) -> None:
        self.log_path = logs / f"{self.name}.log"
        self._log = self.log_path.open("ab")
        self._log_start = self._log.tell()  # the ready line must come from this run, not an earlier one
        # a session of its own: Ctrl-C reaches only `seaway up`, which stops the parts in order
        self.proc = subprocess.Popen(self.args, stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                     env={**os.environ, "PYTHONUNBUFFERED": "1"}, start_new_session=True)

    @property
    def exit_code(self) -> int | None:
        return None if self.proc is None else self.proc.poll()

    def said_ready(self) -> bool:
        """Whether this run's process printed its ready line (not some other server on the port)."""
        if not self.ready_line:
            return True
        if self.log_path is None or not self.log_path.exists():
            return False
        with self.log_path.open("rb") as f:
            f.seek(self._log_start)
            return any(line.startswith(self.ready_line.encode()) for line in f)

    def metrics_url(self) -> str | None:
        """Where Prometheus scrapes this part: its REST /metrics, or what the broker logged (None: off)."""
        if self.metrics is not None or self.name != "broker":
            return self.metrics
        if self.log_path is None or not self.log_path.exists():
            return None
        with self.log_path.open("rb") as f:
            f.seek(self._log_start)
            for line in f:
                found = _BROKER_METRICS.search(line)
                if found:
                    host, port = endpoints(found.group(1).decode())[0]
                    return f"http://{_url_host(local_address(host))}:{port}/metrics"
        return None

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
        with self.log_path.open("rb") as f:
            f.seek(self._log_start)
            text = f.read().decode(errors="replace")
        return "\n".join([line for line in text.splitlines() if not line.startswith("%")][-lines:])


def _http_ok(url: str, verify: Any = True) -> Callable[[], bool]:
    def check() -> bool:
        try:  # 401: authentication is on, so the server is serving
            return httpx.get(url, timeout=2.0, verify=verify).status_code in (200, 401)
        except httpx.HTTPError:
            return False
    return check


def _broker_ok(bootstrap: str, security: dict[str, str] | None = None) -> Callable[[], bool]:
    def check() -> bool:
        from confluent_kafka import KafkaException
        from confluent_kafka.admin import AdminClient
        from seaway.security.kafka_client import librdkafka_config

        admin = AdminClient({**librdkafka_config(security or {}), "bootstrap.servers": bootstrap,
                             "logger": _silent_logger()})
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
    """None once ``part`` said it is ready and answers, else why not (it exited, timed out, we are stopping)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if stopping.is_set():
            return "interrupted"
        code = part.exit_code
        if code is not None:
            return f"{part.name} exited with status {code} while starting"
        if part.said_ready() and part.healthy():
            return None
        stopping.wait(0.2)
    return f"{part.name} was not healthy within {timeout:g}s"


# -- configuration ----------------------------------------------------------------------------------

def _broker_defaults(args: argparse.Namespace, data: Path) -> dict[str, str]:
    props = {"log.dirs": str(data / "broker"), "listeners": f"PLAINTEXT://{args.host}:{args.broker_port}",
             # Kafka's own config/server.properties for a single development broker: consumer
             # groups (and the Connect worker's group) start at once instead of after 3 s
             "group.initial.rebalance.delay.ms": "0",
             # Prometheus /metrics (docs/metrics.md); empty (--override broker.metrics.listener=) turns it off
             "metrics.listener": f"{_url_host(args.host)}:{args.broker_metrics_port}"}
    if args.advertised_host:
        props["advertised.listeners"] = f"PLAINTEXT://{args.advertised_host}:{args.broker_port}"
    return props


def _registry_defaults(args: argparse.Namespace, bootstrap: str, security: dict[str, str]) -> dict[str, str]:
    props = {"listeners": f"http://{args.host}:{args.registry_port}", "kafkastore.bootstrap.servers": bootstrap,
             "kafkastore.topic.replication.factor": "1", **{f"kafkastore.{k}": v for k, v in security.items()}}
    if args.advertised_host:
        props["host.name"] = args.advertised_host
    return props


def _worker_defaults(args: argparse.Namespace, bootstrap: str, registry_url: str | None,
                     security: dict[str, str]) -> dict[str, str]:
    """A Connect cluster of one on the embedded broker (Kafka's connect-distributed.properties names).

    With a registry, values default to Avro through it (Confluent's usual setup) and keys to
    strings; without one, both default to JSON with schemas (an https registry is verified with
    ``--ca-file``). ``security``: the client security settings, for the worker's own clients
    and (Kafka's rule) again for its tasks' clients.
    """
    props = {
        "bootstrap.servers": bootstrap,
        "listeners": f"http://{args.host}:{args.rest_port}",
        "group.id": "connect-cluster",
        "config.storage.topic": "connect-configs",
        "offset.storage.topic": "connect-offsets",
        "status.storage.topic": "connect-status",
        "config.storage.replication.factor": "1",
        "offset.storage.replication.factor": "1",
        "status.storage.replication.factor": "1",
        "offset.flush.interval.ms": "10000",
    }
    for prefix in ("", "producer.", "consumer."):
        props.update({prefix + k: v for k, v in security.items()})
    if args.advertised_host:
        props["rest.advertised.host.name"] = args.advertised_host
    if registry_url:
        props.update({"key.converter": "org.apache.kafka.connect.storage.StringConverter",
                      "value.converter": "io.confluent.connect.avro.AvroConverter",
                      "value.converter.schema.registry.url": registry_url})
        if registry_url.startswith("https:") and args.ca_file is not None:  # the converter verifies it too
            props.update({"value.converter.schema.registry.ssl.truststore.type": "PEM",
                          "value.converter.schema.registry.ssl.truststore.location": str(args.ca_file.resolve())})
    else:
        props.update({"key.converter": "org.apache.kafka.connect.json.JsonConverter",
                      "value.converter": "org.apache.kafka.connect.json.JsonConverter"})
    return props


def parse_overrides(items: Sequence[str]) -> dict[str, dict[str, str]]:
    """``--override component.key=value`` items by component (broker, registry or worker)."""
    out: dict[str, dict[str, str]] = {c: {} for c in COMPONENTS}
    for item in items:
        target, sep, value = item.partition("=")
        component, dot, key = target.strip().partition(".")
        if not sep or not dot or not key:
            raise CliError(f"--override expects component.key=value, got {shown(item)}")
        if component not in out:
            raise CliError(f"--override {shown(item)}: the component must be one of {', '.join(COMPONENTS)}, "
                           f"not {shown(component)}")
        out[component][key] = value.strip()
    return out


def _template(component: str, defaults: dict[str, str], data: Path) -> str:
    lines = [
        f"# Your settings for the {component} that `seaway up` runs ({_NAMES[component]} property names).",
        "# `seaway up` wrote this file because it was missing and never changes it afterwards.",
        "# At each start the settings are, later winning: the defaults `seaway up` derives from its",
        f"# options, this file, then `--override {component}.KEY=VALUE`. The merged settings are in",
        f"# {data / 'run' / (component + '.properties')}.",
        "#",
        "# The defaults when this file was written (uncomment a line to change it):",
        *(f"# {key}={value}" for key, value in defaults.items()),
        "",
    ]
    return "\n".join(lines)


def _user_config(component: str, given: Path | None, data: Path, defaults: dict[str, str]) -> dict[str, str]:
    """The user's file for ``component``: the one given, else ``<data>/config/<component>.properties``.

    The data directory's file is created (comments only) when absent and otherwise only read.
    """
    path = given
    if path is None:
        path = data / "config" / f"{component}.properties"
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(_template(component, defaults, data), encoding="utf-8")
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise CliError(f"{_CONFIG_FLAG[component]} {path}: {exc.strerror or exc}") from None
    try:
        return parse_properties(text)
    except CliError as exc:
        raise CliError(f"{path}: {exc}") from None


def _effective(component: str, args: argparse.Namespace, data: Path, defaults: dict[str, str],
               overrides: dict[str, dict[str, str]]) -> Path:
    """Merge defaults < file < overrides and write the result to ``<data>/run/<component>.properties``."""
    given: Path | None = getattr(args, component + "_config")
    props = {**defaults, **_user_config(component, given, data, defaults), **overrides[component]}
    run = data / "run"
    run.mkdir(parents=True, exist_ok=True)
    path = run / f"{component}.properties"
    source = str(given) if given is not None else str(data / "config" / f"{component}.properties")
    header = [f"Written by `seaway up` at each start from its defaults, {source} and --override {component}.*;",
              f"edit {source} instead of this file."]
    path.write_text(format_properties(props, header), encoding="utf-8")
    return path


def _read(path: Path) -> dict[str, str]:
    return parse_properties(path.read_text(encoding="utf-8"))


def _python(*args: str) -> list[str]:
    # -P: the working directory is not put on sys.path (nothing is imported from wherever up was run)
    return [sys.executable, "-P", "-m", "seaway.cli.main", *args]


def _client_security(args: argparse.Namespace) -> dict[str, str]:
    """The security settings of ``--client-config`` (checked now, so a bad one is one line)."""
    if args.client_config is None:
        return {}
    from seaway.security.kafka_client import ClientConfigError, is_security_key, librdkafka_config

    try:
        props = parse_properties(args.client_config.read_text(encoding="utf-8"))
    except OSError as exc:
        raise CliError(f"--client-config {args.client_config}: {exc.strerror or exc}") from None
    security = {k: v.strip() for k, v in props.items() if is_security_key(k)}
    try:
        librdkafka_config(security)
    except ClientConfigError as exc:
        raise CliError(f"--client-config {args.client_config}: {exc}") from None
    return security


def _scheme(listeners: str) -> str:
    return "https" if listeners.split(",")[0].strip().lower().startswith("https://") else "http"


def plan(args: argparse.Namespace) -> list[Part]:
    """The parts to start, in order, from the command line and the config files."""
    data: Path = args.data_dir.resolve()
    overrides = parse_overrides(args.override)
    security = _client_security(args)
    verify: Any = True
    if args.ca_file is not None:
        import ssl

        try:
            verify = ssl.create_default_context(cafile=str(args.ca_file))
        except (OSError, ssl.SSLError) as exc:
            raise CliError(f"--ca-file {args.ca_file}: {getattr(exc, 'strerror', None) or exc}") from None
    broker_file = _effective("broker", args, data, _broker_defaults(args, data), overrides)
    broker_props = _read(broker_file)
    broker_listeners = endpoints(broker_props.get("listeners", "PLAINTEXT://:9092"))
    if not broker_listeners:
        raise CliError(f"the broker has no listener with a port (listeners in {broker_file})")
    metrics_listener = endpoints(broker_props.get("metrics.listener", ""))[:1]  # its port is checked too
    # the parts reach each other on loopback when a server listens on every interface
    bootstrap_host, bootstrap_port = broker_listeners[0]
    bootstrap = f"{local_address(bootstrap_host)}:{bootstrap_port}"
    parts = [Part("broker", _python("broker", "--config", str(broker_file)), bootstrap,
                  _broker_ok(bootstrap, security), broker_listeners + metrics_listener, _READY["broker"])]
    registry_url: str | None = None
    if not args.no_registry:
        registry_file = _effective("registry", args, data, _registry_defaults(args, bootstrap, security), overrides)
        registry_listeners = _read(registry_file).get("listeners", "http://127.0.0.1:8081")
        listeners = endpoints(registry_listeners)[:1]
        if not listeners:
            raise CliError(f"the registry has no listener with a port (listeners in {registry_file})")
        registry_url = (f"{_scheme(registry_listeners)}://{_url_host(local_address(listeners[0][0]))}:"
                        f"{listeners[0][1]}")
        parts.append(Part("registry", _python("registry", "--config", str(registry_file)), registry_url,
                          _http_ok(registry_url + "/", verify), listeners, _READY["registry"],
                          registry_url + "/metrics"))
    if not args.no_connect:
        worker_file = _effective("worker", args, data, _worker_defaults(args, bootstrap, registry_url, security),
                                 overrides)
        worker_listeners = _read(worker_file).get("listeners", "http://:8083")
        listeners = endpoints(worker_listeners)[:1]
        if not listeners:
            raise CliError(f"the worker has no listener with a port (listeners in {worker_file})")
        url = f"{_scheme(worker_listeners)}://{_url_host(local_address(listeners[0][0]))}:{listeners[0][1]}"
        parts.append(Part("connect", _python("connect", "distributed", str(worker_file)), url,
                          _http_ok(url + "/health", verify), listeners, _READY["connect"], url + "/metrics"))
    if not args.no_console:
        parts.append(_console_part(args, bootstrap, registry_url, parts[-1].address if not args.no_connect else None,
                                   metrics_listener))
    return parts


def _console_part(args: argparse.Namespace, bootstrap: str, registry_url: str | None, connect_url: str | None,
                  metrics_listener: list[tuple[str, int]]) -> Part:
    """``seaway console`` over the other parts (docs/console.md); its own process, supervised like them."""
    console_args = ["console", "--bootstrap-server", bootstrap, "--host", args.host, "--port", str(args.console_port),
                    "--schema-registry-url", registry_url or ""]
    console_args += ["--connect", f"connect={connect_url}"] if connect_url else ["--override", "connect.clusters="]
    if metrics_listener and metrics_listener[0][1]:  # port 0: only the broker's log knows it
        host, port = metrics_listener[0]
        console_args += ["--broker-metrics-url", f"http://{_url_host(local_address(host))}:{port}/metrics"]
    if args.client_config is not None:
        console_args += ["--command-config", str(args.client_config.resolve())]
    if args.ca_file is not None:
        ca = str(args.ca_file.resolve())
        for prefix in ("connect.connect.ssl.", "schema.registry.ssl."):
            console_args += ["--override", f"{prefix}truststore.type=PEM",
                             "--override", f"{prefix}truststore.location={ca}"]
    url = f"http://{_url_host(local_address(args.host))}:{args.console_port}"
    return Part("console", _python(*console_args), url, _http_ok(url + "/healthz"), [(args.host, args.console_port)],
                _READY["console"])


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="seaway up", description="Start a broker, a schema registry and a Connect worker (distributed mode, "
        "a cluster of one) on one data directory, and supervise them until Ctrl-C.",
        epilog="Settings, later winning: up's defaults, the part's config file, --override. "
        "The files up writes into DIR/config/ when missing are never overwritten.")
    p.add_argument("--data-dir", type=Path, default=Path("seaway-data"), metavar="DIR",
                   help="where every part keeps its data, config and logs (default ./seaway-data)")
    p.add_argument("--host", default="127.0.0.1", help="interface to listen on (default 127.0.0.1)")
    p.add_argument("--advertised-host", metavar="HOST",
                   help="the name clients use to reach this machine, given to them in the broker's metadata "
                   "(advertised.listeners) and the worker's REST identity (rest.advertised.host.name); "
                   "default: --host, or this machine's name when --host is 0.0.0.0")
    p.add_argument("--broker-port", type=int, default=9092)
    p.add_argument("--rest-port", type=int, default=8083, help="the Connect worker's REST API")
    p.add_argument("--registry-port", type=int, default=8081)
    p.add_argument("--broker-metrics-port", type=int, default=9308,
                   help="the broker's Prometheus /metrics listener (metrics.listener; default 9308, 0: any free "
                   "port); the registry and the worker serve /metrics on their own ports")
    p.add_argument("--broker-config", type=Path, metavar="FILE",
                   help="the broker's server.properties (default DIR/config/broker.properties)")
    p.add_argument("--registry-config", type=Path, metavar="FILE",
                   help="the registry's schema-registry.properties (default DIR/config/registry.properties)")
    p.add_argument("--worker-config", type=Path, metavar="FILE",
                   help="the Connect worker's connect-distributed.properties (default DIR/config/worker.properties)")
    p.add_argument("--override", action="append", default=[], metavar="COMPONENT.KEY=VALUE",
                   help="set one property of broker, registry or worker, e.g. --override "
                   "worker.offset.flush.interval.ms=5000 (repeatable; wins over the files)")
    p.add_argument("--client-config", type=Path, metavar="FILE",
                   help="Kafka client security settings (security.protocol, sasl.*, ssl.*) to reach a secured "
                   "broker with: up's own checks, and defaults for the registry's and the worker's clients")
    p.add_argument("--ca-file", type=Path, metavar="FILE",
                   help="PEM CA certificate(s) verifying an https registry or worker, for up's checks and the "
                   "worker's AvroConverter (default: the system's)")
    p.add_argument("--no-registry", action="store_true", help="do not start the schema registry")
    p.add_argument("--no-connect", action="store_true", help="do not start a Connect worker")
    p.add_argument("--console-port", type=int, default=8080, help="the web console (docs/console.md; default 8080)")
    p.add_argument("--no-console", action="store_true", help="do not start the web console")
    p.add_argument("--startup-timeout", type=float, default=60.0, metavar="SECONDS",
                   help="how long each part may take to become healthy (default 60)")
    add_log_format_argument(p)  # reaches the parts through $SEAWAY_LOG_FORMAT
    return p


def _stop_all(parts: Sequence[Part]) -> None:
    for part in reversed(parts):
        part.stop()


def _say(message: str) -> None:
    print(f"seaway up: {message}", flush=True)


def _taken_port(parts: Sequence[Part]) -> str | None:
    """Why ``up`` cannot start: the first part whose port another process holds, or None."""
    for part in parts:
        found = first_taken(part.listeners)
        if found is not None:
            return f"cannot start the {_LABEL.get(part.name, part.name)}: {describe(*found)}"
    return None


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    os.environ[LOG_FORMAT_ENV] = args.log_format
    try:
        parts = plan(args)
    except CliError as exc:
        _say(f"error: {exc}")
        return 2
    problem = _taken_port(parts)
    if problem is not None:
        _say(f"{problem}; stop it or choose other ports (--broker-port, --broker-metrics-port, "
             "--registry-port, --rest-port, --console-port)")
        return 1
    logs = args.data_dir.resolve() / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    stopping = threading.Event()

    def on_signal(signum: int, _: object) -> None:
        stopping.set()

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    started: list[Part] = []
    try:
        for part in parts:
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
        width = max(width, len("metrics"))
        for part in started:
            pid = part.proc.pid if part.proc else "?"
            print(f"{part.name.ljust(width)}  {part.address}  (pid {pid})", flush=True)
        for part in started:
            url = part.metrics_url()
            if url is not None:
                print(f"{'metrics'.ljust(width)}  {url}  ({part.name})", flush=True)
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
