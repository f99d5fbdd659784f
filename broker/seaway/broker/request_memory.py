"""``queued.max.request.bytes``: one budget for the request bytes of every connection.

Charged: the bytes of each request from the moment they are read off a socket until the
request has been handled, i.e. a big request's bytes as they arrive (its buffer is mapped
lazily, so memory follows the bytes received, never the size a prefix announces) and every
complete request waiting in a connection's queue. Not charged: each connection's fixed
64 KiB read buffer, which ``max.connections`` bounds.

Past the limit a connection that reads stops reading (``pause_reading``: TCP pushes back on
the client) and waits in line until handled requests give bytes back; then every waiting
connection reads again. One connection is exempt, so the budget cannot deadlock on
half-read requests: the one whose unfinished request started first keeps reading, its
request completes, is handled and gives its bytes back. (Kafka's memory pool, in the
non-strict mode its socket server uses, likewise lets one allocation pass the limit.)
Memory for requests therefore stays below the limit plus one request
(``socket.request.max.bytes``) plus one read (64 KiB) per connection.

Everything here runs on the event loop thread.
"""

from __future__ import annotations

from typing import Protocol

__all__ = ["MemoryUser", "RequestMemory"]

_UNBOUNDED_ROOM = 1 << 62


class MemoryUser(Protocol):
    """A connection as the budget sees it."""

    def memory_available(self) -> None:
        """The budget has room again (or this connection became exempt): read again."""


class RequestMemory:
    """The shared budget; ``limit`` <= 0 means unbounded (Kafka's -1)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit if limit > 0 else 0
        self.used = 0
        """Bytes charged now; connections add to it directly as they read (a hot path)."""
        self._waiting: dict[MemoryUser, None] = {}  # paused for memory, in arrival order
        self._unfinished: dict[MemoryUser, None] = {}  # mid-way through a big request, oldest first

    @property
    def full(self) -> bool:
        """Whether the charged bytes reached the limit (never when unbounded)."""
        return 0 < self.limit <= self.used

    def room(self) -> int:
        """Bytes that may still be charged before the limit (huge when unbounded)."""
        return self.limit - self.used if self.limit else _UNBOUNDED_ROOM

    def release(self, nbytes: int) -> None:
        """Give bytes back; wakes every waiting connection once there is room."""
        self.used -= nbytes
        if self._waiting and not self.full:
            waiting = list(self._waiting)
            self._waiting.clear()
            for user in waiting:
                user.memory_available()

    def may_read(self, user: MemoryUser) -> bool:
        """Whether ``user`` may keep reading: room left, or it holds the oldest unfinished request."""
        if not self.full:
            return True
        return next(iter(self._unfinished), None) is user

    def wait(self, user: MemoryUser) -> None:
        """Queue ``user`` (which paused its reading) for :meth:`MemoryUser.memory_available`."""
        self._waiting[user] = None

    def begin_request(self, user: MemoryUser) -> None:
        """``user`` started reading a big request (one read into a buffer of its own)."""
        self._unfinished[user] = None

    def end_request(self, user: MemoryUser) -> None:
        """``user`` finished (or dropped) its big request; the next oldest becomes exempt."""
        if user not in self._unfinished:
            return
        was_first = next(iter(self._unfinished)) is user
        del self._unfinished[user]
        if was_first and self._unfinished:
            successor = next(iter(self._unfinished))
            if successor in self._waiting:
                del self._waiting[successor]
                successor.memory_available()

    def forget(self, user: MemoryUser) -> None:
        """``user`` closed: drop it from both queues."""
        self._waiting.pop(user, None)
        self.end_request(user)
