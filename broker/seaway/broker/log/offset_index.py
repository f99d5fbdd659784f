"""The sparse offset index of one segment (``<base>.index``), as Kafka lays it out.

File layout, big-endian, one 8-byte entry per ``index.interval.bytes`` of log::

    offset  size  field
    0       4     relativeOffset   last offset of the indexed batch minus the segment base
    4       4     position         byte position of that batch in the .log file

Unlike Kafka the file is not preallocated to ``segment.index.bytes`` and mmap'ed: entries
live in two in-memory ``array('i')`` columns, so a lookup is a ``bisect`` over a C array,
and the file on disk is always the trimmed form Kafka leaves after a roll (tools that read
Kafka indexes read ours). ``segment.index.bytes`` still caps the entry count, and a full
index rolls the segment, as in Kafka.

New entries reach the file in chunks of ``_PENDING_BYTES`` and at every flush, truncate
and close, not one ``pwrite`` each: a 6-partition produce request would otherwise pay six
index syscalls on top of its six log writes. Nothing is lost by waiting: Kafka's mmap'ed
index is not synced before a flush either, and after an unclean shutdown every segment
from the recovery point on (everything not yet flushed) has its indexes rebuilt from the
log (``Segment.recover``).
"""

from __future__ import annotations

import contextlib
import logging
import os
import struct
import sys
from array import array
from bisect import bisect_left, bisect_right
from pathlib import Path

from seaway.errors import SeawayError

__all__ = ["CorruptIndexError", "IndexFile", "OffsetIndex"]

log = logging.getLogger("seaway.broker.log")

_PENDING_BYTES = 4096  # entries buffered before one pwrite (see the module docstring)
_OFFSET_ENTRY = struct.Struct(">ii")  # relativeOffset, position


class CorruptIndexError(SeawayError):
    """An index file that fails its sanity check; the segment is rebuilt from its log."""


class IndexFile:
    """The file half of an index: fd, append by pwrite, truncate, fsync, rename, delete."""

    entry_size = 0

    def __init__(self, path: Path, max_index_bytes: int) -> None:
        self.path = path
        self.max_entries = max(1, max_index_bytes // self.entry_size)
        self._fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        self._entries = 0  # entries in the index, written or pending
        self._written = 0  # entries already in the file
        self._pending = bytearray()
        self._dirty = False

    def _read_all(self) -> bytes:
        size = os.fstat(self._fd).st_size
        data = os.pread(self._fd, size, 0) if size else b""
        if len(data) % self.entry_size:
            raise CorruptIndexError(f"{self.path}: size {len(data)} is not a multiple of {self.entry_size}")
        self._entries = self._written = len(data) // self.entry_size
        return data

    def _write_entry(self, data: bytes) -> None:
        """Buffer one entry; write the buffer once it is big enough. Never raises OSError.

        It runs after the segment's bytes are written, where a failure must not leave the
        append half done: entries that cannot reach the file now (ENOSPC...) stay buffered
        for the next attempt, and ``flush``/``close`` report the error.
        """
        pending = self._pending
        pending += data
        self._entries += 1
        self._dirty = True
        if len(pending) >= _PENDING_BYTES:
            try:
                self.write_pending()
            except OSError as exc:
                log.warning("cannot write index entries to %s yet: %s", self.path, exc)

    def write_pending(self) -> None:
        """Write the buffered entries after those already in the file."""
        if self._pending:
            os.pwrite(self._fd, self._pending, self._written * self.entry_size)
            self._pending.clear()
            self._written = self._entries

    def _truncate_entries(self, count: int) -> None:
        self.write_pending()
        os.ftruncate(self._fd, count * self.entry_size)
        self._entries = self._written = count
        self._dirty = True

    def __len__(self) -> int:
        return self._entries

    @property
    def is_full(self) -> bool:
        return self._entries >= self.max_entries

    def flush(self) -> None:
        self.write_pending()
        if self._dirty:
            self._dirty = False
            os.fsync(self._fd)

    def close(self) -> None:
        if self._fd >= 0:
            self.write_pending()
            os.close(self._fd)
            self._fd = -1

    def __del__(self) -> None:
        # An index dropped unclosed (its segment failed to open a sibling file, e.g. on
        # EMFILE) must not keep its fd for the life of the process.
        fd = getattr(self, "_fd", -1)
        if fd >= 0:
            with contextlib.suppress(OSError):
                os.close(fd)

    def rename(self, new_path: Path) -> None:
        os.replace(self.path, new_path)
        self.path = new_path

    def delete(self) -> None:
        self._pending.clear()
        self.close()
        self.path.unlink(missing_ok=True)


def _big_endian_array(typecode: str, data: bytes) -> array[int]:
    values: array[int] = array(typecode)
    values.frombytes(data)
    if sys.byteorder == "little":
        values.byteswap()
    return values


class OffsetIndex(IndexFile):
    """Maps an offset to the position of a batch at or before it."""

    entry_size = 8

    def __init__(self, path: Path, base_offset: int, max_index_bytes: int, *, load: bool = True) -> None:
        super().__init__(path, max_index_bytes)
        self.base_offset = base_offset
        self._offsets: array[int] = array("i")
        self.positions: array[int] = array("i")
        if load:
            self._load()
        else:
            self._truncate_entries(0)

    def _load(self) -> None:
        both = _big_endian_array("i", self._read_all())
        self._offsets, self.positions = both[0::2], both[1::2]
        offsets, positions = self._offsets, self.positions
        for i in range(1, len(offsets)):
            if offsets[i] <= offsets[i - 1] or positions[i] <= positions[i - 1]:
                raise CorruptIndexError(f"{self.path}: entry {i} is not after entry {i - 1}")
        if offsets and (offsets[0] < 0 or positions[0] < 0):
            raise CorruptIndexError(f"{self.path}: negative first entry")

    @property
    def last_offset(self) -> int:
        return self.base_offset + self._offsets[-1] if self._offsets else self.base_offset

    @property
    def last_position(self) -> int:
        return self.positions[-1] if self.positions else 0

    def append(self, offset: int, position: int) -> None:
        """Index the batch ending at ``offset`` that starts at ``position`` (both increasing)."""
        relative = offset - self.base_offset
        offsets = self._offsets
        if offsets and relative <= offsets[-1]:
            return
        self._write_entry(_OFFSET_ENTRY.pack(relative, position))
        offsets.append(relative)
        self.positions.append(position)

    def lookup(self, offset: int) -> int:
        """Position of the last indexed batch ending at or before ``offset`` (0 when none)."""
        i = bisect_right(self._offsets, offset - self.base_offset) - 1
        return self.positions[i] if i >= 0 else 0

    def last_offset_from(self, position: int) -> int | None:
        """The last offset of the first indexed batch starting at or after ``position``
        (None when none is indexed there): every batch before ``position`` ends below it."""
        i = bisect_left(self.positions, position)
        return self.base_offset + self._offsets[i] if i < len(self.positions) else None

    def floor_position(self, position: int) -> int:
        """The largest indexed batch start at or before ``position`` (0 when none)."""
        i = bisect_right(self.positions, position) - 1
        return self.positions[i] if i >= 0 else 0

    def reset(self) -> None:
        self._offsets = array("i")
        self.positions = array("i")
        self._truncate_entries(0)
