"""Read timeouts for the REST servers: a client that sends its request too slowly is closed.

uvicorn bounds only the wait between two requests of a kept-alive connection
(``timeout_keep_alive``); a connection that never completes a request's head, or its body, stays
open for ever. 1,000 connections that each send one header byte a second held 1,000 file
descriptors of a Connect worker and of the schema registry for as long as they liked (the
"slowloris" attack). Kafka Connect and Confluent's registry run on Jetty, whose connectors close a
connection after ``idle.timeout.ms`` (rest-utils' setting, 30000; Kafka's RestServer leaves
Jetty's default, also 30000) without a byte. An idle timer alone does not stop a sender that
trickles a byte a second, so the same duration is applied here as a **deadline**:

* the **head** of a request (request line and headers) must have arrived within the timeout of
  the connection being accepted, or of the request's first byte on a kept-alive connection;
* its **body** must have arrived within the timeout of its head.

A client that misses either is answered ``408 Request Timeout`` (when nothing else was sent on
that request yet) and disconnected; the application sees ``http.disconnect``. A connection
whose request is being served holds no timer: a slow handler (Connect answers within 90 s)
is not the client's fault. A silent connection is closed after the timeout, as Jetty's idle
timeout closes it; one that trickles is closed at the same deadline.

One implementation for both servers: :func:`read_timeout_protocol` makes a uvicorn HTTP protocol
class, passed as ``uvicorn.Config(http=...)``; ``seaway connect`` sets it from
``rest.request.read.timeout.ms``, ``seaway registry`` from ``idle.timeout.ms``. It extends
uvicorn's httptools protocol (httptools is a dependency of Seaway) at its parser callbacks.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Literal

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

__all__ = ["DEFAULT_READ_TIMEOUT_MS", "ReadTimeoutProtocol", "read_timeout_protocol"]

DEFAULT_READ_TIMEOUT_MS = 30_000
"""Jetty's idle timeout, as Kafka's Connect REST server and Confluent's rest-utils leave it."""

log = logging.getLogger(__name__)

_RESPONSE_408 = (b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\n"
                 b"content-length: %d\r\nconnection: close\r\n\r\n%s")

Phase = Literal["head", "body"]

LINGER_S = 2.0
"""How long a timed-out connection's last bytes are read and dropped before it is closed (Apache's 2 s)."""


class ReadTimeoutProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with a deadline on reading each request's head and body."""

    read_timeout_s: float = DEFAULT_READ_TIMEOUT_MS / 1000

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._read_timer: asyncio.TimerHandle | None = None
        self._lingering = False
        self._linger_timer: asyncio.TimerHandle | None = None

    # -- the deadline ------------------------------------------------------------------------------

    def _arm(self, phase: Phase) -> None:
        self._disarm()
        self._read_timer = self.loop.call_later(self.read_timeout_s, self._expired, phase)

    def _disarm(self) -> None:
        if self._read_timer is not None:
            self._read_timer.cancel()
            self._read_timer = None

    def _expired(self, phase: Phase) -> None:
        self._read_timer = None
        if self.transport is None or self.transport.is_closing():
            return
        log.debug("closing %s: its request %s did not arrive within %g ms", self.client, phase,
                  self.read_timeout_s * 1000)
        cycle = self.cycle
        idle = cycle is None or cycle.response_complete  # nothing of an earlier request is being answered
        if (phase == "head" and idle) or (phase == "body" and cycle is not None and not cycle.response_started):
            message = f"The request {phase} did not arrive within {self.read_timeout_s * 1000:g} ms".encode()
            self.transport.write(_RESPONSE_408 % (len(message), message))
        self._linger()

    def _linger(self) -> None:
        """Close the way HTTP servers close on a client still sending (Apache's and Jetty's lingering
        close): half-close (FIN after the 408), then read and drop what still arrives for up to
        :data:`LINGER_S`, then close. Closing a socket that holds unread bytes makes the kernel send
        a reset, which can destroy the 408 before the client reads it (CI saw a trickling client get
        ``ECONNRESET`` and no answer)."""
        assert self.transport is not None
        self._lingering = True
        if self.transport.can_write_eof():
            self.transport.write_eof()
            self._linger_timer = self.loop.call_later(LINGER_S, self.transport.close)
        else:
            self.transport.close()

    def data_received(self, data: bytes) -> None:
        if self._lingering:
            return  # after a 408: dropped, only read so that the close sends no reset
        super().data_received(data)

    # -- uvicorn's protocol, extended ----------------------------------------------------------------

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm("head")

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        if self._linger_timer is not None:
            self._linger_timer.cancel()
        super().connection_lost(exc)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        if self._read_timer is None:  # a kept-alive connection's next request
            self._arm("head")

    def on_headers_complete(self) -> None:
        self._disarm()
        super().on_headers_complete()
        if not self.parser.should_upgrade():  # an upgraded connection is another protocol's
            self._arm("body")  # disarmed by on_message_complete, at once when there is no body

    def on_message_complete(self) -> None:
        self._disarm()
        super().on_message_complete()


def read_timeout_protocol(timeout_ms: int) -> type[ReadTimeoutProtocol]:
    """A :class:`ReadTimeoutProtocol` class with this deadline, for ``uvicorn.Config(http=...)``."""
    if timeout_ms <= 0:
        raise ValueError(f"a request read timeout must be above 0 ms, got {timeout_ms}")
    return type("ReadTimeoutProtocol", (ReadTimeoutProtocol,), {"read_timeout_s": timeout_ms / 1000})
