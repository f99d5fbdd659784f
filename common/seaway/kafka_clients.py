"""Seaway's own confluent-kafka clients: the consumer setting every reader of a stream needs, and
closing clients so that their librdkafka threads end now, not at garbage collection.

librdkafka prefetches into a queue of at most ``queued.min.messages`` (100,000) records or
``queued.max.messages.kbytes`` (64 MiB); when it is full it stops fetching and by default looks
again only after ``fetch.queue.backoff.ms`` = 1 s. Any reader slower than the broker (a mirror
task that produces what it reads, a registry replaying its topic, a Connect task) fills it and
then idles for most of that second, again and again: the faster the broker streams, the fewer
records get in between two pauses (docs/broker.md, "Fetch: the pauses are librdkafka's").
Kafka's Java consumer fetches again as soon as ``poll()`` has drained its buffer, which
:data:`STREAMING_CONSUMER` gives librdkafka (a user's own setting still wins where a component
takes user settings).

A librdkafka producer lives (threads, sockets, reconnect attempts) until its handle is destroyed,
which in Python happens when the last reference goes, or never if C code still holds one (a
fatal transactional error, a callback in flight). A worker that restarts tasks or loses
leadership all day must not accumulate them, so every component that drops a producer closes it
through :func:`close_producer`, as Kafka's runtime calls ``producer.close(timeout)``.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

__all__ = ["STREAMING_CONSUMER", "close_producer"]

#: Consumer settings for a reader that takes records as fast as it can: look at a full queue
#: again after 10 ms, not 1 s.
STREAMING_CONSUMER: Mapping[str, str] = MappingProxyType({"fetch.queue.backoff.ms": "10"})

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
