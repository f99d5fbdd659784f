"""The broker process: listeners, the log manager, background maintenance, shutdown.

Startup order matters for crash safety: the logs are recovered (torn tails truncated,
indexes rebuilt) before any listener accepts a connection, so no client ever sees a
half-written batch. Shutdown closes listeners first, then flushes and closes the logs
and writes the clean-shutdown markers that let the next start skip full recovery.

Resources clients can make the broker spend are bounded here: connections by
``max.connections`` and ``max.connections.per.ip`` (:mod:`.listener`), the bytes of
requests being read and queued by ``queued.max.request.bytes`` (:mod:`.request_memory`),
the time spent decompressing produced batches by ``num.io.threads`` worker threads and
each connection's ``connections.max.decompressed.bytes.per.second`` (:mod:`.decompression`),
file descriptors by the reserve of :mod:`seaway.broker.log.fds` (the process first raises
its soft open-file limit to the hard one, as the JVM does for Kafka).

Security (:mod:`seaway.broker.security`): each listener gets its protocol's TLS context and
SASL mechanisms from the config (already loaded and checked by ``BrokerConfig``); the
ACLs and SCRAM credentials are replayed from the ``__cluster_metadata`` log before any
listener accepts a connection, and the authorizer (when ``authorizer.class.name`` is set)
decides every request from then on. A listener with no host binds 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import signal
import socket
import ssl
import threading
import time
from typing import Any

from seaway.broker.config import BrokerConfig, ConfigError
from seaway.broker.connection import KafkaConnection
from seaway.broker.context import BrokerContext, Endpoint, now_ms
from seaway.broker.decompression import ValidationPool
from seaway.broker.listener import Acceptor, ConnectionLimits, bind_listener, resolve_overrides
from seaway.broker.log.fds import nofile_limit, raise_nofile_limit
from seaway.broker.log.log_manager import LogManager
from seaway.broker.metrics import BrokerMetrics, MetricsEndpoint, MetricsServer, parse_metrics_listener
from seaway.broker.request_memory import RequestMemory
from seaway.broker.security.authorizer import StandardAuthorizer
from seaway.broker.security.principal import SslPrincipalMapper
from seaway.broker.security.settings import broker_tls_settings
from seaway.broker.security.store import SecurityStore
from seaway.broker.security.tls import TlsConfigError, build_server_context, certificate_validity_warning
from seaway.broker.wire import DECODER_IS_NATIVE

__all__ = ["BrokerServer", "run_broker"]

log = logging.getLogger("seaway.broker")


class BrokerServer:
    """A running single-node broker. ``await start()``, then ``await stop()``."""

    def __init__(self, config: BrokerConfig) -> None:
        self.config = config
        self.logs = LogManager(config.log_dirs, config.default_log_config(), node_id=config.node_id)
        self.memory = RequestMemory(config.queued_max_request_bytes)
        self._acceptor: Acceptor | None = None
        self._connections: set[KafkaConnection] = set()
        self._maintenance: asyncio.Task[None] | None = None
        self._idle_reaper: asyncio.Task[None] | None = None
        self._maintenance_lock = threading.Lock()
        self.context: BrokerContext | None = None
        self.metrics_server: MetricsServer | None = None

    @property
    def endpoints(self) -> list[Endpoint]:
        assert self.context is not None, "broker not started"
        return self.context.endpoints

    @property
    def bootstrap_servers(self) -> str:
        return ",".join(f"{ep.host}:{ep.port}" for ep in self.endpoints)

    async def start(self) -> None:
        cfg = self.config
        for d in cfg.log_dirs:
            d.mkdir(parents=True, exist_ok=True)
        await asyncio.to_thread(self.logs.load)  # recovers logs, reads/writes meta.properties
        cluster_id = self.logs.cluster_id
        authorizer = (StandardAuthorizer(cfg.super_users, cfg.allow_everyone_if_no_acl_found)
                      if cfg.authorizer_enabled else None)
        store = SecurityStore(cfg.metadata_log_dir, authorizer)
        await asyncio.to_thread(store.open)
        self.context = BrokerContext(config=cfg, logs=self.logs, node_id=cfg.node_id, cluster_id=cluster_id,
                                     authorizer=authorizer, security_store=store,
                                     principal_mapper=SslPrincipalMapper(str(cfg.get("ssl.principal.mapping.rules"))))
        self._install_components(self.context)
        if not DECODER_IS_NATIVE:
            log.warning("Produce requests are decoded in Python (seaway.broker._wire was not compiled at install): "
                        "each costs several microseconds more; reinstall with a C compiler, or run "
                        "`python hatch_build.py`")
        self.context.validation_pool = ValidationPool(cfg.num_io_threads)
        try:
            metrics_address = parse_metrics_listener(cfg.metrics_listener)
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
        metrics_tls = None
        if metrics_address is not None:
            self.context.metrics = BrokerMetrics()
            metrics_tls = self._metrics_tls(metrics_address)
        store.cleaner = self.context.components.log_cleaner
        await asyncio.to_thread(store.compact)
        loop = asyncio.get_running_loop()
        try:
            overrides = await asyncio.to_thread(resolve_overrides, cfg.max_connections_per_ip_overrides_map)
        except OSError as exc:
            raise ConfigError(f"max.connections.per.ip.overrides: {exc}") from None
        limits = ConnectionLimits(cfg.max_connections, cfg.max_connections_per_ip, overrides)
        contexts = {name: sec.ssl_context for name, sec in cfg.listener_security.items()
                    if sec.ssl_context is not None}
        idle_s = cfg.connections_max_idle_ms / 1000 if cfg.connections_max_idle_ms > 0 else 60.0
        self._acceptor = Acceptor(limits, self._new_connection, contexts, handshake_timeout=min(60.0, idle_s))
        advertised = {name: (host, port) for name, host, port in cfg.advertised_listeners}
        bound: list[tuple[socket.socket, str]] = []
        for name, host, port in cfg.listeners:
            host = host or "127.0.0.1"  # no host: loopback only (a documented deviation from Kafka)
            try:
                sockets = bind_listener(host, port, backlog=1024)
            except OSError:
                for sock, _ in bound:
                    sock.close()
                raise
            bound.extend((sock, name) for sock in sockets)
            bound_port = sockets[0].getsockname()[1]
            adv_host, adv_port = advertised.get(name, (host, port))
            if not adv_host or adv_host in ("0.0.0.0", "::"):
                adv_host = socket.getfqdn() if host in ("0.0.0.0", "::") else host
            if not adv_port:
                adv_port = bound_port
            self.context.endpoints.append(Endpoint(name, adv_host, adv_port))
            log.info("listening on %s://%s:%d (%s, advertised %s:%d)", name, host, bound_port,
                     cfg.listener_protocols[name], adv_host, adv_port)
            security = cfg.listener_security.get(name)
            if security is not None and security.certificate_warning is not None:
                log.warning("listener %s: %s", name, security.certificate_warning)
        self._acceptor.start(bound)
        if metrics_address is not None:
            try:
                self.metrics_server = await asyncio.to_thread(
                    MetricsServer.for_broker, self.context, lambda: list(self._connections), metrics_address,
                    metrics_tls)
            except OSError as exc:
                self._acceptor.close()
                raise ConfigError(f"metrics.listener={cfg.metrics_listener}: {exc}") from None
            log.info("serving Prometheus metrics on %s%s", self.metrics_server.url,
                     " (HTTP Basic or client certificate authentication: an authorizer is configured)"
                     if self.context.authorizer is not None else "")
        self._maintenance = loop.create_task(self._maintain())
        if cfg.connections_max_idle_ms >= 0:
            self._idle_reaper = loop.create_task(self._close_idle_connections(cfg.connections_max_idle_ms / 1000))
        log.info("broker %d of cluster %s started", cfg.node_id, cluster_id)

    def _metrics_tls(self, endpoint: MetricsEndpoint) -> ssl.SSLContext | None:
        """The HTTPS metrics listener's TLS context (the broker's ``ssl.*`` settings), or None for HTTP.

        With an authorizer, /metrics takes passwords: over plain HTTP on an address other hosts
        reach, they cross the network in clear, which is worth a warning (not a refusal: a
        management network may be trusted).
        """
        cfg = self.config
        if not endpoint.https:
            if cfg.authorizer_enabled and endpoint.host not in ("127.0.0.1", "::1", "localhost"):
                log.warning("metrics.listener=%s takes HTTP Basic passwords over plain HTTP on %s; use "
                            "https://%s:%d (TLS with the broker's ssl.* settings)", cfg.metrics_listener,
                            endpoint.host, endpoint.host, endpoint.port)
            return None
        settings = broker_tls_settings(cfg)
        try:
            context = build_server_context(settings)
        except TlsConfigError as exc:
            raise ConfigError(f"metrics.listener={cfg.metrics_listener}: {exc}") from None
        warning = certificate_validity_warning(settings)
        if warning is not None:
            log.warning("metrics.listener: %s", warning)
        return context

    def _install_components(self, context: BrokerContext) -> None:
        """Hook for the coordinator layers (groups, producer state) to attach themselves."""
        from seaway.broker import components

        components.install(context)

    def _new_connection(self, listener: str, ip: str) -> KafkaConnection:
        assert self.context is not None
        conn = _TrackedConnection(self, ip, self.context, listener, self.config.socket_request_max_bytes,
                                  self.memory, self.config.listener_security.get(listener))
        self._connections.add(conn)
        return conn

    def connection_closed(self, conn: KafkaConnection, ip: str) -> None:
        """A tracked connection is gone: forget it, and free its slot in the connection limits."""
        self._connections.discard(conn)
        if self._acceptor is not None:
            self._acceptor.connection_closed(ip)

    async def _maintain(self) -> None:
        """Retention and time-based flushes on a worker thread, never on the event loop."""
        interval = min(self.config.log_retention_check_interval_ms,
                       self.config.log_flush_scheduler_interval_ms) / 1000.0
        while True:
            await asyncio.sleep(max(interval, 0.05))
            try:
                await asyncio.to_thread(self._maintain_once)
            except Exception:
                log.exception("log maintenance failed")

    async def _close_idle_connections(self, max_idle_s: float) -> None:
        """Close connections with no traffic for ``connections.max.idle.ms``, as Kafka does.

        Checked every tenth of the limit (at most every 30 s), so a connection goes at
        most 10% (or 30 s) late. Clients reconnect on their next request.
        """
        interval = min(max(max_idle_s / 10, 0.01), 30.0)
        while True:
            await asyncio.sleep(interval)
            now = time.monotonic()
            for conn in list(self._connections):
                if conn.idle_seconds(now) > max_idle_s:
                    conn.close_idle()

    def _maintain_once(self) -> None:
        with self._maintenance_lock:
            self.logs.run_maintenance(now_ms())

    async def stop(self) -> None:
        if self._acceptor is not None:
            self._acceptor.close()
        if self.metrics_server is not None:
            await asyncio.to_thread(self.metrics_server.close)
            self.metrics_server = None
        for conn in list(self._connections):
            if conn.transport is not None:
                conn.transport.abort()
        await asyncio.sleep(0)  # let the aborted transports report connection_lost
        for task in (self._maintenance, self._idle_reaper):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        if self.context is not None:
            for component in self.context.components.closeables():
                await component.close()
            if self.context.validation_pool is not None:
                await asyncio.to_thread(self.context.validation_pool.close)
        with self._maintenance_lock:
            await asyncio.to_thread(self.logs.close)
        if self.context is not None and self.context.security_store is not None:
            await asyncio.to_thread(self.context.security_store.close)
        log.info("broker stopped")


class _TrackedConnection(KafkaConnection):
    """A connection the server counts: its slot in the limits is freed exactly once."""

    def __init__(self, server: BrokerServer, ip: str, *args: Any) -> None:
        super().__init__(*args)
        self._server = server
        self._ip = ip
        self._counted = True

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        if self._counted:
            self._counted = False
            self._server.connection_closed(self, self._ip)


def _freeze_startup_objects() -> None:
    """Move everything alive after startup out of the cyclic GC's reach.

    Modules, handlers, configs and recovered logs live as long as the process; without
    this every full collection walks them all again (tens of thousands of objects), a
    pause on the event loop that every in-flight request waits out. Done once, in the
    broker process only (tests that start brokers in-process keep their own GC).
    """
    gc.collect()
    gc.freeze()


def run_broker(config: BrokerConfig) -> None:
    """Run a broker in the foreground until SIGINT/SIGTERM (used by ``seaway broker``)."""
    try:
        import uvloop

        runner: Any = uvloop.run
    except ImportError:  # pragma: no cover - uvloop is a dependency on Linux
        runner = asyncio.run

    async def main() -> None:
        before = nofile_limit()
        after = raise_nofile_limit()
        if after != before:
            log.info("open-file limit (RLIMIT_NOFILE) raised from %d to %d", before, after)
        server = BrokerServer(config)
        await server.start()
        _freeze_startup_objects()
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        print(f"seaway broker ready on {server.bootstrap_servers}", flush=True)
        await stop.wait()
        await server.stop()

    runner(main())
