"""Shared pieces of the broker benchmarks: broker and ceiling processes, frames, replay.

Why a raw replayer: a Python producer (even librdkafka behind confluent-kafka) spends a
few microseconds per ``produce()`` call, so with 100-byte records it is the bottleneck
long before the broker is. The replayer sends prebuilt Produce frames (the bytes a
client would send: request header, ProduceRequest, v2 record batches) over plain
sockets, keeping a window of requests in flight, so the figure it prints is the
broker's. The same bytes go to the broker and to the ceiling server, so the ratio
between them compares servers, not workloads.

The ceiling processes (``python bench/_common.py sink|sendfile ...``) are what a server
with no protocol work at all would do: append each received frame to a file and answer
with an 8-byte frame, or ``sendfile`` a file to whoever connects. They run in their own
process on the same event loop implementation (uvloop when installed) as the broker.
"""

from __future__ import annotations

import asyncio
import os
import random
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # for tests.support (run as `python bench/x.py`)
    sys.path.insert(0, str(ROOT))

from seaway.protocol.framing import request_frame  # noqa: E402
from seaway.protocol.messages.produce_request import (  # noqa: E402
    PartitionProduceData,
    ProduceRequest,
    TopicProduceData,
)
from seaway.protocol.messages.produce_response import ProduceResponse  # noqa: E402
from seaway.protocol.primitives import Reader  # noqa: E402
from seaway.protocol.records import Record, build_batch  # noqa: E402

from tests.support.broker import BrokerProcess  # noqa: E402

__all__ = [
    "MIB",
    "BrokerProcess",
    "CeilingProcess",
    "Connector",
    "ReplayResult",
    "build_produce_frames",
    "check_produce_response",
    "cpu_seconds",
    "create_topic",
    "delete_topic",
    "fmt_rate",
    "plain_connect",
    "record_overhead_batch",
    "recv_exact",
    "replay",
    "start_broker",
]

MIB = 1024 * 1024
PRODUCE_VERSION = 9  # what librdkafka 2.x sends to a broker serving up to v11 (flexible)
_SIZE = struct.Struct(">i")


# --- processes ------------------------------------------------------------------------

def start_broker(data_dir: Path, **overrides: str) -> BrokerProcess:
    """A broker subprocess on loopback with Kafka's defaults plus ``overrides``."""
    props = {"auto.create.topics.enable": "false", "num.partitions": "1"}
    props.update({k.replace("_", "."): v for k, v in overrides.items()})
    return BrokerProcess(data_dir, props).start()


def create_topic(bootstrap: str, name: str, partitions: int) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]

    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.create_topics([NewTopic(name, partitions, 1)], operation_timeout=10)
    for fut in futures.values():
        fut.result(15)


def delete_topic(bootstrap: str, name: str) -> None:
    """Free the disk (and page cache) a finished case used."""
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": bootstrap})
    for fut in admin.delete_topics([name], operation_timeout=10).values():
        fut.result(15)


class CeilingProcess:
    """``sink`` (append frames to a file, answer each) or ``sendfile`` (serve files in turn).

    ``send_buffer`` sets SO_SNDBUF on the sendfile connection (-1: the OS's autotuning),
    so the ceiling runs with the same socket settings as the broker it is compared with.
    """

    def __init__(self, mode: str, *paths: Path, send_buffer: int = -1) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, __file__, mode, str(send_buffer), *map(str, paths)], stdout=subprocess.PIPE, text=True
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line.startswith("port "):
            self.stop()
            raise RuntimeError(f"ceiling server did not start: {line!r}")
        self.port = int(line.split()[1])

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)
        if self.proc.stdout is not None:
            self.proc.stdout.close()


# --- frames ---------------------------------------------------------------------------

def record_overhead_batch(record_size: int, records: int, seed: int = 7) -> bytes:
    """One uncompressed v2 batch of ``records`` values of ``record_size`` bytes, no keys."""
    pool = random.Random(seed).randbytes(record_size * 8)
    now = int(time.time() * 1000)
    values = [pool[(i * 97) % (len(pool) - record_size) :][:record_size] for i in range(records)]
    return build_batch([Record(i, now, None, v) for i, v in enumerate(values)])


def build_produce_frames(
    topic: str,
    partitions: int,
    record_size: int,
    records_per_request: int,
    *,
    acks: int = 1,
    version: int = PRODUCE_VERSION,
    distinct: int = 4,
) -> tuple[list[bytes], int]:
    """``distinct`` size-prefixed Produce frames, each with one batch per partition.

    Returns (frames, records per frame). The records of a request are spread evenly over
    the partitions, so a request carries the same bytes with 1 or 6 partitions.
    """
    per_partition = max(1, records_per_request // partitions)
    batches = [record_overhead_batch(record_size, per_partition, seed=p) for p in range(partitions)]
    frames = []
    for i in range(distinct):
        request = ProduceRequest(
            transactional_id=None,
            acks=acks,
            timeout_ms=30000,
            topic_data=[TopicProduceData(
                name=topic,
                partition_data=[PartitionProduceData(index=p, records=batches[p]) for p in range(partitions)],
            )],
        )
        frames.append(request_frame(request, version, i, "seaway-bench"))
    return frames, per_partition * partitions


def check_produce_response(frame: bytes, version: int = PRODUCE_VERSION) -> None:
    """Raise unless every partition of a (size-stripped) Produce response succeeded."""
    r = Reader(frame, 4)
    if version >= ProduceRequest.FLEXIBLE_FROM:
        r.skip_tagged_fields()
    response = ProduceResponse.decode(r, version)
    for topic in response.responses:
        for part in topic.partition_responses:
            if part.error_code:
                raise RuntimeError(f"{topic.name}-{part.index}: error {part.error_code} {part.error_message}")


# --- replay ---------------------------------------------------------------------------

@dataclass
class ReplayResult:
    requests: int
    seconds: float
    first_response: bytes
    last_response: bytes
    server_cpu: float = 0.0
    """CPU seconds the server process spent during the replay (when a pid was given)."""

    def rate(self, per_request: float) -> float:
        return self.requests * per_request / self.seconds

    @property
    def cpu_per_request(self) -> float:
        return self.server_cpu / self.requests


Connector = Callable[[int], socket.socket]
"""port -> a connected socket (bench/_secure.py's make TLS ones, SASL-authenticated)."""


def plain_connect(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def recv_exact(sock: socket.socket, view: memoryview) -> None:
    """Fill ``view`` from ``sock`` (a response frame read whole); the peer closing first is an error."""
    while view:
        n = sock.recv_into(view)
        if not n:
            raise ConnectionError("peer closed the connection")
        view = view[n:]


def _replay_one(
    port: int, frames: Sequence[bytes], requests: int, window: int, out: list[ReplayResult], start: threading.Event,
    connect: Connector = plain_connect,
) -> None:
    sock = connect(port)
    buf = bytearray()
    first = last = b""
    sent = done = 0
    n = len(frames)
    start.wait()
    t0 = time.perf_counter()
    try:
        while done < requests:
            while sent < requests and sent - done < window:
                sock.sendall(frames[sent % n])
                sent += 1
            data = sock.recv(1 << 16)
            if not data:
                raise ConnectionError(f"server closed the connection after {done} responses")
            buf += data
            pos = 0
            while len(buf) - pos >= 4:
                (size,) = _SIZE.unpack_from(buf, pos)
                if len(buf) - pos - 4 < size:
                    break
                if done == 0:
                    first = bytes(buf[pos + 4 : pos + 4 + size])
                done += 1
                if done == requests:
                    last = bytes(buf[pos + 4 : pos + 4 + size])
                pos += 4 + size
            del buf[:pos]
    finally:
        sock.close()
    out.append(ReplayResult(requests, time.perf_counter() - t0, first, last))


def replay(port: int, frames: Sequence[bytes], requests: int, *, window: int = 8, connections: int = 1,
           server_pid: int | None = None, connect: Connector = plain_connect) -> ReplayResult:
    """Send ``requests`` frames per connection (cycling ``frames``) with ``window`` in flight.

    Connections run in threads (socket calls release the GIL); the result spans the
    slowest connection, its request count is the total. With ``server_pid`` the
    server's CPU time over the replay is recorded too.
    """
    results: list[ReplayResult] = []
    start = threading.Event()
    threads = [
        threading.Thread(target=_replay_one, args=(port, frames, requests, window, results, start, connect))
        for _ in range(connections)
    ]
    for t in threads:
        t.start()
    time.sleep(0.05)
    cpu0 = cpu_seconds(server_pid) if server_pid else 0.0
    t0 = time.perf_counter()
    start.set()
    for t in threads:
        t.join()
    cpu = cpu_seconds(server_pid) - cpu0 if server_pid else 0.0
    if len(results) != connections:
        raise RuntimeError("a replay connection failed (see the traceback above)")
    elapsed = max(time.perf_counter() - t0, max(r.seconds for r in results))
    return ReplayResult(requests * connections, elapsed, results[0].first_response, results[0].last_response, cpu)


def cpu_seconds(pid: int) -> float:
    """CPU time (all threads, user + system) a process has used so far; 0.0 where unknown.

    Read from ``/proc/<pid>/task/*/schedstat`` (nanoseconds on the CPU). On a machine
    shared with other work the wall-clock rate of a server moves with everyone else's
    load; the CPU it spends per request moves far less, so the benchmarks print both.
    """
    total = 0
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return 0.0
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/schedstat") as f:
                total += int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            continue
    return total / 1e9


def fmt_rate(records_per_s: float, bytes_per_s: float) -> str:
    return f"{records_per_s:>12,.0f} rec/s {bytes_per_s / MIB:>9.1f} MiB/s"


# --- ceiling servers (run as `python bench/_common.py sink|sendfile PATH`) ------------

class _SinkProtocol(asyncio.Protocol):
    """Append every frame to a file, answer with its correlation id: no protocol work."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buf = bytearray()
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        buf = self.buf
        buf += data
        pos, end = 0, len(buf)
        view = memoryview(buf)
        replies = []
        while end - pos >= 4:
            (size,) = _SIZE.unpack_from(buf, pos)
            if end - pos - 4 < size:
                break
            os.write(self.fd, view[pos + 4 : pos + 4 + size])
            replies.append(b"\x00\x00\x00\x04" + bytes(view[pos + 8 : pos + 12]))
            pos += 4 + size
        view.release()
        if pos:
            del buf[:pos]
        if replies and self.transport is not None:
            self.transport.write(b"".join(replies))


def _serve_sendfile(conn: socket.socket, paths: list[str], send_buffer: int) -> None:
    """Announce the total size, then sendfile each file in turn on this connection."""
    if send_buffer > 0:
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, send_buffer)
    with conn:
        conn.sendall(struct.pack(">q", sum(os.path.getsize(p) for p in paths)))
        for path in paths:
            with open(path, "rb") as f:
                size = os.fstat(f.fileno()).st_size
                offset = 0
                while offset < size:
                    offset += os.sendfile(conn.fileno(), f.fileno(), offset, size - offset)


async def _run_sink(path: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_TRUNC, 0o644)
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: _SinkProtocol(fd), "127.0.0.1", 0)
    print("port", server.sockets[0].getsockname()[1], flush=True)
    await asyncio.Event().wait()


def _ceiling_main(mode: str, send_buffer: int, paths: list[str]) -> None:
    if mode == "sink":
        try:
            import uvloop

            uvloop.run(_run_sink(paths[0]))
        except ImportError:
            asyncio.run(_run_sink(paths[0]))
        return
    listener = socket.create_server(("127.0.0.1", 0))
    print("port", listener.getsockname()[1], flush=True)
    while True:
        conn, _ = listener.accept()
        _serve_sendfile(conn, paths, send_buffer)


if __name__ == "__main__":
    _ceiling_main(sys.argv[1], int(sys.argv[2]), sys.argv[3:])
