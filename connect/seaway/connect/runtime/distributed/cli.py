"""``seaway connect distributed worker.properties``: run one worker of a Connect cluster.

As Kafka's ``connect-distributed.sh``: the properties file (overridden by ``CONNECT_*``
environment variables) needs ``bootstrap.servers``, ``group.id``, the three storage topics and
the converters. The REST API (public routes plus the internal one) is served on the first of
``listeners``. SIGINT/SIGTERM: tasks commit offsets and stop, the worker leaves the group,
exit 0. The process prints ``seaway connect worker ready on <url>`` once it serves.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

__all__ = ["READY", "main", "run_distributed"]

log = logging.getLogger("seaway.connect")
READY = "seaway connect worker ready on "


async def run_distributed(worker_file: Path | None) -> int:
    import uvicorn
    from seaway.connect.rest.app import create_app
    from seaway.connect.runtime.config_providers import read_properties
    from seaway.connect.runtime.distributed.config import DistributedConfig
    from seaway.connect.runtime.distributed.herder import DistributedHerder
    from seaway.connect.runtime.distributed.internal_rest import router
    from seaway.connect.runtime.plugins import Plugins

    props = read_properties(worker_file.read_text(encoding="utf-8")) if worker_file is not None else {}
    plugins = Plugins()
    config = DistributedConfig.from_sources(props, os.environ, plugins)
    herder = DistributedHerder(config, plugins=plugins)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    app = create_app(herder)
    app.include_router(router)
    listener = urlsplit((config.get("listeners") or ["http://:8083"])[0])
    server: Any = uvicorn.Server(uvicorn.Config(app, host=listener.hostname or "0.0.0.0", port=listener.port or 8083,
                                                log_level="warning", lifespan="off"))
    server.install_signal_handlers = lambda: None
    serving = asyncio.create_task(server.serve())
    try:
        await herder.start()
        while not server.started and not serving.done():
            await asyncio.sleep(0.02)
        print(READY + herder.url, flush=True)
        await stop.wait()
    finally:
        await herder.stop()
        server.should_exit = True
        await serving
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m seaway.connect.runtime.distributed.cli [worker.properties] [--log-level L]``."""
    import argparse

    from seaway.connect.runtime.safe_path import drop_working_directory

    drop_working_directory()
    parser = argparse.ArgumentParser(prog="seaway connect distributed")
    parser.add_argument("worker_properties", type=Path, nargs="?")
    parser.add_argument("--log-level", default="INFO")
    args = parser.parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), format="[%(asctime)s] %(levelname)s %(message)s (%(name)s)")
    return asyncio.run(run_distributed(args.worker_properties))


if __name__ == "__main__":
    raise SystemExit(main())
