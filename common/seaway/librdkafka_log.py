"""librdkafka's own log lines through Python logging, a line that repeats said once a minute.

Left alone, every confluent-kafka client writes librdkafka's lines straight to the process's
stderr in librdkafka's format (``%3|1796603874.935|FAIL|rdkafka#consumer-19| [thrd:...]: ...``),
past the process's log format (``--log-format json`` included) and its levels. With a cluster
down, ``seaway mirror`` printed 1,500 of them in 15 seconds beside 90 lines of its own: each of a
worker's clients reports each reconnect attempt.

A client whose config carries :func:`client_logging` hands its lines to the logger
``seaway.librdkafka`` instead (confluent-kafka's ``logger`` setting; librdkafka's levels map to
Python's: 3 ERROR, 4 WARNING, 5-6 INFO, 7 DEBUG), where :class:`RepeatFilter` lets one line per
client and message through a minute and says how many it held back. confluent-kafka delivers
the lines when the client is polled: producers and consumers are polled all the time, and an
admin client that lives long must be polled (``admin.poll(0)``) when used, or its lines wait in
its queue.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from typing import Any

__all__ = ["LIBRDKAFKA_LOGGER", "RepeatFilter", "client_logging"]

REPEAT_WINDOW_S = 60.0
"""A line that repeats within this long is held back (and counted)."""

_VARYING = re.compile(r" \(after \d+ms in state \w+(?:, \d+ identical error\(s\) suppressed)?\)|\d+ms")
"""What changes between two reports of the same event: how long a state lasted."""


class RepeatFilter(logging.Filter):
    """Passes the first of a run of equal librdkafka lines per :data:`REPEAT_WINDOW_S`.

    Equal: the same client (``rdkafka#consumer-19``), facility and message, timings aside. The
    next line let through after held-back ones ends with ``(N similar lines held back)``.
    """

    def __init__(self, window_s: float = REPEAT_WINDOW_S) -> None:
        super().__init__()
        self.window_s = window_s
        self._seen: dict[str, tuple[float, int]] = {}  # key -> (when let through, held back since)
        self._lock = threading.Lock()

    def filter(self, record: logging.LogRecord) -> bool:
        key = _VARYING.sub("", record.getMessage())
        now = time.monotonic()
        with self._lock:
            if len(self._seen) > 10_000:  # clients come and go: forget the old ones
                self._seen = {k: v for k, v in self._seen.items() if now - v[0] < self.window_s}
            passed, held = self._seen.get(key, (float("-inf"), 0))
            if now - passed < self.window_s:
                self._seen[key] = (passed, held + 1)
                return False
            self._seen[key] = (now, 0)
        if held:
            record.msg = f"{record.getMessage()} ({held} similar lines held back)"
            record.args = None
        return True


LIBRDKAFKA_LOGGER = logging.getLogger("seaway.librdkafka")
LIBRDKAFKA_LOGGER.addFilter(RepeatFilter())


def client_logging() -> dict[str, Any]:
    """The confluent-kafka settings that send a client's librdkafka lines to :data:`LIBRDKAFKA_LOGGER`."""
    return {"logger": LIBRDKAFKA_LOGGER}
