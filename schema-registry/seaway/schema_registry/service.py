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
answers a lookup from the resolver's caches when the state lock is free, else returns ``None`` so
the caller runs :meth:`RegistryService.lookup` in a thread. Parsing, its bounded caches and
matching a schema to a subject's version live in ``resolver.py``.

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
from seaway.schema_registry.resolver import ParseKey, SchemaResolver, WouldBlock
from seaway.schema_registry.schemas import SCHEMA_TYPE_AVRO, ParsedSchema, SchemaReference
from seaway.schema_registry.store import (
    KeyType,
    Mode,
    RegistryStore,
    SchemaVersion,
    StoredSchema,
    config_record,
    delete_subject_record,
    legacy_global_key,
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
# Java's Character.isISOControl, as Confluent's QualifiedSubject.isValidSubject checks it.
_CONTROL = frozenset(chr(c) for c in (*range(0x20), *range(0x7F, 0xA0)))
#: The largest ``_schemas`` record a registration may write: Kafka's default ``message.max.bytes``
#: (librdkafka's and the broker's), so a record that would fail in the log is refused first with
#: Confluent's 42209, leaving nothing behind.
MAX_RECORD_BYTES = 1_000_000
# Confluent's reserved subject names (QualifiedSubject GLOBAL_SUBJECT_NAME / EMPTY_SUBJECT_NAME).
_RESERVED_SUBJECTS = frozenset({"__GLOBAL", "__EMPTY"})


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
        self._progress = threading.Condition()  # notified whenever records were applied
        self._writer = threading.Lock()  # one write decision at a time
        self.resolver = SchemaResolver(self.store)
        self.max_record_bytes = MAX_RECORD_BYTES

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
        tailer (which may be blocked in ``read`` waiting for exactly this record). So when
        the lock is taken we wait to be told that records were applied, and re-check: a
        write returns as soon as the tailer has applied it (it used to poll the lock every
        20 ms, which was a fixed 20 ms on a fifth of all registrations).
        """
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        while self.store.applied_offset < target:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise e.RegistryError(
                    e.ErrorCode.OPERATION_TIMEOUT,
                    f"Timed out waiting for the _schemas log to reach offset {target}",
                )
            if self._reader.acquire(blocking=False):
                try:
                    if self.store.applied_offset < target:
                        self._apply(self.log.read(self.store.applied_offset + 1, min(remaining, 0.2)))
                finally:
                    self._reader.release()
            else:
                with self._progress:
                    if self.store.applied_offset < target:
                        self._progress.wait(min(remaining, 0.05))

    def poll(self, timeout: float = 1.0) -> None:
        """Apply whatever new records arrive within ``timeout`` (for a background tailer)."""
        with self._reader:
            self._apply(self.log.read(self.store.applied_offset + 1, timeout))

    def _apply(self, records: Sequence[LogRecord]) -> None:
        with self._state:
            for r in records:
                self.store.apply(r.offset, r.key, r.value)
        if records:
            with self._progress:
                self._progress.notify_all()

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
        """Refuse, with Confluent's 42208, a subject no route could reach again once created.

        Confluent refuses control characters and its reserved names. A subject holding ``/``
        is addressed as ``%2F``, as Confluent's routes allow (``api/paths.py``); ``.``/``..``
        are dot segments every HTTP client folds away, so they are refused here too, at every
        create (register, config, mode), so nothing unreachable exists.
        """
        if (
            not subject
            or subject in (".", "..")
            or subject in _RESERVED_SUBJECTS
            or not _CONTROL.isdisjoint(subject)
        ):
            raise e.invalid_subject(subject)

    def parsed(self, stored: StoredSchema) -> ParsedSchema:
        """The parsed form of a stored schema (cached by id, bounded: ``resolver.py``)."""
        return self.resolver.parsed(stored)

    def _key(self, request: SchemaRequest, normalize: bool) -> ParseKey:
        return self.resolver.key(request.schema, request.schema_type, request.references, normalize)

    def _parse(self, key: ParseKey) -> ParsedSchema:
        return self.resolver.parse(key)

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
            key = self._key(request, self._normalize(subject, normalize))
            seen = self.resolver.seen(key)
        loaded: list[ParsedSchema] = []

        def load() -> ParsedSchema:
            if not loaded:
                loaded.append(self._parse(key))
            return loaded[0]

        if seen is None:
            seen = self.resolver.remember(key, load())
        with self._state:
            versions = self._live_or_404(subject, deleted=deleted)
            found = self.resolver.match(versions, seen, load)
        if loaded:
            self.resolver.remember(key, loaded[0])  # with its fingerprint, if matching needed it
        if found is None:
            raise e.schema_not_found()
        return found

    def lookup_nowait(
        self, subject: str, request: SchemaRequest, *, normalize: bool = False, deleted: bool = False
    ) -> SchemaVersion | None:
        """:meth:`lookup` when it can answer without blocking, else ``None``.

        It can when the state lock is free and this schema text was resolved before (the
        common case: every producer of a topic sends the same text). ``None`` means: call
        :meth:`lookup` off the event loop. Errors are the same as :meth:`lookup`'s.
        """
        if not self._state.acquire(blocking=False):
            return None
        try:
            seen = self.resolver.seen(self._key(request, self._normalize(subject, normalize)))
            if seen is None:
                return None
            try:
                found = self.resolver.match(self._live_or_404(subject, deleted=deleted), seen, None)
            except WouldBlock:
                return None
            if found is None:
                raise e.schema_not_found()
            return found
        finally:
            self._state.release()

    # -- compatibility --------------------------------------------------------------------

    def test_compatibility(
        self, subject: str, spec: VersionSpec | None, request: SchemaRequest, *, normalize: bool = False
    ) -> CompatibilityResult:
        """``POST /compatibility/subjects/{s}/versions[/{v}]``.

        With a version: that one version under the subject's level direction (Confluent);
        without: the versions the level selects (latest, or all for transitive levels).
        """
        with self._state:
            key = self._key(request, self._normalize(subject, normalize))
        parsed = self._parse(key)
        with self._state:
            level = self.compatibility_level(subject)
            live = self.store.versions(subject)
            if spec is None:
                existing = self.resolver.to_check(parsed, live, level)
            elif not live and spec == LATEST:
                return CompatibilityResult(True)
            else:
                existing = self.resolver.versions([self._find(subject, spec, deleted=False)])
                level = _non_transitive(level)
            return check_compatibility(parsed, existing, level)

    # -- registration ---------------------------------------------------------------------

    def register(self, subject: str, request: SchemaRequest, *, normalize: bool = False) -> int:
        """``POST /subjects/{s}/versions``: the schema's id, registering a version if new."""
        self.check_subject(subject)
        with self._writer:
            self._begin_write()
            with self._state:
                self._check_register_mode(subject, request)
                key = self._key(request, self._normalize(subject, normalize))
                known = self.resolver.seen(key) is not None
            # A new text is parsed before taking the state lock: readers need not wait for it.
            preparsed = None if known or self._importing(request) else self._parse(key)
            with self._state:
                record, schema_id, parsed = self._plan_register(subject, request, key, preparsed)
            if record is not None:
                record_key, record_value = schema_record(record)
                if len(record_key) + len(record_value or b"") > self.max_record_bytes:
                    raise e.schema_too_large()
                self._write([(record_key, record_value)])
                if parsed is not None:  # the next registration checks against it: keep it parsed
                    self.resolver.remember_stored(schema_id, parsed)
                    self.resolver.remember_fingerprint(schema_id, parsed)
                    self.resolver.remember_summary(schema_id, parsed)
            return schema_id

    @staticmethod
    def _importing(request: SchemaRequest) -> bool:
        return request.schema_id is not None and request.schema_id >= 0

    def _check_register_mode(self, subject: str, request: SchemaRequest) -> None:
        mode = self.mode(subject)
        if mode in (Mode.READONLY, Mode.READONLY_OVERRIDE):
            raise e.operation_not_permitted(f"Subject {subject} is in read-only mode")
        importing = self._importing(request)
        if importing and mode is not Mode.IMPORT:
            raise e.operation_not_permitted(f"Subject {subject} is not in import mode")
        if not importing and mode is not Mode.READWRITE:
            raise e.operation_not_permitted(f"Subject {subject} is not in read-write mode")

    def _plan_register(
        self, subject: str, request: SchemaRequest, key: ParseKey, preparsed: ParsedSchema | None
    ) -> tuple[SchemaVersion | None, int, ParsedSchema | None]:
        """What registering ``request`` writes (``None``: nothing), the id, and the parse used.

        Runs under the writer and state locks. A text already registered under the subject
        (exactly, or the same schema spelled differently) answers its id without a parse when
        the text was seen before; only the versions the compatibility level selects are parsed.
        """
        self._check_register_mode(subject, request)
        importing = self._importing(request)
        all_versions = self.store.versions(subject, deleted=True)
        live = [sv for sv in all_versions if not sv.deleted]
        next_version = all_versions[-1].version + 1 if all_versions else 1
        if importing:
            parsed = self._parse(key)
            record, schema_id = self._plan_import(subject, request, parsed, all_versions, next_version)
            return record, schema_id, parsed
        loaded: list[ParsedSchema] = [] if preparsed is None else [preparsed]

        def load() -> ParsedSchema:
            if not loaded:
                loaded.append(self._parse(key))
            return loaded[0]

        seen = self.resolver.seen(key) or self.resolver.remember(key, load())
        existing = self.resolver.match(live, seen, load)
        if loaded:
            self.resolver.remember(key, loaded[0])
        if existing is not None:
            return None, existing.schema_id, None
        parsed = load()
        level = self.compatibility_level(subject)
        result = check_compatibility(parsed, self.resolver.to_check(parsed, live, level), level)
        if not result.is_compatible:
            raise e.incompatible_schema(subject, result.messages)
        known_id = self.store.id_for(parsed.identity)
        new_id = known_id if known_id is not None else self.store.max_id + 1
        return self._version(subject, next_version, new_id, parsed), new_id, parsed

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
            records = [config_record(subject, None)]
            if subject is None:
                records.append((legacy_global_key(KeyType.CONFIG), None))
            self._write(records)
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
            records = [mode_record(subject, None)]
            if subject is None:
                records.append((legacy_global_key(KeyType.MODE), None))
            self._write(records)
            return previous


def _non_transitive(level: CompatibilityLevel) -> CompatibilityLevel:
    return CompatibilityLevel(level.value.removesuffix("_TRANSITIVE"))
