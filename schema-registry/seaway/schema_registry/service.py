"""Registry operations on top of the store and the log: what every REST endpoint calls.

Lifecycle and ordering guarantees:

* :meth:`RegistryService.start` replays the log to its end before the service answers.
* Every write runs under one write lock: catch up with the log's end (so a write decides on
  everything acknowledged before it), validate *everything*, then append records and wait
  until the local store has applied them (read-your-writes). Nothing is appended when
  validation fails, so an error never leaves a trace in ``_schemas``.
* Reads take the state lock only; they never wait for the log.
* Writes are only done by the leader. :class:`Leadership` is the seam for the group-protocol
  election (``leader_election.py``): a follower's write raises :class:`NotLeaderError`
  carrying the leader's URL, before anything is validated, and the HTTP layer forwards it
  (``api/forward.py``). :class:`StaticLeadership` is a fixed answer (in-memory logs, tests).

Hot reads (what every Kafka client asks) have non-blocking variants for the HTTP event loop:
:meth:`RegistryService.find_schema` is one dict lookup, and :meth:`RegistryService.lookup_nowait`
answers a lookup from the parse cache when the state lock is free, else returns ``None`` so the
caller runs :meth:`RegistryService.lookup` in a thread. Parsing and canonicalizing a schema
text (avro + fastavro, ~1 ms) is cached by everything it depends on: the text, its type, the
resolved references, the referenced schemas' texts and the normalize flag.

Schema ids: the same schema (canonical text + type + references) gets the same id in every
subject; a new one gets ``max id ever seen + 1``, so ids are never reused while the log
keeps the record that carried the max id (Confluent has the same limit after compaction
removes a permanently deleted schema's tombstone).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal, Protocol

from seaway.schema_registry import errors as e
from seaway.schema_registry.compatibility import CompatibilityLevel, CompatibilityResult, check_compatibility
from seaway.schema_registry.log import LogRecord, SchemaLog
from seaway.schema_registry.schemas import SCHEMA_TYPE_AVRO, ParsedSchema, SchemaReference, parse_schema
from seaway.schema_registry.store import (
    Mode,
    RegistryStore,
    SchemaVersion,
    StoredSchema,
    config_record,
    delete_subject_record,
    mode_record,
    schema_record,
)

__all__ = [
    "LATEST",
    "Leadership",
    "RegistryService",
    "SchemaRequest",
    "StaticLeadership",
    "VersionSpec",
    "parse_version",
]

LATEST: Literal["latest"] = "latest"
VersionSpec = int | Literal["latest"]
_MAX_VERSION = 2**31 - 1
_PARSE_CACHE_SIZE = 1024
ParseKey = tuple[str, str, tuple[SchemaReference, ...], tuple[str, ...], bool]


def parse_version(raw: str) -> VersionSpec:
    """``latest``/``-1`` or 1..2^31-1, else ``RegistryError`` 42202 (Confluent's ``VersionId``)."""
    if raw == "latest" or raw == "-1":
        return LATEST
    try:
        number = int(raw)
    except ValueError:
        raise e.invalid_version(raw) from None
    if not 1 <= number <= _MAX_VERSION:
        raise e.invalid_version(raw)
    return number


class Leadership(Protocol):
    """Who may write. Implemented by the leader elector (later: Kafka group protocol)."""

    def is_leader(self) -> bool: ...

    def leader_url(self) -> str | None: ...


@dataclass
class StaticLeadership:
    """A fixed answer: this instance is (or is not) the leader."""

    leader: bool = True
    url: str | None = None

    def is_leader(self) -> bool:
        return self.leader

    def leader_url(self) -> str | None:
        return self.url


@dataclass(frozen=True)
class SchemaRequest:
    """The body of register / lookup / compatibility requests (``RegisterSchemaRequest``)."""

    schema: str
    schema_type: str = SCHEMA_TYPE_AVRO
    references: tuple[SchemaReference, ...] = ()
    schema_id: int | None = None
    version: int | None = None


class RegistryService:
    """The registry: reads from the replayed store, writes through the log."""

    def __init__(
        self,
        log: SchemaLog,
        *,
        default_compatibility: CompatibilityLevel = CompatibilityLevel.BACKWARD,
        mode_mutability: bool = True,
        leadership: Leadership | None = None,
        timeout: float = 10.0,
    ) -> None:
        self.log = log
        self.store = RegistryStore()
        self.default_compatibility = default_compatibility
        self.mode_mutability = mode_mutability
        self.leadership: Leadership = leadership or StaticLeadership()
        self.timeout = timeout
        self._state = threading.RLock()  # guards the store
        self._reader = threading.Lock()  # one thread consumes the log at a time
        self._writer = threading.Lock()  # one write decision at a time
        self._parsed: dict[int, ParsedSchema] = {}
        self._parse_cache: dict[ParseKey, ParsedSchema] = {}  # guarded by _state

    # -- log following --------------------------------------------------------------------

    def start(self) -> None:
        """Replay the whole log; returns once every record present at call time is applied."""
        self.catch_up_to_end()

    def catch_up_to_end(self, timeout: float | None = None) -> None:
        """Return once every record acknowledged before this call is applied (read-your-writes)."""
        self.catch_up(self.log.end_offset() - 1, timeout)

    def catch_up(self, target: int, timeout: float | None = None) -> None:
        """Return once the record at ``target`` (or later) is applied to the store.

        Whoever holds the reader lock applies records: this thread, or the background
        tailer (which may be blocked in ``read`` waiting for exactly this record). So we
        only try the lock briefly and re-check, instead of queueing behind a long poll.
        """
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        while self.store.applied_offset < target:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise e.RegistryError(
                    e.ErrorCode.OPERATION_TIMEOUT,
                    f"Timed out waiting for the _schemas log to reach offset {target}",
                )
            if self._reader.acquire(timeout=min(remaining, 0.02)):
                try:
                    if self.store.applied_offset < target:
                        self._apply(self.log.read(self.store.applied_offset + 1, min(remaining, 0.2)))
                finally:
                    self._reader.release()

    def poll(self, timeout: float = 1.0) -> None:
        """Apply whatever new records arrive within ``timeout`` (for a background tailer)."""
        with self._reader:
            self._apply(self.log.read(self.store.applied_offset + 1, timeout))

    def _apply(self, records: Sequence[LogRecord]) -> None:
        with self._state:
            for r in records:
                self.store.apply(r.offset, r.key, r.value)

    def _write(self, records: Sequence[tuple[bytes, bytes | None]]) -> None:
        last = -1
        try:
            for key, value in records:
                last = self.log.append(key, value)
        except Exception as exc:  # the log's own errors become Confluent's store error
            raise e.RegistryError(
                e.ErrorCode.STORE_ERROR, f"Error while writing to the _schemas log: {exc}"
            ) from exc
        self.catch_up(last)

    def _begin_write(self) -> None:
        if not self.leadership.is_leader():
            raise e.NotLeaderError(self.leadership.leader_url())
        self.catch_up(self.log.end_offset() - 1)

    # -- helpers --------------------------------------------------------------------------

    @staticmethod
    def check_subject(subject: str) -> None:
        if not subject or any(ord(c) < 0x20 for c in subject):
            raise e.invalid_subject(subject)

    def parsed(self, stored: StoredSchema) -> ParsedSchema:
        """The parsed form of a stored schema (cached by id)."""
        cached = self._parsed.get(stored.schema_id)
        if cached is None or cached.canonical != stored.schema:
            cached = self._parse(stored.schema, stored.schema_type, stored.references, normalize=False)
            self._parsed[stored.schema_id] = cached
        return cached

    def _dependencies(self, references: Sequence[SchemaReference]) -> list[str]:
        order: list[str] = []
        seen: set[tuple[str, int]] = set()

        def visit(ref: SchemaReference, depth: int) -> None:
            if depth > 32:
                raise e.invalid_schema("Schema references are nested too deeply (a cycle?)")
            if (ref.subject, ref.version) in seen:
                return
            seen.add((ref.subject, ref.version))
            sv = self.store.version(ref.subject, ref.version)
            if sv is None:
                raise e.invalid_schema(
                    f"Reference '{ref.name}' to subject '{ref.subject}' version {ref.version} not found"
                )
            for inner in sv.references:
                visit(inner, depth + 1)
            order.append(sv.schema)

        for ref in references:
            visit(ref, 0)
        return order

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

    def _parse_key(
        self, text: str, schema_type: str, references: Sequence[SchemaReference], normalize: bool
    ) -> ParseKey:
        """Everything a parse result depends on (references resolved against the store now)."""
        refs = self._resolve_references(references)
        return (text, schema_type, refs, tuple(self._dependencies(refs)), normalize)

    def _parse(
        self, text: str, schema_type: str, references: Sequence[SchemaReference], *, normalize: bool
    ) -> ParsedSchema:
        with self._state:
            key = self._parse_key(text, schema_type, references, normalize)
            cached = self._parse_cache.get(key)
        if cached is not None:
            return cached
        _, _, refs, dependencies, _ = key
        parsed = parse_schema(
            text, schema_type=schema_type, references=refs, dependencies=dependencies, normalize=normalize
        )
        with self._state:
            if len(self._parse_cache) >= _PARSE_CACHE_SIZE:  # crude, but a registry sees few texts
                self._parse_cache.clear()
            self._parse_cache[key] = parsed
        return parsed

    def _normalize(self, subject: str, normalize: bool) -> bool:
        config = self.store.subject_configs.get(subject) or self.store.global_config or {}
        return normalize or bool(config.get("normalize", False))

    def compatibility_level(self, subject: str | None) -> CompatibilityLevel:
        config = (
            (self.store.subject_configs.get(subject) if subject is not None else None)
            or self.store.global_config
            or {}
        )
        return CompatibilityLevel.parse(config.get("compatibilityLevel")) or self.default_compatibility

    def mode(self, subject: str | None) -> Mode:
        if subject is not None and subject in self.store.subject_modes:
            return self.store.subject_modes[subject]
        return self.store.global_mode or Mode.READWRITE

    def _live_or_404(self, subject: str, *, deleted: bool = False) -> list[SchemaVersion]:
        versions = self.store.versions(subject, deleted=deleted)
        if not versions:
            raise e.subject_not_found(subject)
        return versions

    def _find(self, subject: str, spec: VersionSpec, *, deleted: bool) -> SchemaVersion:
        versions = self._live_or_404(subject, deleted=deleted)
        if spec == LATEST:
            return versions[-1]
        for sv in versions:
            if sv.version == spec:
                return sv
        raise e.version_not_found(spec)

    # -- schema reads ---------------------------------------------------------------------

    def find_schema(self, schema_id: int) -> StoredSchema | None:
        """The schema under ``schema_id``, without taking the state lock (event-loop safe).

        One dict lookup is atomic under the GIL, and stored schemas are immutable.
        """
        return self.store.schema(schema_id)

    def get_schema(self, schema_id: int) -> StoredSchema:
        with self._state:
            stored = self.store.schema(schema_id)
            if stored is None:
                raise e.schema_not_found(schema_id)
            return stored

    def schema_usages(self, schema_id: int, *, deleted: bool = False) -> list[SchemaVersion]:
        with self._state:
            if self.store.schema(schema_id) is None:
                raise e.schema_not_found(schema_id)
            return [sv for sv in self.store.users(schema_id) if deleted or not sv.deleted]

    def list_schemas(
        self, prefix: str = "", *, deleted: bool = False, latest_only: bool = False
    ) -> list[SchemaVersion]:
        with self._state:
            out: list[SchemaVersion] = []
            for subject in sorted(self.store.subjects):
                if not subject.startswith(prefix):
                    continue
                versions = self.store.versions(subject, deleted=deleted)
                out.extend(versions[-1:] if latest_only else versions)
            return out

    def list_subjects(
        self, prefix: str = "", *, deleted: bool = False, deleted_only: bool = False
    ) -> list[str]:
        with self._state:
            out = []
            for subject in sorted(self.store.subjects):
                if not subject.startswith(prefix):
                    continue
                all_versions = self.store.versions(subject, deleted=True)
                live = any(not sv.deleted for sv in all_versions)
                if deleted_only:
                    if any(sv.deleted for sv in all_versions):
                        out.append(subject)
                elif live or deleted:
                    out.append(subject)
            return out

    def list_versions(self, subject: str, *, deleted: bool = False, deleted_only: bool = False) -> list[int]:
        with self._state:
            versions = self._live_or_404(subject, deleted=deleted or deleted_only)
            if deleted_only:
                return [sv.version for sv in versions if sv.deleted]
            return [sv.version for sv in versions]

    def get_version(self, subject: str, spec: VersionSpec, *, deleted: bool = False) -> SchemaVersion:
        with self._state:
            return self._find(subject, spec, deleted=deleted)

    def referenced_by(self, subject: str, spec: VersionSpec) -> list[int]:
        with self._state:
            sv = self._find(subject, spec, deleted=True)
            return self.store.referenced_by(subject, sv.version)

    def lookup(
        self, subject: str, request: SchemaRequest, *, normalize: bool = False, deleted: bool = False
    ) -> SchemaVersion:
        """``POST /subjects/{s}``: the version of ``subject`` holding this schema."""
        with self._state:
            parsed = self._parse(
                request.schema,
                request.schema_type,
                request.references,
                normalize=self._normalize(subject, normalize),
            )
            return self._match(subject, parsed, deleted)

    def lookup_nowait(
        self, subject: str, request: SchemaRequest, *, normalize: bool = False, deleted: bool = False
    ) -> SchemaVersion | None:
        """:meth:`lookup` when it can answer without blocking, else ``None``.

        It can when the state lock is free and this schema text was parsed before (the common
        case: every producer of a topic sends the same text). ``None`` means: call
        :meth:`lookup` off the event loop. Errors are the same as :meth:`lookup`'s.
        """
        if not self._state.acquire(blocking=False):
            return None
        try:
            key = self._parse_key(
                request.schema, request.schema_type, request.references, self._normalize(subject, normalize)
            )
            parsed = self._parse_cache.get(key)
            return None if parsed is None else self._match(subject, parsed, deleted)
        finally:
            self._state.release()

    def _match(self, subject: str, parsed: ParsedSchema, deleted: bool) -> SchemaVersion:
        identity = parsed.identity
        for sv in reversed(self._live_or_404(subject, deleted=deleted)):
            if (sv.schema_type, sv.schema, sv.references) == identity:
                return sv
        raise e.schema_not_found()

    # -- compatibility --------------------------------------------------------------------

    def test_compatibility(
        self, subject: str, spec: VersionSpec | None, request: SchemaRequest, *, normalize: bool = False
    ) -> CompatibilityResult:
        """``POST /compatibility/subjects/{s}/versions[/{v}]``.

        With a version: that one version under the subject's level direction (Confluent);
        without: the versions the level selects (latest, or all for transitive levels).
        """
        with self._state:
            parsed = self._parse(
                request.schema,
                request.schema_type,
                request.references,
                normalize=self._normalize(subject, normalize),
            )
            level = self.compatibility_level(subject)
            live = self.store.versions(subject)
            if spec is None:
                existing = [(sv.version, self.parsed(sv.stored)) for sv in live]
            elif not live and spec == LATEST:
                return CompatibilityResult(True)
            else:
                sv = self._find(subject, spec, deleted=False)
                existing = [(sv.version, self.parsed(sv.stored))]
                level = _non_transitive(level)
            return check_compatibility(parsed, existing, level)

    # -- registration ---------------------------------------------------------------------

    def register(self, subject: str, request: SchemaRequest, *, normalize: bool = False) -> int:
        """``POST /subjects/{s}/versions``: the schema's id, registering a version if new."""
        self.check_subject(subject)
        with self._writer:
            self._begin_write()
            with self._state:
                record, schema_id = self._plan_register(subject, request, normalize)
            if record is not None:
                self._write([schema_record(record)])
            return schema_id

    def _plan_register(
        self, subject: str, request: SchemaRequest, normalize: bool
    ) -> tuple[SchemaVersion | None, int]:
        mode = self.mode(subject)
        if mode in (Mode.READONLY, Mode.READONLY_OVERRIDE):
            raise e.operation_not_permitted(f"Subject {subject} is in read-only mode")
        importing = request.schema_id is not None and request.schema_id >= 0
        if importing and mode is not Mode.IMPORT:
            raise e.operation_not_permitted(f"Subject {subject} is not in import mode")
        if not importing and mode is not Mode.READWRITE:
            raise e.operation_not_permitted(f"Subject {subject} is not in read-write mode")
        parsed = self._parse(
            request.schema,
            request.schema_type,
            request.references,
            normalize=self._normalize(subject, normalize),
        )
        all_versions = self.store.versions(subject, deleted=True)
        live = [sv for sv in all_versions if not sv.deleted]
        next_version = all_versions[-1].version + 1 if all_versions else 1
        if importing:
            return self._plan_import(subject, request, parsed, all_versions, next_version)
        for sv in reversed(live):
            if sv.stored.identity == parsed.identity:
                return None, sv.schema_id
        result = check_compatibility(
            parsed, [(sv.version, self.parsed(sv.stored)) for sv in live], self.compatibility_level(subject)
        )
        if not result.is_compatible:
            raise e.incompatible_schema(subject, result.messages)
        schema_id = self.store.id_for(parsed.identity)
        if schema_id is None:
            schema_id = self.store.max_id + 1
        return self._version(subject, next_version, schema_id, parsed), schema_id

    def _plan_import(
        self,
        subject: str,
        request: SchemaRequest,
        parsed: ParsedSchema,
        all_versions: list[SchemaVersion],
        next_version: int,
    ) -> tuple[SchemaVersion | None, int]:
        schema_id = request.schema_id
        assert schema_id is not None
        existing = self.store.schema(schema_id)
        if existing is not None and existing.identity != parsed.identity:
            raise e.id_mismatch(f"Overwrite new schema with id {schema_id} is not permitted.")
        version = request.version if request.version is not None and request.version > 0 else next_version
        for sv in all_versions:
            if sv.version == version:
                if sv.schema_id == schema_id and not sv.deleted:
                    return None, schema_id
                raise e.id_mismatch(
                    f"Version {version} of subject {subject} already exists with schema id {sv.schema_id}"
                )
        return self._version(subject, version, schema_id, parsed), schema_id

    @staticmethod
    def _version(subject: str, version: int, schema_id: int, parsed: ParsedSchema) -> SchemaVersion:
        return SchemaVersion(
            subject, version, schema_id, parsed.canonical, parsed.schema_type, parsed.references
        )

    # -- deletes --------------------------------------------------------------------------

    def _check_writable(self, subject: str) -> None:
        if self.mode(subject) in (Mode.READONLY, Mode.READONLY_OVERRIDE):
            raise e.operation_not_permitted(f"Subject {subject} is in read-only mode")

    def _check_unreferenced(self, subject: str, versions: Sequence[SchemaVersion]) -> None:
        for sv in versions:
            if self.store.referenced_by(subject, sv.version):
                raise e.reference_exists(
                    f"One or more references exist to the schema {{subject={subject}, version={sv.version}}}"
                )

    def delete_subject(self, subject: str, *, permanent: bool = False) -> list[int]:
        with self._writer:
            self._begin_write()
            with self._state:
                self._check_writable(subject)
                versions = self.store.versions(subject, deleted=True)
                if not versions:
                    raise e.subject_not_found(subject)
                live = [sv for sv in versions if not sv.deleted]
                records: list[tuple[bytes, bytes | None]] = []
                if permanent:
                    if live:
                        raise e.subject_not_soft_deleted(subject)
                    self._check_unreferenced(subject, versions)
                    records = [(schema_record(sv)[0], None) for sv in versions]
                    if subject in self.store.subject_configs:
                        records.append(config_record(subject, None))
                    if subject in self.store.subject_modes:
                        records.append(mode_record(subject, None))
                    deleted = [sv.version for sv in versions]
                else:
                    if not live:
                        raise e.subject_soft_deleted(subject)
                    self._check_unreferenced(subject, live)
                    records = [delete_subject_record(subject, versions[-1].version)]
                    deleted = [sv.version for sv in live]
            self._write(records)
            return deleted

    def delete_version(self, subject: str, spec: VersionSpec, *, permanent: bool = False) -> int:
        with self._writer:
            self._begin_write()
            with self._state:
                self._check_writable(subject)
                versions = self.store.versions(subject, deleted=True)
                if not versions:
                    raise e.subject_not_found(subject)
                if spec == LATEST:
                    candidates = versions if permanent else [sv for sv in versions if not sv.deleted]
                    if not candidates:
                        raise e.subject_soft_deleted(subject)
                    sv = candidates[-1]
                else:
                    found = self.store.version(subject, spec)
                    if found is None:
                        raise e.version_not_found(spec)
                    sv = found
                if permanent and not sv.deleted:
                    raise e.version_not_soft_deleted(subject, sv.version)
                if not permanent and sv.deleted:
                    raise e.version_soft_deleted(subject, sv.version)
                self._check_unreferenced(subject, [sv])
                key, value = schema_record(replace(sv, deleted=True))
            self._write([(key, None if permanent else value)])
            return sv.version

    # -- config ---------------------------------------------------------------------------

    def get_config(self, subject: str | None, *, default_to_global: bool = False) -> dict[str, Any]:
        with self._state:
            if subject is not None:
                config = self.store.subject_configs.get(subject)
                if config is not None:
                    return dict(config)
                if not default_to_global:
                    raise e.RegistryError(
                        e.ErrorCode.SUBJECT_LEVEL_COMPATIBILITY_NOT_CONFIGURED,
                        f"Subject '{subject}' does not have subject-level compatibility configured",
                    )
            config = dict(self.store.global_config or {})
            config["compatibilityLevel"] = self.compatibility_level(None).value
            return config

    def set_config(self, subject: str | None, level: object, normalize: bool | None = None) -> dict[str, Any]:
        parsed = CompatibilityLevel.parse(level)
        if parsed is None:
            raise e.invalid_compatibility_level(level)
        if subject is not None:
            self.check_subject(subject)
        value: dict[str, Any] = {"compatibilityLevel": parsed.value}
        if normalize is not None:
            value["normalize"] = normalize
        with self._writer:
            self._begin_write()
            self._write([config_record(subject, value)])
        echo: dict[str, Any] = {"compatibility": parsed.value}
        if normalize is not None:
            echo["normalize"] = normalize
        return echo

    def delete_config(self, subject: str | None) -> dict[str, Any]:
        with self._writer:
            self._begin_write()
            with self._state:
                if subject is None:
                    previous = self.get_config(None)
                else:
                    if subject not in self.store.subjects and subject not in self.store.subject_configs:
                        raise e.subject_not_found(subject)
                    previous = self.get_config(subject)
            self._write([config_record(subject, None)])
            return previous

    # -- mode -----------------------------------------------------------------------------

    def get_mode(self, subject: str | None, *, default_to_global: bool = False) -> Mode:
        with self._state:
            if subject is not None and subject not in self.store.subject_modes and not default_to_global:
                raise e.RegistryError(
                    e.ErrorCode.SUBJECT_LEVEL_MODE_NOT_CONFIGURED,
                    f"Subject '{subject}' does not have subject-level mode configured",
                )
            return self.mode(subject)

    def set_mode(self, subject: str | None, mode: object, *, force: bool = False) -> Mode:
        if not self.mode_mutability:
            raise e.operation_not_permitted("Mode changes are not allowed")
        try:
            parsed = Mode(str(mode).upper()) if isinstance(mode, str) else None
        except ValueError:
            parsed = None
        if parsed is None:
            raise e.invalid_mode(mode)
        if subject is not None:
            self.check_subject(subject)
        with self._writer:
            self._begin_write()
            with self._state:
                if parsed is Mode.IMPORT and not force and self.mode(subject) is not Mode.IMPORT:
                    subjects = [subject] if subject is not None else list(self.store.subjects)
                    if any(self.store.versions(s) for s in subjects):
                        raise e.operation_not_permitted("Cannot import since found existing subjects")
            self._write([mode_record(subject, parsed)])
        return parsed

    def delete_mode(self, subject: str | None) -> Mode:
        if not self.mode_mutability:
            raise e.operation_not_permitted("Mode changes are not allowed")
        with self._writer:
            self._begin_write()
            with self._state:
                previous = self.get_mode(subject)
            self._write([mode_record(subject, None)])
            return previous


def _non_transitive(level: CompatibilityLevel) -> CompatibilityLevel:
    return CompatibilityLevel(level.value.removesuffix("_TRANSITIVE"))
