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

import json
import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import avro.errors
import avro.name
import avro.schema as avs
import fastavro.schema
from seaway.schema_registry.errors import invalid_schema

__all__ = [
    "SCHEMA_TYPE_AVRO",
    "ParsedSchema",
    "SchemaReference",
    "aliases_of",
    "parse_schema",
]

SCHEMA_TYPE_AVRO = "AVRO"

_NAMED_RESERVED = {"type", "name", "namespace", "doc", "aliases", "fields", "symbols", "size", "default"}
_FIELD_RESERVED = {"name", "type", "doc", "default", "order", "aliases"}
_INT_RANGE = (-(2**31), 2**31 - 1)
_LONG_RANGE = (-(2**63), 2**63 - 1)


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
    """A validated schema: the Avro object, its canonical text and its references.

    ``dependencies`` are the canonical texts of every referenced schema (transitively), in
    the order they must be parsed; they are needed to re-parse or inline this schema.
    """

    schema_type: str
    avro_schema: avs.Schema
    canonical: str
    references: tuple[SchemaReference, ...] = ()
    dependencies: tuple[str, ...] = field(default=(), compare=False)

    @property
    def identity(self) -> tuple[str, str, tuple[SchemaReference, ...]]:
        """What makes two registrations the same schema (and so the same id)."""
        return (self.schema_type, self.canonical, self.references)

    def resolved(self) -> str:
        """The schema with every referenced type inlined at its first use."""
        return _dumps(_emit(self.avro_schema, None, set(), full_names=False, sort_props=False))


def parse_schema(
    text: str,
    *,
    schema_type: str = SCHEMA_TYPE_AVRO,
    references: Sequence[SchemaReference] = (),
    dependencies: Sequence[str] = (),
    normalize: bool = False,
) -> ParsedSchema:
    """Parse and validate ``text``; raise ``RegistryError`` 42201 with the parser's message.

    ``dependencies`` are the canonical texts of the referenced schemas in parse order
    (dependencies of dependencies first), as the service resolves them from the store.
    """
    if schema_type != SCHEMA_TYPE_AVRO:
        raise invalid_schema(f"Invalid schema type {schema_type}; this registry supports AVRO only")
    try:
        data = json.loads(text)
    except (TypeError, ValueError) as exc:
        raise invalid_schema(f"Invalid JSON: {exc}") from exc
    names = avro.name.Names(validate_names=True)
    fast_named: dict[str, Any] = {}
    referenced: set[str] = set()
    try:
        with warnings.catch_warnings():
            # Avro warns (IgnoredLogicalType) about invalid logical types and keeps the
            # property, as Avro-Java does; the warning must not escape (tests run -W error).
            warnings.simplefilter("ignore")
            for dep in dependencies:
                dep_data = json.loads(dep)
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
        raise invalid_schema(str(exc) or type(exc).__name__) from exc
    if parsed is None:
        raise invalid_schema("Empty schema")
    _validate_defaults(parsed, set())
    canonical = _dumps(_emit(parsed, None, set(referenced), full_names=normalize, sort_props=normalize))
    return ParsedSchema(SCHEMA_TYPE_AVRO, parsed, canonical, tuple(references), tuple(dependencies))


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _defined_names(schema: avs.Schema) -> set[str]:
    """Full names of every named type defined inside ``schema``."""
    found: set[str] = set()

    def walk(s: avs.Schema) -> None:
        if isinstance(s, avs.NamedSchema):
            if s.fullname in found:
                return
            found.add(s.fullname)
        if isinstance(s, avs.RecordSchema):
            for f in s.fields:
                walk(f.type)
        elif isinstance(s, avs.ArraySchema):
            walk(s.items)
        elif isinstance(s, avs.MapSchema):
            walk(s.values)
        elif isinstance(s, avs.UnionSchema):
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


def _emit(s: avs.Schema, ns: str | None, seen: set[str], *, full_names: bool, sort_props: bool) -> Any:
    """Re-emit a parsed schema as JSON data in a fixed key order (see the module docstring)."""
    if isinstance(s, avs.UnionSchema):
        return [_emit(b, ns, seen, full_names=full_names, sort_props=sort_props) for b in s.schemas]
    if isinstance(s, avs.ArraySchema):
        out: dict[str, Any] = {
            "type": "array",
            "items": _emit(s.items, ns, seen, full_names=full_names, sort_props=sort_props),
        }
        out.update(_props(s.other_props, {"items"}, sort_props))
        return out
    if isinstance(s, avs.MapSchema):
        values = _emit(s.values, ns, seen, full_names=full_names, sort_props=sort_props)
        out = {"type": "map", "values": values}
        out.update(_props(s.other_props, {"values"}, sort_props))
        return out
    if not isinstance(s, avs.NamedSchema):
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
    if isinstance(s, avs.RecordSchema):
        out["fields"] = [_emit_field(f, own_ns, seen, full_names, sort_props) for f in s.fields]
    elif isinstance(s, avs.EnumSchema):
        out["symbols"] = list(s.symbols)
        if s.props.get("default") is not None:
            out["default"] = s.props["default"]
    elif isinstance(s, avs.FixedSchema):
        out["size"] = s.size
    aliases = aliases_of(s.props)
    if aliases:
        out["aliases"] = sorted({_qualify(a, own_ns) for a in aliases}) if sort_props else list(aliases)
    out.update(_props(s.other_props, _NAMED_RESERVED, sort_props))
    return out


def _emit_field(f: avs.Field, ns: str | None, seen: set[str], full_names: bool, sort_props: bool) -> Any:
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


def _validate_defaults(s: avs.Schema, seen: set[str]) -> None:
    """Reject field defaults that do not match the field type, as Avro-Java does."""
    if isinstance(s, avs.NamedSchema):
        if s.fullname in seen:
            return
        seen.add(s.fullname)
    if isinstance(s, avs.RecordSchema):
        for f in s.fields:
            if f.has_default and not _valid_value(f.type, f.default):
                raise invalid_schema(
                    f"Invalid default for field {f.name}: {json.dumps(f.default)} "
                    f"not a {_dumps(f.type.to_json())}"
                )
            _validate_defaults(f.type, seen)
    elif isinstance(s, avs.ArraySchema):
        _validate_defaults(s.items, seen)
    elif isinstance(s, avs.MapSchema):
        _validate_defaults(s.values, seen)
    elif isinstance(s, avs.UnionSchema):
        for branch in s.schemas:
            _validate_defaults(branch, seen)


def _valid_value(s: avs.Schema, value: Any) -> bool:
    """Whether a JSON default value fits schema ``s`` (Avro spec's JSON encoding of defaults).

    For unions any branch is accepted: the spec asks for the first, but Avro-Java (and so
    Confluent) accepts any, and rejecting what Confluent accepts breaks migrations.
    """
    t = s.type
    if isinstance(s, avs.UnionSchema):
        return any(_valid_value(b, value) for b in s.schemas)
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
    if isinstance(s, avs.FixedSchema):
        return isinstance(value, str) and len(value) == s.size
    if isinstance(s, avs.EnumSchema):
        return isinstance(value, str) and value in s.symbols
    if isinstance(s, avs.ArraySchema):
        return isinstance(value, list) and all(_valid_value(s.items, v) for v in value)
    if isinstance(s, avs.MapSchema):
        return isinstance(value, dict) and all(_valid_value(s.values, v) for v in value.values())
    if isinstance(s, avs.RecordSchema):
        if not isinstance(value, dict):
            return False
        return all(
            _valid_value(f.type, value[f.name]) if f.name in value else f.has_default for f in s.fields
        )
    return True
