"""The aborted-transaction index of one segment (``<base>.txnindex``), in Kafka's layout.

A read_committed consumer must learn which of the records it fetches belong to aborted
transactions; the broker answers with a list of (producer id, first offset) pairs, which
Kafka keeps per segment in this index so a fetch far from the head never scans the log.
One entry per aborted transaction, appended when its abort marker is written, in the
segment that holds the marker. File layout, big-endian, 34 bytes per entry::

    offset  size  field
    0       2     version            0
    2       8     producerId
    10      8     firstOffset        offset of the transaction's first batch in this partition
    18      8     lastOffset         offset of the abort marker
    26      8     lastStableOffset   the partition's LSO once the abort completed

Entries are in ``lastOffset`` order. ``lastStableOffset`` makes a search stop early: once
an entry's LSO is at or beyond the fetch's upper bound, no transaction aborted later can
have started below that bound (Kafka's ``TxnIndexSearchResult.isComplete``).

Unlike the offset and time indexes, a segment usually has no entries at all, so the file
exists only once the first one is written and no descriptor is held open: an append opens,
writes and closes it (aborts are rare), which keeps a segment at three descriptors. The
entries are mirrored in four ``array('q')`` columns, the same bytes the file holds.
"""

from __future__ import annotations

import logging
import os
import struct
from array import array
from bisect import bisect_left
from pathlib import Path
from typing import NamedTuple

__all__ = ["ENTRY_SIZE", "AbortedTxn", "TxnIndex"]

log = logging.getLogger("seaway.broker.log")

_ENTRY = struct.Struct(">hqqqq")
ENTRY_SIZE = _ENTRY.size  # 34
_VERSION = 0


class AbortedTxn(NamedTuple):
    """One aborted transaction of one partition (Kafka's ``AbortedTxn``)."""

    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int


class TxnIndex:
    """The entries of one segment's ``.txnindex`` (see the module docstring)."""

    def __init__(self, path: Path, *, load: bool) -> None:
        self.path = path
        self._pids: array[int] = array("q")
        self._firsts: array[int] = array("q")
        self._lasts: array[int] = array("q")
        self._lsos: array[int] = array("q")
        self._unwritten = bytearray()  # entries a failed write could not store yet
        self._dirty = False
        if load:
            self._load()
        else:
            path.unlink(missing_ok=True)

    def _load(self) -> None:
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return
        whole = len(data) - len(data) % ENTRY_SIZE
        kept = 0
        for pos in range(0, whole, ENTRY_SIZE):
            version, pid, first, last, lso = _ENTRY.unpack_from(data, pos)
            if version != _VERSION or (self._lasts and last < self._lasts[-1]) or first > last:
                break
            self._pids.append(pid)
            self._firsts.append(first)
            self._lasts.append(last)
            self._lsos.append(lso)
            kept += 1
        if kept * ENTRY_SIZE != len(data):
            log.warning("%s: keeping the first %d valid entries of %d bytes", self.path, kept, len(data))
            self._rewrite()

    def __len__(self) -> int:
        return len(self._lasts)

    def entries(self) -> list[AbortedTxn]:
        return [AbortedTxn(*row) for row in zip(self._pids, self._firsts, self._lasts, self._lsos, strict=True)]

    @property
    def last_offset(self) -> int:
        """The newest entry's marker offset (-1 when empty)."""
        return self._lasts[-1] if self._lasts else -1

    def append(self, txn: AbortedTxn) -> None:
        """Add an entry (its marker is after every entry's); written at once, retried at flush.

        Never raises OSError: it runs right after the marker's append, which must not be
        left half done. An entry that cannot reach the file stays in memory (reads see it)
        and :meth:`flush` reports the error.
        """
        if self._lasts and txn.last_offset < self._lasts[-1]:
            raise ValueError(f"{self.path}: entry for offset {txn.last_offset} is before {self._lasts[-1]}")
        self._pids.append(txn.producer_id)
        self._firsts.append(txn.first_offset)
        self._lasts.append(txn.last_offset)
        self._lsos.append(txn.last_stable_offset)
        self._unwritten += _ENTRY.pack(_VERSION, *txn)
        self._dirty = True
        try:
            self._write_unwritten()
        except OSError as exc:
            log.warning("cannot write %s yet: %s", self.path, exc)

    def ensure(self, txn: AbortedTxn) -> bool:
        """Add ``txn`` unless an entry for its marker exists (recovery); True if added."""
        i = bisect_left(self._lasts, txn.last_offset)
        if i < len(self._lasts) and self._lasts[i] == txn.last_offset:
            return False
        if i == len(self._lasts):
            self.append(txn)
        else:
            self._pids.insert(i, txn.producer_id)
            self._firsts.insert(i, txn.first_offset)
            self._lasts.insert(i, txn.last_offset)
            self._lsos.insert(i, txn.last_stable_offset)
            self._rewrite()
        return True

    def _write_unwritten(self) -> None:
        if self._unwritten:
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
            try:
                os.write(fd, self._unwritten)
            finally:
                os.close(fd)
            self._unwritten.clear()

    def _rewrite(self) -> None:
        """Replace the file with the entries in memory (after a truncation or insertion)."""
        self._unwritten.clear()
        data = b"".join(_ENTRY.pack(_VERSION, *row)
                        for row in zip(self._pids, self._firsts, self._lasts, self._lsos, strict=True))
        if not data:
            self.path.unlink(missing_ok=True)
            return
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)
        self._dirty = True

    def truncate_from(self, offset: int) -> None:
        """Drop the entries whose marker is at or after ``offset`` (the log was cut there)."""
        keep = bisect_left(self._lasts, offset)
        if keep < len(self._lasts):
            del self._pids[keep:], self._firsts[keep:], self._lasts[keep:], self._lsos[keep:]
            self._rewrite()

    def collect(self, start: int, upper: int) -> tuple[list[tuple[int, int]], bool]:
        """(producer id, first offset) of aborted transactions overlapping ``[start, upper)``.

        The flag says the search is complete: an entry's LSO reached ``upper``, so later
        segments need not be looked at. Entries whose marker is before ``start`` cannot
        overlap and are skipped by bisection.
        """
        found: list[tuple[int, int]] = []
        lasts, firsts, lsos = self._lasts, self._firsts, self._lsos
        for i in range(bisect_left(lasts, start), len(lasts)):
            if firsts[i] < upper:
                found.append((self._pids[i], firsts[i]))
            if lsos[i] >= upper:
                return found, True
        return found, False

    def flush(self) -> None:
        """fsync the file (writing entries a failed write left in memory first)."""
        self._write_unwritten()
        if self._dirty:
            self._dirty = False
            try:
                fd = os.open(self.path, os.O_RDONLY)
            except FileNotFoundError:
                return
            try:
                os.fsync(fd)
            finally:
                os.close(fd)

    def rename(self, new_path: Path) -> None:
        if self.path.exists():
            os.replace(self.path, new_path)
        self.path = new_path

    def delete(self) -> None:
        self._unwritten.clear()
        self.path.unlink(missing_ok=True)
