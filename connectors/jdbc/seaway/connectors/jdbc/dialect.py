"""What differs between PostgreSQL, MariaDB/MySQL and SQLite (Confluent's ``DatabaseDialect``).

One :class:`Dialect` per connector/task, made by :func:`dialect_for` from a SQLAlchemy engine.
SQLAlchemy gives us connections, reflection and identifier quoting; the data path uses the
driver's own cursor (psycopg 3, PyMySQL, sqlite3) because a batch of rows then costs one C
call rather than a Python object per row. So each dialect says, in its own SQL:

* how to read: a streaming cursor (a psycopg server-side cursor, a PyMySQL unbuffered
  cursor, sqlite3's own), the database's clock (``end`` of the timestamp window), and how a
  timestamp offset is bound against a column (PostgreSQL compares through the session time
  zone, set to ``db.timezone``; MariaDB binds wall-clock time: ``db.timezone`` for DATETIME,
  UTC for TIMESTAMP as the session zone is ``+00:00``; SQLite compares text normalised by
  ``strftime`` at millisecond precision);
* how to write: the upsert (``ON CONFLICT ... DO UPDATE``, ``ON DUPLICATE KEY UPDATE``,
  SQLite's ``ON CONFLICT ... DO UPDATE``), column types for ``auto.create``/``auto.evolve``
  (see docs/jdbc.md), and plain inserts (PostgreSQL through ``COPY``, the others through
  ``executemany``, which PyMySQL turns into one multi-row INSERT).
"""

from __future__ import annotations

import datetime
import importlib
import zoneinfo
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from seaway.connect.api import ConnectError, Schema, SchemaType
from seaway.connect.api.data.schema import (
    DATE_LOGICAL_NAME,
    DECIMAL_LOGICAL_NAME,
    TIME_LOGICAL_NAME,
    TIMESTAMP_LOGICAL_NAME,
)
from sqlalchemy import Engine
from sqlalchemy.pool import PoolProxiedConnection

__all__ = ["Dialect", "TableId", "dialect_for"]

UTC = datetime.UTC


@dataclass(frozen=True, slots=True, order=True)
class TableId:
    """A table: catalog (MariaDB's database), schema (PostgreSQL's schema) and name; None where unused."""

    catalog: str | None
    schema: str | None
    table: str

    @property
    def fqn(self) -> str:
        """Unquoted and dotted, as Confluent names a table in source partitions and include lists."""
        return ".".join(p for p in (self.catalog, self.schema, self.table) if p)

    def to_list(self) -> list[str | None]:
        return [self.catalog, self.schema, self.table]


class Dialect:
    """The SQL and driver details of one database kind; subclasses per database."""

    name: ClassVar[str] = "generic"
    placeholder: ClassVar[str] = "%s"

    def __init__(self, engine: Engine, db_timezone: str, quote: bool = True) -> None:
        self.engine = engine
        self.zone = zoneinfo.ZoneInfo(db_timezone)
        self.quote_identifiers = quote
        self._preparer = engine.dialect.identifier_preparer

    # -- names --------------------------------------------------------------------------------
    def quote(self, name: str) -> str:
        """An identifier, quoted unless ``quote.sql.identifiers=never``."""
        return self._preparer.quote_identifier(name) if self.quote_identifiers else name

    def table_sql(self, table: TableId) -> str:
        return ".".join(self.quote(p) for p in (table.catalog, table.schema, table.table) if p)

    def table_id(self, name: str, default_schema: str | None) -> TableId:
        """A ``table.name.format`` result (``table`` or ``schema.table``) as a TableId."""
        schema, _, table = name.rpartition(".")
        return self._table_id(schema or default_schema, table)

    def _table_id(self, schema: str | None, table: str) -> TableId:
        return TableId(None, schema, table)

    def reflect_schema(self, table: TableId) -> str | None:
        """The ``schema=`` argument SQLAlchemy's inspector wants for this table."""
        return table.schema

    # -- connections --------------------------------------------------------------------------
    def on_connect(self, dbapi_connection: Any) -> None:
        """Session settings for every new driver connection (time zone)."""

    def streaming_cursor(self, connection: PoolProxiedConnection) -> Any:
        """A driver cursor that fetches rows as asked rather than all at once."""
        return connection.cursor()

    # -- time ---------------------------------------------------------------------------------
    def current_time_sql(self) -> str:
        raise NotImplementedError

    def parse_current_time(self, value: Any) -> datetime.datetime:
        if not isinstance(value, datetime.datetime):
            raise ConnectError(f"The database clock returned {value!r}, not a timestamp")
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)

    def timestamp_expr(self, column_sql: str) -> str:
        """The expression timestamp criteria compare (the column itself but in SQLite)."""
        return column_sql

    def timestamp_param(self, instant: datetime.datetime, zoned: bool) -> Any:
        """An instant (aware UTC) bound against a timestamp column; ``zoned``: the column holds instants."""
        return instant

    def naive_timestamp(self, value: datetime.datetime, zoned: bool) -> datetime.datetime:
        """A timestamp read from the database as an aware UTC instant."""
        if value.tzinfo is not None:
            return value.astimezone(UTC)
        return value.replace(tzinfo=self.zone).astimezone(UTC)

    def timestamp_reader(self, zoned: bool) -> Callable[[Any], datetime.datetime]:
        """:meth:`naive_timestamp` of a raw column value as one call per value (the per-row hot path)."""
        naive_is_utc = self.zone.key == "UTC" or (zoned and self.zoned_columns_read_as_utc)
        zone, datetime_type = self.zone, datetime.datetime

        def read(raw: Any) -> datetime.datetime:
            value: datetime.datetime = raw if type(raw) is datetime_type else parse_timestamp(raw)
            if value.tzinfo is not None:
                return value.astimezone(UTC)
            if naive_is_utc:
                return value.replace(tzinfo=UTC)
            return value.replace(tzinfo=zone).astimezone(UTC)

        return read

    zoned_columns_read_as_utc: ClassVar[bool] = False

    # -- writing ------------------------------------------------------------------------------
    def insert_sql(self, table: TableId, columns: Sequence[str]) -> str:
        cols = ",".join(self.quote(c) for c in columns)
        marks = ",".join([self.placeholder] * len(columns))
        return f"INSERT INTO {self.table_sql(table)}({cols}) VALUES({marks})"

    def upsert_sql(self, table: TableId, keys: Sequence[str], non_keys: Sequence[str]) -> str:
        raise NotImplementedError

    def update_sql(self, table: TableId, keys: Sequence[str], non_keys: Sequence[str]) -> str:
        """``UPDATE t SET non_keys WHERE keys``: parameters are the non-keys, then the keys."""
        sets = ",".join(f"{self.quote(c)}={self.placeholder}" for c in non_keys)
        where = " AND ".join(f"{self.quote(c)}={self.placeholder}" for c in keys)
        return f"UPDATE {self.table_sql(table)} SET {sets} WHERE {where}"

    def delete_sql(self, table: TableId, keys: Sequence[str]) -> str:
        where = " AND ".join(f"{self.quote(c)}={self.placeholder}" for c in keys)
        return f"DELETE FROM {self.table_sql(table)} WHERE {where}"

    def insert_rows(self, cursor: Any, table: TableId, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
        """Plain inserts of ``rows`` (one transaction is already open)."""
        cursor.executemany(self.insert_sql(table, columns), rows)

    def sql_type(self, schema: Schema, key: bool) -> str:
        """The column type ``auto.create``/``auto.evolve`` give a Connect field (docs/jdbc.md lists them)."""
        name = schema.name
        if name in self.logical_types:
            if name == DECIMAL_LOGICAL_NAME:
                return self.decimal_type(schema)
            return self.logical_types[name]
        found = self.primitive_types.get(schema.type)
        if found is None:
            raise ConnectError(f"{self.name}: no column type for a field of type {schema.type.name}"
                               f"{f' ({name})' if name else ''}")
        if key and schema.type is SchemaType.STRING:
            return self.key_string_type
        if key and schema.type is SchemaType.BYTES:
            return self.key_bytes_type
        return found

    logical_types: ClassVar[dict[str, str]] = {}
    primitive_types: ClassVar[dict[SchemaType, str]] = {}
    key_string_type: ClassVar[str] = "TEXT"
    key_bytes_type: ClassVar[str] = "BLOB"

    def decimal_type(self, schema: Schema) -> str:
        return "DECIMAL"

    def create_table_sql(self, table: TableId, columns: Sequence[tuple[str, Schema]], keys: Sequence[str]) -> str:
        """``CREATE TABLE`` with one line per column and the primary key, as Confluent writes it."""
        key_set = set(keys)
        specs = [self._column_spec(name, schema, name in key_set) for name, schema in columns]
        if keys:
            specs.append("PRIMARY KEY(" + ",".join(self.quote(k) for k in keys) + ")")
        return f"CREATE TABLE {self.table_sql(table)} (\n" + ",\n".join(specs) + ")"

    def alter_table_sqls(self, table: TableId, columns: Sequence[tuple[str, Schema]]) -> list[str]:
        """``ALTER TABLE ... ADD`` for missing columns (always nullable, as auto.evolve adds them)."""
        adds = ",\n".join("ADD " + self._column_spec(name, schema, False) for name, schema in columns)
        return [f"ALTER TABLE {self.table_sql(table)} {adds}"]

    def _column_spec(self, name: str, schema: Schema, key: bool) -> str:
        spec = f"{self.quote(name)} {self.sql_type(schema, key)}"
        if schema.default_value is not None and not key:
            return f"{spec} DEFAULT {self.literal(schema, schema.default_value)}"
        return f"{spec} {'NULL' if schema.optional and not key else 'NOT NULL'}"

    def literal(self, schema: Schema, value: Any) -> str:
        """A schema default as a SQL literal (numbers, booleans, strings)."""
        if isinstance(value, bool):
            return "1" if value else "0"
        if isinstance(value, int | float):
            return repr(value)
        if isinstance(value, str):
            return "'" + value.replace("'", "''") + "'"
        return "'" + str(value).replace("'", "''") + "'"

    # -- binding Connect values -----------------------------------------------------------------
    def binder(self, schema: Schema, zoned: bool) -> Callable[[Any], Any] | None:
        """A function turning a Connect value into what the driver binds (None: as it is)."""
        if schema.name == TIMESTAMP_LOGICAL_NAME:
            return self._bind_timestamp(zoned)
        if schema.type is SchemaType.BYTES and schema.name is None:
            return _as_bytes
        return None

    def _bind_timestamp(self, zoned: bool) -> Callable[[Any], Any]:
        if zoned:
            return _aware_utc
        return _wall_clock(self.zone)


def parse_timestamp(value: Any) -> datetime.datetime:
    """A driver's timestamp value (a datetime, a date, or SQLite's text) as a datetime."""
    if isinstance(value, datetime.datetime):
        return value
    if isinstance(value, datetime.date):
        return datetime.datetime(value.year, value.month, value.day)
    return datetime.datetime.fromisoformat(str(value))


def _aware_utc(value: datetime.datetime) -> datetime.datetime:
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _wall_clock(zone: datetime.tzinfo) -> Callable[[Any], Any]:
    """Instants as naive wall-clock time in ``zone`` (what a column without a time zone stores)."""
    if getattr(zone, "key", None) == "UTC" or zone is UTC:
        def utc(value: datetime.datetime) -> datetime.datetime:
            if value.tzinfo is UTC or value.tzinfo is None:
                return value.replace(tzinfo=None)
            return value.astimezone(UTC).replace(tzinfo=None)
        return utc
    return lambda v: _aware_utc(v).astimezone(zone).replace(tzinfo=None)


def _as_bytes(value: Any) -> Any:
    return bytes(value) if isinstance(value, bytearray | memoryview) else value


class PostgresDialect(Dialect):
    name = "PostgreSQL"
    logical_types = {DECIMAL_LOGICAL_NAME: "DECIMAL", DATE_LOGICAL_NAME: "DATE", TIME_LOGICAL_NAME: "TIME",
                     TIMESTAMP_LOGICAL_NAME: "TIMESTAMP"}
    primitive_types = {SchemaType.INT8: "SMALLINT", SchemaType.INT16: "SMALLINT", SchemaType.INT32: "INT",
                       SchemaType.INT64: "BIGINT", SchemaType.FLOAT32: "REAL",
                       SchemaType.FLOAT64: "DOUBLE PRECISION", SchemaType.BOOLEAN: "BOOLEAN",
                       SchemaType.STRING: "TEXT", SchemaType.BYTES: "BYTEA"}
    key_bytes_type = "BYTEA"
    _cursors = 0

    def on_connect(self, dbapi_connection: Any) -> None:
        # timestamp (without time zone) columns then read and compare as db.timezone wall time
        cursor = dbapi_connection.cursor()
        cursor.execute("SELECT set_config('TimeZone', %s, false)", (self.zone.key,))
        cursor.close()
        dbapi_connection.commit()

    def streaming_cursor(self, connection: PoolProxiedConnection) -> Any:
        PostgresDialect._cursors += 1
        raw = connection.driver_connection
        assert raw is not None
        return raw.cursor(name=f"seaway_jdbc_{PostgresDialect._cursors}")

    def decimal_type(self, schema: Schema) -> str:
        precision = (schema.parameters or {}).get("connect.decimal.precision")
        scale = (schema.parameters or {}).get("scale", "0")
        return f"DECIMAL({int(precision)},{int(scale)})" if precision else "DECIMAL"

    def current_time_sql(self) -> str:
        return "SELECT CURRENT_TIMESTAMP"

    def upsert_sql(self, table: TableId, keys: Sequence[str], non_keys: Sequence[str]) -> str:
        cols = ",".join(self.quote(c) for c in (*keys, *non_keys))
        marks = ",".join(["%s"] * (len(keys) + len(non_keys)))
        conflict = ",".join(self.quote(k) for k in keys)
        if not non_keys:
            return f"INSERT INTO {self.table_sql(table)} ({cols}) VALUES ({marks}) ON CONFLICT ({conflict}) DO NOTHING"
        sets = ",".join(f"{self.quote(c)}=EXCLUDED.{self.quote(c)}" for c in non_keys)
        return (f"INSERT INTO {self.table_sql(table)} ({cols}) VALUES ({marks}) "
                f"ON CONFLICT ({conflict}) DO UPDATE SET {sets}")

    def insert_rows(self, cursor: Any, table: TableId, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
        cols = ",".join(self.quote(c) for c in columns)
        with cursor.copy(f"COPY {self.table_sql(table)} ({cols}) FROM STDIN") as copy:
            write_row = copy.write_row
            for row in rows:
                write_row(row)


class MySqlDialect(Dialect):
    name = "MariaDB/MySQL"
    logical_types = {DECIMAL_LOGICAL_NAME: "DECIMAL", DATE_LOGICAL_NAME: "DATE", TIME_LOGICAL_NAME: "TIME(3)",
                     TIMESTAMP_LOGICAL_NAME: "DATETIME(3)"}
    primitive_types = {SchemaType.INT8: "TINYINT", SchemaType.INT16: "SMALLINT", SchemaType.INT32: "INT",
                       SchemaType.INT64: "BIGINT", SchemaType.FLOAT32: "FLOAT", SchemaType.FLOAT64: "DOUBLE",
                       SchemaType.BOOLEAN: "TINYINT(1)", SchemaType.STRING: "TEXT",
                       SchemaType.BYTES: "VARBINARY(1024)"}
    # TEXT/BLOB cannot be primary keys without a prefix length
    key_string_type = "VARCHAR(256)"
    key_bytes_type = "VARBINARY(256)"

    def _table_id(self, schema: str | None, table: str) -> TableId:
        return TableId(schema, None, table)

    def reflect_schema(self, table: TableId) -> str | None:
        return table.catalog

    def on_connect(self, dbapi_connection: Any) -> None:
        # TIMESTAMP columns then read (and compare) as UTC; DATETIME columns are db.timezone wall time
        cursor = dbapi_connection.cursor()
        cursor.execute("SET time_zone = '+00:00'")
        cursor.close()

    def streaming_cursor(self, connection: PoolProxiedConnection) -> Any:
        raw = connection.driver_connection
        assert raw is not None
        return raw.cursor(importlib.import_module("pymysql.cursors").SSCursor)

    def decimal_type(self, schema: Schema) -> str:
        return f"DECIMAL(65,{int((schema.parameters or {}).get('scale', '0'))})"

    def current_time_sql(self) -> str:
        return "SELECT UTC_TIMESTAMP(6)"

    def timestamp_param(self, instant: datetime.datetime, zoned: bool) -> Any:
        return instant.replace(tzinfo=None) if zoned else instant.astimezone(self.zone).replace(tzinfo=None)

    zoned_columns_read_as_utc = True  # TIMESTAMP columns, in the session's +00:00

    def naive_timestamp(self, value: datetime.datetime, zoned: bool) -> datetime.datetime:
        if zoned and value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return super().naive_timestamp(value, zoned)

    def upsert_sql(self, table: TableId, keys: Sequence[str], non_keys: Sequence[str]) -> str:
        cols = ",".join(self.quote(c) for c in (*keys, *non_keys))
        marks = ",".join(["%s"] * (len(keys) + len(non_keys)))
        sets = ",".join(f"{self.quote(c)}=VALUES({self.quote(c)})" for c in (non_keys or keys))
        return f"INSERT INTO {self.table_sql(table)}({cols}) VALUES({marks}) ON DUPLICATE KEY UPDATE {sets}"

    def _bind_timestamp(self, zoned: bool) -> Callable[[Any], Any]:
        return _wall_clock(UTC if zoned else self.zone)


_SQLITE_TS = "%Y-%m-%d %H:%M:%f"


class SqliteDialect(Dialect):
    name = "SQLite"
    placeholder = "?"
    # declared types that keep SQLite's NUMERIC affinity (as Confluent's NUMERIC) but tell a
    # reader what the column holds, so the source connector reads the values back as written
    logical_types = {DECIMAL_LOGICAL_NAME: "NUMERIC", DATE_LOGICAL_NAME: "DATE", TIME_LOGICAL_NAME: "TIME",
                     TIMESTAMP_LOGICAL_NAME: "TIMESTAMP"}
    primitive_types = {SchemaType.INT8: "INTEGER", SchemaType.INT16: "INTEGER", SchemaType.INT32: "INTEGER",
                       SchemaType.INT64: "INTEGER", SchemaType.FLOAT32: "REAL", SchemaType.FLOAT64: "REAL",
                       SchemaType.BOOLEAN: "BOOLEAN", SchemaType.STRING: "TEXT", SchemaType.BYTES: "BLOB"}

    def _table_id(self, schema: str | None, table: str) -> TableId:
        return TableId(None, None, table)

    def reflect_schema(self, table: TableId) -> str | None:
        return None

    def decimal_type(self, schema: Schema) -> str:
        scale = int((schema.parameters or {}).get("scale", "0"))
        return f"NUMERIC(65,{scale})"

    def current_time_sql(self) -> str:
        return f"SELECT strftime('{_SQLITE_TS}','now')"

    def parse_current_time(self, value: Any) -> datetime.datetime:
        return datetime.datetime.fromisoformat(str(value)).replace(tzinfo=UTC)

    def timestamp_expr(self, column_sql: str) -> str:
        return f"strftime('{_SQLITE_TS}',{column_sql})"

    def timestamp_param(self, instant: datetime.datetime, zoned: bool) -> Any:
        wall = instant.astimezone(self.zone)
        return wall.strftime("%Y-%m-%d %H:%M:%S.") + f"{wall.microsecond // 1000:03d}"

    def upsert_sql(self, table: TableId, keys: Sequence[str], non_keys: Sequence[str]) -> str:
        cols = ",".join(self.quote(c) for c in (*keys, *non_keys))
        marks = ",".join(["?"] * (len(keys) + len(non_keys)))
        conflict = ",".join(self.quote(k) for k in keys)
        if not non_keys:
            return f"INSERT INTO {self.table_sql(table)}({cols}) VALUES({marks}) ON CONFLICT({conflict}) DO NOTHING"
        sets = ",".join(f"{self.quote(c)}=excluded.{self.quote(c)}" for c in non_keys)
        return (f"INSERT INTO {self.table_sql(table)}({cols}) VALUES({marks}) "
                f"ON CONFLICT({conflict}) DO UPDATE SET {sets}")

    def alter_table_sqls(self, table: TableId, columns: Sequence[tuple[str, Schema]]) -> list[str]:
        # SQLite adds one column per ALTER TABLE statement
        return [f"ALTER TABLE {self.table_sql(table)} ADD {self._column_spec(name, schema, False)}"
                for name, schema in columns]

    def binder(self, schema: Schema, zoned: bool) -> Callable[[Any], Any] | None:
        name = schema.name
        if name == TIMESTAMP_LOGICAL_NAME:
            zone = self.zone
            return lambda v: _aware_utc(v).astimezone(zone).strftime("%Y-%m-%d %H:%M:%S.%f")
        if name == DATE_LOGICAL_NAME:
            return _isoformat
        if name == TIME_LOGICAL_NAME:
            return lambda v: v.strftime("%H:%M:%S.%f")
        if name == DECIMAL_LOGICAL_NAME:
            return str
        return super().binder(schema, zoned)


def _isoformat(value: Any) -> Any:
    return value.isoformat()


_DIALECTS: dict[str, type[Dialect]] = {"postgresql": PostgresDialect, "mysql": MySqlDialect,
                                       "mariadb": MySqlDialect, "sqlite": SqliteDialect}


def dialect_for(engine: Engine, db_timezone: str, quote: bool = True) -> Dialect:
    """The dialect of ``engine``'s database (the URL module already refused any other)."""
    return _DIALECTS[engine.dialect.name](engine, db_timezone, quote)
