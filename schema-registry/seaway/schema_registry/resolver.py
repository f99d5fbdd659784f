"""Parsing schema texts against the store, with bounded caches, and matching them to versions.

Why a module of its own: parsing is what costs the registry its memory and its time.
A parsed schema (avro objects) weighs about 27 bytes per character of text, so caching every
version of a subject grown to 1,000 fields by 1,000 versions took 1.46 GB and made each
registration re-walk them all. Here:

* **Parsed schemas** (avro objects, for compatibility checks and ``format=resolved``) are
  cached by schema id in a :class:`~seaway.schema_registry.cache.WeightedLRU` bounded by
  characters of text, and a check loads only the versions its level needs
  (:meth:`SchemaResolver.versions` is lazy: BACKWARD parses the latest one, or nothing when
  the previous registration left it cached).
* **What a request text resolved to** (:class:`Seen`: its identity, no avro objects) is cached
  by the text and everything the result depends on, so the hot lookup of a known text is a
  dict hit; bounded by characters too.
* **Transitive levels** first try :mod:`~seaway.schema_registry.summary`: a version whose
  summary (fields and their type texts, shared between versions) proves it compatible is
  neither parsed nor walked; only the rest go to the full checker.
* **Matching a schema to a subject's version** is Confluent's: first the exact canonical
  identity (one dict lookup in the store), then structural equality (``ParsedSchema.fingerprint``:
  the same schema however its keys are ordered or its names spelled, so
  ``normalize=true`` finds a version registered without it). Fingerprints of stored schemas
  are computed lazily and kept per id (32 bytes each); a count of ``"name"`` keys, which
  normalization never changes, rules out nearly every version without parsing it.

Callers hold the service's state lock around everything here except :meth:`SchemaResolver.parse`
(see ``service.py``); the caches have their own short locks.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import overload

from seaway.schema_registry import errors as e
from seaway.schema_registry.cache import WeightedLRU
from seaway.schema_registry.compatibility import CompatibilityLevel
from seaway.schema_registry.schemas import ParsedSchema, SchemaReference, parse_schema
from seaway.schema_registry.store import RegistryStore, SchemaVersion, StoredSchema
from seaway.schema_registry.summary import RecordSummary, extends, proves_carried, proves_compatible, summarize

__all__ = ["Identity", "ParseKey", "SchemaResolver", "Seen", "WouldBlock"]

Identity = tuple[str, str, tuple[SchemaReference, ...]]
ParseKey = tuple[str, str, tuple[SchemaReference, ...], tuple[tuple[str, str], ...], bool]
"""(text, type, references resolved to versions, (name, text) of every dependency, normalize)."""

#: Characters of canonical text whose parsed (avro) form stays cached: about 7 MB of objects.
PARSED_BUDGET = 250_000
#: Characters of request + canonical text remembered for lookups (strings only: ~1 byte each).
SEEN_BUDGET = 4_000_000
#: Stored schemas whose shape (name count, fingerprint) is remembered; ~150 bytes each.
SHAPES_BUDGET = 200_000
#: Fields of record summaries kept (two tuple slots pointing at shared objects: ~16 bytes each).
SUMMARY_BUDGET = 1_000_000
_MAX_REFERENCE_DEPTH = 32
_NAME_KEY = re.compile(r'"name"\s*:')


class WouldBlock(Exception):
    """A non-blocking caller asked for something that needs a parse (see ``lookup_nowait``)."""


@dataclass(frozen=True, slots=True)
class Seen:
    """What one request text resolved to: enough to answer a lookup without avro objects.

    ``fingerprint`` is the request's :meth:`ParsedSchema.digest` for its mode (``normalized``).
    """

    identity: Identity
    names: int
    fingerprint: bytes | None = None
    normalized: bool = False


@dataclass(slots=True)
class _Shape:
    names: int
    fingerprints: dict[bool, bytes] = field(default_factory=dict)


def name_count(text: str) -> int:
    """``"name":`` keys in a JSON schema text: one per field and named type, in every spelling."""
    return len(_NAME_KEY.findall(text))


class _LazyVersions(Sequence[tuple[int, ParsedSchema]]):
    """``(version, parsed)`` pairs parsed on access, so a check parses only what it reads."""

    def __init__(self, resolver: SchemaResolver, versions: Sequence[SchemaVersion]) -> None:
        self._resolver = resolver
        self._versions = versions

    def __len__(self) -> int:
        return len(self._versions)

    @overload
    def __getitem__(self, index: int) -> tuple[int, ParsedSchema]: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[tuple[int, ParsedSchema]]: ...

    def __getitem__(self, index: int | slice) -> tuple[int, ParsedSchema] | Sequence[tuple[int, ParsedSchema]]:
        if isinstance(index, slice):
            return _LazyVersions(self._resolver, self._versions[index])
        sv = self._versions[index]
        return sv.version, self._resolver.parsed(sv.stored)

    def __reversed__(self) -> Iterator[tuple[int, ParsedSchema]]:
        for sv in reversed(self._versions):
            yield sv.version, self._resolver.parsed(sv.stored)


class SchemaResolver:
    """Parses texts with their references resolved from ``store``; caches and matches results."""

    def __init__(self, store: RegistryStore) -> None:
        self.store = store
        self._parsed: WeightedLRU[int, ParsedSchema] = WeightedLRU(PARSED_BUDGET)
        self._seen: WeightedLRU[ParseKey, Seen] = WeightedLRU(SEEN_BUDGET)
        self._shapes: WeightedLRU[int, _Shape] = WeightedLRU(SHAPES_BUDGET)
        self._summaries: WeightedLRU[int, RecordSummary | bool] = WeightedLRU(SUMMARY_BUDGET)
        self._extensions: WeightedLRU[tuple[int, int], bool] = WeightedLRU(SHAPES_BUDGET)

    # -- references -----------------------------------------------------------------------

    def _resolve_references(self, references: Sequence[SchemaReference]) -> tuple[SchemaReference, ...]:
        out = []
        for ref in references:
            version = ref.version
            if version == -1:
                live = self.store.versions(ref.subject)
                if not live:
                    raise e.invalid_schema(f"Reference '{ref.name}' to subject '{ref.subject}' not found")
                version = live[-1].version
            out.append(SchemaReference(ref.name, ref.subject, version))
        return tuple(out)

    def _dependencies(self, references: Sequence[SchemaReference]) -> list[tuple[str, str]]:
        """``(name, text)`` of every referenced schema, dependencies of dependencies first."""
        order: list[tuple[str, str]] = []
        visited: set[tuple[str, int]] = set()

        def visit(ref: SchemaReference, depth: int) -> None:
            if depth > _MAX_REFERENCE_DEPTH:
                raise e.invalid_schema("Schema references are nested too deeply (a cycle?)")
            if (ref.subject, ref.version) in visited:
                return
            visited.add((ref.subject, ref.version))
            sv = self.store.version(ref.subject, ref.version)
            if sv is None:
                raise e.invalid_schema(
                    f"Reference '{ref.name}' to subject '{ref.subject}' version {ref.version} not found"
                )
            for inner in sv.references:
                visit(inner, depth + 1)
            order.append((ref.name, sv.schema))

        for ref in references:
            visit(ref, 0)
        return order

    def key(self, text: str, schema_type: str, references: Sequence[SchemaReference], normalize: bool) -> ParseKey:
        """Everything a parse result depends on (references resolved against the store now)."""
        refs = self._resolve_references(references)
        return (text, schema_type, refs, tuple(self._dependencies(refs)), normalize)

    # -- parsing --------------------------------------------------------------------------

    def seen(self, key: ParseKey) -> Seen | None:
        return self._seen.get(key)

    def parse(self, key: ParseKey) -> ParsedSchema:
        """Parse (no lock needed: pure); remembers what the text resolved to."""
        text, schema_type, refs, dependencies, normalize = key
        parsed = parse_schema(
            text, schema_type=schema_type, references=refs, named_dependencies=dependencies, normalize=normalize
        )
        self.remember(key, parsed)
        return parsed

    def remember(self, key: ParseKey, parsed: ParsedSchema) -> Seen:
        """Remember what the text under ``key`` resolved to (with its fingerprint once known)."""
        normalized = key[4]
        fingerprint = parsed.digest(normalized) if _digested(parsed, normalized) else None
        seen = Seen(parsed.identity, name_count(parsed.canonical), fingerprint, normalized)
        self._seen.put(key, seen, len(key[0]) + len(parsed.canonical) + 200)
        return seen

    def parsed(self, stored: StoredSchema) -> ParsedSchema:
        """The parsed form of a stored schema (cached by id, bounded)."""
        cached = self._parsed.get(stored.schema_id)
        if cached is None or cached.canonical != stored.schema:
            refs = stored.references
            cached = parse_schema(
                stored.schema,
                schema_type=stored.schema_type,
                references=refs,
                named_dependencies=tuple(self._dependencies(refs)),
            )
            self.remember_stored(stored.schema_id, cached)
        return cached

    def remember_stored(self, schema_id: int, parsed: ParsedSchema) -> None:
        """Cache ``parsed`` as the form of ``schema_id`` (a registration's own parse, reused)."""
        self._parsed.put(schema_id, parsed, parsed.weight)

    def versions(self, versions: Sequence[SchemaVersion]) -> Sequence[tuple[int, ParsedSchema]]:
        """``(version, parsed)`` for a compatibility check, parsed only when read."""
        return _LazyVersions(self, versions)

    def to_check(
        self, new: ParsedSchema, live: Sequence[SchemaVersion], level: CompatibilityLevel
    ) -> Sequence[tuple[int, ParsedSchema]]:
        """What ``check_compatibility(new, ..., level)`` must still walk, parsed lazily.

        The versions the level selects (the latest, or all for transitive levels) minus those
        whose summaries prove them compatible. Dropping proven versions changes no verdict: a
        check stops at the newest incompatible version, and a proven one is compatible.
        """
        if level is CompatibilityLevel.NONE or not live:
            return []
        selected = live if level.transitive else live[-1:]
        return self.versions(self.unproven(new, selected, level))

    def unproven(
        self, new: ParsedSchema, versions: Sequence[SchemaVersion], level: CompatibilityLevel
    ) -> list[SchemaVersion]:
        """Of ``versions`` (oldest first), those summaries cannot prove compatible with ``new``.

        Walked newest first: while each older version keeps every field of the one after it
        identically (``summary.extends``), the proof carries over at the cost of checking the
        new schema's required fields, so a grown history costs one set comparison, not one
        per version.
        """
        mine = self.summary_of(new)
        if mine is None:
            return list(versions)
        out = []
        newer: tuple[SchemaVersion, RecordSummary] | None = None  # the last version proven, going back
        for sv in reversed(versions):
            theirs = self._summary(sv)
            if theirs is None:
                proven = False
            elif newer is not None and self._extends(sv, theirs, *newer):
                proven = proves_carried(mine, theirs, backward=level.backward)
            else:
                proven = (not level.backward or proves_compatible(mine, theirs, new=mine)) and (
                    not level.forward or proves_compatible(theirs, mine, new=mine)
                )
            if proven:
                assert theirs is not None
                newer = (sv, theirs)
            else:
                newer = None
                out.append(sv)
        out.reverse()
        return out

    def _extends(
        self, sv: SchemaVersion, summary: RecordSummary, newer_sv: SchemaVersion, newer: RecordSummary
    ) -> bool:
        """:func:`~seaway.schema_registry.summary.extends`, cached per pair of ids."""
        pair = (sv.schema_id, newer_sv.schema_id)
        known = self._extensions.get(pair)
        if known is None:
            known = extends(summary, newer)
            self._extensions.put(pair, known, 1)
        return known

    @staticmethod
    def summary_of(parsed: ParsedSchema) -> RecordSummary | None:
        """The summary of a parsed schema, computed once per object."""
        if "_summary" not in parsed.__dict__:
            usable = parsed.schema_type == "AVRO" and not parsed.references
            summary = summarize(parsed.canonical) if usable else None
            object.__setattr__(parsed, "_summary", summary)
        cached: RecordSummary | None = parsed.__dict__["_summary"]
        return cached

    def remember_summary(self, schema_id: int, parsed: ParsedSchema) -> None:
        """Keep the summary of a schema just registered under ``schema_id``, if one was made."""
        summary = parsed.__dict__.get("_summary")
        if summary is not None:
            summary.__dict__.pop("_sets", None)  # sets are for the new side only: 32 KB a 1,000 fields
            self._summaries.put(schema_id, summary, summary.weight)

    def _summary(self, sv: SchemaVersion) -> RecordSummary | None:
        cached = self._summaries.get(sv.schema_id)
        if cached is None:
            summary = summarize(sv.schema) if sv.schema_type == "AVRO" and not sv.references else None
            cached = summary if summary is not None else False
            self._summaries.put(sv.schema_id, cached, summary.weight if summary is not None else 1)
        return cached if isinstance(cached, RecordSummary) else None

    # -- matching -------------------------------------------------------------------------

    def match(
        self,
        versions: Sequence[SchemaVersion],
        seen: Seen,
        load: Callable[[], ParsedSchema] | None,
    ) -> SchemaVersion | None:
        """The newest of ``versions`` holding the schema ``seen`` stands for, or ``None``.

        ``load`` parses the request text when its fingerprint is needed; ``None`` means the
        caller must not block, and :class:`WouldBlock` is raised instead of parsing.
        """
        identity = seen.identity
        schema_id = self.store.id_for(identity)
        if schema_id is not None:
            for sv in reversed(versions):
                if sv.schema_id == schema_id and (sv.schema_type, sv.schema, sv.references) == identity:
                    return sv
        fingerprint = seen.fingerprint
        for sv in reversed(versions):
            if sv.schema_type != identity[0] or sv.references != identity[2]:
                continue
            shape = self._shape(sv.schema_id, sv.schema)
            if shape.names != seen.names:
                continue
            if fingerprint is None:
                if load is None:
                    raise WouldBlock
                fingerprint = load().digest(seen.normalized)
            if self._fingerprint(sv.stored, shape, seen.normalized, blocking=load is not None) == fingerprint:
                return sv
        return None

    def _shape(self, schema_id: int, text: str) -> _Shape:
        shape = self._shapes.get(schema_id)
        if shape is None:
            shape = _Shape(name_count(text))
            self._shapes.put(schema_id, shape, 1)
        return shape

    def _fingerprint(self, stored: StoredSchema, shape: _Shape, normalized: bool, *, blocking: bool) -> bytes:
        found = shape.fingerprints.get(normalized)
        if found is None:
            cached = self._parsed.get(stored.schema_id)
            if cached is None and not blocking:
                raise WouldBlock
            found = shape.fingerprints[normalized] = (
                cached if cached is not None else self.parsed(stored)).digest(normalized)
        return found

    def remember_fingerprint(self, schema_id: int, parsed: ParsedSchema) -> None:
        """Record the fingerprints of a schema just registered under ``schema_id`` (those known)."""
        known = {mode: parsed.digest(mode) for mode in (False, True) if _digested(parsed, mode)}
        self._shapes.put(schema_id, _Shape(name_count(parsed.canonical), known), 1)


def _digested(parsed: ParsedSchema, normalized: bool) -> bool:
    """Whether ``parsed.digest(normalized)`` is already computed (it costs a walk for Avro)."""
    key = "_digest_n" if normalized or parsed.schema_type == "AVRO" else "_digest_p"
    return key in parsed.__dict__
