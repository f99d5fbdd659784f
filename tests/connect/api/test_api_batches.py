"""SourceRecordBatch and SinkRecordBatch: sequences of records held as columns."""

from __future__ import annotations

import pytest
from seaway.connect.api import Schema, SinkRecord, SinkRecordBatch, SourceRecord, SourceRecordBatch


def test_source_batch_is_a_sequence_of_the_records_it_stands_for() -> None:
    batch = SourceRecordBatch("t", ["a", "b", "c"], value_schema=Schema.STRING_SCHEMA,
                              source_partition={"file": "f"}, source_offsets=[{"p": 1}, {"p": 2}, {"p": 3}],
                              kafka_partition=2, timestamp=7)
    assert len(batch) == 3 and batch.last_source_offset == {"p": 3}
    assert batch._records is None  # nothing built until an element is asked for
    expected = [SourceRecord({"file": "f"}, {"p": n + 1}, "t", 2, None, None, Schema.STRING_SCHEMA, v, 7)
                for n, v in enumerate("abc")]
    assert list(batch) == expected
    assert batch[1] is batch.records()[1] and batch[-1] == expected[-1]  # built once
    assert batch[:2] == expected[:2]
    assert expected[0] in batch and batch.index(expected[2]) == 2
    assert list(reversed(batch)) == expected[::-1]


def test_source_batch_without_offsets_and_empty() -> None:
    batch = SourceRecordBatch("t", [1, 2])
    assert batch.last_source_offset is None
    assert [(r.source_partition, r.source_offset, r.value, r.value_schema) for r in batch] == [
        (None, None, 1, None), (None, None, 2, None)]
    empty = SourceRecordBatch("t", [], source_offsets=[])
    assert not empty and empty.last_source_offset is None and list(empty) == []


def test_source_batch_needs_one_offset_per_value() -> None:
    with pytest.raises(ValueError, match="2 source offsets for 1 values"):
        SourceRecordBatch("t", ["a"], source_offsets=[{"p": 1}, {"p": 2}])


def test_sink_batch_builds_records_once_and_only_on_demand() -> None:
    records = [SinkRecord("t", 0, Schema.OPTIONAL_STRING_SCHEMA, f"k{n}", None, f"v{n}", n) for n in range(3)]
    built: list[int] = []

    def build() -> list[SinkRecord]:
        built.append(1)
        return records

    batch = SinkRecordBatch([r.value for r in records], [r.key for r in records], build)
    assert len(batch) == 3 and batch.record_values() == ["v0", "v1", "v2"] and batch.record_keys() == ["k0", "k1", "k2"]
    assert built == []
    assert list(batch) == records and batch[2] is records[2] and batch[-2:] == records[-2:]
    assert built == [1]
    copy = SinkRecordBatch.of(records)
    assert list(copy) == records and copy.record_values() == batch.record_values()
    with pytest.raises(ValueError, match="1 keys for 2 values"):
        SinkRecordBatch(["a", "b"], ["k"], list)
