"""``seaway mirror``: MirrorMaker 2's dedicated mode (Kafka's ``connect-mirror-maker.sh``).

    seaway mirror mm2.properties [--clusters B [C ...]]

reads Kafka's ``connect-mirror-maker.properties`` format unchanged (``clusters = A, B``,
``A.bootstrap.servers``, ``A->B.enabled``, ``A->B.topics``...; see
:mod:`seaway.connectors.mirror.maker_config`) and, for every flow whose target is one of
``--clusters`` (default: all), runs a Connect worker in this process bound to that target
cluster, in the group ``<source>-mm2``. Whenever a worker becomes its group's leader it writes
the three connectors' configs (``MirrorSourceConnector``, ``MirrorHeartbeatConnector``,
``MirrorCheckpointConnector``) to its config topic if they changed, as Kafka's ``MirrorHerder``
does; so editing the file and restarting is how a running mirror is reconfigured.

Like Kafka's dedicated mode it serves no REST API. Several ``seaway mirror`` processes for the
same target share the work only with the internal REST server
(``dedicated.mode.enable.internal.rest``), which is not supported yet: run one per target.
Once every worker joined its group the process prints ``seaway mirror ready: A->B, B->A``;
SIGINT/SIGTERM stops the workers (tasks commit their offsets) and exits 0.

Needs the ``seaway-connector-mirror`` distribution (``pip install -e connectors/mirror``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import signal
import socket
import sys
from pathlib import Path
from typing import Any

from seaway.errors import SeawayError
from seaway.log_setup import add_log_format_argument, configure_logging

__all__ = ["READY", "main"]

log = logging.getLogger("seaway.mirror")
READY = "seaway mirror ready: "
_LEADER_CHECK_S = 0.5


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="seaway mirror", description="MirrorMaker 2 dedicated mode.")
    parser.add_argument("config", type=Path, metavar="mm2.properties", help="MM2 configuration file.")
    parser.add_argument("--clusters", nargs="+", metavar="CLUSTER", help="Target cluster(s) to use for this node.")
    parser.add_argument("--log-level", default="INFO")
    add_log_format_argument(parser)
    return parser


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class _Flow:
    """One flow's worker (a distributed herder) and the loop that configures its connectors when it leads."""

    def __init__(self, pair: Any, config: Any) -> None:
        from seaway.connect.runtime.distributed.config import DistributedConfig
        from seaway.connect.runtime.distributed.herder import DistributedHerder
        from seaway.connect.runtime.plugins import Plugins

        self.pair = pair
        self.config = config
        props = config.worker_config(pair)
        # no REST server is served: the URL only names this worker in its group (a free port keeps it unique)
        props.setdefault("listeners", f"http://127.0.0.1:{_free_port()}")
        plugins = Plugins()
        self.herder = DistributedHerder(DistributedConfig(props, plugins), plugins=plugins)

    async def configure_while_running(self, stop: asyncio.Event) -> None:
        """Kafka's ``MirrorHerder.rebalanceSuccess``: on becoming leader, write configs that changed."""
        from seaway.connect.runtime.herder import BadRequestError, HerderError, NotFoundError, NotLeaderError
        from seaway.connectors.mirror.maker_config import CONNECTORS

        was_leader = False
        while not stop.is_set():
            leader = self.herder.membership.is_leader
            if leader and not was_leader:
                try:
                    for connector in CONNECTORS:
                        desired = self.config.connector_config(self.pair, connector)
                        try:
                            actual = await self.herder.connector_config(connector)
                        except NotFoundError:
                            actual = None
                        if actual == desired:
                            log.info("%s: configuration of %s is already up to date", self.pair, connector)
                            continue
                        await self.herder.put_connector_config(connector, desired, allow_replace=True)
                        log.info("%s connector configured for %s.", connector, self.pair)
                except NotLeaderError:
                    leader = False  # lost it meanwhile: try again when leading again
                except BadRequestError as e:
                    log.error("Failed to configure the connectors of %s: %s", self.pair, e)
                except HerderError as e:
                    log.warning("Could not configure the connectors of %s yet (%s); retrying", self.pair, e)
                    leader = False
            was_leader = leader
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), _LEADER_CHECK_S)


async def _run(config: Any, pairs: list[Any]) -> int:
    flows = [_Flow(pair, config) for pair in pairs]
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    started: list[_Flow] = []
    try:
        for flow in flows:
            log.info("creating herder for %s", flow.pair)
            await flow.herder.start()
            started.append(flow)
        watchers = [asyncio.create_task(flow.configure_while_running(stop)) for flow in flows]
        while not stop.is_set() and not all(f.herder.membership.assignment is not None for f in flows):
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), 0.1)
        if not stop.is_set():
            print(READY + ", ".join(str(f.pair) for f in flows), flush=True)
        await stop.wait()
        await asyncio.gather(*watchers, return_exceptions=True)
    finally:
        for flow in reversed(started):
            try:
                await flow.herder.stop()
            except Exception:
                log.exception("Error stopping the worker of %s", flow.pair)
    log.info("Kafka MirrorMaker stopped.")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    configure_logging(args.log_level, args.log_format)
    try:
        from seaway.connectors.mirror.maker_config import MirrorMakerConfig
    except ImportError:
        print("seaway mirror: needs the seaway-connector-mirror distribution (pip install -e connectors/mirror)",
              file=sys.stderr)
        return 1
    from seaway.properties import load_properties_file

    try:
        config = MirrorMakerConfig(load_properties_file(args.config))
    except (OSError, ValueError, SeawayError) as e:
        print(f"seaway mirror: {args.config}: {e}", file=sys.stderr)
        return 1
    targets = args.clusters or config.clusters
    unknown = [c for c in targets if c not in config.clusters]
    if unknown:
        print(f"seaway mirror: --clusters {' '.join(unknown)}: not in clusters = {', '.join(config.clusters)}",
              file=sys.stderr)
        return 1
    pairs = [p for p in config.cluster_pairs() if p.target in targets]
    if not pairs:
        print("seaway mirror: No source->target replication flows.", file=sys.stderr)
        return 1
    log.info("Targeting clusters %s", targets)
    try:
        return asyncio.run(_run(config, pairs))
    except SeawayError as e:
        print(f"seaway mirror: {e}", file=sys.stderr)
        return 1
    except Exception as e:  # a cluster that cannot be reached at start-up, ...: one line, the log has the rest
        log.error("Stopping after an error", exc_info=e)
        print(f"seaway mirror: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
