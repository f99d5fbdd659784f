"""Value columns (JsonConverter's SinkRecordBatch) land the very file sets and rows that records do."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest
from seaway.connect.api import Schema, SchemaBuilder, SinkRecord, SinkRecordBatch, Struct, TimestampType, TopicPartition
from seaway.connect.api.data.logical import Timestamp
from seaway.connectors.lake.rotation import FileSet, PartitionBuffer
from seaway.connectors.spark_sink import SparkSinkConfig, make_partitioner

V1 = (SchemaBuilder.struct().name("E").version(1).field("id", Schema.INT64_SCHEMA)
      .field("note", SchemaBuilder.string().optional().default_value("none").build())
      .field("at", Timestamp.builder().optional().build())
      .field("tags", SchemaBuilder.array(Schema.STRING_SCHEMA).optional().build()).build())
TP = TopicPartition("t", 3)


def buffer(committed: int | None = None, **props: str) -> PartitionBuffer:
    config = SparkSinkConfig.from_props({"lake.path": "file:///lake", "flush.size": "7", **props})
    return PartitionBuffer(TP, config, make_partitioner(config), committed)


def value(i: int, schema: Schema = V1) -> Struct:
    s = Struct(schema).put("id", i)
    if schema is not V1:
        return s
    s.put("note", None if i % 3 == 0 else f"n{i}").put("tags", [f"t{i}"] if i % 4 else None)
    return s if i % 2 else s.put("at", Timestamp.to_logical(Timestamp.SCHEMA, 1_700_000_000_000 + i))


def batch(offsets: range, schema: Schema = V1) -> SinkRecordBatch:
    """The batch the sink plan's value_columns strategy builds: value columns, positions, records on demand."""
    values = [value(i, schema) for i in offsets]
    columns = [list(col) for col in zip(*(v._values for v in values), strict=True)]
    records = [SinkRecord(TP.topic, TP.partition, None, None, schema, v, o, 1_700_000_000_000 + o,
                          TimestampType.CREATE_TIME) for v, o in zip(values, offsets, strict=True)]
    return SinkRecordBatch(None, [None] * len(values), lambda: records, value_columns=(schema, columns),
                           positions=([TP.topic] * len(values), [TP.partition] * len(values), list(offsets)))


def landed(sets: list[FileSet]) -> list[tuple[int, int, list[tuple[str, Any]]]]:
    """Each set's span and its parts' folders and rows (what the writer writes)."""
    return [(s.start, s.end, [(p.folder, p.table.to_pylist()) for p in s.by_folder()]) for s in sets]


def feed(b: PartitionBuffer, batches: list[SinkRecordBatch], columns: bool,
         built: list[int] | None = None) -> list[FileSet]:
    """Add the batches as columns or as records; ``built`` collects each batch whose records were built."""
    closed: list[FileSet] = []
    for n, one in enumerate(batches):
        cols = one.record_value_columns()
        assert cols is not None
        _, _, offsets = one.record_positions()
        if columns:
            def records(n: int = n, one: SinkRecordBatch = one) -> list[SinkRecord]:
                if built is not None:
                    built.append(n)
                return one.records()
            closed += b.add_columns(cols[0], offsets, cols[1], 0, records)
        else:
            closed += b.add(one.records(), 0)
    return closed + ([b.open] if b.open is not None else [])


@pytest.mark.parametrize(("committed", "props"), [
    (None, {}),
    (9, {}),  # the first batch is partly below the lake's offset: it goes through the records
    (None, {"partitioner.class": "io.confluent.connect.storage.partitioner.FieldPartitioner",
            "partition.field.name": "note"}),
    (None, {"include.kafka.metadata": "true"}),
    (None, {"rotate.interval.ms": "3"}),
])
def test_columns_and_records_cut_the_same_sets_with_the_same_rows(committed: int | None,
                                                                   props: dict[str, str]) -> None:
    ranges = [range(0, 5), range(5, 19), range(19, 20), range(20, 31)]
    built: list[int] = []
    by_columns = feed(buffer(committed, **props), [batch(r) for r in ranges], columns=True, built=built)
    # only what the columns cannot cut goes through records: a batch reaching below the lake, or a rule needing them
    assert built == ([] if not props and committed is None else [0, 1] if not props else [0, 1, 2, 3])
    by_records = feed(buffer(committed, **props), [batch(r) for r in ranges], columns=False)
    assert landed(by_columns) == landed(by_records)
    assert [len(s) for s in by_columns] == [len(s) for s in by_records]
    if not props and committed is None:
        assert [(s.start, s.end) for s in by_columns] == [(0, 6), (7, 13), (14, 20), (21, 27), (28, 30)]
        assert all(not s.pending for s in by_columns)
        first = by_columns[0].table()
        assert first.column("note").to_pylist()[:2] == ["none", "n1"]  # Struct.get's default, as for records
        assert first.schema.field("at").type == pa.timestamp("ms", tz="UTC")


def test_an_open_set_of_another_schema_takes_the_records() -> None:
    v2 = SchemaBuilder.struct().name("E").version(2).field("id", Schema.INT64_SCHEMA).build()
    b = buffer()
    b.add(batch(range(0, 3)).records(), 0)
    other = batch(range(3, 5), v2)
    cols = other.record_value_columns()
    assert cols is not None
    closed = b.add_columns(cols[0], [3, 4], cols[1], 0, other.records)  # NONE: a schema change rotates
    assert [(s.start, s.end, s.schema) for s in closed] == [(0, 2, V1)]
    assert b.open is not None and b.open.schema == v2 and b.open.table().to_pylist() == [{"id": 3}, {"id": 4}]
