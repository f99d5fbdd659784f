"""Registry throughput per schema type: register and lookup req/s for Avro, JSON Schema, Protobuf.

Run from the repository root (``bench/registry.py --types`` runs this)::

    .venv/bin/python bench/registry_types.py [--quick] [--count N] [--rounds R]

A ``seaway registry --memory`` process serves; this process is the client (httpx, one
keep-alive connection, requests one after another), so the figure is what one client gets
and the server's CPU time per request (read from ``/proc``) is the cost. The three types
register the same shape of schema: a record / object / message of 12 fields (strings,
integers, a double, a nested record, an array, a map), each schema distinct (its name and one
field name carry the request's number) and registered under a subject of its own, so every
registration parses and writes; lookups post one registered schema's text again and again
(``POST /subjects/{s}``: what a serializer with ``auto.register.schemas=false`` asks).
The types take turns in chunks of 20 requests (Avro, JSON, Protobuf, Avro, ...), so load from
elsewhere on the machine hits them alike; req/s is over all chunks. Beside it, the server's CPU
per request and Avro's CPU over each type's (a ratio that load disturbs far less).

Targets (issue 32): each type's register and lookup req/s >= 0.8 of Avro's in the same run.
Exit status 0 when met.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
READY = "seaway registry ready on "
CT = {"Content-Type": "application/vnd.schemaregistry.v1+json"}
CHUNK = 20


def avro(i: int) -> str:
    return json.dumps({"type": "record", "name": f"Order{i}", "namespace": "bench", "fields": [
        {"name": "id", "type": "long"}, {"name": f"name{i}", "type": "string"}, {"name": "price", "type": "double"},
        {"name": "qty", "type": "int"}, {"name": "note", "type": ["null", "string"], "default": None},
        {"name": "a", "type": "string"}, {"name": "b", "type": "string"}, {"name": "c", "type": "long"},
        {"name": "tags", "type": {"type": "array", "items": "string"}},
        {"name": "attrs", "type": {"type": "map", "values": "string"}},
        {"name": "address", "type": {"type": "record", "name": "Address", "fields": [
            {"name": "city", "type": "string"}, {"name": "zip", "type": "string"}]}},
        {"name": "flag", "type": "boolean"}]})


def json_schema(i: int) -> str:
    s, n = {"type": "string"}, {"type": "integer"}
    return json.dumps({"$schema": "http://json-schema.org/draft-07/schema#", "title": f"bench.Order{i}",
                       "type": "object", "properties": {
                           "id": n, f"name{i}": s, "price": {"type": "number"}, "qty": n,
                           "note": {"oneOf": [{"type": "null"}, s]}, "a": s, "b": s, "c": n,
                           "tags": {"type": "array", "items": s},
                           "attrs": {"type": "object", "additionalProperties": s},
                           "address": {"type": "object", "properties": {"city": s, "zip": s}},
                           "flag": {"type": "boolean"}},
                       "required": ["id"]})


def protobuf(i: int) -> str:
    return (f'syntax = "proto3";\npackage bench;\nmessage Order{i} {{\n  int64 id = 1;\n  string name{i} = 2;\n'
            "  double price = 3;\n  int32 qty = 4;\n  optional string note = 5;\n  string a = 6;\n  string b = 7;\n"
            "  int64 c = 8;\n  repeated string tags = 9;\n  map<string, string> attrs = 10;\n"
            "  message Address { string city = 1; string zip = 2; }\n  Address address = 11;\n  bool flag = 12;\n}\n")


TYPES: dict[str, Callable[[int], str]] = {"AVRO": avro, "JSON": json_schema, "PROTOBUF": protobuf}


def body(schema_type: str, text: str) -> bytes:
    return json.dumps({"schema": text, "schemaType": schema_type}).encode()


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Registry:
    """``seaway registry --memory`` on a free loopback port."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "seaway.cli.main", "registry", "--memory", "--log-level", "WARNING",
             "--override", "listeners=http://127.0.0.1:0"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT)
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if line.startswith(READY):
                self.url = line[len(READY):].strip()
                return
        raise RuntimeError("the registry did not start")

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(20)


def measure(client: httpx.Client, pid: int, requests: list[tuple[str, bytes]]) -> tuple[float, float]:
    """``(req/s, server CPU ms per request)`` for ``requests`` sent one after another."""
    cpu0, t0 = cpu_seconds(pid), time.perf_counter()
    for path, content in requests:
        r = client.post(path, content=content, headers=CT)
        assert r.status_code == 200, r.text
    elapsed, cpu = time.perf_counter() - t0, cpu_seconds(pid) - cpu0
    return len(requests) / elapsed, cpu * 1000 / len(requests)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="fewer requests and rounds")
    p.add_argument("--count", type=int, help="registrations per type and round (default 300, quick 100)")
    p.add_argument("--rounds", type=int, help="rounds, each over fresh subjects (default 3, quick 2)")
    args = p.parse_args(argv)
    count = args.count or (100 if args.quick else 300)
    rounds = args.rounds or (2 if args.quick else 3)
    registry = Registry()
    # totals per (type, case): requests, seconds, server CPU seconds; the types take turns in
    # chunks of CHUNK requests, so a burst of load from elsewhere on the machine hits all alike
    totals: dict[tuple[str, str], list[float]] = {(k, c): [0, 0.0, 0.0] for k in TYPES for c in ("register", "lookup")}
    try:
        with httpx.Client(base_url=registry.url, timeout=60) as client:
            pid = registry.proc.pid
            for kind, make in TYPES.items():  # warm-up: parsers loaded, caches primed
                measure(client, pid, [(f"/subjects/warm-{kind}/versions", body(kind, make(10**9)))])
                measure(client, pid, [(f"/subjects/warm-{kind}", body(kind, make(10**9)))] * 50)
            for r in range(rounds):
                start = (r + 1) * 1_000_000
                for chunk in range(0, count, CHUNK):
                    for kind, make in TYPES.items():
                        register = [(f"/subjects/{kind}-{start + i}/versions", body(kind, make(start + i)))
                                    for i in range(chunk, min(chunk + CHUNK, count))]
                        lookup = [(f"/subjects/{kind}-{start}", body(kind, make(start)))] * (3 * len(register))
                        for case, requests in (("register", register), ("lookup", lookup)):
                            rate, cpu = measure(client, pid, requests)
                            total = totals[(kind, case)]
                            total[0] += len(requests)
                            total[1] += len(requests) / rate
                            total[2] += cpu * len(requests) / 1000
    finally:
        registry.close()
    best = {key: (n / seconds, cpu * 1000 / n) for key, (n, seconds, cpu) in totals.items()}
    ok = True
    print(f"{'type':<9} {'case':<9} {'req/s':>8} {'vs Avro':>8} {'server CPU ms/req':>18} {'Avro CPU / its':>15}")
    for case in ("register", "lookup"):
        avro_rate, avro_cpu = best[("AVRO", case)]
        for kind in TYPES:
            rate, cpu = best[(kind, case)]
            ratio = rate / avro_rate
            ok &= kind == "AVRO" or ratio >= 0.8
            print(f"{kind:<9} {case:<9} {rate:>8.0f} {ratio:>8.2f} {cpu:>18.2f} {avro_cpu / cpu:>15.2f}")
    print("targets (each >= 0.8 of Avro):", "met" if ok else "NOT met")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
