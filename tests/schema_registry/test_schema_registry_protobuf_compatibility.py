"""Protobuf compatibility: a matrix of changes with the answer Confluent's registry gives.

Each case changes one thing in a ``.proto`` schema and is checked at BACKWARD and FORWARD
(Confluent's diff from old to new, and from new to old), with the difference Confluent names
when it refuses. Expectations follow Confluent's documented Protobuf rules (the Protobuf guide's
"updating a message type": field numbers, wire-compatible scalar groups, removed fields,
message renames and moves, oneofs); a development run of Confluent's own diff examples through
this implementation agreed on all of them.
"""

from __future__ import annotations

import pytest
from seaway.schema_registry.compatibility import CompatibilityLevel, check_compatibility
from seaway.schema_registry.schemas import ParsedSchema, parse_schema


def proto(body: str, package: str = "shop", syntax: str = "proto3", imports: str = "") -> str:
    return f'syntax = "{syntax}";\npackage {package};\n{imports}\n{body}\n'


BASE = "message Order { int64 id = 1; string note = 2; Item item = 3; }\nmessage Item { string sku = 1; }"

# (case, old, new, backward: None if compatible else the error type, forward: the same)
MATRIX: list[tuple[str, str, str, str | None, str | None]] = [
    ("identical", proto(BASE), proto(BASE), None, None),
    ("field added", proto("message M { int32 a = 1; }"), proto("message M { int32 a = 1; string b = 2; }"),
     None, None),
    ("field removed", proto("message M { int32 a = 1; string b = 2; }"), proto("message M { int32 a = 1; }"),
     None, None),
    ("field renamed (same number)", proto("message M { int32 a = 1; }"), proto("message M { int32 renamed = 1; }"),
     None, None),
    ("int32 -> int64 (same wire group)", proto("message M { int32 a = 1; }"), proto("message M { int64 a = 1; }"),
     None, None),
    ("int32 -> bool (same wire group)", proto("message M { int32 a = 1; }"), proto("message M { bool a = 1; }"),
     None, None),
    ("int32 -> sint32", proto("message M { int32 a = 1; }"), proto("message M { sint32 a = 1; }"),
     "FIELD_SCALAR_KIND_CHANGED", "FIELD_SCALAR_KIND_CHANGED"),
    ("string -> bytes", proto("message M { string a = 1; }"), proto("message M { bytes a = 1; }"), None, None),
    ("string -> int32", proto("message M { string a = 1; }"), proto("message M { int32 a = 1; }"),
     "FIELD_SCALAR_KIND_CHANGED", "FIELD_SCALAR_KIND_CHANGED"),
    ("fixed32 -> sfixed32", proto("message M { fixed32 a = 1; }"), proto("message M { sfixed32 a = 1; }"),
     None, None),
    ("float -> double", proto("message M { float a = 1; }"), proto("message M { double a = 1; }"),
     "FIELD_SCALAR_KIND_CHANGED", "FIELD_SCALAR_KIND_CHANGED"),
    ("enum -> int32", proto("message M { E e = 1; }\nenum E { A = 0; }"), proto("message M { int32 e = 1; }"),
     None, None),
    ("scalar -> message", proto("message M { string a = 1; }\nmessage N { string x = 1; }"),
     proto("message M { N a = 1; }\nmessage N { string x = 1; }"), "FIELD_KIND_CHANGED", "FIELD_KIND_CHANGED"),
    ("message field renamed to another type", proto(BASE),
     proto("message Order { int64 id = 1; string note = 2; Product item = 3; }\nmessage Product { string sku = 1; }"),
     "FIELD_NAMED_TYPE_CHANGED", "FIELD_NAMED_TYPE_CHANGED"),
    ("a field of a referenced message changes kind", proto(BASE),
     proto("message Order { int64 id = 1; string note = 2; Item item = 3; }\nmessage Item { int64 sku = 1; }"),
     "FIELD_NAMED_TYPE_CHANGED", "FIELD_NAMED_TYPE_CHANGED"),
    ("message added", proto("message M { int32 a = 1; }"),
     proto("message M { int32 a = 1; }\nmessage N { int32 b = 1; }"), None, "MESSAGE_REMOVED"),
    ("message removed", proto("message M { int32 a = 1; }\nmessage N { int32 b = 1; }"),
     proto("message M { int32 a = 1; }"), "MESSAGE_REMOVED", None),
    ("messages reordered (moved)", proto("message M { int32 a = 1; }\nmessage N { int32 b = 1; }"),
     proto("message N { int32 b = 1; }\nmessage M { int32 a = 1; }"), None, None),
    ("message renamed", proto("message M { int32 a = 1; }"), proto("message Renamed { int32 a = 1; }"),
     "MESSAGE_REMOVED", "MESSAGE_REMOVED"),
    ("package changed", proto("message M { int32 a = 1; }"), proto("message M { int32 a = 1; }", package="other"),
     "PACKAGE_CHANGED", "PACKAGE_CHANGED"),
    ("repeated int32 -> singular (numeric label)", proto("message M { repeated int32 a = 1; }", syntax="proto2"),
     proto("message M { optional int32 a = 1; }", syntax="proto2"),
     "FIELD_NUMERIC_LABEL_CHANGED", "FIELD_NUMERIC_LABEL_CHANGED"),
    ("repeated string -> singular (string label)", proto("message M { repeated string a = 1; }", syntax="proto2"),
     proto("message M { optional string a = 1; }", syntax="proto2"), None, None),
    ("required field added (proto2)", proto("message M { optional int32 a = 1; }", syntax="proto2"),
     proto("message M { optional int32 a = 1; required int32 b = 2; }", syntax="proto2"),
     "REQUIRED_FIELD_ADDED", "REQUIRED_FIELD_REMOVED"),
    ("enum constant added", proto("message M { E e = 1; }\nenum E { A = 0; }"),
     proto("message M { E e = 1; }\nenum E { A = 0; B = 1; }"), None, None),
    ("oneof added around a new field", proto("message M { int32 a = 1; }"),
     proto("message M { int32 a = 1; oneof pick { string b = 2; int32 c = 3; } }"), None, None),
    ("one existing field moved into a new oneof", proto("message M { int32 a = 1; string b = 2; }"),
     proto("message M { oneof pick { int32 a = 1; } string b = 2; }"), None, None),
    ("two existing fields moved into one oneof", proto("message M { int32 a = 1; string b = 2; }"),
     proto("message M { oneof pick { int32 a = 1; string b = 2; } }"), "MULTIPLE_FIELDS_MOVED_TO_ONEOF", None),
    ("a oneof member removed", proto("message M { oneof pick { int32 a = 1; string b = 2; } }"),
     proto("message M { oneof pick { int32 a = 1; } }"), "ONEOF_FIELD_REMOVED", None),
    ("map value type changes kind", proto("message M { map<string, int32> m = 1; }"),
     proto("message M { map<string, string> m = 1; }"), "FIELD_SCALAR_KIND_CHANGED", "FIELD_SCALAR_KIND_CHANGED"),
    ("nested message gains a field", proto("message M { message In { int32 a = 1; } In in = 1; }"),
     proto("message M { message In { int32 a = 1; int32 b = 2; } In in = 1; }"), None, None),
]


def parsed(text: str) -> ParsedSchema:
    return parse_schema(text, schema_type="PROTOBUF")


@pytest.mark.parametrize(("case", "old", "new", "backward", "forward"), MATRIX, ids=[m[0] for m in MATRIX])
def test_protobuf_compatibility_matrix(case: str, old: str, new: str, backward: str | None,
                                       forward: str | None) -> None:
    older, newer = parsed(old), parsed(new)
    for level, expected in ((CompatibilityLevel.BACKWARD, backward), (CompatibilityLevel.FORWARD, forward)):
        result = check_compatibility(newer, [(1, older)], level)
        assert result.is_compatible is (expected is None), (level, result.messages)
        if expected is not None:
            assert any(f'errorType:"{expected}"' in m for m in result.messages), (level, result.messages)
    full = check_compatibility(newer, [(1, older)], CompatibilityLevel.FULL)
    assert full.is_compatible is (backward is None and forward is None)


def test_well_known_and_referenced_types_are_compared_by_name() -> None:
    stamp = '\nimport "google/protobuf/timestamp.proto";'
    old = parsed(proto("message M { google.protobuf.Timestamp at = 1; }", imports=stamp))
    same = parsed(proto("message M { .google.protobuf.Timestamp when = 1; }", imports=stamp))
    assert check_compatibility(same, [(1, old)], CompatibilityLevel.FULL).is_compatible
    other = parsed(proto("message M { google.protobuf.Duration at = 1; }",
                         imports='\nimport "google/protobuf/duration.proto";'))
    result = check_compatibility(other, [(1, old)], CompatibilityLevel.BACKWARD)
    assert not result.is_compatible and any("FIELD_NAMED_TYPE_CHANGED" in m and "#/M/1" in m for m in result.messages)


def test_recursive_messages_compare() -> None:
    old = parsed(proto("message Node { string v = 1; repeated Node children = 2; }"))
    new = parsed(proto("message Node { string v = 1; repeated Node children = 2; int32 depth = 3; }"))
    assert check_compatibility(new, [(1, old)], CompatibilityLevel.FULL_TRANSITIVE).is_compatible
