"""The compiled Avro decoder reads exactly what fastavro reads (then mapped to Connect values).

The reference is the previous read path, kept in ``connect_avro``: fastavro's
``schemaless_reader`` with the reading schema, then ``to_connect_fn``. Values are random
(seeded) over schemas covering every construct ``avro_to_connect`` accepts; corrupt bytes
must raise one of ``DECODE_ERRORS``, never return a value.
"""

from __future__ import annotations

import datetime
import decimal
import io
import random
from typing import Any

import fastavro
import pytest
from seaway.schema_registry.avro_decoder import DECODE_ERRORS, compile_decoder
from seaway.schema_registry.connect_avro import avro_to_connect, to_connect_fn
from seaway.schema_registry.wire import encode_avro

UTC = datetime.UTC

ITEM = {"type": "record", "name": "Item", "fields": [{"name": "sku", "type": "string"},
                                                     {"name": "qty", "type": "int", "default": 1}]}
EVERYTHING = {
    "type": "record", "name": "Everything", "namespace": "shop",
    "fields": [
        {"name": "i", "type": "int"},
        {"name": "l", "type": "long"},
        {"name": "i8", "type": {"type": "int", "connect.type": "int8"}},
        {"name": "f", "type": "float"},
        {"name": "d", "type": "double"},
        {"name": "b", "type": "boolean"},
        {"name": "s", "type": "string"},
        {"name": "raw", "type": "bytes"},
        {"name": "opt", "type": ["null", "string"], "default": None},
        {"name": "opt_last", "type": ["long", "null"], "default": 5},
        {"name": "amount", "type": {"type": "bytes", "logicalType": "decimal", "precision": 38, "scale": 4}},
        {"name": "whole", "type": {"type": "bytes", "logicalType": "decimal", "precision": 20, "scale": 0}},
        {"name": "day", "type": {"type": "int", "logicalType": "date"}},
        {"name": "clock", "type": {"type": "int", "logicalType": "time-millis"}},
        {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "at_opt", "type": ["null", {"type": "long", "logicalType": "timestamp-millis"}]},
        {"name": "micros", "type": {"type": "long", "logicalType": "timestamp-micros"}},
        {"name": "color", "type": {"type": "enum", "name": "Color", "symbols": ["RED", "GREEN", "BLUE"]}},
        {"name": "digest", "type": {"type": "fixed", "name": "Digest", "size": 4}},
        {"name": "item", "type": ITEM},
        {"name": "again", "type": "Item"},  # a reference to the named type above
        {"name": "maybe_item", "type": ["null", "shop.Item"]},
        {"name": "items", "type": {"type": "array", "items": "Item"}},
        {"name": "nested", "type": {"type": "array", "items": {"type": "array", "items": ["null", "double"]}}},
        {"name": "attrs", "type": {"type": "map", "values": {"type": "map", "values": "Color"}}},
        {"name": "by_id", "type": {"type": "array", "items": {
            "type": "record", "name": "MapEntry", "namespace": "io.confluent.connect.avro",
            "fields": [{"name": "key", "type": "int"}, {"name": "value", "type": ["null", "string"]}]}}},
    ],
}


def _text(rng: random.Random) -> str:
    return "".join(rng.choice("aé€😀z ") for _ in range(rng.choice((0, 1, 5, 70, 200))))


def _long(rng: random.Random) -> int:
    return rng.choice((0, -1, 63, -64, 64, -65, 2**31 - 1, -(2**31), 2**63 - 1, -(2**63), rng.randrange(-10**9, 10**9)))


def _int(rng: random.Random) -> int:
    return rng.choice((0, -1, 63, -64, 64, 2**31 - 1, -(2**31), rng.randrange(-10**6, 10**6)))


def _item(rng: random.Random) -> dict[str, Any]:
    return {"sku": _text(rng), "qty": _int(rng)}


def everything(rng: random.Random) -> dict[str, Any]:
    return {
        "i": _int(rng), "l": _long(rng), "i8": rng.randrange(-128, 128), "f": rng.uniform(-1e6, 1e6),
        "d": rng.choice((0.0, -0.0, 1e308, rng.uniform(-1e9, 1e9))), "b": rng.random() < 0.5, "s": _text(rng),
        "raw": rng.randbytes(rng.choice((0, 1, 300))), "opt": rng.choice((None, _text(rng))),
        "opt_last": rng.choice((None, _long(rng))),
        "amount": decimal.Decimal(rng.randrange(-10**37, 10**37)).scaleb(-4, decimal.Context(prec=50)),
        "whole": decimal.Decimal(rng.choice((0, -1, 10**19, rng.randrange(-10**9, 10**9)))),
        "day": datetime.date(1970, 1, 1) + datetime.timedelta(days=rng.randrange(-700_000, 2_900_000)),
        "clock": datetime.time(rng.randrange(24), rng.randrange(60), rng.randrange(60), rng.randrange(1000) * 1000),
        "at": datetime.datetime(1970, 1, 1, tzinfo=UTC) + datetime.timedelta(
            milliseconds=rng.randrange(-62_000_000_000_000, 253_000_000_000_000)),
        "at_opt": rng.choice((None, datetime.datetime(2024, 2, 29, 23, 59, 59, 999_000, tzinfo=UTC))),
        "micros": _long(rng) // 2, "color": rng.choice(("RED", "GREEN", "BLUE")), "digest": rng.randbytes(4),
        "item": _item(rng), "again": _item(rng), "maybe_item": rng.choice((None, _item(rng))),
        "items": [_item(rng) for _ in range(rng.choice((0, 1, 3, 70)))],
        "nested": [[rng.choice((None, rng.random())) for _ in range(rng.randrange(3))]
                   for _ in range(rng.randrange(3))],
        "attrs": {_text(rng): {_text(rng): rng.choice(("RED", "BLUE")) for _ in range(rng.randrange(3))}
                  for _ in range(rng.randrange(4))},
        "by_id": [{"key": _int(rng), "value": rng.choice((None, _text(rng)))} for _ in range(rng.randrange(4))],
    }


def reference(reading: Any, schema: Any, payload: bytes) -> Any:
    """The previous read path: fastavro, then the Connect value mapping."""
    return to_connect_fn(schema)(fastavro.schemaless_reader(io.BytesIO(payload), fastavro.parse_schema(reading)))


def compiled(avro: Any) -> tuple[Any, Any, Any]:
    schema, reading = avro_to_connect(avro)
    return schema, reading, compile_decoder(reading, schema)


@pytest.mark.timeout(60)
def test_every_construct_decodes_as_fastavro_does() -> None:
    schema, reading, decode = compiled(EVERYTHING)
    writer = fastavro.parse_schema(EVERYTHING)
    rng = random.Random(8)
    for _ in range(400):
        payload = encode_avro(writer, everything(rng))
        got, expected = decode(payload, 0), reference(reading, schema, payload)
        assert got == expected
        assert got.get("amount").as_tuple() == expected.get("amount").as_tuple()  # same exponent, not just equal
        assert got.get("at").tzinfo is UTC
        framed = b"\x00\x00\x00\x00\x07" + payload
        assert decode(framed, 5) == expected  # reads in place from an offset (a Confluent frame)


@pytest.mark.timeout(30)
@pytest.mark.parametrize("avro, values", [
    ("string", ["", "x" * 1000]),
    ("long", [0, -1, 2**63 - 1, -(2**63)]),
    ({"type": "array", "items": "float"}, [[], [1.5, -2.0]]),
    ({"type": "map", "values": "bytes"}, [{}, {"k": b"\x00"}]),
    ({"type": "bytes", "logicalType": "decimal", "precision": 5, "scale": 2}, [decimal.Decimal("-1.05")]),
    (["null", "boolean"], [None, True, False]),
    ({"type": "enum", "name": "E", "symbols": ["A", "B"]}, ["B"]),
])
def test_top_level_values(avro: Any, values: list[Any]) -> None:
    schema, reading, decode = compiled(avro)
    for value in values:
        payload = encode_avro(fastavro.parse_schema(avro), value)
        assert decode(payload, 0) == reference(reading, schema, payload) == value


@pytest.mark.timeout(30)
def test_blocks_with_negative_counts_carry_their_size() -> None:
    """Writers may emit ``-count, byte size`` blocks (fastavro does not; Java's encoder can)."""
    _, _, decode = compiled({"type": "array", "items": "long"})
    # block 1: count -2 (zigzag 3), size 2, items 1 and -1; block 2: count 1, item 2; end.
    assert decode(bytes([3, 4, 2, 1, 2, 4, 0]), 0) == [1, -1, 2]
    _, _, decode_map = compiled({"type": "map", "values": "int"})
    assert decode_map(bytes([1, 6, 2, ord("a"), 8, 0]), 0) == {"a": 4}


@pytest.mark.timeout(60)
def test_corrupt_bytes_raise_instead_of_returning_a_value() -> None:
    decode = compiled(EVERYTHING)[2]
    payload = encode_avro(fastavro.parse_schema(EVERYTHING), everything(random.Random(1)))
    for end in range(len(payload)):  # every truncation
        with pytest.raises(DECODE_ERRORS):
            decode(payload[:end], 0)
    union = compiled(["null", "string"])[2]
    with pytest.raises(DECODE_ERRORS):
        union(b"\x04", 0)  # branch 2 of a two-branch union
    string = compiled("string")[2]
    with pytest.raises(DECODE_ERRORS):
        string(b"\x03abc", 0)  # length -2
    with pytest.raises(DECODE_ERRORS):
        compiled("long")[2](b"\xff" * 11, 0)  # an endless varint
    with pytest.raises(DECODE_ERRORS):
        compiled({"type": "int", "connect.type": "int8"})[2](encode_avro(fastavro.parse_schema("int"), 300), 0)
