"""The sparse time index of one segment (``<base>.timeindex``), as Kafka lays it out.

File layout, big-endian, 12 bytes per entry::

    offset  size  field
    0       8     timestamp        the largest batch maxTimestamp seen so far in the segment
    8       4     relativeOffset   last offset of the batch that first carried it, minus base

Entries are added next to offset index entries, and only when the timestamp grows, so
timestamps are strictly increasing and a lookup is a bisect. When a segment stops being
the active one (roll, close) a final entry records its largest timestamp, so a restart
knows each segment's age without reading it (Kafka's ``onBecomeInactiveSegment``).
Stored appended-not-preallocated, like :mod:`.offset_index`.
"""

from __future__ import annotations

import struct
from array import array
from bisect import bisect_right
from pathlib import Path

from seaway.broker.log.offset_index import CorruptIndexError, IndexFile

__all__ = ["TimeIndex"]

_ENTRY = struct.Struct(">qi")


class TimeIndex(IndexFile):
    """Maps a timestamp to an offset whose batch carries a timestamp no greater."""

    entry_size = 12

    def __init__(self, path: Path, base_offset: int, max_index_bytes: int, *, load: bool = True) -> None:
        super().__init__(path, max_index_bytes)
        self.base_offset = base_offset
        self._timestamps: array[int] = array("q")
        self._offsets: array[int] = array("i")
        if load:
            self._load()
        else:
            self._truncate_entries(0)

    def _load(self) -> None:
        for timestamp, relative in _ENTRY.iter_unpack(self._read_all()):
            if self._timestamps and timestamp <= self._timestamps[-1]:
                raise CorruptIndexError(f"{self.path}: timestamps are not increasing")
            if relative < 0 or (self._offsets and relative < self._offsets[-1]):
                raise CorruptIndexError(f"{self.path}: offsets go backwards")
            self._timestamps.append(timestamp)
            self._offsets.append(relative)

    @property
    def last_entry(self) -> tuple[int, int] | None:
        """(timestamp, offset) of the newest entry."""
        if not self._timestamps:
            return None
        return self._timestamps[-1], self.base_offset + self._offsets[-1]

    def maybe_append(self, timestamp: int, offset: int, *, skip_full_check: bool = False) -> None:
        """Add (timestamp, offset) when the timestamp is newer than the last entry's."""
        if timestamp < 0 or (self._timestamps and timestamp <= self._timestamps[-1]):
            return
        if self.is_full and not skip_full_check:
            return
        relative = offset - self.base_offset
        if self._offsets and relative < self._offsets[-1]:
            return
        self._write_entry(_ENTRY.pack(timestamp, relative))
        self._timestamps.append(timestamp)
        self._offsets.append(relative)

    def lookup(self, timestamp: int) -> int | None:
        """Offset of the last entry whose timestamp is <= ``timestamp`` (None when none)."""
        i = bisect_right(self._timestamps, timestamp) - 1
        return self.base_offset + self._offsets[i] if i >= 0 else None

    def reset(self) -> None:
        self._timestamps = array("q")
        self._offsets = array("i")
        self._truncate_entries(0)
