"""A connector's background jobs on one thread of their own (Kafka's mirror ``Scheduler``).

Refreshing topics, syncing configs and refreshing groups are admin calls that may block for
``admin.timeout.ms``; they must not run on the runtime's threads. Jobs run one at a time, in
the order they come due; a failing job is logged and runs again at its next interval (as
Kafka's does), and :meth:`close` stops the thread without waiting for a job in progress to
finish beyond ``timeout``.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
import time
from collections.abc import Callable

__all__ = ["Scheduler"]

log = logging.getLogger(__name__)

Job = Callable[[], object]


class Scheduler:
    """Runs jobs on a daemon thread named after ``name``."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._queue: list[tuple[float, int, Job, float | None, str]] = []
        self._counter = itertools.count()
        self._cond = threading.Condition()
        self._closed = False
        self._thread = threading.Thread(target=self._run, name=f"Scheduler for {name}", daemon=True)
        self._thread.start()

    def execute(self, job: Job, description: str) -> None:
        """Run ``job`` now, on the caller's thread, logging (not raising) its failure."""
        self._run_job(job, description)

    def schedule(self, job: Job, interval: float | None, description: str, *, delayed: bool = False) -> None:
        """Run ``job`` every ``interval`` seconds (first now, or after one interval if ``delayed``);
        nothing when ``interval`` is None (the feature is disabled)."""
        if interval is None:
            return
        interval = max(interval, 0.1)  # an interval of 0 must not spin the thread
        first = time.monotonic() + (interval if delayed else 0.0)
        with self._cond:
            heapq.heappush(self._queue, (first, next(self._counter), job, interval, description))
            self._cond.notify()

    def submit(self, job: Job, description: str) -> None:
        """Run ``job`` once on the scheduler thread, as soon as it is free."""
        with self._cond:
            heapq.heappush(self._queue, (time.monotonic(), next(self._counter), job, None, description))
            self._cond.notify()

    def close(self, timeout: float = 5.0) -> None:
        with self._cond:
            self._closed = True
            self._queue.clear()
            self._cond.notify()
        if threading.current_thread() is not self._thread:
            self._thread.join(timeout)

    @property
    def closed(self) -> bool:
        return self._closed

    def _run_job(self, job: Job, description: str) -> None:
        try:
            job()
        except Exception:
            log.exception("%s caught exception in scheduled task: %s", self.name, description)

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._closed and (not self._queue or self._queue[0][0] > time.monotonic()):
                    self._cond.wait(None if not self._queue else max(0.0, self._queue[0][0] - time.monotonic()))
                if self._closed:
                    return
                due, _, job, interval, description = heapq.heappop(self._queue)
            self._run_job(job, description)
            if interval is not None:
                with self._cond:
                    if self._closed:
                        return
                    heapq.heappush(self._queue, (max(due + interval, time.monotonic()), next(self._counter), job,
                                                 interval, description))
