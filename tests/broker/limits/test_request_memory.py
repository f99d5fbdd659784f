"""Request memory: a size prefix costs only the bytes that arrive, and queued.max.request.bytes
bounds what all connections have read and not yet had handled (issue 14, item 3)."""

from __future__ import annotations

import socket
import struct
import subprocess
import threading
import time
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path

import pytest
from confluent_kafka.admin import AdminClient
from seaway.protocol.messages.produce_request import PartitionProduceData, ProduceRequest, TopicProduceData
from seaway.protocol.primitives import Writer

from tests.broker.limits.wire import closed_by_peer, connect, recv_exactly, rss_mb
from tests.support.broker import BrokerProcess

pytestmark = pytest.mark.timeout(90)


def _list_topics(broker: BrokerProcess) -> None:
    assert AdminClient({"bootstrap.servers": broker.bootstrap}).list_topics(timeout=10).brokers


def test_size_prefixes_cost_only_the_bytes_that_arrive(tmp_path: Path) -> None:
    """30 connections each announce a 100 MB produce and send 10 bytes of it: RSS stays flat
    (it grew by 0.8-1.1 GB before), other clients are served, the idle ones are closed."""
    with BrokerProcess(tmp_path / "b", {"connections.max.idle.ms": "2000"}) as broker, ExitStack() as stack:
        assert broker.proc is not None
        pid = broker.proc.pid
        _list_topics(broker)
        before = rss_mb(pid)
        socks = [stack.enter_context(connect(broker.bootstrap)) for _ in range(30)]
        for sock in socks:
            sock.sendall(struct.pack(">ihhi", 100_000_000, 0, 7, 1) + b"xx")
        time.sleep(1.0)
        _list_topics(broker)  # everyone else keeps being served
        grown = rss_mb(pid) - before
        assert grown < 30, f"RSS grew by {grown:.0f} MB for 300 bytes received"
        # connections.max.idle.ms closes the half-sent requests: nothing is held forever.
        assert all(closed_by_peer(sock, 10) for sock in socks)
        # A prefix past socket.request.max.bytes (100 MiB) is refused at once.
        with connect(broker.bootstrap) as sock:
            sock.sendall(struct.pack(">ihhi", 104_857_601, 0, 7, 1) + b"xx")
            assert closed_by_peer(sock, 5)
        assert broker.alive


def _produce_frame(correlation_id: int, size: int) -> bytes:
    """A complete Produce v7 request of about ``size`` bytes to a topic that does not exist."""
    request = ProduceRequest(acks=-1, timeout_ms=5000, topic_data=[TopicProduceData(
        name="no-such-topic", partition_data=[PartitionProduceData(index=0, records=b"\0" * size)])])
    w = Writer()
    w.int16(0)
    w.int16(7)
    w.int32(correlation_id)
    w.nullable_string("memory-test", False)
    request.encode(w, 7)
    body = bytes(w.buf)
    return struct.pack(">i", len(body)) + body


def _unread_bytes(port: int, client_port: int) -> int:
    """Recv-Q of the broker's end of the connection from ``client_port``: bytes it has not read."""
    out = subprocess.run(["ss", "-tnH", "state", "established", f"( sport = :{port} )"],
                         capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        fields = line.split()
        if fields[3].rsplit(":", 1)[1] == str(client_port):
            return int(fields[0])
    raise AssertionError(f"no connection from port {client_port} in:\n{out}")


def _wait_until(condition: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def _answered(sock: socket.socket, within: float) -> bool:
    """Whether a whole response arrives on ``sock`` within ``within`` seconds."""
    sock.settimeout(within)
    try:
        (size,) = struct.unpack(">i", recv_exactly(sock, 4))
    except TimeoutError:
        return False
    recv_exactly(sock, size)
    return True


def test_queued_max_request_bytes_stops_reading_until_requests_are_handled(tmp_path: Path) -> None:
    """With a 1 MiB budget, A holds 700 KB of a 1 MB request; B's request does not fit, so the
    broker leaves B's bytes in the kernel until A's request completes and is handled."""
    overrides = {"socket.request.max.bytes": "1048576", "queued.max.request.bytes": "1048576"}
    with BrokerProcess(tmp_path / "b", overrides) as broker:
        frame_a, frame_b = _produce_frame(1, 1_000_000), _produce_frame(2, 1_000_000)
        a, b = connect(broker.bootstrap), connect(broker.bootstrap)
        try:
            a.sendall(frame_a[:700_000])
            _wait_until(lambda: _unread_bytes(broker.port, a.getsockname()[1]) == 0)  # A read first
            sender = threading.Thread(target=b.sendall, args=(frame_b,), daemon=True)
            sender.start()  # all of B; the broker must stop reading it part way
            time.sleep(1.0)
            unread = _unread_bytes(broker.port, b.getsockname()[1])
            assert unread > 100_000, f"the broker read B although the budget is spent ({unread} unread)"
            assert not _answered(b, 1.0), "B was handled past queued.max.request.bytes"
            a.sendall(frame_a[700_000:])  # A completes: handled, its bytes given back, B resumes
            assert _answered(a, 10)
            assert _answered(b, 10)
            sender.join(10)
            assert _unread_bytes(broker.port, b.getsockname()[1]) == 0
        finally:
            a.close()
            b.close()
        assert broker.alive
