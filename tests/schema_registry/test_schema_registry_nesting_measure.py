"""``json_depth_exceeds``: nesting measured on bytes, strings skipped, deep texts stopped early."""

from __future__ import annotations

import time

from seaway.schema_registry.nesting import MAX_JSON_DEPTH, json_depth_exceeds


def test_depth_is_measured_outside_strings() -> None:
    assert not json_depth_exceeds('{"doc": "' + "[" * 10_000 + '"}')
    assert not json_depth_exceeds('{"doc": "\\"' + "{" * 10_000 + '"}')  # escaped quote inside the string
    assert json_depth_exceeds("[" * (MAX_JSON_DEPTH + 1))
    assert not json_depth_exceeds("[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH)
    assert not json_depth_exceeds("[]" * 1_000_000)
    assert json_depth_exceeds(b"[" * 5_000_000)


def test_measuring_is_linear_and_stops_early_on_deep_texts() -> None:
    started = time.monotonic()
    assert json_depth_exceeds(b"[" * 2_000_000)
    assert not json_depth_exceeds(b'["' + b"a\\\"[" * 400_000 + b'"]')
    assert time.monotonic() - started < 5
