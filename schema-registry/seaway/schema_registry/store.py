"""The registry's state machine over ``_schemas`` records, in Confluent's record format.

Keys and values are compact JSON exactly as Confluent Schema Registry writes them, so a
topic written by Confluent (or Karapace) replays here and vice versa. Key field order is
fixed, because compaction compares key *bytes*::

    SCHEMA          {"keytype":"SCHEMA","subject":S,"version":V,"magic":1}
                    -> {"subject":S,"version":V,"id":N,"schema":TEXT,"deleted":B,
                        "schemaType":"AVRO"[,"references":[{"name","subject","version"}]]}
                    -> null: the version is permanently deleted
    CONFIG          {"keytype":"CONFIG"[,"subject":S],"magic":0}      -> {["subject":S,]"compatibilityLevel":L} | null
    MODE            {"keytype":"MODE"[,"subject":S],"magic":0}        -> {["subject":S,]"mode":M} | null
    DELETE_SUBJECT  {"keytype":"DELETE_SUBJECT","subject":S,"magic":0} -> {"subject":S,"version":V}
                    (soft-deletes every version <= V)
    CLEAR_SUBJECT   {"keytype":"CLEAR_SUBJECT","subject":S,"magic":0}  -> {"subject":S}
                    (forgets the subject's soft-deleted versions)
    NOOP            {"keytype":"NOOP","magic":0}                       -> null

The global CONFIG and MODE keys have no ``subject`` at all: Confluent's keys are written
with Jackson's ``NON_EMPTY``, which drops a null subject, and compaction keeps one record per
key *bytes*, so a differently spelled key would let a record another registry wrote outlive
our later write or tombstone. Registries before this one wrote ``"subject":null``; deleting a
global config or mode tombstones that spelling too (:func:`legacy_global_key`).

:class:`RegistryStore` applies records strictly in log order and is otherwise passive: it
never writes and holds no lock (the service serialises access). Records it cannot decode
are skipped and counted, never fatal: one bad record must not stop a registry from starting.
As in Confluent's ``KafkaStoreMessageHandler``, a SCHEMA record whose id already holds
another schema text is ignored ("duplicate ID"), tombstones of other key types only delete,
and a CONFIG value shows only the fields of Confluent's ``Config`` entity.
Schema ids are never handed out twice by one history: ``max_id`` only grows.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

from seaway.schema_registry.schemas import SCHEMA_TYPE_AVRO, SchemaReference

__all__ = [
    "KeyType",
    "Mode",
    "RegistryStore",
    "SchemaVersion",
    "StoredSchema",
    "clear_subject_record",
    "config_record",
    "delete_subject_record",
    "encode_json",
    "legacy_global_key",
    "mode_record",
    "noop_record",
    "schema_key",
    "schema_record",
]

log = logging.getLogger(__name__)

Record = tuple[bytes, bytes | None]

#: What ``GET /config`` may show of a CONFIG value: the fields of Confluent's ``Config`` entity.
CONFIG_FIELDS = frozenset({
    "alias", "aliasForDeks", "normalize", "validateFields", "validateNewSchemas", "validateRules",
    "compatibilityLevel", "compatibilityPolicy", "compatibilityGroup", "defaultMetadata",
    "overrideMetadata", "defaultRuleSet", "overrideRuleSet",
})


class KeyType(StrEnum):
    SCHEMA = "SCHEMA"
    CONFIG = "CONFIG"
    MODE = "MODE"
    DELETE_SUBJECT = "DELETE_SUBJECT"
    CLEAR_SUBJECT = "CLEAR_SUBJECT"
    NOOP = "NOOP"
    CONTEXT = "CONTEXT"


class Mode(StrEnum):
    READWRITE = "READWRITE"
    READONLY = "READONLY"
    READONLY_OVERRIDE = "READONLY_OVERRIDE"
    IMPORT = "IMPORT"


@dataclass(frozen=True, slots=True)
class StoredSchema:
    """A schema as stored under an id: what ``GET /schemas/ids/{id}`` returns."""

    schema_id: int
    schema: str
    schema_type: str = SCHEMA_TYPE_AVRO
    references: tuple[SchemaReference, ...] = ()

    @property
    def identity(self) -> tuple[str, str, tuple[SchemaReference, ...]]:
        return (self.schema_type, self.schema, self.references)


@dataclass(frozen=True, slots=True)
class SchemaVersion:
    """One version of one subject (a SCHEMA record's value)."""

    subject: str
    version: int
    schema_id: int
    schema: str
    schema_type: str = SCHEMA_TYPE_AVRO
    references: tuple[SchemaReference, ...] = ()
    deleted: bool = False

    @property
    def stored(self) -> StoredSchema:
        return StoredSchema(self.schema_id, self.schema, self.schema_type, self.references)

    def to_value(self) -> dict[str, Any]:
        value: dict[str, Any] = {
            "subject": self.subject,
            "version": self.version,
            "id": self.schema_id,
            "schema": self.schema,
            "deleted": self.deleted,
            "schemaType": self.schema_type,
        }
        if self.references:
            value["references"] = [r.to_json() for r in self.references]
        return value


def encode_json(value: dict[str, Any] | None) -> bytes | None:
    """Jackson-style compact JSON (no spaces), the byte form of every key and value."""
    if value is None:
        return None
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


def _key(keytype: KeyType, subject: str | None, magic: int = 0, **extra: Any) -> bytes:
    key: dict[str, Any] = {"keytype": keytype.value}
    if subject is not None:  # Confluent's NON_EMPTY: no "subject" key for the global entries
        key["subject"] = subject
    key.update(extra)
    key["magic"] = magic
    encoded = encode_json(key)
    assert encoded is not None
    return encoded


def legacy_global_key(keytype: KeyType) -> bytes:
    """The global CONFIG/MODE key as registries before this one spelled it (to tombstone it too)."""
    return b'{"keytype":"%s","subject":null,"magic":0}' % keytype.value.encode()


def schema_key(subject: str, version: int) -> bytes:
    return _key(KeyType.SCHEMA, subject, 1, version=version)


def schema_record(version: SchemaVersion) -> Record:
    return schema_key(version.subject, version.version), encode_json(version.to_value())


def config_record(subject: str | None, config: dict[str, Any] | None) -> Record:
    return _key(KeyType.CONFIG, subject), encode_json(config)


def mode_record(subject: str | None, mode: Mode | None) -> Record:
    value: dict[str, Any] | None = None
    if mode is not None:
        value = {"mode": mode.value} if subject is None else {"subject": subject, "mode": mode.value}
    return _key(KeyType.MODE, subject), encode_json(value)


def delete_subject_record(subject: str, version: int) -> Record:
    return _key(KeyType.DELETE_SUBJECT, subject), encode_json({"subject": subject, "version": version})


def clear_subject_record(subject: str) -> Record:
    return _key(KeyType.CLEAR_SUBJECT, subject), encode_json({"subject": subject})


def noop_record() -> Record:
    return b'{"keytype":"NOOP","magic":0}', None


def _references(raw: Any) -> tuple[SchemaReference, ...]:
    if not raw:
        return ()
    return tuple(SchemaReference(str(r["name"]), str(r["subject"]), int(r["version"])) for r in raw)


class RegistryStore:
    """In-memory registry state, rebuilt by :meth:`apply` from ``_schemas`` records."""

    def __init__(self) -> None:
        self.applied_offset = -1
        self.max_id = 0
        self.skipped_records = 0
        self.subjects: dict[str, dict[int, SchemaVersion]] = {}
        self.global_config: dict[str, Any] | None = None
        self.subject_configs: dict[str, dict[str, Any]] = {}
        self.global_mode: Mode | None = None
        self.subject_modes: dict[str, Mode] = {}
        self._schemas: dict[int, StoredSchema] = {}
        self._ids: dict[tuple[str, str, tuple[SchemaReference, ...]], int] = {}
        self._users: dict[int, set[tuple[str, int]]] = {}

    # -- applying records ---------------------------------------------------------------

    def apply(self, offset: int, key: bytes, value: bytes | None) -> None:
        """Apply one record; offsets must increase. Undecodable records are skipped."""
        self.applied_offset = max(self.applied_offset, offset)
        try:
            k = json.loads(key)
            v = None if value is None else json.loads(value)
            keytype = KeyType(k["keytype"])
            self._dispatch(keytype, k, v)
        except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
            self.skipped_records += 1
            log.warning("skipping undecodable _schemas record at offset %d: %s", offset, exc)

    def _dispatch(self, keytype: KeyType, k: dict[str, Any], v: Any) -> None:
        subject = k.get("subject")
        if keytype is KeyType.SCHEMA:
            self._apply_schema(str(subject), int(k["version"]), v)
        elif keytype is KeyType.CONFIG:
            config = None if v is None else {f: x for f, x in dict(v).items() if f in CONFIG_FIELDS and x is not None}
            if subject is None:
                self.global_config = config
            elif config is None:
                self.subject_configs.pop(subject, None)
            else:
                self.subject_configs[subject] = config
        elif keytype is KeyType.MODE:
            mode = None if v is None else Mode(v["mode"])
            if subject is None:
                self.global_mode = mode
            elif mode is None:
                self.subject_modes.pop(subject, None)
            else:
                self.subject_modes[subject] = mode
        elif keytype is KeyType.DELETE_SUBJECT and v is not None:
            upto = int(v["version"])
            versions = self.subjects.get(str(subject), {})
            for number, sv in list(versions.items()):
                if number <= upto and not sv.deleted:
                    versions[number] = replace(sv, deleted=True)
        elif keytype is KeyType.CLEAR_SUBJECT:
            for sv in [sv for sv in self.subjects.get(str(subject), {}).values() if sv.deleted]:
                self._remove_version(sv)
        # NOOP and CONTEXT records carry nothing this store keeps.

    def _apply_schema(self, subject: str, version: int, v: Any) -> None:
        sv = None
        if v is not None:
            sv = SchemaVersion(
                subject=subject,
                version=version,
                schema_id=int(v["id"]),
                schema=str(v["schema"]),
                schema_type=str(v.get("schemaType") or SCHEMA_TYPE_AVRO),
                references=_references(v.get("references")),
                deleted=bool(v.get("deleted", False)),
            )
            holder = self._schemas.get(sv.schema_id)
            if holder is not None and holder.schema != sv.schema and not subject.startswith(":."):
                # Confluent's validateUpdate: "Found a schema with duplicate ID ... will not be
                # registered". (Subjects in other contexts have ids of their own there; this
                # registry keeps one id space, so it does not judge them.)
                self.skipped_records += 1
                log.warning("ignoring a _schemas record for %s version %d: id %d already holds another schema",
                            subject, version, sv.schema_id)
                return
        previous = self.subjects.get(subject, {}).get(version)
        if previous is not None:
            self._remove_version(previous)
        if sv is None:
            return
        self.subjects.setdefault(subject, {})[version] = sv
        self.max_id = max(self.max_id, sv.schema_id)
        stored = sv.stored
        self._schemas.setdefault(sv.schema_id, stored)
        self._ids.setdefault(stored.identity, sv.schema_id)
        self._users.setdefault(sv.schema_id, set()).add((subject, version))

    def _remove_version(self, sv: SchemaVersion) -> None:
        versions = self.subjects.get(sv.subject, {})
        versions.pop(sv.version, None)
        if not versions:
            self.subjects.pop(sv.subject, None)
        users = self._users.get(sv.schema_id)
        if users is not None:
            users.discard((sv.subject, sv.version))
            if not users:  # no version uses the id any more: it is gone (but never reused)
                del self._users[sv.schema_id]
                stored = self._schemas.pop(sv.schema_id)
                if self._ids.get(stored.identity) == sv.schema_id:
                    del self._ids[stored.identity]

    # -- queries ------------------------------------------------------------------------

    def versions(self, subject: str, *, deleted: bool = False) -> list[SchemaVersion]:
        """The subject's versions, oldest first; soft-deleted ones only when ``deleted``."""
        found = self.subjects.get(subject, {})
        return [found[n] for n in sorted(found) if deleted or not found[n].deleted]

    def version(self, subject: str, version: int) -> SchemaVersion | None:
        return self.subjects.get(subject, {}).get(version)

    def schema(self, schema_id: int) -> StoredSchema | None:
        return self._schemas.get(schema_id)

    def id_for(self, identity: tuple[str, str, tuple[SchemaReference, ...]]) -> int | None:
        return self._ids.get(identity)

    def users(self, schema_id: int) -> list[SchemaVersion]:
        """Every version (live or soft-deleted) registered with this id, by subject/version."""
        pairs = sorted(self._users.get(schema_id, ()))
        return [self.subjects[s][v] for s, v in pairs]

    def referenced_by(self, subject: str, version: int) -> list[int]:
        """Ids of live schemas that reference ``subject``/``version``."""
        ids = {
            sv.schema_id
            for versions in self.subjects.values()
            for sv in versions.values()
            if not sv.deleted and any(r.subject == subject and r.version == version for r in sv.references)
        }
        return sorted(ids)
