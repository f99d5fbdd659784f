"""File-set boundaries: flush.size, record time, schema changes by schema.compatibility, schedule."""

from __future__ import annotations

import pytest
from seaway.connect.api import DataError, Schema, SchemaBuilder, Struct, TopicPartition
from seaway.connectors.lake.rotation import FileSet, PartitionBuffer
from seaway.connectors.spark_sink import SparkSinkConfig, make_partitioner

from tests.connectors.spark_sink.conftest import record

V1 = SchemaBuilder.struct().name("E").version(1).field("id", Schema.INT64_SCHEMA).build()
V2 = (SchemaBuilder.struct().name("E").version(2).field("id", Schema.INT64_SCHEMA)
      .field("note", SchemaBuilder.string().optional().default_value("none").build()).build())
TP = TopicPartition("t", 0)


def buffer(**props: str) -> PartitionBuffer:
    config = SparkSinkConfig.from_props({"lake.path": "file:///lake", **props})
    return PartitionBuffer(TP, config, make_partitioner(config))


def v1(i: int) -> Struct:
    return Struct(V1).put("id", i)


def v2(i: int) -> Struct:
    return Struct(V2).put("id", i).put("note", f"n{i}")


def spans(sets: list[FileSet]) -> list[tuple[int, int]]:
    return [(s.start, s.end) for s in sets]


def test_flush_size_counts_records_and_drops_committed() -> None:
    b = buffer(**{"flush.size": "3"})
    b.committed = 2
    closed = b.add([record("t", 0, o, v1(o), V1) for o in range(10)], 0)
    assert spans(closed) == [(2, 4), (5, 7)]
    assert b.open is not None and (b.open.start, b.open.end) == (8, 9)
    assert spans(b.add([record("t", 0, 10, v1(10), V1)], 0)) == [(8, 10)]


def test_rotate_interval_by_record_time() -> None:
    b = buffer(**{"flush.size": "100", "rotate.interval.ms": "1000"})
    times = [0, 400, 999, 1000, 1500, 5000, 5001]
    closed = b.add([record("t", 0, o, v1(o), V1, timestamp=t) for o, t in enumerate(times)], 0)
    assert spans(closed) == [(0, 2), (3, 4)]  # a record >= base + interval starts the next set
    assert b.open is not None and spans([b.open]) == [(5, 6)]


def test_schedule_is_wall_clock_aligned() -> None:
    b = buffer(**{"rotate.schedule.interval.ms": "60000"})
    b.add([record("t", 0, 0, v1(0), V1)], now_ms=125_000)
    assert b.due(179_999) is None
    due = b.due(180_000)
    assert due is not None and spans([due]) == [(0, 0)] and b.open is None


def test_schema_change_none_rotates() -> None:
    b = buffer(**{"flush.size": "100"})
    closed = b.add([record("t", 0, 0, v1(0), V1), record("t", 0, 1, v2(1), V2), record("t", 0, 2, v1(2), V1)], 0)
    assert spans(closed) == [(0, 0), (1, 1)]


def test_schema_change_backward_projects_older_records() -> None:
    b = buffer(**{"flush.size": "100", "schema.compatibility": "BACKWARD"})
    closed = b.add([record("t", 0, 0, v1(0), V1), record("t", 0, 1, v2(1), V2), record("t", 0, 2, v1(2), V1)], 0)
    assert spans(closed) == [(0, 0)]  # the newer version started a new file
    assert b.open is not None and b.open.schema == V2 and b.open.offsets == [1, 2]
    rows = b.open.table().to_pylist()  # record 2 projected to V2: the missing field takes its default
    assert rows == [{"id": 1, "note": "n1"}, {"id": 2, "note": "none"}]


def test_schema_change_forward_projects_newer_records() -> None:
    b = buffer(**{"flush.size": "100", "schema.compatibility": "FORWARD"})
    closed = b.add([record("t", 0, 0, v2(0), V2), record("t", 0, 1, v1(1), V1), record("t", 0, 2, v2(2), V2)], 0)
    assert spans(closed) == [(0, 0)]  # the older version started a new file; v2 is projected down to v1
    assert b.open is not None and b.open.schema == V1 and b.open.offsets == [1, 2]
    assert b.open.table().to_pylist() == [{"id": 1}, {"id": 2}]


def test_schema_compatibility_needs_versions() -> None:
    unversioned = SchemaBuilder.struct().field("id", Schema.INT64_SCHEMA).build()
    b = buffer(**{"schema.compatibility": "FULL"})
    with pytest.raises(DataError):
        b.add([record("t", 0, 0, v1(0), V1), record("t", 0, 1, Struct(unversioned).put("id", 1), unversioned)], 0)
