"""Test-only fault injection on the produce path (off unless a ``seaway.test.fault.*`` key is set).

``seaway.test.fault.drop.produce.response.after.append=N`` makes every Nth produce
request that appended data lose its connection after the append and before the
response, as a network failure would: the client cannot know the batch was written and
retries it, which is what the idempotent producer's duplicate detection must absorb.
"""

from __future__ import annotations

import itertools
import logging

from seaway.protocol.errors import KafkaProtocolError

__all__ = ["DROP_PRODUCE_RESPONSE_KEY", "ProduceFault", "ProduceResponseDropped"]

log = logging.getLogger("seaway.broker.producer")

DROP_PRODUCE_RESPONSE_KEY = "seaway.test.fault.drop.produce.response.after.append"


class ProduceResponseDropped(KafkaProtocolError):
    """Raised out of the produce handler so the connection is closed without a response."""

    code = -1
    name = "UNKNOWN_SERVER_ERROR"
    retriable = True


class ProduceFault:
    """Counts produce requests that appended data; every ``every``-th one is dropped."""

    def __init__(self, every: int) -> None:
        if every < 2:
            raise ValueError(f"{DROP_PRODUCE_RESPONSE_KEY} must be 0 (off) or at least 2, not {every}")
        self.every = every
        self._count = itertools.count(1)
        self.dropped = 0

    def should_drop(self) -> bool:
        if next(self._count) % self.every:
            return False
        self.dropped += 1
        log.warning("test fault: dropping a produce response after its append (%d so far)", self.dropped)
        return True
