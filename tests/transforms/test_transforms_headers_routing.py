"""HeaderFrom, InsertHeader, DropHeaders, RegexRouter, Filter and the predicates (with negate)."""

from __future__ import annotations

import pytest
from seaway.connect.api import ConfigError, DataError, Headers, Schema, SchemaBuilder, Struct
from seaway.transforms import (
    DropHeaders,
    Filter,
    HasHeaderKey,
    HeaderFromKey,
    HeaderFromValue,
    InsertHeader,
    RecordIsTombstone,
    RegexRouter,
    TopicNameMatches,
    should_apply,
)

from tests.transforms.transforms_helpers import configured, kept, sink


# -- HeaderFrom ---------------------------------------------------------------------------------
def test_header_from_schemaless_copy_and_move() -> None:
    record = sink({"a": 1, "b": "x", "c": True}, headers=Headers().add_string("old", "o"))
    copy = kept(configured(HeaderFromValue, fields="a,b", headers="h1,h2", operation="copy").apply(record))
    assert copy.value == {"a": 1, "b": "x", "c": True}
    assert [(h.key, h.schema, h.value) for h in copy.headers] == [
        ("old", Schema.OPTIONAL_STRING_SCHEMA, "o"), ("h1", None, 1), ("h2", None, "x")]
    move = kept(configured(HeaderFromValue, fields="a,missing", headers="h1,h2", operation="move").apply(record))
    assert move.value == {"b": "x", "c": True}
    assert move.headers.last_with_name("h2").value is None
    assert len(record.headers) == 1  # input untouched


def test_header_from_with_schema() -> None:
    schema = (SchemaBuilder.struct().name("s").field("a", Schema.INT32_SCHEMA).field("b", Schema.STRING_SCHEMA)
              .build())
    value = Struct(schema).put("a", 1).put("b", "x")
    move = kept(configured(HeaderFromKey, fields="a", headers="ha", operation="move").apply(
        sink(key=value, key_schema=schema)))
    assert [f.name for f in move.key_schema.fields] == ["b"] and move.key_schema.name == "s"
    assert move.key.get("b") == "x"
    header = move.headers.last_with_name("ha")
    assert (header.schema, header.value) == (Schema.INT32_SCHEMA, 1)
    copy = kept(configured(HeaderFromKey, fields="a", headers="ha", operation="copy").apply(
        sink(key=value, key_schema=schema)))
    assert copy.key is value and copy.key_schema is schema
    with pytest.raises(DataError, match="nope"):
        configured(HeaderFromKey, fields="nope", headers="h", operation="copy").apply(
            sink(key=value, key_schema=schema))


def test_header_from_config_errors() -> None:
    with pytest.raises(ConfigError, match="'fields' config must have the same number of elements as 'headers'"):
        configured(HeaderFromValue, fields="a,b", headers="h", operation="copy")
    with pytest.raises(ConfigError, match="operation") as e:
        configured(HeaderFromValue, fields="a", headers="h", operation="steal")
    assert e.value.name == "operation"


# -- InsertHeader / DropHeaders -----------------------------------------------------------------
@pytest.mark.parametrize(("literal", "schema", "value"), [
    ("hello", Schema.STRING_SCHEMA, "hello"), ("42", Schema.INT8_SCHEMA, 42), ("true", Schema.BOOLEAN_SCHEMA, True),
    ("1.5", Schema.FLOAT32_SCHEMA, 1.5)])
def test_insert_header(literal: str, schema: Schema, value: object) -> None:
    record = sink("v", headers=Headers().add_string("a", "x"))
    out = kept(configured(InsertHeader, header="h", **{"value.literal": literal}).apply(record))
    assert [h.key for h in out.headers] == ["a", "h"]
    header = out.headers.last_with_name("h")
    assert (header.schema, header.value) == (schema, value)
    assert len(record.headers) == 1


def test_insert_header_requires_both() -> None:
    with pytest.raises(ConfigError, match=r"value\.literal"):
        configured(InsertHeader, header="h")


def test_drop_headers() -> None:
    headers = Headers().add_string("a", "1").add_string("b", "2").add_string("a", "3").add_string("c", "4")
    out = kept(configured(DropHeaders, headers="a,c").apply(sink(headers=headers)))
    assert [h.key for h in out.headers] == ["b"]
    assert len(headers) == 4
    with pytest.raises(ConfigError, match="Empty list"):
        configured(DropHeaders, headers="")


# -- RegexRouter --------------------------------------------------------------------------------
@pytest.mark.parametrize(("regex", "replacement", "topic", "expected"), [
    ("(.*)SomeTopic(.*)", "$1OtherTopic$2", "aSomeTopicb", "aOtherTopicb"),
    ("(.*)SomeTopic(.*)", "$1OtherTopic$2", "nomatch", "nomatch"),
    ("SomeTopic", "OtherTopic", "aSomeTopic", "aSomeTopic"),  # full match required
    ("(?<name>[a-z]+)-(\\d+)", "${name}_$2", "orders-1", "orders_1"),
    ("(.*)", "\\$1-\\\\", "t", "$1-\\"),
    ("(a)(b)(c)(d)(e)(f)(g)(h)(i)(j)(k)(l)", "$12-$1", "abcdefghijkl", "l-a"),
    ("(a)(b)", "$12", "ab", "a2"),
    ("(a)?b", "[$1]", "b", "[]"),
])
def test_regex_router(regex: str, replacement: str, topic: str, expected: str) -> None:
    out = kept(configured(RegexRouter, regex=regex, replacement=replacement).apply(sink(topic=topic)))
    assert out.topic == expected


@pytest.mark.parametrize(("regex", "replacement", "field", "message"), [
    ("(", "x", "regex", "Invalid regex"), ("(a)", "$2", "replacement", "No group 2"),
    ("(a)", "$", "replacement", "group index is missing"), ("(a)", "${x}", "replacement", "No group with name"),
])
def test_regex_router_config_errors(regex: str, replacement: str, field: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as e:
        configured(RegexRouter, regex=regex, replacement=replacement)
    assert e.value.name == field


# -- Filter and predicates ----------------------------------------------------------------------
def test_filter_drops_everything() -> None:
    assert configured(Filter).apply(sink("x")) is None


def test_predicates() -> None:
    topic = configured(TopicNameMatches, pattern="my-.*")
    assert topic.test(sink(topic="my-topic")) and not topic.test(sink(topic="your-my-topic"))
    header = configured(HasHeaderKey, name="h")
    assert header.test(sink(headers=Headers().add_string("h", None)))
    assert not header.test(sink(headers=Headers().add_string("x", "1")))
    tombstone = configured(RecordIsTombstone)
    assert tombstone.test(sink(None)) and not tombstone.test(sink("x"))
    assert repr(topic) == "TopicNameMatches{pattern=my-.*}"


def test_predicate_config_errors() -> None:
    with pytest.raises(ConfigError, match="Invalid regex") as e:
        configured(TopicNameMatches, pattern="[")
    assert e.value.name == "pattern"
    with pytest.raises(ConfigError, match="pattern"):
        configured(TopicNameMatches, pattern="")
    with pytest.raises(ConfigError, match="name"):
        configured(HasHeaderKey)


def test_conditional_filter_with_negate() -> None:
    """The runtime's chain rule: drop tombstones; with negate, drop everything *but* tombstones."""
    drop = configured(Filter)
    tombstone = configured(RecordIsTombstone)
    records = [sink("a"), sink(None), sink("b")]

    def run(negate: bool) -> list[object]:
        out = []
        for record in records:
            result = drop.apply(record) if should_apply(tombstone, negate, record) else record
            if result is not None:
                out.append(result.value)
        return out

    assert run(False) == ["a", "b"]
    assert run(True) == [None]
    assert should_apply(None, False, records[0])
