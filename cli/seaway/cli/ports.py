"""Is a listener's port free? Checked before a server starts, so a taken port is one clear line.

Servers report a taken port late and verbosely (uvicorn exits from inside its startup task with
a traceback; the broker raises from its event loop), and ``seaway up`` used to take another
process answering on its port for its own child. So each command binds its listeners' ports
once, the way the servers will (``SO_REUSEADDR``: a port left in TIME_WAIT is free, one another
process listens on is not), and names the taken one. The check is advisory: a port taken in
the instant between the check and the server's own bind still fails in the server, and the
callers turn that failure into one line too (:func:`bind_error`).
"""

from __future__ import annotations

import errno
import socket
from collections.abc import Iterable

__all__ = ["Endpoint", "bind_error", "describe", "endpoints", "first_taken", "local_address", "taken"]

Endpoint = tuple[str, int]
"""``(host, port)``; an empty host means every interface."""

_BIND_ERRORS = frozenset({errno.EADDRINUSE, errno.EADDRNOTAVAIL, errno.EACCES})


def endpoints(listeners: str | Iterable[str]) -> list[Endpoint]:
    """``(host, port)`` of each listener: ``http://h:p``, ``PLAINTEXT://h:p``, ``h:p``, ``[::1]:p``.

    A comma-separated string is split; entries without a port are skipped (the server then
    reports its own error).
    """
    items = listeners.split(",") if isinstance(listeners, str) else list(listeners)
    out: list[Endpoint] = []
    for item in (i.strip() for i in items):
        address = item.split("://", 1)[1] if "://" in item else item
        address = address.split("/", 1)[0]
        host, sep, port = address.rpartition(":")
        if not sep or not port.isdigit():
            continue
        out.append((host.strip("[]"), int(port)))
    return out


def local_address(host: str) -> str:
    """The address to reach a server that listens on ``host`` from this machine."""
    return {"": "127.0.0.1", "0.0.0.0": "127.0.0.1", "::": "::1"}.get(host, host)


def taken(host: str, port: int) -> OSError | None:
    """None if a server could listen on ``host:port`` now, else the bind error (port 0: always free)."""
    if port == 0:
        return None
    bind_host = host or "0.0.0.0"
    family = socket.AF_INET6 if ":" in bind_host else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_STREAM) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((bind_host, port))
            sock.listen(1)
    except OSError as exc:
        return exc
    return None


def first_taken(listeners: Iterable[Endpoint]) -> tuple[Endpoint, OSError] | None:
    """The first endpoint that cannot be listened on, with why; None when all are free."""
    for host, port in listeners:
        problem = taken(host, port)
        if problem is not None:
            return (host, port), problem
    return None


def bind_error(exc: BaseException) -> bool:
    """Whether ``exc`` is a server's failure to listen (port taken, address not local, no permission)."""
    return isinstance(exc, OSError) and exc.errno in _BIND_ERRORS


def describe(endpoint: Endpoint, exc: OSError) -> str:
    """``port 9092 on 127.0.0.1 is already in use by another process`` and the like."""
    host, port = endpoint
    where = f"port {port} on {host or 'every interface'}"
    if exc.errno == errno.EADDRINUSE:
        return f"{where} is already in use by another process"
    if exc.errno == errno.EADDRNOTAVAIL:
        return f"cannot listen on {where}: {host} is not an address of this machine"
    if exc.errno == errno.EACCES:
        return f"cannot listen on {where}: permission denied (ports below 1024 need privileges)"
    return f"cannot listen on {where}: {exc.strerror or exc}"
