"""ConfigProvider: resolves ``${provider:path:key}`` references in configs (KIP-297).

A worker configured with ``config.providers=file`` and
``config.providers.file.class=...FileConfigProvider`` replaces ``${file:/etc/secrets.properties:db.password}``
in connector configs by asking the ``file`` provider for ``get("/etc/secrets.properties", {"db.password"})``.
Secrets so never appear in the stored connector config. Providers are created by the worker
and may be called from any thread: implementations must be thread-safe.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ConfigChangeCallback", "ConfigData", "ConfigProvider"]


@dataclass(frozen=True, slots=True)
class ConfigData:
    """Values found at a path; ``ttl`` (ms) says when to look again, ``None`` for never."""

    data: Mapping[str, str] = field(default_factory=dict)
    ttl: int | None = None


ConfigChangeCallback = Callable[[str, ConfigData], None]


class ConfigProvider(abc.ABC):
    """Kafka's ``ConfigProvider``."""

    @abc.abstractmethod
    def configure(self, configs: Mapping[str, Any]) -> None:
        """Called once with the ``config.providers.<name>.param.*`` props (prefix stripped)."""

    @abc.abstractmethod
    def get(self, path: str, keys: Iterable[str] | None = None) -> ConfigData:
        """The values at ``path``: all of them, or only ``keys`` (missing keys are left out)."""

    def subscribe(self, path: str, keys: Iterable[str], callback: ConfigChangeCallback) -> None:
        """Be told when values change. Optional: the default raises ``NotImplementedError``."""
        raise NotImplementedError(f"{type(self).__name__} does not support subscriptions")

    def unsubscribe(self, path: str, keys: Iterable[str], callback: ConfigChangeCallback) -> None:
        raise NotImplementedError(f"{type(self).__name__} does not support subscriptions")

    def close(self) -> None:
        """Release resources. Default: nothing."""
        return
