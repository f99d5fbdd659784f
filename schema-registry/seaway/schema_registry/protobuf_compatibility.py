"""Protobuf compatibility, with Confluent's rules and wording (``protobuf.diff`` in its registry).

As for JSON Schema, a check lists typed differences from an *original* (the writer) to an
*update* (the reader); those outside :data:`COMPATIBLE_CHANGES` are incompatible. It walks the
compiled descriptors (``FileDescriptorProto``), seeing them as Confluent's text model does:
map fields are ``map<K, V>``, not their entry messages; a field's label is the one written
(proto3 fields have none unless ``repeated`` or ``optional``; oneof members have none).

The rules (Confluent's, after the Protobuf guide's "updating a message type"):

* Fields are matched **by number**. Adding or removing a field is compatible (old readers
  skip unknown fields; new readers see the default), renaming one too (the name is not on the
  wire); adding or removing a *required* field is not.
* A field's type may only change within a wire-compatible group: ``int32``/``int64``/
  ``uint32``/``uint64``/``bool`` and enums; ``sint32``/``sint64``; ``string``/``bytes``;
  ``fixed32``/``sfixed32``; ``fixed64``/``sfixed64``; ``float``; ``double``. Other changes
  are ``FIELD_SCALAR_KIND_CHANGED``; scalar <-> message <-> map is ``FIELD_KIND_CHANGED``.
  A message-typed field must keep its type's name (without the package:
  ``FIELD_NAMED_TYPE_CHANGED``), and that type is compared in turn.
* ``optional`` <-> ``repeated`` on a numeric field is incompatible (packed encoding), on
  ``string``/``bytes`` compatible.
* Messages and enums may be added, enum constants added, removed or renamed; moving a
  message (its index in the file) is compatible, because every frame names its message by
  index *in its own writer schema*. Removing a message is incompatible, as is changing the
  package.
* Fields are compared by number across the whole message, whatever oneof holds them.
  Oneofs may be added, removed (when none of their fields survives), renamed, and gain new
  fields; a field may leave a oneof for the top level. A oneof member removed altogether is
  incompatible, as is any update oneof gathering existing fields that were independent
  before (several top-level fields, or fields of different oneofs): new mutual exclusivity.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from google.protobuf import descriptor_pb2

__all__ = ["COMPATIBLE_CHANGES", "Kind", "ProtoDifference", "compare"]

_FIELD = descriptor_pb2.FieldDescriptorProto


class Kind(StrEnum):
    """Confluent's ``Difference.Type`` values for Protobuf."""

    PACKAGE_CHANGED = "PACKAGE_CHANGED"
    MESSAGE_ADDED = "MESSAGE_ADDED"
    MESSAGE_REMOVED = "MESSAGE_REMOVED"
    MESSAGE_MOVED = "MESSAGE_MOVED"
    ENUM_ADDED = "ENUM_ADDED"
    ENUM_REMOVED = "ENUM_REMOVED"
    ENUM_CONST_ADDED = "ENUM_CONST_ADDED"
    ENUM_CONST_CHANGED = "ENUM_CONST_CHANGED"
    ENUM_CONST_REMOVED = "ENUM_CONST_REMOVED"
    FIELD_ADDED = "FIELD_ADDED"
    FIELD_REMOVED = "FIELD_REMOVED"
    FIELD_NAME_CHANGED = "FIELD_NAME_CHANGED"
    FIELD_KIND_CHANGED = "FIELD_KIND_CHANGED"
    FIELD_SCALAR_KIND_CHANGED = "FIELD_SCALAR_KIND_CHANGED"
    FIELD_NAMED_TYPE_CHANGED = "FIELD_NAMED_TYPE_CHANGED"
    FIELD_NUMERIC_LABEL_CHANGED = "FIELD_NUMERIC_LABEL_CHANGED"
    FIELD_STRING_OR_BYTES_LABEL_CHANGED = "FIELD_STRING_OR_BYTES_LABEL_CHANGED"
    REQUIRED_FIELD_ADDED = "REQUIRED_FIELD_ADDED"
    REQUIRED_FIELD_REMOVED = "REQUIRED_FIELD_REMOVED"
    ONEOF_ADDED = "ONEOF_ADDED"
    ONEOF_REMOVED = "ONEOF_REMOVED"
    ONEOF_FIELD_ADDED = "ONEOF_FIELD_ADDED"
    ONEOF_FIELD_REMOVED = "ONEOF_FIELD_REMOVED"
    ONEOF_FIELD_MOVED_TO_TOP_LEVEL = "ONEOF_FIELD_MOVED_TO_TOP_LEVEL"
    MULTIPLE_FIELDS_MOVED_TO_ONEOF = "MULTIPLE_FIELDS_MOVED_TO_ONEOF"
    FIELD_MOVED_TO_EXISTING_ONEOF = "FIELD_MOVED_TO_EXISTING_ONEOF"


K = Kind
COMPATIBLE_CHANGES = frozenset({
    K.MESSAGE_ADDED, K.MESSAGE_MOVED, K.ENUM_ADDED, K.ENUM_REMOVED, K.ENUM_CONST_ADDED, K.ENUM_CONST_CHANGED,
    K.ENUM_CONST_REMOVED, K.FIELD_ADDED, K.FIELD_REMOVED, K.FIELD_NAME_CHANGED, K.FIELD_STRING_OR_BYTES_LABEL_CHANGED,
    K.ONEOF_ADDED, K.ONEOF_REMOVED, K.ONEOF_FIELD_ADDED, K.ONEOF_FIELD_MOVED_TO_TOP_LEVEL,
})
"""Confluent's ``SchemaDiff.COMPATIBLE_CHANGES`` for Protobuf."""


@dataclass(frozen=True, slots=True)
class ProtoDifference:
    kind: Kind
    path: str

    @property
    def compatible(self) -> bool:
        return self.kind in COMPATIBLE_CHANGES

    @property
    def location(self) -> str:
        return self.path

    def describe(self, reader_label: str, writer_label: str) -> str:
        """Confluent's wording, with the reader's and the writer's labels."""
        r, w, p = reader_label, writer_label, self.path
        texts = {
            K.PACKAGE_CHANGED: f"The package at '{p}' in the {r} schema does not match the package in the {w} schema",
            K.MESSAGE_REMOVED: f"The {r} schema is missing a MESSAGE type at path '{p}' in the {w} schema",
            K.FIELD_KIND_CHANGED: f"The type of a field at path '{p}' in the {r} schema does not match the {w} schema",
            K.FIELD_SCALAR_KIND_CHANGED: (f"The kind of a SCALAR field at path '{p}' in the {r} schema does not "
                                          f"match its kind in the {w} schema"),
            K.FIELD_NAMED_TYPE_CHANGED: (f"The type of a MESSAGE field at path '{p}' in the {r} schema does not "
                                         f"match its type in the {w} schema"),
            K.FIELD_NUMERIC_LABEL_CHANGED: (f"The label for a NUMERIC field at path '{p}' in the {r} schema does not "
                                            f"match its label in the {w} schema"),
            K.REQUIRED_FIELD_ADDED: f"A required field  at path '{p}' in the {r} schema is missing in the {w} schema",
            K.REQUIRED_FIELD_REMOVED: f"The {r} schema is missing a required field at path: '{p}' in the {w} schema",
            K.ONEOF_FIELD_REMOVED: f"The {r} schema is missing a oneof field at path '{p}' in the {w} schema",
            K.MULTIPLE_FIELDS_MOVED_TO_ONEOF: (f"Multiple fields in the oneof at path '{p}' in the {r} schema are "
                                               f"outside a oneof in the {w} schema"),
            K.FIELD_MOVED_TO_EXISTING_ONEOF: (f"A field in the oneof at path '{p}' in the {r} schema is outside an "
                                              f"existing oneof in the {w} schema"),
        }
        return f'{{errorType:"{self.kind.value}", description:"{texts.get(self.kind, "")}"}}'


# -- the schemas' types, by full name ------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class _Type:
    kind: str  # "message" or "enum"
    proto: Any  # DescriptorProto / EnumDescriptorProto
    package: str
    map_entry: bool


class _Types:
    """Every message and enum of a schema and its imports, by full name (``.pkg.Outer.Inner``)."""

    def __init__(self, files: Sequence[bytes]) -> None:
        self.types: dict[str, _Type] = {}
        for serialized in files:
            fdp = descriptor_pb2.FileDescriptorProto()
            fdp.ParseFromString(serialized)
            prefix = f".{fdp.package}" if fdp.package else ""
            self._add(fdp.message_type, fdp.enum_type, prefix, fdp.package)

    def _add(self, messages: Any, enums: Any, prefix: str, package: str) -> None:
        for message in messages:
            name = f"{prefix}.{message.name}"
            self.types[name] = _Type("message", message, package, message.options.map_entry)
            self._add(message.nested_type, message.enum_type, name, package)
        for enum in enums:
            self.types[f"{prefix}.{enum.name}"] = _Type("enum", enum, package, False)


class _Context:
    def __init__(self, original: _Types, update: _Types, syntax: tuple[str, str],
                 stack: set[tuple[str, str]] | None = None, path: list[str] | None = None) -> None:
        self.original, self.update, self.syntax = original, update, syntax
        self.stack = stack if stack is not None else set()
        self.path = list(path or [])
        self.diffs: list[ProtoDifference] = []

    def sub(self) -> _Context:
        return _Context(self.original, self.update, self.syntax, self.stack, self.path)

    def add(self, kind: Kind) -> None:
        self.diffs.append(ProtoDifference(kind, "#/" + "/".join(self.path)))

    @property
    def compatible(self) -> bool:
        return all(d.compatible for d in self.diffs)

    def enter(self, name: str) -> _Enter:
        return _Enter(self, name)


class _Enter:
    def __init__(self, ctx: _Context, name: str) -> None:
        self.ctx, self.name = ctx, name

    def __enter__(self) -> None:
        self.ctx.path.append(self.name)

    def __exit__(self, *_: object) -> None:
        self.ctx.path.pop()


def compare(original: Any, update: Any) -> list[ProtoDifference]:
    """Every difference from ``original`` (the writer's ``ProtoModel``) to ``update`` (the reader's)."""
    a, b = original.root, update.root
    ctx = _Context(_Types(original.files), _Types(update.files), (a.syntax or "proto2", b.syntax or "proto2"))
    if a.package != b.package:
        ctx.add(K.PACKAGE_CHANGED)
    prefix_a = f".{a.package}" if a.package else ""
    prefix_b = f".{b.package}" if b.package else ""
    _types(ctx, list(a.message_type), list(b.message_type), list(a.enum_type), list(b.enum_type),
           prefix_a, prefix_b)
    return ctx.diffs


def _union(a: Sequence[Any], b: Sequence[Any]) -> Iterator[Any]:
    seen = set()
    for item in (*a, *b):
        if item not in seen:
            seen.add(item)
            yield item


def _types(ctx: _Context, a_msgs: list[Any], b_msgs: list[Any], a_enums: list[Any], b_enums: list[Any],
           prefix_a: str, prefix_b: str) -> None:
    a_named = [m for m in a_msgs if not m.options.map_entry]
    b_named = [m for m in b_msgs if not m.options.map_entry]
    a_index = {m.name: i for i, m in enumerate(a_named)}
    b_index = {m.name: i for i, m in enumerate(b_named)}
    for name in _union(list(a_index), list(b_index)):
        with ctx.enter(name):
            if name not in b_index:
                ctx.add(K.MESSAGE_REMOVED)
            elif name not in a_index:
                ctx.add(K.MESSAGE_ADDED)
            else:
                _message(ctx, a_named[a_index[name]], b_named[b_index[name]],
                         f"{prefix_a}.{name}", f"{prefix_b}.{name}")
                if a_index[name] != b_index[name]:
                    ctx.add(K.MESSAGE_MOVED)
    a_enum = {e.name: e for e in a_enums}
    b_enum = {e.name: e for e in b_enums}
    for name in _union(list(a_enum), list(b_enum)):
        with ctx.enter(name):
            if name not in b_enum:
                ctx.add(K.ENUM_REMOVED)
            elif name not in a_enum:
                ctx.add(K.ENUM_ADDED)
            else:
                _enum(ctx, a_enum[name], b_enum[name])


def _enum(ctx: _Context, a: Any, b: Any) -> None:
    a_by = {v.number: v.name for v in a.value}
    b_by = {v.number: v.name for v in b.value}
    for number in _union(list(a_by), list(b_by)):
        with ctx.enter(str(number)):
            if number not in b_by:
                ctx.add(K.ENUM_CONST_REMOVED)
            elif number not in a_by:
                ctx.add(K.ENUM_CONST_ADDED)
            elif a_by[number] != b_by[number]:
                ctx.add(K.ENUM_CONST_CHANGED)


def _oneof_of(message: Any, f: Any) -> str | None:
    """The name of the real (non-synthetic) oneof holding ``f``, if any."""
    if not f.HasField("oneof_index") or f.proto3_optional:
        return None
    return str(message.oneof_decl[f.oneof_index].name)


def _message(ctx: _Context, a: Any, b: Any, full_a: str, full_b: str) -> None:
    key = (full_a, full_b)
    if key not in ctx.stack:
        ctx.stack.add(key)
        try:
            _message_body(ctx, a, b)
        finally:
            ctx.stack.discard(key)
    _types(ctx, list(a.nested_type), list(b.nested_type), list(a.enum_type), list(b.enum_type), full_a, full_b)


def _message_body(ctx: _Context, a: Any, b: Any) -> None:
    """Confluent's newest ``MessageSchemaDiff``: fields compared by number across the whole
    message, whatever oneof holds them, so a renamed, merged or dissolved oneof hides nothing."""
    a_all = {f.number: f for f in a.field}
    b_all = {f.number: f for f in b.field}
    a_member = {f.number: n for f in a.field if (n := _oneof_of(a, f)) is not None}
    b_member = {f.number: n for f in b.field if (n := _oneof_of(b, f)) is not None}
    a_oneofs: dict[str, list[Any]] = {}
    for f in a.field:
        if f.number in a_member:
            a_oneofs.setdefault(a_member[f.number], []).append(f)
    b_oneofs: dict[str, list[Any]] = {}
    for f in b.field:
        if f.number in b_member:
            b_oneofs.setdefault(b_member[f.number], []).append(f)
    # A oneof removed by name none of whose members survive anywhere is a compatible deletion.
    deleted = {name for name, members in a_oneofs.items()
               if name not in b_oneofs and not any(f.number in b_all for f in members)}
    # Newly introduced mutual exclusivity: an update oneof whose existing members came from
    # more than one original group (a oneof, or a top-level field each).
    for name, members in b_oneofs.items():
        with ctx.enter(name):
            groups: set[str] = set()
            moved_in = 0
            for f in members:
                if f.number in a_member:
                    groups.add("oneof:" + a_member[f.number])
                elif f.number in a_all:
                    groups.add(f"field:{f.number}")
                    moved_in += 1
            if len(groups) > 1:
                ctx.add(K.MULTIPLE_FIELDS_MOVED_TO_ONEOF if moved_in > 1 else K.FIELD_MOVED_TO_EXISTING_ONEOF)
    for name in sorted(set(a_oneofs) | set(b_oneofs)):
        with ctx.enter(name):
            if name not in b_oneofs:
                ctx.add(K.ONEOF_REMOVED)
            elif name not in a_oneofs:
                ctx.add(K.ONEOF_ADDED)
    for number in sorted(set(a_all) | set(b_all)):
        fa, fb = a_all.get(number), b_all.get(number)
        in_a, in_b = a_member.get(number), b_member.get(number)
        if fb is None:
            assert fa is not None
            if in_a is not None:
                if in_a not in deleted:
                    with ctx.enter(in_a), ctx.enter(str(number)):
                        ctx.add(K.ONEOF_FIELD_REMOVED)
            else:
                with ctx.enter(str(number)):
                    ctx.add(K.REQUIRED_FIELD_REMOVED if _label(a, fa, ctx.syntax[0]) == "required"
                            else K.FIELD_REMOVED)
        elif fa is None:
            if in_b is not None:
                with ctx.enter(in_b), ctx.enter(str(number)):
                    ctx.add(K.ONEOF_FIELD_ADDED)
            else:
                with ctx.enter(str(number)):
                    ctx.add(K.REQUIRED_FIELD_ADDED if _label(b, fb, ctx.syntax[1]) == "required"
                            else K.FIELD_ADDED)
        else:
            if in_a is not None and in_b is None:
                with ctx.enter(str(number)):
                    ctx.add(K.ONEOF_FIELD_MOVED_TO_TOP_LEVEL)
            if in_b is not None:
                with ctx.enter(in_b), ctx.enter(str(number)):
                    _field(ctx, a, b, fa, fb)
            else:
                with ctx.enter(str(number)):
                    _field(ctx, a, b, fa, fb)


def _label(message: Any, f: Any, syntax: str) -> str | None:
    """The label as written in the source (``None`` when implicit), what Confluent compares."""
    if _oneof_of(message, f) is not None or _is_map(message, f):
        return None
    if f.label == _FIELD.LABEL_REPEATED:
        return "repeated"
    if syntax == "proto3":
        return "optional" if f.proto3_optional else None
    if syntax == "editions":
        return None
    return "required" if f.label == _FIELD.LABEL_REQUIRED else "optional"


def _is_map(message: Any, f: Any) -> bool:
    if f.type != _FIELD.TYPE_MESSAGE or f.label != _FIELD.LABEL_REPEATED:
        return False
    entry = f.type_name.rsplit(".", 1)[-1]
    return any(n.name == entry and n.options.map_entry for n in message.nested_type)


def _field(ctx: _Context, ma: Any, mb: Any, a: Any, b: Any) -> None:
    if a.name != b.name:
        ctx.add(K.FIELD_NAME_CHANGED)
    _labels_and_types(ctx, _label(ma, a, ctx.syntax[0]), _label(mb, b, ctx.syntax[1]),
                      _field_type(ctx.original, a), _field_type(ctx.update, b))


_GROUPS = {
    _FIELD.TYPE_INT32: "GENERAL_NUMBER", _FIELD.TYPE_INT64: "GENERAL_NUMBER", _FIELD.TYPE_UINT32: "GENERAL_NUMBER",
    _FIELD.TYPE_UINT64: "GENERAL_NUMBER", _FIELD.TYPE_BOOL: "GENERAL_NUMBER", _FIELD.TYPE_ENUM: "GENERAL_NUMBER",
    _FIELD.TYPE_SINT32: "SIGNED_NUMBER", _FIELD.TYPE_SINT64: "SIGNED_NUMBER",
    _FIELD.TYPE_STRING: "STRING_OR_BYTES", _FIELD.TYPE_BYTES: "STRING_OR_BYTES",
    _FIELD.TYPE_FIXED32: "FIXED32", _FIELD.TYPE_SFIXED32: "FIXED32",
    _FIELD.TYPE_FIXED64: "FIXED64", _FIELD.TYPE_SFIXED64: "FIXED64",
    _FIELD.TYPE_FLOAT: "FLOAT", _FIELD.TYPE_DOUBLE: "DOUBLE",
}

# A field's type as the diff sees it: ("scalar", group) | ("message", full name) | ("map", key, value)
_FieldType = tuple[Any, ...]


def _field_type(types: _Types, f: Any) -> _FieldType:
    if f.type in (_FIELD.TYPE_MESSAGE, _FIELD.TYPE_GROUP):
        found = types.types.get(f.type_name)
        if found is not None and found.map_entry:
            entry = found.proto
            key = next(x for x in entry.field if x.number == 1)
            value = next(x for x in entry.field if x.number == 2)
            return ("map", _field_type(types, key), _field_type(types, value))
        return ("message", f.type_name)
    return ("scalar", _GROUPS[f.type])


def _labels_and_types(ctx: _Context, label_a: str | None, label_b: str | None, a: _FieldType, b: _FieldType) -> None:
    if a[0] != b[0]:
        ctx.add(K.FIELD_KIND_CHANGED)
    elif a[0] == "scalar":
        if a[1] != b[1]:
            ctx.add(K.FIELD_SCALAR_KIND_CHANGED)
        elif label_a is not None and label_b is not None and label_a != label_b:
            ctx.add(K.FIELD_STRING_OR_BYTES_LABEL_CHANGED if a[1] == "STRING_OR_BYTES"
                    else K.FIELD_NUMERIC_LABEL_CHANGED)
    elif a[0] == "message":
        _message_types(ctx, a[1], b[1])
    else:
        _labels_and_types(ctx, None, None, a[1], b[1])
        _labels_and_types(ctx, None, None, a[2], b[2])


def _local(full: str, package: str) -> str:
    prefix = f".{package}." if package else "."
    return full[len(prefix):] if full.startswith(prefix) else full.lstrip(".")


def _message_types(ctx: _Context, full_a: str, full_b: str) -> None:
    ta, tb = ctx.original.types.get(full_a), ctx.update.types.get(full_b)
    if ta is None or tb is None or ta.kind != "message" or tb.kind != "message":
        if full_a != full_b:
            ctx.add(K.FIELD_NAMED_TYPE_CHANGED)
        return
    if _local(full_a, ta.package) != _local(full_b, tb.package):
        ctx.add(K.FIELD_NAMED_TYPE_CHANGED)
        return
    sub = ctx.sub()
    sub.path = _local(full_a, ta.package).split(".")  # Confluent reports inside the type, by its name
    _message(sub, ta.proto, tb.proto, full_a, full_b)
    ctx.diffs += sub.diffs
    if not sub.compatible:
        ctx.add(K.FIELD_NAMED_TYPE_CHANGED)
