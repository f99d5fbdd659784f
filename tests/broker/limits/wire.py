"""A raw Kafka connection that stays open, and readings of a broker process from /proc.

The limit tests need both: a connection opened before the broker runs out of file
descriptors keeps working after it (a fresh one per request, as ``rawclient.call`` makes,
could not connect), and they measure the broker from outside (RSS, open fds, CPU time).
"""

from __future__ import annotations

import os
import socket
import struct
import warnings
from typing import Any

from seaway.protocol.framing import FRAME_SIZE, request_frame, response_reader
from seaway.protocol.messages.produce_request import PartitionProduceData, ProduceRequest, TopicProduceData
from seaway.protocol.messages.produce_response import ProduceResponse

with warnings.catch_warnings():  # kafka-python imports importlib.resources.read_text (deprecated)
    warnings.simplefilter("ignore", DeprecationWarning)
    from kafka.record.default_records import DefaultRecordBatchBuilder

API_VERSIONS_V0 = struct.pack(">ihhih", 14, 18, 0, 1, 4) + b"test"
"""A complete ApiVersions v0 request frame (correlation id 1)."""


def connect(bootstrap: str, source: str | None = None, timeout: float = 10.0) -> socket.socket:
    """A TCP connection to the broker, from loopback address ``source`` when given."""
    host, port = bootstrap.rsplit(":", 1)
    return socket.create_connection((host, int(port)), timeout=timeout,
                                    source_address=(source, 0) if source else None)


def recv_exactly(sock: socket.socket, n: int) -> bytes:
    data = bytearray()
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise ConnectionError("closed by the broker")
        data += chunk
    return bytes(data)


def api_versions(sock: socket.socket) -> None:
    """One ApiVersions v0 round trip on ``sock`` (raises when the broker does not answer)."""
    sock.sendall(API_VERSIONS_V0)
    (size,) = struct.unpack(">i", recv_exactly(sock, 4))
    assert struct.unpack(">i", recv_exactly(sock, size)[:4]) == (1,)


def closed_by_peer(sock: socket.socket, within: float) -> bool:
    """Whether the broker closed ``sock`` within ``within`` seconds (without sending anything)."""
    sock.settimeout(within)
    try:
        data = sock.recv(1)
    except TimeoutError:
        return False
    except ConnectionResetError:
        return True
    assert data == b"", "the broker sent bytes nobody asked for"
    return True


def batch(values: list[bytes]) -> bytes:
    """One uncompressed v2 record batch holding ``values``."""
    builder = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=0, producer_id=-1,
                                        producer_epoch=-1, base_sequence=-1, batch_size=1 << 30)
    for i, value in enumerate(values):
        builder.append(i, timestamp=None, key=b"k", value=value, headers=[])
    return bytes(builder.build())


class Wire:
    """One open connection; :meth:`call` sends a request and decodes its answer."""

    def __init__(self, bootstrap: str) -> None:
        self.sock = connect(bootstrap)
        self._correlation = 0

    def call(self, request: Any, response_cls: Any, version: int) -> Any:
        self._correlation += 1
        self.sock.sendall(request_frame(request, version, self._correlation, "limits-test"))
        (size,) = FRAME_SIZE.unpack(recv_exactly(self.sock, 4))
        return response_cls.decode(response_reader(recv_exactly(self.sock, size), request, version,
                                                   self._correlation), version)

    def produce(self, topic: str, values: list[bytes], partition: int = 0) -> tuple[int, int]:
        """(error code, base offset) of producing ``values`` as one batch with acks=-1."""
        request = ProduceRequest(acks=-1, timeout_ms=5000, topic_data=[TopicProduceData(
            name=topic, partition_data=[PartitionProduceData(index=partition, records=batch(values))])])
        response = self.call(request, ProduceResponse, 7)
        part = response.responses[0].partition_responses[0]
        return part.error_code, part.base_offset

    def close(self) -> None:
        self.sock.close()


def rss_mb(pid: int) -> float:
    """Resident set size of process ``pid`` (VmRSS), in MB."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise AssertionError(f"no VmRSS for {pid}")


def open_fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def cpu_seconds(pid: int) -> float:
    """User + system CPU time process ``pid`` has used so far."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
