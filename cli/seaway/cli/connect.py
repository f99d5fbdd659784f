"""``seaway connect``: run a Kafka Connect worker.

    seaway connect standalone worker.properties [connector1.properties|connector1.json ...]

as Kafka's ``connect-standalone.sh``: the worker config is a ``.properties`` file (it needs
``bootstrap.servers``, ``key.converter``, ``value.converter`` and
``offset.storage.file.filename``); each connector file is a ``.properties`` file or a JSON
file holding either a flat ``{"name": ..., "connector.class": ...}`` object or a create
request ``{"name": ..., "config": {...}, "initial_state": "PAUSED"}``. The REST API is served
on ``listeners`` (default ``http://:8083``). Ctrl-C / SIGTERM stops every connector, commits
offsets and exits 0.

    seaway connect distributed worker.properties

runs one worker of a Connect cluster (see ``seaway.connect.runtime.distributed``), as Kafka's
``connect-distributed.sh``: the file needs ``bootstrap.servers``, ``group.id``, the three
storage topics and the converters, and every setting may also come from ``CONNECT_*``
environment variables, which override the file (the file is then optional). The REST API
(public routes plus the internal one workers use) is served on the first of ``listeners``;
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
from urllib.parse import urlsplit

from seaway.errors import SeawayError

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
    distributed = sub.add_parser("distributed", help="one worker of a cluster; state in Kafka topics")
    distributed.add_argument("worker_properties", type=Path, nargs="?")
    distributed.add_argument("--log-level", default="INFO")
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
        app = _rest_app(herder)
        server = None if app is None else _rest_server(app, config.get("listeners"))
        if server is not None:
            serving = asyncio.create_task(server.serve())
            await stop.wait()
            server.should_exit = True
            await serving
        else:
            await stop.wait()
    finally:
        await herder.stop()
    return 0


async def _run_distributed(worker_file: Path | None) -> int:
    """One worker of a Connect cluster: the herder, and the REST API with the internal endpoint."""
    import os

    from seaway.connect.rest.app import create_app
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
    app = create_app(herder)
    app.include_router(router)
    server = _rest_server(app, config.get("listeners"))
    serving = asyncio.create_task(server.serve())
    try:
        await herder.start()
        while not server.started and not serving.done():
            await asyncio.sleep(0.02)
        print(READY + herder.url, flush=True)
        await stop.wait()
    finally:
        server.should_exit = True  # as Kafka's Connect.stop: the REST server first, then the herder
        try:
            await serving
        finally:
            await herder.stop()
    return 0


def _rest_app(herder: Any) -> Any:
    """The standalone worker's REST app, or None (logged) if ``seaway.connect.rest`` is absent."""
    try:
        app_module = importlib.import_module("seaway.connect.rest.app")
    except ImportError as e:
        log.warning("REST API not available (%s); running without it", e)
        return None
    return app_module.create_app(herder)


def _rest_server(app: Any, listeners: list[str]) -> Any:
    """A uvicorn server for ``app`` on the first of ``listeners``, leaving the signals to us."""
    import uvicorn

    class _Server(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            yield  # our own SIGINT/SIGTERM handlers stop the worker and then the REST server

    url = urlsplit(listeners[0] if listeners else "http://:8083")
    return _Server(uvicorn.Config(app, host=url.hostname or "0.0.0.0", port=url.port if url.port is not None else 8083,
                                  log_level="warning", lifespan="off"))


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
    listeners = props.get("listeners", "http://:8083")
    if args.mode == "distributed":
        listeners = os.environ.get("CONNECT_LISTENERS", listeners)
    first = endpoints(listeners)[:1]  # the REST API is served on the first listener
    found = first_taken(first)
    return None if found is None else f"listeners={listeners}: {describe(*found)}"


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(),
                        format="[%(asctime)s] %(levelname)s %(message)s (%(name)s)")
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
