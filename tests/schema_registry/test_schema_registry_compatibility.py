"""The compatibility matrix: each schema change under every level, plus transitivity."""

from __future__ import annotations

import json
from typing import Any

import avro.compatibility as avc
import pytest
from seaway.schema_registry.compatibility import CompatibilityLevel, check_compatibility, check_pair
from seaway.schema_registry.schemas import ParsedSchema, parse_schema


def recd(*fields: dict[str, Any], name: str = "R", **extra: Any) -> dict[str, Any]:
    return {"type": "record", "name": name, "fields": list(fields), **extra}


def rec(*fields: dict[str, Any], name: str = "R", **extra: Any) -> str:
    return json.dumps(recd(*fields, name=name, **extra))


def f(name: str, type_: Any, **extra: Any) -> dict[str, Any]:
    return {"name": name, "type": type_, **extra}


def enum(symbols: list[str], **extra: Any) -> dict[str, Any]:
    return {"type": "enum", "name": "E", "symbols": symbols, **extra}


def dec(precision: int, scale: int) -> dict[str, Any]:
    return {"type": "bytes", "logicalType": "decimal", "precision": precision, "scale": scale}


A = f("a", "int")
# (case id, old schema, new schema, new-reads-old (backward), old-reads-new (forward), avro agrees)
CASES: list[tuple[str, str, str, bool, bool, bool]] = [
    ("add-field-with-default", rec(A), rec(A, f("b", "string", default="x")), True, True, True),
    ("add-field-without-default", rec(A), rec(A, f("b", "string")), False, True, True),
    ("remove-field-without-default", rec(A, f("b", "string")), rec(A), True, False, True),
    ("remove-field-with-default", rec(A, f("b", "string", default="")), rec(A), True, True, True),
    ("int-to-long", rec(A), rec(f("a", "long")), True, False, True),
    ("long-to-float", rec(f("a", "long")), rec(f("a", "float")), True, False, True),
    ("float-to-double", rec(f("a", "float")), rec(f("a", "double")), True, False, True),
    ("int-to-double", rec(A), rec(f("a", "double")), True, False, True),
    ("long-to-int", rec(f("a", "long")), rec(A), False, True, True),
    ("string-to-bytes", rec(f("a", "string")), rec(f("a", "bytes")), True, True, True),
    ("string-to-int", rec(f("a", "string")), rec(A), False, False, True),
    ("enum-symbol-added", rec(f("e", enum(["A", "B"]))), rec(f("e", enum(["A", "B", "C"]))), True, False, True),
    ("enum-symbol-removed", rec(f("e", enum(["A", "B"]))), rec(f("e", enum(["A"]))), False, True, True),
    (
        "enum-symbol-removed-reader-default",
        rec(f("e", enum(["A", "B"]))),
        rec(f("e", enum(["A"], default="A"))),
        True,
        True,
        True,
    ),
    ("union-widened", rec(f("u", ["null", "string"])), rec(f("u", ["null", "string", "int"])), True, False, True),
    ("union-narrowed", rec(f("u", ["null", "string", "int"])), rec(f("u", ["null", "string"])), False, True, True),
    ("to-optional", rec(f("u", "string")), rec(f("u", ["null", "string"])), True, False, True),
    (
        "nested-field-added",
        rec(f("n", recd(A, name="N"))),
        rec(f("n", recd(A, f("b", "int"), name="N"))),
        False,
        True,
        True,
    ),
    (
        "array-items-promoted",
        rec(f("xs", {"type": "array", "items": "int"})),
        rec(f("xs", {"type": "array", "items": "long"})),
        True,
        False,
        True,
    ),
    (
        "map-values-changed",
        rec(f("m", {"type": "map", "values": "string"})),
        rec(f("m", {"type": "map", "values": "int"})),
        False,
        False,
        True,
    ),
    (
        "fixed-size-changed",
        rec(f("x", {"type": "fixed", "name": "F", "size": 4})),
        rec(f("x", {"type": "fixed", "name": "F", "size": 8})),
        False,
        False,
        True,
    ),
    ("record-renamed", rec(A, name="R"), rec(A, name="S"), False, False, True),
    ("record-renamed-full-alias", rec(A, name="a.R"), rec(A, name="a.S", aliases=["a.R"]), True, False, True),
    # avro compares aliases as written: a short alias never matched a namespaced writer.
    ("record-renamed-short-alias", rec(A, name="a.R"), rec(A, name="a.S", aliases=["R"]), True, False, False),
    ("namespace-changed", rec(A, name="a.R"), rec(A, name="b.R"), True, True, True),
    ("field-renamed-with-alias", rec(A), rec(f("b", "int", aliases=["a"])), True, False, True),
    # avro ignores logical types; the spec says decimals match only with equal precision/scale.
    ("decimal-precision-changed", rec(f("d", dec(10, 2))), rec(f("d", dec(12, 2))), False, False, False),
    ("decimal-scale-changed", rec(f("d", dec(10, 2))), rec(f("d", dec(10, 3))), False, False, False),
    (
        "timestamp-millis-to-micros",
        rec(f("t", {"type": "long", "logicalType": "timestamp-millis"})),
        rec(f("t", {"type": "long", "logicalType": "timestamp-micros"})),
        False,
        False,
        False,
    ),
    (
        "logical-annotation-added",
        rec(f("t", "long")),
        rec(f("t", {"type": "long", "logicalType": "timestamp-millis"})),
        True,
        True,
        True,
    ),
    (
        "recursive-record-field-added-with-default",
        rec(A, f("next", ["null", "R"])),
        rec(A, f("next", ["null", "R"]), f("c", "int", default=0)),
        True,
        True,
        True,
    ),
    ("enum-field-added-without-default", rec(A), rec(A, f("e", enum(["A"], default="A"))), False, True, True),
]
CASE_IDS = [c[0] for c in CASES]


def expected(level: CompatibilityLevel, backward: bool, forward: bool) -> bool:
    if level is CompatibilityLevel.NONE:
        return True
    return (backward or not level.backward) and (forward or not level.forward)


@pytest.mark.parametrize("level", list(CompatibilityLevel))
@pytest.mark.parametrize(("case", "old", "new", "backward", "forward", "_agrees"), CASES, ids=CASE_IDS)
def test_matrix(
    level: CompatibilityLevel, case: str, old: str, new: str, backward: bool, forward: bool, _agrees: bool
) -> None:
    result = check_compatibility(parse_schema(new), [(1, parse_schema(old))], level)
    assert result.is_compatible is expected(level, backward, forward)
    assert bool(result.messages) is not result.is_compatible


def _avro_verdict(reader: ParsedSchema, writer: ParsedSchema) -> bool:
    checker = avc.ReaderWriterCompatibilityChecker()  # type: ignore[no-untyped-call]  # avro leaves __init__ unannotated
    result = checker.get_compatibility(reader.avro_schema, writer.avro_schema)
    return bool(result.compatibility is avc.SchemaCompatibilityType.compatible)


@pytest.mark.parametrize(("case", "old", "new", "backward", "forward", "agrees"), CASES, ids=CASE_IDS)
def test_avro_checker_as_oracle(case: str, old: str, new: str, backward: bool, forward: bool, agrees: bool) -> None:
    """Outside our documented corrections the avro package's checker gives the same verdicts."""
    o, n = parse_schema(old), parse_schema(new)
    ours = (not check_pair(n, o), not check_pair(o, n))
    assert ours == (backward, forward)
    theirs = (_avro_verdict(n, o), _avro_verdict(o, n))
    assert (theirs == ours) is agrees


def test_reasons_are_listed_one_per_problem_with_paths() -> None:
    old = parse_schema(rec(A))
    new = parse_schema(rec(A, f("b", "string"), f("c", "long")))
    result = check_compatibility(new, [(3, old)], CompatibilityLevel.BACKWARD)
    assert result.messages[:2] == [
        "{errorType:'READER_FIELD_MISSING_DEFAULT_VALUE', description:'The field 'b' at path '/fields/1' in the "
        "new schema has no default value and is missing in the old schema', additionalInfo:'b'}",
        "{errorType:'READER_FIELD_MISSING_DEFAULT_VALUE', description:'The field 'c' at path '/fields/2' in the "
        "new schema has no default value and is missing in the old schema', additionalInfo:'c'}",
    ]
    assert result.messages[2:] == [
        "{oldSchemaVersion: 3}",
        f"{{oldSchema: '{old.canonical}'}}",
        "{compatibility: 'BACKWARD'}",
    ]


def test_type_mismatch_location_points_at_the_field() -> None:
    issues = check_pair(parse_schema(rec(A, f("s", "int"))), parse_schema(rec(A, f("s", "string"))))
    assert [(i.kind, i.location) for i in issues] == [("type_mismatch", "/fields/1/type")]


V1 = parse_schema(rec(A))
V2 = parse_schema(rec(A, f("b", "string", default="x")))
V3 = parse_schema(rec(A, f("b", "string")))


@pytest.mark.parametrize(
    ("level", "ok"),
    [
        (CompatibilityLevel.BACKWARD, True),
        (CompatibilityLevel.BACKWARD_TRANSITIVE, False),
        (CompatibilityLevel.FULL, True),
        (CompatibilityLevel.FULL_TRANSITIVE, False),
    ],
)
def test_backward_transitivity_checks_every_version(level: CompatibilityLevel, ok: bool) -> None:
    result = check_compatibility(V3, [(1, V1), (2, V2)], level)
    assert result.is_compatible is ok
    if not ok:
        assert "{oldSchemaVersion: 1}" in result.messages


@pytest.mark.parametrize(
    ("level", "ok"), [(CompatibilityLevel.FORWARD, True), (CompatibilityLevel.FORWARD_TRANSITIVE, False)]
)
def test_forward_transitivity_checks_every_version(level: CompatibilityLevel, ok: bool) -> None:
    old1 = parse_schema(rec(A, f("b", "string")))
    old2 = parse_schema(rec(A, f("b", "string", default="")))
    assert check_compatibility(parse_schema(rec(A)), [(1, old1), (2, old2)], level).is_compatible is ok


def test_level_parsing_is_case_insensitive() -> None:
    assert CompatibilityLevel.parse("full_transitive") is CompatibilityLevel.FULL_TRANSITIVE
    assert CompatibilityLevel.parse("sideways") is None
    assert CompatibilityLevel.parse(3) is None
