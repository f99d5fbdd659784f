"""Plugin discovery and class-name resolution (Kafka's ``Plugins`` / ``PluginUtils``).

Plugins are found through ``importlib.metadata`` entry points, one group per kind::

    seaway.connectors  seaway.converters  seaway.header_converters
    seaway.transforms  seaway.predicates  seaway.config_providers

Kafka's ``plugin.path`` scanning has no Python equivalent: a plugin is a pip-installed
distribution that declares its entry points. A config may name a plugin by

* its entry-point name (``JsonConverter``, ``InsertField$Value``),
* its simple class name, or that minus the ``Connector``/``Converter``/... suffix
  (``FileStreamSource``, ``ByteArray``), as Kafka's aliases,
* Kafka's class name where Seaway ships the equivalent
  (``org.apache.kafka.connect.json.JsonConverter`` resolves by its simple name within the
  known Kafka packages; ``$`` separates a nested class as in Java),
* its Python path, ``module.Class`` or ``module:Class`` (also for unregistered classes).

A plugin that fails to import is listed with :attr:`PluginDesc.load_error` and never
crashes the worker; resolving it raises a :class:`ConfigError` carrying that error.
"""

from __future__ import annotations

import enum
import importlib.metadata as md
import logging
import threading
from dataclasses import dataclass
from typing import Any

from seaway.connect.api import (
    ConfigError,
    ConfigProvider,
    Connector,
    Converter,
    HeaderConverter,
    Predicate,
    SinkConnector,
    Transformation,
)
from seaway.connect.api.config import load_class
from seaway.connect.runtime.config_providers import REDACTOR
from seaway.connect.runtime.herder import PluginDesc

__all__ = ["KAFKA_PACKAGES", "PluginKind", "Plugins", "plugin_class_name"]

log = logging.getLogger(__name__)
log.addFilter(REDACTOR)

KAFKA_PACKAGES = (
    "org.apache.kafka.connect.file.",
    "org.apache.kafka.connect.json.",
    "org.apache.kafka.connect.storage.",
    "org.apache.kafka.connect.converters.",
    "org.apache.kafka.connect.transforms.predicates.",
    "org.apache.kafka.connect.transforms.",
    "org.apache.kafka.connect.mirror.",
    "org.apache.kafka.common.config.provider.",
)
"""Kafka packages whose class names resolve to Seaway's plugin of the same simple name."""


class PluginKind(enum.Enum):
    """A kind of plugin: its entry-point group and the type ``GET /connector-plugins`` shows."""

    CONNECTOR = ("seaway.connectors", "connector", ("Connector",))
    CONVERTER = ("seaway.converters", "converter", ("Converter",))
    HEADER_CONVERTER = ("seaway.header_converters", "header_converter", ("HeaderConverter", "Converter"))
    TRANSFORMATION = ("seaway.transforms", "transformation", ("Transformation", "Transform"))
    PREDICATE = ("seaway.predicates", "predicate", ("Predicate",))
    CONFIG_PROVIDER = ("seaway.config_providers", "config_provider", ("ConfigProvider",))

    def __init__(self, group: str, label: str, suffixes: tuple[str, ...]) -> None:
        self.group = group
        self.label = label
        self.suffixes = suffixes

    @property
    def base(self) -> type:
        return {
            PluginKind.CONNECTOR: Connector,
            PluginKind.CONVERTER: Converter,
            PluginKind.HEADER_CONVERTER: HeaderConverter,
            PluginKind.TRANSFORMATION: Transformation,
            PluginKind.PREDICATE: Predicate,
            PluginKind.CONFIG_PROVIDER: ConfigProvider,
        }[self]


def plugin_class_name(cls: type) -> str:
    """The name ``GET /connector-plugins`` shows: the Python path, ``$`` for nested classes."""
    return f"{cls.__module__}.{cls.__qualname__.replace('.', '$')}"


@dataclass(slots=True)
class _Entry:
    kind: PluginKind
    name: str               # entry-point name, or the class name for registered classes
    cls: type | None
    error: str | None
    dist_version: str | None

    def desc(self) -> PluginDesc:
        if self.cls is None:
            return PluginDesc(self.name, self.kind.label, None, (self.name,), self.error)
        type_ = self.kind.label
        if self.kind is PluginKind.CONNECTOR:
            type_ = "sink" if issubclass(self.cls, SinkConnector) else "source"
        return PluginDesc(plugin_class_name(self.cls), type_, _version(self.cls, self.dist_version),
                          tuple(sorted(self.aliases())), None)

    def aliases(self) -> set[str]:
        names = {self.name}
        if self.cls is not None:
            simple = self.cls.__qualname__.replace(".", "$")
            names |= {simple, plugin_class_name(self.cls), f"{self.cls.__module__}:{self.cls.__qualname__}"}
            for suffix in self.kind.suffixes:
                if simple.endswith(suffix) and len(simple) > len(suffix):
                    names.add(simple[: -len(suffix)])
                    break
        return names


def _version(cls: type, dist_version: str | None) -> str | None:
    """The plugin's own ``version()`` if it answers without arguments, else its distribution's."""
    version_fn = getattr(cls, "version", None)
    if callable(version_fn):
        try:
            value = version_fn(cls())
            if isinstance(value, str) and value:
                return value
        except Exception:
            pass
    return dist_version


class Plugins:
    """The worker's view of every installed plugin. Thread-safe; discovery runs once, lazily.

    ``register`` adds a class without an entry point (tests, embedded use).
    """

    def __init__(self, *, discover: bool = True) -> None:
        self._lock = threading.Lock()
        self._discover = discover
        self._entries: list[_Entry] | None = None

    def _all(self) -> list[_Entry]:
        with self._lock:
            if self._entries is None:
                self._entries = self._load_entry_points() if self._discover else []
            return self._entries

    def _load_entry_points(self) -> list[_Entry]:
        entries: list[_Entry] = []
        for kind in PluginKind:
            for ep in md.entry_points(group=kind.group):
                dist_version = ep.dist.version if ep.dist is not None else None
                try:
                    obj = ep.load()
                    if not isinstance(obj, type) or not issubclass(obj, kind.base):
                        raise TypeError(f"{ep.value} is not a {kind.base.__name__} class")
                    entries.append(_Entry(kind, ep.name, obj, None, dist_version))
                except Exception as e:
                    log.warning("Failed to load %s plugin %s (%s): %s", kind.label, ep.name, ep.value, e)
                    entries.append(_Entry(kind, ep.name, None, f"{type(e).__name__}: {e}", dist_version))
        return entries

    def register(self, kind: PluginKind, cls: type, name: str | None = None) -> None:
        """Make ``cls`` known as a ``kind`` plugin under ``name`` (default: its class name)."""
        if not issubclass(cls, kind.base):
            raise TypeError(f"{cls!r} is not a {kind.base.__name__}")
        entries = self._all()
        with self._lock:
            entries.append(_Entry(kind, name or cls.__qualname__.replace(".", "$"), cls, None, None))

    # -- listing ------------------------------------------------------------------------------
    def descriptors(self, kind: PluginKind | None = None, *, include_broken: bool = True) -> list[PluginDesc]:
        """Discovered plugins, deduplicated by class; broken ones carry ``load_error``."""
        seen: dict[tuple[PluginKind, str], PluginDesc] = {}
        for entry in self._all():
            if kind is not None and entry.kind is not kind:
                continue
            if entry.cls is None and not include_broken:
                continue
            desc = entry.desc()
            key = (entry.kind, desc.class_name)
            previous = seen.get(key)
            if previous is not None:
                desc = PluginDesc(desc.class_name, desc.type, desc.version,
                                  tuple(sorted({*previous.aliases, *desc.aliases})), desc.load_error)
            seen[key] = desc
        return list(seen.values())

    # -- resolution ---------------------------------------------------------------------------
    def find(self, kind: PluginKind, name: str) -> type:
        """The class ``name`` refers to; :class:`ConfigError` if unknown, broken or of another kind."""
        name = name.strip()
        candidates = [name]
        for package in KAFKA_PACKAGES:
            if name.startswith(package):
                candidates.append(name[len(package):])
                break
        entries = [e for e in self._all() if e.kind is kind]
        for candidate in candidates:
            for entry in entries:
                if entry.cls is not None and candidate in entry.aliases():
                    return entry.cls
            for entry in entries:
                if entry.cls is None and entry.name == candidate:
                    raise ConfigError(f"Plugin {name} failed to load: {entry.error}", name=name)
        if "." in name or ":" in name:
            try:
                cls = load_class(name)
            except ImportError as e:
                raise ConfigError(self._unknown(kind, name) + f" ({e})", name=name) from None
            if issubclass(cls, kind.base):
                return cls
            raise ConfigError(f"{name} is not a {kind.base.__name__}", name=name)
        raise ConfigError(self._unknown(kind, name), name=name)

    def _unknown(self, kind: PluginKind, name: str) -> str:
        available = sorted(d.class_name for d in self.descriptors(kind, include_broken=False))
        return (f"Failed to find any class that implements {kind.base.__name__} and which name matches "
                f"{name}, available {kind.label}s are: {', '.join(available) or 'none'}")

    def new_instance(self, kind: PluginKind, name: str) -> Any:
        """A fresh instance of the plugin ``name`` (no-arg constructor, as Kafka requires)."""
        return self.find(kind, name)()

    def class_loader(self, kind: PluginKind) -> Any:
        """A ``ConfigDef`` class loader resolving aliases of ``kind`` (for CLASS-typed keys)."""

        def load(name: str) -> type:
            try:
                return self.find(kind, name)
            except ConfigError as e:
                raise ImportError(str(e)) from None

        return load

