"""Fusion hooks: how a built-in SMT describes its step to the runtime's fused runs (internal).

Why: each SMT is a Python call chain that reads the operating side, looks up its schema
cache, copies the values into a new Struct or dict and copies the record (Kafka's
``newRecord``). Five of them cost more than converting and producing the record. The Connect
runtime's pipeline (``seaway.connect.runtime.pipeline.fusion``) therefore compiles a run of
consecutive built-in SMTs without predicates into *one* generated function per input shape.
This module is the SMT side of that contract, so the SMTs never import the runtime (and the
runtime never imports them: it finds the hooks on the instances it was given).

A built-in SMT that supports fusion defines two methods:

* ``fusion_sides() -> tuple[str, ...]``: the record sides (``"key"``, ``"value"``) whose
  shape the compiled code depends on (none for a router);
* ``fuse(ctx: FusionContext) -> bool``: given the record at that point of the run *as known at
  compile time* (each side's kind and schema, and per field the local variable that will hold
  its value at run time), emit the few lines of Python that compute its changed values. The
  SMT asks its own schema cache for the derived schema, so the fused path hands out the very
  same schema objects as the stage-by-stage path. ``False`` means "not for this shape": the
  shape then runs stage by stage.

Exactness is the runtime's job: compiled code checks the shape it was compiled for and gives
up otherwise, and a record whose compiled step raises runs through the stages one by one, so
results and errors are always the SMTs' own. Nothing here is plugin API.
"""

from __future__ import annotations

from typing import Any, Protocol

from seaway.connect.api import ConnectRecord, Schema, SchemaType

__all__ = ["MAP", "NULL", "OPAQUE", "STRUCT", "FusionContext", "FusionSide", "schema_hint", "type_hint"]

STRUCT, MAP, NULL, OPAQUE = "struct", "map", "null", "opaque"
"""A side's kind: a Struct of a known schema, a schemaless dict, a null (tombstone) side, or a side
no stage of the run touches."""

# Python type of a plain (non-logical) schema's values: the hint for type-specialised code.
_PY_TYPE = {SchemaType.INT8: int, SchemaType.INT16: int, SchemaType.INT32: int, SchemaType.INT64: int,
            SchemaType.FLOAT32: float, SchemaType.FLOAT64: float, SchemaType.BOOLEAN: bool,
            SchemaType.STRING: str}


def schema_hint(schema: Schema | None) -> type | None:
    """The Python type a validated value of ``schema`` has, if it is one plain type."""
    if schema is None or schema.name is not None:
        return None
    return _PY_TYPE.get(schema.type)


def type_hint(schema_type: SchemaType) -> type | None:
    """The Python type of values of a plain schema of ``schema_type``."""
    return _PY_TYPE.get(schema_type)


class FusionSide(Protocol):
    """The key or the value at one point of a fused run, as known at compile time.

    ``kind`` is one of :data:`STRUCT` (``schema``, and one atom per field in ``fields``),
    :data:`MAP` (``items`` maps each key to its atom, in the dict's order), :data:`NULL`
    (``schema`` is the record's) or :data:`OPAQUE`. An *atom* is a local variable or constant
    name of the generated code.
    """

    name: str
    kind: str
    schema: Schema | None
    fields: list[str]
    items: dict[Any, str]


class FusionContext(Protocol):
    """The code generator of one shape of one run, as an SMT's ``fuse`` sees it.

    The generated function takes the record ``r`` and has the locals ``t`` (the topic; read
    :attr:`topic`, routers re-bind it), ``ts`` (the timestamp) and ``p`` (the Kafka partition).
    Every value an SMT computes is bound to a fresh local with :meth:`let`.
    """

    topic: str
    record_type: type[ConnectRecord]

    def side(self, on_key: bool) -> FusionSide: ...

    def read_struct(self, side: FusionSide, replace_null_with_default: bool) -> list[str]:
        """The side's field atoms as an SMT reads them: nulls as defaults if asked."""
        ...

    def set_struct(self, side: FusionSide, schema: Schema, atoms: list[str]) -> None:
        """The side becomes a Struct of ``schema`` over ``atoms`` (values valid for their fields)."""
        ...

    def set_map(self, side: FusionSide, items: dict[Any, str]) -> None:
        """The side becomes a new dict of ``items`` (key -> atom, in order)."""
        ...

    def set_topic(self, atom: str) -> None: ...

    def const(self, value: Any) -> str:
        """An expression for ``value``: a literal for plain constants, else a name bound to it."""
        ...

    def let(self, expr: str, hint: type | None = None, nonnull: bool = False) -> str:
        """Bind ``expr`` to a fresh local; ``hint``: the Python type its value usually has."""
        ...

    def emit(self, line: str) -> None:
        """Append one statement (bind new values with :meth:`let`)."""
        ...

    def hint(self, atom: str) -> type | None: ...

    def is_nonnull(self, atom: str) -> bool: ...

    def guard(self, condition: str) -> None:
        """Give up on a record (it then runs stage by stage) unless ``condition`` holds."""
        ...

    def has_partition(self) -> bool:
        """Whether the record has a Kafka partition; the compiled code assumes the sample's answer."""
        ...

    def has_timestamp(self) -> bool:
        """Whether the record has a timestamp; the compiled code assumes the sample's answer."""
        ...
