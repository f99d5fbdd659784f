"""The per-record fast paths of the API: lazy and copy-on-write headers, with_value/with_key, trusted Structs."""

from __future__ import annotations

from typing import Any

import pytest
from seaway.connect.api import (
    DataError,
    Header,
    Headers,
    Schema,
    SchemaBuilder,
    SinkRecord,
    SourceRecord,
    Struct,
    TimestampType,
)


def test_duplicated_headers_are_independent_whichever_side_changes() -> None:
    original = Headers().add_string("a", "1").add_int32("b", 2)
    changes: list[Any] = [
        lambda h: h.add_string("c", "3"),
        lambda h: h.remove("a"),
        lambda h: h.retain_latest(),
        lambda h: h.apply(lambda x: x.rename(x.key.upper())),
        lambda h: h.clear(),
    ]
    for change in changes:
        for mutate_copy in (True, False):
            source = original.duplicate()  # a fresh pair sharing one list
            copy = source.duplicate()
            before = [*source]
            changed, other = (copy, source) if mutate_copy else (source, copy)
            change(changed)
            assert [*other] == before
    assert [h.key for h in original] == ["a", "b"]


def test_a_duplicate_of_a_duplicate_copies_once_per_writer() -> None:
    first = Headers([Header("k", None, 1)])
    second = first.duplicate()
    third = second.duplicate()
    second.add("x", 2)
    third.add("y", 3)
    first.add("z", 4)
    assert [h.key for h in first] == ["k", "z"]
    assert [h.key for h in second] == ["k", "x"]
    assert [h.key for h in third] == ["k", "y"]


def test_headers_are_created_on_first_access_and_then_kept() -> None:
    record = SourceRecord({"p": 1}, {"o": 1}, "t", value="v")
    headers = record.headers
    assert headers.is_empty()
    headers.add_string("h", "x")
    assert record.headers is headers and len(record.headers) == 1
    record.headers = [Header("n", None, 5)]
    assert [h.key for h in record.headers] == ["n"]
    assert SourceRecord(None, None, "t", headers=[Header("g", None, 1)]).headers.last_with_name("g") is not None


def test_copies_of_records_without_headers_get_their_own_headers() -> None:
    record = SourceRecord({"p": 1}, {"o": 1}, "t", value="v")
    copy = record.new_record(value="w")
    copy.headers.add_string("only", "copy")
    assert record.headers.is_empty()
    assert copy.headers is not record.headers
    assert record.with_value(None, "x").headers is not record.headers


def test_copies_of_records_with_headers_share_them_until_changed() -> None:
    record = SourceRecord({"p": 1}, {"o": 1}, "t", value="v", headers=Headers().add_string("h", "1"))
    copy = record.with_value(Schema.STRING_SCHEMA, "w")
    assert copy.headers == record.headers and copy.headers is not record.headers
    copy.headers.add_string("h2", "2")
    record.headers.remove("h")
    assert [h.key for h in copy.headers] == ["h", "h2"]
    assert record.headers.is_empty()


def test_with_value_and_with_key_equal_new_record_for_source_records() -> None:
    record = SourceRecord({"p": 1}, {"o": 7}, "t", 2, Schema.STRING_SCHEMA, "k", Schema.INT32_SCHEMA, 5, 1000,
                           Headers().add_string("h", "v"))
    assert record.with_value(Schema.STRING_SCHEMA, "x") == record.new_record(value_schema=Schema.STRING_SCHEMA,
                                                                            value="x")
    assert record.with_key(None, b"k") == record.new_record(key_schema=None, key=b"k")
    copy = record.with_value(None, None)
    assert (copy.source_partition, copy.source_offset, copy.topic, copy.kafka_partition, copy.timestamp) == (
        {"p": 1}, {"o": 7}, "t", 2, 1000)


def test_sink_record_copies_keep_the_consumed_coordinates() -> None:
    record = SinkRecord("orders", 3, None, "k", None, "v", 42, 1000, TimestampType.CREATE_TIME,
                        [Header("h", None, 1)])
    routed = record.new_record(topic="orders-2024", kafka_partition=0)
    again = routed.with_value(Schema.STRING_SCHEMA, "w").new_record(topic="x")
    for copy in (routed, again):
        assert (copy.original_topic, copy.original_kafka_partition, copy.original_kafka_offset) == ("orders", 3, 42)
        assert (copy.kafka_offset, copy.timestamp_type) == (42, TimestampType.CREATE_TIME)
    assert again.value == "w" and again.topic == "x" and [h.key for h in again.headers] == ["h"]
    assert record.with_key(None, "k2") == record.new_record(key="k2", key_schema=None)


class _TaggedRecord(SourceRecord):
    """A subclass with its own constructor: copies must go through it."""

    __slots__ = ("tag",)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.tag = "made by __init__"


def test_subclasses_are_copied_through_their_constructor() -> None:
    record = _TaggedRecord({"p": 1}, {"o": 1}, "t", value="v")
    for copy in (record.new_record(value="w"), record.with_value(None, "w"), record.with_key(None, "k")):
        assert type(copy) is _TaggedRecord and copy.tag == "made by __init__"


SCHEMA = SchemaBuilder.struct().field("id", Schema.INT64_SCHEMA).field("name", Schema.OPTIONAL_STRING_SCHEMA).build()


def test_struct_from_valid_values_trusts_its_values_but_checks_shape() -> None:
    values: list[Any] = [7, None]
    struct = Struct.from_valid_values(SCHEMA, values)
    assert struct == Struct(SCHEMA).put("id", 7)
    assert struct.values() == [7, None] and struct.values() is not values
    copy = struct.values()
    copy[0] = 8
    assert struct.get("id") == 7
    with pytest.raises(DataError, match="Expected 2 values"):
        Struct.from_valid_values(SCHEMA, [1])
    with pytest.raises(DataError, match="Not a struct schema"):
        Struct.from_valid_values(Schema.STRING_SCHEMA, [])
    struct.put("name", "n")
    assert struct.values() == [7, "n"]
