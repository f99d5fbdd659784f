"""Record summaries never vouch for an incompatible pair, and do vouch for what transitive checks repeat."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from seaway.schema_registry.compatibility import CompatibilityLevel, check_pair
from seaway.schema_registry.log import MemorySchemaLog
from seaway.schema_registry.schemas import parse_schema
from seaway.schema_registry.service import RegistryService, SchemaRequest
from seaway.schema_registry.summary import proves_compatible, summarize

from tests.schema_registry.test_schema_registry_compatibility import CASES


def _proof(reader: str, writer: str) -> bool:
    r, w = summarize(parse_schema(reader).canonical), summarize(parse_schema(writer).canonical)
    if r is None or w is None:
        return False
    proven = proves_compatible(r, w, new=r)
    assert proves_compatible(r, w, new=w) == proven  # whichever side holds the sets
    return proven


@pytest.mark.parametrize(("case", "old", "new"), [(c[0], c[1], c[2]) for c in CASES])
def test_a_summary_proof_is_never_wrong_on_the_compatibility_matrix(case: str, old: str, new: str) -> None:
    for reader, writer in ((new, old), (old, new), (old, old), (new, new)):
        if _proof(reader, writer):
            assert check_pair(parse_schema(reader), parse_schema(writer)) == [], case


def test_what_summaries_prove_and_what_they_leave_to_the_checker() -> None:
    base = {"type": "record", "name": "R", "namespace": "n", "fields": [
        {"name": "a", "type": ["null", {"type": "array", "items": "int"}], "default": None},
        {"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["X"]}},
    ]}
    grown = {**base, "fields": [*base["fields"], {"name": "b", "type": "string", "default": ""}]}
    assert _proof(json.dumps(grown), json.dumps(base))  # new field with a default, the rest identical
    assert not _proof(json.dumps({**grown, "fields": [*base["fields"], {"name": "b", "type": "string"}]}),
                      json.dumps(base))  # no default: left to the checker
    referencing = {**base, "fields": [*base["fields"], {"name": "again", "type": "E", "default": "X"}]}
    assert not _proof(json.dumps(referencing), json.dumps(referencing))  # a by-name type proves nothing
    assert not _proof(json.dumps({**base, "namespace": "other"}), json.dumps(base))  # keys carry the namespace
    assert summarize('"int"') is None and summarize("{not json") is None


def grown_schema(n: int) -> str:
    fields: list[dict[str, Any]] = [{"name": "id", "type": "long"}]
    fields += [{"name": f"f{i}", "type": ["null", "string"], "default": None} for i in range(n)]
    return json.dumps({"type": "record", "name": "Grow", "namespace": "bench", "fields": fields})


@pytest.mark.timeout(300)
@pytest.mark.parametrize("level", ["BACKWARD_TRANSITIVE", "FULL_TRANSITIVE"])
def test_a_transitive_subject_of_300_versions_registers_in_bounded_time(level: str) -> None:
    service = RegistryService(MemorySchemaLog(), default_compatibility=CompatibilityLevel(level))
    service.start()
    for n in range(299):
        service.register("grow-value", SchemaRequest(grown_schema(n)))
    started = time.monotonic()
    assert service.register("grow-value", SchemaRequest(grown_schema(299))) == 300
    assert time.monotonic() - started < 2  # parsing the 299 older versions alone took ~5 s
    # An incompatible change is still found (newest version first), with its message.
    bad = json.loads(grown_schema(300))
    bad["fields"][0]["type"] = "string"  # id: long -> string breaks every version
    with pytest.raises(Exception, match="oldSchemaVersion: 300"):
        service.register("grow-value", SchemaRequest(json.dumps(bad)))


@pytest.mark.timeout(300)
@pytest.mark.parametrize("seed", range(6))
def test_walking_a_history_proves_exactly_what_each_pair_proves(seed: int) -> None:
    """Random histories (fields added, dropped, retyped, defaults toggled): the walk that carries
    proofs down a growing history agrees with a proof per version, and never vouches for a pair
    the full checker rejects."""
    import random

    from seaway.schema_registry.store import SchemaVersion

    rng = random.Random(seed)
    types = ["int", "long", "string", ["null", "string"], {"type": "array", "items": "int"}]
    fields: dict[str, dict[str, object]] = {"id": {"name": "id", "type": "long"}}
    history = []
    for step in range(40):
        action = rng.random()
        name = f"f{rng.randrange(12)}"
        if action < 0.6:  # the common case: add a field with a default
            fields.setdefault(name, {"name": name, "type": ["null", "string"], "default": None})
        elif action < 0.7:
            fields.pop(name, None)
        elif action < 0.85 and name in fields:
            fields[name] = {"name": name, "type": rng.choice(types)}
        elif name in fields:
            fields[name] = {**fields[name], "doc": f"step {step}"}
        history.append(json.dumps({"type": "record", "name": "R", "namespace": "n", "fields": list(fields.values())}))
    service = RegistryService(MemorySchemaLog(), default_compatibility=CompatibilityLevel.NONE)
    service.start()
    for text in history:
        service.register("s", SchemaRequest(text))
    live: list[SchemaVersion] = service.store.versions("s")
    resolver = service.resolver
    for candidate in [*history[-5:], history[0]]:
        new = parse_schema(json.dumps({**json.loads(candidate), "doc": "new"}))
        mine = resolver.summary_of(new)
        assert mine is not None
        for level in (CompatibilityLevel.BACKWARD_TRANSITIVE, CompatibilityLevel.FORWARD_TRANSITIVE,
                      CompatibilityLevel.FULL_TRANSITIVE):
            walked = {sv.version for sv in live} - {sv.version for sv in resolver.unproven(new, live, level)}
            per_pair = set()
            for sv in live:
                theirs = summarize(sv.schema)
                assert theirs is not None
                if (not level.backward or proves_compatible(mine, theirs, new=mine)) and (
                    not level.forward or proves_compatible(theirs, mine, new=mine)
                ):
                    per_pair.add(sv.version)
            assert walked == per_pair, (level, sorted(walked ^ per_pair))
            for sv in live:
                if sv.version in walked:
                    old = parse_schema(sv.schema)
                    assert not level.backward or check_pair(new, old) == []
                    assert not level.forward or check_pair(old, new) == []
