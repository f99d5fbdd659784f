"""The broker does work on more than one core at once under compressed produce load (issue 34).

The broker is one event loop (docs/broker.md, "One event loop: the cost of a request"), but the
work that grows with the data is not all on it: a compressed batch is decompressed and its
records walked on the ``num.io.threads`` validation threads, without the GIL
(``seaway.broker.decompression``), while the loop goes on reading, checking CRCs and appending
other connections' requests. This test loads a real broker process over loopback with zstd
Produce requests on four connections and reads each of the broker's threads' CPU time from
``/proc/<pid>/task/*/stat``: some half-second must hold more CPU time of the broker than the
half-second itself (two cores busy at once), with both the event loop thread and the validation
threads doing part of it. It says nothing about uncompressed requests: those are checked on the
event loop only (docs/broker.md says why and what that costs).

The client sends the same pre-built request again and again over raw sockets (no client
library, no compression in the test), so the test's own CPU stays small beside the broker's.
"""

from __future__ import annotations

import os
import random
import socket
import struct
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]  # re-exported without __all__
from seaway.protocol.messages.produce_request import PartitionProduceData, ProduceRequest, TopicProduceData
from seaway.protocol.messages.produce_response import ProduceResponse
from seaway.protocol.primitives import Reader, Writer
from seaway.protocol.record_batch import Compression

from tests.broker.limits.wire import recv_exactly
from tests.broker.log.hostile import raw_batch, record_bytes
from tests.support.broker import BrokerProcess

CONNECTIONS = 4
RECORDS = 800
WINDOW_S = 0.5
DEADLINE_S = 60.0
_SIZE = struct.Struct(">i")
_VERSION = 9
_TICK_S = 1.0 / os.sysconf("SC_CLK_TCK")


def _batch(seed: int) -> bytes:
    """~800 KB of text-like 1 KB records (zstd packs them ~4x), under the small threads' 1 MiB."""
    rng = random.Random(seed)
    words = [f"{w}-{rng.randrange(10**6)}" for w in ("order", "customer", "amount", "status", "region")]
    values = [" ".join(rng.choice(words) for _ in range(70)).encode()[:1000] for _ in range(RECORDS)]
    payload = b"".join(record_bytes(i, v) for i, v in enumerate(values))
    return raw_batch(payload, count=RECORDS, codec=Compression.ZSTD)


def _frame(topic: str, partition: int) -> bytes:
    request = ProduceRequest(acks=1, timeout_ms=30000, topic_data=[TopicProduceData(
        name=topic, partition_data=[PartitionProduceData(index=partition, records=_batch(partition))])])
    w = Writer()
    w.int16(ProduceRequest.API_KEY)
    w.int16(_VERSION)
    w.int32(0)
    w.nullable_string("cores-test", False)
    w.empty_tagged_fields()
    request.encode(w, _VERSION)
    body = w.getvalue()
    return _SIZE.pack(len(body)) + body


def _send_loop(port: int, frame: bytes, stop: threading.Event, errors: list[str]) -> None:
    """Send the request, read the answer (it must be an ack), again, until told to stop."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
            while not stop.is_set():
                sock.sendall(frame)
                (size,) = _SIZE.unpack(recv_exactly(sock, 4))
                r = Reader(recv_exactly(sock, size), 4)
                r.skip_tagged_fields()
                response = ProduceResponse.decode(r, _VERSION)
                codes = [p.error_code for t in response.responses for p in t.partition_responses]
                if any(codes):
                    errors.append(f"produce answered error codes {codes}")
                    return
    except (OSError, ConnectionError) as e:
        if not stop.is_set():
            errors.append(repr(e))


def _thread_cpu(pid: int) -> dict[int, float]:
    """CPU seconds (user + system) of each live thread of process ``pid``, by thread id."""
    out: dict[int, float] = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/stat", encoding="ascii") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue  # the thread ended meanwhile
        out[int(tid)] = (int(fields[11]) + int(fields[12])) * _TICK_S  # utime, stime (fields 14, 15)
    return out


@pytest.fixture
def loaded_broker(tmp_path: Path) -> Iterator[BrokerProcess]:
    # the per-connection decompression quota (64 MiB/s) would throttle this load: lifted here
    with BrokerProcess(tmp_path / "data", {"connections.max.decompressed.bytes.per.second": str(2**40)}) as b:
        yield b


@pytest.mark.timeout(180)
def test_two_cores_do_broker_work_at_once_under_compressed_produce(loaded_broker: BrokerProcess) -> None:
    assert loaded_broker.proc is not None
    pid = loaded_broker.proc.pid
    topic = "cores"
    admin = AdminClient({"bootstrap.servers": loaded_broker.bootstrap})
    admin.create_topics([NewTopic(topic, CONNECTIONS, 1)])[topic].result(30)
    port = int(loaded_broker.bootstrap.rsplit(":", 1)[1])
    frames = [_frame(topic, p) for p in range(CONNECTIONS)]
    stop = threading.Event()
    errors: list[str] = []
    senders = [threading.Thread(target=_send_loop, args=(port, f, stop, errors), daemon=True) for f in frames]
    for s in senders:
        s.start()
    best: tuple[float, float, float] = (0.0, 0.0, 0.0)
    try:
        deadline = time.monotonic() + DEADLINE_S
        before, t0 = _thread_cpu(pid), time.monotonic()
        while time.monotonic() < deadline and not errors:
            time.sleep(WINDOW_S)
            after, t1 = _thread_cpu(pid), time.monotonic()
            spent = {tid: cpu - before.get(tid, 0.0) for tid, cpu in after.items()}
            loop, others, window = spent.get(pid, 0.0), sum(v for t, v in spent.items() if t != pid), t1 - t0
            share = (loop + others) / window
            if share > best[0]:
                best = (share, loop / window, others / window)
            if share > 1.05 and loop / window >= 0.1 and others / window >= 0.1:
                break
            before, t0 = after, t1
    finally:
        stop.set()
        for s in senders:
            s.join(30)
    assert not errors, errors
    share, loop_share, others_share = best
    assert share > 1.05 and loop_share >= 0.1 and others_share >= 0.1, (
        f"no half-second of {DEADLINE_S:.0f} s had the broker on more than one core: best {share:.2f} cores "
        f"(event loop {loop_share:.2f}, other threads {others_share:.2f})")
