"""A one-request Kafka client over our generated codec, for what AdminClient cannot express.

(DeleteTopics by topic id, the v5+ fields of a CreateTopics answer, config types and
documentation, DescribeCluster's endpoint type.)
"""

from __future__ import annotations

import socket
import struct
from typing import Any

from seaway.protocol.primitives import Reader, Writer


def call(bootstrap: str, request: Any, response_cls: Any, version: int, correlation_id: int = 42) -> Any:
    """Send ``request`` as ``version`` and decode the answer."""
    flexible = version >= request.FLEXIBLE_FROM
    w = Writer()
    w.int16(request.API_KEY)
    w.int16(version)
    w.int32(correlation_id)
    w.nullable_string("raw-test", False)
    if flexible:
        w.empty_tagged_fields()
    request.encode(w, version)
    assert not w.chunks
    body = bytes(w.buf)
    host, port = bootstrap.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(struct.pack(">i", len(body)) + body)
        (size,) = struct.unpack(">i", _recv(sock, 4))
        frame = _recv(sock, size)
    r = Reader(frame)
    assert r.int32() == correlation_id
    if flexible:
        r.skip_tagged_fields()
    return response_cls.decode(r, version)


def _recv(sock: socket.socket, n: int) -> bytes:
    data = bytearray()
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise ConnectionError("broker closed the connection")
        data += chunk
    return bytes(data)
