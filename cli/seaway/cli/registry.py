"""``seaway registry [--config schema-registry.properties] [--override k=v]...``: the schema registry.

Properties keep Confluent's names (``listeners``, ``kafkastore.bootstrap.servers``,
``kafkastore.topic``, ``schema.compatibility.level``, ``host.name``, ``leader.eligibility``,
``schema.registry.group.id``, ...); ``--override`` wins over the file, the file over
``SCHEMA_REGISTRY_*`` environment variables, those over the defaults.

The listener socket is bound before the app is built, so ``listeners=http://127.0.0.1:0``
works: the registry advertises (to the other instances, for forwarding) the port it really
got. ``listeners=https://...`` serves TLS with the ``ssl.*`` settings, and
``authentication.method=BASIC`` asks for credentials (:mod:`seaway.schema_registry.security`);
every security setting is loaded before the socket is bound, and one the registry cannot honour
stops it (exit status 2) with a line naming it. A listener without a host binds 127.0.0.1.
Once it accepts connections it prints ``seaway registry ready on <url>``. SIGTERM or SIGINT
stop it cleanly: in-flight requests finish, it leaves the leader-election group and
closes its Kafka clients.
"""

from __future__ import annotations

import argparse
import signal
import socket
import sys
from pathlib import Path
from typing import Any

from seaway.cli.topics import CliError, parse_properties, shown
from seaway.errors import SeawayError
from seaway.log_setup import add_log_format_argument, configure_logging

__all__ = ["READY", "build_parser", "load_settings", "main"]

READY = "seaway registry ready on "


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="seaway registry", description="Run Seaway's Avro schema registry.")
    p.add_argument("--config", type=Path, help="a schema-registry.properties file (Confluent's names)")
    p.add_argument("--override", action="append", default=[], metavar="KEY=VALUE",
                   help="set a property, e.g. --override kafkastore.bootstrap.servers=host:9092 (repeatable)")
    p.add_argument("--memory", action="store_true",
                   help="keep state in memory instead of the _schemas topic (development only)")
    p.add_argument("--log-level", default="INFO")
    add_log_format_argument(p)
    return p


def load_settings(config: Path | None, overrides: list[str]) -> Any:
    """``RegistrySettings`` from the properties file and ``KEY=VALUE`` overrides (SettingsError for an
    unsupported security setting)."""
    from seaway.schema_registry.settings import RegistrySettings

    props: dict[str, str] = {}
    if config is not None:
        props.update(parse_properties(config.read_text(encoding="utf-8")))
    for item in overrides:
        if "=" not in item:
            raise CliError(f"--override needs KEY=VALUE, got {shown(item)}")
        key, value = item.split("=", 1)
        props[key.strip()] = value.strip()
    return RegistrySettings.from_properties(props)


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.set_inheritable(True)
    return sock


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    configure_logging(args.log_level, args.log_format, text_format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    import os

    from seaway.schema_registry.security import registry_security
    from seaway.schema_registry.settings import SettingsError

    try:
        settings = load_settings(args.config, args.override)
        scheme, host, port = settings.first_listener
        if scheme not in ("http", "https"):
            raise CliError(f"listeners must be http:// or https:// URLs, got {shown(settings.listeners)}")
        security = registry_security(settings, os.environ)
    except (CliError, OSError, SettingsError) as exc:
        print(f"seaway registry: {exc}", file=sys.stderr)
        return 2
    try:
        sock = _bind(host, port)
    except OSError as exc:
        from seaway.cli.ports import describe

        print(f"seaway registry: listeners={settings.listeners}: {describe((host, port), exc)}", file=sys.stderr)
        return 2
    bound_port = sock.getsockname()[1]
    url_host = "[" + host + "]" if ":" in host else host
    url = f"{scheme}://{url_host}:{bound_port}"
    settings = settings.replace(listeners=url)
    try:
        return _serve(settings, sock, url, memory=args.memory, security=security)
    except SeawayError as exc:
        print(f"seaway registry: {exc}", file=sys.stderr)
        return 1
    finally:
        sock.close()


def _serve(settings: Any, sock: socket.socket, url: str, *, memory: bool, security: Any) -> int:
    import uvicorn
    from seaway.http_timeouts import read_timeout_protocol
    from seaway.schema_registry.app import create_app
    from seaway.schema_registry.log import MemorySchemaLog

    app = create_app(settings, log=MemorySchemaLog() if memory else None, security=security)

    class _Server(uvicorn.Server):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets)
            if not self.should_exit:
                print(f"{READY}{url}", flush=True)

    tls = security.server_ssl
    config = uvicorn.Config(app, log_level="warning", ws="none", lifespan="on", access_log=False,
                            http=read_timeout_protocol(settings.idle_timeout_ms),  # slow senders: closed
                            ssl_context_factory=None if tls is None else (lambda _config, _default: tls))
    server = _Server(config)
    # uvicorn shuts down gracefully on SIGTERM/SIGINT and then re-raises the signal against the
    # handlers it found; make those no-ops so a requested stop exits 0 instead of dying by signal.
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: None)
    server.run(sockets=[sock])
    return 0
