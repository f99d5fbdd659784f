"""The ``seaway`` command: one entry point, a subcommand per process or tool.

Subcommands are resolved lazily so ``seaway topics list`` does not import the broker,
and the broker is started as its own module (``seaway.broker``): nothing but this
composition root refers to it.
"""

from __future__ import annotations

import importlib
import sys

__all__ = ["main"]

# subcommand -> (module with a main(argv) -> int, one-line help)
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "broker": ("seaway.broker.cli", "run the Kafka-protocol broker"),
    "registry": ("seaway.cli.registry", "run the Avro schema registry (Confluent-compatible)"),
    "topics": ("seaway.cli.topics", "create, list, describe, delete, alter-config topics"),
    "produce": ("seaway.cli.console", "produce lines from stdin to a topic"),
    "consume": ("seaway.cli.console", "print a topic's records"),
    "connect": ("seaway.cli.connect", "run a Kafka Connect worker (standalone or distributed)"),
    "connectors": ("seaway.cli.connectors", "manage connectors through a Connect worker's REST API"),
    "up": ("seaway.cli.up", "start a broker, schema registry and Connect worker under one data directory"),
}


def _usage() -> str:
    width = max(len(n) for n in SUBCOMMANDS)
    lines = ["usage: seaway <command> [options]", "", "commands:"]
    lines += [f"  {name.ljust(width)}  {help_}" for name, (_, help_) in SUBCOMMANDS.items()]
    lines += ["", "Run 'seaway <command> --help' for a command's options."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help", "help"):
        print(_usage())
        return 0
    name, rest = args[0], args[1:]
    entry = SUBCOMMANDS.get(name)
    if entry is None:
        print(f"seaway: unknown command {name!r}\n\n{_usage()}", file=sys.stderr)
        return 2
    module = importlib.import_module(entry[0])
    if entry[0] == "seaway.cli.console":
        return int(module.main([name, *rest]))
    return int(module.main(rest))


if __name__ == "__main__":
    sys.exit(main())
