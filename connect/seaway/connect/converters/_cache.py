"""The converters' bounded caches (``schemas.cache.size``)."""

from __future__ import annotations

from typing import Any

__all__ = ["BoundedCache"]


class BoundedCache:
    """A bounded dict evicting the oldest entry; get/put are single dict operations (GIL-atomic)."""

    __slots__ = ("_data", "_size")

    def __init__(self, size: int) -> None:
        self._data: dict[Any, Any] = {}
        self._size = max(size, 1)

    def get(self, key: Any) -> Any:
        return self._data.get(key)

    def put(self, key: Any, value: Any) -> None:
        if len(self._data) >= self._size:
            self._data.pop(next(iter(self._data), None), None)
        self._data[key] = value
