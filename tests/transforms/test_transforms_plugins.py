"""Discovery: Kafka class-name aliases, installed entry points, ConfigDefs that name bad fields, the schema cache."""

from __future__ import annotations

import importlib
import importlib.metadata
from collections.abc import Callable

import pytest
from seaway.connect.api import ConfigDef, Predicate, Schema, SchemaBuilder, Struct, Transformation
from seaway.transforms import (
    CastValue,
    InsertFieldValue,
    MaskFieldValue,
    RecordIsTombstone,
    ReplaceFieldValue,
    TimestampRouter,
    TopicNameMatches,
    resolve,
    resolve_predicate,
    resolve_transformation,
)
from seaway.transforms.aliases import PREDICATES, TRANSFORMATIONS
from seaway.transforms.util import SchemaCache

from tests.transforms.transforms_helpers import configured, kept, sink


def _entry_points() -> dict[str, dict[str, str]]:
    """The installed distribution's entry points (declared in pyproject.toml)."""
    return {
        group: {ep.name: ep.value for ep in importlib.metadata.entry_points(group=group)}
        for group in ("seaway.transforms", "seaway.predicates")
    }


def _load(target: str) -> type:
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)  # type: ignore[no-any-return]


@pytest.mark.parametrize(("group", "base"), [("seaway.transforms", Transformation),
                                             ("seaway.predicates", Predicate)])
def test_every_entry_point_imports_and_has_the_right_base(group: str, base: type) -> None:
    entries = _entry_points()[group]
    assert entries
    for name, target in entries.items():
        cls = _load(target)
        assert issubclass(cls, base), name
        instance = cls()
        assert isinstance(instance, (Transformation, Predicate))
        assert isinstance(instance.config(), ConfigDef)
        assert resolve(name) is cls


def test_entry_points_cover_every_builtin() -> None:
    entries = _entry_points()
    assert set(entries["seaway.transforms"]) == set(TRANSFORMATIONS)
    assert set(entries["seaway.predicates"]) == set(PREDICATES)
    families = {"Cast", "DropHeaders", "ExtractField", "Filter", "Flatten", "HeaderFrom", "HoistField", "InsertField",
                "InsertHeader", "MaskField", "RegexRouter", "ReplaceField", "SetSchemaMetadata", "TimestampConverter",
                "TimestampRouter", "ValueToKey"}
    assert {name.split("$")[0] for name in TRANSFORMATIONS} == families


@pytest.mark.parametrize(("name", "expected"), [
    ("org.apache.kafka.connect.transforms.InsertField$Value", InsertFieldValue),
    ("InsertField$Value", InsertFieldValue),
    ("org.apache.kafka.connect.transforms.TimestampRouter", TimestampRouter),
    ("org.apache.kafka.connect.transforms.predicates.TopicNameMatches", TopicNameMatches),
    ("RecordIsTombstone", RecordIsTombstone),
    ("seaway.transforms.cast:CastValue", CastValue),
    ("seaway.transforms.cast.CastValue", CastValue),
])
def test_aliases_resolve(name: str, expected: type) -> None:
    assert resolve(name) is expected


def test_resolve_checks_kind_and_unknowns() -> None:
    assert resolve_transformation("Cast$Value") is CastValue
    assert resolve_predicate("org.apache.kafka.connect.transforms.predicates.RecordIsTombstone") is RecordIsTombstone
    with pytest.raises(ImportError):
        resolve_transformation("RecordIsTombstone")
    with pytest.raises(ImportError):
        resolve_predicate("Cast$Value")
    for unknown in ("org.apache.kafka.connect.transforms.Nope$Value", "Nope", "no.such.module.Cls"):
        with pytest.raises(ImportError):
            resolve(unknown)


def test_validate_reports_the_bad_field() -> None:
    results = {v.name: v for v in TimestampRouter().config().validate({"timestamp.format": "yyyy-qq"})}
    assert not results["timestamp.format"].errors  # the pattern is checked at configure time
    results = {v.name: v for v in MaskFieldValue().config().validate({"fields": "", "replacement": "x"})}
    assert results["fields"].errors and not results["replacement"].errors
    results = {v.name: v for v in InsertFieldValue().config().validate({"replace.null.with.default": "maybe"})}
    assert any("replace.null.with.default" in e for e in results["replace.null.with.default"].errors)


def test_schema_cache_identity_structural_and_lru() -> None:
    cache = SchemaCache(size=2)
    a = SchemaBuilder.struct().field("a", Schema.INT32_SCHEMA).build()
    a_again = SchemaBuilder.struct().field("a", Schema.INT32_SCHEMA).build()
    b, c = Schema.INT8_SCHEMA, Schema.INT16_SCHEMA
    cache.put(a, "A")
    assert cache.get(a) == "A" and cache.get(a_again) == "A"
    cache.put(b, "B")
    cache.get(a)
    cache.put(c, "C")  # evicts b, the least recently used
    assert cache.get(b) is None and cache.get(c) == "C" and len(cache) == 2
    built: list[Schema] = []

    def builder(result: str) -> Callable[[Schema], str]:
        def build(schema: Schema) -> str:
            built.append(schema)
            return result
        return build

    assert cache.get_or_build(b, builder("B2")) == "B2"
    assert cache.get_or_build(b, builder("B3")) == "B2" and built == [b]


def test_five_transform_chain_reuses_schemas() -> None:
    schema = (SchemaBuilder.struct().name("user").field("id", Schema.INT64_SCHEMA)
              .field("email", Schema.STRING_SCHEMA).field("debug", Schema.STRING_SCHEMA).build())
    chain = [configured(InsertFieldValue, **{"topic.field": "topic"}),
             configured(ReplaceFieldValue, exclude="debug"),
             configured(MaskFieldValue, fields="email"),
             configured(CastValue, spec="id:string"),
             configured(TimestampRouter)]
    schemas = []
    for i in range(3):
        record = sink(Struct(schema).put("id", i).put("email", "a@b.c").put("debug", "d"), schema, topic="users")
        for transform in chain:
            record = kept(transform.apply(record))
        record.value.validate()
        schemas.append(record.value_schema)
        assert record.topic == "users-20231114"
        assert [record.value.get(n) for n in ("id", "email", "topic")] == [str(i), "", "users"]
    assert schemas[0] is schemas[1] is schemas[2]
