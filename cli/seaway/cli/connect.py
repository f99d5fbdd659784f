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

runs one worker of a Connect cluster (see ``seaway.connect.runtime.distributed``); every
setting may also come from ``CONNECT_*`` environment variables (the file is then optional).
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

__all__ = ["load_connector_file", "main"]

log = logging.getLogger("seaway.connect")


class _UsageError(Exception):
    pass


def load_connector_file(path: Path) -> tuple[str, dict[str, str], str | None]:
    """``(name, config, initial_state)`` from a connector ``.properties`` or ``.json`` file."""
    from seaway.connect.runtime.config_providers import read_properties

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
        config = read_properties(text)
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
    from seaway.connect.runtime.config_providers import read_properties
    from seaway.connect.runtime.herder import TargetState
    from seaway.connect.runtime.plugins import Plugins
    from seaway.connect.runtime.standalone import StandaloneHerder

    plugins = Plugins()
    config = StandaloneConfig(read_properties(worker_file.read_text(encoding="utf-8")), plugins)
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
        server = _rest_server(herder, config.get("listeners"))
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


def _rest_server(herder: Any, listeners: list[str]) -> Any:
    """A uvicorn server for the REST app, or None (logged) if ``seaway.connect.rest`` is absent."""
    try:
        app_module = importlib.import_module("seaway.connect.rest.app")
        import uvicorn
    except ImportError as e:
        log.warning("REST API not available (%s); running without it", e)
        return None
    class _Server(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            yield  # our own SIGINT/SIGTERM handlers stop the REST server and then the worker

    url = urlsplit(listeners[0] if listeners else "http://:8083")
    return _Server(uvicorn.Config(app_module.create_app(herder), host=url.hostname or "0.0.0.0",
                                  port=url.port if url.port is not None else 8083, log_level="warning",
                                  lifespan="off"))


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(),
                        format="[%(asctime)s] %(levelname)s %(message)s (%(name)s)")
    try:
        if args.mode == "distributed":
            from seaway.connect.runtime.distributed.cli import run_distributed

            return asyncio.run(run_distributed(args.worker_properties))
        return asyncio.run(_run_standalone(args.worker_properties, args.connectors))
    except _UsageError as e:
        print(f"Error: {e}", file=sys.stderr)
        return 1
    except Exception as e:
        log.error("Stopping after connector error", exc_info=e)
        print(f"Error: {e}", file=sys.stderr)
        return 1
