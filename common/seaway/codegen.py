"""The one helper behind every generated fast function (struct readers, JSON writer, Avro and
Protobuf decoders, fused SMT runs).

Why generate code at all: a record's fields are known once per schema, and a function written
for that schema (as :mod:`dataclasses` writes ``__init__``) reads them with no per-field
dispatch; on a five-field record that is most of a converter's cost. Why one helper: the
generators used to build their text, escape their values, cache their functions and name
their code objects each in its own way; a literal escaped wrongly or an identifier that is a
keyword (a Protobuf field named ``from``) is a syntax error, or worse, code nobody wrote. Here:

* :func:`identifier` and :func:`is_identifier`: a name that may be written into code;
* :func:`literal`: the Python text of a plain constant, or ``ValueError``;
* :class:`Source`: lines plus constants; anything that is not a literal is passed to the code
  as a value under a generated name (:meth:`Source.const`), never spliced into its text;
* :func:`compile_function`: compile, register the text with :mod:`linecache` so a traceback
  through generated code shows its lines, keep the text as the function's ``__doc__``, and,
  when ``SEAWAY_CODEGEN_DUMP`` names a directory, write each generated source there (``-``:
  log it at DEBUG on ``seaway.codegen``), for debugging;
* :class:`ShapeCache`: a bounded cache of compiled functions per input shape (a schema, a
  record layout), evicting the oldest entry: a stream of ever new shapes never grows memory.

Standard library only: every component may use it (``seaway.common`` sits below them all).
"""

from __future__ import annotations

import collections
import itertools
import keyword
import linecache
import logging
import math
import os
import re
from collections.abc import Callable, Hashable, Iterable, Mapping
from pathlib import Path
from typing import Any, Generic, TypeVar

__all__ = ["DUMP_ENV", "ShapeCache", "Source", "compile_function", "identifier", "is_identifier", "literal"]

log = logging.getLogger(__name__)

DUMP_ENV = "SEAWAY_CODEGEN_DUMP"
"""Environment variable: a directory to write every generated source to, or ``-`` to log it at DEBUG."""

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

_NOT_NAME = re.compile(r"[^0-9A-Za-z_]")
_LITERAL_TYPES = (str, bytes, bool, int)
_counter = itertools.count()
_LINECACHE_KEPT = 512  # generated sources kept for tracebacks; older ones are forgotten
_registered: collections.deque[str] = collections.deque()


def is_identifier(name: str) -> bool:
    """Whether ``name`` may be written into code as a name (an attribute, a local): an ASCII
    identifier that is not a keyword (``m.from`` is a syntax error, ``m.match`` is not)."""
    return name.isascii() and name.isidentifier() and not keyword.iskeyword(name)


def identifier(text: str, prefix: str = "_") -> str:
    """``text`` made into a valid, non-keyword ASCII identifier (for labels and local names).

    Every character that cannot be in a name becomes ``_``; a leading digit, an empty result
    or a keyword gets ``prefix`` in front. Different texts may mangle alike: use it for
    readability, and make names unique with a counter where that matters.
    """
    name = _NOT_NAME.sub("_", text)
    if not name or name[0].isdigit() or keyword.iskeyword(name) or not is_identifier(name):
        name = prefix + name
    return name


def literal(value: Any) -> str:
    """The Python source text of a plain constant: ``None``, ``bool``, ``int``, finite ``float``,
    ``str``, ``bytes``, and tuples of those. ``ValueError`` for anything else (pass it with
    :meth:`Source.const` instead). Exact types only: a subclass may print as something else."""
    kind = type(value)
    if value is None or kind in _LITERAL_TYPES:
        return repr(value)
    if kind is float:
        if not math.isfinite(value):
            raise ValueError(f"{value!r} has no literal: pass it as a constant")
        return repr(value)
    if kind is tuple:
        items = [literal(item) for item in value]
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    raise ValueError(f"a {kind.__name__} has no literal: pass it as a constant")


class Source:
    """The text of one generated function and the values it refers to.

    ``const(value)`` gives the name under which the code sees ``value`` (one name per object,
    by identity); ``line`` / ``lines`` append statements at an indentation level (four spaces a
    level); :meth:`build` compiles the function named ``name`` through :func:`compile_function`.
    """

    __slots__ = ("_consts", "_names", "label", "text_lines")

    def __init__(self, label: str, constants: Mapping[str, Any] | None = None) -> None:
        self.label = label
        self.text_lines: list[str] = []
        self._consts: dict[str, Any] = dict(constants or {})
        self._names: dict[int, str] = {}

    def const(self, value: Any, prefix: str = "_c") -> str:
        """A name the code may use for ``value``: a literal when it has one, else a bound constant."""
        try:
            return literal(value)
        except ValueError:
            return self.bind(value, prefix)

    def bind(self, value: Any, prefix: str = "_c") -> str:
        """The name of ``value`` among the code's constants (bound once per object, even for literals)."""
        name = self._names.get(id(value))
        if name is None:
            name = self._names[id(value)] = f"{prefix}{len(self._consts)}"
            self._consts[name] = value
        return name

    def define(self, name: str, value: Any) -> str:
        """Bind ``value`` under the chosen ``name`` (a helper the code calls by that name)."""
        if not is_identifier(name):
            raise ValueError(f"{name!r} cannot name a constant of generated code")
        self._consts[name] = value
        return name

    def line(self, text: str, indent: int = 0) -> None:
        self.text_lines.append("    " * indent + text)

    def lines(self, texts: Iterable[str], indent: int = 0) -> None:
        pad = "    " * indent
        self.text_lines.extend(pad + text for text in texts)

    @property
    def constants(self) -> dict[str, Any]:
        return self._consts

    def text(self) -> str:
        return "\n".join(self.text_lines) + "\n"

    def build(self, name: str) -> Callable[..., Any]:
        """Compile the text and return the function it defines under ``name``."""
        return compile_function(self.text(), name, self._consts, self.label)


def compile_function(text: str, name: str, namespace: Mapping[str, Any], label: str) -> Callable[..., Any]:
    """Execute generated ``text`` with ``namespace`` as its globals; the function named ``name``.

    The code object is named ``<seaway-gen N label>`` (``label`` escaped as :func:`ascii` does)
    and its text registered with :mod:`linecache`, so tracebacks and debuggers show the
    generated lines; the text is also the function's ``__doc__``. See :data:`DUMP_ENV` for writing it out.
    """
    # ascii() escapes what a code object's file name may not hold (a NUL in a schema name) or
    # should not (line breaks, non-ASCII that a terminal may mangle)
    filename = f"<seaway-gen {next(_counter)} {ascii(label)[1:-1]}>"
    scope: dict[str, Any] = dict(namespace)
    exec(compile(text, filename, "exec"), scope)  # our own text: only literals and names (see Source)
    _remember(filename, text)
    fn: Callable[..., Any] = scope[name]
    fn.__doc__ = text
    _dump(filename, label, text)
    return fn


def _remember(filename: str, text: str) -> None:
    """Register ``text`` with :mod:`linecache` (bounded: a stream of new shapes never grows it)."""
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    _registered.append(filename)
    while len(_registered) > _LINECACHE_KEPT:
        linecache.cache.pop(_registered.popleft(), None)


def _dump(filename: str, label: str, text: str) -> None:
    target = os.environ.get(DUMP_ENV)
    if not target:
        return
    if target == "-":
        log.debug("generated %s:\n%s", filename, text)
        return
    try:
        folder = Path(target)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{identifier(label)[:80]}-{os.getpid()}-{next(_counter)}.py").write_text(
            f"# {filename}\n{text}", encoding="utf-8")
    except OSError as e:  # debugging aid only: never fail the caller
        log.warning("could not write generated source to %s (%s): %s", target, DUMP_ENV, e)


class ShapeCache(Generic[K, V]):
    """A bounded map from an input shape to what was compiled for it; the oldest entry goes first.

    ``get`` and ``put`` are one or two dict operations each (atomic under the GIL), so task
    threads may share one. ``size`` below 1 is taken as 1.
    """

    __slots__ = ("_data", "size")

    def __init__(self, size: int) -> None:
        self._data: dict[K, V] = {}
        self.size = max(size, 1)

    def get(self, key: K) -> V | None:
        return self._data.get(key)

    def put(self, key: K, value: V) -> V:
        data = self._data
        if key not in data and len(data) >= self.size:
            data.pop(next(iter(data)), None)
        data[key] = value
        return value

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def __len__(self) -> int:
        return len(self._data)

    def clear(self) -> None:
        self._data.clear()
