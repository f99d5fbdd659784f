"""Schemas whose size is fine but whose shape made a parser or the checker quadratic.

A body up to ``http.request.max.size`` (2 MiB) can hold tens of thousands of fields or union
branches; each must cost time linear in its size, or a few requests stall the registry.
"""

from __future__ import annotations

import json
import time

import avro.schema
import pytest
from seaway.schema_registry.compatibility import check_pair
from seaway.schema_registry.errors import RegistryError
from seaway.schema_registry.schemas import parse_schema


def wide_record(fields: int) -> str:
    return json.dumps({"type": "record", "name": "Wide",
                       "fields": [{"name": f"f{i}", "type": "int"} for i in range(fields)]})


def union_of_records(branches: int, field_type: str = "int") -> str:
    return json.dumps({"type": "record", "name": "Top", "fields": [{"name": "u", "type": [
        {"type": "record", "name": f"B{i}", "fields": [{"name": "x", "type": field_type}]} for i in range(branches)
    ]}]})


@pytest.mark.timeout(120)
def test_a_record_of_50000_fields_parses_in_linear_time() -> None:
    text = wide_record(50_000)
    assert len(text) < 2 * 1024 * 1024
    started = time.monotonic()
    parsed = parse_schema(text)
    assert time.monotonic() - started < 8  # avro's own field-name check alone took minutes
    assert isinstance(parsed.avro_schema, avro.schema.RecordSchema)
    assert len(parsed.avro_schema.fields) == 50_000
    with pytest.raises(RegistryError, match="Field name f1 already in use"):
        parse_schema(json.dumps({"type": "record", "name": "D", "fields": [
            {"name": "f1", "type": "int"}, {"name": "f2", "type": "int"}, {"name": "f1", "type": "long"}]}))


@pytest.mark.timeout(120)
def test_two_unions_of_3000_records_are_compared_in_linear_time() -> None:
    reader, writer = parse_schema(union_of_records(3000, "long")), parse_schema(union_of_records(3000))
    started = time.monotonic()
    assert check_pair(reader, writer) == []  # every branch int -> long: compatible
    assert check_pair(writer, reader) != []  # long -> int is not
    assert time.monotonic() - started < 8  # every branch against every branch was 9 million checks
