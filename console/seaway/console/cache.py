"""A value the pages share, served fresh or slightly stale while it is fetched again: stale-while-revalidate.

The cluster's metadata (1,000 topics: one Metadata answer), the brokers' ``/metrics`` (megabytes
at that size) and a Connect cluster's ``expand=status`` list (200 connectors: a costly answer for
the worker) are what the busiest pages need. Each is held by a :class:`Refreshing`: younger than
``fresh_s`` it is served as it is; older, but younger than ``stale_s``, it is served at once while
one background task fetches it again (a page never waits for that); older still, or after
:meth:`Refreshing.invalidate` (every change made through the console calls it), the page waits
for a fetch, which concurrent pages share. So a page shows what was true at most ``stale_s``
ago, and only while nobody changed it through the console.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

__all__ = ["Refreshing"]

T = TypeVar("T")
_log = logging.getLogger(__name__)


class Refreshing(Generic[T]):
    """One value from ``load()``; see the module docstring for when it is fetched again."""

    def __init__(self, load: Callable[[], Awaitable[T]], fresh_s: float, stale_s: float) -> None:
        self._load = load
        self.fresh_s = fresh_s
        self.stale_s = stale_s
        self._value: tuple[float, T] | None = None
        self._task: asyncio.Task[T] | None = None
        self._generation = 0

    def invalidate(self) -> None:
        """Forget the value: the next :meth:`get` waits for a fetch (started after this call)."""
        self._value = None
        self._generation += 1
        self._task = None

    async def _fetch(self) -> T:
        generation = self._generation
        value = await self._load()
        if generation == self._generation:
            self._value = (time.monotonic(), value)
        return value

    def _start(self) -> asyncio.Task[T]:
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._fetch())
            self._task.add_done_callback(_quiet)
        return self._task

    async def get(self) -> T:
        cached = self._value
        if cached is not None:
            age = time.monotonic() - cached[0]
            if age < self.fresh_s:
                return cached[1]
            if age < self.stale_s:
                self._start()  # fetched again in the background; this page gets what is cached
                return cached[1]
        return await asyncio.shield(self._start())


def _quiet(task: asyncio.Task[object]) -> None:
    """A background fetch that fails is retried by the next page; its error is logged, not lost."""
    if not task.cancelled() and task.exception() is not None:
        with contextlib.suppress(Exception):
            _log.debug("background refresh failed: %s", task.exception())
