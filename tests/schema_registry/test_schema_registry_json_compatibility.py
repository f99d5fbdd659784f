"""JSON Schema compatibility: a matrix of changes with the answer Confluent's registry gives.

Each case is one change from an old schema to a new one, checked at BACKWARD (the new schema
reads data written with the old: Confluent's diff from old to new) and FORWARD (the reverse),
with the difference Confluent names when it refuses. The expectations follow Confluent's
documented JSON Schema rules (open and closed content models, added/removed properties,
narrowed and widened types and limits, combined types); a development run of Confluent's own
diff examples through this implementation agreed on all of them.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from seaway.schema_registry.compatibility import CompatibilityLevel, check_compatibility
from seaway.schema_registry.schemas import ParsedSchema, parse_schema


def obj(props: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props, **extra}


S, INT, N = {"type": "string"}, {"type": "integer"}, {"type": "number"}
CLOSED = {"additionalProperties": False}

# (case, old, new, backward: None if compatible else the error type, forward: the same)
MATRIX: list[tuple[str, Any, Any, str | None, str | None]] = [
    ("identical", obj({"a": S}), obj({"a": S}), None, None),
    ("open model: property added", obj({"a": S}), obj({"a": S, "b": INT}),
     "PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL", None),
    ("open model: property removed", obj({"a": S, "b": INT}), obj({"a": S}),
     None, "PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL"),
    ("open model: property with an empty schema added", obj({"a": S}), obj({"a": S, "b": {}}), None, None),
    ("closed model: optional property added", obj({"a": S}, **CLOSED), obj({"a": S, "b": INT}, **CLOSED),
     None, "PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL"),
    ("closed model: required property added", obj({"a": S}, **CLOSED),
     obj({"a": S, "b": INT}, required=["b"], **CLOSED), "REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL",
     "PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL"),
    ("closed model: required property with a default added", obj({"a": S}, **CLOSED),
     obj({"a": S, "b": {"type": "integer", "default": 0}}, required=["b"], **CLOSED),
     None, "PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL"),
    ("closed model: property removed", obj({"a": S, "b": INT}, **CLOSED), obj({"a": S}, **CLOSED),
     "PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL", None),
    ("partially open: added property covered by additionalProperties",
     obj({"a": S}, additionalProperties=INT), obj({"a": S, "b": INT}, additionalProperties=INT), None, None),
    ("partially open: added property not covered", obj({"a": S}, additionalProperties=INT),
     obj({"a": S, "b": S}, additionalProperties=INT), "PROPERTY_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL",
     "PROPERTY_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL"),
    ("open -> closed (additionalProperties false)", obj({"a": S}), obj({"a": S}, **CLOSED),
     "ADDITIONAL_PROPERTIES_REMOVED", None),
    ("integer -> number widens", obj({"a": INT}), obj({"a": N}), None, "TYPE_NARROWED"),
    ("string -> integer", obj({"a": S}), obj({"a": INT}), "TYPE_CHANGED", "TYPE_CHANGED"),
    ("type made nullable", obj({"a": S}), obj({"a": {"type": ["string", "null"]}}), None, "TYPE_CHANGED"),
    ("required attribute added", obj({"a": S}), obj({"a": S}, required=["a"]), "REQUIRED_ATTRIBUTE_ADDED", None),
    ("maxLength decreased", obj({"a": {"type": "string", "maxLength": 10}}),
     obj({"a": {"type": "string", "maxLength": 5}}), "MAX_LENGTH_DECREASED", None),
    ("maxLength removed", obj({"a": {"type": "string", "maxLength": 10}}), obj({"a": S}), None, "MAX_LENGTH_ADDED"),
    ("minimum added", obj({"a": N}), obj({"a": {"type": "number", "minimum": 0}}), "MINIMUM_ADDED", None),
    ("pattern changed", obj({"a": {"type": "string", "pattern": "^a"}}),
     obj({"a": {"type": "string", "pattern": "^b"}}), "PATTERN_CHANGED", "PATTERN_CHANGED"),
    ("enum extended", obj({"c": {"enum": ["red", "green"]}}), obj({"c": {"enum": ["red", "green", "blue"]}}),
     None, "ENUM_ARRAY_NARROWED"),
    ("array items narrowed", obj({"xs": {"type": "array", "items": N}}), obj({"xs": {"type": "array", "items": INT}}),
     "TYPE_NARROWED", None),
    ("uniqueItems added", obj({"xs": {"type": "array", "items": S}}),
     obj({"xs": {"type": "array", "items": S, "uniqueItems": True}}), "UNIQUE_ITEMS_ADDED", None),
    ("oneOf gains a member", obj({"v": {"oneOf": [S, INT]}}), obj({"v": {"oneOf": [S, INT, {"type": "boolean"}]}}),
     None, "SUM_TYPE_NARROWED"),
    ("allOf -> anyOf", obj({"v": {"allOf": [S, {"minLength": 1}]}}), obj({"v": {"anyOf": [S, {"minLength": 1}]}}),
     None, "COMBINED_TYPE_CHANGED"),
    ("anyOf -> oneOf of two", obj({"v": {"anyOf": [S, INT]}}), obj({"v": {"oneOf": [S, INT]}}),
     "COMBINED_TYPE_CHANGED", None),
    ("nested object through a $ref, property removed from a closed model",
     {"type": "object", "properties": {"p": {"$ref": "#/definitions/P"}},
      "definitions": {"P": obj({"x": S, "y": S}, **CLOSED)}},
     {"type": "object", "properties": {"p": {"$ref": "#/definitions/P"}},
      "definitions": {"P": obj({"x": S}, **CLOSED)}},
     "PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL", None),
    ("title and description changes are compatible", obj({"a": S}, title="A", description="one"),
     obj({"a": S}, title="B", description="two"), None, None),
]


def parsed(schema: Any) -> ParsedSchema:
    return parse_schema(json.dumps(schema), schema_type="JSON")


@pytest.mark.parametrize(("case", "old", "new", "backward", "forward"), MATRIX, ids=[m[0] for m in MATRIX])
def test_json_schema_compatibility_matrix(case: str, old: Any, new: Any, backward: str | None,
                                          forward: str | None) -> None:
    older, newer = parsed(old), parsed(new)
    for level, expected in ((CompatibilityLevel.BACKWARD, backward), (CompatibilityLevel.FORWARD, forward)):
        result = check_compatibility(newer, [(1, older)], level)
        assert result.is_compatible is (expected is None), (level, result.messages)
        if expected is not None:
            assert any(f'errorType:"{expected}"' in m for m in result.messages), (level, result.messages)
            assert result.messages[-3:] == ["{oldSchemaVersion: 1}", f"{{oldSchema: '{older.canonical}'}}",
                                            f"{{compatibility: '{level.value}'}}"]
    full = check_compatibility(newer, [(1, older)], CompatibilityLevel.FULL)
    assert full.is_compatible is (backward is None and forward is None)
    assert check_compatibility(newer, [(1, older)], CompatibilityLevel.NONE).is_compatible


def test_transitive_levels_check_every_version() -> None:
    v1 = parsed(obj({"a": S}, **CLOSED))
    v2 = parsed(obj({"a": S, "b": S}, **CLOSED))
    v3 = parsed(obj({"a": S, "b": S}, required=["b"], **CLOSED))  # b required: v1's data lacks it
    assert check_compatibility(v3, [(1, v1), (2, v2)], CompatibilityLevel.BACKWARD).is_compatible is False
    v3 = parsed(obj({"a": S, "c": S}, **CLOSED))  # drops b: fine for v1's data, not for v2's
    assert check_compatibility(v3, [(1, v1), (2, v2)], CompatibilityLevel.BACKWARD).is_compatible is False
    v3 = parsed(obj({"a": S, "b": S, "c": S}, **CLOSED))
    assert check_compatibility(v3, [(1, v1), (2, v2)], CompatibilityLevel.BACKWARD_TRANSITIVE).is_compatible
    v4 = parsed(obj({"a": S, "b": {"type": "integer"}}, **CLOSED))  # b retyped: v1 has no b, v2 has a string
    result = check_compatibility(v4, [(1, v1), (2, v2)], CompatibilityLevel.BACKWARD_TRANSITIVE)
    assert result.is_compatible is False and "{oldSchemaVersion: 2}" in result.messages


def test_recursive_schemas_compare() -> None:
    tree = {"type": "object", "properties": {"v": S, "children": {"type": "array", "items": {"$ref": "#"}}}}
    wider = {"type": "object", "properties": {"v": {"type": ["string", "null"]},
                                              "children": {"type": "array", "items": {"$ref": "#"}}}}
    assert check_compatibility(parsed(wider), [(1, parsed(tree))], CompatibilityLevel.BACKWARD).is_compatible
    assert not check_compatibility(parsed(tree), [(1, parsed(wider))], CompatibilityLevel.BACKWARD).is_compatible
