"""Listening sockets and the connection limits: ``max.connections``, ``max.connections.per.ip``.

The broker accepts connections itself rather than through ``loop.create_server``, because
only then can it decide, per connection and before any byte is read, whether to take it:

- at ``max.connections`` it stops accepting, as Kafka's acceptor does (new connections
  wait in the kernel's listen backlog), and starts again when a connection closes;
- an address already holding its ``max.connections.per.ip`` (or its entry in
  ``max.connections.per.ip.overrides``) has the new connection closed at once, as Kafka
  does (its clients see a disconnect and retry with backoff);
- when accept() fails for lack of resources (EMFILE, ENFILE, ENOBUFS, ENOMEM), or the
  new socket's fd lands in the fds kept for the log (:mod:`seaway.broker.log.fds`), it
  stops accepting for a backoff (0.1 s doubling to 1 s, reset by the next success, cut
  short when a connection closes) instead of retrying in a tight loop or failing: the
  listener never spins and never dies, and takes new connections again by itself as
  soon as fds are free.

Each accepted socket then becomes an asyncio transport with ``connect_accepted_socket``;
on SSL and SASL_SSL listeners a TLS one, whose handshake must finish within
``handshake_timeout`` seconds (a client that connects and never completes it loses its
connection slot after that time, not after ``connections.max.idle.ms``).
"""

from __future__ import annotations

import asyncio
import errno
import ipaddress
import logging
import socket
import ssl
from collections import Counter
from collections.abc import Callable, Mapping

from seaway.broker.log.fds import socket_fd_allowed

__all__ = ["Acceptor", "ConnectionLimits", "bind_listener", "normalize_ip", "resolve_overrides"]

log = logging.getLogger("seaway.broker.listener")

_ACCEPT_BATCH = 64  # connections accepted per readiness callback, so one burst cannot hog the loop
_BACKOFF_MIN = 0.1
_BACKOFF_MAX = 1.0
_WARN_EVERY = 10.0  # seconds between two log lines about the same limit
_RESOURCE_ERRNOS = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})


def normalize_ip(address: str) -> str:
    """``::ffff:10.0.0.1`` -> ``10.0.0.1``, scope ids dropped: one key per client address."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return str(ip.ipv4_mapped)
    return str(ip)


def resolve_overrides(overrides: Mapping[str, int]) -> dict[str, int]:
    """Host names in ``max.connections.per.ip.overrides`` resolved to addresses, as Kafka does.

    Raises OSError (naming the host) when a name does not resolve.
    """
    resolved: dict[str, int] = {}
    for host, count in overrides.items():
        try:
            resolved[normalize_ip(str(ipaddress.ip_address(host)))] = count
            continue
        except ValueError:
            pass
        try:
            infos = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
        except OSError as exc:
            raise OSError(f"cannot resolve host {host!r}: {exc}") from exc
        for info in infos:
            resolved[normalize_ip(str(info[4][0]))] = count
    return resolved


class ConnectionLimits:
    """Counts of open client connections, in total and by address, against Kafka's limits."""

    def __init__(self, max_connections: int, max_per_ip: int, overrides: Mapping[str, int]) -> None:
        self.max_connections = max_connections
        self.max_per_ip = max_per_ip
        self.overrides = dict(overrides)
        self.total = 0
        self._by_ip: Counter[str] = Counter()

    @property
    def at_capacity(self) -> bool:
        return self.total >= self.max_connections

    def limit_for(self, ip: str) -> int:
        return self.overrides.get(ip, self.max_per_ip)

    def try_open(self, ip: str) -> bool:
        """Count a new connection from ``ip``, or False when that address is at its limit."""
        if self._by_ip[ip] >= self.limit_for(ip):
            return False
        self._by_ip[ip] += 1
        self.total += 1
        return True

    def closed(self, ip: str) -> None:
        self.total -= 1
        left = self._by_ip[ip] - 1
        if left > 0:
            self._by_ip[ip] = left
        else:
            del self._by_ip[ip]


def bind_listener(host: str, port: int, backlog: int) -> list[socket.socket]:
    """Listening sockets for ``host:port`` (every interface for an empty host), as create_server binds.

    With port 0 and several addresses (IPv4 and IPv6), all share the first one's port.
    """
    infos = socket.getaddrinfo(host or None, port, family=socket.AF_UNSPEC, type=socket.SOCK_STREAM,
                               flags=socket.AI_PASSIVE)
    seen: set[tuple[int, object]] = set()
    sockets: list[socket.socket] = []
    error: OSError | None = None
    for family, kind, proto, _, address in infos:
        if (family, address) in seen:
            continue
        seen.add((family, address))
        sock = socket.socket(family, kind, proto)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            if sockets and port == 0:
                address = (address[0], sockets[0].getsockname()[1], *address[2:])
            sock.bind(address)
            sock.listen(backlog)
            sock.setblocking(False)
        except OSError as exc:
            sock.close()
            if exc.errno in (errno.EADDRNOTAVAIL, errno.EAFNOSUPPORT) and len(infos) > 1:
                error = exc  # e.g. IPv6 disabled: serve the families that work
                continue
            for other in sockets:
                other.close()
            raise OSError(exc.errno, f"cannot listen on {host or '*'}:{port}: {exc.strerror}") from exc
        sockets.append(sock)
    if not sockets:
        raise error or OSError(errno.EADDRNOTAVAIL, f"no address to listen on for {host!r}")
    return sockets


ProtocolFactory = Callable[[str, str], asyncio.BaseProtocol]
"""(listener name, client address) -> the connection's protocol."""


class Acceptor:
    """Accepts on the listening sockets, applying :class:`ConnectionLimits` (see module doc).

    The protocol a factory returns must call :meth:`connection_closed` exactly once when
    its connection ends, so the counts stay right.
    """

    def __init__(
        self,
        limits: ConnectionLimits,
        factory: ProtocolFactory,
        ssl_contexts: Mapping[str, ssl.SSLContext] | None = None,
        handshake_timeout: float = 60.0,
    ) -> None:
        self.limits = limits
        self._factory = factory
        self._ssl = dict(ssl_contexts or {})
        self._handshake_timeout = handshake_timeout
        self._sockets: list[tuple[socket.socket, str]] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._accepting = False
        self._closed = False
        self._backoff = _BACKOFF_MIN
        self._retry: asyncio.TimerHandle | None = None
        self._warned_at = -_WARN_EVERY  # loop time of the last warning (they are rate-limited)
        self._rejected = 0  # per-address rejections not yet logged
        self._rejection_logged = -_WARN_EVERY
        self._setting_up: set[asyncio.Task[None]] = set()  # held, so no task is collected mid-way

    def start(self, sockets: list[tuple[socket.socket, str]]) -> None:
        self._loop = asyncio.get_running_loop()
        self._sockets.extend(sockets)
        self._resume()

    def close(self) -> None:
        """Stop accepting and close the listening sockets."""
        self._closed = True
        self._pause()
        if self._retry is not None:
            self._retry.cancel()
            self._retry = None
        for sock, _ in self._sockets:
            sock.close()
        self._sockets.clear()

    def connection_closed(self, ip: str) -> None:
        """A connection counted by this acceptor ended: free its slot, accept again if paused."""
        self.limits.closed(ip)
        if not self._accepting and not self._closed:
            if self._retry is not None:
                self._retry.cancel()
                self._retry = None
            self._resume()

    # -- accepting -----------------------------------------------------------------------

    def _resume(self) -> None:
        self._retry = None
        if self._accepting or self._closed or self._loop is None:
            return
        self._accepting = True
        for sock, name in self._sockets:
            self._loop.add_reader(sock.fileno(), self._accept, sock, name)

    def _pause(self) -> None:
        if not self._accepting or self._loop is None:
            return
        self._accepting = False
        for sock, _ in self._sockets:
            self._loop.remove_reader(sock.fileno())

    def _back_off(self, reason: str) -> None:
        """Stop accepting for a while: the process is out of fds (or memory) for sockets."""
        self._warn("not accepting connections for now (retrying every %.1f s at most): %s",
                   _BACKOFF_MAX, reason)
        self._pause()
        assert self._loop is not None
        self._retry = self._loop.call_later(self._backoff, self._resume)
        self._backoff = min(self._backoff * 2, _BACKOFF_MAX)

    def _accept(self, lsock: socket.socket, name: str) -> None:
        limits = self.limits
        for _ in range(_ACCEPT_BATCH):
            if limits.at_capacity:
                self._warn("max.connections=%d reached: new connections wait until one closes",
                           limits.max_connections)
                self._pause()
                return
            try:
                sock, address = lsock.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:
                if exc.errno in _RESOURCE_ERRNOS:
                    self._back_off(f"accept() failed: {exc.strerror}")
                    return
                log.debug("accept() failed: %s", exc)  # e.g. ECONNABORTED: that client left
                continue
            if not socket_fd_allowed(sock.fileno()):
                sock.close()
                self._back_off("the open-file limit (RLIMIT_NOFILE) is nearly reached; the last "
                               "file descriptors are kept for the log")
                return
            ip = normalize_ip(str(address[0])) if isinstance(address, tuple) else "?"
            if not limits.try_open(ip):
                sock.close()
                self._log_rejection(ip)
                continue
            self._backoff = _BACKOFF_MIN
            assert self._loop is not None
            task = self._loop.create_task(self._serve(sock, name, ip))
            self._setting_up.add(task)
            task.add_done_callback(self._setting_up.discard)

    def _warn(self, message: str, *args: object) -> None:
        """A warning, at most one per :data:`_WARN_EVERY` seconds (limits hit under load repeat)."""
        assert self._loop is not None
        now = self._loop.time()
        if now - self._warned_at >= _WARN_EVERY:
            self._warned_at = now
            log.warning(message, *args)

    def _log_rejection(self, ip: str) -> None:
        """Kafka's info line for a connection over max.connections.per.ip, rate-limited like _warn."""
        self._rejected += 1
        assert self._loop is not None
        now = self._loop.time()
        if now - self._rejection_logged < _WARN_EVERY:
            return
        log.info("rejected connection from %s: the address already has the configured maximum of %d "
                 "connections (max.connections.per.ip); %d rejected since the last such line",
                 ip, self.limits.limit_for(ip), self._rejected)
        self._rejected = 0
        self._rejection_logged = now

    async def _serve(self, sock: socket.socket, name: str, ip: str) -> None:
        assert self._loop is not None
        protocol = self._factory(name, ip)
        context = self._ssl.get(name)
        try:
            sock.setblocking(False)
            if context is None:
                await self._loop.connect_accepted_socket(lambda: protocol, sock)
            else:
                await self._loop.connect_accepted_socket(lambda: protocol, sock, ssl=context,
                                                         ssl_handshake_timeout=self._handshake_timeout)
        except Exception as exc:  # the client may be gone already, fds ran out, or TLS failed
            if context is not None:
                log.info("TLS handshake with %s on listener %s failed: %s", ip, name, exc)
            else:
                log.debug("could not set up a connection from %s: %s", ip, exc)
            sock.close()
            protocol.connection_lost(exc)
