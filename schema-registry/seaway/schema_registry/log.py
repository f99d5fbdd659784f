"""The ``_schemas`` log abstraction: where registry state lives.

The registry keeps no state of its own: every change is a keyed record appended to a log
(Kafka: the single-partition, compacted ``_schemas`` topic) and every instance rebuilds its
in-memory view by replaying that log from the start and then tailing it. A log here is:

* ``append(key, value)`` -> offset: durable once it returns (``value=None`` is a tombstone);
* ``read(start, timeout)``: the records with offset >= ``start`` that are available now,
  waiting up to ``timeout`` seconds for at least one when there are none;
* ``end_offset()``: the offset the next append will get (Kafka's high watermark); a reader
  that has applied everything below it has seen every acknowledged write.

Offsets only grow; after compaction they may have gaps, so readers ask for ``>= start``,
never "record number n". :class:`MemorySchemaLog` is the in-process implementation used by
tests and by ``seaway registry --memory``; the Kafka one lives in ``kafka_log.py``.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

__all__ = ["LogRecord", "MemorySchemaLog", "SchemaLog"]


@dataclass(frozen=True, slots=True)
class LogRecord:
    offset: int
    key: bytes
    value: bytes | None


@runtime_checkable
class SchemaLog(Protocol):
    """An append-only keyed log, shared by every registry instance."""

    def append(self, key: bytes, value: bytes | None) -> int:
        """Append one record; return its offset once it is durable."""
        ...

    def read(self, start: int, timeout: float) -> list[LogRecord]:
        """Records with offset >= ``start``; waits up to ``timeout`` s when none are available."""
        ...

    def end_offset(self) -> int:
        """The offset the next appended record will get."""
        ...

    def close(self) -> None: ...


class MemorySchemaLog:
    """A thread-safe in-memory log with Kafka-like offsets and optional compaction.

    Several registry services may share one instance, which is how tests model several
    registry processes sharing a topic.
    """

    def __init__(self, records: list[LogRecord] | None = None) -> None:
        self._records: list[LogRecord] = list(records or [])
        self._next = self._records[-1].offset + 1 if self._records else 0
        self._cond = threading.Condition()
        self._closed = False

    def append(self, key: bytes, value: bytes | None) -> int:
        with self._cond:
            if self._closed:
                raise RuntimeError("log is closed")
            offset = self._next
            self._records.append(LogRecord(offset, bytes(key), None if value is None else bytes(value)))
            self._next += 1
            self._cond.notify_all()
            return offset

    def read(self, start: int, timeout: float) -> list[LogRecord]:
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                out = self._from(start)
                remaining = deadline - time.monotonic()
                if out or remaining <= 0 or self._closed:
                    return out
                self._cond.wait(remaining)

    def _from(self, start: int) -> list[LogRecord]:
        # Records are sorted by offset: binary search for the first one >= start.
        lo, hi = 0, len(self._records)
        while lo < hi:
            mid = (lo + hi) // 2
            if self._records[mid].offset < start:
                lo = mid + 1
            else:
                hi = mid
        return self._records[lo:]

    def end_offset(self) -> int:
        with self._cond:
            return self._next

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def records(self) -> list[LogRecord]:
        """A snapshot of every record currently in the log (for tests and tooling)."""
        with self._cond:
            return list(self._records)

    def compact(self, *, drop_tombstones: bool = True) -> None:
        """Keep only the last record per key, as Kafka's log cleaner eventually does.

        Offsets are preserved (so they have gaps afterwards); tombstones are dropped too
        unless ``drop_tombstones`` is false (Kafka keeps them for ``delete.retention.ms``).
        """
        with self._cond:
            last: dict[bytes, int] = {r.key: r.offset for r in self._records}
            self._records = [
                r
                for r in self._records
                if last[r.key] == r.offset and (r.value is not None or not drop_tombstones)
            ]
