"""What transactions cost on the Seaway broker, each figure against a baseline run alongside.

Run from the repository root::

    .venv/bin/python bench/transactions.py [--quick] [--repeat N]

1. **Transactional produce.** One confluent-kafka (librdkafka) producer writes 1,000,000
   100-byte records (``--quick``: 200,000) to a 3-partition topic, acknowledged
   (``acks=all``), in transactions of 1,000 and of 10,000 records (``begin_transaction``,
   produce, ``commit_transaction``), against the same producer without a transactional.id
   (idempotent, the transactional producer's own delivery settings). ``ratio`` =
   transactional / plain records/s (target >= 0.8 at 10,000). The runs are interleaved
   and the best of each kept; the median of the paired ratios is printed too. A commit
   waits for every record of its transaction, so the plain producer is also run with a
   ``flush()`` at the same boundaries: that ratio is what the transaction protocol itself
   (AddPartitionsToTxn, EndTxn, the markers) costs.
2. **read_committed fetch.** A topic of 1,000,000 records (``--quick``: 200,000) written
   by a transactional producer in transactions of 1,000, every 10th aborted (the aborted
   records stay in the log: the consumer drops them with the fetch response's
   aborted-transaction list). A raw-socket Fetch v11 loop (max_bytes 50 MiB, the next
   request once the previous answer is read, so the client is not the bottleneck) reads
   the whole topic 5 times (quick: 2) with ``isolation_level=1`` and with ``0``,
   interleaved; ``ratio`` = read_committed / read_uncommitted MiB/s (target >= 0.9).
   librdkafka consumers at both isolation levels are printed for reference (there the
   client's filtering is included).

The worker half of issue 20 (exactly-once FileStreamSource vs at-least-once) is ``bench/eos_source.py``.
"""

from __future__ import annotations

import argparse
import socket
import statistics
import struct
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import MIB, create_topic, plain_connect, recv_exact, start_broker
from seaway.protocol.framing import request_frame
from seaway.protocol.messages.fetch_request import FetchPartition, FetchRequest, FetchTopic
from seaway.protocol.messages.fetch_response import FetchResponse
from seaway.protocol.primitives import Reader

PARTITIONS = 3
RECORD = b"r" * 100
FETCH_VERSION = 11
MAX_BYTES = 50 * MIB
PARTITION_MAX_BYTES = 8 * MIB
_SIZE = struct.Struct(">i")
_BATCH = struct.Struct(">qi")  # baseOffset, batchLength
_DELTA = struct.Struct(">i")  # lastOffsetDelta at byte 23
_COUNT = struct.Struct(">i")  # recordCount at byte 57

PRODUCER = {"linger.ms": 5, "batch.num.messages": 10000, "batch.size": 1048576, "queue.buffering.max.messages":
            1000000, "queue.buffering.max.kbytes": 1048576, "log_level": 4}


def produce(bootstrap: str, topic: str, count: int, txn_size: int | None, abort_every: int = 0,
            flush_every: int | None = None) -> float:
    """Seconds to produce and have acknowledged ``count`` records; in transactions of
    ``txn_size`` (None: no transactions, then ``flush()`` every ``flush_every`` records if
    given), every ``abort_every``-th one aborted."""
    from confluent_kafka import Producer

    conf = {"bootstrap.servers": bootstrap, **PRODUCER}
    if txn_size is None:
        conf["enable.idempotence"] = True
    else:
        conf["transactional.id"] = f"bench-{time.monotonic_ns()}"
    producer = Producer(conf)
    if txn_size is not None:
        producer.init_transactions(30)
        producer.begin_transaction()
    producer.produce(topic, b"warm-up", partition=0)  # connections, metadata, producer id: before t0
    if txn_size is not None:
        producer.commit_transaction(30)
    producer.flush(30)
    step = txn_size or flush_every or count
    t0 = time.perf_counter()
    sent = n = 0
    while sent < count:
        if txn_size is not None:
            producer.begin_transaction()
        for i in range(min(step, count - sent)):
            while True:
                try:
                    producer.produce(topic, RECORD, partition=i % PARTITIONS)
                    break
                except BufferError:
                    producer.poll(0.01)
        sent += min(step, count - sent)
        n += 1
        if txn_size is None:
            if flush_every:
                producer.flush(60)
            continue
        if abort_every and n % abort_every == 0:
            producer.flush(60)
            producer.abort_transaction(60)
        else:
            producer.commit_transaction(60)
    if producer.flush(60):
        raise RuntimeError("records left unacknowledged")
    return time.perf_counter() - t0


def _fetch_frame(topic: str, offsets: list[int], correlation_id: int, isolation: int) -> bytes:
    request = FetchRequest(
        replica_id=-1, max_wait_ms=500, min_bytes=1, max_bytes=MAX_BYTES, isolation_level=isolation,
        session_id=0, session_epoch=-1,
        topics=[FetchTopic(topic=topic, partitions=[
            FetchPartition(partition=p, fetch_offset=o, partition_max_bytes=PARTITION_MAX_BYTES)
            for p, o in enumerate(offsets)
        ])],
    )
    return request_frame(request, FETCH_VERSION, correlation_id, "seaway-bench")



def raw_fetch(port: int, topic: str, ends: list[int], isolation: int, passes: int) -> tuple[float, int, int]:
    """Fetch every partition from 0 to its end, ``passes`` times: (seconds, batch bytes,
    aborted-list entries)."""
    buf = bytearray(MAX_BYTES + PARTITION_MAX_BYTES + MIB)
    view = memoryview(buf)
    head = bytearray(4)
    total = aborted = corr = 0
    offsets = [0] * len(ends)
    with plain_connect(port) as sock:
        t0 = time.perf_counter()
        for _ in range(passes):
            offsets = [0] * len(ends)
            total, aborted, corr = _fetch_pass(sock, view, head, topic, ends, offsets, isolation,
                                               (total, aborted, corr))
        return time.perf_counter() - t0, total, aborted


def _fetch_pass(sock: socket.socket, view: memoryview, head: bytearray, topic: str, ends: list[int],
                offsets: list[int], isolation: int, counts: tuple[int, int, int]) -> tuple[int, int, int]:
    total, aborted, corr = counts
    while offsets != ends:
        corr += 1
        sock.sendall(_fetch_frame(topic, offsets, corr, isolation))
        recv_exact(sock, memoryview(head))
        (size,) = _SIZE.unpack(head)
        recv_exact(sock, view[:size])
        response = FetchResponse.decode(Reader(view[:size], 4), FETCH_VERSION)
        for t in response.responses:
            for p in t.partitions:
                if p.error_code:
                    raise RuntimeError(f"fetch error {p.error_code} on partition {p.partition_index}")
                aborted += len(p.aborted_transactions or ())
                data = p.records
                assert isinstance(data, memoryview)
                pos, end = 0, len(data)
                while pos < end:
                    base, length = _BATCH.unpack_from(data, pos)
                    (delta,) = _DELTA.unpack_from(data, pos + 23)
                    offsets[p.partition_index] = base + delta + 1
                    pos += length + 12
                total += end
    return total, aborted, corr


def librdkafka_read(bootstrap: str, topic: str, isolation: str, expected: int) -> tuple[float, int]:
    """(seconds, records) for a confluent-kafka consumer reading the topic to its end."""
    from confluent_kafka import Consumer, KafkaError, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "bench", "enable.auto.commit": False,
                         "isolation.level": isolation, "enable.partition.eof": True,
                         "fetch.max.bytes": MAX_BYTES, "max.partition.fetch.bytes": PARTITION_MAX_BYTES,
                         "log_level": 4})
    consumer.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
    seen, ended = 0, set[int]()
    t0 = time.perf_counter()
    try:
        while len(ended) < PARTITIONS and time.perf_counter() - t0 < 300:
            for msg in consumer.consume(100_000, timeout=1.0):
                err = msg.error()
                if err is not None:
                    if err.code() == KafkaError._PARTITION_EOF:
                        ended.add(msg.partition())
                        continue
                    raise RuntimeError(str(err))
                seen += 1
        elapsed = time.perf_counter() - t0
    finally:
        consumer.close()
    if seen != expected:
        raise RuntimeError(f"{isolation}: read {seen} records, expected {expected}")
    return elapsed, seen


def _rate(count: int, seconds: float) -> str:
    return f"{count / seconds:>12,.0f} rec/s"


def produce_section(bootstrap: str, count: int, repeat: int) -> dict[int, float]:
    print(f"transactional produce: {count:,} records of 100 bytes, {PARTITIONS} partitions, acks=all, "
          f"{repeat} interleaved run(s) each, best kept")
    worst: dict[int, float] = {}
    for txn_size in (1000, 10000):
        plain: list[float] = []
        flushed: list[float] = []
        txn: list[float] = []
        for run in range(repeat):
            for rates, kind, size, flush in ((plain, "p", None, None), (flushed, "f", None, txn_size),
                                             (txn, "t", txn_size, None)):
                topic = f"bench-{kind}-{txn_size}-{run}"
                create_topic(bootstrap, topic, PARTITIONS)
                rates.append(count / produce(bootstrap, topic, count, size, flush_every=flush))
        ratio = max(txn) / max(plain)
        paired = statistics.median(t / p for t, p in zip(txn, plain, strict=True))
        worst[txn_size] = ratio
        print(f"  transactions of {txn_size:>6,}   plain {max(plain):>10,.0f} rec/s   "
              f"transactional {max(txn):>10,.0f} rec/s   ratio {ratio:.2f} (median of pairs {paired:.2f})")
        print(f"  {'':24}plain, flush() every {txn_size:,} {max(flushed):>10,.0f} rec/s   "
              f"ratio {max(txn) / max(flushed):.2f} (what the transaction protocol itself costs)")
    return worst


def fetch_section(broker_port: int, bootstrap: str, count: int, repeat: int, passes: int) -> float:
    topic = "bench-aborted"
    create_topic(bootstrap, topic, PARTITIONS)
    txn_size = 1000
    t0 = time.perf_counter()
    produce(bootstrap, topic, count, txn_size, abort_every=10)
    print(f"\nread_committed fetch: {count:,} records in transactions of {txn_size:,}, every 10th aborted "
          f"(filled in {time.perf_counter() - t0:.1f} s)")
    from confluent_kafka import Consumer, TopicPartition

    probe = Consumer({"bootstrap.servers": bootstrap, "group.id": "probe", "log_level": 4})
    ends = [probe.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] for p in range(PARTITIONS)]
    probe.close()
    committed_runs: list[tuple[float, int, int]] = []
    uncommitted_runs: list[tuple[float, int, int]] = []
    for _ in range(repeat):
        uncommitted_runs.append(raw_fetch(broker_port, topic, ends, 0, passes))
        committed_runs.append(raw_fetch(broker_port, topic, ends, 1, passes))
    best_c = min(committed_runs)
    best_u = min(uncommitted_runs)
    mib_c, mib_u = best_c[1] / best_c[0] / MIB, best_u[1] / best_u[0] / MIB
    paired = statistics.median((u[0] / c[0]) for c, u in zip(committed_runs, uncommitted_runs, strict=True))
    ratio = mib_c / mib_u
    print(f"  raw fetch read_uncommitted   {mib_u:>8.1f} MiB/s   ({best_u[1] / MIB:.0f} MiB in {best_u[0]:.2f} s, "
          f"{passes} passes over the topic)")
    print(f"  raw fetch read_committed     {mib_c:>8.1f} MiB/s   ({best_c[2]} aborted-transaction entries)")
    print(f"  ratio {ratio:.2f}   (target >= 0.9; median of {repeat} paired runs {paired:.2f})")
    committed_expected = count - count // 10 + 1  # + the producer's warm-up record
    seconds, seen = librdkafka_read(bootstrap, topic, "read_uncommitted", count + 1)
    print(f"  librdkafka read_uncommitted {_rate(seen, seconds)}")
    seconds, seen = librdkafka_read(bootstrap, topic, "read_committed", committed_expected)
    print(f"  librdkafka read_committed   {_rate(seen, seconds)}   (aborted records dropped by the client)")
    return ratio


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="small volumes, one run each")
    ap.add_argument("--repeat", type=int, default=None, help="runs per figure (default 3, quick 1)")
    args = ap.parse_args()
    repeat = args.repeat or (1 if args.quick else 3)
    produce_count = 200_000 if args.quick else 1_000_000
    fetch_count = 200_000 if args.quick else 1_000_000
    passes = 2 if args.quick else 5
    with tempfile.TemporaryDirectory(prefix="seaway-bench-") as tmp:
        broker = start_broker(Path(tmp) / "broker")
        try:
            print(f"broker on {broker.bootstrap}\n")
            worst = produce_section(broker.bootstrap, produce_count, repeat)
            fetch_ratio = fetch_section(broker.port, broker.bootstrap, fetch_count, repeat, passes)
        finally:
            broker.stop()
    ok_produce = worst[10000] >= 0.8
    ok_fetch = fetch_ratio >= 0.9
    print(f"\ntransactions of 10,000 vs plain {worst[10000]:.2f} (target 0.8): {'MET' if ok_produce else 'MISSED'}; "
          f"read_committed vs read_uncommitted {fetch_ratio:.2f} (target 0.9): {'MET' if ok_fetch else 'MISSED'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
