"""Partitioners: the documented folders for each (no Spark needed)."""

from __future__ import annotations

import datetime

import pytest
from seaway.connect.api import DataError, Schema, SchemaBuilder, Struct
from seaway.connectors.lake.partitioner import check_path_format, escape_path_name
from seaway.connectors.spark_sink import DefaultPartitioner, FieldPartitioner, TimeBasedPartitioner

from tests.connectors.spark_sink.conftest import record

INNER = SchemaBuilder.struct().field("city", Schema.OPTIONAL_STRING_SCHEMA).build()
VALUE = (SchemaBuilder.struct().field("region", Schema.OPTIONAL_STRING_SCHEMA).field("n", Schema.INT32_SCHEMA)
         .field("ok", Schema.BOOLEAN_SCHEMA).field("addr", INNER).build())
JAN_1 = 1_704_067_200_000  # 2024-01-01T00:00:00Z


def value(region: str | None, city: str | None = "Oslo") -> Struct:
    return Struct(VALUE).put("region", region).put("n", 7).put("ok", True).put("addr", Struct(INNER).put("city", city))


def test_default() -> None:
    p = DefaultPartitioner()
    assert p.encode(record("orders.v1", 4, 0, None)) == "orders.v1/partition=4"
    assert p.encode_batch([record("a", 1, i, None) for i in range(3)]) == ["a/partition=1"] * 3


def test_field_values_nested_escaped_and_null() -> None:
    p = FieldPartitioner(["region", "addr.city", "n", "ok"])
    assert p.encode(record("o", 0, 0, value("eu"), VALUE)) == "o/region=eu/city=Oslo/n=7/ok=true"
    assert p.encode(record("o", 0, 0, value("a/b=c%", None), VALUE)) == \
        "o/region=a%2Fb%3Dc%25/city=__HIVE_DEFAULT_PARTITION__/n=7/ok=true"
    assert FieldPartitioner(["region"]).encode(record("o", 0, 0, {"region": "x"})) == "o/region=x"
    with pytest.raises(DataError):
        FieldPartitioner(["missing"]).encode(record("o", 0, 0, value("eu"), VALUE))
    assert escape_path_name("a:b\n") == "a%3Ab%0A"


def test_time_record_timezone_and_duration() -> None:
    hourly = TimeBasedPartitioner("'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH", 3_600_000, timezone="America/New_York")
    assert hourly.encode(record("e", 0, 0, None, timestamp=JAN_1 + 90 * 60_000)) == \
        "e/year=2023/month=12/day=31/hour=20"
    fifteen = TimeBasedPartitioner("'dt'=YYYY-MM-dd/'t'=HHmm", 15 * 60_000)
    assert fifteen.encode(record("e", 0, 0, None, timestamp=JAN_1 + 29 * 60_000)) == "e/dt=2024-01-01/t=0015"
    text = TimeBasedPartitioner("YYYY/MMM/EEE/DDD/'it''s'", 86_400_000, timezone="Asia/Tokyo")
    assert text.encode(record("e", 0, 0, None, timestamp=JAN_1)) == "e/2024/Jan/Mon/001/it's"


def test_time_extractors() -> None:
    field = TimeBasedPartitioner("'d'=dd", 86_400_000, extractor="RecordField", timestamp_field="at.when")
    nested = {"at": {"when": datetime.datetime(2024, 3, 9, 12, tzinfo=datetime.UTC)}}
    assert field.encode(record("e", 0, 0, nested)) == "e/d=09"
    assert field.encode(record("e", 0, 0, {"at": {"when": "2024-03-10T01:00:00+00:00"}})) == "e/d=10"
    assert field.encode(record("e", 0, 0, {"at": {"when": JAN_1}})) == "e/d=01"
    with pytest.raises(DataError):
        field.encode(record("e", 0, 0, {"at": {}}))
    wall = TimeBasedPartitioner("YYYY", 1000, extractor="Wallclock")
    assert wall.encode(record("e", 0, 0, None, timestamp=0)) == f"e/{datetime.datetime.now(datetime.UTC).year}"


def test_path_format_check() -> None:
    assert check_path_format("'year'=YYYY", "en") is None
    assert "unsupported" in (check_path_format("'q'=Q", "en") or "")
    assert "quote" in (check_path_format("'year=YYYY", "en") or "")
    assert check_path_format("YYYY/", "en") is not None
