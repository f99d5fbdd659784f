"""Fused SMT runs: consecutive built-in SMTs compiled into one function per input shape.

A run of two or more consecutive built-in SMTs without predicates runs as *one* generated
function per input shape: one read of the input values, one output Struct (or dict), one
record copy, the topic computed once. Each SMT contributes its step through the hooks
described in :mod:`seaway.transforms.fusion` (``fuse(ctx)`` and ``fusion_sides()``), found
on the instances: the runtime does not import the SMTs, and they do not import the runtime
(the context they are given is a :class:`FusionCompiler`, which implements their
``FusionContext`` protocol). The text is built and compiled through :mod:`seaway.codegen`.

Shapes: a Struct side is keyed by the identity of its schema (schemas are immutable, and the
compiled entry keeps the schema alive, so the id cannot be reused), a schemaless dict side by
the tuple of its keys, a null side by its schema. The record type is part of the key.

Exactness: the generated function starts by checking that the record has the shape it was
compiled for (so the last one used can simply be tried first); on any other record it
returns ``None``, and a record that makes one of its steps raise raises. Either way the
record then goes through the stages one by one, so the result, or the error and its message,
come from the real SMTs. A shape is compiled on its second sighting: a stream of
schemaless records whose keys never repeat never pays for compilation.

The generated code builds its output Struct and record copy the way the API's own fast
constructors do (slots filled directly, ``ConnectRecord``'s copy-on-write headers): that
text is the one place outside ``seaway.connect.api`` that knows those slots, and the
differential tests (``tests/connect/pipeline``, ``tests/transforms/test_chain_fusion.py``)
hold it to the stages.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from seaway.codegen import ShapeCache, Source, compile_function
from seaway.connect.api import ConnectRecord, Schema, SchemaType, Struct, Transformation

__all__ = ["FusedRun", "FusionCompiler", "Side", "is_fusable"]

Fused = Callable[[ConnectRecord], ConnectRecord | None]

STRUCT, MAP, NULL, OPAQUE = "struct", "map", "null", "opaque"  # as seaway.transforms.fusion names them
BUILTIN_PREFIX = "seaway.transforms."
"""The modules whose SMTs may join a fused run: Seaway's own (a user subclass of a built-in may
override ``apply``, or anything it relies on, and a fused run would bypass it)."""
_FUSE_HOOK = "fuse"  # the SMT's method that emits its step (seaway.transforms.fusion)
_NULL_SHAPE = object()  # marks a null side in a shape key
_UNFUSABLE = object()  # a side the generated code does not handle (a str value, a foreign Struct...)
MAX_SHAPES = 64
"""Compiled shapes kept per run (oldest evicted)."""
_MAX_SEEN = 1024  # shapes seen once, awaiting a second sighting
_LITERAL_TYPES = (str, int, bool)  # exact types whose repr() is a literal of an equal value

_PY_TYPE = {SchemaType.INT8: int, SchemaType.INT16: int, SchemaType.INT32: int, SchemaType.INT64: int,
            SchemaType.FLOAT32: float, SchemaType.FLOAT64: float, SchemaType.BOOLEAN: bool,
            SchemaType.STRING: str}


def _schema_hint(schema: Schema | None) -> type | None:
    if schema is None or schema.name is not None:
        return None
    return _PY_TYPE.get(schema.type)


def is_fusable(transformation: Transformation[Any]) -> bool:
    """Whether ``transformation`` is a built-in SMT (see :data:`BUILTIN_PREFIX`) with the fusion hooks."""
    cls = type(transformation)
    return (cls.__module__.startswith(BUILTIN_PREFIX) and callable(getattr(cls, "fuse", None))
            and callable(getattr(cls, "fusion_sides", None)))


class Side:
    """The key or the value at one point of a fused run, as known at compile time.

    ``kind`` is ``struct`` (``schema`` and one atom per field in ``fields``), ``map`` (a
    schemaless dict: ``items`` maps each key to its atom, in the dict's order), ``null``
    (a tombstone side; ``schema`` is the record's) or ``opaque`` (a side no stage of the run
    touches). An *atom* is a local variable or constant name of the generated code.
    """

    __slots__ = ("fields", "items", "kind", "name", "schema", "touched")

    def __init__(self, name: str, kind: str, schema: Schema | None) -> None:
        self.name = name  # "key" or "value": the record attribute
        self.kind = kind
        self.schema = schema
        self.fields: list[str] = []
        self.items: dict[Any, str] = {}
        self.touched = False  # a new Struct / dict must be built for the output


class FusionCompiler:
    """The code generator for one shape of one run (the SMTs' ``FusionContext``)."""

    def __init__(self, sample: ConnectRecord, touch_key: bool, touch_value: bool, label: str = "fused") -> None:
        self.sample = sample
        self.record_type = type(sample)
        self.topic = "t"
        self.changed = False
        self._source = Source(label)
        self._lines: list[str] = []
        self._hints: dict[str, type] = {"t": str}
        self._nonnull: set[str] = set()  # atoms that are never None (literals, casts of non-null values)
        self._count = 0
        self._prologue: list[str] = []
        self.guard(f"type(r) is {self.const(self.record_type)}")
        self._prologue += ["t = r.topic", "ts = r.timestamp", "p = r.kafka_partition"]
        self.key = self._side("key", sample.key_schema, sample.key, touch_key)
        self.value = self._side("value", sample.value_schema, sample.value, touch_value)

    # -- the record's sides ---------------------------------------------------------------------
    def _side(self, name: str, schema: Schema | None, value: Any, touched: bool) -> Side:
        """The side as the sample has it; the prologue checks that a record has the same shape."""
        if not touched:
            return Side(name, OPAQUE, schema)
        var, schema_attr = name[0] + "v", f"r.{name}_schema"  # kv / vv: the side's input object
        self._prologue.append(f"{var} = r.{name}")
        if value is None:
            self.guard(f"{var} is None and {schema_attr} is {self.const(schema)}")
            return Side(name, NULL, schema)
        if type(value) is Struct:
            assert schema is not None and value.schema is schema
            side = Side(name, STRUCT, schema)
            s = self.const(schema)
            self.guard(f"type({var}) is {self.const(Struct)} and {var}._schema is {s} and {schema_attr} is {s}")
            side.fields = [f"{name[0]}_{i}" for i in range(len(schema.field_list))]
            for atom, field in zip(side.fields, schema.field_list, strict=True):
                hint = _schema_hint(field.schema)
                if hint is not None:
                    self._hints[atom] = hint
            if side.fields:
                # the Struct's validated value list itself, read once (Struct.values() would copy it)
                self._prologue.append(f"{', '.join(side.fields)}, = {var}._values")
            return side
        assert type(value) is dict and schema is None
        side = Side(name, MAP, None)
        keys = tuple(value)
        self.guard(f"type({var}) is {self.const(dict)} and {schema_attr} is None and tuple({var}) == "
                   f"{self.const(keys)}")
        atoms = [f"{name[0]}_{i}" for i in range(len(value))]
        side.items = dict(zip(keys, atoms, strict=True))
        for atom, item in zip(atoms, value.values(), strict=True):
            self._hints[atom] = type(item)
        if atoms:
            self._prologue.append(f"{', '.join(atoms)}, = {var}.values()")
        return side

    def side(self, on_key: bool) -> Side:
        return self.key if on_key else self.value

    def read_struct(self, side: Side, replace_null_with_default: bool) -> list[str]:
        """The side's field atoms as an SMT reads them (``util.field_values``): nulls as defaults if asked."""
        assert side.schema is not None
        atoms = list(side.fields)
        if not replace_null_with_default:
            return atoms
        for i, field in enumerate(side.schema.field_list):
            default, atom = field.schema.default_value, atoms[i]
            if default is None or atom in self._nonnull:
                continue
            if atom == "None":
                atoms[i] = self.const(default)
            else:
                atoms[i] = self.let(f"{self.const(default)} if {atom} is None else {atom}", self.hint(atom))
            self._nonnull.add(atoms[i])
        return atoms

    def set_struct(self, side: Side, schema: Schema, atoms: list[str]) -> None:
        """The side becomes a Struct of ``schema`` over ``atoms`` (values valid for their fields)."""
        assert len(atoms) == len(schema.field_list)
        side.kind, side.schema, side.fields, side.touched = STRUCT, schema, atoms, True
        self.changed = True

    def set_map(self, side: Side, items: dict[Any, str]) -> None:
        """The side becomes a new dict of ``items`` (key -> atom, in order)."""
        side.kind, side.schema, side.items, side.touched = MAP, None, items, True
        self.changed = True

    def set_topic(self, atom: str) -> None:
        self.topic = atom
        self.changed = True

    # -- code -----------------------------------------------------------------------------------
    def const(self, value: Any) -> str:
        """An expression for ``value``: a literal for plain str/int/bool, else a global of the code."""
        if value is None:
            return "None"
        if type(value) in _LITERAL_TYPES:
            literal = repr(value)
            self._nonnull.add(literal)  # so no generated code tests a literal with "is"
            self._hints[literal] = type(value)
            return literal
        return self._source.bind(value, "C")

    def let(self, expr: str, hint: type | None = None, nonnull: bool = False) -> str:
        """Bind ``expr`` to a fresh local; ``hint``: the Python type its value usually has."""
        self._count += 1
        name = f"x{self._count}"
        self._lines.append(f"{name} = {expr}")
        if hint is not None:
            self._hints[name] = hint
        if nonnull:
            self._nonnull.add(name)
        return name

    def emit(self, line: str) -> None:
        """Append one statement to the generated code (bind new values with :meth:`let`)."""
        self._lines.append(line)

    def hint(self, atom: str) -> type | None:
        return self._hints.get(atom)

    def is_nonnull(self, atom: str) -> bool:
        return atom in self._nonnull

    def guard(self, condition: str) -> None:
        """Give up on this record (it then runs stage by stage) unless ``condition`` holds."""
        line = f"if not ({condition}): return None"
        if line not in self._prologue:
            self._prologue.append(line)

    def has_partition(self) -> bool:
        """Whether the record has a Kafka partition; the compiled code assumes the sample's answer."""
        present = self.sample.kafka_partition is not None
        self.guard("p is not None" if present else "p is None")
        return present

    def has_timestamp(self) -> bool:
        """Whether the record has a timestamp; the compiled code assumes the sample's answer."""
        present = self.sample.timestamp is not None
        self.guard("ts is not None" if present else "ts is None")
        return present

    def _output(self, side: Side, lines: list[str]) -> tuple[str, str]:
        """(schema, value) expressions of a side in the output record; appends what builds it."""
        if not side.touched:
            return f"r.{side.name}_schema", f"r.{side.name}"
        if side.kind == MAP:
            pairs = ", ".join(f"{self.const(k)}: {a}" for k, a in side.items.items())
            return "None", "{" + pairs + "}"
        assert side.schema is not None
        # Struct.from_valid_values without its checks and call: the compiler sized the list
        schema, out = self.const(side.schema), f"{side.name[0]}out"
        self._source.define("_new", object.__new__)
        self._source.define("_Struct", Struct)
        lines += [f"{out} = _new(_Struct)", f"{out}._schema = {schema}", f"{out}._values = [{', '.join(side.fields)}]"]
        return schema, out

    def source(self) -> str:
        """The generated function's source text."""
        lines = self._prologue + self._lines
        if not self.changed:
            lines.append("return r")
        else:
            key_schema, key = self._output(self.key, lines)
            value_schema, value = self._output(self.value, lines)
            lines += ["h = r._headers",  # as ConnectRecord.with_value: copy-on-write, None when empty
                      "if h is not None: h = h.duplicate() if h._headers else None",
                      f"return r._copy({self.topic}, p, {key_schema}, {key}, {value_schema}, {value}, ts, h)"]
        return "def fused(r):\n" + "".join(f"    {line}\n" for line in lines)

    def build(self) -> Fused:
        text = self.source()  # first: it may bind constants
        fn: Fused = compile_function(text, "fused", self._source.constants, self._source.label)
        return fn


class FusedRun:
    """Consecutive built-in SMTs (no predicates) applied as one compiled function per input shape.

    Callable like a stage: ``run(record)`` returns the transformed record. Records the compiled
    code does not cover go through ``transformations`` one by one, so results and errors are
    those of the stages. Used from one task thread, like the transformations themselves.
    """

    def __init__(self, transformations: Sequence[Transformation[Any]]) -> None:
        self.transformations = list(transformations)
        sides = {side for t in self.transformations for side in _sides(t)}
        self._touch_key = "key" in sides
        self._touch_value = "value" in sides
        # shape -> (compiled function or None, the input schemas: kept alive, their ids are in the key)
        self._compiled: ShapeCache[Any, tuple[Fused | None, Any]] = ShapeCache(MAX_SHAPES)
        self._seen: set[Any] = set()
        self._last_fn: Fused | None = None  # tried first: it returns None for another shape
        self.label = "+".join(type(t).__qualname__ for t in self.transformations)

    def __repr__(self) -> str:
        return f"FusedRun({self.label})"

    def shape(self, record: ConnectRecord) -> Any:
        """The compile-cache key of ``record``, or ``None`` if the generated code cannot take it."""
        value_shape = key_shape = None
        if self._touch_value:
            value_shape = _side_shape(record.value_schema, record.value)
            if value_shape is _UNFUSABLE:
                return None
        if self._touch_key:
            key_shape = _side_shape(record.key_schema, record.key)
            if key_shape is _UNFUSABLE:
                return None
        return (type(record), key_shape, value_shape)

    def __call__(self, record: ConnectRecord) -> ConnectRecord | None:
        fn = self._last_fn
        if fn is not None:  # the usual case: the shape of the previous record
            try:
                out = fn(record)
            except Exception:  # the stages raise it again, with their own message
                return self.apply_stages(record)
            if out is not None:
                return out
        return self._other_shape(record, fn)

    def _other_shape(self, record: ConnectRecord, tried: Fused | None) -> ConnectRecord | None:
        """A record the last compiled function declined: find (or compile) its shape's."""
        shape = self.shape(record)
        if shape is not None:
            entry = self._compiled.get(shape)
            fn = self._second_sighting(shape, record) if entry is None else entry[0]
            if fn is not None and fn is not tried:
                self._last_fn = fn
                try:
                    out = fn(record)
                except Exception:
                    out = None
                if out is not None:
                    return out
        return self.apply_stages(record)

    def apply_stages(self, record: ConnectRecord) -> ConnectRecord | None:
        """The stage-by-stage path (the reference semantics)."""
        for transformation in self.transformations:
            out = transformation.apply(record)
            if out is None:
                return None
            record = out
        return record

    def compiled(self, record: ConnectRecord) -> Fused | None:
        """The function compiled for ``record``'s shape (compiling it now), ``None`` if not fusable.

        For tests and debugging: ``run.compiled(r).__doc__`` is the generated source.
        """
        shape = self.shape(record)
        if shape is None:
            return None
        entry = self._compiled.get(shape)
        return self._store(shape, record) if entry is None else entry[0]

    def _second_sighting(self, shape: Any, record: ConnectRecord) -> Fused | None:
        if shape not in self._seen:
            if len(self._seen) >= _MAX_SEEN:
                self._seen.clear()
            self._seen.add(shape)
            return None  # first sighting: stage by stage, nothing compiled
        self._seen.discard(shape)
        return self._store(shape, record)

    def _store(self, shape: Any, record: ConnectRecord) -> Fused | None:
        fn = self._compile(record)
        if len(self._compiled) >= MAX_SHAPES:
            self._last_fn = None  # it may be the one evicted
        self._compiled.put(shape, (fn, (record.key_schema, record.value_schema)))
        return fn

    def _compile(self, sample: ConnectRecord) -> Fused | None:
        ctx = FusionCompiler(sample, self._touch_key, self._touch_value, f"fused {self.label}")
        for transformation in self.transformations:
            fuse: Callable[[FusionCompiler], bool] = getattr(transformation, _FUSE_HOOK)
            try:
                fused = fuse(ctx)
            except Exception:  # e.g. a schema the SMT cannot derive from: the stage reports it per record
                return None
            if not fused:
                return None
        return ctx.build()


def _sides(transformation: Transformation[Any]) -> tuple[str, ...]:
    """Which record sides an SMT reads or writes: ``key``, ``value``, or none (routers)."""
    sides: Callable[[], tuple[str, ...]] | None = getattr(transformation, "fusion_sides", None)
    return sides() if sides is not None else ()


def _side_shape(schema: Schema | None, value: Any) -> Any:
    kind = type(value)
    if kind is Struct:
        return id(schema) if value.schema is schema else _UNFUSABLE
    if kind is dict:
        return tuple(value) if schema is None else _UNFUSABLE
    if value is None:
        return (_NULL_SHAPE, id(schema))
    return _UNFUSABLE
