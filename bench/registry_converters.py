"""Records/s through the registry converters: JSON Schema and Protobuf against Avro, same run.

Run from the repository root (``bench/connect_pipeline.py --schema-converters`` runs this)::

    .venv/bin/python bench/registry_converters.py [--quick] [--records N] [--rounds R]

Each converter (``AvroConverter``, ``JsonSchemaConverter``, ``ProtobufConverter``) turns the
same Connect structs into Confluent frames (``from_connect_data``, what a source task does per
record) and those frames back into structs (``to_connect_data``, a sink task's work per
record), in this process, against a ``seaway registry --memory`` process (asked once per
schema: every later record is a cache hit). The struct has 12 fields: integers, a double, a
decimal, a timestamp, strings, an optional string, an array, a map and a nested struct. The
converters take turns per round (interleaved) and the best round of each is kept; the figures
are records per second of one thread, and the ratio to Avro's.

Targets (issue 32): each converter >= 0.7 of the AvroConverter, both directions. Exit 0 when met.
"""

from __future__ import annotations

import argparse
import datetime
import decimal
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from seaway.connect.api import Schema, SchemaBuilder, Struct  # noqa: E402
from seaway.connect.api.data.logical import Decimal, Timestamp  # noqa: E402
from seaway.schema_registry.avro_converter import AvroConverter  # noqa: E402
from seaway.schema_registry.json_schema_converter import JsonSchemaConverter  # noqa: E402
from seaway.schema_registry.protobuf_converter import ProtobufConverter  # noqa: E402

from bench.registry_types import Registry  # noqa: E402

ADDRESS = SchemaBuilder.struct().name("bench.Address").field("city", Schema.STRING_SCHEMA) \
    .field("zip", Schema.STRING_SCHEMA).build()
ORDER = (SchemaBuilder.struct().name("bench.Order")
         .field("id", Schema.INT64_SCHEMA).field("qty", Schema.INT32_SCHEMA).field("price", Schema.FLOAT64_SCHEMA)
         .field("amount", Decimal.schema(2)).field("at", Timestamp.SCHEMA).field("item", Schema.STRING_SCHEMA)
         .field("customer", Schema.STRING_SCHEMA).field("note", Schema.OPTIONAL_STRING_SCHEMA)
         .field("flag", Schema.BOOLEAN_SCHEMA).field("tags", SchemaBuilder.array(Schema.STRING_SCHEMA).build())
         .field("attrs", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.STRING_SCHEMA).build())
         .field("address", ADDRESS).build())
T0 = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
CONVERTERS: dict[str, Any] = {"avro": AvroConverter, "json_schema": JsonSchemaConverter, "protobuf": ProtobufConverter}


def order(i: int) -> Struct:
    return (Struct(ORDER).put("id", i).put("qty", i % 100).put("price", i / 4).put("amount", decimal.Decimal(i) / 100)
            .put("at", T0 + datetime.timedelta(milliseconds=i)).put("item", f"item-{i % 977}")
            .put("customer", f"customer-{i % 131}").put("note", None if i % 3 else "gift").put("flag", i % 2 == 0)
            .put("tags", ["a", "b"][: i % 3]).put("attrs", {"k": str(i % 7)})
            .put("address", Struct(ADDRESS).put("city", "Oslo").put("zip", f"{i % 9999:04d}")))


def run(kind: str, url: str, values: list[Struct]) -> tuple[float, float]:
    """(records/s writing, records/s reading) for one converter over ``values``."""
    converter = CONVERTERS[kind]()
    converter.configure({"schema.registry.url": url}, False)
    try:
        converter.to_connect_data("t", converter.from_connect_data(f"bench-{kind}", ORDER, values[0]))  # warm
        topic = f"bench-{kind}"
        started = time.perf_counter()
        frames = [converter.from_connect_data(topic, ORDER, v) for v in values]
        written = time.perf_counter() - started
        started = time.perf_counter()
        for frame in frames:
            converter.to_connect_data(topic, frame)
        read = time.perf_counter() - started
        back = converter.to_connect_data(topic, frames[-1]).value
        assert back.get("id") == values[-1].get("id") and back.get("amount") == values[-1].get("amount")
        return len(values) / written, len(values) / read
    finally:
        converter.close()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--records", type=int, help="records per converter and round (default 20000, quick 5000)")
    p.add_argument("--rounds", type=int, help="interleaved rounds (default 5, quick 3)")
    args = p.parse_args(argv)
    count = args.records or (5000 if args.quick else 20000)
    rounds = args.rounds or (3 if args.quick else 5)
    values = [order(i) for i in range(count)]
    registry = Registry()
    best: dict[str, list[float]] = {kind: [0.0, 0.0] for kind in CONVERTERS}
    try:
        for _ in range(rounds):
            for kind in CONVERTERS:
                write, read = run(kind, registry.url, values)
                best[kind] = [max(best[kind][0], write), max(best[kind][1], read)]
    finally:
        registry.close()
    ok = True
    print(f"{'converter':<12} {'write rec/s':>12} {'vs Avro':>8} {'read rec/s':>11} {'vs Avro':>8}")
    for kind, (write, read) in best.items():
        w, r = write / best["avro"][0], read / best["avro"][1]
        ok &= kind == "avro" or (w >= 0.7 and r >= 0.7)
        print(f"{kind:<12} {write:>12.0f} {w:>8.2f} {read:>11.0f} {r:>8.2f}")
    print("targets (each >= 0.7 of Avro, both directions):", "met" if ok else "NOT met")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
