"""ACLs and SCRAM credentials, durable in the ``__cluster_metadata`` log, as Kafka keeps them.

Kafka (KRaft) keeps both in its metadata log, ``__cluster_metadata-0`` under
``metadata.log.dir`` (default: the first of ``log.dirs``), a log no client can fetch from or
produce to. Seaway does the same: a compacted log in that directory that the log manager
leaves alone (``__cluster_metadata`` cannot be created as a topic, as in Kafka), so neither
the ACLs nor the credentials' salts and keys are readable through any API.

Records (one uncompressed batch per change, fsynced before the change is applied and
answered; keys are canonical JSON, so compaction keeps the latest record per key):

- an ACL: key ``{"type":"acl",...the binding...}``, value ``{}``; deleting it writes a tombstone;
- a credential: key ``{"type":"scram","user":...,"mechanism":"SCRAM-SHA-512"}``, value
  ``{"salt":b64,"stored_key":b64,"server_key":b64,"iterations":n}``; tombstone to delete.

At start the log is replayed into memory (the last record per key wins, a tombstone removes),
then cleaned by the log cleaner when it holds more than one segment. Writes are serialized by
an asyncio lock and run on a worker thread (the fsync); memory changes only after the bytes
are on disk, so a failed write changes nothing.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import json
import logging
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Protocol

from seaway.broker.log.config import LogConfig
from seaway.broker.log.partition_log import PartitionLog
from seaway.broker.security.acl import AclBinding
from seaway.broker.security.authorizer import StandardAuthorizer
from seaway.broker.security.scram import ScramCredential, ScramMechanism
from seaway.protocol.record_batch import CorruptBatchError
from seaway.protocol.records import Record, build_batch, iter_batches

__all__ = ["METADATA_LOG_DIR", "METADATA_TOPIC", "SecurityStore"]

log = logging.getLogger("seaway.broker.security")

METADATA_TOPIC = "__cluster_metadata"
METADATA_LOG_DIR = f"{METADATA_TOPIC}-0"
_READ_CHUNK = 1 << 20
_SEGMENT_BYTES = 8 * 1024 * 1024

Entry = tuple[bytes, bytes | None]


class Cleaner(Protocol):
    """The log cleaner's one method the store uses (compaction of its log, on demand)."""

    def clean_log(self, plog: PartitionLog) -> Any: ...


def _scram_key(user: str, mechanism: ScramMechanism) -> bytes:
    return json.dumps({"type": "scram", "user": user, "mechanism": mechanism.mechanism_name}, sort_keys=True,
                      separators=(",", ":")).encode()


def _scram_value(credential: ScramCredential) -> bytes:
    def b64(data: bytes) -> str:
        return base64.b64encode(data).decode()

    return json.dumps({"salt": b64(credential.salt), "stored_key": b64(credential.stored_key),
                       "server_key": b64(credential.server_key), "iterations": credential.iterations},
                      sort_keys=True, separators=(",", ":")).encode()


class SecurityStore:
    """The broker's ACLs and SCRAM credentials (see the module docstring)."""

    def __init__(self, directory: Path, authorizer: StandardAuthorizer | None = None) -> None:
        self.path = directory / METADATA_LOG_DIR
        self.authorizer = authorizer
        self._log: PartitionLog | None = None
        self._acls: set[AclBinding] = set()
        self._scram: dict[tuple[str, ScramMechanism], ScramCredential] = {}
        self._lock: asyncio.Lock | None = None
        self.cleaner: Cleaner | None = None
        """Set by the server: compacts the log once it holds a closed segment."""

    # -- lifecycle -----------------------------------------------------------------------

    def open(self) -> None:
        """Open (recovering) the log and replay it (blocking: call off the event loop)."""
        config = LogConfig.from_properties({
            "cleanup.policy": "compact",
            "segment.bytes": str(_SEGMENT_BYTES),
            "retention.ms": "-1",
            "min.cleanable.dirty.ratio": "0.5",
        })
        self._log = PartitionLog.open(self.path, config, topic=METADATA_TOPIC, partition=0)
        records = self._replay(self._log)
        self._publish()
        log.info("security store %s: %d ACL(s), %d SCRAM credential(s) from %d record(s)", self.path,
                 len(self._acls), len(self._scram), records)

    def close(self) -> None:
        if self._log is not None:
            self._log.close()
            self._log = None

    @property
    def log(self) -> PartitionLog | None:
        """The log itself (for the cleaner)."""
        return self._log

    def _replay(self, plog: PartitionLog) -> int:
        count = 0
        offset = plog.log_start_offset
        while offset < plog.log_end_offset:
            region = plog.read(offset, _READ_CHUNK)
            if region is None or len(region) == 0:
                break
            try:
                for header, records in iter_batches(region.read_bytes()):
                    offset = header.next_offset
                    for record in records:
                        count += 1
                        if record.key is not None:
                            self._apply(record.key, record.value)
            except CorruptBatchError as exc:
                log.error("%s: unreadable batch at offset %d (%s); the rest is ignored", self.path, offset, exc)
                break
        return count

    def _apply(self, key: bytes, value: bytes | None) -> None:
        try:
            data: dict[str, Any] = json.loads(key)
            kind = data.get("type")
            if kind == "acl":
                binding = AclBinding.from_key(data)
                if value is None:
                    self._acls.discard(binding)
                else:
                    self._acls.add(binding)
            elif kind == "scram":
                mechanism = ScramMechanism.from_name(str(data["mechanism"]))
                if mechanism is None:
                    raise ValueError(f"unknown mechanism {data['mechanism']!r}")
                slot = (str(data["user"]), mechanism)
                if value is None:
                    self._scram.pop(slot, None)
                else:
                    fields = json.loads(value)
                    self._scram[slot] = ScramCredential(
                        base64.b64decode(fields["salt"]), base64.b64decode(fields["stored_key"]),
                        base64.b64decode(fields["server_key"]), int(fields["iterations"]))
            else:
                raise ValueError(f"unknown record type {kind!r}")
        except (ValueError, KeyError, TypeError, binascii.Error) as exc:
            log.warning("%s: skipping a record it cannot read: %s", self.path, exc)

    def _publish(self) -> None:
        if self.authorizer is not None:
            self.authorizer.set_acls(self._acls)

    # -- reads ---------------------------------------------------------------------------

    @property
    def acls(self) -> frozenset[AclBinding]:
        return frozenset(self._acls)

    def scram_credential(self, mechanism: ScramMechanism, user: str) -> ScramCredential | None:
        return self._scram.get((user, mechanism))

    def scram_users(self) -> dict[str, list[tuple[ScramMechanism, int]]]:
        """{user: [(mechanism, iterations), ...]} for every user with a credential."""
        users: dict[str, list[tuple[ScramMechanism, int]]] = {}
        for (user, mechanism), credential in sorted(self._scram.items(), key=lambda i: (i[0][0], i[0][1].type_code)):
            users.setdefault(user, []).append((mechanism, credential.iterations))
        return users

    # -- writes --------------------------------------------------------------------------

    async def _write(self, entries: list[Entry]) -> None:
        """Append ``entries`` as one batch and fsync; then apply them. All or nothing."""
        if not entries:
            return
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            await asyncio.to_thread(self._append, entries)
            for key, value in entries:
                self._apply(key, value)
            self._publish()

    def _append(self, entries: list[Entry]) -> None:
        plog = self._log
        if plog is None:
            raise OSError("the security store is closed")
        now = time.time_ns() // 1_000_000
        plog.append(build_batch([Record(i, now, k, v) for i, (k, v) in enumerate(entries)]), now_ms=now)
        plog.flush()
        self.compact()

    def compact(self) -> None:
        """Clean the log when it has a closed segment (blocking; a rare, small job)."""
        plog, cleaner = self._log, self.cleaner
        if plog is None or cleaner is None or len(plog.segments()) < 2:
            return
        try:
            cleaner.clean_log(plog)
        except Exception:
            log.exception("compacting %s failed; it stays as it is", self.path)

    async def add_acls(self, bindings: Iterable[AclBinding]) -> None:
        await self._write([(b.key(), b"{}") for b in bindings])

    async def remove_acls(self, bindings: Iterable[AclBinding]) -> None:
        await self._write([(b.key(), None) for b in bindings])

    async def alter_scram(
        self,
        upserts: Iterable[tuple[str, ScramMechanism, ScramCredential]],
        deletions: Iterable[tuple[str, ScramMechanism]],
    ) -> None:
        entries: list[Entry] = [(_scram_key(user, mech), None) for user, mech in deletions]
        entries += [(_scram_key(user, mech), _scram_value(cred)) for user, mech, cred in upserts]
        await self._write(entries)
