"""A least-recently-used cache bounded by the total *weight* of its values, not their count.

Why weight: the registry caches parsed schemas, and one parsed schema of a subject grown to a
thousand fields costs as much memory as a thousand small ones (about 27 bytes of avro objects
per character of canonical text). A count bound (the registry once had ``len(cache) < 1024``)
let a single subject with 1,000 growing versions hold 1.5 GB; a weight bound holds the memory
whatever the mix. The caller says what an entry weighs (for schemas: characters of text).

Thread-safe: every operation takes one short lock (the HTTP event loop and the threadpool
both read it). Values heavier than the whole budget are simply not kept.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import Generic, TypeVar

__all__ = ["WeightedLRU"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class WeightedLRU(Generic[K, V]):
    """``get``/``put`` with least-recently-used eviction once the weights exceed ``budget``."""

    def __init__(self, budget: int) -> None:
        if budget < 0:
            raise ValueError("budget must be >= 0")
        self.budget = budget
        self._items: OrderedDict[K, tuple[V, int]] = OrderedDict()
        self._weight = 0
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        with self._lock:
            hit = self._items.get(key)
            if hit is None:
                return None
            self._items.move_to_end(key)
            return hit[0]

    def put(self, key: K, value: V, weight: int) -> None:
        """Keep ``value`` (replacing any entry under ``key``), evicting the least recently used."""
        weight = max(weight, 1)
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._weight -= old[1]
            if weight > self.budget:
                return
            self._items[key] = (value, weight)
            self._weight += weight
            while self._weight > self.budget:
                _, (_, dropped) = self._items.popitem(last=False)
                self._weight -= dropped

    def discard(self, key: K) -> None:
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._weight -= old[1]

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._weight = 0

    @property
    def weight(self) -> int:
        """The summed weight of what is cached now (never above ``budget``)."""
        return self._weight

    def __len__(self) -> int:
        return len(self._items)
