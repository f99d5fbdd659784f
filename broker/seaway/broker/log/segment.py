"""One log segment: a ``.log`` file of verbatim record batches plus its two sparse indexes.

Files are named as Kafka names them: the segment's base offset zero-padded to 20 digits,
``00000000000000000042.log`` / ``.index`` / ``.timeindex`` (and ``.txnindex``, only once
an aborted transaction's marker lands in the segment), optionally followed by a
suffix while a file is in transit (``.cleaned`` written aside by the compactor,
``.swap`` while being swapped in, ``.deleted`` on its way out); see
:meth:`Segment.change_file_suffixes` and :mod:`.recovery`.

A segment never decodes records. Appends write whole batches and index them from their
headers; reads hop from an index entry over batch headers (read ``pread`` a chunk at a
time) to find a batch or the last whole batch within a byte budget.

The ``.log`` fd lives in a :class:`SegmentFile` that :class:`FileRegion` objects share:
the fd closes only when the last holder lets go, so a fetch in flight keeps working
after retention has unlinked the segment.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import random
import struct
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from seaway.broker.log.fds import fds_short
from seaway.broker.log.offset_index import CorruptIndexError, OffsetIndex
from seaway.broker.log.recovery import BatchScanner
from seaway.broker.log.time_index import TimeIndex
from seaway.broker.log.txn_index import TxnIndex
from seaway.protocol.errors import KafkaStorageError
from seaway.protocol.record_batch import BATCH_HEADER_SIZE, LOG_OVERHEAD, MAGIC_V2, BatchHeader

__all__ = ["Segment", "SegmentFile", "segment_file_name"]

log = logging.getLogger("seaway.broker.log")

_HEADER = struct.Struct(">qiibIhiqqqhii")
_INT32_MAX = 2**31 - 1
_HOP_CHUNK = 16384
PREALLOCATE_BYTES = 1024 * 1024
"""How far ahead of its end the active segment's ``.log`` blocks are reserved (see below)."""
_FALLOC_FL_KEEP_SIZE = 1


def _load_fallocate() -> Callable[[int, int, int, int], int] | None:
    """libc's ``fallocate(2)`` (Linux), which, unlike ``os.posix_fallocate``, takes flags."""
    try:
        func = ctypes.CDLL(None, use_errno=True).fallocate
    except (OSError, AttributeError):  # pragma: no cover - not glibc/Linux
        return None
    func.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int64, ctypes.c_int64]
    func.restype = ctypes.c_int
    return func


_fallocate = _load_fallocate()


def segment_file_name(base_offset: int, ext: str, suffix: str = "") -> str:
    """``segment_file_name(42, ".log")`` -> ``00000000000000000042.log``."""
    return f"{base_offset:020d}{ext}{suffix}"


class SegmentFile:
    """An fd shared by a segment and the FileRegions read from it; closed on last release."""

    def __init__(self, path: Path) -> None:
        self.fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)

    def fileno(self) -> int:
        return self.fd

    def __del__(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self.fd)


class Segment:
    """A ``.log`` file with its offset and time indexes; see the module docstring.

    Not thread-safe on its own: :class:`~seaway.broker.log.partition_log.PartitionLog`
    serialises access. ``size``, ``next_offset`` and ``max_timestamp`` are in memory.
    """

    def __init__(
        self,
        directory: Path,
        base_offset: int,
        *,
        max_index_bytes: int,
        jitter_ms: int,
        suffix: str = "",
        fresh: bool,
    ) -> None:
        self.directory = directory
        self.base_offset = base_offset
        self.suffix = suffix
        self.file: SegmentFile | None = SegmentFile(self.log_path)
        try:
            self._open(fresh, max_index_bytes, jitter_ms)
        except BaseException:
            # EMFILE, ENOSPC...: close what was opened (and remove what a create made), so
            # a failed roll leaves neither a stray fd nor a stray segment behind.
            self._abandon(fresh)
            raise

    def _open(self, fresh: bool, max_index_bytes: int, jitter_ms: int) -> None:
        assert self.file is not None
        base_offset = self.base_offset
        if fresh:
            os.ftruncate(self.file.fd, 0)
        self.size = os.fstat(self.file.fd).st_size
        self.next_offset = base_offset
        self.max_timestamp = -1
        self.offset_of_max_timestamp = base_offset
        self.first_batch_timestamp: int | None = None
        self.created_ms = int(time.time() * 1000)
        self.roll_jitter_ms = random.randrange(jitter_ms) if jitter_ms > 0 else 0
        self.bytes_since_last_index_entry = 0
        self.dirty = False
        self.needs_recovery = False
        self.preallocate = False
        """Reserve blocks ahead of the end on append (set by the log on its active segment)."""
        self._allocated = 0  # file bytes reserved by preallocation (0: none beyond the end)
        self._torn = False  # a failed write left bytes past ``size`` that are not cut yet
        index_path, time_path = self._path(".index"), self._path(".timeindex")
        had_indexes = index_path.exists() and time_path.exists()
        try:
            self.offset_index = OffsetIndex(index_path, base_offset, max_index_bytes, load=not fresh)
            self.time_index = TimeIndex(time_path, base_offset, max_index_bytes, load=not fresh)
        except CorruptIndexError as exc:
            log.warning("rebuilding indexes of %s: %s", self.log_path, exc)
            self.offset_index = OffsetIndex(index_path, base_offset, max_index_bytes, load=False)
            self.time_index = TimeIndex(time_path, base_offset, max_index_bytes, load=False)
            self.needs_recovery = True
        if not fresh and not had_indexes and self.size:
            log.warning("rebuilding missing indexes of %s", self.log_path)
            self.needs_recovery = True
        self.txn_index = TxnIndex(self._path(".txnindex"), load=not fresh)

    def _abandon(self, fresh: bool) -> None:
        """Undo a constructor that raised: close its files; a fresh segment's files go."""
        for name in ("offset_index", "time_index"):
            index = self.__dict__.get(name)
            if index is not None:
                with contextlib.suppress(OSError):
                    index.close()
        self.file = None  # SegmentFile closes its fd when dropped
        if fresh:
            for ext in (".log", ".index", ".timeindex"):
                with contextlib.suppress(OSError):
                    self._path(ext).unlink(missing_ok=True)

    @classmethod
    def create(
        cls, directory: Path, base_offset: int, *, max_index_bytes: int, jitter_ms: int = 0, suffix: str = ""
    ) -> Segment:
        """A new empty segment (existing files of that name are truncated)."""
        return cls(
            directory,
            base_offset,
            max_index_bytes=max_index_bytes,
            jitter_ms=jitter_ms,
            suffix=suffix,
            fresh=True,
        )

    @classmethod
    def open(
        cls, directory: Path, base_offset: int, *, max_index_bytes: int, jitter_ms: int = 0, suffix: str = ""
    ) -> Segment:
        """An existing segment; call :meth:`recover` or :meth:`load_tail` next."""
        return cls(
            directory,
            base_offset,
            max_index_bytes=max_index_bytes,
            jitter_ms=jitter_ms,
            suffix=suffix,
            fresh=False,
        )

    def _path(self, ext: str) -> Path:
        return self.directory / segment_file_name(self.base_offset, ext, self.suffix)

    @property
    def log_path(self) -> Path:
        return self._path(".log")

    @property
    def fd(self) -> int:
        if self.file is None:
            raise KafkaStorageError(f"segment {self.log_path} is closed")
        return self.file.fd

    @property
    def largest_timestamp(self) -> int:
        """Newest batch timestamp, or the file's mtime when no batch carried one (Kafka)."""
        if self.max_timestamp >= 0:
            return self.max_timestamp
        return int(os.fstat(self.fd).st_mtime * 1000)

    # -- loading -------------------------------------------------------------------------

    def recover(self, index_interval_bytes: int) -> int:
        """Rebuild the indexes from a full scan; truncate after the last valid batch.

        Returns the bytes truncated (0 when the file was intact).
        """
        self.offset_index.reset()
        self.time_index.reset()
        self._reset_stats()
        scanner = BatchScanner(self.fd, self.size, self.base_offset)
        for header in scanner:
            self._index_batch(header, header.position, index_interval_bytes)
        truncated = self.size - scanner.valid_bytes
        if truncated:
            log.warning(
                "truncated %d bytes of %s after offset %d (next offset %d): %s",
                truncated,
                self.log_path,
                scanner.next_offset - 1,
                scanner.next_offset,
                scanner.error,
            )
            os.ftruncate(self.fd, scanner.valid_bytes)
            self.size = scanner.valid_bytes
        self.next_offset = scanner.next_offset
        self.txn_index.truncate_from(self.next_offset)  # entries whose abort marker was cut off
        # the rebuilt indexes go to disk now, not at the next flush: a restart must not find them stale
        self.offset_index.write_pending()
        self.time_index.write_pending()
        self.needs_recovery = False
        self.dirty = True
        return truncated

    def load_tail(self) -> bool:
        """After a clean shutdown: learn the end offset by hopping from the last index entry.

        Returns False when the headers do not line up with the file (then recover).
        """
        self._reset_stats()
        if self.size >= BATCH_HEADER_SIZE:
            try:
                self.first_batch_timestamp = _header_at(
                    os.pread(self.fd, BATCH_HEADER_SIZE, 0), 0, 0
                ).max_timestamp
            except ValueError:
                return False
        last = self.time_index.last_entry
        if last is not None:
            self.max_timestamp, self.offset_of_max_timestamp = last
        pos = self.offset_index.last_position
        if pos > self.size:
            return False
        try:
            for header in self._headers_from(pos, self.size):
                pos = header.position + header.size
                self.next_offset = header.next_offset
                if header.max_timestamp > self.max_timestamp:
                    self.max_timestamp, self.offset_of_max_timestamp = (
                        header.max_timestamp,
                        header.last_offset,
                    )
        except ValueError:
            return False
        if pos != self.size or self.txn_index.last_offset >= self.next_offset:
            return False
        self.bytes_since_last_index_entry = self.size - self.offset_index.last_position
        return True

    def _reset_stats(self) -> None:
        self.next_offset = self.base_offset
        self.max_timestamp = -1
        self.offset_of_max_timestamp = self.base_offset
        self.first_batch_timestamp = None
        self.bytes_since_last_index_entry = 0

    # -- appending -----------------------------------------------------------------------

    def should_roll(
        self,
        append_bytes: int,
        append_max_timestamp: int,
        append_last_offset: int,
        segment_bytes: int,
        segment_ms: int,
        now_ms: int,
    ) -> bool:
        """Kafka's ``LogSegment.shouldRoll``, except that an empty segment never rolls.

        A roll for ``segment.ms``, ``segment.bytes`` or a full index waits while file
        descriptors are short (:func:`~seaway.broker.log.fds.fds_short`): this segment keeps
        growing (its offset index past ``segment.index.bytes``, its time index sparser), so
        no request pattern can open files without bound. Only offsets or positions that
        would overflow this segment's 32-bit relative fields force a roll.
        """
        if self.size == 0:
            return False
        if append_last_offset - self.base_offset > _INT32_MAX or self.size > _INT32_MAX - append_bytes:
            return True
        if self.first_batch_timestamp is not None and self.first_batch_timestamp >= 0:
            waited = append_max_timestamp - self.first_batch_timestamp
        else:
            waited = now_ms - self.created_ms
        return (
            waited > segment_ms - self.roll_jitter_ms
            or self.size > segment_bytes - append_bytes
            or self.offset_index.is_full
            or self.time_index.is_full
        ) and not fds_short()

    def fits(self, first_offset: int, last_offset: int, append_bytes: int) -> bool:
        """Whether offsets ``[first, last]`` and ``append_bytes`` more can be indexed here.

        Both indexes store an offset as a 32-bit delta from the base offset and the offset
        index a 32-bit file position; an append that would overflow either must go to a
        new segment (checked before anything is written, see :meth:`append`).
        """
        return (
            first_offset >= self.base_offset
            and last_offset - self.base_offset <= _INT32_MAX
            and self.size + append_bytes <= _INT32_MAX
        )

    def append(self, data: bytearray | memoryview, headers: list[BatchHeader], index_interval_bytes: int) -> None:
        """Write ``data`` (whole batches, offsets stamped) with one write; index its batches.

        All or nothing: ``headers`` (positions relative to ``data``) must fit this segment
        (:meth:`fits`, else KafkaStorageError before a byte is written); a failed write
        (ENOSPC, EFBIG, EIO...) cuts the file back to where it was and raises
        KafkaStorageError; only after the bytes are in do the indexes and counters move,
        and nothing after the write can raise (index entries that cannot reach their file
        yet stay buffered, see ``IndexFile``). So whatever raises, the segment is exactly
        as it was.
        """
        start = self.size
        file = self.file
        if file is None:
            raise KafkaStorageError(f"segment {self.log_path} is closed")
        if not headers:
            return
        if not self.fits(headers[0].base_offset, headers[-1].base_offset + headers[-1].last_offset_delta, len(data)):
            raise KafkaStorageError(
                f"offsets {headers[0].base_offset}..{headers[-1].last_offset} or {len(data)} more bytes do not fit "
                f"segment {self.log_path.name} (32-bit relative offsets and positions)"
            )
        fd = file.fd
        if self._torn:
            self._cut_back(fd, start)  # a failed write could not be cut back last time: again
        if self.preallocate and start + len(data) > self._allocated:
            self._preallocate(fd, start, start + len(data))
        try:
            written = os.write(fd, data)
            if written != len(data):  # short write: finish it
                view = memoryview(data)[written:]
                while view:
                    view = view[os.write(fd, view) :]
        except OSError as exc:
            self._allocated = 0
            self._cut_back(fd, start)
            raise KafkaStorageError(f"write to {self.log_path} failed: {exc}") from exc
        # _index_batch for each header, inlined: this runs for every partition of every
        # produce request.
        if self.first_batch_timestamp is None:
            self.first_batch_timestamp = headers[0].max_timestamp
        max_timestamp, since_entry = self.max_timestamp, self.bytes_since_last_index_entry
        time_index = self.time_index
        for header in headers:
            last_offset = header.base_offset + header.last_offset_delta
            if header.max_timestamp > max_timestamp:
                max_timestamp = self.max_timestamp = header.max_timestamp
                self.offset_of_max_timestamp = last_offset
            if since_entry > index_interval_bytes:
                self.offset_index.append(last_offset, start + header.position)
                time_index.maybe_append(max_timestamp, self.offset_of_max_timestamp)
                since_entry = 0
            since_entry += header.batch_length + LOG_OVERHEAD
            self.next_offset = last_offset + 1
        self.bytes_since_last_index_entry = since_entry
        self.size = start + len(data)
        self.dirty = True

    def _cut_back(self, fd: int, size: int) -> None:
        """Truncate the file to ``size`` after a failed write; KafkaStorageError if even that fails.

        Until it succeeds (``_torn``) every append retries it first and fails: with
        ``O_APPEND`` a write would otherwise land after the partial bytes.
        """
        try:
            os.ftruncate(fd, size)
        except OSError as exc:
            self._torn = True
            raise KafkaStorageError(f"cannot cut {self.log_path} back to {size} bytes: {exc}") from exc
        self._torn = False

    def _preallocate(self, fd: int, start: int, end: int) -> None:
        """Reserve the file's blocks up to ``end`` + :data:`PREALLOCATE_BYTES`, size unchanged.

        ``fallocate(FALLOC_FL_KEEP_SIZE)``: the file's size (what recovery, reads and
        ``st_size`` see) does not move, but appends then land in blocks the filesystem has
        already allocated, which skips ext4's per-block delayed-allocation bookkeeping in
        every ``write``: ~40% of the kernel's cost of a 43 KB append on this ext4. What is
        left beyond the end is released when the segment stops being active
        (:meth:`on_become_inactive`). Unsupported filesystems just do without.
        """
        allocated = end + PREALLOCATE_BYTES
        if _fallocate is None or _fallocate(fd, _FALLOC_FL_KEEP_SIZE, start, allocated - start) != 0:
            self.preallocate = False  # EOPNOTSUPP, ENOSPC...: the write says what matters
            return
        self._allocated = allocated

    def _release_preallocated(self) -> None:
        """Give back the blocks reserved beyond the end (a same-size truncate frees them)."""
        if self._allocated and self.file is not None:
            self._allocated = 0
            with contextlib.suppress(OSError):
                os.ftruncate(self.file.fd, self.size)

    def _index_batch(self, header: BatchHeader, position: int, index_interval_bytes: int) -> None:
        if self.first_batch_timestamp is None:
            self.first_batch_timestamp = header.max_timestamp
        if header.max_timestamp > self.max_timestamp:
            self.max_timestamp, self.offset_of_max_timestamp = header.max_timestamp, header.last_offset
        if self.bytes_since_last_index_entry > index_interval_bytes:
            self.offset_index.append(header.last_offset, position)
            self.time_index.maybe_append(self.max_timestamp, self.offset_of_max_timestamp)
            self.bytes_since_last_index_entry = 0
        self.bytes_since_last_index_entry += header.size
        self.next_offset = header.next_offset

    def on_become_inactive(self) -> None:
        """Record the largest timestamp in the time index (roll or close), as Kafka does.

        Also stops preallocating and releases what was reserved beyond the end.
        """
        self.preallocate = False
        self._release_preallocated()
        if self.max_timestamp >= 0:
            self.time_index.maybe_append(
                self.max_timestamp, self.offset_of_max_timestamp, skip_full_check=True
            )

    # -- reading -------------------------------------------------------------------------

    def _headers_from(self, start: int, limit: int) -> Iterator[BatchHeader]:
        """Hop over batch headers from ``start`` (a batch boundary) up to ``limit``."""
        buf, buf_start, pos = b"", start, start
        while pos < limit:
            if pos + BATCH_HEADER_SIZE > buf_start + len(buf):
                buf, buf_start = os.pread(self.fd, _HOP_CHUNK, pos), pos
                if len(buf) < BATCH_HEADER_SIZE:
                    raise ValueError(f"{self.log_path}: partial header at byte {pos}")
            header = _header_at(buf, pos - buf_start, pos)
            yield header
            pos += header.size

    def find_batch(self, offset: int, limit: int) -> BatchHeader | None:
        """The first batch (below byte ``limit``) whose last offset is >= ``offset``."""
        for header in self._headers_from(self.offset_index.lookup(offset), limit):
            if header.last_offset >= offset:
                return header
        return None

    def headers(self, start_offset: int = 0) -> Iterator[BatchHeader]:
        """Headers of the batches whose last offset is >= ``start_offset``, to the end of file.

        For scans that need batch metadata only (producer state, the cleaner's plans).
        """
        for header in self._headers_from(self.offset_index.lookup(start_offset), self.size):
            if header.last_offset >= start_offset:
                yield header

    def read_end(self, start: int, max_bytes: int, limit: int) -> int:
        """End of the last whole batch after ``start`` that ends within ``start + max_bytes``."""
        budget_end = start + max_bytes
        if budget_end >= limit:
            return limit
        # The indexed batch start at or before the budget's end bounds whole batches that
        # fit; hop from there. (Starting the answer at ``start`` instead would return a
        # single batch whenever the indexed batch straddles the budget's end.)
        end = max(start, self.offset_index.floor_position(budget_end))
        for header in self._headers_from(end, limit):
            if header.position + header.size > budget_end:
                break
            end = header.position + header.size
        return end

    def find_by_timestamp(self, timestamp: int, limit: int) -> BatchHeader | None:
        """The first batch whose maxTimestamp is >= ``timestamp``."""
        indexed = self.time_index.lookup(timestamp)
        start = self.offset_index.lookup(indexed) if indexed is not None else 0
        for header in self._headers_from(start, limit):
            if header.max_timestamp >= timestamp:
                return header
        return None

    # -- lifecycle -----------------------------------------------------------------------

    def flush(self) -> None:
        """fsync the log and its indexes (called outside the partition lock)."""
        self.dirty = False
        os.fsync(self.fd)
        self.offset_index.flush()
        self.time_index.flush()
        self.txn_index.flush()

    def change_file_suffixes(self, old: str, new: str) -> None:
        """Rename all three files from suffix ``old`` to ``new`` (the compactor's swap)."""
        if self.suffix != old:
            raise ValueError(f"segment suffix is {self.suffix!r}, not {old!r}")
        os.replace(self.log_path, self.log_path.with_name(segment_file_name(self.base_offset, ".log", new)))
        self.suffix = new
        self.offset_index.rename(self._path(".index"))
        self.time_index.rename(self._path(".timeindex"))
        self.txn_index.rename(self._path(".txnindex"))

    def close(self) -> None:
        """Close indexes and drop the log fd (FileRegions still holding it keep it open)."""
        if self.file is not None:
            self.on_become_inactive()
        self.offset_index.close()
        self.time_index.close()
        self.file = None

    def delete(self) -> None:
        """Remove the files; open FileRegions keep reading the unlinked inode."""
        self.offset_index.delete()
        self.time_index.delete()
        self.txn_index.delete()
        self.file = None
        self.log_path.unlink(missing_ok=True)

    def __repr__(self) -> str:
        return f"Segment({self.log_path.name}, size={self.size}, next_offset={self.next_offset})"


def _header_at(buf: bytes, pos: int, position: int) -> BatchHeader:
    """A header of an already validated batch (CRC is not rechecked on reads)."""
    fields = _HEADER.unpack_from(buf, pos)
    if fields[3] != MAGIC_V2 or fields[1] < BATCH_HEADER_SIZE - 12:
        raise ValueError(f"not a v2 batch header at byte {position}")
    return BatchHeader(*fields, position)  # type: ignore[call-arg]
