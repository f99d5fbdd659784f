"""The ``seaway`` command: one entry point, a subcommand per process or tool.

Subcommands are resolved lazily so ``seaway topics list`` does not import the broker,
and the broker is started as its own module (``seaway.broker``): nothing but this
composition root refers to it.

Failures every subcommand shares end here as one line, never a traceback: a server that
cannot listen (its port taken), and a reader that went away (``seaway consume ... | head -1``:
the rest of the output is dropped quietly, as Unix tools do).
"""

from __future__ import annotations

import importlib
import json
import os
import sys
from importlib.metadata import PackageNotFoundError, version

__all__ = ["main"]

# subcommand -> (module with a main(argv) -> int, one-line help)
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "broker": ("seaway.broker.cli", "run the Kafka-protocol broker"),
    "storage": ("seaway.broker.storage_cli", "format a broker's directories with its first SCRAM users "
                "(kafka-storage.sh format --add-scram)"),
    "registry": ("seaway.cli.registry", "run the Avro schema registry (Confluent-compatible)"),
    "topics": ("seaway.cli.topics", "create, list, describe, delete, alter-config topics"),
    "groups": ("seaway.cli.groups", "list, describe (lag and its status), reset offsets of, delete consumer groups"),
    "users": ("seaway.cli.users", "list, describe, add, delete SCRAM users (SASL/SCRAM credentials)"),
    "produce": ("seaway.cli.console", "produce lines from stdin to a topic"),
    "consume": ("seaway.cli.console", "print a topic's records"),
    "connect": ("seaway.cli.connect", "run a Kafka Connect worker (standalone or distributed)"),
    "connectors": ("seaway.cli.connectors", "manage connectors through a Connect worker's REST API"),
    "mirror": ("seaway.cli.mirror", "run MirrorMaker 2 between Kafka clusters (dedicated mode, mm2.properties)"),
    "up": ("seaway.cli.up", "start a broker, schema registry, Connect worker and web console under one data directory"),
    "console": ("seaway.console.cli", "run the web console (connectors, topics and messages, groups and lag, schemas)"),
    "lake": ("seaway.connectors.lake_tables.cli", "compact and expire the Iceberg and Delta tables the table sinks "
             "write (seaway-connector-lake-tables)"),
}


def _usage() -> str:
    width = max(len(n) for n in SUBCOMMANDS)
    lines = ["usage: seaway <command> [options]", "", "commands:"]
    lines += [f"  {name.ljust(width)}  {help_}" for name, (_, help_) in SUBCOMMANDS.items()]
    lines += ["", "Run 'seaway <command> --help' for a command's options, 'seaway --version' for the version."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    if argv is None:  # a process entry (console script, python -m): never import from the working directory
        from seaway.connect.runtime.safe_path import drop_working_directory

        drop_working_directory()
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help", "help"):
        print(_usage())
        return 0
    if args[0] in ("-V", "--version", "version"):
        print(f"seaway {_version()}")
        return 0
    name, rest = args[0], args[1:]
    entry = SUBCOMMANDS.get(name)
    if entry is None:
        print(f"seaway: unknown command {json.dumps(name)}\n\n{_usage()}", file=sys.stderr)
        return 2
    try:
        module = importlib.import_module(entry[0])
        code = int(module.main([name, *rest]) if entry[0] == "seaway.cli.console" else module.main(rest))
        sys.stdout.flush()  # here, where a reader that went away is handled, not at interpreter exit
        return code
    except BrokenPipeError:
        # stdout's reader is gone: point stdout at /dev/null so the interpreter's final flush
        # does not raise again, and exit as a process killed by SIGPIPE would report (128 + 13)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except OSError as exc:
        from seaway.cli.ports import bind_error

        if not bind_error(exc):
            raise
        print(f"seaway {name}: cannot listen: {exc}", file=sys.stderr)
        return 1


def _version() -> str:
    try:
        return version("seaway")
    except PackageNotFoundError:  # running from a source tree that is not installed
        return "unknown (not installed)"


if __name__ == "__main__":
    sys.exit(main())
