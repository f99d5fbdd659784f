"""Record columns (Arrow, from :mod:`seaway.connectors.lake.columns`) against a table's columns.

Both table sinks land the same columns as the Parquet sinks (one per value field, ``kafka_*`` with
``include.kafka.metadata``), with three table rules:

* **Nullability** comes from the Connect schema: a required (non-optional) field is a required column
  when the sink creates the table (``iceberg.tables.schema-force-optional`` makes them all optional).
* **Timestamps** are microseconds (Iceberg's ``timestamptz`` and Delta's ``timestamp`` both are).
* **Evolution**, when enabled: a field the table lacks becomes an optional column, ``int`` widens to
  ``long`` and ``float`` to ``double``, a required column may become optional. Any other type change is
  *incompatible*: the task fails with a message naming the column, the table's type and the record's,
  and writes nothing of those records. Without evolution, extra fields are left out and a missing
  optional column is null.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import pyarrow as pa
from seaway.connect.api import DataError, Schema, SchemaType

__all__ = ["SchemaChange", "compare", "creation_schema", "normalize", "project", "required_columns"]

_METADATA_REQUIRED = ("kafka_topic", "kafka_partition", "kafka_offset")
_INTS = (pa.int8(), pa.int16(), pa.int32(), pa.int64())


def required_columns(schema: Schema | None, include_metadata: bool) -> set[str]:
    """Top-level columns that are required: non-optional struct fields (or ``value`` of a required schema)."""
    out: set[str] = set(_METADATA_REQUIRED) if include_metadata else set()
    if schema is None:
        return out
    if schema.type is SchemaType.STRUCT:
        out.update(f.name for f in schema.fields if not f.schema.optional)
    elif not schema.optional:
        out.add("value")
    return out


def _us(t: pa.DataType) -> pa.DataType:
    """``t`` with timestamps in microseconds, inside lists, maps and structs too."""
    if pa.types.is_timestamp(t):
        return pa.timestamp("us", tz=t.tz)
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return pa.list_(pa.field(t.value_field.name, _us(t.value_type), t.value_field.nullable))
    if pa.types.is_map(t):
        return pa.map_(_us(t.key_type), pa.field(t.item_field.name, _us(t.item_type), t.item_field.nullable))
    if pa.types.is_struct(t):
        return pa.struct([pa.field(f.name, _us(f.type), f.nullable) for f in t])
    return t


def normalize(data: pa.Table) -> pa.Table:
    """Timestamps to microseconds (what the table formats store); other columns unchanged."""
    target = pa.schema([pa.field(f.name, _us(f.type), f.nullable) for f in data.schema])
    return data if target.equals(data.schema) else data.cast(target)


def creation_schema(data: pa.Schema, required: Iterable[str], force_optional: bool = False) -> pa.Schema:
    """The schema of a table created for these columns (nullability from ``required``, timestamps in µs)."""
    needed = set() if force_optional else set(required)
    return pa.schema([pa.field(f.name, _us(f.type), f.name not in needed) for f in data])


def _plain(t: pa.DataType) -> pa.DataType:
    """Type identity for comparisons: string and large_string, list and large_list are the same column."""
    if pa.types.is_large_string(t):
        return pa.string()
    if pa.types.is_large_binary(t):
        return pa.binary()
    return _us(t)


def _compatible(table: pa.DataType, record: pa.DataType) -> bool:
    """Whether a record column of type ``record`` can be written to a column of type ``table`` as it is."""
    table, record = _plain(table), _plain(record)
    if table.equals(record):
        return True
    if table in _INTS and record in _INTS:
        return bool(_INTS.index(record) <= _INTS.index(table))
    if pa.types.is_floating(table) and pa.types.is_floating(record):
        return bool(record.bit_width <= table.bit_width)
    if pa.types.is_floating(table) and record in _INTS:
        return False
    if pa.types.is_struct(table) and pa.types.is_struct(record):
        names = {f.name: f for f in table}
        return all(f.name in names and _compatible(names[f.name].type, f.type) for f in record)
    if (pa.types.is_list(table) or pa.types.is_large_list(table)) and (pa.types.is_list(record)
                                                                        or pa.types.is_large_list(record)):
        return _compatible(table.value_type, record.value_type)
    if pa.types.is_map(table) and pa.types.is_map(record):
        return _compatible(table.key_type, record.key_type) and _compatible(table.item_type, record.item_type)
    if pa.types.is_decimal(table) and pa.types.is_decimal(record):
        return bool(table.scale == record.scale and table.precision >= record.precision)
    return False


def _promotable(table: pa.DataType, record: pa.DataType) -> bool:
    """Whether evolution may widen ``table`` to take ``record`` (Iceberg's and Delta's safe promotions)."""
    table, record = _plain(table), _plain(record)
    if table == pa.int32() and record == pa.int64():
        return True
    if table == pa.float32() and record == pa.float64():
        return True
    if pa.types.is_struct(table) and pa.types.is_struct(record):
        names = {f.name: f for f in table}
        return all(f.name not in names or _compatible(names[f.name].type, f.type)
                   or _promotable(names[f.name].type, f.type) for f in record)
    if pa.types.is_decimal(table) and pa.types.is_decimal(record):
        return bool(table.scale == record.scale and record.precision > table.precision)
    return False


@dataclass(frozen=True, slots=True)
class SchemaChange:
    """How a record schema differs from a table's: columns to add, to widen, to make optional; what cannot be."""

    added: tuple[str, ...]
    widened: tuple[str, ...]
    loosened: tuple[str, ...]
    incompatible: tuple[str, ...]

    @property
    def needs_update(self) -> bool:
        return bool(self.added or self.widened or self.loosened)


def compare(table: pa.Schema, data: pa.Schema, nullable_data: Sequence[str] = ()) -> SchemaChange:
    """What writing ``data`` into ``table`` would change (``nullable_data``: record columns that may be null)."""
    columns = {f.name: f for f in table}
    added, widened, loosened, incompatible = [], [], [], []
    for f in data:
        current = columns.get(f.name)
        if current is None:
            added.append(f.name)
        elif not _compatible(current.type, f.type):
            if _promotable(current.type, f.type):
                widened.append(f.name)
            else:
                incompatible.append(f"{f.name}: the table has {current.type}, the record {f.type}")
        if current is not None and not current.nullable and f.name in nullable_data:
            loosened.append(f.name)
    return SchemaChange(tuple(added), tuple(widened), tuple(loosened), tuple(incompatible))


def project(data: pa.Table, target: pa.Schema, table_name: str) -> pa.Table:
    """``data`` as the table's columns: by name, cast to the table's types; a missing column is null (a
    required one is a DataError naming it), a column the table lacks is left out."""
    arrays = []
    for f in target:
        if f.name in data.column_names:
            column = data.column(f.name)
            if not column.type.equals(f.type):
                try:
                    column = column.cast(f.type)
                except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
                    raise DataError(f"Table {table_name}: cannot write column {f.name} ({column.type}) as the "
                                    f"table's {f.type}: {e}") from None
            if not f.nullable and column.null_count:
                raise DataError(f"Table {table_name}: column {f.name} is required, but {column.null_count} "
                                "records have no value for it")
            arrays.append(column)
        elif f.nullable:
            arrays.append(pa.nulls(data.num_rows, f.type))
        else:
            raise DataError(f"Table {table_name}: the records have no field for the required column {f.name}")
    return pa.Table.from_arrays(arrays, schema=target)
