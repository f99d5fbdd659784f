"""``seaway connect``: run a Kafka Connect worker.

    seaway connect standalone worker.properties [connector1.properties|connector1.json ...]

as Kafka's ``connect-standalone.sh``: the worker config is a ``.properties`` file (it needs
``bootstrap.servers``, ``key.converter``, ``value.converter`` and
``offset.storage.file.filename``); each connector file is a ``.properties`` file or a JSON
file holding either a flat ``{"name": ..., "connector.class": ...}`` object or a create
request ``{"name": ..., "config": {...}, "initial_state": "PAUSED"}``. The REST API is served
on every one of ``listeners`` (default ``http://:8083``, which binds 127.0.0.1), HTTPS and HTTP
Basic authentication as configured (:mod:`seaway.connect.rest.security`), ``/admin/loggers``
on ``admin.listeners`` when set. Ctrl-C / SIGTERM stops every connector, commits offsets and
exits 0.

    seaway connect distributed worker.properties

runs one worker of a Connect cluster (see ``seaway.connect.runtime.distributed``), as Kafka's
``connect-distributed.sh``: the file needs ``bootstrap.servers``, ``group.id``, the three
storage topics and the converters, and every setting may also come from ``CONNECT_*``
environment variables, which override the file (the file is then optional). The REST API
(public routes plus the internal one workers use) is served on every one of ``listeners``;
once it serves, the process prints ``seaway connect worker ready on <url>``. SIGINT/SIGTERM:
tasks commit offsets and stop, the worker leaves the group, exit 0.

Both read ``.properties`` files exactly as Java's ``Properties.load`` does
(:mod:`seaway.properties`): a value keeps its trailing white space, and Connect's ConfigDef
trims what it parses, as Kafka's does. This module is the process entry: the runtime below it
never imports the REST layer.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib
import json
import logging
import signal
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from seaway.errors import SeawayError
from seaway.log_setup import add_log_format_argument, configure_logging

__all__ = ["READY", "load_connector_file", "main"]

log = logging.getLogger("seaway.connect")
READY = "seaway connect worker ready on "
"""What ``seaway connect distributed`` prints once its REST API serves (``seaway up`` waits for it)."""


class _UsageError(Exception):
    pass


def load_connector_file(path: Path) -> tuple[str, dict[str, str], str | None]:
    """``(name, config, initial_state)`` from a connector ``.properties`` or ``.json`` file."""
    from seaway.properties import load_properties

    text = path.read_text(encoding="utf-8")
    initial: str | None = None
    if path.suffix.lower() == ".json":
        doc = json.loads(text)
        if not isinstance(doc, dict):
            raise _UsageError(f"{path}: expected a JSON object")
        if isinstance(doc.get("config"), dict):
            config = {str(k): str(v) for k, v in doc["config"].items()}
            name = str(doc.get("name") or config.get("name") or "")
            initial = doc.get("initial_state")
        else:
            config = {str(k): str(v) for k, v in doc.items()}
            name = config.get("name", "")
    else:
        config = load_properties(text)
        name = config.get("name", "")
    if not name:
        raise _UsageError(f"{path}: the connector config has no 'name'")
    config.setdefault("name", name)
    return name, config, initial


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="seaway connect", description="Run a Kafka Connect worker.")
    sub = parser.add_subparsers(dest="mode", required=True)
    standalone = sub.add_parser("standalone", help="one worker; offsets in a local file")
    standalone.add_argument("worker_properties", type=Path)
    standalone.add_argument("connectors", type=Path, nargs="*")
    standalone.add_argument("--log-level", default="INFO")
    add_log_format_argument(standalone)
    distributed = sub.add_parser("distributed", help="one worker of a cluster; state in Kafka topics")
    distributed.add_argument("worker_properties", type=Path, nargs="?")
    distributed.add_argument("--log-level", default="INFO")
    add_log_format_argument(distributed)
    return parser


async def _run_standalone(worker_file: Path, connector_files: list[Path]) -> int:
    from seaway.connect.runtime.config import StandaloneConfig
    from seaway.connect.runtime.herder import TargetState
    from seaway.connect.runtime.plugins import Plugins
    from seaway.connect.runtime.standalone import StandaloneHerder
    from seaway.properties import load_properties_file

    plugins = Plugins()
    config = StandaloneConfig(load_properties_file(worker_file), plugins)
    connectors = [load_connector_file(p) for p in connector_files]
    herder = StandaloneHerder(config, plugins=plugins)
    await herder.start()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    server: Any = None
    try:
        for name, connector_config, initial in connectors:
            state = TargetState(initial.upper()) if initial else None
            created = await herder.put_connector_config(name, connector_config, allow_replace=False,
                                                        initial_state=state)
            log.info("Created connector %s", created.info.name)
        servers = _rest_servers(herder, config)
        if servers:
            serving = [asyncio.create_task(server.serve()) for server in servers]
            await stop.wait()
            for server in servers:
                server.should_exit = True
            await asyncio.gather(*serving)
        else:
            await stop.wait()
    finally:
        await herder.stop()
    return 0


async def _run_distributed(worker_file: Path | None) -> int:
    """One worker of a Connect cluster: the herder, and the REST API with the internal endpoint."""
    import os

    from seaway.connect.runtime.distributed.config import DistributedConfig
    from seaway.connect.runtime.distributed.herder import DistributedHerder
    from seaway.connect.runtime.distributed.internal_rest import router
    from seaway.connect.runtime.plugins import Plugins
    from seaway.properties import load_properties_file

    props = load_properties_file(worker_file) if worker_file is not None else {}
    plugins = Plugins()
    config = DistributedConfig.from_sources(props, os.environ, plugins)
    herder = DistributedHerder(config, plugins=plugins)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    servers = _rest_servers(herder, config, internal=router)
    serving = [asyncio.create_task(server.serve()) for server in servers]
    try:
        await herder.start()
        while not all(s.started for s in servers) and not any(t.done() for t in serving):
            await asyncio.sleep(0.02)
        for task in serving:  # a listener that could not start: its error, not a hang
            if task.done() and task.exception() is not None:
                raise task.exception()  # type: ignore[misc]
        print(READY + herder.url, flush=True)
        await stop.wait()
    finally:
        for server in servers:  # as Kafka's Connect.stop: the REST server first, then the herder
            server.should_exit = True
        try:
            await asyncio.gather(*serving, return_exceptions=True)
        finally:
            await herder.stop()
    return 0


def _rest_servers(herder: Any, config: Any, internal: Any = None) -> list[Any]:
    """One uvicorn server per REST listener (and per admin listener), leaving the signals to us.

    Empty (logged) if ``seaway.connect.rest`` is absent. Listeners, TLS and authentication are
    checked here, before the worker starts: a bad setting raises ConfigError naming it.
    """
    try:
        app_module = importlib.import_module("seaway.connect.rest.app")
        security_module = importlib.import_module("seaway.connect.rest.security")
    except ImportError as e:
        log.warning("REST API not available (%s); running without it", e)
        return []
    import os

    import uvicorn
    from seaway.http_timeouts import read_timeout_protocol

    class _Server(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            yield  # our own SIGINT/SIGTERM handlers stop the worker and then the REST server

    security = security_module.rest_security(config, os.environ)
    app = app_module.create_app(herder, admin_listeners_enabled=security.admin_listeners is None,
                                users=security.users, forward_ssl_context=security.client_ssl)
    if internal is not None:
        app.include_router(internal)
    served = [(app, listener, security.server_ssl) for listener in security.listeners]
    if security.admin_listeners:
        admin_app = app_module.create_admin_app(herder, users=security.users)
        served += [(admin_app, listener, security.admin_ssl) for listener in security.admin_listeners]
    servers = []
    protocol = read_timeout_protocol(config.rest.request_read_timeout_ms)  # slow senders: closed
    for served_app, listener, context in served:
        tls = context if listener.scheme == "https" else None
        servers.append(_Server(uvicorn.Config(
            served_app, host=listener.host, port=listener.port, log_level="warning", lifespan="off", http=protocol,
            ssl_context_factory=None if tls is None else _context_factory(tls))))
    return servers


def _context_factory(context: Any) -> Any:
    """uvicorn's ``ssl_context_factory`` giving our own, already loaded, SSLContext."""
    return lambda _config, _default: context


def _rest_listener_taken(args: argparse.Namespace) -> str | None:
    """Why the REST listener cannot be served (its port taken, ...), checked before the worker starts.

    uvicorn finds a taken port only after the worker has joined its cluster, and then exits
    from inside its startup task with a traceback; this says it in one line, first.
    """
    import os

    from seaway.cli.ports import describe, endpoints, first_taken
    from seaway.properties import load_properties_file

    props: dict[str, str] = {}
    path: Path | None = args.worker_properties
    if path is not None:
        try:
            props = load_properties_file(path)
        except (OSError, ValueError):  # UnicodeDecodeError and PropertiesError are ValueErrors
            return None  # the worker reports an unreadable file itself
    for key in ("listeners", "admin.listeners"):
        listeners = props.get(key, "http://:8083" if key == "listeners" else "")
        if args.mode == "distributed":
            listeners = os.environ.get("CONNECT_" + key.upper().replace(".", "_"), listeners)
        found = first_taken(endpoints(listeners))
        if found is not None:
            return f"{key}={listeners}: {describe(*found)}"
    return None


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    configure_logging(args.log_level, args.log_format)
    problem = _rest_listener_taken(args)
    if problem is not None:
        print(f"seaway connect: {problem}", file=sys.stderr)
        return 1
    try:
        if args.mode == "distributed":
            return asyncio.run(_run_distributed(args.worker_properties))
        return asyncio.run(_run_standalone(args.worker_properties, args.connectors))
    except _UsageError as e:
        print(f"Error: {e}", file=sys.stderr)
        return 1
    except SeawayError as e:  # a bad config or connector file: the message says what, a traceback adds nothing
        print(f"Error: {e}", file=sys.stderr)
        return 1
    except Exception as e:
        log.error("Stopping after connector error", exc_info=e)
        print(f"Error: {e}", file=sys.stderr)
        return 1
