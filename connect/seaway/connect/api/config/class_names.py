"""Which class names a config may turn into a class, and the one place such a name is imported.

A class-typed config value (``connector.class``, ``transforms.x.type``, ``key.converter``, a
plugin's own ``ConfigType.CLASS`` keys) arrives from the network. Importing whatever module
it names runs that module's top-level code, and Python finds modules on ``sys.path``, so
``connector.class=evil.X`` would run ``evil.py`` from any directory on it: remote code
execution without credentials. Kafka has the same hole only in the weaker form of the
``plugin.path`` class loader; Seaway closes it:

* a name resolves to an **installed plugin** (an entry point in one of the ``seaway.*``
  groups, by its entry-point name or its target ``module:Class`` / ``module.Class``), or
* to a Python path the operator listed in the worker's ``plugin.allowlist``
  (``module.Class``, ``module:Class``, or ``module.*`` for every class of one module),

and nothing else is imported. Defaults written in code (``ConfigDef.define(..., "m.C")``)
are trusted: they come from the plugin, not from a request.

:func:`allow_class_names` is how the runtime passes its ``plugin.allowlist`` to plugin-owned
ConfigDefs (process-wide and additive: a worker process has one configuration).
"""

from __future__ import annotations

import importlib
import importlib.metadata as md
import keyword
import threading
from collections.abc import Iterable

__all__ = [
    "PLUGIN_GROUPS",
    "ClassAllowlist",
    "allow_class_names",
    "import_class",
    "load_class",
    "split_class_name",
]

PLUGIN_GROUPS = ("seaway.connectors", "seaway.converters", "seaway.header_converters", "seaway.transforms",
                 "seaway.predicates", "seaway.config_providers")
"""The entry-point groups whose targets count as installed plugins."""

MAX_NAME_LENGTH = 1000
"""Longer class names are refused without looking at them (no legitimate name comes close)."""


def split_class_name(name: str) -> tuple[str, str]:
    """``module:Class`` or ``module.Class`` as ``(module, Class)``; :class:`ImportError` if malformed.

    Each part must be a Python identifier: ``..x``, ``a..b``, ``/tmp/x`` or ``x.`` never reach
    the import system (``importlib`` would raise ``TypeError``/``ValueError`` for some of them,
    which used to surface as a 500).
    """
    if len(name) > MAX_NAME_LENGTH:
        raise ImportError(f"Class name of {len(name)} characters is too long")
    module, sep, attr = name.partition(":")
    if not sep:
        module, _, attr = name.rpartition(".")
    parts = [*module.split("."), *attr.split(".")]
    if not module or not attr or not all(p.isidentifier() and not keyword.iskeyword(p) for p in parts):
        raise ImportError(f"Class {name} cannot be found: not a Python class name (module.Class or module:Class)")
    return module, attr


def import_class(name: str) -> type:
    """Import ``name`` with no check of who may name it: only for trusted names (code, allowlist)."""
    module_name, attr = split_class_name(name)
    try:
        obj: object = importlib.import_module(module_name)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as e:
        raise ImportError(f"Class {name} cannot be found ({type(e).__name__}: {e})") from e
    if not isinstance(obj, type):
        raise ImportError(f"{name} is not a class")
    return obj


class ClassAllowlist:
    """The operator's ``plugin.allowlist``: exact Python paths, or ``module.*`` for a whole module.

    Entries are checked for syntax when set (a typo is a config error, not a silent miss).
    """

    def __init__(self, entries: Iterable[str] = ()) -> None:
        self._exact: set[tuple[str, str]] = set()
        self._modules: set[str] = set()
        self.add(entries)

    def add(self, entries: Iterable[str]) -> None:
        for raw in entries:
            entry = raw.strip()
            if not entry:
                continue
            if entry.endswith((".*", ":*")):
                module = entry[:-2]
                split_class_name(module + ".X")  # syntax check of the module part
                self._modules.add(module)
            else:
                self._exact.add(split_class_name(entry))

    def allows(self, name: str) -> bool:
        """Whether ``name`` is listed (never imports anything)."""
        try:
            module, attr = split_class_name(name.strip())
        except ImportError:
            return False
        return (module, attr) in self._exact or (module in self._modules and "." not in attr)

    def __bool__(self) -> bool:
        return bool(self._exact or self._modules)


_ALLOWED = ClassAllowlist()
_LOCK = threading.Lock()


def allow_class_names(entries: Iterable[str]) -> None:
    """Add ``plugin.allowlist`` entries for every ConfigDef of this process (see the module docstring)."""
    with _LOCK:
        _ALLOWED.add(entries)


def _entry_point_target(name: str) -> md.EntryPoint | None:
    """The ``seaway.*`` entry point named ``name`` or whose target ``name`` spells, if installed."""
    dotted = name.replace(":", ".")
    installed = md.entry_points()
    for group in PLUGIN_GROUPS:
        for ep in installed.select(group=group):
            if name in (ep.name, ep.value) or dotted == ep.value.replace(":", "."):
                return ep
    return None


def load_class(name: str) -> type:
    """The class an untrusted config value names: an installed plugin or an allowlisted path.

    :class:`ImportError` (which ``parse_value`` turns into a ConfigError naming the key) for
    anything else; the name is then never imported.
    """
    name = name.strip()
    ep = _entry_point_target(name)
    if ep is not None:
        try:
            obj = ep.load()
        except Exception as e:
            raise ImportError(f"Plugin {name} failed to load: {type(e).__name__}: {e}") from None
        if not isinstance(obj, type):
            raise ImportError(f"{name} is not a class")
        return obj
    with _LOCK:
        allowed = _ALLOWED.allows(name)
    if allowed:
        return import_class(name)
    if "." in name or ":" in name:
        split_class_name(name)  # a malformed name says so
    raise ImportError(f"Class {name} cannot be found: it is neither an installed plugin (an entry point in a "
                      "seaway.* group) nor listed in the worker's plugin.allowlist")
