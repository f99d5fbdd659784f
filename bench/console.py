"""Web console benchmark: server-side time to first byte of its pages at scale, and the message browser's rate.

Issue 33's figures, on real servers: a broker, a registry and a Connect worker (processes on
loopback), filled as the scale test fills them (1,000 topics, 200 connectors, 100 consumer
groups, 20 subjects) plus one topic of ``--records`` Avro records (Confluent frames of a
registered 4-field schema), and ``seaway console`` in its own process. Then:

* **time to first byte** (request sent -> first body byte received, over a kept-alive
  connection, so it is the server's time plus loopback) of the topics, connectors, groups and
  message-browser (newest 100 records) pages, ``--requests`` times each after warm-up, p50 and
  p99. The reference measured in the same run, interleaved, is the console's bare ``/healthz``
  (same server, same middleware, no work): load on the machine shows in both.
* **records/s streamed** by the message browser: one page of ``--records`` records read from
  the start, decoded through the registry and rendered; the time to the last byte divided by
  the rows the page holds. The ceiling, in this process: a bare confluent-kafka Consumer loop
  over the same records with the same fastavro decode, no HTML (what no browser can beat).

Targets (issue 33): p99 <= 300 ms per page, >= 10,000 decoded messages/s. Exit status 0 when
both are met. Usage, from the repository root::

    .venv/bin/python bench/console.py [--records 20000] [--requests 40] [--quick]
"""

from __future__ import annotations

import argparse
import io
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # for tests.* (run as `python bench/console.py`)
    sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402

from tests.console.console_support import ConsoleProcess, Stack  # noqa: E402
from tests.console.test_console_scale import populate  # noqa: E402

TOPIC = "bench-messages"
SCHEMA = {"type": "record", "name": "Order", "fields": [
    {"name": "id", "type": "long"}, {"name": "customer", "type": "string"},
    {"name": "amount", "type": "double"}, {"name": "note", "type": ["null", "string"], "default": None}]}
PAGES = {"topics": "/topics", "connectors": "/connectors", "groups": "/groups",
         "message browser": f"/topics/{TOPIC}/messages?limit=100"}


def produce(stack: Stack, records: int) -> None:
    import fastavro
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]

    admin = AdminClient({"bootstrap.servers": stack.bootstrap})
    admin.create_topics([NewTopic(TOPIC, 1, 1)])[TOPIC].result(timeout=60)
    answer = httpx.post(f"{stack.registry_url}/subjects/{TOPIC}-value/versions", json={"schema": json.dumps(SCHEMA)},
                        headers={"Content-Type": "application/vnd.schemaregistry.v1+json"}, timeout=30)
    schema_id = int(answer.json()["id"])
    parsed = fastavro.parse_schema(SCHEMA)
    producer = Producer({"bootstrap.servers": stack.bootstrap, "linger.ms": 20, "batch.num.messages": 5000})
    try:
        for i in range(records):
            out = io.BytesIO()
            out.write(b"\0" + schema_id.to_bytes(4, "big"))
            fastavro.schemaless_writer(out, parsed, {"id": i, "customer": f"customer-{i % 977}", "amount": i * 1.25,
                                                     "note": None if i % 3 else f"note {i}"})
            producer.produce(TOPIC, key=f"k{i}".encode(), value=out.getvalue())
            if i % 10_000 == 0:
                producer.poll(0)
        assert producer.flush(60) == 0
    finally:
        producer.flush(5)


def ttfb(client: httpx.Client, path: str) -> float:
    started = time.perf_counter()
    with client.stream("GET", path) as response:
        chunks = response.iter_raw()
        next(chunks)
        elapsed = time.perf_counter() - started
        for _ in chunks:
            pass
    if response.status_code != 200:
        raise SystemExit(f"{path}: HTTP {response.status_code}")
    return elapsed


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def browser_rate(client: httpx.Client, records: int) -> tuple[float, int]:
    started = time.perf_counter()
    body = client.get(f"/topics/{TOPIC}/messages?mode=oldest&limit={records}").text
    elapsed = time.perf_counter() - started
    rows = body.count("<tr><td class=\"num\">")
    return rows / elapsed, rows


def ceiling_rate(stack: Stack, records: int) -> float:
    """A bare consumer loop with the same decode (fastavro, schema known), no rendering."""
    import fastavro
    from confluent_kafka import Consumer, TopicPartition

    parsed = fastavro.parse_schema(SCHEMA)
    consumer = Consumer({"bootstrap.servers": stack.bootstrap, "group.id": "bench-ceiling",
                         "enable.auto.commit": False, "enable.partition.eof": True})
    try:
        consumer.assign([TopicPartition(TOPIC, 0, 0)])
        started = time.perf_counter()
        seen = 0
        while seen < records:
            for m in consumer.consume(500, 1.0):
                if m.error() is None:
                    payload = m.value()
                    fastavro.schemaless_reader(io.BytesIO(payload[5:]), parsed, None)
                    seen += 1
        return seen / (time.perf_counter() - started)
    finally:
        consumer.close()


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--records", type=int, default=20_000)
    p.add_argument("--requests", type=int, default=40)
    p.add_argument("--quick", action="store_true", help="fewer requests and records (a smoke run)")
    args = p.parse_args()
    if args.quick:
        args.records, args.requests = 5000, 10
    with tempfile.TemporaryDirectory(prefix="bench-console-") as tmp:
        stack = Stack(Path(tmp), "bench-console", avro=False)
        try:
            stack.start()
            started = time.monotonic()
            populate(stack)
            produce(stack, args.records)
            print(f"filled in {time.monotonic() - started:.0f} s: 1,000 topics, 200 connectors, 100 groups, "
                  f"{args.records:,} Avro records")
            ceiling_override = f"messages.max.records={args.records}"
            with ConsoleProcess(*stack.console_args(), "--override", ceiling_override) as console, \
                    httpx.Client(base_url=console.url, timeout=120) as client:
                deadline = time.monotonic() + 60
                while client.get("/groups").text.count('href="/groups/scale-group-') < 100:
                    if time.monotonic() > deadline:
                        raise SystemExit("the console's lag watcher never sampled the 100 groups")
                    time.sleep(0.5)
                for path in [*PAGES.values(), "/healthz"]:
                    for _ in range(3):
                        ttfb(client, path)  # warm-up: schemas cached, connections open
                times: dict[str, list[float]] = {name: [] for name in [*PAGES, "bare /healthz"]}
                for _ in range(args.requests):
                    for name, path in PAGES.items():
                        times[name].append(ttfb(client, path))
                        times["bare /healthz"].append(ttfb(client, "/healthz"))
                print(f"\ntime to first byte, {args.requests} requests each (interleaved with a bare /healthz):")
                print(f"{'page':<18}{'p50 ms':>9}{'p99 ms':>9}")
                worst = 0.0
                for name, values in times.items():
                    p99 = pct(values, 0.99) * 1000
                    if name in PAGES:
                        worst = max(worst, p99)
                    print(f"{name:<18}{statistics.median(values) * 1000:>9.1f}{p99:>9.1f}")
                rates = [browser_rate(client, args.records) for _ in range(3)]
                rate, rows = sorted(rates)[1]
            ceiling = ceiling_rate(stack, args.records)
        finally:
            stack.stop()
    print(f"\nmessage browser: {rows:,} records decoded and streamed in one page: {rate:,.0f} records/s "
          f"(median of 3); bare consumer + fastavro ceiling {ceiling:,.0f} records/s: ratio {rate / ceiling:.2f}")
    met = worst <= 300 and rate >= 10_000 and rows == args.records
    print(f"\ntargets (p99 <= 300 ms per page, >= 10,000 records/s): {'met' if met else 'NOT met'} "
          f"(worst page p99 {worst:.0f} ms)")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
