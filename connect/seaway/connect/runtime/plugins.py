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
* its Python path, ``module.Class`` or ``module:Class``, matched against the classes already
  discovered (nothing is imported for it).

Nothing else is imported from a name a config carries (that would be remote code execution:
see :mod:`seaway.connect.api.config.class_names`), with one exception the operator makes:
Python paths listed in the worker's ``plugin.allowlist`` (``module.Class`` or ``module.*``)
are imported when named.

``GET /connector-plugins`` lists each plugin under the Java class name Kafka users and UIs know
when it has one (:func:`java_class_name`: Kafka's for Seaway's versions of Kafka's plugins, or
a Java class name one of its entry points is named as, like Confluent's JDBC connectors), else
under its Python path; both, and every alias above, resolve.

Installing a plugin needs no restart: the installed set is rescanned when the ``sys.path``
directories changed (their modification times: ``pip install`` adds a ``.dist-info``
directory) and, at most once a second, when a name is not found. A plugin that fails to
import is listed with :attr:`PluginDesc.load_error` and never crashes the worker;
resolving it raises a :class:`ConfigError` carrying that error.
"""

from __future__ import annotations

import enum
import importlib
import importlib.metadata as md
import logging
import os
import sys
import threading
import time
from collections.abc import Iterable
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
from seaway.connect.api.config import ClassAllowlist, allow_class_names, import_class
from seaway.connect.runtime.config_providers import REDACTOR
from seaway.connect.runtime.herder import PluginDesc

__all__ = ["KAFKA_EQUIVALENT_PACKAGES", "KAFKA_PACKAGES", "PluginKind", "Plugins", "installed_fingerprint",
           "java_class_name", "plugin_class_name", "task_class_name"]

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

MISS_RESCAN_INTERVAL = 1.0
"""Seconds between rescans caused by unknown names (each costs a read of every installed
distribution's metadata; a client sending unknown names must not make the worker do it per request)."""


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


KAFKA_EQUIVALENT_PACKAGES = {
    "seaway.connectors.file": "org.apache.kafka.connect.file",
    "seaway.connectors.mirror": "org.apache.kafka.connect.mirror",
}
"""Seaway's packages that implement Kafka's own connectors, under the same simple class names."""

_KAFKA_BUILT_INS: tuple[tuple[str, str, bool], ...] = (
    *((ours, kafka, False) for ours, kafka in KAFKA_EQUIVALENT_PACKAGES.items()),
    ("seaway.transforms.predicates", "org.apache.kafka.connect.transforms.predicates", True),
    ("seaway.transforms", "org.apache.kafka.connect.transforms", True),
    ("seaway.connect.runtime.config_providers", "org.apache.kafka.common.config.provider", False),
)
"""(Seaway's module, Kafka's package of the same plugins, whether the entry-point name is the
Java name): SMTs are entry points named as Kafka's nested classes (``Cast$Key``, class ``CastKey``)."""

_KAFKA_CONVERTERS = {
    "JsonConverter": "org.apache.kafka.connect.json",
    "StringConverter": "org.apache.kafka.connect.storage",
    "SimpleHeaderConverter": "org.apache.kafka.connect.storage",
    **{f"{kind}Converter": "org.apache.kafka.connect.converters"
       for kind in ("ByteArray", "Short", "Integer", "Long", "Float", "Double", "Boolean")},
}
"""Kafka's package of each converter ``seaway.connect.converters`` implements."""


def java_class_name(name: str, cls: type) -> str | None:
    """The Java class a plugin stands for, from one of its entry points: None for a Python-only plugin.

    Kafka's name for Seaway's own versions of Kafka's plugins (FileStream, MirrorMaker 2, the
    SMTs and predicates, the converters, the config providers); an entry point named as a Java
    class (``io.confluent.connect.jdbc.JdbcSinkConnector``) declares that name itself.
    """
    if "." in name:
        return name
    module = cls.__module__
    simple = cls.__qualname__.replace(".", "$")
    if module == "seaway.connect.converters" or module.startswith("seaway.connect.converters."):
        package = _KAFKA_CONVERTERS.get(simple)
        return f"{package}.{simple}" if package else None
    for ours, kafka, by_entry_point in _KAFKA_BUILT_INS:
        if module == ours or module.startswith(ours + "."):
            return f"{kafka}.{name if by_entry_point else simple}"
    return None


def task_class_name(cls: type) -> str:
    """The ``task.class`` a task config carries (Kafka's ``TaskConfig.TASK_CLASS_CONFIG``).

    For Seaway's versions of Kafka's own connectors (FileStream, MirrorMaker 2) it is Kafka's
    class name (``org.apache.kafka.connect.file.FileStreamSourceTask``), which tools written
    for Kafka Connect recognise; for any other plugin its Python path, the form
    ``GET /connector-plugins`` shows (:func:`plugin_class_name`). Seaway itself never loads a
    task from this value: a task is always its connector's ``task_class()``.
    """
    for ours, kafka in KAFKA_EQUIVALENT_PACKAGES.items():
        if cls.__module__ == ours or cls.__module__.startswith(ours + "."):
            return f"{kafka}.{cls.__qualname__.replace('.', '$')}"
    return plugin_class_name(cls)


def installed_fingerprint() -> tuple[tuple[str, int], ...]:
    """What changes when a distribution is installed or removed: each ``sys.path`` entry's mtime.

    ``pip install``/``uninstall`` creates or deletes a ``*.dist-info`` directory in
    site-packages, which updates that directory's modification time; a stat per entry
    (about ten) is cheap enough for every listing and lookup.
    """
    out = []
    for entry in sys.path:
        try:
            out.append((entry, os.stat(entry or ".").st_mtime_ns))
        except OSError:
            out.append((entry, -1))
    return tuple(out)


def _broken_connector_type(ep: md.EntryPoint) -> str:
    """A broken connector cannot say whether it is a sink: guess from its name (Kafka's naming convention)."""
    target = ep.value.rpartition(":")[2] or ep.name
    if "Sink" in target or "Sink" in ep.name:
        return "sink"
    return "source"


@dataclass(slots=True)
class _Entry:
    kind: PluginKind
    name: str               # entry-point name, or the class name for registered classes
    cls: type | None
    error: str | None
    dist_version: str | None
    target: str = ""        # the entry point's module:attr (what a broken plugin is known by)
    broken_type: str = ""   # the type a broken plugin is listed with

    def desc(self, java_names: dict[type, str] | None = None) -> PluginDesc:
        """How ``GET /connector-plugins`` lists it: under its Java class name when it has one
        (``java_names``, from any of its entry points), else its Python path."""
        if self.cls is None:
            shown = self.target.replace(":", ".") or self.name  # the Python path, as for a loaded plugin
            return PluginDesc(shown, self.broken_type or self.kind.label, self.dist_version,
                              tuple(sorted({self.name, shown})), self.error)
        type_ = self.kind.label
        if self.kind is PluginKind.CONNECTOR:
            type_ = "sink" if issubclass(self.cls, SinkConnector) else "source"
        shown = (java_names or {}).get(self.cls) or plugin_class_name(self.cls)
        return PluginDesc(shown, type_, _version(self.cls, self.dist_version),
                          tuple(sorted(self.aliases() | {shown})), None)

    def aliases(self) -> set[str]:
        names = {self.name}
        if self.cls is not None:
            simple = self.cls.__qualname__.replace(".", "$")
            names |= {simple, plugin_class_name(self.cls), f"{self.cls.__module__}:{self.cls.__qualname__}",
                      f"{self.cls.__module__}.{self.cls.__qualname__}"}
            for suffix in self.kind.suffixes:
                if simple.endswith(suffix) and len(simple) > len(suffix):
                    names.add(simple[: -len(suffix)])
                    break
        return names

    def known_as(self, name: str) -> bool:
        """Whether a broken entry is what ``name`` means (its entry-point name or its target)."""
        return name == self.name or (bool(self.target) and name.replace(":", ".") == self.target.replace(":", "."))


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


def _load_entry_points() -> list[_Entry]:
    """Every plugin of every kind, imported now; a failure becomes an entry carrying its error."""
    entries: list[_Entry] = []
    installed = md.entry_points()
    for kind in PluginKind:
        for ep in installed.select(group=kind.group):
            dist_version = ep.dist.version if ep.dist is not None else None
            try:
                obj = ep.load()
                if not isinstance(obj, type) or not issubclass(obj, kind.base):
                    raise TypeError(f"{ep.value} is not a {kind.base.__name__} class")
                entries.append(_Entry(kind, ep.name, obj, None, dist_version, ep.value))
            except Exception as e:
                log.warning("Failed to load %s plugin %s (%s): %s", kind.label, ep.name, ep.value, e)
                broken_type = _broken_connector_type(ep) if kind is PluginKind.CONNECTOR else kind.label
                entries.append(_Entry(kind, ep.name, None, f"{type(e).__name__}: {e}", dist_version, ep.value,
                                      broken_type))
    return entries


class Plugins:
    """The worker's view of every installed plugin. Thread-safe; discovery is lazy and repeated
    whenever the installed distributions change (see the module docstring).

    ``register`` adds a class without an entry point (tests, embedded use). ``allowlist`` is the
    worker's ``plugin.allowlist``: Python paths that may be imported when a config names them.
    """

    def __init__(self, *, discover: bool = True, allowlist: Iterable[str] = ()) -> None:
        self._lock = threading.Lock()
        self._discover = discover
        self._discovered: list[_Entry] | None = None
        self._registered: list[_Entry] = []
        self._fingerprint: tuple[tuple[str, int], ...] = ()
        self._last_miss_rescan = float("-inf")
        self._allowlist = ClassAllowlist()
        self.allow(allowlist)
        self.unused_plugin_path: str | None = None
        """The worker's ``plugin.path``, which Seaway does not use: named where a plugin is not found."""

    def allow(self, entries: Iterable[str]) -> None:
        """Add ``plugin.allowlist`` entries (:class:`ImportError` names a malformed one)."""
        entries = list(entries)
        self._allowlist.add(entries)
        allow_class_names(entries)  # plugin-owned ConfigDefs (ConfigType.CLASS keys) honour it too

    def _all(self, *, rescan: bool = False) -> list[_Entry]:
        with self._lock:
            if self._discover:
                fingerprint = installed_fingerprint()
                if self._discovered is None or rescan or fingerprint != self._fingerprint:
                    if self._discovered is not None:
                        log.info("Installed distributions changed: rescanning plugins")
                        importlib.invalidate_caches()  # new files in site-packages must be seen
                    self._fingerprint = fingerprint
                    self._discovered = _load_entry_points()
            return [*(self._discovered or []), *self._registered]

    def rescan(self) -> None:
        """Discover the installed plugins again now."""
        self._all(rescan=True)

    def register(self, kind: PluginKind, cls: type, name: str | None = None) -> None:
        """Make ``cls`` known as a ``kind`` plugin under ``name`` (default: its class name)."""
        if not issubclass(cls, kind.base):
            raise TypeError(f"{cls!r} is not a {kind.base.__name__}")
        with self._lock:
            self._registered.append(_Entry(kind, name or cls.__qualname__.replace(".", "$"), cls, None, None))

    # -- listing ------------------------------------------------------------------------------
    def descriptors(self, kind: PluginKind | None = None, *, include_broken: bool = True) -> list[PluginDesc]:
        """Discovered plugins, deduplicated by class; broken ones carry ``load_error``."""
        seen: dict[tuple[PluginKind, str], PluginDesc] = {}
        every = self._all()
        java_names: dict[type, str] = {}
        for entry in every:
            java = java_class_name(entry.name, entry.cls) if entry.cls is not None else None
            if java is not None and entry.cls is not None:
                java_names.setdefault(entry.cls, java)
        for entry in every:
            if kind is not None and entry.kind is not kind:
                continue
            if entry.cls is None and not include_broken:
                continue
            desc = entry.desc(java_names)
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
        found = self._lookup(kind, name, self._all())
        if found is None and self._allowlist.allows(name):
            found = self._import_allowed(kind, name)
        if found is None and self._discover and self._miss_rescan_due():
            found = self._lookup(kind, name, self._all(rescan=True))
        if found is None:
            raise ConfigError(self._unknown(kind, name), name=name)
        return found

    @staticmethod
    def _lookup(kind: PluginKind, name: str, every: list[_Entry]) -> type | None:
        candidates = [name]
        for package in KAFKA_PACKAGES:
            if name.startswith(package):
                candidates.append(name[len(package):])
                break
        entries = [e for e in every if e.kind is kind]
        for candidate in candidates:
            for entry in entries:
                if entry.cls is not None and candidate in entry.aliases():
                    return entry.cls
            for entry in entries:
                if entry.cls is None and entry.known_as(candidate):
                    raise ConfigError(f"Plugin {name} failed to load: {entry.error}", name=name)
        return None

    def _miss_rescan_due(self) -> bool:
        with self._lock:
            now = time.monotonic()
            if now - self._last_miss_rescan < MISS_RESCAN_INTERVAL:
                return False
            self._last_miss_rescan = now
            return True

    @staticmethod
    def _import_allowed(kind: PluginKind, name: str) -> type:
        try:
            cls = import_class(name)
        except ImportError as e:
            raise ConfigError(f"{name} is listed in plugin.allowlist but cannot be loaded: {e}", name=name) from None
        if not issubclass(cls, kind.base):
            raise ConfigError(f"{name} is not a {kind.base.__name__}", name=name)
        return cls

    def _unknown(self, kind: PluginKind, name: str) -> str:
        available = sorted(d.class_name for d in self.descriptors(kind, include_broken=False))
        message = (f"Failed to find any class that implements {kind.base.__name__} and which name matches "
                   f"{name}, available {kind.label}s are: {', '.join(available) or 'none'}")
        if "." in name or ":" in name:
            message += (". Python paths are imported only for installed plugins (entry points) and for names "
                        "listed in the worker's plugin.allowlist")
        if self.unused_plugin_path:
            message += (f" (the worker's plugin.path={self.unused_plugin_path} is not used: install the plugin's "
                        "Python distribution, or list its Python path in plugin.allowlist)")
        return message

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
