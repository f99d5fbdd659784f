"""Parsing Avro schemas, their canonical text, normalization and references.

Two schema texts are "the same schema" (same id, no new version) when their *canonical text*
is equal. The canonical text plays the part of Confluent's ``AvroSchema.canonicalString()``
(Avro-Java ``Schema.toString()``): compact JSON re-emitted from the parsed schema with a fixed
key order, so whitespace and key order do not matter, but everything that matters to schema
resolution (docs aside, defaults, aliases, custom properties) is kept. Avro's *Parsing
Canonical Form* is deliberately not used for identity: it drops defaults and aliases, and a
schema that only adds a default must be a new version.

``normalize=True`` (Confluent's ``?normalize=true``) goes further: names are written fully
qualified (no ``namespace`` keys), aliases are qualified and sorted, and custom properties
are sorted, so differently spelled but equivalent schemas collapse. Confluent documents that
normalization output may differ between implementations; ours is deterministic.

References (``{name, subject, version}``): the referenced schemas are parsed first into one
Avro name table, then the referencing schema; its canonical text writes referenced types by
name, never inlined (``format=resolved`` inlines them).

The ``avro`` package parses and validates names/types; defaults are validated here (Avro-Java,
which Confluent uses, rejects a default that does not match its type); ``fastavro`` must accept
the schema too, because the serde encodes with it.
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
import warnings
from collections import OrderedDict
from collections.abc import KeysView, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import avro.constants
import avro.errors
import avro.name
import avro.schema as avs
import fastavro.schema
from seaway.schema_registry.errors import RegistryError, invalid_schema
from seaway.schema_registry.nesting import MAX_JSON_DEPTH, json_depth_exceeds

__all__ = [
    "ARRAY",
    "ENUM",
    "FIXED",
    "MAP",
    "NAMED_KINDS",
    "RECORD",
    "SCHEMA_TYPES",
    "SCHEMA_TYPE_AVRO",
    "SCHEMA_TYPE_JSON",
    "SCHEMA_TYPE_PROTOBUF",
    "UNION",
    "ParsedSchema",
    "SchemaReference",
    "aliases_of",
    "kind",
    "parse_schema",
]

SCHEMA_TYPE_AVRO = "AVRO"
SCHEMA_TYPE_JSON = "JSON"
SCHEMA_TYPE_PROTOBUF = "PROTOBUF"

_NAMED_RESERVED = {"type", "name", "namespace", "doc", "aliases", "fields", "symbols", "size", "default"}
_FIELD_RESERVED = {"name", "type", "doc", "default", "order", "aliases"}
_INT_RANGE = (-(2**31), 2**31 - 1)
_LONG_RANGE = (-(2**63), 2**63 - 1)


UNION, ARRAY, MAP, RECORD, ENUM, FIXED, NAMED, PRIMITIVE = (
    "union", "array", "map", "record", "enum", "fixed", "named", "primitive"
)
NAMED_KINDS = frozenset({RECORD, ENUM, FIXED, NAMED})
_KINDS: dict[type, str] = {}


def kind(s: avs.Schema) -> str:
    """What ``s`` is, decided once per avro class.

    avro's schema classes are ``abc.ABC`` subclasses, so each ``isinstance`` test costs
    ~120 ns; every walk here (emit, defaults, compatibility) made several per node, a few
    milliseconds of a 1,000-field registration. A dict hit per node instead.
    """
    cls = type(s)
    found = _KINDS.get(cls)
    if found is None:
        found = (
            UNION if isinstance(s, avs.UnionSchema)
            else ARRAY if isinstance(s, avs.ArraySchema)
            else MAP if isinstance(s, avs.MapSchema)
            else RECORD if isinstance(s, avs.RecordSchema)
            else ENUM if isinstance(s, avs.EnumSchema)
            else FIXED if isinstance(s, avs.FixedSchema)
            else NAMED if isinstance(s, avs.NamedSchema)
            else PRIMITIVE
        )
        _KINDS[cls] = found
    return found


@dataclass(frozen=True, slots=True)
class SchemaReference:
    """A reference from one schema to a type defined under another subject/version."""

    name: str
    subject: str
    version: int

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "subject": self.subject, "version": self.version}


@dataclass(frozen=True)
class ParsedSchema:
    """A validated schema of any type: its parsed model, canonical text and references.

    ``model`` is what the type's own library made of the text: an ``avro.schema.Schema``
    (``avro_schema``), a :class:`~seaway.schema_registry.json_schema.JsonModel` or a
    :class:`~seaway.schema_registry.protobuf_schema.ProtoModel`. ``canonical`` is the text
    stored and compared for identity (the normalized form when ``normalized``).
    ``dependencies`` are the canonical texts of every referenced schema (transitively), in
    the order they must be parsed; they are needed to re-parse or inline this schema.
    ``forms`` (JSON Schema and Protobuf) are the plain and the normalized canonical texts,
    what :meth:`digest` compares.
    """

    schema_type: str
    model: Any
    canonical: str
    references: tuple[SchemaReference, ...] = ()
    dependencies: tuple[str, ...] = field(default=(), compare=False)
    _referenced: frozenset[str] = field(default=frozenset(), compare=False, repr=False)
    normalized: bool = field(default=False, compare=False)
    forms: tuple[str, str | None] | None = field(default=None, compare=False, repr=False)

    @property
    def avro_schema(self) -> avs.Schema:
        """The avro object of an Avro schema."""
        if self.schema_type != SCHEMA_TYPE_AVRO:
            raise TypeError(f"a {self.schema_type} schema has no Avro form")
        schema: avs.Schema = self.model
        return schema

    @property
    def weight(self) -> int:
        """Characters of text behind this object: what caches bound (see ``cache.py``)."""
        extra = sum(len(f) for f in self.forms if f is not None) if self.forms is not None else 0
        return len(self.canonical) + sum(len(d) for d in self.dependencies) + extra

    @property
    def identity(self) -> tuple[str, str, tuple[SchemaReference, ...]]:
        """What makes two registrations the same schema (and so the same id)."""
        return (self.schema_type, self.canonical, self.references)

    def resolved(self) -> str:
        """The schema with every referenced type inlined at its first use (Avro; others as they are)."""
        if self.schema_type != SCHEMA_TYPE_AVRO:
            return self.canonical
        with _nesting_guard():
            return _dumps(_emit(self.model, None, set(), full_names=False, sort_props=False))

    @property
    def fingerprint(self) -> bytes:
        """:meth:`digest` of the normalized form (what a ``normalize=true`` request compares)."""
        return self.digest(True)

    def digest(self, normalized: bool) -> bytes:
        """A digest that is equal for "the same schema" in the sense of Confluent's ``equivalent``.

        Avro: the *normalized* form, whichever is asked: key order, namespace spelling
        (``name`` + ``namespace`` or a full name), property and alias order do not change it;
        everything that matters to readers (types, names, defaults, docs, aliases, custom
        properties) does. Confluent matches Avro structurally (``Schema.equals``), so a
        re-registration with reordered keys finds its version. JSON Schema and Protobuf compare
        canonical texts (Confluent's ``canonicalString``): the plain one, or the normalized one
        for a ``normalize=true`` request. Computed once per object and form.
        """
        key = "_digest_n" if normalized or self.schema_type == SCHEMA_TYPE_AVRO else "_digest_p"
        cached: bytes | None = self.__dict__.get(key)
        if cached is None:
            if self.schema_type == SCHEMA_TYPE_AVRO:
                text = self.canonical
                if not self.normalized:
                    with _nesting_guard():
                        emitted = _emit(self.model, None, set(self._referenced), full_names=True, sort_props=True)
                    text = _dumps(emitted)
            else:
                assert self.forms is not None
                found = self.forms[1] if normalized else self.forms[0]
                text = found if found is not None else str(self.model.normalized)  # Protobuf: printed late
            cached = hashlib.sha256(f"{self.schema_type}\0{text}".encode()).digest()
            object.__setattr__(self, key, cached)
        return cached


SCHEMA_TYPES = (SCHEMA_TYPE_JSON, SCHEMA_TYPE_PROTOBUF, SCHEMA_TYPE_AVRO)
"""What ``GET /schemas/types`` lists, in Confluent's order."""


def parse_schema(
    text: str,
    *,
    schema_type: str = SCHEMA_TYPE_AVRO,
    references: Sequence[SchemaReference] = (),
    dependencies: Sequence[str] = (),
    named_dependencies: Sequence[tuple[str, str]] | None = None,
    normalize: bool = False,
) -> ParsedSchema:
    """Parse and validate a schema of ``schema_type``; raise ``RegistryError`` 42201 with the parser's message.

    ``dependencies`` are the canonical texts of the referenced schemas in parse order
    (dependencies of dependencies first), as the service resolves them from the store;
    ``named_dependencies`` the same with the name each was referenced by (JSON Schema
    ``$ref`` URIs and Protobuf import paths need them; defaults to unnamed).
    """
    named = list(named_dependencies) if named_dependencies is not None else [("", d) for d in dependencies]
    texts = tuple(d for _, d in named)
    if schema_type == SCHEMA_TYPE_AVRO:
        return _parse_avro(text, references=references, dependencies=texts, normalize=normalize)
    model: Any
    normal: str | None
    if schema_type == SCHEMA_TYPE_JSON:
        from seaway.schema_registry.json_schema import parse_json_schema

        model, plain, normal = parse_json_schema(text, named)
    elif schema_type == SCHEMA_TYPE_PROTOBUF:
        from seaway.schema_registry.protobuf_schema import compile_protobuf

        model, plain = compile_protobuf(text, named)
        normal = model.normalized if normalize else None
    else:
        raise invalid_schema(f"Invalid schema type {schema_type}; supported types are {', '.join(SCHEMA_TYPES)}")
    # A normalized parse *is* its normal form (what is stored), also when compared plainly.
    forms: tuple[str, str | None] = (normal, normal) if normalize and normal is not None else (plain, normal)
    return ParsedSchema(schema_type, model, forms[0], tuple(references), texts, normalized=normalize, forms=forms)


def _parse_avro(
    text: str,
    *,
    references: Sequence[SchemaReference] = (),
    dependencies: Sequence[str] = (),
    normalize: bool = False,
) -> ParsedSchema:
    """Parse and validate an Avro schema text."""
    for source in (text, *dependencies):
        if isinstance(source, str) and json_depth_exceeds(source):
            raise _too_deep()
    try:
        data = _loads(text)
    except (TypeError, ValueError) as exc:
        raise invalid_schema(f"Invalid JSON: {exc}") from exc
    names = _quiet_names()
    fast_named: dict[str, Any] = {}
    referenced: set[str] = set()
    with _nesting_guard():
        try:
            with warnings.catch_warnings():
                # Avro warns (IgnoredLogicalType) about invalid logical types and keeps the
                # property, as Avro-Java does; the warning must not escape (tests run -W error).
                warnings.simplefilter("ignore")
                for dep in dependencies:
                    dep_data = _loads(dep)
                    dep_schema = avs.make_avsc_object(dep_data, names)
                    fastavro.schema.parse_schema(dep_data, named_schemas=fast_named)
                    referenced.update(_defined_names(dep_schema))
                parsed = avs.make_avsc_object(data, names)
                fastavro.schema.parse_schema(data, named_schemas=fast_named)
        except (
            avro.errors.AvroException,
            fastavro.schema.SchemaParseException,
            ValueError,
            TypeError,
            KeyError,
            AttributeError,
        ) as exc:
            raise invalid_schema(_plain(str(exc)) or type(exc).__name__) from exc
        if parsed is None:
            raise invalid_schema("Empty schema")
        _validate_defaults(parsed, set())
        canonical = _dumps(_emit(parsed, None, set(referenced), full_names=normalize, sort_props=normalize))
    return ParsedSchema(
        SCHEMA_TYPE_AVRO, parsed, canonical, tuple(references), tuple(dependencies), frozenset(referenced), normalize
    )


#: Characters of field JSON whose parsed ``avro.schema.Field`` is shared between parses. A
#: subject grown to 1,000 fields needs ~70,000; a field object weighs ~27 bytes a character.
FIELD_BUDGET = 400_000
_PRIMITIVES = frozenset(avro.constants.PRIMITIVE_TYPES)
_FIELD_JSON = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, check_circular=False).encode
# The C encoder behind ``_FIELD_JSON`` called directly: encode()'s two Python frames were a
# third of a field lookup. Same arguments as ``JSONEncoder.iterencode`` passes it.
_C_MAKE_ENCODER: Any = getattr(json.encoder, "c_make_encoder", None)
_FIELD_CHUNKS: Any = (
    None
    if _C_MAKE_ENCODER is None
    else _C_MAKE_ENCODER(None, None, json.encoder.encode_basestring, None, ":", ",", False, False, True)
)


def _field_key(data: object) -> str:
    """A field's compact JSON: what its shared parse is looked up by (``1`` and ``1.0`` differ)."""
    if _FIELD_CHUNKS is None:  # pragma: no cover - CPython has the C encoder
        return _FIELD_JSON(data)
    return "".join(_FIELD_CHUNKS(data, 0))


_FieldKey = tuple[str | None, bool, str]  # (enclosing namespace, validate_names, the field's JSON)


class _SharedFields:
    """Parsed fields by key, least recently used dropped past ``budget`` characters of JSON.

    Its own small LRU rather than ``cache.WeightedLRU``: this module is shared with the
    client side (serde, AvroConverter), which must not import the server's modules. One
    lock per batch of lookups (a record's fields), not per field.
    """

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self._items: OrderedDict[_FieldKey, avs.Field] = OrderedDict()
        self._weight = 0
        self._lock = threading.Lock()

    def get_many(self, keys: Sequence[_FieldKey | None]) -> list[avs.Field | None]:
        out: list[avs.Field | None] = []
        items = self._items
        with self._lock:
            for key in keys:
                hit = items.get(key) if key is not None else None
                if key is not None and hit is not None:
                    items.move_to_end(key)
                out.append(hit)
        return out

    def put(self, key: _FieldKey, value: avs.Field) -> None:
        weight = len(key[2])
        if weight > self.budget:
            return
        with self._lock:
            if key in self._items:
                return
            self._items[key] = value
            self._weight += weight
            while self._weight > self.budget:
                dropped, _ = self._items.popitem(last=False)
                self._weight -= len(dropped[2])

    def __len__(self) -> int:
        return len(self._items)


_FIELDS = _SharedFields(FIELD_BUDGET)


def _context_free(type_: object) -> bool:
    """Whether a field type parses the same whatever names are defined around it.

    Primitives (with or without properties and logical types), and unions, arrays and maps
    of them. Anything that defines or references a named type depends on the name table.
    """
    if isinstance(type_, str):
        return type_ in _PRIMITIVES
    if isinstance(type_, list):
        return all(_context_free(branch) for branch in type_)
    if isinstance(type_, dict):
        kind_ = type_.get("type")
        if not isinstance(kind_, str):
            return False
        if kind_ in _PRIMITIVES:
            return True
        if kind_ == "array":
            return _context_free(type_.get("items"))
        if kind_ == "map":
            return _context_free(type_.get("values"))
    return False


def _shadows_primitive(names: avro.name.Names) -> bool:
    """Whether a named type called like a primitive (``ns.null``) is defined: then ``"null"``
    in a union resolves to it, and no field type is context-free."""
    return any(full.rpartition(".")[2] in _PRIMITIVES for full in names.names)


def _make_field_objects(
    field_data: Sequence[Mapping[str, object]], names: avro.name.Names, validate_names: bool = True
) -> list[avs.Field]:
    """avro 1.12's ``RecordSchema.make_field_objects`` with a set for the duplicate-name check,
    and context-free fields shared between parses.

    avro keeps the names seen so far in a *list*, so a record of n fields costs n²/2 string
    comparisons: 43 ms of a 1,000-field registration, and 3.8 s of CPU for a 1.3 MB body of
    20,000 tiny fields (a few such requests stall the registry). Same fields, same errors,
    same messages; installed once below, for this process's avro (pinned in pyproject.toml).

    A subject grows a field at a time, and every registration re-parsed all of them: avro
    builds ~8 objects and validates ~8 names per ``["null","string"]`` field, 12 ms of a
    1,000-field text (plus its canonical emit and default check, which are memoized on the
    shared object: see ``_emit_field``). A field whose type is context-free (see
    :func:`_context_free`) parses to the same object from the same JSON in the same
    namespace, so it is looked up by its JSON (~1 µs); avro objects are never mutated after
    parsing, so sharing them is safe. Fields that define or name types parse as before.
    """
    field_objects: list[avs.Field] = []
    seen: set[object] = set()
    namespace = names.default_namespace
    keys = [(namespace, validate_names, _field_key(d)) if type(d) is _QuietDict else None for d in field_data]
    shared = _FIELDS.get_many(keys)
    defined = -1
    shadowed = False
    for data, key, new_field in zip(field_data, keys, shared, strict=True):
        if not callable(getattr(data, "get", None)):
            raise avro.errors.SchemaParseException(f"Not a valid field: {data}")
        if key is not None and len(names.names) != defined:  # types were defined: check again
            defined = len(names.names)
            shadowed = _shadows_primitive(names)
        if new_field is None or shadowed:
            new_field = avs.Field(
                data.get("type"),
                data.get("name"),
                "default" in data,
                data.get("default"),
                data.get("order"),
                names,
                data.get("doc"),
                avs.get_other_props(data, avs.FIELD_RESERVED_PROPS),
                validate_names=validate_names,
            )
            if key is not None and not shadowed and _context_free(data.get("type")):
                new_field.__dict__["_seaway_shared"] = {}  # memo of _emit_field / default checks
                _FIELDS.put(key, new_field)
        if new_field.name in seen:
            raise avro.errors.SchemaParseException(f"Field name {new_field.name} already in use.")
        seen.add(new_field.name)
        field_objects.append(new_field)
    return field_objects


avs.RecordSchema.make_field_objects = staticmethod(_make_field_objects)  # type: ignore[method-assign]


def _too_deep() -> RegistryError:
    return invalid_schema(f"the schema nests deeper than {MAX_JSON_DEPTH} levels")


class _nesting_guard:
    """Turn a ``RecursionError`` into 42201.

    Each text is measured before parsing (``nesting.py``), so this only fires for a
    combination the measure cannot see: a chain of references, each within the limit, whose
    types nest into one another. A failed walk is dropped whole, so nothing half-built stays.
    """

    def __enter__(self) -> None:
        return None

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: object) -> None:
        if exc_type is not None and issubclass(exc_type, RecursionError):
            raise _too_deep() from None


class _QuietDict(dict[str, Any]):
    """A JSON object whose ``repr`` stays short.

    avro wraps the failure of each nested level in a message quoting that level's whole JSON
    (``Type property "{...}" not a valid Avro schema: <inner message>``); with plain dicts a
    3.6 MB schema 60 levels deep built a 106 MB message and peaked at 2.3 GB. With this,
    each level adds a line, not a copy of everything below it.
    """

    def __repr__(self) -> str:
        """JSON, as the client wrote it (``{"type": "nope"}``), never Python's ``{'type': 'nope'}``."""
        shown = [f"{json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}" for k in ("type", "name")
                 if isinstance(v := self.get(k), str) and len(v) <= 64]
        if len(self) > len(shown):
            shown.append("...")
        return "{" + ", ".join(shown) + "}"

    __str__ = __repr__


class _QuietKeys(KeysView[str]):
    def __repr__(self) -> str:
        return f"<{len(self)} names>"


class _QuietNameTable(dict[str, Any]):
    """avro's table of defined names, printed as a count (avro quotes it at every array level)."""

    def keys(self) -> _QuietKeys:  # type: ignore[override]
        return _QuietKeys(self)


def _quiet_names() -> avro.name.Names:
    names = avro.name.Names(validate_names=True)
    names.names = _QuietNameTable()
    return names


_PYTHON_TYPES = {str(_QuietDict): "JSON object", str(list): "JSON array", str(int): "number", str(float): "number",
                 str(bool): "boolean", str(type(None)): "null"}


def _plain(message: str) -> str:
    """The parser's message in the schema's own terms: ``one symbol is a JSON object``, not a Python class."""
    for python, json_name in _PYTHON_TYPES.items():
        message = message.replace(python, json_name)
    return message


def _loads(text: str) -> Any:
    return json.loads(text, object_pairs_hook=_QuietDict)


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _defined_names(schema: avs.Schema) -> set[str]:
    """Full names of every named type defined inside ``schema``."""
    found: set[str] = set()

    def walk(s: Any) -> None:  # an avro schema, dispatched by kind()
        k = kind(s)
        if k in NAMED_KINDS:
            if s.fullname in found:
                return
            found.add(s.fullname)
        if k == RECORD:
            for f in s.fields:
                walk(f.type)
        elif k == ARRAY:
            walk(s.items)
        elif k == MAP:
            walk(s.values)
        elif k == UNION:
            for branch in s.schemas:
                walk(branch)

    walk(schema)
    return found


def _qualify(alias: str, namespace: str | None) -> str:
    return alias if "." in alias or not namespace else f"{namespace}.{alias}"


def aliases_of(props: Mapping[str, object]) -> list[str]:
    """The ``aliases`` property as a list of strings (empty when absent or malformed)."""
    raw = props.get("aliases")
    return [str(a) for a in raw] if isinstance(raw, list) else []


def _props(props: Mapping[str, object], reserved: set[str], sort_props: bool) -> list[tuple[str, Any]]:
    items = [(k, v) for k, v in props.items() if k not in reserved]
    return sorted(items) if sort_props else items


def _ref(fullname: str, namespace: str | None, full_names: bool) -> str:
    if full_names or not namespace or not fullname.startswith(namespace + "."):
        return fullname
    short = fullname[len(namespace) + 1 :]
    return fullname if "." in short else short


def _emit(s: Any, ns: str | None, seen: set[str], *, full_names: bool, sort_props: bool) -> Any:
    """Re-emit a parsed schema as JSON data in a fixed key order (see the module docstring).

    ``s`` is an avro schema; walks here dispatch on :func:`kind`, so they take ``Any``.
    """
    k = kind(s)
    if k == UNION:
        return [_emit(b, ns, seen, full_names=full_names, sort_props=sort_props) for b in s.schemas]
    if k == ARRAY:
        out: dict[str, Any] = {
            "type": "array",
            "items": _emit(s.items, ns, seen, full_names=full_names, sort_props=sort_props),
        }
        out.update(_props(s.other_props, {"items"}, sort_props))
        return out
    if k == MAP:
        values = _emit(s.values, ns, seen, full_names=full_names, sort_props=sort_props)
        out = {"type": "map", "values": values}
        out.update(_props(s.other_props, {"values"}, sort_props))
        return out
    if k not in NAMED_KINDS:
        extra = _props(s.other_props, set(), sort_props)
        return dict([("type", s.type), *extra]) if extra else s.type
    if s.fullname in seen:
        return _ref(s.fullname, ns, full_names)
    seen.add(s.fullname)
    own_ns = s.namespace or None
    out = {"type": s.type}
    if full_names:
        out["name"] = s.fullname
    else:
        out["name"] = s.name
        if (own_ns or "") != (ns or ""):
            out["namespace"] = own_ns or ""
    doc = getattr(s, "doc", None)
    if doc is not None:
        out["doc"] = doc
    if k == RECORD:
        out["fields"] = [_emit_field(f, own_ns, seen, full_names, sort_props) for f in s.fields]
    elif k == ENUM:
        out["symbols"] = list(s.symbols)
        if s.props.get("default") is not None:
            out["default"] = s.props["default"]
    elif k == FIXED:
        out["size"] = s.size
    aliases = aliases_of(s.props)
    if aliases:
        out["aliases"] = sorted({_qualify(a, own_ns) for a in aliases}) if sort_props else list(aliases)
    out.update(_props(s.other_props, _NAMED_RESERVED, sort_props))
    return out


def _emit_field(f: avs.Field, ns: str | None, seen: set[str], full_names: bool, sort_props: bool) -> Any:
    """A field as JSON data; for a shared context-free field, emitted once per spelling.

    A context-free field names no type, so neither ``ns`` nor ``seen`` changes its output.
    The memoized data is only ever serialized, never modified.
    """
    memo: dict[object, Any] | None = f.__dict__.get("_seaway_shared")
    if memo is None:
        return _emit_field_now(f, ns, seen, full_names, sort_props)
    spelling = (full_names, sort_props)
    out = memo.get(spelling)
    if out is None:
        out = memo[spelling] = _emit_field_now(f, ns, seen, full_names, sort_props)
    return out


def _emit_field_now(f: avs.Field, ns: str | None, seen: set[str], full_names: bool, sort_props: bool) -> Any:
    out: dict[str, Any] = {
        "name": f.name,
        "type": _emit(f.type, ns, seen, full_names=full_names, sort_props=sort_props),
    }
    if f.doc is not None:
        out["doc"] = f.doc
    if f.has_default:
        out["default"] = f.default
    order = f.props.get("order")
    if order is not None and order != "ascending":
        out["order"] = order
    aliases = aliases_of(f.props)
    if aliases:
        out["aliases"] = sorted(set(aliases)) if sort_props else list(aliases)
    out.update(_props(f.other_props, _FIELD_RESERVED, sort_props))
    return out


def _validate_defaults(s: Any, seen: set[str]) -> None:
    """Reject field defaults that do not match the field type, as Avro-Java does."""
    k = kind(s)
    if k in NAMED_KINDS:
        if s.fullname in seen:
            return
        seen.add(s.fullname)
    if k == RECORD:
        for f in s.fields:
            memo: dict[object, Any] | None = f.__dict__.get("_seaway_shared")
            if memo is not None and "valid" in memo:
                continue  # a shared context-free field, already checked (it has no named types)
            if f.has_default and not _valid_value(f.type, f.default):
                raise invalid_schema(
                    f"Invalid default for field {f.name}: {json.dumps(f.default)} "
                    f"not a {_dumps(f.type.to_json())}"
                )
            _validate_defaults(f.type, seen)
            if memo is not None:
                memo["valid"] = True
    elif k == ARRAY:
        _validate_defaults(s.items, seen)
    elif k == MAP:
        _validate_defaults(s.values, seen)
    elif k == UNION:
        for branch in s.schemas:
            _validate_defaults(branch, seen)


def _valid_value(s: Any, value: Any) -> bool:
    """Whether a JSON default value fits schema ``s`` (Avro spec's JSON encoding of defaults).

    For unions any branch is accepted: the spec asks for the first, but Avro-Java (and so
    Confluent) accepts any, and rejecting what Confluent accepts breaks migrations.
    """
    k = kind(s)
    if k == UNION:
        return any(_valid_value(b, value) for b in s.schemas)
    t = s.type
    if t == "null":
        return value is None
    if t == "boolean":
        return isinstance(value, bool)
    if t in ("int", "long"):
        lo, hi = _INT_RANGE if t == "int" else _LONG_RANGE
        return isinstance(value, int) and not isinstance(value, bool) and lo <= value <= hi
    if t in ("float", "double"):
        if isinstance(value, str):
            return value in ("NaN", "Infinity", "-Infinity")
        return isinstance(value, int | float) and not isinstance(value, bool) and not math.isnan(float(value))
    if t in ("string", "bytes"):
        return isinstance(value, str)
    if k == FIXED:
        return isinstance(value, str) and len(value) == s.size
    if k == ENUM:
        return isinstance(value, str) and value in s.symbols
    if k == ARRAY:
        return isinstance(value, list) and all(_valid_value(s.items, v) for v in value)
    if k == MAP:
        return isinstance(value, dict) and all(_valid_value(s.values, v) for v in value.values())
    if k == RECORD:
        if not isinstance(value, dict):
            return False
        return all(
            _valid_value(f.type, value[f.name]) if f.name in value else f.has_default for f in s.fields
        )
    return True
