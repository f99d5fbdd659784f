"""A one-request Kafka client over our generated codec, for what AdminClient cannot express.

(DeleteTopics by topic id, the v5+ fields of a CreateTopics answer, config types and
documentation, DescribeCluster's endpoint type.)
"""

from __future__ import annotations

import socket
from typing import Any

from seaway.protocol.framing import FRAME_SIZE, request_frame, response_reader


def call(bootstrap: str, request: Any, response_cls: Any, version: int, correlation_id: int = 42) -> Any:
    """Send ``request`` as ``version`` and decode the answer."""
    host, port = bootstrap.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(request_frame(request, version, correlation_id, "raw-test"))
        (size,) = FRAME_SIZE.unpack(_recv(sock, 4))
        frame = _recv(sock, size)
    return response_cls.decode(response_reader(frame, request, version, correlation_id), version)


def _recv(sock: socket.socket, n: int) -> bytes:
    data = bytearray()
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise ConnectionError("broker closed the connection")
        data += chunk
    return bytes(data)
