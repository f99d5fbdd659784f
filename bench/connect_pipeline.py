"""Connect's data path per task vs a hand-written confluent-kafka loop doing the same work.

Run from the repository root::

    .venv/bin/python bench/connect_pipeline.py [--quick] [--lines N] [--repeat R] [--case string|json]
    .venv/bin/python bench/connect_pipeline.py --converters   # the converters alone, CPU per record
    .venv/bin/python bench/connect_pipeline.py --schema-converters   # JSON Schema / Protobuf vs Avro converters

For each converter case (``string``: StringConverter; ``json``: JsonConverter with
``schemas.enable=true``) and 100-byte lines, it measures in the same run:

- ``source``: FileStreamSource (1 task, a real :class:`EmbeddedConnect` standalone worker in
  this process) reading a file into a 1-partition topic, against a hand-written loop that
  reads the same file line by line and ``produce()``\\s each line (the JSON case wraps it in
  the same ``{"schema":...,"payload":...}`` envelope with ``json.dumps``), with the worker's
  producer settings (acks=all, max.in.flight 1, linger.ms 5);
- ``sink``: FileStreamSink (1 task) copying that topic to a file, against a hand-written
  ``consume(num_messages=500)`` loop writing each value (the JSON case ``json.loads`` it
  and writes the payload) as a line; its consumer has the ``fetch.queue.backoff.ms`` the
  worker gives sink tasks.

An observer thread watches the topic's high watermark (source) or the output file's size
(sink). Sources are timed from the start (``create_connector``, or the hand-written loop
creating its producer) to the last record acknowledged, so Connect's task start-up counts
against it; sinks from the first record written to the last, so that neither side's
consumer-group join is timed. Beside the wall-clock rate it
prints records per CPU-second of this process (every thread: the task, librdkafka's, the
observer; the broker is another process), which the other engineers' load disturbs less. Every output file is checked
to be identical to the input. The worker flushes offsets every 200 ms in the sink runs (the
FileStreamSink only flushes its file on an offset commit, so a long interval would hide
the last records from the observer) and every 1 s in the source runs.

The broker runs in its own process; the machine is shared and noisy, so runs are
interleaved and the best of ``--repeat`` is kept. Targets (issue 4): Connect >= 0.7 of the
hand-written loop, and >= 100,000 records/s per task with StringConverter. Exits 0 when all
are met, 1 otherwise.

``--metrics`` measures what Connect's metrics cost instead (issue 23): the Connect source and
sink runs of the string case, alternately with metrics recorded and scraped (the worker's
``/metrics`` page built once a second, in process) and with recording switched off
(``seaway.connect.runtime.metrics.RECORDING``), interleaved; it prints each side's records/s
and CPU microseconds per record (best and range) and the on/off ratios (target: within 3%).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import random
import string
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from confluent_kafka import Consumer, Producer, TopicPartition  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]  # noqa: E402
from seaway.connect.testing import EmbeddedBroker, EmbeddedConnect  # noqa: E402

LINE_BYTES = 100  # value bytes per line; the file has LINE_BYTES + 1 per line with the newline
PRODUCER_PROPS = {"acks": "all", "max.in.flight.requests.per.connection": "1", "enable.idempotence": "false",
                  "linger.ms": "5"}  # what the worker gives a source task's producer
CONVERTERS = {
    "string": {"key.converter": "org.apache.kafka.connect.storage.StringConverter",
               "value.converter": "org.apache.kafka.connect.storage.StringConverter"},
    "json": {"key.converter": "org.apache.kafka.connect.json.JsonConverter",
             "value.converter": "org.apache.kafka.connect.json.JsonConverter",
             "key.converter.schemas.enable": "true", "value.converter.schemas.enable": "true"},
}
STRING_SCHEMA_JSON = {"type": "string", "optional": False}
TIMEOUT = 120.0


@dataclass(frozen=True)
class Rate:
    """Records per wall-clock second, and per second of this process's CPU time (all threads)."""

    wall: float
    cpu: float


# --- observing progress from outside ------------------------------------------------------------

class Observer(threading.Thread):
    """Polls ``progress()`` (records done so far) until ``total``; times it from :meth:`start`.

    With ``from_first`` the clock starts at the first record seen instead (used for sinks, so
    the consumer-group join is not timed).
    """

    def __init__(self, progress: Callable[[], int], total: int, *, from_first: bool = False) -> None:
        super().__init__(daemon=True, name="bench-observer")
        self.progress, self.total, self.from_first = progress, total, from_first
        self.first_count = 0
        self.t_first = self.t_done = 0.0
        self.cpu_first = self.cpu_done = 0.0
        self.done = threading.Event()
        self.stop = threading.Event()

    def start(self) -> None:
        if not self.from_first:
            self.t_first, self.cpu_first = time.perf_counter(), time.process_time()
        super().start()

    def run(self) -> None:
        while not self.stop.is_set():
            count = self.progress()
            now, cpu = time.perf_counter(), time.process_time()
            if count and not self.t_first:
                self.t_first, self.cpu_first, self.first_count = now, cpu, count
            if count >= self.total:
                self.t_done, self.cpu_done = now, cpu
                self.done.set()
                return
            time.sleep(0.005)

    def wait(self, timeout: float = TIMEOUT) -> Rate:
        """Records per second and per CPU second from the first to the last observation."""
        if not self.done.wait(timeout):
            self.stop.set()
            raise TimeoutError(f"only {self.progress()} of {self.total} records after {timeout} s")
        records = self.total - self.first_count
        seconds, cpu = self.t_done - self.t_first, self.cpu_done - self.cpu_first
        if records <= 0 or seconds <= 0 or cpu <= 0:
            raise RuntimeError("too few records to time: use more --lines")
        return Rate(records / seconds, records / cpu)


def topic_progress(bootstrap: str, topic: str) -> Callable[[], int]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"bench-watch-{uuid.uuid4().hex}"})
    tp = TopicPartition(topic, 0)

    def progress() -> int:
        return int(consumer.get_watermark_offsets(tp, timeout=5, cached=False)[1])

    return progress


def file_progress(path: Path) -> Callable[[], int]:
    def progress() -> int:
        try:
            return path.stat().st_size // (LINE_BYTES + 1)
        except FileNotFoundError:
            return 0

    return progress


# --- the hand-written loops ------------------------------------------------------------------------

def hand_source(bootstrap: str, case: str, infile: Path, topic: str) -> None:
    """Read lines, produce each (a JSON envelope for ``json``), poll every 1000, flush at the end."""
    producer = Producer({"bootstrap.servers": bootstrap, **PRODUCER_PROPS})
    produce, poll = producer.produce, producer.poll
    encode = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
    with open(infile, "rb") as f:
        for n, line in enumerate(f, 1):
            if case == "json":
                value = encode({"schema": STRING_SCHEMA_JSON, "payload": line.rstrip(b"\n").decode()}).encode()
            else:
                value = line.rstrip(b"\n")
            while True:
                try:
                    produce(topic, value)
                    break
                except BufferError:
                    poll(0.05)
            if n % 1000 == 0:
                poll(0)
    if producer.flush(60):
        raise RuntimeError("hand-written producer: records not delivered")


def hand_sink(bootstrap: str, case: str, topic: str, outfile: Path, total: int) -> None:
    """Consume batches of 500 and append each value (the JSON payload for ``json``) as a line."""
    # fetch.queue.backoff.ms as the worker sets it for sink tasks (runtime/worker.py): with
    # librdkafka's 1 s default, a loop slower than the broker idles whenever its queue fills
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"bench-hand-{uuid.uuid4().hex}",
                         "auto.offset.reset": "earliest", "fetch.queue.backoff.ms": 10})
    consumer.subscribe([topic])
    seen = 0
    deadline = time.monotonic() + TIMEOUT
    try:
        with open(outfile, "wb") as out:
            while seen < total and time.monotonic() < deadline:
                messages = [m for m in consumer.consume(500, 0.5) if m.error() is None]
                if not messages:
                    continue
                if case == "json":
                    out.write(b"".join(json.loads(m.value())["payload"].encode() + b"\n" for m in messages))
                else:
                    out.write(b"".join(m.value() + b"\n" for m in messages))
                seen += len(messages)
    finally:
        consumer.close()


# --- the Connect runs ------------------------------------------------------------------------------

SCRAPE_INTERVAL_S = 1.0
"""--metrics: seconds between two builds of the worker's page (--scrape-interval)."""


async def _scrape_every_second(connect: EmbeddedConnect) -> None:
    """What Prometheus costs a worker: its /metrics page built periodically (as the REST route does)."""
    from prometheus_client import generate_latest
    from prometheus_client.registry import CollectorRegistry
    from seaway.connect.rest.metrics import worker_snapshot
    from seaway.connect.runtime.metrics import WorkerCollector

    while True:
        await asyncio.sleep(SCRAPE_INTERVAL_S)
        registry = CollectorRegistry(auto_describe=False)
        registry.register(WorkerCollector(await worker_snapshot(connect.herder)))
        generate_latest(registry)


@contextlib.asynccontextmanager
async def _scraping(connect: EmbeddedConnect, scrape: bool) -> AsyncIterator[None]:
    task = asyncio.create_task(_scrape_every_second(connect)) if scrape else None
    try:
        yield
    finally:
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


async def connect_source(bootstrap: str, case: str, infile: Path, topic: str, workdir: Path, total: int,
                         scrape: bool = False) -> Rate:
    props = {**CONVERTERS[case], "offset.flush.interval.ms": "1000"}
    async with EmbeddedConnect(bootstrap, workdir, worker_props=props) as connect, _scraping(connect, scrape):
        observer = Observer(topic_progress(bootstrap, topic), total)
        observer.start()
        name = f"bench-source-{topic}"
        await connect.create_connector(name, {
            "connector.class": "FileStreamSource", "file": str(infile), "topic": topic, "tasks.max": "1"})
        rate = await asyncio.to_thread(observer.wait)
        await connect.herder.delete_connector(name)
    return rate


async def connect_sink(bootstrap: str, case: str, topic: str, outfile: Path, workdir: Path, total: int,
                       scrape: bool = False) -> Rate:
    props = {**CONVERTERS[case], "offset.flush.interval.ms": "200"}
    async with EmbeddedConnect(bootstrap, workdir, worker_props=props) as connect, _scraping(connect, scrape):
        observer = Observer(file_progress(outfile), total, from_first=True)
        observer.start()
        name = f"bench-sink-{uuid.uuid4().hex}"  # a new consumer group each time
        await connect.create_connector(name, {
            "connector.class": "FileStreamSink", "file": str(outfile), "topics": topic, "tasks.max": "1"})
        rate = await asyncio.to_thread(observer.wait)
        await connect.herder.delete_connector(name)
    return rate


async def hand_source_run(bootstrap: str, case: str, infile: Path, topic: str, total: int) -> Rate:
    observer = Observer(topic_progress(bootstrap, topic), total)
    observer.start()
    await asyncio.to_thread(hand_source, bootstrap, case, infile, topic)
    return await asyncio.to_thread(observer.wait)


async def hand_sink_run(bootstrap: str, case: str, topic: str, outfile: Path, total: int) -> Rate:
    observer = Observer(file_progress(outfile), total, from_first=True)
    observer.start()
    await asyncio.to_thread(hand_sink, bootstrap, case, topic, outfile, total)
    return await asyncio.to_thread(observer.wait)


# --- driver ------------------------------------------------------------------------------------

@dataclass
class Best:
    """The best wall-clock and CPU rates of each measurement over the rounds."""

    wall: dict[str, float] = field(default_factory=dict)
    cpu: dict[str, float] = field(default_factory=dict)

    def keep(self, name: str, rate: Rate) -> None:
        self.wall[name] = max(self.wall.get(name, 0.0), rate.wall)
        self.cpu[name] = max(self.cpu.get(name, 0.0), rate.cpu)


def make_input(path: Path, lines: int) -> None:
    rng = random.Random(42)
    alphabet = (string.ascii_letters + string.digits + " ").encode()
    pool = bytes(rng.choice(alphabet) for _ in range(LINE_BYTES * 64))
    with open(path, "wb") as f:
        for i in range(lines):
            start = (i * 37) % (len(pool) - LINE_BYTES)
            f.write(pool[start:start + LINE_BYTES] + b"\n")


def create_topic(bootstrap: str, topic: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for fut in admin.create_topics([NewTopic(topic, 1, 1)], operation_timeout=10).values():
        fut.result(15)


def check_copy(infile: Path, outfile: Path, label: str) -> None:
    if outfile.read_bytes() != infile.read_bytes():
        raise RuntimeError(f"{label}: the output file differs from the input")


async def run_case(bootstrap: str, case: str, infile: Path, lines: int, rnd: int, tmp: Path, best: Best) -> None:
    """One interleaved round: Connect source, hand source, Connect sink, hand sink (sinks read Connect's topic)."""
    run = tmp / f"{case}-{rnd}"
    run.mkdir()
    connect_topic, hand_topic = f"connect-{case}-{rnd}", f"hand-{case}-{rnd}"
    create_topic(bootstrap, connect_topic)
    create_topic(bootstrap, hand_topic)
    best.keep("connect_source", await connect_source(bootstrap, case, infile, connect_topic, run / "w-src", lines))
    best.keep("hand_source", await hand_source_run(bootstrap, case, infile, hand_topic, lines))
    if rnd == 0:
        check_same_topic_bytes(bootstrap, connect_topic, hand_topic, case)
    out_connect, out_hand = run / "connect.out", run / "hand.out"
    best.keep("connect_sink", await connect_sink(bootstrap, case, connect_topic, out_connect, run / "w-sink", lines))
    best.keep("hand_sink", await hand_sink_run(bootstrap, case, connect_topic, out_hand, lines))
    check_copy(infile, out_connect, f"{case} Connect pipeline")
    check_copy(infile, out_hand, f"{case} hand-written pipeline")
    for path in (out_connect, out_hand):
        path.unlink()


def check_same_topic_bytes(bootstrap: str, a: str, b: str, case: str) -> None:
    """The hand-written producer wrote the very bytes Connect wrote (first record of each topic)."""
    values = []
    for topic in (a, b):
        consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"bench-check-{uuid.uuid4().hex}",
                             "auto.offset.reset": "earliest"})
        consumer.assign([TopicPartition(topic, 0, 0)])
        msg = consumer.poll(10)
        consumer.close()
        if msg is None or msg.error() is not None:
            raise RuntimeError(f"could not read back {topic}")
        values.append(msg.value())
    if values[0] != values[1]:
        raise RuntimeError(f"{case}: Connect and the hand-written loop wrote different bytes: {values}")


def report(case: str, best: Best) -> list[bool]:
    """Print the case's figures; return whether each target is met (wall-clock figures)."""
    met = []
    for side in ("source", "sink"):
        connect, hand = best.wall[f"connect_{side}"], best.wall[f"hand_{side}"]
        cpu_connect, cpu_hand = best.cpu[f"connect_{side}"], best.cpu[f"hand_{side}"]
        print(f"{case:<6} {side:<6}  Connect {connect:>9,.0f} rec/s  hand-written {hand:>9,.0f} rec/s  "
              f"ratio {connect / hand:.2f}   | per CPU-second: {cpu_connect:>9,.0f} vs {cpu_hand:>9,.0f}  "
              f"ratio {cpu_connect / cpu_hand:.2f}")
        met.append(connect / hand >= 0.7)
        if case == "string":
            met.append(connect >= 100_000)
    return met


async def metrics_async(args: argparse.Namespace) -> int:
    """``--metrics``: Connect runs with metrics recorded and scraped against runs without, interleaved."""
    from seaway.connect.runtime import metrics

    logging.basicConfig(level=logging.WARNING)
    case = "string"
    rates: dict[tuple[str, str], list[Rate]] = {}
    with tempfile.TemporaryDirectory(prefix="seaway-bench-connect-") as tmp_name:
        tmp = Path(tmp_name)
        infile = tmp / "input.txt"
        make_input(infile, args.lines)
        with EmbeddedBroker(tmp / "broker") as broker:
            for rnd in range(args.repeat):
                for mode in (("on", "off") if rnd % 2 == 0 else ("off", "on")):
                    metrics.RECORDING = mode == "on"
                    run = tmp / f"{mode}-{rnd}"
                    run.mkdir()
                    topic = f"metrics-{mode}-{rnd}"
                    create_topic(broker.bootstrap, topic)
                    rate = await connect_source(broker.bootstrap, case, infile, topic, run / "w-src", args.lines,
                                                scrape=mode == "on")
                    rates.setdefault(("source", mode), []).append(rate)
                    out = run / "out.txt"
                    rate = await connect_sink(broker.bootstrap, case, topic, out, run / "w-sink", args.lines,
                                              scrape=mode == "on")
                    rates.setdefault(("sink", mode), []).append(rate)
                    check_copy(infile, out, f"metrics {mode} pipeline")
                    out.unlink()
    metrics.RECORDING = True
    print(f"{args.lines:,} lines of {LINE_BYTES} bytes, StringConverter, {args.repeat} interleaved round(s)")
    worst_wall = worst_cpu = 1.0e9
    for side in ("source", "sink"):
        for mode in ("on", "off"):
            walls = [r.wall for r in rates[(side, mode)]]
            cpus = [1e6 / r.cpu for r in rates[(side, mode)]]
            print(f"{side:<7}{mode:<4} {max(walls):>10,.0f} rec/s (range {min(walls):,.0f}-{max(walls):,.0f})  "
                  f"CPU {min(cpus):.2f} us/record (range {min(cpus):.2f}-{max(cpus):.2f})")
        wall = max(r.wall for r in rates[(side, "on")]) / max(r.wall for r in rates[(side, "off")])
        cpu = max(r.cpu for r in rates[(side, "on")]) / max(r.cpu for r in rates[(side, "off")])
        worst_wall, worst_cpu = min(worst_wall, wall), min(worst_cpu, cpu)
        print(f"{side:<7}on/off best: throughput {wall:.3f}, records per CPU-second {cpu:.3f}")
    met = worst_wall >= 0.97 or worst_cpu >= 0.97
    print(f"worst on/off: throughput {worst_wall:.3f}, per CPU-second {worst_cpu:.3f} (target >= 0.97 on either):",
          "MET" if met else "MISSED")
    return 0 if met else 1


async def main_async(args: argparse.Namespace) -> int:
    logging.basicConfig(level=logging.WARNING)
    cases = [args.case] if args.case else ["string", "json"]
    with tempfile.TemporaryDirectory(prefix="seaway-bench-connect-") as tmp_name:
        tmp = Path(tmp_name)
        infile = tmp / "input.txt"
        make_input(infile, args.lines)
        with EmbeddedBroker(tmp / "broker") as broker:
            results = {case: Best() for case in cases}
            for rnd in range(args.repeat):
                for case in cases:
                    await run_case(broker.bootstrap, case, infile, args.lines, rnd, tmp, results[case])
            print(f"{args.lines:,} lines of {LINE_BYTES} bytes, best of {args.repeat}, records/s per task")
            met: list[bool] = []
            for case in cases:
                met += report(case, results[case])
            print("targets: Connect/hand-written >= 0.70; StringConverter >= 100,000 rec/s per task:",
                  "met" if all(met) else "NOT met")
            return 0 if all(met) else 1


def converters_only(records: int, repeat: int) -> int:
    """``--converters``: CPU microseconds per record of the converters alone, no broker, no worker.

    JDBC-like Struct rows (int64, string, double, boolean, optional string, Timestamp,
    Decimal), schemaless maps and string values through JsonConverter with and without
    schemas, and StringConverter: ``from_connect_data`` and ``to_connect_data`` of each
    value, the process's CPU time, best of ``repeat``. Compare two trees by putting the
    other one's ``connect/`` first on ``PYTHONPATH``.
    """
    import datetime
    import decimal

    from seaway.connect.api import Decimal, Schema, SchemaBuilder, Struct, Timestamp
    from seaway.connect.converters import JsonConverter, StringConverter

    row = (SchemaBuilder.struct().name("row").field("id", Schema.INT64_SCHEMA).field("name", Schema.STRING_SCHEMA)
           .field("price", Schema.FLOAT64_SCHEMA).field("active", Schema.BOOLEAN_SCHEMA)
           .field("note", Schema.OPTIONAL_STRING_SCHEMA).field("created", Timestamp.builder().build())
           .field("amount", Decimal.builder(2).build()).build())
    start = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
    rows = [Struct(row).put("id", i).put("name", f"customer-{i:06d}").put("price", 12.5 + i % 100)
            .put("active", i % 2 == 0).put("note", None if i % 3 else "hello")
            .put("created", start + datetime.timedelta(seconds=i)).put("amount", decimal.Decimal(i) / 100)
            for i in range(records)]
    maps = [{"id": i, "name": f"customer-{i:06d}", "price": 12.5 + i % 100, "active": True, "tags": ["a", "b"]}
            for i in range(records)]
    lines = ["x" * LINE_BYTES for _ in range(records)]

    def json_converter(schemas: bool) -> JsonConverter:
        converter = JsonConverter()
        converter.configure({"schemas.enable": str(schemas).lower()}, False)
        return converter

    def cpu_us(fn: Callable[[], object]) -> float:
        best = float("inf")
        for _ in range(repeat):
            began = time.process_time()
            fn()
            best = min(best, time.process_time() - began)
        return best / records * 1e6

    cases: list[tuple[str, object, object, list[object]]] = [
        ("JsonConverter, Struct rows, schemas.enable=true", json_converter(True), row, list(rows)),
        ("JsonConverter, Struct rows, schemas.enable=false", json_converter(False), row, list(rows)),
        ("JsonConverter, schemaless maps, schemas.enable=true", json_converter(True), None, list(maps)),
        ("JsonConverter, schemaless maps, schemas.enable=false", json_converter(False), None, list(maps)),
        ("JsonConverter, string values, schemas.enable=true", json_converter(True), Schema.STRING_SCHEMA, list(lines)),
        ("StringConverter, string values", StringConverter(), Schema.STRING_SCHEMA, list(lines)),
    ]
    print(f"{records:,} records, best of {repeat}, CPU microseconds per record (encode = from_connect_data, "
          "decode = to_connect_data)")
    for label, converter, schema, values in cases:
        if isinstance(converter, StringConverter):
            converter.configure({}, False)
        encode, decode = converter.from_connect_data, converter.to_connect_data  # type: ignore[attr-defined]
        encoded = [encode("t", schema, v) for v in values]
        out = cpu_us(lambda: [encode("t", schema, v) for v in values])  # noqa: B023  (called in this iteration)
        back = cpu_us(lambda: [decode("t", b) for b in encoded])  # noqa: B023
        print(f"  {label:<55} encode {out:6.2f}   decode {back:6.2f}")
    return 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="100k lines, one round (under a minute)")
    parser.add_argument("--lines", type=int, default=None)
    parser.add_argument("--repeat", type=int, default=None)
    parser.add_argument("--case", choices=sorted(CONVERTERS), default=None)
    parser.add_argument("--converters", action="store_true",
                        help="CPU per record of the converters alone (no broker, no worker); --lines records")
    parser.add_argument("--metrics", action="store_true",
                        help="Connect with metrics recorded and scraped against without (string case)")
    parser.add_argument("--scrape-interval", type=float, default=1.0, help="--metrics: seconds between scrapes")
    parser.add_argument("--schema-converters", action="store_true",
                        help="records/s of the JSON Schema and Protobuf converters against the AvroConverter "
                             "(bench/registry_converters.py)")
    args = parser.parse_args()
    if args.lines is None:
        args.lines = 100_000 if args.quick else 500_000
    if args.repeat is None:
        args.repeat = 1 if args.quick else 3
    if args.schema_converters:
        from bench.registry_converters import main as schema_converters_main

        sys.exit(schema_converters_main(["--quick"] if args.quick else []))
    if args.converters:
        sys.exit(converters_only(min(args.lines, 20_000), max(args.repeat, 3)))
    if args.metrics and args.repeat < 2:
        args.repeat = 2
    global SCRAPE_INTERVAL_S
    SCRAPE_INTERVAL_S = args.scrape_interval
    sys.exit(asyncio.run(metrics_async(args) if args.metrics else main_async(args)))


if __name__ == "__main__":
    main()
