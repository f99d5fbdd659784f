"""Command line of the broker process: ``seaway broker [--config F] [--override k=v]...``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from seaway.errors import SeawayError
from seaway.log_setup import add_log_format_argument, configure_logging

__all__ = ["main"]


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="seaway broker", description="Run Seaway's Kafka-protocol broker.")
    p.add_argument("--config", type=Path, help="a server.properties file (Kafka's names and defaults)")
    p.add_argument("--override", action="append", default=[], metavar="KEY=VALUE",
                   help="set a broker config, e.g. --override log.dirs=/var/lib/seaway (repeatable)")
    p.add_argument("--log-level", default="INFO")
    add_log_format_argument(p)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    configure_logging(args.log_level, args.log_format, text_format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    from seaway.broker.config import BrokerConfig
    from seaway.broker.server import run_broker

    overrides: dict[str, str] = {}
    for item in args.override:
        if "=" not in item:
            print(f"seaway broker: --override needs KEY=VALUE, got {item!r}", file=sys.stderr)
            return 2
        key, value = item.split("=", 1)
        overrides[key.strip()] = value
    try:
        config = BrokerConfig.load(args.config, overrides)
    except (SeawayError, OSError) as exc:
        print(f"seaway broker: {exc}", file=sys.stderr)
        return 2
    run_broker(config)
    return 0
