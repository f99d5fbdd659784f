"""JSON Schema compatibility, with Confluent's rules and wording (``json.diff`` in its registry).

A check compares an *original* schema (the writer: what data was written with) with an
*update* (the reader) and lists typed differences; those outside :data:`COMPATIBLE_CHANGES`
make the pair incompatible. BACKWARD compares old -> new, FORWARD new -> old (the levels
and transitivity are in ``compatibility.py``).

Both documents are first read into the model Confluent's diff walks (the Everit loader's):
``true``/``{}`` is an empty schema, ``false`` a false schema; ``type`` picks an object,
array, string, number (``integer`` is a number requiring integers), boolean or null schema,
a list of types is an ``anyOf`` of them; without ``type`` the keywords present decide
(``properties`` -> object, ``items`` -> array, ``minLength`` -> string, ``minimum`` -> number);
``enum``, ``const``, ``not`` and each of ``allOf``/``anyOf``/``oneOf`` are schemas of their
own, and several of these in one object are an ``allOf`` of them. ``$ref`` is transparent.

The rules, in short (Confluent's names; the full list is :class:`Kind`):

* **Content models.** An object is *open* when it has neither ``additionalProperties: false``
  nor a schema for additional or pattern properties. Removing a property is compatible only
  from an open update (``PROPERTY_REMOVED_FROM_OPEN_CONTENT_MODEL``), or when the update's
  additional/pattern schema covers it; adding one is compatible only to a closed (or
  partially open, and covered) original, and then a *required* added property needs a
  default. An open original takes new properties only with an empty schema.
* **Narrowing** is incompatible: a type changed (``TYPE_CHANGED``) or narrowed (``number`` ->
  ``integer``), limits tightened (``maxLength`` decreased, ``minimum`` increased or added,
  ``pattern`` added or changed), ``enum`` values removed, a required property added without a
  default, ``additionalProperties`` removed or narrowed, ``uniqueItems`` added. Widening is
  compatible (``integer`` -> ``number``, ``T`` -> ``[T, null]``, ``enum`` extended, limits
  relaxed or removed).
* **Combined types**: ``allOf``/``oneOf`` -> ``anyOf`` is compatible, the reverse is not;
  subschemas are matched pairwise (a maximum bipartite matching of compatible pairs), and a
  sum type (``anyOf``/``oneOf``) may gain members, a product type (``allOf``) lose them.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

import referencing
import referencing.exceptions
import referencing.jsonschema

if TYPE_CHECKING:
    from referencing._core import Resolver

__all__ = ["COMPATIBLE_CHANGES", "JsonDifference", "Kind", "compare"]


class Kind(StrEnum):
    """Confluent's ``Difference.Type`` values for JSON Schema."""

    ID_CHANGED = "ID_CHANGED"
    DESCRIPTION_CHANGED = "DESCRIPTION_CHANGED"
    TITLE_CHANGED = "TITLE_CHANGED"
    DEFAULT_CHANGED = "DEFAULT_CHANGED"
    SCHEMA_ADDED = "SCHEMA_ADDED"
    SCHEMA_REMOVED = "SCHEMA_REMOVED"
    TYPE_EXTENDED = "TYPE_EXTENDED"
    TYPE_NARROWED = "TYPE_NARROWED"
    TYPE_CHANGED = "TYPE_CHANGED"
    MAX_LENGTH_ADDED = "MAX_LENGTH_ADDED"
    MAX_LENGTH_REMOVED = "MAX_LENGTH_REMOVED"
    MAX_LENGTH_INCREASED = "MAX_LENGTH_INCREASED"
    MAX_LENGTH_DECREASED = "MAX_LENGTH_DECREASED"
    MIN_LENGTH_ADDED = "MIN_LENGTH_ADDED"
    MIN_LENGTH_REMOVED = "MIN_LENGTH_REMOVED"
    MIN_LENGTH_INCREASED = "MIN_LENGTH_INCREASED"
    MIN_LENGTH_DECREASED = "MIN_LENGTH_DECREASED"
    PATTERN_ADDED = "PATTERN_ADDED"
    PATTERN_REMOVED = "PATTERN_REMOVED"
    PATTERN_CHANGED = "PATTERN_CHANGED"
    MAXIMUM_ADDED = "MAXIMUM_ADDED"
    MAXIMUM_REMOVED = "MAXIMUM_REMOVED"
    MAXIMUM_INCREASED = "MAXIMUM_INCREASED"
    MAXIMUM_DECREASED = "MAXIMUM_DECREASED"
    MINIMUM_ADDED = "MINIMUM_ADDED"
    MINIMUM_REMOVED = "MINIMUM_REMOVED"
    MINIMUM_INCREASED = "MINIMUM_INCREASED"
    MINIMUM_DECREASED = "MINIMUM_DECREASED"
    EXCLUSIVE_MAXIMUM_ADDED = "EXCLUSIVE_MAXIMUM_ADDED"
    EXCLUSIVE_MAXIMUM_REMOVED = "EXCLUSIVE_MAXIMUM_REMOVED"
    EXCLUSIVE_MAXIMUM_INCREASED = "EXCLUSIVE_MAXIMUM_INCREASED"
    EXCLUSIVE_MAXIMUM_DECREASED = "EXCLUSIVE_MAXIMUM_DECREASED"
    EXCLUSIVE_MINIMUM_ADDED = "EXCLUSIVE_MINIMUM_ADDED"
    EXCLUSIVE_MINIMUM_REMOVED = "EXCLUSIVE_MINIMUM_REMOVED"
    EXCLUSIVE_MINIMUM_INCREASED = "EXCLUSIVE_MINIMUM_INCREASED"
    EXCLUSIVE_MINIMUM_DECREASED = "EXCLUSIVE_MINIMUM_DECREASED"
    MULTIPLE_OF_ADDED = "MULTIPLE_OF_ADDED"
    MULTIPLE_OF_REMOVED = "MULTIPLE_OF_REMOVED"
    MULTIPLE_OF_EXPANDED = "MULTIPLE_OF_EXPANDED"
    MULTIPLE_OF_REDUCED = "MULTIPLE_OF_REDUCED"
    MULTIPLE_OF_CHANGED = "MULTIPLE_OF_CHANGED"
    REQUIRED_ATTRIBUTE_ADDED = "REQUIRED_ATTRIBUTE_ADDED"
    REQUIRED_ATTRIBUTE_WITH_DEFAULT_ADDED = "REQUIRED_ATTRIBUTE_WITH_DEFAULT_ADDED"
    REQUIRED_ATTRIBUTE_REMOVED = "REQUIRED_ATTRIBUTE_REMOVED"
    MAX_PROPERTIES_ADDED = "MAX_PROPERTIES_ADDED"
    MAX_PROPERTIES_REMOVED = "MAX_PROPERTIES_REMOVED"
    MAX_PROPERTIES_INCREASED = "MAX_PROPERTIES_INCREASED"
    MAX_PROPERTIES_DECREASED = "MAX_PROPERTIES_DECREASED"
    MIN_PROPERTIES_ADDED = "MIN_PROPERTIES_ADDED"
    MIN_PROPERTIES_REMOVED = "MIN_PROPERTIES_REMOVED"
    MIN_PROPERTIES_INCREASED = "MIN_PROPERTIES_INCREASED"
    MIN_PROPERTIES_DECREASED = "MIN_PROPERTIES_DECREASED"
    ADDITIONAL_PROPERTIES_ADDED = "ADDITIONAL_PROPERTIES_ADDED"
    ADDITIONAL_PROPERTIES_REMOVED = "ADDITIONAL_PROPERTIES_REMOVED"
    ADDITIONAL_PROPERTIES_EXTENDED = "ADDITIONAL_PROPERTIES_EXTENDED"
    ADDITIONAL_PROPERTIES_NARROWED = "ADDITIONAL_PROPERTIES_NARROWED"
    DEPENDENCY_ARRAY_ADDED = "DEPENDENCY_ARRAY_ADDED"
    DEPENDENCY_ARRAY_REMOVED = "DEPENDENCY_ARRAY_REMOVED"
    DEPENDENCY_ARRAY_EXTENDED = "DEPENDENCY_ARRAY_EXTENDED"
    DEPENDENCY_ARRAY_NARROWED = "DEPENDENCY_ARRAY_NARROWED"
    DEPENDENCY_ARRAY_CHANGED = "DEPENDENCY_ARRAY_CHANGED"
    DEPENDENCY_SCHEMA_ADDED = "DEPENDENCY_SCHEMA_ADDED"
    DEPENDENCY_SCHEMA_REMOVED = "DEPENDENCY_SCHEMA_REMOVED"
    PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL = "PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL"
    PROPERTY_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL = "PROPERTY_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL"
    REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL = "REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL"
    REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_UNOPEN_CONTENT_MODEL = (
        "REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_UNOPEN_CONTENT_MODEL")
    OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL = "OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL"
    PROPERTY_REMOVED_FROM_OPEN_CONTENT_MODEL = "PROPERTY_REMOVED_FROM_OPEN_CONTENT_MODEL"
    PROPERTY_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL = "PROPERTY_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL"
    PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL = "PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL"
    PROPERTY_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL = (
        "PROPERTY_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL")
    PROPERTY_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL = (
        "PROPERTY_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL")
    PROPERTY_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL = (
        "PROPERTY_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL")
    PROPERTY_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL = (
        "PROPERTY_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL")
    MAX_ITEMS_ADDED = "MAX_ITEMS_ADDED"
    MAX_ITEMS_REMOVED = "MAX_ITEMS_REMOVED"
    MAX_ITEMS_INCREASED = "MAX_ITEMS_INCREASED"
    MAX_ITEMS_DECREASED = "MAX_ITEMS_DECREASED"
    MIN_ITEMS_ADDED = "MIN_ITEMS_ADDED"
    MIN_ITEMS_REMOVED = "MIN_ITEMS_REMOVED"
    MIN_ITEMS_INCREASED = "MIN_ITEMS_INCREASED"
    MIN_ITEMS_DECREASED = "MIN_ITEMS_DECREASED"
    UNIQUE_ITEMS_ADDED = "UNIQUE_ITEMS_ADDED"
    UNIQUE_ITEMS_REMOVED = "UNIQUE_ITEMS_REMOVED"
    ADDITIONAL_ITEMS_ADDED = "ADDITIONAL_ITEMS_ADDED"
    ADDITIONAL_ITEMS_REMOVED = "ADDITIONAL_ITEMS_REMOVED"
    ADDITIONAL_ITEMS_EXTENDED = "ADDITIONAL_ITEMS_EXTENDED"
    ADDITIONAL_ITEMS_NARROWED = "ADDITIONAL_ITEMS_NARROWED"
    ITEM_ADDED_TO_OPEN_CONTENT_MODEL = "ITEM_ADDED_TO_OPEN_CONTENT_MODEL"
    ITEM_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL = "ITEM_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL"
    ITEM_ADDED_TO_CLOSED_CONTENT_MODEL = "ITEM_ADDED_TO_CLOSED_CONTENT_MODEL"
    ITEM_REMOVED_FROM_OPEN_CONTENT_MODEL = "ITEM_REMOVED_FROM_OPEN_CONTENT_MODEL"
    ITEM_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL = "ITEM_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL"
    ITEM_REMOVED_FROM_CLOSED_CONTENT_MODEL = "ITEM_REMOVED_FROM_CLOSED_CONTENT_MODEL"
    ITEM_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL = "ITEM_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL"
    ITEM_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL = (
        "ITEM_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL")
    ITEM_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL = "ITEM_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL"
    ITEM_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL = "ITEM_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL"
    ENUM_ARRAY_EXTENDED = "ENUM_ARRAY_EXTENDED"
    ENUM_ARRAY_NARROWED = "ENUM_ARRAY_NARROWED"
    ENUM_ARRAY_CHANGED = "ENUM_ARRAY_CHANGED"
    COMBINED_TYPE_EXTENDED = "COMBINED_TYPE_EXTENDED"
    COMBINED_TYPE_CHANGED = "COMBINED_TYPE_CHANGED"
    PRODUCT_TYPE_EXTENDED = "PRODUCT_TYPE_EXTENDED"
    PRODUCT_TYPE_NARROWED = "PRODUCT_TYPE_NARROWED"
    SUM_TYPE_EXTENDED = "SUM_TYPE_EXTENDED"
    SUM_TYPE_NARROWED = "SUM_TYPE_NARROWED"
    COMBINED_TYPE_SUBSCHEMAS_CHANGED = "COMBINED_TYPE_SUBSCHEMAS_CHANGED"
    NOT_TYPE_EXTENDED = "NOT_TYPE_EXTENDED"
    NOT_TYPE_NARROWED = "NOT_TYPE_NARROWED"


K = Kind
COMPATIBLE_CHANGES = frozenset({
    K.ID_CHANGED, K.DESCRIPTION_CHANGED, K.TITLE_CHANGED, K.DEFAULT_CHANGED, K.SCHEMA_REMOVED, K.TYPE_EXTENDED,
    K.MAX_LENGTH_INCREASED, K.MAX_LENGTH_REMOVED, K.MIN_LENGTH_DECREASED, K.MIN_LENGTH_REMOVED, K.PATTERN_REMOVED,
    K.MAXIMUM_INCREASED, K.MAXIMUM_REMOVED, K.MINIMUM_DECREASED, K.MINIMUM_REMOVED, K.EXCLUSIVE_MAXIMUM_INCREASED,
    K.EXCLUSIVE_MAXIMUM_REMOVED, K.EXCLUSIVE_MINIMUM_DECREASED, K.EXCLUSIVE_MINIMUM_REMOVED, K.MULTIPLE_OF_REDUCED,
    K.MULTIPLE_OF_REMOVED, K.REQUIRED_ATTRIBUTE_WITH_DEFAULT_ADDED, K.REQUIRED_ATTRIBUTE_REMOVED,
    K.DEPENDENCY_ARRAY_NARROWED, K.DEPENDENCY_ARRAY_REMOVED, K.DEPENDENCY_SCHEMA_REMOVED, K.MAX_PROPERTIES_INCREASED,
    K.MAX_PROPERTIES_REMOVED, K.MIN_PROPERTIES_DECREASED, K.MIN_PROPERTIES_REMOVED, K.ADDITIONAL_PROPERTIES_ADDED,
    K.ADDITIONAL_PROPERTIES_EXTENDED, K.PROPERTY_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL,
    K.REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_UNOPEN_CONTENT_MODEL, K.OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL,
    K.PROPERTY_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL, K.PROPERTY_REMOVED_FROM_OPEN_CONTENT_MODEL,
    K.PROPERTY_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL,
    K.PROPERTY_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL, K.MAX_ITEMS_INCREASED, K.MAX_ITEMS_REMOVED,
    K.MIN_ITEMS_DECREASED, K.MIN_ITEMS_REMOVED, K.UNIQUE_ITEMS_REMOVED, K.ADDITIONAL_ITEMS_ADDED,
    K.ADDITIONAL_ITEMS_EXTENDED, K.ITEM_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL,
    K.ITEM_ADDED_TO_CLOSED_CONTENT_MODEL, K.ITEM_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL,
    K.ITEM_REMOVED_FROM_OPEN_CONTENT_MODEL, K.ITEM_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL,
    K.ITEM_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL, K.ENUM_ARRAY_EXTENDED, K.COMBINED_TYPE_EXTENDED,
    K.PRODUCT_TYPE_NARROWED, K.SUM_TYPE_EXTENDED, K.NOT_TYPE_NARROWED,
})
"""Confluent's ``SchemaDiff.COMPATIBLE_CHANGES``: every other difference is incompatible."""

_KEYWORD_ADDED_OR_REMOVED = {
    K.MAXIMUM_ADDED, K.MINIMUM_ADDED, K.EXCLUSIVE_MAXIMUM_ADDED, K.EXCLUSIVE_MINIMUM_ADDED, K.MULTIPLE_OF_ADDED,
    K.MAX_LENGTH_ADDED, K.MIN_LENGTH_ADDED, K.PATTERN_ADDED, K.REQUIRED_ATTRIBUTE_ADDED, K.MAX_PROPERTIES_ADDED,
    K.MIN_PROPERTIES_ADDED, K.DEPENDENCY_ARRAY_ADDED, K.DEPENDENCY_SCHEMA_ADDED, K.MAX_ITEMS_ADDED,
    K.MIN_ITEMS_ADDED, K.UNIQUE_ITEMS_ADDED, K.ADDITIONAL_ITEMS_REMOVED, K.ADDITIONAL_PROPERTIES_REMOVED,
}
_VALUE_INCREASED = {K.MIN_LENGTH_INCREASED, K.MINIMUM_INCREASED, K.EXCLUSIVE_MINIMUM_INCREASED,
                    K.MIN_PROPERTIES_INCREASED, K.MULTIPLE_OF_EXPANDED, K.MIN_ITEMS_INCREASED}
_VALUE_DECREASED = {K.MAX_LENGTH_DECREASED, K.MAXIMUM_DECREASED, K.MAX_ITEMS_DECREASED,
                    K.EXCLUSIVE_MAXIMUM_DECREASED, K.MAX_PROPERTIES_DECREASED}
_TYPE_NARROWED = {K.ADDITIONAL_ITEMS_NARROWED, K.ENUM_ARRAY_NARROWED, K.SUM_TYPE_NARROWED,
                  K.ADDITIONAL_PROPERTIES_NARROWED}
_VALUE_CHANGED = {K.PATTERN_CHANGED, K.MULTIPLE_OF_CHANGED, K.DEPENDENCY_ARRAY_CHANGED}
_TYPE_CHANGED = {K.TYPE_CHANGED, K.TYPE_NARROWED, K.COMBINED_TYPE_CHANGED, K.COMBINED_TYPE_SUBSCHEMAS_CHANGED,
                 K.ENUM_ARRAY_CHANGED}
_TYPE_EXTENDED = {K.DEPENDENCY_ARRAY_EXTENDED, K.PRODUCT_TYPE_EXTENDED, K.SUM_TYPE_EXTENDED, K.NOT_TYPE_EXTENDED}


@dataclass(frozen=True, slots=True)
class JsonDifference:
    """One difference between an original and an update, at a JSON path (``#/properties/a``)."""

    kind: Kind
    path: str

    @property
    def compatible(self) -> bool:
        return self.kind in COMPATIBLE_CHANGES

    @property
    def location(self) -> str:
        return self.path

    def describe(self, reader_label: str, writer_label: str) -> str:
        """Confluent's ``Difference.toString()``, its two ``%s`` as the reader's and the writer's labels."""
        r, w, p = reader_label, writer_label, self.path
        kind = self.kind
        if kind in _KEYWORD_ADDED_OR_REMOVED:
            text = f"The keyword at path '{p}' in the {r} schema is not present in the {w} schema"
        elif kind in _VALUE_INCREASED:
            text = f"The value at path '{p}' in the {r} schema is more than its value in the {w} schema"
        elif kind in _VALUE_DECREASED:
            text = f"The value at path '{p}' in the {r} schema is less than its value in the {w} schema"
        elif kind in _VALUE_CHANGED:
            text = f"The value at path '{p}' is different between the {r} and {w} schema"
        elif kind in _TYPE_NARROWED:
            text = f"An array or combined type at path '{p}' has fewer elements in the {r} schema than the {w} schema"
        elif kind in _TYPE_EXTENDED:
            text = f"An array or combined type at path '{p}' has more elements in the {r} schema than the {w} schema"
        elif kind in _TYPE_CHANGED:
            text = f"A type at path '{p}' is different between the {r} schema and the {w} schema"
        elif kind in (K.PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL, K.ITEM_ADDED_TO_OPEN_CONTENT_MODEL):
            text = (f"The {r} schema has an open content model and has a property or item at path '{p}' "
                    f"which is missing in the {w} schema")
        elif kind is K.REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL:
            text = (f"The {r} schema has an unopen content model and has a required property at path '{p}' "
                    f"which is missing in the {w} schema")
        elif kind in (K.PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL, K.ITEM_REMOVED_FROM_CLOSED_CONTENT_MODEL):
            text = (f"The {r} schema has a closed content model and is missing a property or item present "
                    f"at path '{p}' in the {w} schema")
        elif kind in (K.PROPERTY_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL,
                      K.ITEM_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL):
            text = (f"A property or item is missing in the {r} schema but present at path '{p}' in the {w} "
                    "schema and is not covered by its partially open content model")
        elif kind in (K.PROPERTY_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL,
                      K.ITEM_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL):
            text = (f"The {r} schema has a property or item at path '{p}' which is missing in the {w} schema "
                    "and is not covered by its partially open content model")
        else:
            text = ""
        return f'{{errorType:"{kind.value}", description:"{text}"}}'


# -- the model ------------------------------------------------------------------------------------

_OBJECT_KEYS = ("properties", "required", "additionalProperties", "patternProperties", "dependencies",
                "minProperties", "maxProperties", "propertyNames", "dependentRequired", "dependentSchemas")
_ARRAY_KEYS = ("items", "additionalItems", "minItems", "maxItems", "uniqueItems", "contains", "prefixItems")
_NUMBER_KEYS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")
_STRING_KEYS = ("minLength", "maxLength", "pattern", "format")
_ABSENT = object()


@dataclass(eq=False)
class Node:
    """One schema as Confluent's diff sees it (Everit's classes: ``kind`` names them)."""

    kind: str  # empty false object array string number boolean null enum const combined not ref
    attrs: dict[str, Any] = field(default_factory=dict)
    title: Any = None
    description: Any = None
    id: Any = None
    default: Any = _ABSENT
    source: Any = None
    target: Callable[[], Node] | None = None  # for "ref"
    _resolved: Node | None = None

    def get(self, name: str, default: Any = None) -> Any:
        return self.attrs.get(name, default)

    def referred(self) -> Node:
        if self._resolved is None:
            assert self.target is not None
            self._resolved = self.target()
        return self._resolved

    @property
    def has_default(self) -> bool:
        return self.default is not _ABSENT


class _Loader:
    """JSON Schema data -> :class:`Node`, following Everit's ``SchemaLoader`` (see the module doc)."""

    def __init__(self, resolver: Resolver[Any], draft4: bool) -> None:
        self.resolver = resolver
        self.draft4 = draft4
        self._cache: dict[int, Node] = {}

    def load(self, data: Any, scope: Resolver[Any] | None = None) -> Node:
        scope = scope or self.resolver
        cached = self._cache.get(id(data))
        if cached is not None:
            return cached
        node = self._load(data, scope)
        self._cache[id(data)] = node
        return node

    def _load(self, data: Any, scope: Resolver[Any]) -> Node:
        if data is True:
            return Node("empty", source=data)
        if data is False:
            return Node("false", source=data)
        if not isinstance(data, dict):
            return Node("empty", source=data)
        sub_id = data.get("$id", data.get("id") if self.draft4 else None)
        if isinstance(sub_id, str):
            with contextlib.suppress(referencing.exceptions.Unresolvable, ValueError, TypeError):
                scope = scope.in_subresource(referencing.Resource.from_contents(
                    data, default_specification=referencing.jsonschema.DRAFT7))
        parts: list[Node] = []
        ref = data.get("$ref")
        if isinstance(ref, str):
            parts.append(self._reference(ref, scope))
        if "enum" in data and isinstance(data["enum"], list):
            parts.append(Node("enum", {"values": data["enum"]}, source=data))
        if "const" in data:
            parts.append(Node("const", {"value": data["const"]}, source=data))
        if "not" in data:
            parts.append(Node("not", {"must_not": self.load(data["not"], scope)}, source=data))
        for criterion in ("allOf", "anyOf", "oneOf"):
            items = data.get(criterion)
            if isinstance(items, list):
                parts.append(Node("combined", {"criterion": criterion,
                                               "subschemas": [self.load(x, scope) for x in items]}, source=data))
        types = data.get("type")
        if isinstance(types, str):
            parts.append(self._typed(types, data, scope))
        elif isinstance(types, list):
            parts.append(Node("combined", {"criterion": "anyOf", "subschemas": [
                self._typed(t, data, scope) for t in types if isinstance(t, str)]}, source=data))
        else:
            for kind, keys in (("object", _OBJECT_KEYS), ("array", _ARRAY_KEYS), ("number", _NUMBER_KEYS),
                               ("string", _STRING_KEYS)):
                if any(k in data for k in keys):
                    parts.append(self._typed(kind, data, scope))
        if not parts:
            node = Node("empty", source=data)
        elif len(parts) == 1:
            node = parts[0]
        else:
            node = Node("combined", {"criterion": "allOf", "subschemas": parts}, source=data)
        node.title = data.get("title")
        node.description = data.get("description")
        node.id = sub_id
        if "default" in data:
            node.default = data["default"]
        return node

    def _reference(self, ref: str, scope: Resolver[Any]) -> Node:
        def target() -> Node:
            try:
                resolved = scope.lookup(ref)
            except referencing.exceptions.Unresolvable:
                return Node("empty")
            return self.load(resolved.contents, resolved.resolver)

        return Node("ref", {"ref": ref}, target=target)

    def _typed(self, kind: str, data: dict[str, Any], scope: Resolver[Any]) -> Node:
        if kind == "integer":
            node = Node("number", source=data)
            node.attrs["integer"] = True
        elif kind in ("number", "string", "boolean", "null"):
            node = Node(kind, source=data)
        elif kind == "object":
            node = self._object(data, scope)
        elif kind == "array":
            node = self._array(data, scope)
        else:
            return Node("empty", source=data)
        if node.kind == "number":
            for key in ("minimum", "maximum", "multipleOf"):
                if isinstance(data.get(key), int | float) and not isinstance(data.get(key), bool):
                    node.attrs[key] = data[key]
            for key in ("exclusiveMinimum", "exclusiveMaximum"):
                value = data.get(key)
                if isinstance(value, int | float) and not isinstance(value, bool):
                    node.attrs[key] = value
        elif node.kind == "string":
            for key in ("minLength", "maxLength", "pattern"):
                if key in data:
                    node.attrs[key] = data[key]
        return node

    def _object(self, data: dict[str, Any], scope: Resolver[Any]) -> Node:
        raw_properties = data.get("properties")
        properties: dict[str, Any] = raw_properties if isinstance(raw_properties, dict) else {}
        additional = data.get("additionalProperties", _ABSENT)
        attrs: dict[str, Any] = {
            "properties": {k: self.load(v, scope) for k, v in properties.items()},
            "required": set(data.get("required") or []) if isinstance(data.get("required"), list) else set(),
            "patterns": [(p, self.load(v, scope)) for p, v in data["patternProperties"].items()]
            if isinstance(data.get("patternProperties"), dict) else [],
            "permits_additional": additional is not False,
            "additional": self.load(additional, scope) if isinstance(additional, dict) else None,
            "minProperties": data.get("minProperties"),
            "maxProperties": data.get("maxProperties"),
            "dep_arrays": {}, "dep_schemas": {},
        }
        for source in (data.get("dependencies"), data.get("dependentRequired"), data.get("dependentSchemas")):
            if isinstance(source, dict):
                for key, value in source.items():
                    if isinstance(value, list):
                        attrs["dep_arrays"][key] = {str(v) for v in value}
                    else:
                        attrs["dep_schemas"][key] = self.load(value, scope)
        return Node("object", attrs, source=data)

    def _array(self, data: dict[str, Any], scope: Resolver[Any]) -> Node:
        items = data.get("items", _ABSENT)
        prefix = data.get("prefixItems")
        additional = data.get("additionalItems", _ABSENT)
        attrs: dict[str, Any] = {"all_items": None, "item_schemas": None}
        if isinstance(prefix, list):  # 2020-12: prefixItems, then items for the rest
            attrs["item_schemas"] = [self.load(x, scope) for x in prefix]
            additional = items
        elif isinstance(items, list):
            attrs["item_schemas"] = [self.load(x, scope) for x in items]
        elif items is not _ABSENT:
            attrs["all_items"] = self.load(items, scope)
        attrs["permits_additional"] = additional is not False
        attrs["additional"] = self.load(additional, scope) if isinstance(additional, dict) else None
        for key in ("minItems", "maxItems", "maxContains", "minContains"):
            attrs[key] = data.get(key)
        attrs["unique"] = data.get("uniqueItems") is True
        return Node("array", attrs, source=data)


def load_model(data: Any, resolver: Resolver[Any]) -> Node:
    """The diff model of a schema document (``$ref`` resolved through ``resolver``)."""
    draft4 = isinstance(data, dict) and "draft-04" in str(data.get("$schema", ""))
    return _Loader(resolver, draft4).load(data)


# -- the diff -------------------------------------------------------------------------------------

class _Context:
    """Confluent's ``diff.Context``: a path and the differences found under it."""

    def __init__(self, in_progress: set[tuple[int, int]], path: list[str] | None = None) -> None:
        self.in_progress = in_progress
        self.path = list(path or [])
        self.diffs: list[JsonDifference] = []

    def sub(self) -> _Context:
        return _Context(self.in_progress, self.path)

    @property
    def compatible(self) -> bool:
        return all(d.compatible for d in self.diffs)

    def add(self, kind: Kind, attribute: str | None = None) -> None:
        parts = [*self.path, attribute] if attribute is not None else self.path
        self.diffs.append(JsonDifference(kind, "#/" + "/".join(parts)))

    def enter(self, *names: str) -> _Path:
        return _Path(self, names)


class _Path:
    def __init__(self, ctx: _Context, names: tuple[str, ...]) -> None:
        self.ctx, self.names = ctx, names

    def __enter__(self) -> None:
        self.ctx.path.extend(self.names)

    def __exit__(self, *_: object) -> None:
        del self.ctx.path[len(self.ctx.path) - len(self.names):]


def compare(original: Node, update: Node) -> list[JsonDifference]:
    """Every difference from ``original`` (the writer) to ``update`` (the reader)."""
    ctx = _Context(set())
    _compare(ctx, original, update)
    return ctx.diffs


def _deref(node: Node) -> Node:
    seen = 0
    while node.kind == "ref" and seen < 64:
        node = node.referred()
        seen += 1
    return node


def _compare(ctx: _Context, original: Node | None, update: Node | None) -> None:
    if original is None and update is None:
        return
    if original is None:
        ctx.add(K.SCHEMA_ADDED)
        return
    if update is None:
        ctx.add(K.SCHEMA_REMOVED)
        return
    original, update = _deref(original), _deref(update)
    if original.kind != "combined" and update.kind == "combined":
        subschemas: list[Node] = update.attrs["subschemas"]
        if len(subschemas) == 1:
            sub = ctx.sub()
            _compare(sub, original, subschemas[0])
            if sub.compatible:
                ctx.diffs += sub.diffs
                return
        elif update.attrs["criterion"] in ("anyOf", "oneOf"):
            for subschema in subschemas:
                sub = ctx.sub()
                _compare(sub, original, subschema)
                if sub.compatible:
                    ctx.diffs += sub.diffs
                    ctx.add(K.SUM_TYPE_EXTENDED)
                    return
    elif original.kind == "combined" and update.kind != "combined":
        subschemas = original.attrs["subschemas"]
        if len(subschemas) == 1:
            sub = ctx.sub()
            _compare(sub, subschemas[0], update)
            if sub.compatible:
                ctx.diffs += sub.diffs
                return
        elif original.attrs["criterion"] == "allOf":  # dropping members of a product type
            for subschema in subschemas:
                sub = ctx.sub()
                _compare(sub, subschema, update)
                if sub.compatible:
                    ctx.diffs += sub.diffs
                    ctx.add(K.PRODUCT_TYPE_NARROWED)
                    return
    if original.kind != update.kind:
        if original.kind == "false" or update.kind == "empty":
            return
        if _connect_type(original) == "bytes" == _connect_type(update):
            return  # Confluent: two ``connect.type: bytes`` schemas are one (its decimal fix)
        ctx.add(K.TYPE_CHANGED)
        return
    pair = (id(original), id(update))
    if pair in ctx.in_progress:  # a recursive schema: this pair is being compared further up
        return
    ctx.in_progress.add(pair)
    try:
        if original.id != update.id:
            ctx.add(K.ID_CHANGED)
        if original.title != update.title:
            ctx.add(K.TITLE_CHANGED)
        if original.description != update.description:
            ctx.add(K.DESCRIPTION_CHANGED)
        if _json(original.default) != _json(update.default):
            ctx.add(K.DEFAULT_CHANGED)
        compare_kind = _BY_KIND.get(original.kind)
        if compare_kind is not None:
            compare_kind(ctx, original, update)
    finally:
        ctx.in_progress.discard(pair)


def _connect_type(node: Node) -> Any:
    return node.source.get("connect.type") if isinstance(node.source, dict) else None


def _json(value: Any) -> str:
    if value is _ABSENT:
        return ""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def _limits(ctx: _Context, original: Node, update: Node, key: str, kinds: tuple[Kind, Kind, Kind, Kind],
            path: str | None = None) -> None:
    """``(added, removed, increased, decreased)`` for one numeric keyword."""
    a, b = original.get(key), update.get(key)
    if a == b:
        return
    added, removed, increased, decreased = kinds
    where = path or key
    if a is None:
        ctx.add(added, where)
    elif b is None:
        ctx.add(removed, where)
    elif float(a) < float(b):
        ctx.add(increased, where)
    elif float(a) > float(b):
        ctx.add(decreased, where)


def _string(ctx: _Context, original: Node, update: Node) -> None:
    _limits(ctx, original, update, "maxLength",
            (K.MAX_LENGTH_ADDED, K.MAX_LENGTH_REMOVED, K.MAX_LENGTH_INCREASED, K.MAX_LENGTH_DECREASED))
    _limits(ctx, original, update, "minLength",
            (K.MIN_LENGTH_ADDED, K.MIN_LENGTH_REMOVED, K.MIN_LENGTH_INCREASED, K.MIN_LENGTH_DECREASED))
    a, b = original.get("pattern"), update.get("pattern")
    if a is None and b is not None:
        ctx.add(K.PATTERN_ADDED, "pattern")
    elif a is not None and b is None:
        ctx.add(K.PATTERN_REMOVED, "pattern")
    elif a != b:
        ctx.add(K.PATTERN_CHANGED, "pattern")


def _number(ctx: _Context, original: Node, update: Node) -> None:
    _limits(ctx, original, update, "maximum",
            (K.MAXIMUM_ADDED, K.MAXIMUM_REMOVED, K.MAXIMUM_INCREASED, K.MAXIMUM_DECREASED))
    _limits(ctx, original, update, "minimum",
            (K.MINIMUM_ADDED, K.MINIMUM_REMOVED, K.MINIMUM_INCREASED, K.MINIMUM_DECREASED))
    _limits(ctx, original, update, "exclusiveMaximum", (K.EXCLUSIVE_MAXIMUM_ADDED, K.EXCLUSIVE_MAXIMUM_REMOVED,
                                                         K.EXCLUSIVE_MAXIMUM_INCREASED, K.EXCLUSIVE_MAXIMUM_DECREASED))
    _limits(ctx, original, update, "exclusiveMinimum", (K.EXCLUSIVE_MINIMUM_ADDED, K.EXCLUSIVE_MINIMUM_REMOVED,
                                                         K.EXCLUSIVE_MINIMUM_INCREASED, K.EXCLUSIVE_MINIMUM_DECREASED))
    a, b = original.get("multipleOf"), update.get("multipleOf")
    if a != b:
        if a is None:
            ctx.add(K.MULTIPLE_OF_ADDED, "multipleOf")
        elif b is None:
            ctx.add(K.MULTIPLE_OF_REMOVED, "multipleOf")
        elif int(a) and int(b) % int(a) == 0:
            ctx.add(K.MULTIPLE_OF_EXPANDED, "multipleOf")
        elif int(b) and int(a) % int(b) == 0:
            ctx.add(K.MULTIPLE_OF_REDUCED, "multipleOf")
        else:
            ctx.add(K.MULTIPLE_OF_CHANGED, "multipleOf")
    integer_a, integer_b = bool(original.get("integer")), bool(update.get("integer"))
    if integer_a != integer_b:
        ctx.add(K.TYPE_EXTENDED if integer_a else K.TYPE_NARROWED)


def _enum(ctx: _Context, original: Node, update: Node) -> None:
    a = {_json(v) for v in original.attrs["values"]}
    b = {_json(v) for v in update.attrs["values"]}
    if a != b:
        ctx.add(K.ENUM_ARRAY_EXTENDED if a <= b else K.ENUM_ARRAY_NARROWED if b <= a else K.ENUM_ARRAY_CHANGED, "enum")


def _const(ctx: _Context, original: Node, update: Node) -> None:
    if _json(original.attrs["value"]) != _json(update.attrs["value"]):
        ctx.add(K.ENUM_ARRAY_CHANGED, "const")


def _not(ctx: _Context, original: Node, update: Node) -> None:
    with ctx.enter("not"):
        sub = ctx.sub()
        _compare(sub, update.attrs["must_not"], original.attrs["must_not"])  # reversed, as Confluent
        ctx.add(K.NOT_TYPE_NARROWED if sub.compatible else K.NOT_TYPE_EXTENDED)


def _open(node: Node) -> bool:
    return not node.attrs["patterns"] and node.attrs["additional"] is None and node.attrs["permits_additional"]


def _partial(node: Node, key: str) -> Node | None:
    for pattern, schema in node.attrs["patterns"]:
        try:
            if re.search(pattern, key):
                return schema if isinstance(schema, Node) else None
        except re.error:
            continue
    additional = node.attrs["additional"]
    return additional if isinstance(additional, Node) else None


def _object(ctx: _Context, original: Node, update: Node) -> None:
    o_props: dict[str, Node] = original.attrs["properties"]
    u_props: dict[str, Node] = update.attrs["properties"]
    with ctx.enter("required"):
        for key in o_props:
            if key in u_props:
                o_req, u_req = key in original.attrs["required"], key in update.attrs["required"]
                if o_req and not u_req:
                    ctx.add(K.REQUIRED_ATTRIBUTE_REMOVED, key)
                elif u_req and not o_req:
                    ctx.add(K.REQUIRED_ATTRIBUTE_WITH_DEFAULT_ADDED if u_props[key].has_default
                            else K.REQUIRED_ATTRIBUTE_ADDED, key)
    with ctx.enter("properties"):
        for key in _union(o_props, u_props):
            with ctx.enter(key):
                _property(ctx, original, update, key, o_props.get(key), u_props.get(key))
    with ctx.enter("dependencies"):
        arrays_a, arrays_b = original.attrs["dep_arrays"], update.attrs["dep_arrays"]
        for key in _union(arrays_a, arrays_b):
            a, b = arrays_a.get(key), arrays_b.get(key)
            if b is None:
                ctx.add(K.DEPENDENCY_ARRAY_REMOVED, key)
            elif a is None:
                ctx.add(K.DEPENDENCY_ARRAY_ADDED, key)
            elif a != b:
                ctx.add(K.DEPENDENCY_ARRAY_EXTENDED if a <= b else K.DEPENDENCY_ARRAY_NARROWED if b <= a
                        else K.DEPENDENCY_ARRAY_CHANGED, key)
        schemas_a, schemas_b = original.attrs["dep_schemas"], update.attrs["dep_schemas"]
        for key in _union(schemas_a, schemas_b):
            a_schema, b_schema = schemas_a.get(key), schemas_b.get(key)
            if b_schema is None:
                ctx.add(K.DEPENDENCY_SCHEMA_REMOVED, key)
            elif a_schema is None:
                ctx.add(K.DEPENDENCY_SCHEMA_ADDED, key)
            else:
                with ctx.enter(key):
                    _compare(ctx, a_schema, b_schema)
    with ctx.enter("additionalProperties"):
        a_permits, b_permits = original.attrs["permits_additional"], update.attrs["permits_additional"]
        a_schema, b_schema = original.attrs["additional"], update.attrs["additional"]
        if a_permits != b_permits:
            ctx.add(K.ADDITIONAL_PROPERTIES_ADDED if b_permits else K.ADDITIONAL_PROPERTIES_REMOVED)
        elif a_schema is None and b_schema is not None:
            ctx.add(K.ADDITIONAL_PROPERTIES_NARROWED)
        elif b_schema is None and a_schema is not None:
            ctx.add(K.ADDITIONAL_PROPERTIES_EXTENDED)
        elif a_schema is not None:
            _compare(ctx, a_schema, b_schema)
    _limits(ctx, original, update, "maxProperties", (K.MAX_PROPERTIES_ADDED, K.MAX_PROPERTIES_REMOVED,
                                                      K.MAX_PROPERTIES_INCREASED, K.MAX_PROPERTIES_DECREASED))
    _limits(ctx, original, update, "minProperties", (K.MIN_PROPERTIES_ADDED, K.MIN_PROPERTIES_REMOVED,
                                                      K.MIN_PROPERTIES_INCREASED, K.MIN_PROPERTIES_DECREASED))


def _property(ctx: _Context, original: Node, update: Node, key: str, a: Node | None, b: Node | None) -> None:
    if b is None:
        assert a is not None
        if _open(update):
            ctx.add(K.PROPERTY_REMOVED_FROM_OPEN_CONTENT_MODEL)
            return
        partial = _partial(update, key)
        if partial is not None:
            sub = ctx.sub()
            _compare(sub, a, partial)
            ctx.diffs += sub.diffs
            ctx.add(K.PROPERTY_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL if sub.compatible
                    else K.PROPERTY_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL)
        else:
            ctx.add(K.PROPERTY_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL if _deref(a).kind == "false"
                    else K.PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL)
    elif a is None:
        if _open(original):
            ctx.add(K.PROPERTY_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL if _deref(b).kind == "empty"
                    else K.PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL)
            return
        partial = _partial(original, key)
        if partial is not None:
            sub = ctx.sub()
            _compare(sub, partial, b)
            ctx.diffs += sub.diffs
            ctx.add(K.PROPERTY_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL if sub.compatible
                    else K.PROPERTY_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL)
        if key in update.attrs["required"]:
            ctx.add(K.REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_UNOPEN_CONTENT_MODEL if b.has_default
                    else K.REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL)
        else:
            ctx.add(K.OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL)
    else:
        _compare(ctx, a, b)


def _array(ctx: _Context, original: Node, update: Node) -> None:
    with ctx.enter("items"):
        _compare(ctx, original.attrs["all_items"], update.attrs["all_items"])
    a_items: list[Node] = original.attrs["item_schemas"] or []
    b_items: list[Node] = update.attrs["item_schemas"] or []
    for index in range(max(len(a_items), len(b_items))):
        with ctx.enter(f"items/{index}"):
            if index < len(a_items) and index < len(b_items):
                _compare(ctx, a_items[index], b_items[index])
            elif index < len(a_items):
                _item_removed(ctx, update, a_items[index])
            else:
                _item_added(ctx, original, b_items[index])
    with ctx.enter("additionalItems"):
        a_permits, b_permits = original.attrs["permits_additional"], update.attrs["permits_additional"]
        a_schema, b_schema = original.attrs["additional"], update.attrs["additional"]
        if a_permits != b_permits:
            ctx.add(K.ADDITIONAL_ITEMS_REMOVED if a_permits else K.ADDITIONAL_ITEMS_ADDED)
        elif a_schema is None and b_schema is not None:
            ctx.add(K.ADDITIONAL_ITEMS_NARROWED)
        elif b_schema is None and a_schema is not None:
            ctx.add(K.ADDITIONAL_ITEMS_EXTENDED)
        elif a_schema is not None:
            _compare(ctx, a_schema, b_schema)
    _limits(ctx, original, update, "maxItems",
            (K.MAX_ITEMS_ADDED, K.MAX_ITEMS_REMOVED, K.MAX_ITEMS_INCREASED, K.MAX_ITEMS_DECREASED))
    _limits(ctx, original, update, "minItems",
            (K.MIN_ITEMS_ADDED, K.MIN_ITEMS_REMOVED, K.MIN_ITEMS_INCREASED, K.MIN_ITEMS_DECREASED))
    if original.attrs["unique"] != update.attrs["unique"]:
        ctx.add(K.UNIQUE_ITEMS_REMOVED if original.attrs["unique"] else K.UNIQUE_ITEMS_ADDED, "uniqueItems")


def _array_open(node: Node) -> bool:
    return bool(node.attrs["permits_additional"]) and node.attrs["additional"] is None


def _item_removed(ctx: _Context, update: Node, item: Node) -> None:
    if _array_open(update):
        ctx.add(K.ITEM_REMOVED_FROM_OPEN_CONTENT_MODEL)
        return
    partial: Node | None = update.attrs["additional"]
    if partial is not None:
        sub = ctx.sub()
        _compare(sub, item, partial)
        ctx.diffs += sub.diffs
        ctx.add(K.ITEM_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL if sub.compatible
                else K.ITEM_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL)
    else:
        ctx.add(K.ITEM_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL if _deref(item).kind == "false"
                else K.ITEM_REMOVED_FROM_CLOSED_CONTENT_MODEL)


def _item_added(ctx: _Context, original: Node, item: Node) -> None:
    if _array_open(original):
        ctx.add(K.ITEM_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL if _deref(item).kind == "empty"
                else K.ITEM_ADDED_TO_OPEN_CONTENT_MODEL)
        return
    partial: Node | None = original.attrs["additional"]
    if partial is not None:
        sub = ctx.sub()
        _compare(sub, partial, item)
        ctx.diffs += sub.diffs
        ctx.add(K.ITEM_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL if sub.compatible
                else K.ITEM_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL)
    else:
        ctx.add(K.ITEM_ADDED_TO_CLOSED_CONTENT_MODEL)


def _combined(ctx: _Context, original: Node, update: Node) -> None:
    a_crit, b_crit = original.attrs["criterion"], update.attrs["criterion"]
    a_subs: list[Node] = _distinct(original.attrs["subschemas"])
    b_subs: list[Node] = _distinct(update.attrs["subschemas"])
    if a_crit != b_crit:
        single_a, single_b = len(original.attrs["subschemas"]) == 1, len(update.attrs["subschemas"]) == 1
        if (b_crit == "anyOf" or (single_a and single_b) or (single_a and b_crit == "oneOf")
                or (single_b and a_crit == "allOf")):
            ctx.add(K.COMBINED_TYPE_EXTENDED)
        else:
            ctx.add(K.COMBINED_TYPE_CHANGED)
            return
    if len(a_subs) < len(b_subs):
        ctx.add(K.PRODUCT_TYPE_EXTENDED if b_crit == "allOf" else K.SUM_TYPE_EXTENDED)
    elif len(a_subs) > len(b_subs):
        ctx.add(K.SUM_TYPE_NARROWED if a_crit in ("anyOf", "oneOf") else K.PRODUCT_TYPE_NARROWED)
    compatible: dict[int, dict[int, list[JsonDifference]]] = {}
    for i, a in enumerate(a_subs):
        with ctx.enter(f"{a_crit}/{i}"):
            for j, b in enumerate(b_subs):
                sub = ctx.sub()
                _compare(sub, a, b)
                if sub.compatible:
                    compatible.setdefault(i, {})[j] = sub.diffs
    matching = _max_matching(compatible, len(b_subs))
    for i, j in sorted(matching.items()):
        ctx.diffs += compatible[i][j]
    if len(matching) < min(len(a_subs), len(b_subs)):
        ctx.add(K.COMBINED_TYPE_SUBSCHEMAS_CHANGED)


def _distinct(nodes: list[Node]) -> list[Node]:
    """Subschemas with duplicates collapsed (Confluent puts them in a set of ``JsonSchema``)."""
    seen: set[str] = set()
    out = []
    for node in nodes:
        key = _json(node.source) if node.source is not None else str(id(node))
        if key not in seen:
            seen.add(key)
            out.append(node)
    return out


def _max_matching(edges: dict[int, dict[int, Any]], right: int) -> dict[int, int]:
    """A maximum bipartite matching (left -> right) by augmenting paths (Kuhn's algorithm)."""
    owner: dict[int, int] = {}

    def augment(left: int, visited: set[int]) -> bool:
        for r in edges.get(left, {}):
            if r in visited:
                continue
            visited.add(r)
            if r not in owner or augment(owner[r], visited):
                owner[r] = left
                return True
        return False

    for left in edges:
        augment(left, set())
    return {left: r for r, left in owner.items()}


def _union(a: dict[str, Any], b: dict[str, Any]) -> Iterator[str]:
    yield from a
    yield from (k for k in b if k not in a)


_BY_KIND: dict[str, Callable[[_Context, Node, Node], None]] = {
    "string": _string, "number": _number, "enum": _enum, "const": _const, "combined": _combined,
    "not": _not, "object": _object, "array": _array,
}
