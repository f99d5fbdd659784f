"""Source offsets: backing stores, the writer and the reader (Kafka's ``storage`` offset classes).

Keys and values are bytes exactly as Kafka's offsets topic holds them: the key is the JSON
array ``["<connector>", {source partition}]``, the value the JSON offset map (``None`` is a
tombstone). JSON is written with sorted keys, so a partition dict maps to the same key
whatever its insertion order.

They implement :class:`~seaway.connect.runtime.backing_stores.OffsetBackingStore`, each on its
own. What the memory, file and Kafka stores have in common is the whole map held in memory,
:class:`OffsetMap`, which each holds; there is no base class, since what differs is each
store's write path (none, a file rewrite, a produce), and :class:`ConnectorOffsetBackingStore`
holds no map at all.

* :class:`MemoryOffsetBackingStore`: tests and embedded use.
* :class:`ConnectorOffsetBackingStore`: a connector's own ``offsets.storage.topic`` in front of
  the worker's store (distributed mode).
* :class:`FileOffsetBackingStore`: standalone mode. The whole map is rewritten on every
  flush to a temp file, fsynced and renamed over the old one (then the directory is fsynced),
  so a crash leaves either the previous or the new offsets, never a torn file.

:class:`OffsetStorageWriter` keeps Kafka's snapshot-then-flush contract: offsets given with
:meth:`~OffsetStorageWriter.offset` accumulate; :meth:`~OffsetStorageWriter.begin_flush`
snapshots them, :meth:`~OffsetStorageWriter.do_flush` writes the snapshot and
:meth:`~OffsetStorageWriter.cancel_flush` puts it back. The source worker only hands it
offsets of records the producer has acknowledged.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from seaway.connect.api import DataError, OffsetStorageReader
from seaway.connect.runtime.backing_stores import OffsetBackingStore

__all__ = [
    "ConnectorOffsetBackingStore",
    "FileOffsetBackingStore",
    "MemoryOffsetBackingStore",
    "OffsetMap",
    "OffsetStorageReaderImpl",
    "OffsetStorageWriter",
    "decode_key",
    "encode_key",
    "validate_offset_map",
]

log = logging.getLogger(__name__)

_PRIMITIVES = (str, int, float, bool, type(None))


def _dumps(obj: Any) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":")).encode("utf-8")


def encode_key(connector: str, partition: Mapping[str, Any]) -> bytes:
    return _dumps([connector, dict(partition)])


def decode_key(key: bytes) -> tuple[str, dict[str, Any]] | None:
    """``(connector, partition)``, or ``None`` for a malformed key (ignored, as Kafka's readers do)."""
    try:
        parsed = json.loads(key)
    except ValueError:
        return None
    if (not isinstance(parsed, list) or len(parsed) != 2 or not isinstance(parsed[0], str)
            or not isinstance(parsed[1], dict)):
        return None
    return parsed[0], parsed[1]


def validate_offset_map(kind: str, value: Mapping[str, Any] | None) -> None:
    """Kafka's ``OffsetUtils.validateFormat``: string keys, primitive values."""
    if value is None:
        return
    if not isinstance(value, Mapping):
        raise DataError(f"{kind} must be a map, not {type(value).__name__}")
    for k, v in value.items():
        if not isinstance(k, str):
            raise DataError(f"{kind} may only contain string keys, found {k!r}")
        if not isinstance(v, _PRIMITIVES):
            raise DataError(f"{kind}s may only contain primitive types as values, but field {k} contains "
                            f"{type(v).__name__}")


class OffsetMap:
    """A thread-safe map of offsets-topic keys to values: what every offset store that holds the
    whole map in memory keeps (the memory and file stores, and the Kafka store's copy of its topic)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._data: dict[bytes, bytes] = {}

    def get(self, keys: Iterable[bytes]) -> dict[bytes, bytes | None]:
        with self._lock:
            return {k: self._data.get(k) for k in keys}

    def apply(self, values: Mapping[bytes, bytes | None]) -> dict[bytes, bytes]:
        """Apply ``values`` (``None`` deletes); a copy of the whole map afterwards."""
        with self._lock:
            for k, v in values.items():
                if v is None:
                    self._data.pop(k, None)
                else:
                    self._data[k] = v
            return dict(self._data)

    def replace(self, data: Mapping[bytes, bytes]) -> None:
        with self._lock:
            self._data = dict(data)

    def connector_partitions(self, connector: str) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
        """Every ``(partition, offset)`` stored for ``connector``."""
        with self._lock:
            items = list(self._data.items())
        out = []
        for key, value in items:
            decoded = decode_key(key)
            if decoded is not None and decoded[0] == connector:
                out.append((decoded[1], json.loads(value)))
        return out


class MemoryOffsetBackingStore:
    """Offsets kept in memory only."""

    def __init__(self) -> None:
        self._map = OffsetMap()

    def start(self) -> None:
        return None

    def stop(self) -> None:
        return None

    def get(self, keys: Iterable[bytes]) -> dict[bytes, bytes | None]:
        return self._map.get(keys)

    def set(self, values: Mapping[bytes, bytes | None]) -> None:
        self._map.apply(values)

    def connector_partitions(self, connector: str) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
        return self._map.connector_partitions(connector)


class FileOffsetBackingStore:
    """Standalone mode's offsets file, rewritten crash-safely on every flush.

    Writes are serialised (``_write_lock`` around the update and the file write), so the file
    always ends with the latest update, whatever the order in which threads flushed.
    """

    FORMAT = "seaway-connect-offsets"

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._map = OffsetMap()
        self._write_lock = threading.Lock()

    def start(self) -> None:
        if not self.path.exists():
            return
        doc = json.loads(self.path.read_text(encoding="utf-8") or "{}")
        self._map.replace({k.encode("utf-8"): v.encode("utf-8") for k, v in doc.get("offsets", [])})

    def stop(self) -> None:
        return None

    def get(self, keys: Iterable[bytes]) -> dict[bytes, bytes | None]:
        return self._map.get(keys)

    def set(self, values: Mapping[bytes, bytes | None]) -> None:
        """Apply ``values`` (``None`` deletes) and write the file before returning."""
        with self._write_lock:
            self._persist(self._map.apply(values))

    def connector_partitions(self, connector: str) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
        return self._map.connector_partitions(connector)

    def _persist(self, snapshot: dict[bytes, bytes]) -> None:
        doc = {"format": self.FORMAT, "version": 1,
               "offsets": [[k.decode("utf-8"), v.decode("utf-8")] for k, v in snapshot.items()]}
        directory = self.path.parent
        directory.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=self.path.name + ".", suffix=".tmp", dir=directory)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(doc, f, separators=(",", ":"))
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        dir_fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


class OffsetStorageWriter:
    """Accumulates one connector's offsets and flushes them in snapshots (one flush at a time)."""

    def __init__(self, store: OffsetBackingStore, connector: str) -> None:
        self._store = store
        self._connector = connector
        self._lock = threading.Lock()
        self._data: dict[bytes, bytes | None] = {}
        self._to_flush: dict[bytes, bytes | None] | None = None

    def offset(self, partition: Mapping[str, Any], offset: Mapping[str, Any] | None) -> None:
        validate_offset_map("Key", partition)
        validate_offset_map("Offset", offset)
        with self._lock:
            self._data[encode_key(self._connector, partition)] = None if offset is None else _dumps(dict(offset))

    def begin_flush(self) -> bool:
        """Snapshot pending offsets; False if there is nothing to flush."""
        with self._lock:
            if self._to_flush is not None:
                raise RuntimeError("OffsetStorageWriter is already flushing")
            if not self._data:
                return False
            self._to_flush, self._data = self._data, {}
            return True

    def do_flush(self) -> None:
        with self._lock:
            snapshot = self._to_flush
        if snapshot is None:
            return
        self._store.set(snapshot)
        with self._lock:
            self._to_flush = None

    def cancel_flush(self) -> None:
        with self._lock:
            if self._to_flush is not None:
                self._to_flush.update(self._data)
                self._data, self._to_flush = self._to_flush, None

    def flushing(self) -> dict[bytes, bytes | None]:
        """The snapshot :meth:`begin_flush` took, as offsets-topic keys and values (exactly-once tasks
        write it themselves, inside their transaction, then call :meth:`flushed` or :meth:`cancel_flush`)."""
        with self._lock:
            return dict(self._to_flush or {})

    def flushed(self) -> None:
        """The snapshot is durable (its transaction committed): forget it."""
        with self._lock:
            self._to_flush = None


class ConnectorOffsetBackingStore:
    """A connector's own ``offsets.storage.topic`` in front of the worker's offsets (Kafka's class of this name).

    Reads look in the connector's store first and fall back to the worker's for keys it lacks
    (offsets written before the connector got its own topic). Writes go to the connector's
    store, then to the worker's, so tools reading the worker's topic still see them (a
    failure of that second write is logged, not raised: the primary copy is durable).
    """

    def __init__(self, primary: OffsetBackingStore, secondary: OffsetBackingStore) -> None:
        self.primary = primary
        self.secondary = secondary

    def start(self) -> None:
        """Nothing: both stores are started (and stopped) by their owners, the worker."""

    def stop(self) -> None:
        """Nothing: see :meth:`start`."""

    def get(self, keys: Iterable[bytes]) -> dict[bytes, bytes | None]:
        keys = list(keys)
        found = self.primary.get(keys)
        missing = [k for k in keys if found.get(k) is None]
        if missing:
            found.update({k: v for k, v in self.secondary.get(missing).items() if v is not None})
        return found

    def set(self, values: Mapping[bytes, bytes | None]) -> None:
        self.primary.set(values)
        try:
            self.secondary.set(values)
        except Exception:
            log.exception("Failed to write offsets to the worker's offsets topic too (the connector's topic has "
                          "them)")

    def connector_partitions(self, connector: str) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
        out = {encode_key(connector, p): (p, o) for p, o in self.secondary.connector_partitions(connector)}
        out.update({encode_key(connector, p): (p, o) for p, o in self.primary.connector_partitions(connector)})
        return list(out.values())


class OffsetStorageReaderImpl(OffsetStorageReader):
    """What ``context.offset_storage_reader()`` returns: one connector's committed offsets."""

    def __init__(self, store: OffsetBackingStore, connector: str) -> None:
        self._store = store
        self._connector = connector

    def offsets(self, partitions: Iterable[Mapping[str, Any]]
                ) -> list[tuple[Mapping[str, Any], dict[str, Any] | None]]:
        asked = list(partitions)
        keys = [encode_key(self._connector, p) for p in asked]
        found = self._store.get(keys)
        out: list[tuple[Mapping[str, Any], dict[str, Any] | None]] = []
        for partition, key in zip(asked, keys, strict=True):
            raw = found.get(key)
            out.append((partition, None if raw is None else json.loads(raw)))
        return out
