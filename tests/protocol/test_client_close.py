"""KafkaConnection.close() cancelled half way leaves no socket open.

A group member stopped while it closes a TLS connection (the registry's elector retrying a
wrong password does that all the time) cancels ``close()`` during the close_notify exchange.
The half-shut transport then outlived the event loop, and its socket surfaced as an
"unclosed transport" ResourceWarning at some later garbage collection: under pytest's
``filterwarnings = error`` that failed whichever test happened to be running then.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import socket
import ssl
import threading
import warnings
from pathlib import Path

import pytest
from seaway.protocol.client import KafkaConnection

from tests.support.tls_material import Material, make_material

pytestmark = pytest.mark.timeout(60)


class _TlsPeer:
    """A TLS server in a thread that completes the handshake, then holds the connection
    without a word, as a broker between requests: no close_notify answer comes back."""

    def __init__(self, material: Material) -> None:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(material.server_pem)
        self._listener = context.wrap_socket(socket.create_server(("127.0.0.1", 0)), server_side=True)
        self.port: int = self._listener.getsockname()[1]
        self._release = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        with self._listener, contextlib.suppress(OSError):
            conn, _ = self._listener.accept()
            with conn:
                self._release.wait(30)

    def close(self) -> None:
        self._release.set()
        self._thread.join(10)


async def _cancel_a_tls_close(port: int, ca: Path) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port, ssl=ssl.create_default_context(cafile=str(ca)),
                                                   server_hostname="localhost")
    closing = asyncio.create_task(KafkaConnection(reader, writer, "close-test").close())
    await asyncio.sleep(0.2)  # close() has sent close_notify and waits for an answer that does not come
    assert not closing.done(), "the close finished: nothing is cancelled half way"
    closing.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await closing


def test_a_cancelled_close_leaves_no_socket_open(tmp_path: Path) -> None:
    material = make_material(tmp_path / "tls")
    peer = _TlsPeer(material)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            asyncio.run(_cancel_a_tls_close(peer.port, material.ca))  # the loop ends at once, as a stopped member's
            gc.collect()
    finally:
        peer.close()
    leaks = [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)]
    assert leaks == []
