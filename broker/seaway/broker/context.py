"""State the handlers share: the broker's identity, its logs and its waiters.

A :class:`BrokerContext` lives as long as the server; a :class:`RequestContext` is made
per request and tells a handler which version it must answer in and who asked.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from seaway.broker.config import BrokerConfig
    from seaway.broker.log.log_manager import LogManager

__all__ = ["BrokerContext", "Endpoint", "PartitionWaiters", "RequestContext", "now_ms"]

log = logging.getLogger("seaway.broker")


def now_ms() -> int:
    return time.time_ns() // 1_000_000


@dataclass(frozen=True, slots=True)
class Endpoint:
    """An advertised listener: what clients are told to connect to."""

    name: str
    host: str
    port: int


class PartitionWaiters:
    """Wakes long-polling fetches when data is appended, without any polling.

    A fetch registers one future on every partition it reads; an append resolves the
    futures registered on that partition. Everything runs on the event loop thread.
    """

    def __init__(self) -> None:
        self._waiters: dict[tuple[str, int], set[asyncio.Future[None]]] = defaultdict(set)

    @property
    def pending(self) -> dict[tuple[str, int], set[asyncio.Future[None]]]:
        """The registered waiters by partition; read-only. Empty when no fetch is waiting,
        which lets the produce path skip :meth:`notify` with one truth test."""
        return self._waiters

    def register(self, keys: list[tuple[str, int]], fut: asyncio.Future[None]) -> None:
        for key in keys:
            self._waiters[key].add(fut)

    def unregister(self, keys: list[tuple[str, int]], fut: asyncio.Future[None]) -> None:
        for key in keys:
            waiters = self._waiters.get(key)
            if waiters is not None:
                waiters.discard(fut)
                if not waiters:
                    del self._waiters[key]

    def notify(self, topic: str, partition: int) -> None:
        waiters = self._waiters.pop((topic, partition), None)
        if waiters:
            for fut in waiters:
                if not fut.done():
                    fut.set_result(None)


@dataclass
class BrokerContext:
    """Everything a handler may touch. Handlers never reach the server or sockets."""

    config: BrokerConfig
    logs: LogManager
    node_id: int
    cluster_id: str
    endpoints: list[Endpoint] = field(default_factory=list)
    waiters: PartitionWaiters = field(default_factory=PartitionWaiters)
    # Components added by later layers (group coordinator, producer state) register here
    # by name so handlers can find them without the context importing them.
    components: dict[str, Any] = field(default_factory=dict)

    def endpoint_for(self, listener_name: str | None) -> Endpoint:
        for ep in self.endpoints:
            if listener_name is None or ep.name == listener_name:
                return ep
        return self.endpoints[0]


@dataclass(slots=True)
class RequestContext:
    """One request's envelope: version to answer in, client identity, listener."""

    broker: BrokerContext
    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None
    listener: str
    client_host: str
