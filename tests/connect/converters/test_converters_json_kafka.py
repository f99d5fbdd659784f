"""JsonConverter against Apache Kafka's own JsonConverter (4.3.1, run in a JVM), byte for byte.

A seeded generator writes a few thousand envelopes covering every schema type (ints at their
bounds, float32 and double values of every magnitude including subnormals and powers of two,
strings with control characters, quotes, non-ASCII, astral characters and lone surrogates,
bytes, Decimal at positive and negative scales, Date, Time, Timestamp, arrays, maps with
string and non-string keys, nested and optional structs, nulls and defaults, schema names,
docs and parameters) and plain JSON trees for schemaless mode, under the four configurations
that change the output (``schemas.enable``, ``decimal.format``, ``replace.null.with.default``).
Both converters read each envelope and write back what they read; the bytes must be equal.
Maps and schemaless objects get at most one entry: Kafka reads them into a ``HashMap``, whose
order Seaway does not imitate (it keeps the order it read); structs keep their field order.

The JVM is the ``java`` on the PATH, or ``$SEAWAY_TEST_JAVA``. Java 17's ``Double.toString``
and ``Float.toString`` print other digits than the shortest for some values (JDK-4511638, fixed
in Java 19), e.g. ``3.99999998E12`` for ``4.0E12f``, ``1.0E-323`` where Java 19+ prints ``9.9E-324``;
Seaway writes what Java 19 and later print. On a JVM older than 19 a number may therefore differ
in its digits, but only that way: it must read back to the same float32/double in the same
notation; everything else is compared exactly. With a newer JVM (``SEAWAY_TEST_JAVA``) every byte is.
"""

from __future__ import annotations

import base64
import json
import math
import os
import random
import re
import shutil
import struct
import subprocess
from pathlib import Path
from typing import Any

import pytest
from seaway.connect.api import DataError
from seaway.connect.converters import JsonConverter

from tests.peer.jars import classpath, ensure_jars, missing_tools

JAVA_SOURCE = Path(__file__).resolve().parent / "java" / "KafkaJsonRoundTrip.java"
CONFIGS = {
    "default": {"schemas.enable": "true"},
    "numeric": {"schemas.enable": "true", "decimal.format": "NUMERIC", "replace.null.with.default": "false"},
    "plain": {"schemas.enable": "false"},
    "plain-numeric": {"schemas.enable": "false", "decimal.format": "NUMERIC"},
}
DECIMAL = "org.apache.kafka.connect.data.Decimal"
INT_BITS = {"int8": 8, "int16": 16, "int32": 32, "int64": 64}
MS_MIN, MS_MAX = -62135596800000, 253402300799999  # Python's datetime range in epoch milliseconds
DAYS_MIN, DAYS_MAX = -719162, 2932896               # and its date range in epoch days
NUMBER = re.compile(rb"-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?")


class Gen:
    """Random schemas (Kafka's JSON form) and payloads that both converters read."""

    def __init__(self, seed: int) -> None:
        self.r = random.Random(seed)

    def text(self) -> str:
        r = self.r
        pools = ["abcXYZ 019_-.", '"\\/', "".join(map(chr, range(0x20))) + "\x7f", "éüßñçÅ€£¥",
                 "日本語テキスト\u2028\u2029\ufeff", "\U0001f600\U0001f680\U00010348\U0010fffd", "\ud800\udfff\udbff"]
        return "".join(r.choice(r.choice(pools)) for _ in range(r.randint(0, 12)))

    def double(self) -> float:
        r = self.r
        kind = r.randrange(7)
        if kind == 0:
            value: float = struct.unpack("<d", r.getrandbits(64).to_bytes(8, "little"))[0]
            return value if math.isfinite(value) else 1.5
        if kind == 1:
            return round(r.uniform(-1e7, 1e7), r.randint(0, 6)) or 0.0
        if kind == 2:
            return float(f"{r.randint(1, 10 ** r.randint(1, 17))}e{r.randint(-330, 300)}")
        if kind == 3:
            return r.choice([1.0, -1.0, 0.5]) * 2.0 ** r.randint(-1074, 1023)
        if kind == 4:
            # no -0.0: Kafka reads JSON numbers through BigDecimal, which has no negative zero
            return r.choice([0.0, 1e-3, 9.99e-4, 1e7, 9999999.999999998, 5e-324, 1.7976931348623157e308])
        return r.uniform(-1, 1) * float(10 ** r.randint(-9, 17))

    def float32(self) -> float:
        r = self.r
        kind = r.randrange(4)
        if kind == 0:
            bits = r.getrandbits(32)
            if (bits >> 23) & 0xFF == 0xFF:
                bits &= ~(1 << 30)
            value: float = struct.unpack("<f", bits.to_bytes(4, "little"))[0]
            return value
        if kind == 1:
            return r.choice([1.0, -1.0]) * 2.0 ** r.randint(-149, 127)
        return self.double() if abs(self.double()) < 3e38 else 0.25

    def schema(self, depth: int = 0) -> dict[str, Any]:
        r = self.r
        kinds = ["int8", "int16", "int32", "int64", "float", "double", "boolean", "string", "bytes",
                 "decimal", "date", "time", "timestamp"]
        if depth < 3:
            kinds += ["array", "map", "map", "struct", "struct"]
        kind = r.choice(kinds)
        schema: dict[str, Any]
        if kind == "decimal":
            schema = {"type": "bytes", "name": DECIMAL, "version": 1,
                      "parameters": {"scale": str(r.choice([0, 2, 5, 10, 18, -2]))}}
        elif kind in ("date", "time", "timestamp"):
            schema = {"type": "int64" if kind == "timestamp" else "int32",
                      "name": f"org.apache.kafka.connect.data.{kind.capitalize()}", "version": 1}
        elif kind == "array":
            schema = {"type": "array", "items": self.schema(depth + 1)}
        elif kind == "map":
            keys = self.schema(3)  # a primitive or logical type: Python's Struct, list, dict are unhashable
            if r.random() < 0.5:
                keys = {"type": "string", "optional": r.random() < 0.3}
            schema = {"type": "map", "keys": keys, "values": self.schema(depth + 1)}
        elif kind == "struct":
            names = r.sample(["id", "name", "é", "a b", 'q"t', "x\ty", "\U0001f600", "v"], r.randint(0, 5))
            schema = {"type": "struct", "fields": [{**self.schema(depth + 1), "field": n} for n in names]}
        else:
            schema = {"type": kind}
        if r.random() < 0.35:
            schema["optional"] = True
        if r.random() < 0.15:
            schema["name"] = schema.get("name") or "com.example." + self.text()
            schema["doc"] = self.text()
        if kind not in ("array", "map", "struct", "decimal", "date", "time", "timestamp") and r.random() < 0.15:
            schema["default"] = self.payload(schema, allow_null=False)
        return schema

    def payload(self, schema: dict[str, Any], allow_null: bool = True) -> Any:
        r = self.r
        if allow_null and (schema.get("optional") or "default" in schema) and r.random() < 0.2:
            return None
        kind, name = schema["type"], schema.get("name")
        if name == DECIMAL:
            scale = int(schema["parameters"]["scale"])
            unscaled = r.randint(-(10 ** 20), 10 ** 20) if r.random() < 0.5 else r.randint(-999, 999)
            if r.random() < 0.5:
                size = (unscaled.bit_length() + 8) // 8
                return base64.b64encode(unscaled.to_bytes(size, "big", signed=True)).decode()
            return _Raw(f"{unscaled}E{-scale}")
        if name and name.endswith(".Date"):
            return r.randint(DAYS_MIN, DAYS_MAX)
        if name and name.endswith(".Time"):
            return r.randrange(86_400_000)
        if name and name.endswith(".Timestamp"):
            return r.choice([r.randint(MS_MIN, MS_MAX), r.randint(0, 2_000_000_000_000)])
        if kind in INT_BITS:
            bits = INT_BITS[kind]
            low, high = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
            return r.choice([low, high, 0, -1, r.randint(low, high)])
        if kind == "float":
            return self.float32()
        if kind == "double":
            return self.double()
        if kind == "boolean":
            return r.random() < 0.5
        if kind == "string":
            return self.text()
        if kind == "bytes":
            return base64.b64encode(r.randbytes(r.randint(0, 20))).decode()
        if kind == "array":
            return [self.payload(schema["items"]) for _ in range(r.randint(0, 3))]
        if kind == "map":
            entries = [(self.payload(schema["keys"], allow_null=False), self.payload(schema["values"]))
                       for _ in range(r.randint(0, 1))]  # Kafka's HashMap decides the order of more
            if schema["keys"]["type"] == "string":
                return dict(entries)
            return [list(e) for e in entries]
        return {f["field"]: self.payload(f) for f in schema["fields"] if r.random() < 0.9 or not f.get("optional")}

    def plain(self, depth: int = 0) -> Any:
        r = self.r
        kind = r.randrange(8 if depth < 3 else 6)
        if kind == 0:
            return None
        if kind == 1:
            return r.random() < 0.5
        if kind == 2:
            return r.randint(-(1 << 63), (1 << 63) - 1)
        if kind == 3:
            return self.double()
        if kind in (4, 5):
            return self.text()
        if kind == 6:
            return [self.plain(depth + 1) for _ in range(r.randint(0, 4))]
        return {self.text(): self.plain(depth + 1) for _ in range(r.randint(0, 1))}  # see payload()


class _Raw(float):
    """A JSON number written as it was read (a NUMERIC decimal payload with its exact digits)."""

    text: str

    def __new__(cls, text: str) -> _Raw:
        self = super().__new__(cls, float(text))
        self.text = text
        return self


def _dumps(value: Any) -> str:
    """Compact JSON with every string escaped to ASCII (lone surrogates included), _Raw numbers verbatim."""
    if isinstance(value, _Raw):
        return value.text
    if isinstance(value, dict):
        return "{" + ",".join(f"{json.dumps(k)}:{_dumps(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(_dumps(v) for v in value) + "]"
    if isinstance(value, float):
        return repr(value)
    return json.dumps(value)


def corpus(seed: int, count: int) -> list[tuple[str, bytes]]:
    """(config name, envelope bytes) cases."""
    gen = Gen(seed)
    cases = []
    for i in range(count):
        config = list(CONFIGS)[i % len(CONFIGS)]
        if config.startswith("plain"):  # read without schema: objects become Kafka HashMaps
            cases.append((config, _dumps(gen.plain()).encode()))
            continue
        if i % 9 == 0:
            envelope: dict[str, Any] = {"schema": None, "payload": gen.plain()}
        else:
            schema = gen.schema()
            envelope = {"schema": schema, "payload": gen.payload(schema)}
        cases.append((config, _dumps(envelope).encode()))
    return cases


@pytest.fixture(scope="module")
def kafka_round_trip(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A function running cases through Kafka's JsonConverter: (java version, answers)."""
    missing = missing_tools()
    if missing:
        message = f"this test runs Kafka's JsonConverter: {', '.join(missing)} missing (scripts/test.sh installs them)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    ensure_jars()
    javac = shutil.which("javac")
    java = os.environ.get("SEAWAY_TEST_JAVA") or shutil.which("java")
    assert javac is not None and java is not None
    classes = tmp_path_factory.mktemp("kafka-json")
    subprocess.run([javac, "-proc:none", "--release", "17", "-cp", classpath(), "-d", str(classes), str(JAVA_SOURCE)],
                   check=True, capture_output=True, timeout=120)

    def run(cases: list[tuple[str, bytes]]) -> tuple[int, list[str]]:
        lines = ["{}\t{}".format(",".join(f"{k}={v}" for k, v in CONFIGS[config].items()),
                                 base64.b64encode(data).decode()) for config, data in cases]
        done = subprocess.run([java, "-cp", f"{classes}{os.pathsep}{classpath()}", "KafkaJsonRoundTrip"],
                              input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=240, check=True)
        answers = done.stdout.splitlines()
        assert answers[0].startswith("JAVA "), done.stderr[-2000:]
        return int(answers[0].split()[1]), answers[1:]
    return run


def ours(converter: JsonConverter, data: bytes) -> str:
    try:
        read = converter.to_connect_data("t", data)
        written = converter.from_connect_data("t", read.schema, read.value)
    except DataError as e:
        return f"ERR {e}"
    return "NULL" if written is None else "OK " + base64.b64encode(written).decode()


def _f32(value: float) -> float:
    try:
        return float(struct.unpack("<f", struct.pack("<f", value))[0])
    except OverflowError:
        return math.copysign(math.inf, value)


def _java17_digits(kafka: bytes, seaway: bytes) -> bool:
    """Whether the texts differ only in the digits of numbers (same value, same notation): Java 17's."""
    theirs, mine = NUMBER.split(kafka), NUMBER.split(seaway)
    if theirs != mine:
        return False
    for a, b in zip(NUMBER.findall(kafka), NUMBER.findall(seaway), strict=True):
        if a == b:
            continue
        x, y = float(a), float(b)
        if not (repr(x) == repr(y) or repr(_f32(x)) == repr(_f32(y))) or (b"E" in a) != (b"E" in b):
            return False
    return True


@pytest.mark.timeout(300)
def test_round_trips_write_what_kafka_writes(kafka_round_trip: Any) -> None:
    cases = corpus(seed=20261126, count=4000)
    java_version, answers = kafka_round_trip(cases)
    assert len(answers) == len(cases)
    converters = {}
    for name, props in CONFIGS.items():
        converters[name] = JsonConverter()
        converters[name].configure(props, False)
    compared = tolerated = 0
    mismatches = []
    for (config, data), kafka in zip(cases, answers, strict=True):
        if not kafka.startswith("OK "):
            continue  # Kafka refuses it: not a format question (both sides' errors are checked elsewhere)
        compared += 1
        mine = ours(converters[config], data)
        if mine == kafka:
            continue
        theirs_bytes = base64.b64decode(kafka[3:])
        mine_bytes = base64.b64decode(mine[3:]) if mine.startswith("OK ") else mine.encode()
        if java_version < 19 and _java17_digits(theirs_bytes, mine_bytes):
            tolerated += 1
            continue
        mismatches.append((config, data, theirs_bytes, mine_bytes))
    assert not mismatches, "\n\n".join(f"[{c}] {d!r}\n kafka  {k!r}\n seaway {m!r}" for c, d, k, m in mismatches[:8])
    assert compared > 3000, compared  # the corpus is mostly what Kafka accepts
    print(f"{compared} cases byte for byte on Java {java_version} ({tolerated} Java 17 digit strings)")
