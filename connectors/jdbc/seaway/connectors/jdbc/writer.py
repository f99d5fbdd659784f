"""Writing one ``put`` to the database in one transaction (Confluent's ``JdbcDbWriter`` + ``BufferedRecords``).

Records are grouped by destination table (``table.name.format``), then cut into runs that
share key and value schemas (a schema change may change the columns). For each run:

* the table is created (``auto.create``) or given the missing columns (``auto.evolve``, always
  nullable or with the field's default) in the same transaction (MariaDB commits DDL on its
  own: there a put that creates or alters a table is two transactions);
* ``insert.mode=upsert`` keeps only the last change per primary key (later records win, a
  tombstone deletes), then upserts and deletes with ``executemany`` in ``batch.size`` chunks:
  the order of changes to *different* keys does not matter, so the result is the one a
  record-by-record replay would give, and replaying the same records again (a redelivery
  after a crash) gives it again;
* ``insert`` and ``update`` keep the records' order: consecutive inserts (PostgreSQL: one
  ``COPY``), updates or deletes go together.

The caller commits, or rolls back on any error (then the table cache is dropped: DDL may have
been rolled back with the data).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from seaway.connect.api import ConnectError, Schema, SinkRecord
from seaway.connectors.jdbc.config import SinkConfig
from seaway.connectors.jdbc.connection import Database
from seaway.connectors.jdbc.dialect import TableId
from seaway.connectors.jdbc.fields import FieldLayout, layout_for
from seaway.connectors.jdbc.tables import reflect_columns
from seaway.connectors.jdbc.validator import check_key, check_tombstone, check_value, needs_key
from sqlalchemy import inspect

__all__ = ["Writer"]

log = logging.getLogger(__name__)

_UNCHECKED = object()  # no schema checked yet in this put


class Writer:
    """Turns batches of records into SQL on one connection; table structure cached across puts."""

    def __init__(self, db: Database, cfg: SinkConfig) -> None:
        self.db, self.cfg = db, cfg
        self.dialect = db.dialect
        self._tables: dict[TableId, dict[str, bool]] = {}  # existing columns -> holds instants (zoned)
        self._layouts: dict[tuple[str, Schema | None, Schema | None], FieldLayout] = {}
        self._default_schema: str | None = None
        self._default_known = False

    def forget_tables(self) -> None:
        self._tables.clear()

    # -- tables ---------------------------------------------------------------------------------
    def table_for(self, topic: str) -> TableId:
        if not self._default_known:
            self._default_schema = inspect(self.db.engine).default_schema_name
            self._default_known = True
        name = self.cfg.table_name_format.replace("${topic}", topic)
        return self.dialect.table_id(name, self._default_schema)

    def _columns(self, table: TableId) -> dict[str, bool] | None:
        cached = self._tables.get(table)
        if cached is not None:
            return cached
        inspector = inspect(self.db.engine)
        if not inspector.has_table(table.table, schema=self.dialect.reflect_schema(table)):
            return None
        columns, _primary, _auto = reflect_columns(self.db, table)
        found = self._tables[table] = {c.name: c.zoned for c in columns}
        return found

    def _ensure_table(self, cursor: Any, table: TableId, layout: FieldLayout) -> dict[str, bool]:
        existing = self._columns(table)
        if existing is None:
            if not self.cfg.auto_create:
                raise ConnectError(f"Table {table.fqn} is missing and auto-creation is disabled (auto.create=false)")
            sql = self.dialect.create_table_sql(table, layout.columns, layout.key_names)
            log.info("Creating table %s: %s", table.fqn, sql)
            cursor.execute(sql)
            created = self._tables[table] = {name: False for name, _ in layout.columns}
            return created
        missing = [(name, schema) for name, schema in layout.columns if name not in existing]
        if missing:
            if not self.cfg.auto_evolve:
                raise ConnectError(f"Table {table.fqn} is missing fields {[n for n, _ in missing]} and "
                                   "auto-evolution is disabled (auto.evolve=false)")
            for name, schema in missing:
                if not schema.optional and schema.default_value is None:
                    raise ConnectError(f"Cannot ALTER TABLE {table.fqn} to add missing field {name!r}, as the "
                                       "field is not optional and does not have a default value")
            for sql in self.dialect.alter_table_sqls(table, missing):
                log.info("Amending table %s: %s", table.fqn, sql)
                cursor.execute(sql)
            existing.update({name: False for name, _ in missing})
        return existing

    # -- records --------------------------------------------------------------------------------
    def write(self, cursor: Any, records: Sequence[SinkRecord]) -> None:
        """Every record's change, through ``cursor``; the caller commits or rolls back."""
        by_table: dict[TableId, list[SinkRecord]] = {}
        tables_of: dict[str, TableId] = {}
        for record in records:
            table = tables_of.get(record.topic)
            if table is None:
                table = tables_of[record.topic] = self.table_for(record.topic)
            by_table.setdefault(table, []).append(record)
        for table, table_records in by_table.items():
            for key_schema, value_schema, run in self._runs(table_records):
                layout = self._layout(table, key_schema, value_schema)
                self._write_run(cursor, table, layout, run)

    def _runs(self, records: list[SinkRecord]) -> list[tuple[Schema | None, Schema | None, list[SinkRecord]]]:
        """Consecutive records sharing key and value schema; tombstones join the run they follow.

        A record the sink cannot write (no Struct value schema, no key schema where the key is
        needed) fails the put here, before any SQL: :mod:`validator` says why and what to change.
        """
        runs: list[tuple[Schema | None, Schema | None, list[SinkRecord]]] = []
        key_schema: Schema | None = None
        value_schema: Schema | None = None
        current: list[SinkRecord] | None = None
        cfg = self.cfg
        keyed = needs_key(cfg)
        checked_value: object = _UNCHECKED  # the last value / key schema found writable (validator.py)
        checked_key: object = _UNCHECKED
        for record in records:
            tombstone = record.value is None
            if tombstone:
                check_tombstone(cfg, record)
            elif record.value_schema is not checked_value:
                check_value(cfg, record)
                checked_value = record.value_schema
            if keyed and (record.key is None or record.key_schema is not checked_key):
                check_key(cfg, record)
                checked_key = record.key_schema
            same = current is not None and record.key_schema == key_schema and (
                tombstone or record.value_schema == value_schema or value_schema is None)
            if not same:
                current = []
                key_schema = record.key_schema
                value_schema = None if tombstone else record.value_schema
                runs.append((key_schema, value_schema, current))
            elif value_schema is None and not tombstone:
                value_schema = record.value_schema
                assert current is not None
                runs[-1] = (key_schema, value_schema, current)
            assert current is not None
            current.append(record)
        return runs

    def _layout(self, table: TableId, key_schema: Schema | None, value_schema: Schema | None) -> FieldLayout:
        cache_key = (table.fqn, key_schema, value_schema)
        layout = self._layouts.get(cache_key)
        if layout is None:
            layout = self._layouts[cache_key] = layout_for(self.cfg, table.fqn, key_schema, value_schema)
        return layout

    def _binders(self, layout: FieldLayout, zoned: dict[str, bool]) -> list[tuple[int, Callable[[Any], Any]]]:
        binders = []
        for index, (name, schema) in enumerate(layout.columns):
            bind = self.dialect.binder(schema, zoned.get(name, False))
            if bind is not None:
                binders.append((index, bind))
        return binders

    def _write_run(self, cursor: Any, table: TableId, layout: FieldLayout, records: list[SinkRecord]) -> None:
        has_values = any(r.value is not None for r in records)
        if has_values:
            zoned = self._ensure_table(cursor, table, layout)
        else:
            zoned = self._columns(table) or {}
            if not zoned:
                return  # only deletes, and no table to delete from
        binders = self._binders(layout, zoned)
        key_of, values_of = layout.key_of, layout.values_of
        keyed = bool(layout.keys)
        mode = self.cfg.insert_mode
        if mode == "upsert":
            final: dict[tuple[Any, ...], list[Any] | None] = {}
            for record in records:
                key = key_of(record)
                final[tuple(key)] = None if record.value is None else key + values_of(record)
            upserts = [row for row in final.values() if row is not None]
            deletes = [list(key) for key, row in final.items() if row is None]
            self._execute(cursor, "upsert", table, layout, upserts, binders)
            self._execute(cursor, "delete", table, layout, deletes, [b for b in binders if b[0] < len(layout.keys)])
            return
        # insert / update: in order, consecutive operations of one kind together
        op = "insert" if mode == "insert" else "update"
        if not keyed or all(r.value is not None for r in records):
            rows = [values_of(r) for r in records] if not keyed else [key_of(r) + values_of(r) for r in records]
            self._execute(cursor, op, table, layout, rows, binders)
            return
        pending: list[list[Any]] = []
        pending_kind = op
        for record in records:
            kind = "delete" if record.value is None else op
            if kind != pending_kind and pending:
                self._execute(cursor, pending_kind, table, layout, pending, binders)
                pending = []
            pending_kind = kind
            pending.append(key_of(record) if kind == "delete" else key_of(record) + values_of(record))
        if pending:
            self._execute(cursor, pending_kind, table, layout, pending, binders)

    def _execute(self, cursor: Any, kind: str, table: TableId, layout: FieldLayout, rows: list[list[Any]],
                 binders: list[tuple[int, Callable[[Any], Any]]]) -> None:
        if not rows:
            return
        if binders:
            _bind(rows, binders)
        keys, values = layout.key_names, layout.value_names
        dialect = self.dialect
        size = self.cfg.batch_size or len(rows)
        if kind == "insert":
            columns = [*keys, *values]
            for start in range(0, len(rows), size):
                dialect.insert_rows(cursor, table, columns, rows[start:start + size])
            return
        if kind == "upsert":
            sql = dialect.upsert_sql(table, keys, values)
        elif kind == "update":
            if not values:
                return  # nothing to set
            sql = dialect.update_sql(table, keys, values)
            n = len(keys)
            rows = [row[n:] + row[:n] for row in rows]
        else:
            sql = dialect.delete_sql(table, keys)
        for start in range(0, len(rows), size):
            cursor.executemany(sql, rows[start:start + size])


def _bind(rows: list[list[Any]], binders: list[tuple[int, Callable[[Any], Any]]]) -> None:
    """Driver-ready values, in place, in the columns that need converting (timestamps, ...)."""
    for index, bind in binders:
        for row in rows:
            if index < len(row):
                value = row[index]
                if value is not None:
                    row[index] = bind(value)
