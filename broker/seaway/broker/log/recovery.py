"""Crash recovery: validate segment files batch by batch and tidy a partition directory.

What a crash can leave behind, and what open does about it (as Kafka's LogLoader):

- a torn or garbage tail in a segment: :class:`BatchScanner` walks the file checking
  length, magic, CRC32C and offset order; the segment is truncated at the first bad byte;
- ``*.deleted`` files (a deletion that did not finish) and ``*.cleaned`` files (a
  compaction that never reached its swap): removed;
- ``*.log.swap`` (a compaction whose swap was interrupted): the swap segment is valid, so
  the segments it replaces are removed and it is renamed into place; its offset and time
  indexes are rebuilt by the normal missing-index path, its ``.txnindex.swap`` (which the
  log alone cannot rebuild) is renamed with it;
- index files whose log is gone: removed.

Also home of the small crash-safe file helpers (``write_atomic``, offset checkpoints)
shared by the partition log and the log manager.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from pathlib import Path

from seaway.protocol.record_batch import (
    BATCH_HEADER_SIZE,
    BatchHeader,
    CorruptBatchError,
    batch_crc,
    parse_batch_header,
)

__all__ = [
    "CLEANED_SUFFIX",
    "DELETED_SUFFIX",
    "SWAP_SUFFIX",
    "BatchScanner",
    "fsync_dir",
    "read_offset_checkpoint",
    "tidy_partition_dir",
    "write_atomic",
    "write_offset_checkpoint",
]

log = logging.getLogger("seaway.broker.log")

DELETED_SUFFIX = ".deleted"
CLEANED_SUFFIX = ".cleaned"
SWAP_SUFFIX = ".swap"
_CHUNK = 1 << 20
_INT32_MAX = 2**31 - 1


class BatchScanner:
    """Iterates the valid batches of a segment file, stopping at the first invalid byte.

    After iteration ``valid_bytes`` is where the valid prefix ends, ``next_offset`` the
    offset after its last batch and ``error`` why scanning stopped early (None at a
    clean end of file).
    """

    def __init__(self, fd: int, file_size: int, base_offset: int) -> None:
        self._fd = fd
        self._size = file_size
        self.base_offset = base_offset
        self.valid_bytes = 0
        self.next_offset = base_offset
        self.error: str | None = None

    def __iter__(self) -> Iterator[BatchHeader]:
        pos, buf, buf_start = 0, b"", 0
        while pos < self._size:
            if pos + BATCH_HEADER_SIZE > buf_start + len(buf):
                buf, buf_start = os.pread(self._fd, _CHUNK, pos), pos
            rel = pos - buf_start
            try:
                header = parse_batch_header(buf, rel)
            except CorruptBatchError as exc:
                if exc.reason != "truncated" or len(buf) - rel < BATCH_HEADER_SIZE:
                    self.error = f"{exc} at byte {pos}"
                    return
                # The header is in the buffer but the body is not: read the whole batch.
                length = int.from_bytes(buf[rel + 8 : rel + 12], "big", signed=True) + 12
                if pos + length > self._size:
                    self.error = f"record batch at byte {pos} is truncated ({length} bytes claimed)"
                    return
                buf, buf_start, rel = os.pread(self._fd, max(_CHUNK, length), pos), pos, 0
                header = parse_batch_header(buf, 0)
            problem = self._check(buf, header)
            if problem:
                self.error = f"{problem} at byte {pos}"
                return
            yield header._replace(position=pos)
            pos += header.size
            self.valid_bytes = pos
            self.next_offset = header.next_offset

    def _check(self, buf: bytes, header: BatchHeader) -> str | None:
        if batch_crc(buf, header) != header.crc:
            return "record batch fails its CRC32C check"
        if header.base_offset < self.next_offset or header.last_offset_delta < 0:
            return f"record batch offset {header.base_offset} is out of order"
        if header.last_offset - self.base_offset > _INT32_MAX:
            return "record batch offset does not fit the segment"
        return None


def _split_name(name: str) -> tuple[int, str, str] | None:
    """``00000000000000000042.log.swap`` -> (42, ".log", ".swap")."""
    stem, dot, rest = name.partition(".")
    if not dot or len(stem) != 20 or not stem.isdigit():
        return None
    ext, _, suffix = rest.partition(".")
    return int(stem), "." + ext, ("." + suffix) if suffix else ""


def tidy_partition_dir(directory: Path) -> None:
    """Finish or undo file operations a crash interrupted (see the module docstring)."""
    names = sorted(p.name for p in directory.iterdir())
    for name in names:
        parts = _split_name(name)
        if parts and parts[2] in (DELETED_SUFFIX, CLEANED_SUFFIX):
            log.info("removing leftover %s", directory / name)
            (directory / name).unlink(missing_ok=True)
        elif parts and parts[2] == SWAP_SUFFIX and parts[1] not in (".log", ".txnindex"):
            (directory / name).unlink(missing_ok=True)
    for name in names:
        parts = _split_name(name)
        if parts and parts[1] == ".log" and parts[2] == SWAP_SUFFIX:
            _complete_swap(directory, parts[0], directory / name)
    for name in names:
        # A swapped-in segment's aborted-transaction index cannot be rebuilt from its log
        # (it needs producer state from earlier segments): it is renamed into place with
        # its log, or dropped when that log did not survive.
        parts = _split_name(name)
        if parts and parts[1] == ".txnindex" and parts[2] == SWAP_SUFFIX and (directory / name).exists():
            if (directory / f"{parts[0]:020d}.log").exists():
                os.replace(directory / name, directory / name[: -len(SWAP_SUFFIX)])
            else:
                (directory / name).unlink(missing_ok=True)
    logs = {p[0] for p in map(_split_name, (q.name for q in directory.iterdir())) if p and p[1] == ".log"}
    for path in directory.iterdir():
        parts = _split_name(path.name)
        if parts and parts[1] in (".index", ".timeindex", ".txnindex") and not parts[2] and parts[0] not in logs:
            log.info("removing index %s whose log is missing", path)
            path.unlink(missing_ok=True)


def _complete_swap(directory: Path, base_offset: int, swap_path: Path) -> None:
    fd = os.open(swap_path, os.O_RDONLY)
    try:
        scanner = BatchScanner(fd, os.fstat(fd).st_size, base_offset)
        for _ in scanner:
            pass
    finally:
        os.close(fd)
    for path in directory.iterdir():
        parts = _split_name(path.name)
        if parts and not parts[2] and base_offset <= parts[0] < max(scanner.next_offset, base_offset + 1):
            path.unlink(missing_ok=True)
    final = directory / swap_path.name[: -len(SWAP_SUFFIX)]
    os.replace(swap_path, final)
    log.warning("completed interrupted segment swap into %s", final)
    fsync_dir(directory)


def fsync_dir(directory: Path) -> None:
    """Make renames and unlinks in ``directory`` durable."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomic(path: Path, data: bytes) -> None:
    """Replace ``path`` crash-safely: write a temp file, fsync it, rename, fsync the dir."""
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    fsync_dir(path.parent)


def write_offset_checkpoint(path: Path, topic: str, partition: int, offset: int) -> None:
    """Kafka's offset checkpoint format (version 0), holding one partition."""
    write_atomic(path, f"0\n1\n{topic} {partition} {offset}\n".encode())


def read_offset_checkpoint(path: Path) -> int | None:
    """The offset in a one-partition checkpoint, or None when absent or unreadable."""
    try:
        lines = path.read_text().split("\n")
        if lines[0] != "0" or int(lines[1]) != 1:
            raise ValueError("unknown checkpoint version")
        return int(lines[2].rsplit(" ", 1)[1])
    except FileNotFoundError:
        return None
    except (ValueError, IndexError, OSError) as exc:
        log.warning("ignoring unreadable checkpoint %s: %s", path, exc)
        return None
