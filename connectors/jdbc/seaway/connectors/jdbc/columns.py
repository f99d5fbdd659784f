"""Column metadata to Connect schemas, and row values to Connect values (Confluent's ``SchemaMapping``).

A column is first classified into a :class:`Kind` from SQLAlchemy's reflected type (tables)
or from the driver's cursor description (``query`` mode), then mapped as Confluent maps JDBC
types:

==================================  =================================================
column                              Connect schema
==================================  =================================================
BOOLEAN (MariaDB ``TINYINT(1)``)    BOOLEAN
TINYINT / SMALLINT / INT / BIGINT   INT8 / INT16 / INT32 / INT64 (unsigned: one wider);
                                    in SQLite all INT64 (a declared width constrains nothing)
REAL (FLOAT) / DOUBLE               FLOAT32 / FLOAT64 (SQLite's REAL is FLOAT64)
NUMERIC / DECIMAL(p, s)             Decimal(s) with ``connect.decimal.precision=p``, or
                                    by ``numeric.mapping`` (below); no declared scale: 127
CHAR / VARCHAR / TEXT / UUID / JSON STRING
BINARY / VARBINARY / BLOB / BYTEA   BYTES
DATE / TIME / TIMESTAMP             Date / Time / Timestamp (an instant: naive values are
                                    wall-clock time in ``db.timezone``)
anything else                       left out of the record, with a warning (as Confluent)
==================================  =================================================

``numeric.mapping`` (NUMERIC columns; MariaDB's DECIMAL stays Decimal, as in Confluent,
whose MySQL driver reports it as DECIMAL): ``none`` Decimal; ``precision_only`` scale 0 and
precision <= 18 to the smallest INT8..INT64 that holds the precision; ``best_fit`` that, or
FLOAT64 when precision <= 18 and scale > 0; ``best_fit_eager_double`` FLOAT64 for any scale > 0.

Values are converted per column and only where the driver's value is not already the
Connect value (ints and strings pass untouched), so a batch of rows costs a few list
operations, not a Python call per value.
"""

from __future__ import annotations

import datetime
import decimal
import enum
import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy.types as sat
from seaway.connect.api import DataError, Date, Decimal, Schema, SchemaBuilder, Time, Timestamp
from seaway.connectors.jdbc.dialect import Dialect, parse_timestamp
from sqlalchemy.dialects import mysql as sa_mysql

__all__ = ["Column", "Kind", "RowMapper", "column_from_description", "column_from_reflection", "parse_timestamp"]

log = logging.getLogger(__name__)

PRECISION_PARAMETER = "connect.decimal.precision"
SCALE_UNKNOWN = 127  # Confluent's NUMERIC_TYPE_SCALE_HIGH: a NUMERIC without a declared scale
MAX_INTEGER_PRECISION = 18


class Kind(enum.Enum):
    BOOLEAN = "boolean"
    INT8 = "int8"
    INT16 = "int16"
    INT32 = "int32"
    INT64 = "int64"
    FLOAT32 = "float32"
    FLOAT64 = "float64"
    NUMERIC = "numeric"   # numeric.mapping applies
    DECIMAL = "decimal"   # always Decimal
    STRING = "string"
    BYTES = "bytes"
    DATE = "date"
    TIME = "time"
    TIMESTAMP = "timestamp"


@dataclass(frozen=True, slots=True)
class Column:
    """One column as the source sees it; ``zoned``: a timestamp column holding instants (timestamptz)."""

    name: str
    kind: Kind | None  # None: unsupported, left out
    nullable: bool = True
    precision: int = 0
    scale: int | None = None
    zoned: bool = False
    type_name: str = ""
    native_string: bool = False  # the driver already returns ``str`` (text types)


def column_from_reflection(dialect_name: str, info: dict[str, Any]) -> Column:
    """A column from ``Inspector.get_columns`` (SQLAlchemy types)."""
    name, t, nullable = info["name"], info["type"], bool(info.get("nullable", True))
    kind: Kind | None
    precision, scale, zoned = 0, None, False
    unsigned = bool(getattr(t, "unsigned", False))
    if (isinstance(t, sa_mysql.TINYINT) and getattr(t, "display_width", None) == 1) or isinstance(t, sat.Boolean):
        kind = Kind.BOOLEAN
    elif isinstance(t, sat.Integer) and dialect_name == "sqlite":
        kind = Kind.INT64  # a declared width constrains nothing in SQLite: every integer is 64-bit
    elif isinstance(t, sa_mysql.TINYINT):
        kind = Kind.INT16 if unsigned else Kind.INT8
    elif isinstance(t, sat.BigInteger):
        kind = Kind.INT64
    elif isinstance(t, sat.SmallInteger):
        kind = Kind.INT32 if unsigned else Kind.INT16
    elif isinstance(t, sa_mysql.MEDIUMINT):
        kind = Kind.INT32
    elif isinstance(t, sat.Integer):
        kind = Kind.INT64 if unsigned else Kind.INT32
    elif isinstance(t, sat.Float):
        single = isinstance(t, sat.REAL) or type(t) is sa_mysql.FLOAT
        kind = Kind.FLOAT32 if single and dialect_name != "sqlite" else Kind.FLOAT64
    elif isinstance(t, sat.Numeric):
        precision, scale = t.precision or 0, t.scale
        kind = Kind.DECIMAL if dialect_name in ("mysql", "mariadb") else Kind.NUMERIC
    elif isinstance(t, sat.DateTime):
        kind, zoned = Kind.TIMESTAMP, bool(getattr(t, "timezone", False)) or isinstance(t, sa_mysql.TIMESTAMP)
    elif isinstance(t, sat.Date):
        kind = Kind.DATE
    elif isinstance(t, sat.Time):
        kind = Kind.TIME
    # SQLAlchemy's private _Binary is the one base of every binary type (LargeBinary, BINARY, VARBINARY,
    # MySQL's TINY/MEDIUM/LONGBLOB, Oracle's RAW...): no public class covers them all
    elif isinstance(t, sat._Binary):  # noqa: SLF001 - see above
        kind = Kind.BYTES
    elif isinstance(t, sat.String | sat.Uuid | sat.JSON | sat.Enum):
        kind = Kind.STRING
    elif isinstance(t, sa_mysql.YEAR):
        kind = Kind.INT32
    else:
        kind = None
    return Column(name, kind, nullable, precision, scale, zoned, str(t), isinstance(t, sat.String))


# PostgreSQL type OIDs (pg_type) as psycopg's cursor.description reports them
_PG_OIDS: dict[int, Kind] = {
    16: Kind.BOOLEAN, 17: Kind.BYTES, 18: Kind.STRING, 19: Kind.STRING, 20: Kind.INT64, 21: Kind.INT16,
    23: Kind.INT32, 25: Kind.STRING, 26: Kind.INT64, 114: Kind.STRING, 700: Kind.FLOAT32, 701: Kind.FLOAT64,
    1042: Kind.STRING, 1043: Kind.STRING, 1082: Kind.DATE, 1083: Kind.TIME, 1114: Kind.TIMESTAMP,
    1184: Kind.TIMESTAMP, 1700: Kind.NUMERIC, 2950: Kind.STRING, 3802: Kind.STRING,
}
# MySQL protocol field types as PyMySQL's cursor.description reports them
_MYSQL_TYPES: dict[int, Kind] = {
    0: Kind.DECIMAL, 1: Kind.INT8, 2: Kind.INT16, 3: Kind.INT32, 4: Kind.FLOAT32, 5: Kind.FLOAT64,
    7: Kind.TIMESTAMP, 8: Kind.INT64, 9: Kind.INT32, 10: Kind.DATE, 11: Kind.TIME, 12: Kind.TIMESTAMP,
    13: Kind.INT32, 15: Kind.STRING, 245: Kind.STRING, 246: Kind.DECIMAL, 247: Kind.STRING, 248: Kind.STRING,
    249: Kind.BYTES, 250: Kind.BYTES, 251: Kind.BYTES, 252: Kind.BYTES, 253: Kind.STRING, 254: Kind.STRING,
}


def column_from_description(dialect_name: str, entry: Sequence[Any], declared: str | None = None) -> Column:
    """A column of a ``query``'s result, from the driver's cursor description (nullable: unknown, so yes).

    SQLite reports no types: ``declared`` is the column's declared type when the query selects
    a table column directly (read through a temporary view), else the column is a STRING.
    """
    name, code = entry[0], entry[1]
    if dialect_name == "postgresql":
        kind = _PG_OIDS.get(code)
        precision, scale = entry[4] or 0, entry[5]
        if kind is Kind.NUMERIC and not precision:
            scale = None
        return Column(name, kind, True, precision, scale, zoned=code == 1184, type_name=f"oid {code}",
                      native_string=code in (18, 19, 25, 1042, 1043))
    if dialect_name in ("mysql", "mariadb"):
        kind = _MYSQL_TYPES.get(code)
        if code in (249, 250, 251, 252, 253, 254):
            kind = Kind.BYTES if _mysql_binary(entry) else Kind.STRING
        precision, scale = entry[4] or 0, entry[5]
        return Column(name, kind, bool(entry[6]) if entry[6] is not None else True, precision, scale,
                      zoned=code == 7, type_name=f"field type {code}", native_string=kind is Kind.STRING
                      and code not in (245, 247, 248))
    if declared:
        return column_from_reflection("sqlite", {"name": name, "type": _sqlite_type(declared), "nullable": True})
    return Column(name, Kind.STRING, True, type_name="untyped")


def _mysql_binary(entry: Sequence[Any]) -> bool:
    """The querier appends each MySQL field's character set number; 63 is ``binary``."""
    return len(entry) > 7 and entry[7] == 63


def _sqlite_type(declared: str) -> Any:
    from sqlalchemy.dialects.sqlite.base import SQLiteDialect

    # how SQLAlchemy's own reflection maps a declared type (SQLite's affinity rules); it has no public API for it
    resolve: Any = SQLiteDialect()._resolve_type_affinity  # noqa: SLF001 - see above
    return resolve(declared)


# -- schemas ----------------------------------------------------------------------------------------

def _int_for_precision(precision: int) -> Kind:
    if precision > 9:
        return Kind.INT64
    if precision > 4:
        return Kind.INT32
    if precision > 2:
        return Kind.INT16
    return Kind.INT8


def effective_kind(column: Column, numeric_mapping: str) -> Kind | None:
    """The column's kind after ``numeric.mapping``."""
    kind = column.kind
    if kind is not Kind.NUMERIC:
        return kind
    precision, scale = column.precision, column.scale if column.scale is not None else 0
    if numeric_mapping == "precision_only":
        if scale == 0 and 0 < precision <= MAX_INTEGER_PRECISION:
            return _int_for_precision(precision)
    elif numeric_mapping == "best_fit":
        if 0 < precision <= MAX_INTEGER_PRECISION:
            if scale <= 0:
                return _int_for_precision(precision)
            return Kind.FLOAT64
    elif numeric_mapping == "best_fit_eager_double":
        if scale <= 0 and 0 < precision <= MAX_INTEGER_PRECISION:
            return _int_for_precision(precision)
        if scale > 0:
            return Kind.FLOAT64
    return Kind.DECIMAL


_PRIMITIVE: dict[Kind, Schema] = {
    Kind.BOOLEAN: Schema.BOOLEAN_SCHEMA, Kind.INT8: Schema.INT8_SCHEMA, Kind.INT16: Schema.INT16_SCHEMA,
    Kind.INT32: Schema.INT32_SCHEMA, Kind.INT64: Schema.INT64_SCHEMA, Kind.FLOAT32: Schema.FLOAT32_SCHEMA,
    Kind.FLOAT64: Schema.FLOAT64_SCHEMA, Kind.STRING: Schema.STRING_SCHEMA, Kind.BYTES: Schema.BYTES_SCHEMA,
}
_OPTIONAL: dict[Kind, Schema] = {
    Kind.BOOLEAN: Schema.OPTIONAL_BOOLEAN_SCHEMA, Kind.INT8: Schema.OPTIONAL_INT8_SCHEMA,
    Kind.INT16: Schema.OPTIONAL_INT16_SCHEMA, Kind.INT32: Schema.OPTIONAL_INT32_SCHEMA,
    Kind.INT64: Schema.OPTIONAL_INT64_SCHEMA, Kind.FLOAT32: Schema.OPTIONAL_FLOAT32_SCHEMA,
    Kind.FLOAT64: Schema.OPTIONAL_FLOAT64_SCHEMA, Kind.STRING: Schema.OPTIONAL_STRING_SCHEMA,
    Kind.BYTES: Schema.OPTIONAL_BYTES_SCHEMA,
}


def field_schema(column: Column, kind: Kind) -> Schema:
    optional = column.nullable
    if kind in _PRIMITIVE:
        return _OPTIONAL[kind] if optional else _PRIMITIVE[kind]
    if kind is Kind.DECIMAL:
        scale = SCALE_UNKNOWN if column.scale is None or (column.precision == 0 and column.scale == 0) \
            else column.scale
        builder = Decimal.builder(scale).parameter(PRECISION_PARAMETER, str(column.precision))
    elif kind is Kind.DATE:
        builder = Date.builder()
    elif kind is Kind.TIME:
        builder = Time.builder()
    else:
        builder = Timestamp.builder()
    return (builder.optional() if optional else builder).build()


# -- values -----------------------------------------------------------------------------------------

def _to_float(v: Any) -> float:
    return float(v)


def _to_int(v: Any) -> int:
    return int(v)


def _to_bool(v: Any) -> bool:
    return bool(v)


def _to_bytes(v: Any) -> bytes:
    if isinstance(v, bytes):
        return v
    if isinstance(v, bytearray | memoryview):
        return bytes(v)
    if isinstance(v, str):
        return v.encode()
    raise DataError(f"cannot read {type(v).__name__} as bytes")


def _to_string(v: Any) -> str:
    if isinstance(v, str):
        return v
    if isinstance(v, dict | list):
        return json.dumps(v, separators=(",", ":"), ensure_ascii=False)
    if isinstance(v, bytes):
        return v.decode()
    return str(v)


def _to_decimal(v: Any) -> decimal.Decimal:
    if isinstance(v, decimal.Decimal):
        result = v
    elif isinstance(v, float):
        result = decimal.Decimal(repr(v))
    else:
        result = decimal.Decimal(v if isinstance(v, int) else str(v))
    if not result.is_finite():
        raise DataError(f"{result} cannot be a Connect Decimal")
    return result


def _to_date(v: Any) -> datetime.date:
    if isinstance(v, datetime.datetime):
        return v.date()
    if isinstance(v, datetime.date):
        return v
    return datetime.date.fromisoformat(str(v)[:10])


def _to_time(v: Any) -> datetime.time:
    if isinstance(v, datetime.time):
        return v.replace(tzinfo=None) if v.utcoffset() is None else _utc_time(v)
    if isinstance(v, datetime.timedelta):  # PyMySQL reads TIME as a duration
        seconds = v.total_seconds()
        if not 0 <= seconds < 86400:
            raise DataError(f"TIME value {v} is not a time of day")
        return (datetime.datetime.min + v).time()
    return datetime.time.fromisoformat(str(v))


def _utc_time(v: datetime.time) -> datetime.time:
    moment = datetime.datetime.combine(datetime.date(2000, 1, 1), v).astimezone(datetime.UTC)
    return moment.time()


def converter(kind: Kind, column: Column, dialect: Dialect) -> Callable[[Any], Any] | None:
    """How a driver value of ``column`` becomes the Connect value of ``kind`` (None: it already is)."""
    raw = column.kind
    if kind in (Kind.INT8, Kind.INT16, Kind.INT32, Kind.INT64):
        return _to_int if raw in (Kind.NUMERIC, Kind.DECIMAL, Kind.BOOLEAN) else None
    if kind in (Kind.FLOAT32, Kind.FLOAT64):
        return _to_float if raw in (Kind.NUMERIC, Kind.DECIMAL) else None
    if kind is Kind.BOOLEAN:
        return None if dialect.name == "PostgreSQL" else _to_bool
    if kind is Kind.DECIMAL:
        return _to_decimal
    if kind is Kind.STRING:
        return None if column.native_string else _to_string
    if kind is Kind.BYTES:
        return _to_bytes
    if kind is Kind.DATE:
        return _to_date
    if kind is Kind.TIME:
        return _to_time
    return dialect.timestamp_reader(column.zoned)


class RowMapper:
    """Rows of one result shape to Connect values: the STRUCT schema and a per-batch conversion."""

    def __init__(self, struct_name: str | None, columns: Sequence[Column], dialect: Dialect,
                 numeric_mapping: str) -> None:
        builder = SchemaBuilder.struct()
        if struct_name:
            builder.name(struct_name)
        self.indexes: list[int] = []
        self.columns: list[Column] = []
        converters: list[tuple[int, Callable[[Any], Any]]] = []
        for index, column in enumerate(columns):
            kind = effective_kind(column, numeric_mapping)
            if kind is None:
                log.warning("Column %r of type %s is not supported and is left out of the records",
                            column.name, column.type_name)
                continue
            builder.field(column.name, field_schema(column, kind))
            conv = converter(kind, column, dialect)
            if conv is not None:
                converters.append((len(self.indexes), conv))
            self.indexes.append(index)
            self.columns.append(column)
        self.schema = builder.build()
        self.converters = converters
        self.all_columns = len(self.indexes) == len(columns)

    def values(self, rows: Sequence[Sequence[Any]]) -> list[list[Any]]:
        """Each row's Connect values in field order (DataError naming the column on a bad value)."""
        if self.all_columns:
            out = [list(row) for row in rows]
        else:
            indexes = self.indexes
            out = [[row[i] for i in indexes] for row in rows]
        for position, conv in self.converters:
            try:
                for values in out:
                    value = values[position]
                    if value is not None:
                        values[position] = conv(value)
            except (ValueError, TypeError, ArithmeticError, DataError) as e:
                raise DataError(f"Column {self.columns[position].name!r}: cannot read value "
                                f"{_short(values[position])} as {self.schema.field_list[position].schema!r}: "
                                f"{e}") from e
        return out


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
