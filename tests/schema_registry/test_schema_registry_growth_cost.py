"""A registration's parse work is bounded by what changed, not by how far the subject has grown.

Issue 14 item 10: registrations at 1,000 versions must stay under 50 ms at p99. A subject grows
a field per version, and every registration used to rebuild every field of its text with avro
(~8 objects and ~8 name checks a field), re-emit it for the canonical text and re-check its
default: 12 + 6 + 1.5 ms of a 1,000-field registration, the largest costs of the request.
Context-free fields (primitive types, unions/arrays/maps of them) are now shared between parses
(``schemas._make_field_objects``), so registering version n + 1 builds the one new field.

These tests count avro ``Field`` constructions (the library's, not ours), so they fail on the
old code whatever the machine's load (it built n + 1 fields for version n + 1), and check the
answers did not change: ids, versions, verdicts at every level, refusals, and the parse of a
type named like a primitive.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import avro.schema as avs
import pytest
from seaway.schema_registry.compatibility import CompatibilityLevel
from seaway.schema_registry.errors import RegistryError
from seaway.schema_registry.log import MemorySchemaLog
from seaway.schema_registry.schemas import parse_schema
from seaway.schema_registry.service import RegistryService, SchemaRequest

VERSIONS = 150


def grown(n: int, namespace: str = "growth") -> str:
    fields: list[dict[str, Any]] = [
        {"name": "id", "type": "long"},
        {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
    ]
    fields += [{"name": f"f{i}", "type": ["null", "string"], "default": None} for i in range(n)]
    return json.dumps({"type": "record", "name": "Grown", "namespace": namespace, "fields": fields})


@dataclass
class FieldCount:
    """``avro.schema.Field`` objects built since ``built`` was last reset."""

    built: int = 0


@pytest.fixture
def field_count(monkeypatch: pytest.MonkeyPatch) -> FieldCount:
    counter = FieldCount()
    original = avs.Field.__init__

    def counting(self: avs.Field, *args: Any, **kwargs: Any) -> None:
        counter.built += 1
        original(self, *args, **kwargs)

    monkeypatch.setattr(avs.Field, "__init__", counting)
    return counter


def grow(level: CompatibilityLevel, versions: int = VERSIONS, namespace: str = "growth") -> RegistryService:
    service = RegistryService(MemorySchemaLog(), default_compatibility=level)
    service.start()
    for n in range(versions):
        assert service.register("grown-value", SchemaRequest(grown(n, namespace))) == n + 1
    return service


@pytest.mark.timeout(120)
@pytest.mark.parametrize("level", ["BACKWARD", "BACKWARD_TRANSITIVE", "FULL_TRANSITIVE", "NONE"])
def test_registering_a_grown_subject_builds_only_the_new_field(level: str, field_count: FieldCount) -> None:
    service = grow(CompatibilityLevel(level))
    field_count.built = 0
    schema_id = service.register("grown-value", SchemaRequest(grown(VERSIONS)))
    assert schema_id == VERSIONS + 1
    assert service.get_version("grown-value", "latest").version == VERSIONS + 1
    # the old code built all VERSIONS + 2 fields of the text (and more for the checked versions)
    assert field_count.built <= 2, f"{field_count.built} avro fields built for one new field"
    field_count.built = 0  # the same text again: its id, nothing built, no new version
    assert service.register("grown-value", SchemaRequest(grown(VERSIONS))) == schema_id
    assert field_count.built == 0
    assert service.list_versions("grown-value")[-1] == VERSIONS + 1


@pytest.mark.timeout(120)
@pytest.mark.parametrize("level", ["BACKWARD", "BACKWARD_TRANSITIVE", "FULL_TRANSITIVE"])
def test_verdicts_are_unchanged_by_shared_fields(level: str) -> None:
    service = grow(CompatibilityLevel(level), versions=40)
    # a new required field: refused at every backward level, with the checker's message
    data = json.loads(grown(40))
    data["fields"].append({"name": "required_one", "type": "string"})
    with pytest.raises(RegistryError) as refused:
        service.register("grown-value", SchemaRequest(json.dumps(data)))
    assert refused.value.http_status == 409
    assert "required_one" in str(refused.value)
    # a shared field's type changed (string -> int): refused too
    data = json.loads(grown(40))
    data["fields"][5]["type"] = ["null", "int"]
    with pytest.raises(RegistryError) as changed:
        service.register("grown-value", SchemaRequest(json.dumps(data)))
    assert changed.value.http_status == 409
    # the same fields in another namespace are another schema (the key holds the namespace)
    other = parse_schema(grown(40, namespace="elsewhere"))
    assert '"namespace":"elsewhere"' in other.canonical
    assert service.register("grown-value", SchemaRequest(grown(41))) == 41


def test_a_default_that_does_not_fit_is_refused_every_time() -> None:
    text = json.dumps({"type": "record", "name": "Bad", "fields": [
        {"name": "ok", "type": ["null", "string"], "default": None},
        {"name": "bad", "type": {"type": "array", "items": "int"}, "default": ["a"]},
    ]})
    for _ in range(3):  # the second parse finds both fields shared: still checked
        with pytest.raises(RegistryError) as refused:
            parse_schema(text)
        assert refused.value.error_code == 42201
        assert "Invalid default for field bad" in str(refused.value)


def test_defaults_spelled_differently_stay_different() -> None:
    def schema(default: Any) -> str:
        field = {"name": "x", "type": "double", "default": default}
        return json.dumps({"type": "record", "name": "D", "fields": [field]})

    assert parse_schema(schema(1)).canonical != parse_schema(schema(1.0)).canonical
    assert parse_schema(schema(1.0)).canonical == parse_schema(schema(1.0)).canonical
    assert '"default":1.0' in parse_schema(schema(1.0)).canonical


def test_a_type_named_like_a_primitive_is_not_mistaken_for_it() -> None:
    plain = {"name": "b", "type": ["null", "int"]}
    parse_schema(json.dumps({"type": "record", "name": "R", "namespace": "ns", "fields": [plain]}))  # shared now
    shadowing = json.dumps({"type": "record", "name": "R", "namespace": "ns", "fields": [
        {"name": "a", "type": {"type": "record", "name": "null", "fields": []}},
        plain,
    ]})
    record = parse_schema(shadowing).avro_schema
    assert isinstance(record, avs.RecordSchema)
    branch = record.fields[1].type.schemas[0]
    assert branch.type == "record"  # as avro itself resolves it: ns.null, the record
    assert branch is record.fields[0].type


def test_shared_fields_stay_within_their_budget() -> None:
    from seaway.schema_registry import schemas

    budget = schemas._FIELDS.budget
    width = 2_000  # characters of doc per field: the budget holds ~budget / width of them
    for batch in range(3 * budget // (width * 50) + 1):
        fields = [{"name": f"f{i}", "type": "string", "doc": f"{batch}-{i}-" + "x" * width} for i in range(50)]
        parse_schema(json.dumps({"type": "record", "name": "Wide", "fields": fields}))
    assert 0 < schemas._FIELDS._weight <= budget
    assert len(schemas._FIELDS) <= budget // width
