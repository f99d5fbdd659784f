"""Producer id allocation that never hands out an id twice, across restarts and crashes.

Ids come from blocks of :data:`BLOCK_SIZE`, like Kafka's ``ProducerIdManager``. Before
the first id of a block is handed out, the block's end is persisted as the new
high-water mark (``__seaway_producer_ids`` in the first log dir: temp file, fsync,
rename, fsync dir), so after any crash the next broker starts above every id that may
have reached a client. A lost block costs at most 999 ids of a 2**63 space.
"""

from __future__ import annotations

import threading
from pathlib import Path

from seaway.broker.log.recovery import write_atomic
from seaway.errors import SeawayError

__all__ = ["BLOCK_SIZE", "PRODUCER_ID_FILE", "ProducerIdAllocator", "ProducerIdFileError"]

BLOCK_SIZE = 1000
PRODUCER_ID_FILE = "__seaway_producer_ids"
_KEY = "next.block.start"


class ProducerIdFileError(SeawayError):
    """The high-water mark file exists but cannot be read: starting could reuse ids."""


class ProducerIdAllocator:
    """Hands out increasing producer ids; :meth:`allocate` may write the block file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._next = self._limit = self._read()

    def _read(self) -> int:
        try:
            text = self.path.read_text()
        except FileNotFoundError:
            return 0
        props = dict(line.split("=", 1) for line in text.splitlines() if "=" in line)
        try:
            value = int(props[_KEY])
        except (KeyError, ValueError):
            raise ProducerIdFileError(
                f"{self.path} is unreadable ({text[:80]!r}); restore it or set {_KEY} above every "
                "producer id ever issued"
            ) from None
        if value < 0:
            raise ProducerIdFileError(f"{self.path}: {_KEY}={value} is negative")
        return value

    @property
    def needs_write(self) -> bool:
        """Whether the next :meth:`allocate` starts a block (and so does disk I/O)."""
        return self._next >= self._limit

    def ensure_block(self) -> None:
        """Persist the next block now if the current one is used up, so the following
        :meth:`allocate` does no disk I/O (callers on the event loop run this in a thread)."""
        with self._lock:
            if self._next >= self._limit:
                limit = self._next + BLOCK_SIZE
                write_atomic(self.path, f"version=1\n{_KEY}={limit}\n".encode())
                self._limit = limit

    def allocate(self) -> int:
        """The next producer id, persisting a new block first when the current one is used up."""
        with self._lock:
            if self._next >= self._limit:
                limit = self._next + BLOCK_SIZE
                write_atomic(self.path, f"version=1\n{_KEY}={limit}\n".encode())
                self._limit = limit
            producer_id = self._next
            self._next += 1
            return producer_id
