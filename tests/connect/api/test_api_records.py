"""Records, new_record, Headers."""

import datetime
import decimal

import pytest
from seaway.connect.api import (
    DataError,
    Header,
    Headers,
    Schema,
    SchemaBuilder,
    SinkRecord,
    SourceRecord,
    TimestampType,
    TopicPartition,
)


def test_source_record_new_record_keeps_unnamed_fields() -> None:
    headers = Headers().add_string("h", "v")
    record = SourceRecord({"file": "a"}, {"pos": 1}, "topic", 0, Schema.STRING_SCHEMA, "k",
                          Schema.INT32_SCHEMA, 5, 1000, headers)
    copy = record.new_record(topic="other", value=6)
    assert isinstance(copy, SourceRecord)
    assert (copy.topic, copy.value, copy.key) == ("other", 6, "k")
    assert (copy.timestamp, copy.kafka_partition) == (1000, 0)
    assert copy.source_partition == {"file": "a"} and copy.source_offset == {"pos": 1}
    assert copy.headers == record.headers and copy.headers is not record.headers
    copy.headers.add_string("x", "y")
    assert len(record.headers) == 1
    assert record.new_record() == record
    assert record.new_record(kafka_partition=None).kafka_partition is None


def test_sink_record_keeps_original_coordinates_across_renames() -> None:
    record = SinkRecord("orders", 3, None, b"k", None, b"v", 42, 1700, TimestampType.CREATE_TIME)
    original = (record.original_topic, record.original_kafka_partition, record.original_kafka_offset)
    assert original == ("orders", 3, 42)
    renamed = record.new_record(topic="orders-v2", kafka_partition=0)
    assert isinstance(renamed, SinkRecord)
    assert (renamed.topic, renamed.kafka_partition, renamed.kafka_offset) == ("orders-v2", 0, 42)
    assert (renamed.original_topic, renamed.original_kafka_partition) == ("orders", 3)
    assert renamed.timestamp_type is TimestampType.CREATE_TIME
    assert renamed.new_record(topic="again").original_topic == "orders"
    assert "orders-v2" in repr(renamed) and "original_topic='orders'" in repr(renamed)


def test_record_equality() -> None:
    a = SinkRecord("t", 0, None, None, None, "v", 1)
    assert a == SinkRecord("t", 0, None, None, None, "v", 1)
    assert a != SinkRecord("t", 0, None, None, None, "v", 2)
    assert a != SourceRecord(None, None, "t", 0, None, None, None, "v")


def test_headers_are_an_ordered_multimap() -> None:
    headers = Headers().add_string("a", "1").add_int32("b", 2).add_string("a", "3")
    assert [h.key for h in headers] == ["a", "b", "a"]
    assert headers.last_with_name("a") == Header("a", Schema.OPTIONAL_STRING_SCHEMA, "3")
    assert [h.value for h in headers.all_with_name("a")] == ["1", "3"]
    assert headers.last_with_name("zz") is None
    assert [h.value for h in headers.duplicate().retain_latest()] == [2, "3"]
    assert [h.key for h in headers.duplicate().remove("a")] == ["b"]
    upper = headers.duplicate().apply(lambda h: h.with_value(h.schema, h.value.upper()), key="a")
    assert [h.value for h in upper] == ["1", 2, "3"]
    dropped = headers.duplicate().apply(lambda h: None if h.key == "b" else h)
    assert len(dropped) == 2
    assert headers.duplicate().clear().is_empty()
    assert len(headers) == 3


def test_headers_validate_values_against_schemas() -> None:
    headers = Headers()
    with pytest.raises(DataError):
        headers.add("n", "not an int", Schema.INT32_SCHEMA)
    with pytest.raises(DataError):
        headers.add_int8("n", 1000)
    headers.add("free", object())  # no schema: anything goes
    headers.add_decimal("d", decimal.Decimal("1.25")).add_date("day", datetime.date(2024, 1, 1))
    headers.add_list("l", [1, 2], SchemaBuilder.array(Schema.INT32_SCHEMA).build())
    assert headers.last_with_name("d").schema.parameters == {"scale": "2"}  # type: ignore[union-attr]


def test_topic_partition() -> None:
    tp = TopicPartition("t", 1)
    assert {tp: 1}[TopicPartition("t", 1)] == 1 and str(tp) == "t-1"
    assert sorted([TopicPartition("t", 2), tp]) == [tp, TopicPartition("t", 2)]
