"""``seaway console``: the web console against any Kafka cluster, Connect clusters and schema registry.

::

    seaway console                                         # localhost:9092, :8083, :8081; serves :8080
    seaway console --bootstrap-server b:9092 --connect http://w1:8083 --connect dr=http://w9:8083 \\
                   --schema-registry-url http://r:8081 --broker-metrics-url http://b:9308/metrics
    seaway console --config console.properties --override read.only=true

Settings (:mod:`seaway.console.settings`): the ``--config`` file, then the flags, then
``--override key=value``. It prints ``seaway console ready on <url>`` once it serves, binds
127.0.0.1 unless told otherwise (``--host``), and stops cleanly (exit 0) on SIGTERM or Ctrl-C.
A setting it cannot use, or a port that is taken, is one line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import signal
import socket
import sys
from pathlib import Path

from seaway.console.settings import ConsoleSettings, SettingsError, parse_settings
from seaway.log_setup import add_log_format_argument, configure_logging
from seaway.properties import PropertiesError, load_properties

__all__ = ["READY", "main", "settings_from_args"]

READY = "seaway console ready on "


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="seaway console", description="The web console: connectors, topics and messages, consumer groups and "
        "their lag, schemas and health, in the browser.",
        epilog="Settings, later winning: --config FILE, the flags, --override KEY=VALUE (docs/console.md).")
    p.add_argument("--config", type=Path, metavar="FILE", help="console .properties (see docs/console.md)")
    p.add_argument("--bootstrap-server", metavar="HOST:PORT", help="the Kafka cluster (default localhost:9092)")
    p.add_argument("--command-config", type=Path, metavar="FILE",
                   help="Kafka client settings (security.protocol, sasl.*, ssl.*) and the registry client's, as for "
                   "the other commands")
    p.add_argument("--connect", action="append", default=[], metavar="[NAME=]URL",
                   help="a Connect cluster's REST URL (repeatable; default http://localhost:8083 named connect)")
    p.add_argument("--schema-registry-url", metavar="URL", help="the schema registry (default http://localhost:8081; "
                   "'' for none)")
    p.add_argument("--broker-metrics-url", action="append", default=[], metavar="URL",
                   help="a broker's Prometheus /metrics (repeatable): sizes, throughput, lag statuses")
    p.add_argument("--host", help="interface to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, help="port to listen on (default 8080; 0: any free port)")
    p.add_argument("--read-only", action="store_true", help="show everything, change nothing")
    p.add_argument("--override", action="append", default=[], metavar="KEY=VALUE", help="set one console setting")
    p.add_argument("--log-level", default="WARNING", help="log level (default WARNING)")
    add_log_format_argument(p)
    return p


def _read(path: Path, flag: str) -> dict[str, str]:
    try:
        return load_properties(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise SettingsError(f"{flag} {path}: {exc.strerror or exc}") from None
    except PropertiesError as exc:
        raise SettingsError(f"{flag} {path}: {exc}") from None


def settings_from_args(args: argparse.Namespace) -> ConsoleSettings:
    """File < flags < overrides, parsed; SettingsError naming what is wrong."""
    props: dict[str, str] = {"connect.connect.url": "http://localhost:8083",
                             "schema.registry.url": "http://localhost:8081"}
    if args.command_config is not None:
        props.update(_read(args.command_config, "--command-config"))
    if args.config is not None:
        props.update(_read(args.config, "--config"))
    if args.bootstrap_server:
        props["bootstrap.servers"] = args.bootstrap_server
    if args.connect:
        for key in [k for k in props if k.startswith("connect.") and k.endswith(".url")]:
            del props[key]
        names: list[str] = []
        for item in args.connect:
            name, sep, url = item.partition("=")
            if not sep or "://" in name:
                name, url = "connect" if not names else f"connect{len(names) + 1}", item
            names.append(name.strip())
            props[f"connect.{name.strip()}.url"] = url.strip()
        props["connect.clusters"] = ",".join(names)
    if args.schema_registry_url is not None:
        props["schema.registry.url"] = args.schema_registry_url
    if args.broker_metrics_url:
        props["metrics.urls"] = ",".join(args.broker_metrics_url)
    if args.host is not None or args.port is not None:
        current = props.get("listeners", "http://127.0.0.1:8080")
        scheme = "https" if current.startswith("https") else "http"
        from urllib.parse import urlsplit

        parts = urlsplit(current)
        host = args.host if args.host is not None else (parts.hostname or "127.0.0.1")
        port = args.port if args.port is not None else (parts.port or 8080)
        props["listeners"] = f"{scheme}://{'[' + host + ']' if ':' in host else host}:{port}"
    if args.read_only:
        props["read.only"] = "true"
    for item in args.override:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise SettingsError(f"--override expects key=value, got {item!r}")
        props[key.strip()] = value.strip()
    return parse_settings(props)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        configure_logging(args.log_level, args.log_format)
        settings = settings_from_args(args)
    except (SettingsError, ValueError) as exc:
        print(f"seaway console: {exc}", file=sys.stderr)
        return 2
    family = socket.AF_INET6 if ":" in settings.host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((settings.host, settings.port))
    except OSError as exc:
        from seaway.cli.ports import describe

        sock.close()
        print(f"seaway console: {describe((settings.host, settings.port), exc)}", file=sys.stderr)
        return 2
    try:
        return _serve(settings, sock)
    finally:
        sock.close()


def _serve(settings: ConsoleSettings, sock: socket.socket) -> int:
    import uvicorn
    from seaway.console.app import create_app

    port = sock.getsockname()[1]
    host = f"[{settings.host}]" if ":" in settings.host else settings.host
    url = f"{'https' if settings.https else 'http'}://{host}:{port}"

    class _Server(uvicorn.Server):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets)
            if not self.should_exit:
                print(f"{READY}{url}", flush=True)

    config = uvicorn.Config(create_app(settings), log_level="warning", ws="none", lifespan="on", access_log=False,
                            ssl_certfile=settings.tls_cert, ssl_keyfile=settings.tls_key, timeout_keep_alive=30)
    server = _Server(config)
    for sig in (signal.SIGTERM, signal.SIGINT):  # uvicorn stops gracefully; exit 0, not by the signal
        signal.signal(sig, lambda *_: None)
    server.run(sockets=[sock])
    return 0


if __name__ == "__main__":
    sys.exit(main())
