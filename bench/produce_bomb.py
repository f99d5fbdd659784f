"""Other clients' produce latency while connections resend small compressed "bomb" batches.

Run from the repository root::

    .venv/bin/python bench/produce_bomb.py [--seconds S] [--repeat N] [--attackers A] [--override k=v]...

The attack (issue 27, item 4): a 2.5 KB zstd batch of 60 zero-filled records that
unpacks to 57 MB. It is valid (every record agrees with the header, the decompressed
size is below the per-batch cap), so the broker decompresses, checks and stores it.
``--attackers`` raw connections (default 4) each send it in a Produce request (acks=1),
wait for the answer and send it again, ignoring any ``throttle_time_ms``.

The victims are two confluent-kafka (librdkafka) producers in processes of their own,
one uncompressed and one lz4, each sending one 100-byte record at a time (acks=1,
linger.ms=0) every 10 ms and timing produce() to its delivery report.

Each round measures the victims for ``--seconds`` alone (the baseline) and then for
``--seconds`` under attack, on the same broker, and prints p50/p99 of both and their
ratio (attack / baseline; target <= 2), the attack's rate (bomb batches and unpacked
bytes per second, the largest ``throttle_time_ms`` answered) and the broker's CPU.
``--override`` passes a broker setting (e.g. ``max.decompressed.byte.rate.per.connection=-1``
to turn the per-connection quota off and measure the worker pool alone).
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import socket
import statistics
import struct
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import MIB, cpu_seconds, create_topic, start_broker
from seaway.protocol.framing import request_frame
from seaway.protocol.messages.produce_request import (
    PartitionProduceData,
    ProduceRequest,
    TopicProduceData,
)
from seaway.protocol.messages.produce_response import ProduceResponse
from seaway.protocol.primitives import Reader
from seaway.protocol.record_batch import Compression

from tests.broker.log.hostile import raw_batch, record_bytes

_SIZE = struct.Struct(">i")
_VERSION = 9
BOMB_RECORDS = 60
BOMB_VALUE = 950_000
VICTIM_INTERVAL_S = 0.01


def bomb_batch() -> tuple[bytes, int]:
    """The attack's batch and the bytes its records unpack to."""
    payload = b"".join(record_bytes(i, bytes(BOMB_VALUE)) for i in range(BOMB_RECORDS))
    return raw_batch(payload, count=BOMB_RECORDS, codec=Compression.ZSTD), len(payload)


def _frame(topic: str, batch: bytes) -> bytes:
    request = ProduceRequest(acks=1, timeout_ms=30000, topic_data=[
        TopicProduceData(name=topic, partition_data=[PartitionProduceData(index=0, records=batch)])])
    return request_frame(request, _VERSION, 0, "bomb")


def _recv_frame(sock: socket.socket) -> bytes:
    head = b""
    while len(head) < 4:
        chunk = sock.recv(4 - len(head))
        if not chunk:
            raise ConnectionError("broker closed the connection")
        head += chunk
    (size,) = _SIZE.unpack(head)
    data = bytearray()
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            raise ConnectionError("broker closed the connection")
        data += chunk
    return bytes(data)


def _attacker(port: int, frame: bytes, stop: threading.Event, out: list[tuple[int, int, int]]) -> None:
    """Send the bomb, wait for the answer, again; (answers, errors, largest throttle_time_ms)."""
    sock = socket.create_connection(("127.0.0.1", port))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    answers = errors = throttle = 0
    try:
        while not stop.is_set():
            sock.sendall(frame)
            r = Reader(_recv_frame(sock), 4)
            r.skip_tagged_fields()
            response = ProduceResponse.decode(r, _VERSION)
            answers += 1
            errors += sum(1 for t in response.responses for p in t.partition_responses if p.error_code)
            throttle = max(throttle, response.throttle_time_ms)
    finally:
        sock.close()
    out.append((answers, errors, throttle))


def _attack_process(port: int, topic: str, connections: int, go: Any, stop_event: Any, out: Any) -> None:
    batch, _ = bomb_batch()
    frame = _frame(topic, batch)
    go.wait()
    stop = threading.Event()
    results: list[tuple[int, int, int]] = []
    threads = [threading.Thread(target=_attacker, args=(port, frame, stop, results)) for _ in range(connections)]
    for t in threads:
        t.start()
    stop_event.wait()
    stop.set()
    for t in threads:
        t.join(120)
    out.put(results)


def _victim(bootstrap: str, topic: str, compression: str, ready: Any, stop: Any, marks: Any, out: Any) -> None:
    """Produce one record at a time; latencies (ns) tagged with the phase mark current when sent."""
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0, "acks": 1,
                         "compression.type": compression, "enable.idempotence": False, "log_level": 4})
    samples: list[tuple[int, int]] = []
    pending: list[int] = []

    def delivered(err: Any, _msg: Any) -> None:
        if err is None:
            samples.append((pending[0], time.perf_counter_ns() - pending[1]))

    for _ in range(20):  # connected and warm before the first phase
        producer.produce(topic, value=b"w" * 100)
        producer.flush(10)
    ready.put(compression)
    next_at = time.perf_counter()
    while not stop.is_set():
        pending[:] = [marks.value, time.perf_counter_ns()]
        producer.produce(topic, value=b"v" * 100, on_delivery=delivered)
        while len(producer) and not stop.is_set():
            producer.poll(0.05)
        next_at += VICTIM_INTERVAL_S
        delay = next_at - time.perf_counter()
        if delay > 0:
            time.sleep(delay)
        else:
            next_at = time.perf_counter()
    producer.flush(10)
    out.put((compression, samples))


def _pct(values: list[int], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))] / 1e6 if ordered else float("nan")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=10.0, help="length of each phase (default 10)")
    ap.add_argument("--repeat", type=int, default=2, help="baseline/attack rounds (default 2)")
    ap.add_argument("--attackers", type=int, default=4, help="attacking connections (default 4)")
    ap.add_argument("--override", action="append", default=[], metavar="KEY=VALUE", help="a broker setting")
    args = ap.parse_args()
    overrides = dict(o.split("=", 1) for o in args.override)
    batch, unpacked = bomb_batch()
    print(f"bomb batch: {len(batch)} bytes of zstd, {BOMB_RECORDS} records, unpacks to {unpacked / MIB:.1f} MiB")
    print(f"broker overrides: {overrides or 'none'}; {args.attackers} attacking connections; "
          f"victims send one 100-byte record every {VICTIM_INTERVAL_S * 1000:.0f} ms\n")
    ctx = mp.get_context("spawn")
    with tempfile.TemporaryDirectory(prefix="bench-bomb-") as tmp:
        broker = start_broker(Path(tmp) / "data", **{k.replace(".", "_"): v for k, v in overrides.items()})
        try:
            assert broker.proc is not None
            pid = broker.proc.pid
            create_topic(broker.bootstrap, "victim", 1)
            create_topic(broker.bootstrap, "bombs", 1)
            ready, out, stop = ctx.Queue(), ctx.Queue(), ctx.Event()
            marks = ctx.Value("i", -1)
            victims = [ctx.Process(target=_victim, args=(broker.bootstrap, "victim", c, ready, stop, marks, out))
                       for c in ("none", "lz4")]
            for p in victims:
                p.start()
            for _ in victims:
                ready.get(timeout=60)
            phases: list[tuple[str, float, float, int, tuple[int, int, int, int]]] = []
            for round_no in range(args.repeat):
                for attack in (False, True):
                    mark = len(phases)
                    attack_out, go, attack_stop = ctx.Queue(), ctx.Event(), ctx.Event()
                    attacker = None
                    if attack:
                        attacker = ctx.Process(target=_attack_process, args=(
                            broker.port, "bombs", args.attackers, go, attack_stop, attack_out))
                        attacker.start()
                        time.sleep(1.0)  # the process is up and has built its frame
                        go.set()
                        time.sleep(0.5)  # the attack is under way before the victims' phase starts
                    cpu0, t0 = cpu_seconds(pid), time.perf_counter()
                    marks.value = mark
                    time.sleep(args.seconds)
                    marks.value = -1
                    elapsed, cpu = time.perf_counter() - t0, cpu_seconds(pid) - cpu0
                    stats = (0, 0, 0, 0)
                    if attacker is not None:
                        attack_stop.set()
                        results = attack_out.get(timeout=180)
                        attacker.join(60)
                        stats = (sum(r[0] for r in results), sum(r[1] for r in results),
                                 max((r[2] for r in results), default=0), len(results))
                    phases.append((f"round {round_no + 1} {'attack' if attack else 'baseline'}", elapsed, cpu,
                                   mark, stats))
                    time.sleep(1.0)
            stop.set()
            samples: dict[str, list[tuple[int, int]]] = {}
            for _ in victims:
                compression, got = out.get(timeout=60)
                samples[compression] = got
            for p in victims:
                p.join(30)
        finally:
            broker.stop()
    return _report(phases, samples, unpacked)


def _report(phases: list[tuple[str, float, float, int, tuple[int, int, int, int]]],
            samples: dict[str, list[tuple[int, int]]], unpacked: int) -> int:
    print(f"{'phase':<20}{'victim':>7}{'acks':>7}{'p50 ms':>9}{'p99 ms':>9}   broker cpu   attack")
    ratios: dict[str, list[tuple[float, float]]] = {c: [] for c in samples}
    baseline: dict[str, tuple[float, float]] = {}
    for label, elapsed, cpu, mark, (answers, errors, throttle, conns) in phases:
        for compression, got in samples.items():
            lat = [ns for m, ns in got if m == mark]
            p50, p99 = _pct(lat, 0.5), _pct(lat, 0.99)
            attack = ""
            if conns:
                attack = (f"{answers / elapsed:.1f} bombs/s ({answers * unpacked / elapsed / MIB:.0f} MiB/s unpacked"
                          f", {errors} refused), max throttle_time_ms {throttle}")
            print(f"{label:<20}{compression:>7}{len(lat):>7}{p50:>9.2f}{p99:>9.2f}   {cpu / elapsed:>5.2f} cores   "
                  f"{attack}")
            if conns:
                base50, base99 = baseline[compression]
                ratios[compression].append((p50 / base50, p99 / base99))
            else:
                baseline[compression] = (p50, p99)
    print()
    worst = 0.0
    for compression, pairs in ratios.items():
        if not pairs:
            continue
        r50 = statistics.median(p for p, _ in pairs)
        r99 = statistics.median(p for _, p in pairs)
        worst = max(worst, r50, r99)
        print(f"attack / baseline, {compression} victim (median of rounds): p50 x{r50:.2f}, p99 x{r99:.2f}")
    print(f"target: <= 2 -> {'met' if worst <= 2 else 'NOT met'}")
    return 0 if worst <= 2 else 1


if __name__ == "__main__":
    sys.exit(main())
