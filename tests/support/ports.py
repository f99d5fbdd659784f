"""Ports for servers a test starts in another process, chosen so nothing else can take them first.

A test that must write a server's port into its config before the server starts (a Connect
worker's ``listeners``, which is also its identity in the group; a registry's or a peer broker's
listener) cannot let the server bind port 0. The usual trick, bind port 0, read the port, close,
has a window: the kernel hands out the same port again to whatever asks next for an ephemeral
port, which on a test machine is any client connecting anywhere (every connect() takes one) or
another server binding port 0. CI saw a worker's URL answered by something else.

So ports come from below the kernel's ephemeral range (``net.ipv4.ip_local_port_range``), where
the kernel never allocates on its own; each is handed out once per test process (never reused
by a later test while an earlier test's server may still be going down), checked free by a bind,
and reserved against every other test process on the machine (pytest-xdist workers, a second
run) for as long as this process lives; the walk starts at an offset derived from the process
id, so concurrent processes rarely even try the same ports.
"""

from __future__ import annotations

import os
import socket
import threading

__all__ = ["free_port", "free_ports"]

_LOWEST = 10_000
"""Below this live well-known services' defaults (PostgreSQL 5432, MariaDB 3306, HDFS 8020/9870, ...)."""

_lock = threading.Lock()
_handed_out: set[int] = set()
_next: int | None = None


def _ephemeral_low() -> int:
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range", encoding="ascii") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32_768  # Linux's default


def _bindable(port: int) -> bool:
    for family, host in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
        try:
            with socket.socket(family, socket.SOCK_STREAM) as s:
                s.bind((host, port))  # no SO_REUSEADDR: a port in TIME_WAIT counts as taken too
        except OSError as e:
            if family == socket.AF_INET6 and e.errno == 99:  # EADDRNOTAVAIL: no IPv6 loopback here
                continue
            return False
    return True


_reservations: list[socket.socket] = []


def _reserve(port: int) -> bool:
    """Claim ``port`` for this process's lifetime against other test processes on the machine.

    An abstract-namespace Unix socket named after the port: only one process can bind the name,
    and the kernel releases it when the process ends, however it ends (no files left behind).
    Where there is no such namespace (not Linux), the bind check alone has to do.
    """
    if not hasattr(socket, "AF_UNIX") or not os.path.exists("/proc/self"):
        return True
    claim = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        claim.bind(f"\0seaway-test-port-{port}")
    except OSError:
        claim.close()
        return False
    _reservations.append(claim)
    return True


def free_port() -> int:
    """A loopback port no one listens on, outside the ephemeral range, never returned twice in this process."""
    global _next
    high = _ephemeral_low()
    span = high - _LOWEST
    if span < 1000:  # an unusual range setting: fall back to the kernel's choice
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            return int(s.getsockname()[1])
    with _lock:
        if _next is None:
            _next = _LOWEST + (os.getpid() * 7919) % span
        for _ in range(span):
            port = _next
            _next = _LOWEST + (_next - _LOWEST + 1) % span
            if port not in _handed_out and _bindable(port) and _reserve(port):
                _handed_out.add(port)
                return port
    raise RuntimeError(f"no free loopback port between {_LOWEST} and {high}")


def free_ports(count: int) -> list[int]:
    """``count`` distinct free ports."""
    return [free_port() for _ in range(count)]
