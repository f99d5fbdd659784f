"""JSON Schema documents: validated by ``jsonschema``, references resolved by ``referencing``.

A schema is valid when it is a JSON object (or ``true``/``false``), its dialect's metaschema
accepts it (``$schema`` picks draft 4, 6, 7, 2019-09 or 2020-12; draft 7 when absent, as
Confluent's default) and every ``$ref`` in it resolves: to a place in the document, or to a
referenced schema (``references``: ``{name, subject, version}``, where ``name`` is the URI the
``$ref`` uses, e.g. ``"address.json"`` or ``"address.json#/$defs/City"``). Nothing is fetched
from the network: a ``$ref`` to a URL that no reference names is an invalid schema, as is a
*reference cycle* (``$ref``s, ``allOf``/``anyOf``/``oneOf``, ``not``, ``if``/``then``/``else``
that lead back to where they started without consuming any of the instance: a validator of
such a schema recurses for ever).

Canonical text: compact JSON in the document's own key order (Confluent's
``JsonSchema.canonicalString()``: Jackson re-serialising the tree). Normalized
(``normalize=true``): keys sorted at every level (Confluent's ordered-properties mapper).
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

import jsonschema
import jsonschema.exceptions
import referencing
import referencing.exceptions
import referencing.jsonschema
from jsonschema import validators
from seaway.schema_registry.errors import invalid_schema
from seaway.schema_registry.nesting import MAX_JSON_DEPTH, json_depth_exceeds

if TYPE_CHECKING:
    from referencing._core import Resolver

__all__ = ["SCHEMA_TYPE_JSON", "JsonModel", "dumps_compact", "parse_json_schema", "validate_instance"]

SCHEMA_TYPE_JSON = "JSON"
# Keywords whose subschemas apply to the *same* instance: a cycle through only these never ends.
_IN_PLACE_LISTS = ("allOf", "anyOf", "oneOf")
_IN_PLACE_ONE = ("not", "if", "then", "else")
_MAX_NODES = 200_000


def dumps_compact(value: Any, *, sort_keys: bool = False) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, sort_keys=sort_keys, allow_nan=False)


def _validator_class(data: Any) -> Any:
    return validators.validator_for(data, default=jsonschema.Draft7Validator)


def _specification(data: Any) -> referencing.Specification[Any]:
    """The dialect ``$schema`` names (with or without its trailing ``#``), else draft 7."""
    dialect = data.get("$schema") if isinstance(data, dict) else None
    if not isinstance(dialect, str):
        return referencing.jsonschema.DRAFT7
    for candidate in (dialect, dialect.rstrip("#"), dialect.rstrip("#") + "#"):
        try:
            return referencing.jsonschema.specification_with(candidate)
        except referencing.exceptions.CannotDetermineSpecification:
            continue
    return referencing.jsonschema.DRAFT7


@dataclass(frozen=True, eq=False)
class JsonModel:
    """A parsed schema: its JSON data, the registry of referenced documents, the validator class."""

    data: Any
    registry: referencing.Registry[Any]
    validator_class: Any
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @cached_property
    def validator(self) -> Any:
        """A ``jsonschema`` validator for instances (what the serdes check values with)."""
        with self._lock:
            return self.validator_class(self.data, registry=self.registry)

    def resolver(self) -> Resolver[Any]:
        return self.registry.resolver("")

    @property
    def title(self) -> str | None:
        title = self.data.get("title") if isinstance(self.data, dict) else None
        return title if isinstance(title, str) else None


def _loads(text: str) -> Any:
    if json_depth_exceeds(text):
        raise invalid_schema(f"the schema nests deeper than {MAX_JSON_DEPTH} levels")
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise invalid_schema(f"Invalid JSON: {exc}") from None


def parse_json_schema(
    text: str, references: Sequence[tuple[str, str]] = (),
) -> tuple[JsonModel, str, str]:
    """Validate a JSON Schema text; returns its model, canonical text and normalized text.

    ``references``: ``(name, schema text)`` of every referenced schema, transitively.
    Raises :class:`~seaway.schema_registry.errors.RegistryError` 42201 naming the problem.
    """
    data = _loads(text)
    if not isinstance(data, dict | bool):
        raise invalid_schema(f"A JSON Schema must be an object or a boolean, not {type(data).__name__}")
    _check_metaschema(data, "schema")
    root_spec = _specification(data)
    resources: list[tuple[str, referencing.Resource[Any]]] = []
    documents: list[tuple[str, Any]] = []
    for name, ref_text in references:
        ref_data = _loads(ref_text)
        if not isinstance(ref_data, dict | bool):
            raise invalid_schema(f"Referenced schema {name!r} is not a JSON Schema")
        resource = referencing.Resource.from_contents(ref_data, default_specification=_specification(ref_data))
        resources.append((name, resource))
        documents.append((name, ref_data))
    root = referencing.Resource.from_contents(data, default_specification=root_spec)
    root_id = root.id() or ""
    registry: referencing.Registry[Any] = referencing.Registry()
    for name, resource in resources:
        registry = registry.with_resource(name, resource)
        resolved_name = _join(root_id, name)
        if resolved_name != name:  # as Confluent: a reference name resolves against the root's $id
            registry = registry.with_resource(resolved_name, resource)
    registry = registry.with_resource("", root)
    if root_id:
        registry = registry.with_resource(root_id, root)
    # Without a $ref nothing needs resolving, and no cycle can form (each needs a $ref).
    if '"$ref"' in text or any('"$ref"' in ref_text for _, ref_text in references):
        try:
            registry = registry.crawl()
        except (referencing.exceptions.Unresolvable, ValueError) as exc:
            raise invalid_schema(f"Invalid JSON Schema: {exc}") from None
        _check_references(data, registry.resolver(""), "schema")
        for name, ref_data in documents:
            _check_references(ref_data, registry.resolver(name), f"reference {name}")
    try:
        canonical = dumps_compact(data)
        normalized = dumps_compact(data, sort_keys=True)
    except ValueError as exc:  # NaN / Infinity are not JSON
        raise invalid_schema(f"Invalid JSON: {exc}") from None
    return JsonModel(data, registry, _validator_class(data)), canonical, normalized


def _join(base: str, name: str) -> str:
    if not base:
        return name
    from urllib.parse import urljoin

    return urljoin(base, name)


_META: dict[Any, Any] = {}
_VALID_PROPERTIES: dict[tuple[Any, str], bool] = {}
_MAX_REMEMBERED = 20_000


def _meta_validator(cls: Any) -> Any:
    """One metaschema validator per dialect, reused (``check_schema`` builds one per call)."""
    found = _META.get(cls)
    if found is None:
        found = _META[cls] = validators.validator_for(cls.META_SCHEMA, default=cls)(cls.META_SCHEMA)
    return found


def _check_metaschema(data: Any, where: str) -> None:
    """Validate ``data`` against its dialect's metaschema, as ``check_schema`` does.

    The metaschema validates each ``properties`` value as a schema in its own right, so each
    is checked on its own, and one already found valid (by its JSON text) is not walked again:
    the versions of a subject, and the subjects of one registry, share most of their property
    definitions, and the metaschema walk costs ~0.1 ms a property in Python.
    """
    cls = _validator_class(data)
    meta = _meta_validator(cls)
    try:
        properties = data.get("properties") if isinstance(data, dict) else None
        if isinstance(properties, dict):
            for name, sub_schema in properties.items():
                key = (cls, dumps_compact(sub_schema))
                if key not in _VALID_PROPERTIES:
                    _raise_first(meta, sub_schema, f"properties/{name}/")
                    if len(_VALID_PROPERTIES) >= _MAX_REMEMBERED:
                        _VALID_PROPERTIES.clear()
                    _VALID_PROPERTIES[key] = True
            data = {**data, "properties": {}}  # checked above; any property name is valid
        _raise_first(meta, data, "")
    except jsonschema.SchemaError as exc:
        raise invalid_schema(f"Invalid JSON Schema ({where}, at '#/{exc.message}") from None
    except RecursionError:
        raise invalid_schema(f"the schema nests deeper than {MAX_JSON_DEPTH} levels") from None
    except ValueError:  # a value JSON cannot hold (a float NaN): reported as the JSON it is not
        raise invalid_schema("Invalid JSON: out of range float values are not JSON compliant") from None


def _raise_first(meta: Any, data: Any, prefix: str) -> None:
    error = jsonschema.exceptions.best_match(meta.iter_errors(data))
    if error is not None:
        path = prefix + "/".join(str(p) for p in error.absolute_path)
        raise jsonschema.SchemaError(f"{path}'): {error.message}")


def _check_references(data: Any, resolver: Resolver[Any], where: str) -> None:
    """Every ``$ref`` resolves, and no chain of in-place applicators loops (see the module doc)."""
    edges: dict[int, list[int]] = {}
    nodes: dict[int, Any] = {}

    def visit(node: Any, scope: Resolver[Any], path: str) -> None:
        stack: list[tuple[Any, Resolver[Any], str]] = [(node, scope, path)]
        while stack:
            current, scope, path = stack.pop()
            if not isinstance(current, dict):
                if isinstance(current, list):
                    stack.extend((item, scope, f"{path}/{i}") for i, item in enumerate(current))
                continue
            if len(nodes) > _MAX_NODES:
                raise invalid_schema(f"the schema has more than {_MAX_NODES} subschemas")
            if id(current) in nodes:
                continue
            nodes[id(current)] = current
            sub_id = current.get("$id") if isinstance(current.get("$id"), str) else None
            if sub_id is not None:
                with contextlib.suppress(referencing.exceptions.Unresolvable, ValueError, TypeError):
                    scope = scope.in_subresource(referencing.Resource.from_contents(
                        current, default_specification=referencing.jsonschema.DRAFT7))
            targets = edges.setdefault(id(current), [])
            ref = current.get("$ref")
            if isinstance(ref, str):
                try:
                    resolved = scope.lookup(ref)
                except referencing.exceptions.Unresolvable as exc:
                    raise invalid_schema(f"Unresolvable $ref {ref!r} at '{path}' in the {where}: {exc}") from None
                targets.append(id(resolved.contents))
                if id(resolved.contents) not in nodes:
                    stack.append((resolved.contents, resolved.resolver, f"{path}/$ref({ref})"))
            for key in _IN_PLACE_LISTS:
                items = current.get(key)
                if isinstance(items, list):
                    targets.extend(id(item) for item in items)
            for key in _IN_PLACE_ONE:
                if key in current:
                    targets.append(id(current[key]))
            for key, value in current.items():
                if key not in ("enum", "const", "default", "examples") and isinstance(value, dict | list):
                    stack.append((value, scope, f"{path}/{key}"))

    visit(data, resolver, "#")
    cycle = _find_cycle(edges)
    if cycle:
        raise invalid_schema(f"reference cycle in the {where}: a chain of $ref/allOf/anyOf/oneOf/not/if "
                             "leads back to itself without consuming the instance")


def _find_cycle(edges: Mapping[int, Sequence[int]]) -> bool:
    """Whether the directed graph has a cycle (iterative three-colour DFS)."""
    state: dict[int, int] = {}
    for start in edges:
        if state.get(start):
            continue
        stack: list[tuple[int, Iterator[int]]] = [(start, iter(edges.get(start, ())))]
        state[start] = 1
        while stack:
            node, children = stack[-1]
            child = next(children, None)
            if child is None:
                state[node] = 2
                stack.pop()
            elif state.get(child) == 1:
                return True
            elif not state.get(child):
                state[child] = 1
                stack.append((child, iter(edges.get(child, ()))))
    return False


def validate_instance(model: JsonModel, value: Any, on_error: Callable[[str], Exception]) -> None:
    """Raise ``on_error(message)`` when ``value`` does not match the schema (first error, with its path)."""
    error = next(iter(model.validator.iter_errors(value)), None)
    if error is not None:
        path = "/".join(str(p) for p in error.absolute_path)
        raise on_error(f"{error.message} (at '#/{path}')")
