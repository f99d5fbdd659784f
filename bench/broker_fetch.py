"""Fetch throughput of the Seaway broker against a raw sendfile ceiling.

Run from the repository root::

    .venv/bin/python bench/broker_fetch.py [--quick] [--repeat N]

Each case (100-byte and 1 KiB records, 1 and 6 partitions) first fills a topic with
replayed Produce frames (~256 KiB requests, see broker_produce.py), then prints:

- ``librdkafka``: a confluent-kafka Consumer with ``assign()`` reading everything back
  from the beginning (records/s and MiB/s of record values). With small records the
  Python ``consume()`` loop is the bottleneck; printed for reference.
- ``raw fetch->broker``: a raw-socket client sending Fetch v11 requests
  (max_bytes 50 MiB, partition_max_bytes 8 MiB, the next request once the previous
  answer is read), so the client is not the bottleneck. MiB/s of record-batch bytes.
- ``sendfile ceiling``: the same segment files ``os.sendfile``'d to a socket by a
  bare process and read by a plain ``recv_into`` loop. Its socket gets the broker's
  send buffer (``socket.send.buffer.bytes``, Kafka's 102400 by default; ``--send-buffer``
  sets both), so the two differ in protocol work only. On loopback the send buffer
  moves both figures a lot: with an autotuned one (``-1``) megabytes queue at the
  receiver and the rates swing by 2x from run to run (see docs/performance.md).
- ``ratio``: broker / ceiling (target >= 0.7), from the best run of each; then the median of
  the per-run ratios (each broker run against the ceiling run just before it). See
  docs/performance.md.

``--security`` measures the cost of TLS and SASL instead: one broker listening on
PLAINTEXT, SSL and SASL_SSL (SCRAM-SHA-512) at once (bench/_secure.py), the same raw fetch
loop over each listener in interleaved rounds, each rate divided by the PLAINTEXT one of the
same round (target >= 0.4: TLS cannot use sendfile, every byte is read and encrypted), with
the CPU seconds per GiB of the broker and of this benchmark's own client (which decrypts on
the same 2 cores, and costs more per byte than the broker does: see docs/performance.md).
"""

from __future__ import annotations

import argparse
import socket
import struct
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (
    MIB,
    CeilingProcess,
    Connector,
    build_produce_frames,
    check_produce_response,
    cpu_seconds,
    create_topic,
    delete_topic,
    fmt_rate,
    plain_connect,
    recv_exact,
    replay,
    start_broker,
)
from seaway.protocol.framing import request_frame
from seaway.protocol.messages.fetch_request import FetchPartition, FetchRequest, FetchTopic
from seaway.protocol.messages.fetch_response import FetchResponse
from seaway.protocol.primitives import Reader

CASES = [(100, 1), (100, 6), (1024, 1), (1024, 6)]
FETCH_VERSION = 11
MAX_BYTES = 50 * MIB
PARTITION_MAX_BYTES = 8 * MIB
DEFAULT_SEND_BUFFER = 102400  # Kafka's socket.send.buffer.bytes, the broker's default
_SIZE = struct.Struct(">i")
_BATCH = struct.Struct(">qi")  # baseOffset, batchLength
_COUNT = struct.Struct(">i")



def _fetch_frame(topic: str, offsets: list[int], correlation_id: int) -> bytes:
    request = FetchRequest(
        replica_id=-1, max_wait_ms=500, min_bytes=1, max_bytes=MAX_BYTES, isolation_level=0,
        session_id=0, session_epoch=-1,
        topics=[FetchTopic(topic=topic, partitions=[
            FetchPartition(partition=p, fetch_offset=o, partition_max_bytes=PARTITION_MAX_BYTES)
            for p, o in enumerate(offsets)
        ])],
    )
    return request_frame(request, FETCH_VERSION, correlation_id, "seaway-bench")


def raw_fetch(port: int, topic: str, partitions: int, end_offsets: list[int], passes: int = 1,
              connect: Connector = plain_connect) -> tuple[float, int, int]:
    """Fetch every partition from 0 to its end, ``passes`` times: (seconds, batch bytes, records)."""
    buf = bytearray(MAX_BYTES + PARTITION_MAX_BYTES + 1024 * 1024)
    view = memoryview(buf)
    head = bytearray(4)
    total_bytes = records = 0
    sock = connect(port)
    t0 = time.perf_counter()
    with sock:
        corr = 0
        for _ in range(passes):
            offsets = [0] * partitions
            while offsets != end_offsets:
                corr += 1
                sock.sendall(_fetch_frame(topic, offsets, corr))
                recv_exact(sock, memoryview(head))
                (size,) = _SIZE.unpack(head)
                recv_exact(sock, view[:size])
                response = FetchResponse.decode(Reader(view[:size], 4), FETCH_VERSION)
                for t in response.responses:
                    for p in t.partitions:
                        if p.error_code:
                            raise RuntimeError(f"fetch error {p.error_code} on partition {p.partition_index}")
                        data = p.records
                        assert isinstance(data, memoryview)
                        pos, end = 0, len(data)
                        while pos < end:
                            base, length = _BATCH.unpack_from(data, pos)
                            (count,) = _COUNT.unpack_from(data, pos + 57)
                            records += count
                            offsets[p.partition_index] = base + count  # uncompressed, no gaps
                            pos += length + 12
                        total_bytes += end
    return time.perf_counter() - t0, total_bytes, records


def sendfile_ceiling(paths: list[Path], passes: int = 1, send_buffer: int = -1) -> tuple[float, int]:
    """Read the files as a bare process sendfile()s them (``passes`` times) over one connection."""
    buf = bytearray(8 * MIB)
    view = memoryview(buf)
    total = 0
    server = CeilingProcess("sendfile", *(paths * passes), send_buffer=send_buffer)
    try:
        with socket.create_connection(("127.0.0.1", server.port)) as sock:
            t0 = time.perf_counter()
            head = bytearray(8)
            recv_exact(sock, memoryview(head))
            (left,) = struct.unpack(">q", head)
            while left:
                n = sock.recv_into(view[: min(left, len(buf))])
                if not n:
                    raise ConnectionError("sendfile server closed early")
                left -= n
                total += n
            return time.perf_counter() - t0, total
    finally:
        server.stop()


def librdkafka_consume(bootstrap: str, topic: str, partitions: int, count: int) -> tuple[float, int, int]:
    """(seconds, records, value bytes) to consume at least ``count`` records from the start."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

    consumer = Consumer({
        "bootstrap.servers": bootstrap,
        "group.id": "seaway-bench",
        "enable.auto.commit": False,
        "fetch.max.bytes": MAX_BYTES,
        "max.partition.fetch.bytes": PARTITION_MAX_BYTES,
        "log_level": 4,
    })
    consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)])
    seen = nbytes = 0
    t0 = time.perf_counter()
    deadline = t0 + 120
    try:
        while seen < count and time.perf_counter() < deadline:
            for msg in consumer.consume(num_messages=100_000, timeout=1.0):
                if msg.error():
                    raise RuntimeError(str(msg.error()))
                nbytes += len(msg.value() or b"")
                seen += 1
        elapsed = time.perf_counter() - t0
    finally:
        consumer.close()
    if seen < count:
        raise RuntimeError(f"librdkafka consumed {seen} of {count} records")
    return elapsed, seen, nbytes


def security_main(repeat: int, fill_mib: int, passes: int) -> int:
    """``--security``: raw fetches over PLAINTEXT, SSL and SASL_SSL listeners of one broker, same run."""
    from _secure import LISTENERS, start_secure_broker

    worst = dict.fromkeys(LISTENERS[1:], 1000000000.0)
    with tempfile.TemporaryDirectory(prefix="seaway-bench-") as tmp:
        bench = start_secure_broker(Path(tmp) / "broker")
        bootstrap = bench.client_config("PLAINTEXT")["bootstrap.servers"]
        pid = bench.process.proc.pid if bench.process.proc is not None else 0
        try:
            print(f"broker listeners {bench.ports}; {repeat} round(s), each over every listener in turn\n")
            print(f"{'case':<14}{'listener':<12}{'records/s':>16}{'':>6}{'MiB/s':>9}   vs PLAINTEXT (wall clock)")
            for size, parts in CASES:
                topic = f"sec-{size}-{parts}"
                create_topic(bootstrap, topic, parts)
                frames, per_frame = build_produce_frames(topic, parts, size, 256 * 1024 // (size + 10))
                requests = fill_mib * MIB // len(frames[0])
                check_produce_response(replay(bench.ports["PLAINTEXT"], frames, requests).last_response)
                end_offsets = [requests * (per_frame // parts)] * parts
                runs: dict[str, list[tuple[float, int, int]]] = {name: [] for name in LISTENERS}
                cpu: dict[str, list[float]] = {name: [] for name in LISTENERS}  # broker CPU s per GiB
                client_cpu: dict[str, list[float]] = {name: [] for name in LISTENERS}  # this process's
                for _ in range(repeat):
                    for name in LISTENERS:
                        before, client_before = cpu_seconds(pid), time.process_time()
                        result = raw_fetch(bench.ports[name], topic, parts, end_offsets, passes,
                                           connect=bench.connector(name))
                        cpu[name].append((cpu_seconds(pid) - before) / (result[1] / 2**30))
                        client_cpu[name].append((time.process_time() - client_before) / (result[1] / 2**30))
                        if result[2] != passes * requests * per_frame:
                            raise RuntimeError(f"{name}: fetched {result[2]} records")
                        runs[name].append(result)
                base = min(runs["PLAINTEXT"])
                for name in LISTENERS:
                    secs, nbytes, nrec = min(runs[name])
                    ratio = base[0] / secs
                    paired = sorted(p[0] / r[0] for p, r in zip(runs["PLAINTEXT"], runs[name], strict=True))
                    if name != "PLAINTEXT":
                        worst[name] = min(worst[name], ratio)
                    print(f"{f'{size}B x {parts}p' if name == 'PLAINTEXT' else '':<14}{name:<12}"
                          f"{fmt_rate(nrec / secs, nbytes / secs)}   {ratio:>5.2f} "
                          f"(paired median {paired[len(paired) // 2]:.2f})   broker CPU {min(cpu[name]):.2f} s/GiB"
                          f", client {min(client_cpu[name]):.2f}")
                print()
                delete_topic(bootstrap, topic)
        finally:
            bench.stop()
    met = all(v >= 0.4 for v in worst.values())
    print("worst fetch ratio to PLAINTEXT: " + ", ".join(f"{k} {v:.2f}" for k, v in worst.items())
          + f" (target 0.4): {'MET' if met else 'MISSED'}")
    return 0 if met else 1


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="small volumes, one run each (< 1 minute)")
    ap.add_argument("--repeat", type=int, default=None, help="runs per raw figure, best kept (default 5, quick 2)")
    ap.add_argument("--send-buffer", type=int, default=DEFAULT_SEND_BUFFER,
                    help="socket.send.buffer.bytes of broker and ceiling (default Kafka's 102400; -1 = OS)")
    ap.add_argument("--security", action="store_true",
                    help="SSL and SASL_SSL against PLAINTEXT on one broker instead of the sendfile ceiling")
    args = ap.parse_args()
    repeat = args.repeat or (2 if args.quick else 5)
    fill_mib = 128 if args.quick else 512
    if args.security:
        return security_main(args.repeat or (1 if args.quick else 3), 64 if args.quick else 256, 2)
    passes = 2
    librdkafka_mib = 24 if args.quick else 96
    ratios = []
    with tempfile.TemporaryDirectory(prefix="seaway-bench-") as tmp:
        data_dir = Path(tmp) / "broker"
        broker = start_broker(data_dir, socket_send_buffer_bytes=str(args.send_buffer))
        try:
            print(f"broker on {broker.bootstrap}; {repeat} run(s) per raw figure, best kept; "
                  f"socket.send.buffer.bytes={args.send_buffer} for broker and ceiling\n")
            print(f"{'case':<18}{'client':<20}{'records/s':>14}{'':>6}{'MiB/s':>9}   note")
            for size, parts in CASES:
                label = f"{size}B x {parts}p"
                topic = f"fetch-{size}-{parts}"
                create_topic(broker.bootstrap, topic, parts)
                frames, per_frame = build_produce_frames(topic, parts, size, 256 * 1024 // (size + 10))
                requests = fill_mib * MIB // len(frames[0])
                check_produce_response(replay(broker.port, frames, requests).last_response)
                end_offsets = [requests * (per_frame // parts)] * parts

                lr_count = min(librdkafka_mib * MIB // size, requests * per_frame)
                secs, seen, nbytes = librdkafka_consume(broker.bootstrap, topic, parts, lr_count)
                print(f"{label:<18}{'librdkafka':<20}{fmt_rate(seen / secs, nbytes / secs)}"
                      f"   first {seen:,} records")

                paths = sorted(data_dir.glob(f"{topic}-*/*.log"))
                ours, ceiling = [], []
                for _ in range(repeat):  # interleaved, so both see the same machine load
                    ceiling.append(sendfile_ceiling(paths, passes, args.send_buffer))
                    secs, nbytes, nrec = raw_fetch(broker.port, topic, parts, end_offsets, passes)
                    if nrec != passes * requests * per_frame:
                        raise RuntimeError(f"raw fetch read {nrec} records, expected {requests * per_frame}")
                    ours.append((secs, nbytes, nrec))
                secs, nbytes, nrec = min(ours)
                csecs, cbytes = min(ceiling)
                print(f"{'':<18}{'raw fetch->broker':<20}{fmt_rate(nrec / secs, nbytes / secs)}"
                      f"   {passes} x {nbytes / passes / MIB:.0f} MiB of batches")
                if cbytes != nbytes:
                    raise RuntimeError(f"segments hold {cbytes} bytes but fetch returned {nbytes}")
                print(f"{'':<18}{'sendfile ceiling':<20}{fmt_rate(nrec / csecs, cbytes / csecs)}")
                ratio = csecs / secs
                ratios.append(ratio)
                # each run against the ceiling run just before it: less swayed by one lucky run
                paired = sorted(c[0] / o[0] for c, o in zip(ceiling, ours, strict=True))
                print(f"{'':<18}{'ratio':<20}{ratio:>10.2f}   (target >= 0.7; median of {len(paired)} paired "
                      f"runs {paired[len(paired) // 2]:.2f})\n")
                delete_topic(broker.bootstrap, topic)
        finally:
            broker.stop()
    worst = min(ratios)
    print(f"worst fetch ratio {worst:.2f} (target 0.7): {'MET' if worst >= 0.7 else 'MISSED'}")
    return 0 if worst >= 0.7 else 1


if __name__ == "__main__":
    sys.exit(main())
