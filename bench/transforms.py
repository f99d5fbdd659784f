"""Per-record cost of a 5-SMT chain on the source path (poll -> SMTs -> convert -> produce).

Run from the repository root::

    .venv/bin/python bench/transforms.py [--records N] [--repeat R] [--no-broker] [--no-fusion] [--clock cpu]

The chain is InsertField$Value (topic.field), ReplaceField$Value (exclude + renames),
MaskField$Value, Cast$Value (one field to string) and TimestampRouter, on ~100-byte JSON
records, with schemas (Structs, JsonConverter schemas.enable=true) and without (dicts,
schemas.enable=false). The chain is the runtime's own: ``build_chain`` of a source
connector config naming the five transforms by Kafka class name, exactly what a worker
task runs (so the five are fused into one step, see seaway.transforms.fusion);
``--no-fusion`` runs the same stages one by one. For each it prints microseconds per
record for:

- ``convert``: JsonConverter.from_connect_data of the value (the baseline without a broker);
- ``chain+convert``: the five SMTs, then the same conversion;
- ``convert+produce`` / ``chain+convert+produce``: the same plus a confluent-kafka
  ``produce()`` to a real Seaway broker (started here; skipped with ``--no-broker``);

and the ratio (with chain) / (without). The issue's target: the chain adds <= 30% to the
convert + produce path. Best of ``--repeat`` runs, as the machine is shared and noisy.
``--clock cpu`` times with the process's CPU time (all its threads, librdkafka's included)
instead of the wall clock: on a loaded machine it moves much less.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # for tests.support
    sys.path.insert(0, str(ROOT))

from seaway.connect.api import Schema, SchemaBuilder, SourceRecord, Struct  # noqa: E402
from seaway.connect.converters.json_converter import JsonConverter  # noqa: E402
from seaway.connect.runtime.connector_config import ConnectorConfig  # noqa: E402
from seaway.connect.runtime.pipeline.chain import TransformationChain, build_chain  # noqa: E402
from seaway.connect.runtime.plugins import Plugins  # noqa: E402

TOPIC = "bench-transforms"
SCHEMA = (SchemaBuilder.struct().name("com.example.Order")
          .field("id", Schema.INT64_SCHEMA).field("customer", Schema.STRING_SCHEMA)
          .field("email", Schema.STRING_SCHEMA).field("amount", Schema.FLOAT64_SCHEMA)
          .field("internal", Schema.STRING_SCHEMA).field("status", Schema.STRING_SCHEMA).build())


CONNECTOR_CONFIG = {
    "name": "bench-transforms", "connector.class": "FileStreamSource",
    "transforms": "insert,replace,mask,cast,route",
    "transforms.insert.type": "org.apache.kafka.connect.transforms.InsertField$Value",
    "transforms.insert.topic.field": "topic",
    "transforms.replace.type": "org.apache.kafka.connect.transforms.ReplaceField$Value",
    "transforms.replace.exclude": "internal", "transforms.replace.renames": "customer:customer_name",
    "transforms.mask.type": "org.apache.kafka.connect.transforms.MaskField$Value",
    "transforms.mask.fields": "email",
    "transforms.cast.type": "org.apache.kafka.connect.transforms.Cast$Value", "transforms.cast.spec": "id:string",
    "transforms.route.type": "org.apache.kafka.connect.transforms.TimestampRouter",
    "transforms.route.topic.format": "${topic}-${timestamp}", "transforms.route.timestamp.format": "yyyyMMdd",
}
EMPTY: TransformationChain[Any] = TransformationChain()
clock: Callable[[], float] = time.perf_counter  # --clock


def make_chain(plugins: Plugins, fuse: bool) -> TransformationChain[Any]:
    """The worker's chain for CONNECTOR_CONFIG (``fuse=False``: the same stages, one by one)."""
    chain: TransformationChain[Any] = build_chain(ConnectorConfig.parse(plugins, CONNECTOR_CONFIG), plugins)
    return chain if fuse else TransformationChain(chain.stages, fuse=False)


def make_records(count: int, with_schema: bool) -> list[SourceRecord]:
    records = []
    for i in range(count):
        fields = {"id": 1_000_000 + i, "customer": f"customer-{i % 977:04d}", "email": f"user{i % 991}@example.com",
                  "amount": round(i * 1.37 % 1000, 2), "internal": "x" * 8, "status": "NEW"}
        if with_schema:
            value: Any = Struct(SCHEMA)
            for name, field_value in fields.items():
                value.put(name, field_value)
            records.append(SourceRecord({"s": 0}, {"o": i}, TOPIC, None, None, None, SCHEMA, value,
                                        1_700_000_000_000 + i))
        else:
            records.append(SourceRecord({"s": 0}, {"o": i}, TOPIC, None, None, None, None, fields,
                                        1_700_000_000_000 + i))
    return records


def run(records: list[SourceRecord], chain: TransformationChain[Any], converter: JsonConverter,
        produce: Callable[[str, bytes | None], None] | None) -> float:
    """Seconds for the whole batch: the chain if not empty (as WorkerSourceTask), convert, optional produce."""
    apply = chain.apply if chain else None
    start = clock()
    for record in records:
        if apply is not None:
            out = apply(record)
            if out is None:
                continue
            record = out
        # as WorkerSourceTask with a built-in converter: the record's Headers only if it has some
        data = converter.from_connect_data(record.topic, record.value_schema, record.value, record._headers)
        if produce is not None:
            produce(record.topic, data)
    return clock() - start


def compare(repeat: int, records: list[SourceRecord], chain: TransformationChain[Any], converter: JsonConverter,
            produce: Callable[[str, bytes | None], None] | None,
            flush: Callable[[float], int] | None) -> tuple[float, float]:
    """Best-of-``repeat`` seconds without and with the chain, runs interleaved so noise hits both alike."""
    without: list[float] = []
    with_chain: list[float] = []
    for _ in range(repeat):
        for use_chain, times in ((False, without), (True, with_chain)):
            elapsed = run(records, chain if use_chain else EMPTY, converter, produce)
            if flush is not None:
                start = clock()
                flush(30)
                elapsed += clock() - start
            times.append(elapsed)
    return min(without), min(with_chain)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-broker", action="store_true")
    parser.add_argument("--no-fusion", action="store_true", help="run the chain's stages one by one")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                        help="wall clock (default) or the process's CPU time")
    args = parser.parse_args()
    global clock
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    plugins = Plugins()

    broker = producer = None
    tmp = tempfile.TemporaryDirectory()
    if not args.no_broker:
        try:
            from confluent_kafka import Producer

            from tests.support.broker import BrokerProcess

            broker = BrokerProcess(Path(tmp.name)).start()
            producer = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 10, "acks": 1,
                                 "batch.size": 1_000_000, "queue.buffering.max.messages": 2_000_000})
        except Exception as e:  # a missing broker only drops the produce columns
            print(f"(no broker: {e})")
            broker = producer = None

    def producing(p: Any) -> Callable[[str, bytes | None], None]:
        def produce(topic: str, data: bytes | None) -> None:
            p.produce(topic, data)
            p.poll(0)
        return produce

    produce: Callable[[str, bytes | None], None] | None = None
    try:
        for with_schema in (True, False):
            converter = JsonConverter()
            converter.configure({"schemas.enable": str(with_schema).lower()}, False)
            records = make_records(args.records, with_schema)
            chain = make_chain(plugins, not args.no_fusion)
            sample = converter.from_connect_data(TOPIC, records[0].value_schema, records[0].value)
            size = len(sample or b"")
            run(records[:1000], chain, converter, None)  # warm caches
            base, full = compare(args.repeat, records, chain, converter, None, None)
            label = "with schemas   " if with_schema else "without schemas"
            us = 1e6 / args.records
            print(f"{label}  ({size} bytes per converted value{', schema envelope included' if with_schema else ''})")
            print(f"  convert                 {base * us:7.2f} us/record")
            print(f"  chain+convert           {full * us:7.2f} us/record   chain alone {(full - base) * us:6.2f} us"
                  f"   ratio {full / base:.2f}")
            if producer is not None:
                produce = producing(producer)
                run(records[:1000], chain, converter, produce)
                producer.flush(30)

                pbase, pfull = compare(args.repeat, records, chain, converter, produce, producer.flush)
                print(f"  convert+produce         {pbase * us:7.2f} us/record")
                print(f"  chain+convert+produce   {pfull * us:7.2f} us/record   ratio {pfull / pbase:.2f} "
                      f"(target <= 1.30)")
    finally:
        if producer is not None:
            producer.flush(10)
            producer = produce = None  # closed before the broker stops, or librdkafka logs the disconnect
        if broker is not None:
            broker.stop()
        tmp.cleanup()


if __name__ == "__main__":
    main()
