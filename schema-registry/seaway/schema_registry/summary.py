"""Record summaries: proving two versions compatible without parsing them.

A transitive level checks a new schema against *every* live version of a subject. Parsing a
thousand stored versions of a grown record for each registration (avro objects, ~27 bytes
per character of text) costs seconds and, cached, gigabytes. Most of that work is
redundant: versions of one subject share most of their fields, and a field whose type is
spelled identically on both sides is compatible with itself. A :class:`RecordSummary` keeps,
per top-level field, only its name, aliases, whether it has a default and its type's JSON
text; built from the canonical text with ``json`` (C speed), and its fields shared between
versions (interned), so a thousand versions cost pointers, not copies.

:func:`proves_compatible` answers *True* only when the summaries alone prove a reader can read
a writer (same record name, every reader field either found with an identically spelled,
self-contained type, or defaulted). Anything else, including any incompatibility, answers
*False*, and the caller runs the full checker (``compatibility.py``) on parsed schemas, which
also words the messages. A type is self-contained when it names no other type: a reference
such as ``"com.example.Address"`` may mean different definitions in two versions, so its text
proves nothing. The enclosing namespace is part of the key, so equal keys are equal types.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from typing import Any

__all__ = ["FieldSummary", "RecordSummary", "extends", "proves_compatible", "summarize"]

_PRIMITIVES = frozenset({"null", "boolean", "int", "long", "float", "double", "bytes", "string"})
_ENCODE = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
_MAX_INTERNED = 1_000_000


@dataclass(frozen=True, slots=True)
class FieldSummary:
    name: str
    aliases: tuple[str, ...]
    has_default: bool
    type_key: str | None  # namespace + type JSON when the type is self-contained, else None


@dataclass(frozen=True)
class RecordSummary:
    """A record's name and fields, kept as tuples of shared objects (8 bytes a field).

    A proof is a few C-level set operations between the new schema's fields, made a set once
    (:meth:`sets`), and an old version's tuples, so a thousand versions of a thousand fields
    are proven in milliseconds without keeping a hash table per version.
    """

    name: str  # unqualified, as Avro matches record names
    fullname: str
    aliases: frozenset[str]  # qualified with the record's namespace
    keyed: tuple[FieldSummary, ...]  # fields whose type is self-contained
    names: tuple[str, ...]  # every field name
    required: frozenset[str]  # names of fields without a default
    field_aliases: frozenset[str]  # every alias of every field

    @property
    def weight(self) -> int:
        return len(self.names) + 1

    def sets(self) -> tuple[frozenset[FieldSummary], frozenset[str]]:
        """``keyed`` and ``names`` as sets, made once (for the side every proof compares with)."""
        made: tuple[frozenset[FieldSummary], frozenset[str]] | None = self.__dict__.get("_sets")
        if made is None:
            made = (frozenset(self.keyed), frozenset(self.names))
            object.__setattr__(self, "_sets", made)
        return made


_fields: dict[tuple[str, tuple[str, ...], bool, str | None], FieldSummary] = {}


def _intern(name: str, aliases: tuple[str, ...], has_default: bool, key: str | None) -> FieldSummary:
    """The one shared :class:`FieldSummary` for these values (looked up by a plain tuple: C hashing)."""
    found = _fields.get((name, aliases, has_default, key))
    if found is None:
        if len(_fields) >= _MAX_INTERNED:
            _fields.clear()  # only sharing is lost; summaries already built keep their fields
        found = _fields[(name, aliases, has_default, key)] = FieldSummary(name, aliases, has_default, key)
    return found


def _self_contained(schema: Any) -> bool:
    """Whether a JSON type names no other type (conservative: unknown shapes are not)."""
    if isinstance(schema, str):
        return schema in _PRIMITIVES
    if isinstance(schema, list):
        return all(_self_contained(branch) for branch in schema)
    if not isinstance(schema, dict):
        return False
    kind = schema.get("type")
    if kind in _PRIMITIVES or kind in ("enum", "fixed"):
        return True
    if kind == "array":
        return _self_contained(schema.get("items"))
    if kind == "map":
        return _self_contained(schema.get("values"))
    if kind in ("record", "error"):
        fields = schema.get("fields")
        return isinstance(fields, list) and all(isinstance(f, dict) and _self_contained(f.get("type")) for f in fields)
    return False


def _type_text(schema: Any) -> str:
    """The compact JSON of a self-contained type; primitives and unions of them without the encoder."""
    if isinstance(schema, str):
        return f'"{schema}"'  # a primitive name: nothing to escape
    if isinstance(schema, list) and all(isinstance(branch, str) for branch in schema):
        return "[" + ",".join(f'"{branch}"' for branch in schema) + "]"
    return _ENCODE(schema)


def _strings(value: Any) -> tuple[str, ...]:
    return tuple(v for v in value if isinstance(v, str)) if isinstance(value, list) else ()


def summarize(text: str) -> RecordSummary | None:
    """The summary of a record schema's canonical text; ``None`` for anything else."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or data.get("type") != "record" or not isinstance(data.get("name"), str):
        return None
    fields = data.get("fields")
    if not isinstance(fields, list):
        return None
    fullname: str = data["name"]
    if "." in fullname:
        namespace, name = fullname.rsplit(".", 1)
    else:
        namespace, name = str(data.get("namespace") or ""), fullname
        fullname = f"{namespace}.{name}" if namespace else name
    aliases = frozenset(a if "." in a or not namespace else f"{namespace}.{a}" for a in _strings(data.get("aliases")))
    keyed: list[FieldSummary] = []
    required: set[str] = set()
    field_aliases: set[str] = set()
    for f in fields:
        if not isinstance(f, dict) or not isinstance(f.get("name"), str):
            return None
        field_type = f.get("type")
        key = None
        if _self_contained(field_type):
            key = sys.intern(namespace + "\0" + _type_text(field_type))
        field = _intern(f["name"], _strings(f.get("aliases")), "default" in f, key)
        if key is not None:
            keyed.append(field)
        if not field.has_default:
            required.add(field.name)
        field_aliases.update(field.aliases)
    names = tuple(sys.intern(f["name"]) for f in fields)
    return RecordSummary(name, fullname, aliases, tuple(keyed), names, frozenset(required), frozenset(field_aliases))


def proves_compatible(reader: RecordSummary, writer: RecordSummary, *, new: RecordSummary) -> bool:
    """True only if ``reader`` surely reads data written with ``writer`` (see the module doc).

    ``new`` is whichever of the two is the schema being checked: its sets are built once and
    the other side's tuples are streamed through them.
    """
    if reader.name != writer.name and writer.fullname not in reader.aliases:
        return False
    other = writer if new is reader else reader
    new_keyed, new_names = new.sets()
    # A reader field the writer has identically (same name, same self-contained type) reads
    # itself. Every other reader field must be absent from the writer, by name and by alias
    # (one the writer has in another spelling needs the checker), and have a default.
    shared = new_names.intersection(other.names)
    if len(shared) != len(new_keyed.intersection(other.keyed)):
        return False  # some field both have is not spelled identically (or names a type)
    if not reader.required <= shared:
        return False  # a field the writer lacks has no default
    writer_names = new_names if writer is new else writer.names
    return reader.field_aliases.isdisjoint(writer_names)


def extends(older: RecordSummary, newer: RecordSummary) -> bool:
    """Whether ``newer`` keeps every field of ``older`` identically (the way subjects grow).

    Then a proof about ``newer`` carries over to ``older`` (see :func:`proves_carried`), so a
    transitive check walks a subject's history without redoing the set work per version.
    ``older`` must have only self-contained fields and the same record name and aliases.
    """
    return (
        older.fullname == newer.fullname
        and older.name == newer.name
        and older.aliases == newer.aliases
        and len(older.keyed) == len(older.names)
        and not set(older.keyed).difference(newer.keyed)  # transient: stored summaries keep no sets
    )


def proves_carried(new: RecordSummary, older: RecordSummary, *, backward: bool) -> bool:
    """A proof for ``older``, given one between ``new`` and a version that :func:`extends` it.

    Every field ``older`` shares with ``new`` is one the newer version shares identically, so
    the shared fields stay identical; ``older``'s required fields and aliases are the newer
    version's. What remains is the reader's required fields when ``new`` reads ``older``
    (BACKWARD): each must exist in ``older``.
    """
    return not backward or all(name in older.names for name in new.required)

