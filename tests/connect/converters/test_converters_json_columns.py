"""JsonConverter.to_connect_columns: a batch of values as one list per field, exactly what to_connect_data gives."""

from __future__ import annotations

import datetime
import json
from collections.abc import Sequence
from typing import Any

import pytest
from seaway.connect.api import DataError, Schema, SchemaBuilder, Struct
from seaway.connect.api.data.logical import Date, Decimal, Timestamp
from seaway.connect.converters import JsonConverter

EVENT = (SchemaBuilder.struct().name("Event").version(3)
         .field("id", Schema.INT64_SCHEMA)
         .field("small", Schema.INT8_SCHEMA)
         .field("amount", Schema.FLOAT64_SCHEMA)
         .field("ok", Schema.BOOLEAN_SCHEMA)
         .field("note", Schema.OPTIONAL_STRING_SCHEMA)
         .field("dflt", SchemaBuilder.string().optional().default_value("none").build())
         .field("raw", Schema.OPTIONAL_BYTES_SCHEMA)
         .field("at", Timestamp.SCHEMA)
         .field("day", Date.SCHEMA)
         .field("tags", SchemaBuilder.array(Schema.STRING_SCHEMA).optional().build())
         .field("attrs", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT64_SCHEMA).optional().build())
         .field("inner", SchemaBuilder.struct().name("Inner").field("x", Schema.INT32_SCHEMA).optional().build())
         .build())


INNER = EVENT.fields[-1].schema


def converter(**props: Any) -> JsonConverter:
    c = JsonConverter()
    c.configure({"converter.type": "value", **props})
    return c


def payload(i: int) -> dict[str, Any]:
    return {"id": i * 10**12, "small": i % 100 - 50, "amount": i if i % 2 else i + 0.25, "ok": i % 3 == 0,
            "note": None if i % 4 == 0 else f"n\u00e9{i}", "dflt": None if i % 5 == 0 else "set",
            "raw": "AAE=" if i % 2 else None, "at": 1_700_000_000_000 + i, "day": 19_000 + i,
            "tags": [f"t{i}"] if i % 2 else None, "attrs": {"a": i} if i % 3 else None,
            "inner": {"x": i} if i % 2 else None}


def envelopes(c: JsonConverter, schema: Schema, payloads: list[Any], **dumps: Any) -> list[bytes]:
    schema_json = c.as_json_schema(schema)
    return [json.dumps({"schema": schema_json, "payload": p}, **dumps).encode() for p in payloads]


def by_record(c: JsonConverter, values: list[bytes]) -> tuple[Schema, list[list[Any]]]:
    """What to_connect_data gives, transposed: the Structs' values, field by field."""
    read = [c.to_connect_data("t", v) for v in values]
    schema = read[0].schema
    assert schema is not None and all(r.schema == schema and isinstance(r.value, Struct) for r in read)
    return schema, [list(column) for column in zip(*(r.value._values for r in read), strict=True)]


@pytest.mark.parametrize("dumps", [{}, {"separators": (",", ":")}, {"indent": 2}])
def test_columns_hold_what_each_record_would(dumps: dict[str, Any]) -> None:
    c = converter()
    values = envelopes(c, EVENT, [payload(i) for i in range(40)], **dumps)
    got = c.to_connect_columns("t", values)  # a fresh converter learns the layout from the first value
    assert got is not None
    schema, columns = got
    assert (schema, columns) == by_record(converter(), values)
    assert schema == EVENT and len(columns) == len(EVENT.fields) and all(len(col) == 40 for col in columns)
    assert columns[2][1] == 1.0 and type(columns[2][1]) is float  # an int for a double, converted
    assert columns[5][0] == "none"  # null with a default: the default (replace.null.with.default)
    assert columns[7][0] == datetime.datetime(2023, 11, 14, 22, 13, 20, tzinfo=datetime.UTC)
    assert columns[6][1] == b"\x00\x01" and columns[11][1] == Struct(INNER).put("x", 1)
    # the same objects, value by value: Struct.from_valid_values over a row equals the record's Struct
    records = [c.to_connect_data("t", v).value for v in values]
    assert [Struct.from_valid_values(schema, list(row)) for row in zip(*columns, strict=True)] == records


def test_null_default_kept_null_without_replace() -> None:
    c = converter(**{"replace.null.with.default": "false"})
    values = envelopes(c, EVENT, [payload(0), payload(5)])
    got = c.to_connect_columns("t", values)
    assert got is not None and got[1][5] == [None, None] and got == by_record(c, values)


def test_anything_unusual_is_left_to_the_record_path() -> None:
    c = converter()
    good = envelopes(c, EVENT, [payload(1), payload(2)])
    assert c.to_connect_columns("t", good) is not None
    bad_field = envelopes(c, EVENT, [payload(1), {**payload(2), "small": 500}])  # out of INT8 range
    with pytest.raises(DataError, match="out of range"):
        c.to_connect_data("t", bad_field[1])
    other = SchemaBuilder.struct().name("Other").field("id", Schema.INT64_SCHEMA).build()
    cases: dict[str, Sequence[bytes | None]] = {
        "a field error": bad_field,
        "a null value": [good[0], None],
        "an empty value": [good[0], b""],
        "a null payload": envelopes(c, SchemaBuilder.struct().name("Opt").optional().field("id", Schema.INT64_SCHEMA)
                                    .build(), [{"id": 1}, None]),
        "two schemas": [good[0], *envelopes(c, other, [{"id": 1}])],
        "NaN, which only json reads": [good[0], good[1].replace(b'"amount": 2.25', b'"amount": NaN')],
        "not an object": envelopes(c, other, [{"id": 1}, [1]]),
        "a primitive schema": envelopes(c, Schema.INT64_SCHEMA, [1, 2]),
        "decimals": envelopes(c, SchemaBuilder.struct().field("d", Decimal.schema(2)).build(), ["AQ==", "Ag=="]),
        "no value": [],
    }
    for name, values in cases.items():
        assert c.to_connect_columns("t", values) is None, name
    assert converter(**{"schemas.enable": "false"}).to_connect_columns("t", [b'{"id": 1}']) is None
    # the NaN record itself is fine for the record path (json reads it), one by one
    nan = cases["NaN, which only json reads"][1]
    assert nan is not None and c.to_connect_data("t", nan).value.get("amount") != 2.25
    assert c.to_connect_columns("t", good) is not None  # and the columns still work afterwards
