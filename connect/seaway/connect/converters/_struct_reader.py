"""Parsed JSON object -> Connect Struct, compiled once per STRUCT schema.

A record of a struct schema used to cost two closure calls per field (null handling, then
the type check) plus the Struct's construction; for a five-field record that was most of
the converter's time. :func:`compile_struct_reader` instead generates one function per
schema (as :mod:`dataclasses` generates ``__init__``) that, for each field, reads the
value and accepts it inline when its class is exactly what ``json`` produces for a valid
value of that field (``int`` within range, ``float``, ``str``, ``bool``; ``None`` for an
optional field without default), and converts a Timestamp or Date ``int`` inline. Anything
else -- nulls with defaults, ints for floats, strings for bytes, nested structs, arrays,
maps, Decimal and Time, wrong types -- goes
through the field's full conversion function, so the result and the errors are exactly
the slow path's, with the field's dotted path added to the error message.

The generated source contains only indices, our own integer bounds and fixed text; field
names and functions are passed in as values, never spliced into code. Both readers are built
and compiled through :mod:`seaway.codegen` (``SEAWAY_CODEGEN_DUMP`` shows their text); the
JSON converter caches them per schema.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Sequence
from typing import Any

from seaway.codegen import Source
from seaway.connect.api.data.schema import (
    DATE_LOGICAL_NAME,
    DECIMAL_LOGICAL_NAME,
    TIME_LOGICAL_NAME,
    TIMESTAMP_LOGICAL_NAME,
    Field,
    Schema,
    SchemaType,
)
from seaway.connect.api.data.struct import Struct
from seaway.connect.api.errors import DataError

__all__ = ["ExactParseNeeded", "FieldError", "compile_column_reader", "compile_struct_reader", "in_field"]

Fn = Callable[[Any], Any]

_INT_BITS = {SchemaType.INT8: 7, SchemaType.INT16: 15, SchemaType.INT32: 31, SchemaType.INT64: 63}
_LOGICAL = frozenset({DATE_LOGICAL_NAME, DECIMAL_LOGICAL_NAME, TIME_LOGICAL_NAME, TIMESTAMP_LOGICAL_NAME})
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
_EPOCH_ORDINAL = datetime.date(1970, 1, 1).toordinal()
_MS_RANGE = (-62135596800000, 253402300799999)  # epoch milliseconds of datetime.min and datetime.max (UTC)
_DAY_RANGE = (datetime.date.min.toordinal() - _EPOCH_ORDINAL, datetime.date.max.toordinal() - _EPOCH_ORDINAL)
_EXACT_CLASS = {SchemaType.FLOAT32: "float", SchemaType.FLOAT64: "float", SchemaType.STRING: "str",
                SchemaType.BOOLEAN: "bool"}


class FieldError(DataError):
    """A DataError that already names the (innermost) field it happened in."""


class ExactParseNeeded(DataError):
    """Not an error of the data: a Decimal met a number parsed as a float; parse again keeping decimals exact."""


def in_field(fn: Fn, path: str) -> Fn:
    """``fn`` whose DataErrors name ``path`` (once: an inner field's name wins)."""
    def checked(value: Any) -> Any:
        try:
            return fn(value)
        except (FieldError, ExactParseNeeded):
            raise
        except DataError as e:
            raise FieldError(f"{e} (field {path!r})") from e
    return checked


def _fast_test(schema: Schema, var: str, replace_null_with_default: bool) -> str | None:
    """A Python expression true when ``var`` is valid as is for ``schema``; ``None``: always convert."""
    if schema.name in _LOGICAL:  # Decimal, Date, Time, Timestamp: always converted
        return None
    kind = schema.type
    if kind in _INT_BITS:
        bits = _INT_BITS[kind]
        test = f"({var}.__class__ is int and {-(1 << bits)} <= {var} <= {(1 << bits) - 1})"
    elif kind in _EXACT_CLASS:
        test = f"{var}.__class__ is {_EXACT_CLASS[kind]}"
    else:
        return None
    nullable = schema.optional and (schema.default_value is None or not replace_null_with_default)
    return f"({var} is None or {test})" if nullable else test


def _field_lines(schema: Schema, var: str, fn: str, replace_null_with_default: bool) -> list[str]:
    """Code converting field value ``var`` in place: inline when its class is the common valid one, else ``fn``.

    A Timestamp or Date that is an ``int`` within Python's datetime range becomes the value
    ``Timestamp.to_logical`` / ``Date.to_logical`` give (the same arithmetic, without their calls).
    """
    if schema.name == TIMESTAMP_LOGICAL_NAME:
        return [f"if {var}.__class__ is int and {_MS_RANGE[0]} <= {var} <= {_MS_RANGE[1]}:",
                f"    {var} = EPOCH + timedelta(0, 0, 0, {var})", "else:", f"    {var} = {fn}({var})"]
    if schema.name == DATE_LOGICAL_NAME:
        return [f"if {var}.__class__ is int and {_DAY_RANGE[0]} <= {var} <= {_DAY_RANGE[1]}:",
                f"    {var} = from_ordinal({_EPOCH_ORDINAL} + {var})", "else:", f"    {var} = {fn}({var})"]
    test = _fast_test(schema, var, replace_null_with_default)
    if test is None:
        return [f"{var} = {fn}({var})"]
    return [f"if not {test}:", f"    {var} = {fn}({var})"]


_RUNTIME: dict[str, Any] = {
    "dict": dict, "isinstance": isinstance, "DataError": DataError, "new": object.__new__, "Struct": Struct,
    "EPOCH": _EPOCH, "timedelta": datetime.timedelta, "from_ordinal": datetime.date.fromordinal}
"""The names both generated readers use (field names and functions are added per schema)."""


def _field_source(label: str, fields: Sequence[Field], field_fns: list[Fn]) -> Source:
    """A :class:`Source` with field ``i``'s name bound as ``n{i}`` and its full conversion as ``f{i}``."""
    src = Source(label, _RUNTIME)
    for i, (f, fn) in enumerate(zip(fields, field_fns, strict=True)):
        src.define(f"n{i}", f.name)
        src.define(f"f{i}", fn)
    return src


def compile_struct_reader(schema: Schema, field_fns: list[Fn], replace_null_with_default: bool,
                          not_object: Fn) -> Fn:
    """A function from a parsed JSON object to a Struct of ``schema``.

    ``field_fns[i]`` is field ``i``'s full conversion (nulls, defaults, types, errors);
    ``not_object(value)`` raises the error for a value that is not a JSON object.
    """
    fields = schema.field_list
    src = _field_source(f"struct reader {schema.name}", fields, field_fns)
    src.define("not_object", not_object)
    src.define("schema", schema)
    src.lines(["def read(v):",
               "    if v.__class__ is not dict and not isinstance(v, dict):",
               "        return not_object(v)",
               "    get = v.get"])
    for i, f in enumerate(fields):
        src.line(f"x{i} = get(n{i})", 1)
        src.lines(_field_lines(f.schema, f"x{i}", f"f{i}", replace_null_with_default), 1)
    values = ", ".join(f"x{i}" for i in range(len(fields)))
    src.lines(["s = new(Struct)", "s._schema = schema", f"s._values = [{values}]", "return s"], 1)
    read: Fn = src.build("read")
    return read


def compile_column_reader(schema: Schema, field_fns: list[Fn], replace_null_with_default: bool) -> Fn:
    """A function from a list of parsed JSON objects to one list per field of ``schema``.

    Column ``i`` holds, record by record, what ``compile_struct_reader``'s Struct would hold
    in its field ``i`` (the same generated field code, so the same values), without building a
    Struct (and its value list) per record: for a sink that wants columns, those are two of
    the three objects a record cost, and with them most of the cyclic GC's work. A value
    that is not a JSON object raises :class:`DataError`, as does any field error: the caller
    takes the record-at-a-time path instead, which reports the error as it always has.
    """
    fields = schema.field_list
    src = _field_source(f"column reader {schema.name}", fields, field_fns)
    src.line("def read_columns(objects):")
    src.lines([f"c{i} = []; a{i} = c{i}.append" for i in range(len(fields))], 1)
    src.lines(["for v in objects:",
               "    if v.__class__ is not dict:",
               "        raise DataError('not a JSON object')",
               "    get = v.get"], 1)
    for i, f in enumerate(fields):
        src.line(f"x{i} = get(n{i})", 2)
        src.lines(_field_lines(f.schema, f"x{i}", f"f{i}", replace_null_with_default), 2)
        src.line(f"a{i}(x{i})", 2)
    src.line(f"return [{', '.join(f'c{i}' for i in range(len(fields)))}]", 1)
    read: Fn = src.build("read_columns")
    return read
