"""What one Produce request costs the broker, and how far one event loop (or two) goes.

Run from the repository root::

    .venv/bin/python bench/produce_cost.py [--requests N]                  # CPU per request, in process
    .venv/bin/python bench/produce_cost.py --saturate [--brokers 1|2] [--clients K] [--seconds S]

The shape is the Java producer's with its defaults (issue 34): idempotent batches of
``--records`` (15) records of ``--size`` (1024) bytes, one batch per partition, ``--partitions``
(6) partitions per request, acks=all, Produce v11; each batch carries the next sequence of
its producer, so every one is appended (none is a duplicate).

Default mode: frames are fed to a ``KafkaConnection`` of a broker started in this process,
through a transport that only counts what it is given, so the figure is the broker's own
work per request: decoding, the checks, the producer state, the append (the kernel's copy
into the page cache included), the answer; no socket. It prints CPU µs per request (this
thread's CPU time, which a busy machine moves far less than wall time) for the Java shape,
for one partition and for six of one small record each. ``PYTHONPATH=<other checkout>/broker``
measures another version of the broker the same way.

``--saturate``: ``--brokers`` broker processes (each with the topic), ``--clients`` client
processes (spread over them) each sending the frames over one connection with 5 in flight
(the Java client's max.in.flight) as fast as answers come, for ``--seconds``: requests/s,
records/s, answer latency p50/p99 and the brokers' CPU per request. Two brokers on two
cores are the upper bound of a shard-per-core broker on this machine (no coordination
between them: each owns its partitions, as a shard would), measured with clients that cost
far less than the broker. See docs/broker.md, "One event loop: the cost of a request".
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import shutil
import socket
import struct
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import cpu_seconds, create_topic
from crc32c import crc32c
from seaway.protocol.framing import request_frame
from seaway.protocol.messages.produce_request import PartitionProduceData, ProduceRequest, TopicProduceData
from seaway.protocol.records import Record, build_batch

from tests.support.broker import BrokerProcess

TOPIC = "cost"
VERSION = 11
_SIZE = struct.Struct(">i")
_SEQUENCE = struct.Struct(">i")  # baseSequence, at byte 53 of a batch
_CRC = struct.Struct(">I")  # at byte 17, over bytes 21..


class Frames:
    """Produce frames of one producer id, each batch with the next sequence (CRC redone)."""

    def __init__(self, producer_id: int, partitions: int, records: int, size: int, *, idempotent: bool = True) -> None:
        now = int(time.time() * 1000)
        value = (bytes(range(256)) * (size // 256 + 1))[:size]
        batch = build_batch([Record(i, now, None, value) for i in range(records)],
                            **({"producer_id": producer_id, "producer_epoch": 0, "base_sequence": 0}
                               if idempotent else {}))
        request = ProduceRequest(transactional_id=None, acks=-1, timeout_ms=30000, topic_data=[TopicProduceData(
            name=TOPIC, partition_data=[PartitionProduceData(index=p, records=batch) for p in range(partitions)])])
        self.frame = bytearray(request_frame(request, VERSION, 0, "producer-1"))
        self.positions = _find_all(self.frame, batch)
        self.batch_size = len(batch)
        self.records = records * partitions
        self.idempotent = idempotent
        self._next = 0

    def next(self, correlation_id: int) -> bytearray:
        """The frame with the next sequence in every batch (a fresh copy)."""
        frame, view = self.frame, memoryview(self.frame)
        if self.idempotent:
            for pos in self.positions:
                _SEQUENCE.pack_into(frame, pos + 53, self._next)
                _CRC.pack_into(frame, pos + 17, crc32c(view[pos + 21 : pos + self.batch_size]))
        _SIZE.pack_into(frame, 8, correlation_id)
        self._next += self.records // max(1, len(self.positions))
        return bytearray(frame)


def _find_all(haystack: bytes | bytearray, needle: bytes) -> list[int]:
    found, start = [], 0
    while (i := haystack.find(needle, start)) >= 0:
        found.append(i)
        start = i + len(needle)
    return found


class _CountingTransport:
    """What KafkaConnection needs of a transport; counts the answers' bytes."""

    def __init__(self) -> None:
        self.written = 0

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return ("127.0.0.1", 9) if name == "peername" else default

    def write(self, data: bytes) -> None:
        self.written += len(data)

    def is_closing(self) -> bool:
        return False

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass

    def close(self) -> None:
        pass

    def abort(self) -> None:
        raise RuntimeError("the broker closed the connection: a request was refused")

    def get_write_buffer_size(self) -> int:
        return 0


async def _in_process(requests: int, partitions: int, records: int, size: int, idempotent: bool) -> float:
    """CPU µs per request of a broker in this process, fed ``requests`` frames."""
    from seaway.broker.config import BrokerConfig
    from seaway.broker.connection import KafkaConnection
    from seaway.broker.server import BrokerServer

    folder = Path(tempfile.mkdtemp(prefix="seaway-bench-cost-"))
    server = BrokerServer(BrokerConfig.load(None, {"log.dirs": str(folder), "listeners": "PLAINTEXT://127.0.0.1:0"}))
    await server.start()
    try:
        assert server.context is not None
        server.context.logs.create_topic(TOPIC, partitions)
        frames = Frames(4242, partitions, records, size, idempotent=idempotent)
        prepared = [frames.next(i) for i in range(requests + 200)]
        connection = KafkaConnection(server.context, "PLAINTEXT", 100 * 1024 * 1024, server.memory)
        transport = _CountingTransport()
        connection.connection_made(transport)  # type: ignore[arg-type]

        def feed(frame: bytearray) -> None:
            view = memoryview(frame)
            while view:
                buf = connection.get_buffer(len(view))
                n = min(len(buf), len(view))
                buf[:n] = view[:n]
                connection.buffer_updated(n)
                view = view[n:]

        async def drain() -> None:
            while _busy(connection):
                await asyncio.sleep(0)
            await asyncio.sleep(0)

        for frame in prepared[:200]:  # warm-up: files created, caches filled
            feed(frame)
        await drain()
        written = transport.written
        t0 = time.thread_time()
        for i, frame in enumerate(prepared[200:]):
            feed(frame)
            if i % 5 == 4:  # five in flight, as the Java producer keeps
                await drain()
        await drain()
        cpu = time.thread_time() - t0
        if transport.written == written:
            raise RuntimeError("no answers were written")
        return 1e6 * cpu / requests
    finally:
        await server.stop()
        shutil.rmtree(folder, ignore_errors=True)


def _busy(connection: Any) -> bool:
    """``KafkaConnection.busy``; an older checkout's connection (PYTHONPATH) has no such property."""
    if hasattr(type(connection), "busy"):
        return bool(connection.busy)
    worker = connection._worker
    return bool(connection._frames) or (worker is not None and not worker.done())


def _client(port: int, producer_id: int, args: argparse.Namespace, out: Any) -> None:
    frames = Frames(producer_id, args.partitions, args.records, args.size)
    sock = socket.create_connection(("127.0.0.1", port))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sent = done = 0
    started: dict[int, float] = {}
    latencies: list[float] = []
    buf = bytearray()
    t0 = time.perf_counter()
    end = t0 + args.seconds
    while True:
        while sent - done < 5 and time.perf_counter() < end:
            started[sent] = time.perf_counter()
            sock.sendall(frames.next(sent))
            sent += 1
        if done == sent:
            break
        data = sock.recv(1 << 16)
        if not data:
            raise ConnectionError("the broker closed the connection")
        buf += data
        pos = 0
        while len(buf) - pos >= 8:
            (n,) = _SIZE.unpack_from(buf, pos)
            if len(buf) - pos - 4 < n:
                break
            (correlation_id,) = _SIZE.unpack_from(buf, pos + 4)
            latencies.append(time.perf_counter() - started.pop(correlation_id))
            done += 1
            pos += 4 + n
        del buf[:pos]
    sock.close()
    out.put((done, time.perf_counter() - t0, latencies, frames.records))


def saturate(args: argparse.Namespace) -> None:
    folders = [Path(tempfile.mkdtemp(prefix="seaway-bench-cost-")) for _ in range(args.brokers)]
    settings = {"auto.create.topics.enable": "false", "log.retention.bytes": "200000000",
                "log.segment.bytes": "67108864", "log.retention.check.interval.ms": "1000"}
    brokers = [BrokerProcess(folder, settings).start() for folder in folders]
    try:
        for broker in brokers:
            create_topic(broker.bootstrap, TOPIC, args.partitions)
        pids = [b.proc.pid for b in brokers if b.proc is not None]
        queue: Any = multiprocessing.Queue()
        clients = [multiprocessing.Process(target=_client, args=(brokers[i % len(brokers)].port, 1000 + i, args, queue))
                   for i in range(args.clients)]
        cpu0 = sum(cpu_seconds(pid) for pid in pids)
        for c in clients:
            c.start()
        results = [queue.get(timeout=args.seconds + 120) for _ in clients]
        for c in clients:
            c.join()
        cpu = sum(cpu_seconds(pid) for pid in pids) - cpu0
    finally:
        for broker in brokers:
            broker.stop()
        for folder in folders:
            shutil.rmtree(folder, ignore_errors=True)
    requests = sum(r[0] for r in results)
    elapsed = max(r[1] for r in results)
    latencies = sorted(x for r in results for x in r[2])
    print(f"{args.brokers} broker(s), {args.clients} clients: {requests / elapsed:,.0f} requests/s, "
          f"{requests * results[0][3] / elapsed:,.0f} records/s, answer p50 {1e3 * latencies[len(latencies) // 2]:.2f} "
          f"p99 {1e3 * latencies[int(len(latencies) * 0.99)]:.2f} ms, broker CPU {1e6 * cpu / requests:.0f} µs/request "
          f"({cpu / elapsed:.2f} cores)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--partitions", type=int, default=6)
    parser.add_argument("--records", type=int, default=15)
    parser.add_argument("--size", type=int, default=1024)
    parser.add_argument("--saturate", action="store_true")
    parser.add_argument("--brokers", type=int, default=1, choices=[1, 2])
    parser.add_argument("--clients", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=6.0)
    args = parser.parse_args()
    if args.saturate:
        saturate(args)
        return 0
    cases = [
        (f"Java shape: {args.partitions} x {args.records} x {args.size} B, idempotent", args.partitions, args.records,
         args.size, True, args.requests),
        ("Java shape, not idempotent", args.partitions, args.records, args.size, False, args.requests),
        ("1 partition x 1 record of 100 B, idempotent", 1, 1, 100, True, args.requests * 5),
        ("6 partitions x 1 record of 100 B, idempotent", 6, 1, 100, True, args.requests * 5),
    ]
    try:
        import uvloop  # what the broker runs on when it is installed
        run: Any = uvloop.run
    except ImportError:
        run = asyncio.run
    for label, partitions, records, size, idempotent, requests in cases:
        us = run(_in_process(requests, partitions, records, size, idempotent))
        print(f"{label:<52} {us:8.1f} µs CPU per request", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
