"""Closing confluent-kafka clients so that their librdkafka threads end now, not at garbage collection.

A librdkafka producer lives (threads, sockets, reconnect attempts) until its handle is destroyed,
which in Python happens when the last reference goes, or never if C code still holds one (a
fatal transactional error, a callback in flight). A worker that restarts tasks or loses
leadership all day must not accumulate them, so every component that drops a producer closes it
through :func:`close_producer`, as Kafka's runtime calls ``producer.close(timeout)``.
"""

from __future__ import annotations

import contextlib
import logging
from typing import Any

__all__ = ["close_producer"]

log = logging.getLogger(__name__)


def close_producer(producer: Any, flush_timeout: float = 0.0) -> int:
    """Deliver what ``producer`` can within ``flush_timeout`` seconds, drop the rest, destroy it.

    Returns how many messages were dropped unsent (their delivery callbacks report them as
    purged). Never raises: a producer in a fatal state (fenced) or already closed is closed as
    far as it can be.
    """
    remaining = 0
    with contextlib.suppress(Exception):
        remaining = int(producer.flush(flush_timeout)) if flush_timeout > 0 else len(producer)
    with contextlib.suppress(Exception):
        if remaining:
            producer.purge()  # close() would wait for them; Kafka's close(timeout) gives up on them too
            producer.flush(0)  # serves the purge reports
    try:
        producer.close()
    except RuntimeError:  # closed already
        pass
    except Exception:
        log.debug("closing a producer failed", exc_info=True)
    return remaining
