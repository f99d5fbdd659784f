"""File descriptors: the broker's budget under ``RLIMIT_NOFILE``, and who may use its reserve.

Every partition keeps three files open per segment and every client connection a socket,
so a client could otherwise push the broker into EMFILE (too many partitions, segments
rolled by a tiny ``segment.ms`` or ``segment.bytes``, a flood of connections), after which
nothing can be opened: not a new segment, not a checkpoint, not a connection. The rule
here keeps a *reserve* at the top of the fd table, :func:`reserve_for` of the limit, that
only what the log cannot do without may use:

- a client connection is accepted only while its socket's fd number stays below the
  reserve (:func:`socket_fd_allowed`). POSIX hands out the lowest free fd, so a socket
  numbered ``k`` proves fds ``0..k-1`` are taken: an O(1) test at every accept;
- topic and partition creation must leave the reserve free (:class:`FdBudget`, which counts
  the fds open now from ``/proc/self/fd``; creation is rare, so the count's cost is fine);
- a segment roll asked for by ``segment.ms``, ``segment.bytes`` or a full index is deferred
  while the table is full up to the reserve (:func:`fds_short`); the active segment keeps
  growing, which loses nothing. Only offsets or positions that would overflow a segment
  force a roll. A roll that finds no fd fails that append with KAFKA_STORAGE_ERROR and
  leaves the log as it was.

Whatever frees fds (a connection closing, retention deleting segments, a topic deleted)
makes room again; nothing has to be restarted.
"""

from __future__ import annotations

import contextlib
import os
import resource

from seaway.protocol.errors import PolicyViolationError

__all__ = [
    "FDS_PER_PARTITION",
    "FdBudget",
    "fds_short",
    "nofile_limit",
    "open_fd_count",
    "raise_nofile_limit",
    "reserve_for",
    "socket_fd_allowed",
]

FDS_PER_PARTITION = 3
"""A new partition opens its first segment: ``.log``, ``.index`` and ``.timeindex``."""
_MIN_RESERVE = 64
_RESERVE_FRACTION = 16  # 1/16 of the limit: 1,250 of 20,000; 64 of 1,024
_UNLIMITED = 1 << 20  # what RLIM_INFINITY counts as (Linux's default nr_open)
_FD_DIRS = ("/proc/self/fd", "/dev/fd")


def nofile_limit() -> int:
    """The soft ``RLIMIT_NOFILE`` now (read each time: an operator may change it with prlimit)."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return _UNLIMITED if soft == resource.RLIM_INFINITY else int(soft)


def raise_nofile_limit() -> int:
    """Raise the soft limit to the hard one, as the JVM does for Kafka; returns the new soft limit.

    Distributions default the soft limit to 1,024 while the hard one is far higher; a
    broker with a few hundred partitions needs more, and only the process itself can
    take it up to the hard limit.
    """
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = hard if hard != resource.RLIM_INFINITY else max(soft, _UNLIMITED)
    if soft != resource.RLIM_INFINITY and soft < target:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    return nofile_limit()


def reserve_for(limit: int) -> int:
    """How many fds at the top of the table connections and new partitions leave alone."""
    return max(_MIN_RESERVE, limit // _RESERVE_FRACTION)


def socket_fd_allowed(fd: int) -> bool:
    """Whether a just-accepted socket numbered ``fd`` is below the reserve (see module doc)."""
    limit = nofile_limit()
    return fd < limit - reserve_for(limit)


def fds_short() -> bool:
    """True when every fd below the reserve is taken: optional segment rolls wait.

    Opens and closes ``/dev/null`` to learn the lowest free fd (two syscalls; asked only
    when a roll is due, never per append).
    """
    limit = nofile_limit()
    try:
        fd = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return True
    os.close(fd)
    return fd >= limit - reserve_for(limit)


def open_fd_count() -> int:
    """Fds this process has open now (0 when the platform cannot list them)."""
    for path in _FD_DIRS:
        try:
            return max(0, len(os.listdir(path)) - 1)  # minus listdir's own fd
        except OSError:
            continue
    return 0


class FdBudget:
    """Room for new partitions, counted once per request and then tracked as it is used.

    Counting ``/proc/self/fd`` costs about a millisecond per thousand open fds, so a
    CreateTopics of many topics counts once and subtracts as it creates.
    """

    def __init__(self) -> None:
        self.limit = nofile_limit()
        self.reserve = reserve_for(self.limit)
        self.open = open_fd_count()

    @property
    def free(self) -> int:
        """Fds that may still be opened without touching the reserve."""
        return self.limit - self.reserve - self.open

    def take_partitions(self, count: int, what: str) -> None:
        """Account for ``count`` new partitions, or raise POLICY_VIOLATION naming the numbers."""
        needed = count * FDS_PER_PARTITION
        if needed > self.free:
            raise PolicyViolationError(
                f"{what}: {count} new partition(s) need {needed} open files, but the broker has "
                f"{self.open} of its {self.limit} (RLIMIT_NOFILE) open and keeps {self.reserve} in "
                "reserve for client connections and segment rolls. Delete topics or raise the "
                "broker's open-file limit."
            )
        self.open += needed
