"""Which tables the source copies, and what their columns are (Confluent's ``TableMonitorThread``).

:func:`list_tables` reads the database's catalog through SQLAlchemy's inspector and applies
``schema.pattern`` / ``catalog.pattern`` (SQL ``LIKE`` patterns), ``table.types``,
``table.whitelist`` / ``table.blacklist`` (a table's name or its fully-qualified name) and
``table.include.list`` / ``table.exclude.list`` (regular expressions matched against the whole
fully-qualified name). :class:`TableMonitor` repeats that every ``table.poll.interval.ms`` on a
thread of the connector's and asks for new task configs when the set changes.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable
from typing import Any

from seaway.connectors.jdbc.columns import Column, column_from_reflection
from seaway.connectors.jdbc.config import SourceConfig
from seaway.connectors.jdbc.connection import Database
from seaway.connectors.jdbc.dialect import TableId
from sqlalchemy import inspect
from sqlalchemy.exc import SQLAlchemyError

__all__ = ["TableMonitor", "list_tables", "reflect_columns"]

log = logging.getLogger(__name__)

_PG_SYSTEM = ("pg_catalog", "information_schema")


def _like(pattern: str | None) -> Callable[[str], bool]:
    if pattern is None:
        return lambda _name: True
    regex = re.compile("".join(".*" if c == "%" else "." if c == "_" else re.escape(c) for c in pattern),
                       re.DOTALL)
    return lambda name: regex.fullmatch(name) is not None


def _selected(table: TableId, cfg: SourceConfig) -> bool:
    names = {table.table, table.fqn}
    if cfg.whitelist:
        return bool(names & set(cfg.whitelist))
    if cfg.blacklist:
        return not names & set(cfg.blacklist)
    if cfg.include:
        if not any(re.fullmatch(p, table.fqn) for p in cfg.include):
            return False
        return not any(re.fullmatch(p, table.fqn) for p in cfg.exclude)
    return True


def list_tables(db: Database, cfg: SourceConfig) -> list[TableId]:
    """The tables (and views, if asked) this connector copies, sorted."""
    inspector = inspect(db.engine)
    backend = db.engine.dialect.name
    views = "VIEW" in cfg.table_types
    tables = "TABLE" in cfg.table_types
    found: list[TableId] = []

    def names(schema: str | None) -> list[str]:
        listed = list(inspector.get_table_names(schema=schema)) if tables else []
        if views:
            listed += inspector.get_view_names(schema=schema)
        return listed

    if backend == "postgresql":
        wanted = _like(cfg.schema_pattern)
        for schema in inspector.get_schema_names():
            if schema in _PG_SYSTEM or schema.startswith("pg_") or not wanted(schema):
                continue
            found += [TableId(None, schema, name) for name in names(schema)]
    elif backend in ("mysql", "mariadb"):
        pattern = cfg.catalog_pattern if cfg.catalog_pattern is not None else cfg.schema_pattern
        if pattern is None:
            catalogs = [inspector.default_schema_name]
        else:
            wanted = _like(pattern)
            catalogs = [c for c in inspector.get_schema_names()
                        if wanted(c) and c not in ("mysql", "information_schema", "performance_schema", "sys")]
        for catalog in catalogs:
            found += [TableId(catalog, None, name) for name in names(catalog)]
    else:
        found += [TableId(None, None, name) for name in names(None) if not name.startswith("sqlite_")]
    return sorted(t for t in found if _selected(t, cfg))


def reflect_columns(db: Database, table: TableId) -> tuple[list[Column], list[str], str | None]:
    """The table's columns, its primary key columns, and its auto-increment column (or None)."""
    inspector = inspect(db.engine)
    schema = db.dialect.reflect_schema(table)
    infos: list[dict[str, Any]] = list(inspector.get_columns(table.table, schema=schema))  # type: ignore[arg-type]
    backend = db.engine.dialect.name
    columns = [column_from_reflection(backend, info) for info in infos]
    try:
        primary = list(inspector.get_pk_constraint(table.table, schema=schema).get("constrained_columns") or [])
    except (SQLAlchemyError, NotImplementedError):
        primary = []
    auto = next((info["name"] for info in infos if info.get("autoincrement") is True), None)
    if auto is None and backend == "sqlite" and len(primary) == 1:
        # INTEGER PRIMARY KEY is SQLite's rowid: it increments
        info = next(i for i in infos if i["name"] == primary[0])
        if str(info["type"]).upper() == "INTEGER":
            auto = primary[0]
    if auto is None and backend == "postgresql":
        auto = next((info["name"] for info in infos
                     if "nextval(" in str(info.get("default") or "") or info.get("identity")), None)
    return columns, primary, auto


class TableMonitor:
    """Re-lists the tables every ``table.poll.interval.ms``; calls ``on_change`` when the set changes."""

    def __init__(self, db: Database, cfg: SourceConfig, initial: list[TableId],
                 on_change: Callable[[], None]) -> None:
        self._db, self._cfg, self._on_change = db, cfg, on_change
        self._lock = threading.Lock()
        self._tables = list(initial)
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name="jdbc-table-monitor", daemon=True)

    @property
    def tables(self) -> list[TableId]:
        with self._lock:
            return list(self._tables)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(10)

    def _run(self) -> None:
        interval = self._cfg.table_poll_interval_ms / 1000
        while not self._stopping.wait(interval):
            try:
                current = list_tables(self._db, self._cfg)
            except SQLAlchemyError as e:
                log.warning("Listing tables of %s failed: %s", self._db.description, self._db.scrub(str(e)))
                continue
            with self._lock:
                changed = current != self._tables
                if changed:
                    log.info("Tables of %s changed: %s -> %s", self._db.description,
                             [t.fqn for t in self._tables], [t.fqn for t in current])
                    self._tables = current
            if changed:
                self._on_change()
