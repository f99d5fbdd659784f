"""Bad bytes close that one connection; the broker keeps serving real clients."""

from __future__ import annotations

import socket
import struct

import pytest
from confluent_kafka.admin import AdminClient

from tests.support.broker import BrokerProcess

pytestmark = pytest.mark.timeout(60)


def _send(bootstrap: str, payload: bytes) -> bytes:
    host, port = bootstrap.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=5) as s:
        s.sendall(payload)
        s.shutdown(socket.SHUT_WR)
        chunks = []
        try:
            while data := s.recv(65536):
                chunks.append(data)
        except (ConnectionResetError, TimeoutError):
            pass
        return b"".join(chunks)


def _frame(api_key: int, version: int, body: bytes, correlation_id: int = 7) -> bytes:
    header = struct.pack(">hhih", api_key, version, correlation_id, 4) + b"test"
    payload = header + body
    return struct.pack(">i", len(payload)) + payload


@pytest.mark.parametrize(
    "payload",
    [
        b"\x00",                                        # shorter than a size prefix
        struct.pack(">i", 2_000_000_000) + b"xx",       # absurd size
        struct.pack(">i", -5) + b"abcd",                # negative size
        struct.pack(">i", 3) + b"abc",                  # too small for a header
        _frame(999, 0, b""),                            # unknown API key
        _frame(0, 99, b""),                             # unsupported Produce version
        _frame(3, 1, b"\x00\x00\x00\x09\xff"),          # Metadata with a truncated body
        _frame(0, 7, b"\xff" * 40),                     # Produce with garbage body
        bytes(range(256)) * 50,                         # noise
    ],
)
def test_garbage_closes_connection_and_broker_stays_up(shared_broker: BrokerProcess, payload: bytes) -> None:
    _send(shared_broker.bootstrap, payload)
    assert shared_broker.alive
    md = AdminClient({"bootstrap.servers": shared_broker.bootstrap}).list_topics(timeout=10)
    assert md.brokers


def test_unsupported_api_versions_version_gets_v0_error_and_ranges(shared_broker: BrokerProcess) -> None:
    reply = _send(shared_broker.bootstrap, _frame(18, 99, b""))
    size, correlation_id, error_code = struct.unpack_from(">iih", reply)
    assert size == len(reply) - 4
    assert correlation_id == 7
    assert error_code == 35  # UNSUPPORTED_VERSION
    (count,) = struct.unpack_from(">i", reply, 10)
    keys = {struct.unpack_from(">hhh", reply, 14 + 6 * i)[0] for i in range(count)}
    assert {0, 1, 3, 18} <= keys
