"""Protobuf schemas: compiled by protoc, printed back as canonical ``.proto`` text.

Parsing is protoc's, never a grammar of ours: grpcio-tools bundles protoc as a Python
extension (``grpc_tools._protoc_compiler``). A schema text, and every file it imports through
its references (``{name, subject, version}``: ``name`` is the import path), are written to a
private temporary directory and compiled there; protoc's own messages (file, line, column)
become the 42201 answer. Imports of the well-known types (``google/protobuf/*.proto``), of
``google/type/*.proto`` and of Confluent's ``confluent/meta.proto`` /
``confluent/type/decimal.proto`` need no reference, as in Confluent's registry.

A schema may also be given as a base64 ``FileDescriptorProto``: what confluent-kafka's
``ProtobufSerializer`` registers. It is printed as ``.proto`` text and compiled like any text.

**Canonical text** (what is stored, what identity compares): the compiled descriptor printed
back in declaration order, comments and formatting dropped, type names fully qualified
(``.pkg.Msg``), default ``json_name`` omitted. So two spellings of one schema (whitespace,
comments, relative or absolute type names, text or descriptor) are one schema, like
Confluent's Wire-printed ``canonicalString``. **Normalized** (``normalize=true``): also
imports sorted, options sorted by name, fields in field-number order (oneof members too).
Message and enum declaration order is kept in both: the wire format's message indexes
point into it.

``format=serialized`` answers the root ``FileDescriptorProto`` in base64, as Confluent does.
"""

from __future__ import annotations

import atexit
import base64
import binascii
import codecs
import contextlib
import importlib
import os
import re
import shutil
import tempfile
import threading
import warnings
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory, text_encoding, text_format
from google.protobuf.message import DecodeError
from seaway.schema_registry.errors import invalid_schema

__all__ = [
    "KNOWN_DEPENDENCIES",
    "SCHEMA_TYPE_PROTOBUF",
    "ProtoModel",
    "compile_protobuf",
    "message_indexes",
]

SCHEMA_TYPE_PROTOBUF = "PROTOBUF"
_FDP = descriptor_pb2.FileDescriptorProto
_FIELD = descriptor_pb2.FieldDescriptorProto
_MAX_FILES = 256
_BASE64 = re.compile(r"^[A-Za-z0-9+/=\s]+$")
_SAFE_NAME = re.compile(r"^[A-Za-z0-9_.\-/]+$")

_SCALARS = {
    _FIELD.TYPE_DOUBLE: "double", _FIELD.TYPE_FLOAT: "float", _FIELD.TYPE_INT64: "int64",
    _FIELD.TYPE_UINT64: "uint64", _FIELD.TYPE_INT32: "int32", _FIELD.TYPE_FIXED64: "fixed64",
    _FIELD.TYPE_FIXED32: "fixed32", _FIELD.TYPE_BOOL: "bool", _FIELD.TYPE_STRING: "string",
    _FIELD.TYPE_BYTES: "bytes", _FIELD.TYPE_UINT32: "uint32", _FIELD.TYPE_SFIXED32: "sfixed32",
    _FIELD.TYPE_SFIXED64: "sfixed64", _FIELD.TYPE_SINT32: "sint32", _FIELD.TYPE_SINT64: "sint64",
}


# -- the well-known files, importable without a reference -------------------------------------

def _known_sources() -> dict[str, Path]:
    """Import path -> file for every file a schema may import without a reference."""
    import grpc_tools

    found: dict[str, Path] = {}
    wkt = Path(grpc_tools.__file__).parent / "_proto"
    for path in sorted((wkt / "google" / "protobuf").glob("*.proto")):
        found[f"google/protobuf/{path.name}"] = path
    with contextlib.suppress(ImportError):  # googleapis-common-protos: google/type/*.proto
        gtype = importlib.import_module("google.type")
        for root in gtype.__path__:
            for path in sorted(Path(root).glob("*.proto")):
                found[f"google/type/{path.name}"] = path
    ours = Path(__file__).parent / "protos"
    for path in sorted(ours.rglob("*.proto")):
        found[path.relative_to(ours).as_posix()] = path
    return found


_KNOWN = _known_sources()
KNOWN_DEPENDENCIES = frozenset(_KNOWN)
"""Import paths every schema may use without a reference (Confluent's known dependencies)."""

_include_dir: str | None = None
_include_lock = threading.Lock()
_protoc_lock = threading.Lock()


_work: str | None = None


def _scratch_parent() -> str | None:
    """Where the work directory goes: a memory file system (``/dev/shm``) when there is one.

    protoc reads only from disk (grpc_tools offers no in-memory source tree), so each compilation
    writes its files and removes them. On a disk file system creating, writing and unlinking the
    one file of a schema cost ~0.1 ms under load (the journal), a sixth of a registration; on
    tmpfs it is ~0.01 ms. Only the work directory goes there, empty between compilations, so a
    process killed before its exit handler leaves an empty directory in memory, not the known
    files (~250 KB, read from the page cache anyway). ``None``: the system's temporary directory.
    """
    shm = "/dev/shm"
    if os.path.isdir(shm) and os.access(shm, os.W_OK | os.X_OK):
        return shm
    return None


def _work_dir() -> str:
    """The directory compilations write their files to (under the protoc lock, emptied after each).

    One for the process: creating and removing a temporary directory per compilation cost
    1.5 ms (``rmdir``), half of a Protobuf registration.
    """
    global _work
    if _work is None:
        _work = tempfile.mkdtemp(prefix="seaway-proto-work-", dir=_scratch_parent())
        atexit.register(shutil.rmtree, _work, True)
    return _work


def _known_include() -> str:
    """A private directory holding only the known files (so nothing else on disk is importable)."""
    global _include_dir
    with _include_lock:
        if _include_dir is None:
            target = tempfile.mkdtemp(prefix="seaway-protos-")
            for name, source in _KNOWN.items():
                dest = Path(target, name)
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source, dest)
            atexit.register(shutil.rmtree, target, True)
            _include_dir = target
        return _include_dir


# -- compiling -----------------------------------------------------------------------------------

def _check_name(name: str) -> None:
    parts = name.split("/")
    if (not name or len(name) > 512 or not _SAFE_NAME.match(name) or name.startswith("/")
            or any(p in ("", ".", "..") for p in parts)):
        raise invalid_schema(f"Invalid reference name {name!r}: a relative import path such as 'com/acme/order.proto'")


_MARK = b"AddSerializedFile(b'"
_known_descriptors: dict[str, bytes] = {}


def _serialized_files(code: bytes) -> bytes | None:
    """The ``FileDescriptorProto`` protoc embedded in one generated ``_pb2`` module.

    Only the bytes literal is decoded: parsing the whole module (``ast.parse``) cost 16 ms
    for ``descriptor.proto`` alone, per compilation of any schema importing it. Its escapes
    are undone by ``codecs.escape_decode``, the function that decodes a bytes literal's
    escapes for the compiler (``ast.literal_eval`` of the literal alone cost 8 µs more).
    """
    start = code.find(_MARK)
    if start < 0:
        return None
    i = start + len(_MARK)
    end = i
    while True:
        end = code.index(b"'", end)
        backslashes = 0
        while code[end - 1 - backslashes] == 0x5C:  # an escaped quote is preceded by an odd count
            backslashes += 1
        if backslashes % 2 == 0:
            break
        end += 1
    return codecs.escape_decode(code[i:end])[0]


def _write(path: str, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)


def _protoc(root_name: str, files: Mapping[str, str], shift: int = 0) -> list[bytes]:
    """Compile ``root_name`` among ``files`` (import path -> text); descriptors, root last.

    ``shift``: lines added before the root's own text (left out of error positions).
    """
    from grpc_tools import _protoc_compiler

    global _runs
    with _protoc_lock:
        _runs += 1
        work = _work_dir()
        written: list[str] = []
        try:
            for name, text in files.items():  # os calls, not pathlib: a third of this function's own time
                path = os.path.join(work, name)
                if "/" in name:
                    os.makedirs(os.path.dirname(path), exist_ok=True)
                _write(path, text.encode("utf-8"))
                written.append(path)
            includes = [work.encode(), _known_include().encode()]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # protoc's warnings (unused imports) are not errors
                generated = _protoc_compiler.get_protos(root_name.encode(), includes)
        except _protoc_compiler.ProtocErrors as exc:
            raise invalid_schema(_protoc_message(exc.errors(), root_name, shift)) from None
        finally:
            for path in written:  # nothing of one compilation is visible to the next
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(path)
    out = []
    for module, code in generated:
        name = module.decode()[: -len("_pb2.py")] + ".proto"
        serialized = _known_descriptors.get(name) if name in _KNOWN and name not in files else None
        if serialized is None:
            serialized = _serialized_files(code)
            if serialized is not None and name in _KNOWN and name not in files:
                _known_descriptors[name] = serialized
        if serialized is None:  # pragma: no cover - protoc's Python generator always embeds it
            raise invalid_schema("protoc produced no descriptor")
        out.append(serialized)
    return out


def _protoc_message(errors: Iterable[Any], root_name: str, shift: int) -> str:
    parts = []
    for err in errors:
        name = err.filename.decode(errors="replace") if isinstance(err.filename, bytes) else str(err.filename)
        text = err.message.decode(errors="replace") if isinstance(err.message, bytes) else str(err.message)
        where, line = ("schema", int(err.line) - shift) if name == root_name else (name, int(err.line))
        parts.append(f"{where}:{line + 1}:{int(err.column) + 1}: {text}" if line >= 0 else f"{where}: {text}")
    return "Could not parse Protobuf: " + ("; ".join(parts) or "protoc failed")


def _decode_descriptor(text: str) -> descriptor_pb2.FileDescriptorProto | None:
    """A base64 ``FileDescriptorProto`` (confluent-kafka's format), or ``None`` if ``text`` is not one."""
    if not _BASE64.match(text) or "syntax" in text:
        return None
    try:
        raw = base64.b64decode("".join(text.split()), validate=True)
        fdp = _FDP()
        fdp.ParseFromString(raw)
    except (binascii.Error, ValueError, DecodeError):
        return None
    return fdp if fdp.message_type or fdp.enum_type or fdp.package or fdp.syntax else None


@dataclass(frozen=True, eq=False)
class ProtoModel:
    """A compiled schema: the root descriptor and every file it needs, in dependency order."""

    root: descriptor_pb2.FileDescriptorProto
    files: tuple[bytes, ...]  # serialized FileDescriptorProtos, dependencies first, the root last
    _pool_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @cached_property
    def pool(self) -> descriptor_pool.DescriptorPool:
        """A private descriptor pool holding this schema and its imports."""
        with self._pool_lock:
            pool = descriptor_pool.DescriptorPool()
            for serialized in self.files:
                pool.AddSerializedFile(serialized)
            return pool

    @cached_property
    def normalized(self) -> str:
        """The normalized canonical text (printed when first asked: most registrations never do)."""
        return _Printer(self.pool, normalize=True).file(self.root)

    @cached_property
    def serialized(self) -> str:
        """``format=serialized``: the root ``FileDescriptorProto`` in base64."""
        return base64.standard_b64encode(self.root.SerializeToString()).decode("ascii")

    @property
    def package(self) -> str:
        return str(self.root.package)

    def first_message(self) -> str | None:
        """Confluent's ``ProtobufSchema.name()``: the full name of the first message."""
        if not self.root.message_type:
            return None
        name = self.root.message_type[0].name
        return f"{self.package}.{name}" if self.package else str(name)

    def message(self, indexes: Sequence[int]) -> Any:
        """The message descriptor at ``indexes`` (Confluent's message-index path)."""
        file = self.pool.FindFileByName(self.root.name)
        if not indexes:
            raise invalid_schema("empty message index")
        types = list(file.message_types_by_name.values())
        try:
            found = types[indexes[0]]
            for index in indexes[1:]:
                found = found.nested_types[index]
        except IndexError:
            raise invalid_schema(f"no message at index {list(indexes)} in the schema") from None
        return found


def message_indexes(descriptor: Any) -> list[int]:
    """Confluent's message-index path of a message descriptor within its file."""
    path: list[int] = []
    current = descriptor
    while current.containing_type is not None:
        parent = current.containing_type
        path.append(list(parent.nested_types).index(current))
        current = parent
    path.append(list(current.file.message_types_by_name.values()).index(current))
    path.reverse()
    return path


#: About how many bytes of memory cached compilations may hold (see :func:`_weight`): ~350 schemas
#: of a dozen fields.
COMPILED_BUDGET = 8_000_000
#: Bytes a compiled model holds per byte of its serialized descriptors: its descriptor pool and
#: Python objects (measured: ~22 KB for a 12-field message of 361 descriptor bytes).
_POOL_BYTES_PER_DESCRIPTOR_BYTE = 64
_CompileKey = tuple[str, tuple[tuple[str, str], ...]]


class _CompiledCache:
    """Compilations by ``(text, references)``, least recently used out past :data:`COMPILED_BUDGET`.

    A model is immutable once made (its pool and normalized text are computed once, under a
    lock), so one can serve every caller. Not ``cache.WeightedLRU``: this module is the
    serdes' and converters' too, which never import the registry server's modules.
    """

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self._items: OrderedDict[_CompileKey, tuple[ProtoModel, str, int]] = OrderedDict()
        self._weight = 0
        self._lock = threading.Lock()

    def get(self, key: _CompileKey) -> tuple[ProtoModel, str] | None:
        with self._lock:
            hit = self._items.get(key)
            if hit is None:
                return None
            self._items.move_to_end(key)
            return hit[0], hit[1]

    def put(self, key: _CompileKey, model: ProtoModel, canonical: str, weight: int | None = None) -> None:
        """Keep a compilation; ``weight``: :func:`_weight` of it, when the caller has it already."""
        if weight is None:
            weight = _weight(key, model, canonical)
        if weight > self.budget:
            return
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._weight -= old[2]
            self._items[key] = (model, canonical, weight)
            self._weight += weight
            while self._weight > self.budget:
                _, (_, _, dropped) = self._items.popitem(last=False)
                self._weight -= dropped

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._weight = 0


def _weight(key: _CompileKey, model: ProtoModel, canonical: str) -> int:
    """About the bytes one entry keeps alive: its texts, and the model (a model cached under two
    keys counts twice: an overestimate that keeps the bound safe)."""
    texts = len(key[0]) + sum(len(n) + len(t) for n, t in key[1]) + len(canonical)
    return texts + _POOL_BYTES_PER_DESCRIPTOR_BYTE * sum(len(f) for f in model.files)


_compiled = _CompiledCache(COMPILED_BUDGET)
_runs = 0


def protoc_runs() -> int:
    """How many times this process has run protoc (what the compilation cache saves, for tests)."""
    return _runs


def compile_protobuf(
    text: str, references: Sequence[tuple[str, str]] = (),
) -> tuple[ProtoModel, str]:
    """Compile a schema; returns its model and canonical text (``model.normalized``: the normalized one).

    ``references``: ``(import path, schema text)`` of every referenced file, transitively.
    Raises :class:`RegistryError` 42201 with protoc's messages.

    Cached by ``(text, references)``, and by ``(canonical text, references)``: the canonical
    text compiles to the same schema (what is stored is what was compiled), so a
    re-registration under another subject, a stored schema parsed again and a lookup never
    run protoc twice for one schema. Failures are not cached.
    """
    key: _CompileKey = (text, tuple((name, ref_text) for name, ref_text in references))
    found = _compiled.get(key)
    if found is not None:
        return found
    model, canonical = _compile(text, references)
    weight = _weight(key, model, canonical)
    _compiled.put(key, model, canonical, weight)
    if canonical != text:
        _compiled.put((canonical, key[1]), model, canonical, weight)
    return model, canonical


def _compile(text: str, references: Sequence[tuple[str, str]]) -> tuple[ProtoModel, str]:
    files: dict[str, str] = {}
    for name, ref_text in references:
        _check_name(name)
        ref_fdp = _decode_descriptor(ref_text)
        body = ref_text if ref_fdp is None else _print_raw(ref_fdp, name)
        if files.get(name, body) != body:
            raise invalid_schema(f"Reference name {name!r} stands for two different schemas")
        files[name] = body
    if len(files) > _MAX_FILES:
        raise invalid_schema(f"more than {_MAX_FILES} referenced files")
    root_name = "schema.proto"
    while root_name in files:
        root_name = "_" + root_name
    given = _decode_descriptor(text)
    files[root_name] = _with_syntax(text) if given is None else _descriptor_text(given, root_name, files)
    shift = 1 if given is None and files[root_name] is not text else 0
    compiled = _protoc(root_name, files, shift)
    root = _FDP()
    root.ParseFromString(compiled[-1])
    model = ProtoModel(root, tuple(compiled))
    try:
        pool = model.pool
    except (TypeError, ValueError) as exc:  # a descriptor the runtime refuses (protoc accepted it)
        raise invalid_schema(f"Invalid Protobuf schema: {exc}") from None
    return model, _Printer(pool, normalize=False).file(root)


_PROTO2_LINE = 'syntax = "proto2";\n'
_SYNTAX = re.compile(r"^\s*(syntax|edition)\s*=", re.MULTILINE)


def _with_syntax(text: str) -> str:
    """``text``, with ``syntax = "proto2";`` made explicit when it names none (protoc's default).

    Same meaning; protoc would otherwise log a warning to the process's stderr on every
    compilation. On a line of its own, which error positions then leave out.
    """
    if _SYNTAX.search(text):
        return text
    return _PROTO2_LINE + text


def _descriptor_text(fdp: descriptor_pb2.FileDescriptorProto, root_name: str, files: dict[str, str]) -> str:
    """A decoded root descriptor as text, its custom options read through its imports' descriptors.

    The imports are compiled first (through a stub file importing each of them), so options
    such as ``(confluent.field_meta)``, unknown fields to the plain descriptor classes, print.
    """
    stub_name = "_" + root_name
    stub = 'syntax = "proto3";\n' + "".join(f"import {_quote(dep)};\n" for dep in fdp.dependency)
    pool = descriptor_pool.DescriptorPool()
    for serialized in _protoc(stub_name, {**files, stub_name: stub})[:-1]:
        pool.AddSerializedFile(serialized)
    fdp.name = root_name
    try:
        pool.AddSerializedFile(fdp.SerializeToString())
        return _Printer(pool, normalize=False).file(fdp)
    except (TypeError, ValueError, KeyError, IndexError) as exc:
        raise invalid_schema(f"Invalid Protobuf descriptor: {exc}") from None


def _print_raw(fdp: descriptor_pb2.FileDescriptorProto, name: str) -> str:
    """A decoded descriptor as text, before it is compiled (its imports are not loaded yet)."""
    try:
        return _Printer(None, normalize=False).file(fdp)
    except (KeyError, IndexError, ValueError) as exc:
        raise invalid_schema(f"Invalid Protobuf descriptor {name}: {exc}") from None


# -- printing ------------------------------------------------------------------------------------

def _quote(value: str | bytes) -> str:
    escaped: str = text_encoding.CEscape(value, as_utf8=not isinstance(value, bytes))
    return '"' + escaped + '"'


def _camel(name: str) -> str:
    """protoc's default ``json_name``."""
    out, upper = [], False
    for ch in name:
        if ch == "_":
            upper = True
        elif upper:
            out.append(ch.upper())
            upper = False
        else:
            out.append(ch)
    return "".join(out)


class _Printer:
    """A ``FileDescriptorProto`` as ``.proto`` text (see the module docstring for the forms)."""

    def __init__(self, pool: descriptor_pool.DescriptorPool | None, *, normalize: bool) -> None:
        self.pool = pool
        self.normalize = normalize
        self._classes: dict[str, Any] = {}
        self.editions = False
        self.proto3 = False

    # options ---------------------------------------------------------------------------------

    def _option_items(self, options: Any) -> list[tuple[str, str]]:
        """``(name, value text)`` pairs of an options message, custom options included."""
        if options is None or not options.ByteSize():
            return []
        message = options
        if self.pool is not None:
            full = options.DESCRIPTOR.full_name
            cls = self._classes.get(full)
            if cls is None:
                try:
                    cls = message_factory.GetMessageClass(self.pool.FindMessageTypeByName(full))
                except KeyError:
                    cls = type(options)
                self._classes[full] = cls
            message = cls()
            message.ParseFromString(options.SerializeToString())
        items: list[tuple[str, str]] = []
        for fd, value in message.ListFields():
            if fd.name == "map_entry" and not fd.is_extension:
                continue
            name = f"({fd.full_name})" if fd.is_extension else fd.name
            values = value if fd.is_repeated else [value]
            items.extend((name, self._option_value(fd, v)) for v in values)
        if self.normalize:
            items.sort()
        return items

    @staticmethod
    def _option_value(fd: Any, value: Any) -> str:
        if fd.message_type is not None:
            return "{ " + str(text_format.MessageToString(value, as_one_line=True)) + " }"
        if fd.enum_type is not None:
            found = fd.enum_type.values_by_number.get(value)
            return str(found.name) if found is not None else str(value)
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, str | bytes):
            return _quote(value)
        if isinstance(value, float):
            return "inf" if value == float("inf") else "-inf" if value == float("-inf") else \
                "nan" if value != value else repr(value)
        return str(value)

    def _statements(self, options: Any, indent: str) -> list[str]:
        return [f"{indent}option {name} = {value};" for name, value in self._option_items(options)]

    # names -----------------------------------------------------------------------------------

    @staticmethod
    def _type_name(name: str) -> str:
        return name if name.startswith(".") else "." + name

    # file ------------------------------------------------------------------------------------

    def file(self, fdp: descriptor_pb2.FileDescriptorProto) -> str:
        syntax = fdp.syntax or "proto2"
        self.editions = syntax == "editions"
        self.proto3 = syntax == "proto3"
        lines: list[str] = []
        if self.editions:
            edition = descriptor_pb2.Edition.Name(fdp.edition).removeprefix("EDITION_")
            lines.append(f'edition = "{edition}";')
        else:
            lines.append(f'syntax = "{syntax}";')
        if fdp.package:
            lines.append(f"package {fdp.package};")
        public, weak = set(fdp.public_dependency), set(fdp.weak_dependency)
        imports = [(("public " if i in public else "weak " if i in weak else "") + _quote(dep))
                   for i, dep in enumerate(fdp.dependency)]
        if self.normalize:
            imports.sort()
        lines += [f"import {i};" for i in imports]
        lines += self._statements(fdp.options if fdp.HasField("options") else None, "")
        for message in fdp.message_type:
            lines += self._message(message, "")
        for enum in fdp.enum_type:
            lines += self._enum(enum, "")
        lines += self._extensions(fdp.extension, "")
        for service in fdp.service:
            lines += self._service(service)
        return "\n".join(lines) + "\n"

    # messages --------------------------------------------------------------------------------

    def _message(self, msg: descriptor_pb2.DescriptorProto, indent: str, keyword: str = "message") -> list[str]:
        inner = indent + "  "
        lines = [f"{indent}{keyword} {msg.name} {{"] if keyword == "message" else []
        lines += self._statements(msg.options if msg.HasField("options") else None, inner)
        entries = {f"{nested.name}": nested for nested in msg.nested_type if nested.options.map_entry}
        groups = {f.type_name.rsplit(".", 1)[-1] for f in msg.field if f.type == _FIELD.TYPE_GROUP}
        synthetic = {f.oneof_index for f in msg.field if f.proto3_optional and f.HasField("oneof_index")}
        fields = list(msg.field)
        if self.normalize:
            fields.sort(key=lambda f: f.number)
        printed_oneofs: set[int] = set()
        for f in fields:
            if f.HasField("oneof_index") and f.oneof_index not in synthetic:
                if f.oneof_index in printed_oneofs:
                    continue
                printed_oneofs.add(f.oneof_index)
                oneof = msg.oneof_decl[f.oneof_index]
                lines.append(f"{inner}oneof {oneof.name} {{")
                lines += self._statements(oneof.options if oneof.HasField("options") else None, inner + "  ")
                members = [m for m in fields if m.HasField("oneof_index") and m.oneof_index == f.oneof_index]
                for member in members:
                    lines += self._field(member, msg, entries, inner + "  ", in_oneof=True)
                lines.append(f"{inner}}}")
            else:
                lines += self._field(f, msg, entries, inner, in_oneof=False)
        for nested in msg.nested_type:
            if nested.name not in entries and nested.name not in groups:
                lines += self._message(nested, inner)
        for enum in msg.enum_type:
            lines += self._enum(enum, inner)
        lines += self._extensions(msg.extension, inner)
        for ext_range in msg.extension_range:
            end = "max" if ext_range.end >= 536870912 else str(ext_range.end - 1)
            span = str(ext_range.start) if end == str(ext_range.start) else f"{ext_range.start} to {end}"
            opts = self._option_items(ext_range.options if ext_range.HasField("options") else None)
            suffix = " [" + ", ".join(f"{n} = {v}" for n, v in opts) + "]" if opts else ""
            lines.append(f"{inner}extensions {span}{suffix};")
        lines += self._reserved(msg.reserved_range, msg.reserved_name, inner, 536870912)
        if keyword == "message":
            lines.append(f"{indent}}}")
        return lines

    def _reserved(self, ranges: Iterable[Any], names: Iterable[str], indent: str, top: int) -> list[str]:
        lines = []
        spans = []
        for r in ranges:  # message ranges end exclusive, enum ranges inclusive: callers pass top accordingly
            end = r.end - 1 if top == 536870912 else r.end
            last = "max" if end >= top - 1 else str(end)
            spans.append(str(r.start) if last == str(r.start) else f"{r.start} to {last}")
        if spans:
            lines.append(f"{indent}reserved {', '.join(spans)};")
        names = sorted(names) if self.normalize else list(names)
        if names:
            shown = names if self.editions else [_quote(n) for n in names]
            lines.append(f"{indent}reserved {', '.join(shown)};")
        return lines

    def _label(self, f: descriptor_pb2.FieldDescriptorProto, in_oneof: bool) -> str:
        if in_oneof:
            return ""
        if f.label == _FIELD.LABEL_REPEATED:
            return "repeated "
        if self.editions:
            return ""
        if f.label == _FIELD.LABEL_REQUIRED:
            return "required "
        if self.proto3:
            return "optional " if f.proto3_optional else ""
        return "optional "

    def _field_type(self, f: descriptor_pb2.FieldDescriptorProto) -> str:
        if f.type in _SCALARS:
            return _SCALARS[f.type]
        return self._type_name(f.type_name)

    def _field_suffix(self, f: descriptor_pb2.FieldDescriptorProto) -> str:
        """`` [default = ..., (opt) = ..., json_name = ...]``, or ``""`` for a field with none of them."""
        options = self._option_items(f.options if f.HasField("options") else None)
        if f.HasField("default_value"):
            options.insert(0, ("default", self._default(f)))
        if f.HasField("json_name") and f.json_name != _camel(f.name):
            options.append(("json_name", _quote(f.json_name)))
        if self.normalize:
            options.sort()
        return " [" + ", ".join(f"{n} = {v}" for n, v in options) + "]" if options else ""

    def _field(self, f: descriptor_pb2.FieldDescriptorProto, msg: descriptor_pb2.DescriptorProto,
               entries: Mapping[str, descriptor_pb2.DescriptorProto], indent: str, *, in_oneof: bool) -> list[str]:
        has = f.HasField  # most fields have no options, default or json_name: three C calls decide it
        suffix = self._field_suffix(f) if has("options") or has("default_value") or has("json_name") else ""
        kind = f.type
        if kind in _SCALARS:  # the common case: no map entry, no group
            return [f"{indent}{self._label(f, in_oneof)}{_SCALARS[kind]} {f.name} = {f.number}{suffix};"]
        entry_name = f.type_name.rsplit(".", 1)[-1]
        if kind == _FIELD.TYPE_MESSAGE and f.label == _FIELD.LABEL_REPEATED and entry_name in entries \
                and f.type_name.endswith(f".{msg.name}.{entry_name}"):
            entry = entries[entry_name]
            key = next(x for x in entry.field if x.number == 1)
            value = next(x for x in entry.field if x.number == 2)
            return [f"{indent}map<{self._field_type(key)}, {self._field_type(value)}> {f.name} = {f.number}{suffix};"]
        if f.type == _FIELD.TYPE_GROUP:
            group = next(n for n in msg.nested_type if n.name == entry_name)
            head = f"{indent}{self._label(f, in_oneof)}group {group.name} = {f.number}{suffix} {{"
            return [head, *self._message(group, indent, keyword="group"), f"{indent}}}"]
        return [f"{indent}{self._label(f, in_oneof)}{self._field_type(f)} {f.name} = {f.number}{suffix};"]

    def _default(self, f: descriptor_pb2.FieldDescriptorProto) -> str:
        value = f.default_value
        if f.type == _FIELD.TYPE_STRING:
            return _quote(value)
        if f.type == _FIELD.TYPE_BYTES:
            return f'"{value}"'  # already C-escaped in the descriptor
        return str(value)

    def _extensions(self, extensions: Sequence[descriptor_pb2.FieldDescriptorProto], indent: str) -> list[str]:
        lines: list[str] = []
        by_extendee: dict[str, list[descriptor_pb2.FieldDescriptorProto]] = {}
        for ext in extensions:
            by_extendee.setdefault(ext.extendee, []).append(ext)
        for extendee, fields in by_extendee.items():
            lines.append(f"{indent}extend {self._type_name(extendee)} {{")
            for f in sorted(fields, key=lambda x: x.number) if self.normalize else fields:
                lines += self._field(f, descriptor_pb2.DescriptorProto(), {}, indent + "  ", in_oneof=False)
            lines.append(f"{indent}}}")
        return lines

    # enums and services ------------------------------------------------------------------------

    def _enum(self, enum: descriptor_pb2.EnumDescriptorProto, indent: str) -> list[str]:
        inner = indent + "  "
        lines = [f"{indent}enum {enum.name} {{"]
        lines += self._statements(enum.options if enum.HasField("options") else None, inner)
        for value in enum.value:
            opts = self._option_items(value.options if value.HasField("options") else None)
            suffix = " [" + ", ".join(f"{n} = {v}" for n, v in opts) + "]" if opts else ""
            lines.append(f"{inner}{value.name} = {value.number}{suffix};")
        lines += self._reserved(enum.reserved_range, enum.reserved_name, inner, 2**31)
        lines.append(f"{indent}}}")
        return lines

    def _service(self, service: descriptor_pb2.ServiceDescriptorProto) -> list[str]:
        lines = [f"service {service.name} {{"]
        lines += self._statements(service.options if service.HasField("options") else None, "  ")
        for method in service.method:
            args = ("stream " if method.client_streaming else "") + self._type_name(method.input_type)
            result = ("stream " if method.server_streaming else "") + self._type_name(method.output_type)
            body = self._statements(method.options if method.HasField("options") else None, "    ")
            if body:
                lines += [f"  rpc {method.name}({args}) returns ({result}) {{", *body, "  }"]
            else:
                lines.append(f"  rpc {method.name}({args}) returns ({result});")
        lines.append("}")
        return lines
