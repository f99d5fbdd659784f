"""JdbcSourceConnector: tables (or a query) of a database into topics (Confluent's ``JdbcSourceConnector``).

The connector lists the tables to copy (``tables.py``), spreads them over at most ``tasks.max``
tasks and watches for new or dropped tables every ``table.poll.interval.ms``; in query mode
one task runs the query. Each task keeps one driver connection and a round-robin queue of
:class:`~seaway.connectors.jdbc.querier.Querier` s: a table whose query is open is read
``batch.max.rows`` rows per ``poll`` until exhausted, then the next table is due
``poll.interval.ms`` after its last query. Records carry no key and a STRUCT value named after
the table; the topic is ``topic.prefix`` + table name (query mode: ``topic.prefix``).

Threads: ``poll`` runs on the task thread and holds ``_lock`` while it uses the connection;
``stop`` (another thread) sets an event that ends any wait and closes the connection itself
only if ``poll`` is not using it (otherwise ``poll`` closes it on its way out).
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections import deque
from collections.abc import Mapping
from typing import Any

from seaway.connect.api import (
    Config,
    ConfigDef,
    ConnectError,
    ExactlyOnceSupport,
    RetriableError,
    SourceConnector,
    SourceRecordBatch,
    SourceTask,
    Task,
    group_partitions,
)
from seaway.connectors.jdbc._version import VERSION
from seaway.connectors.jdbc.config import MODE, SOURCE_CONFIG_DEF, SourceConfig, parse_source, source_problems
from seaway.connectors.jdbc.connection import Database, open_database
from seaway.connectors.jdbc.dialect import TableId
from seaway.connectors.jdbc.querier import Querier, query_partition, table_partitions
from seaway.connectors.jdbc.tables import TableMonitor, list_tables
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.pool import PoolProxiedConnection

__all__ = ["JdbcSourceConnector", "JdbcSourceTask", "add_problems"]

log = logging.getLogger(__name__)

TABLES_CONFIG = "tables"  # the task's share of the tables: a JSON list of [catalog, schema, table]
_IDLE_WAIT = 0.5  # seconds poll waits at most for the next table to be due
EXACTLY_ONCE_MODES = frozenset({"incrementing", "timestamp+incrementing"})
"""Modes whose source offset names one row, so a task resumed from a committed offset repeats none."""


def add_problems(config: Config, problems: list[tuple[str, str]]) -> Config:
    """Cross-key errors added to the ``ConfigValue`` of the key each names (the REST 400 names it)."""
    by_name = {value.name: value for value in config.config_values}
    for key, message in problems:
        if key in by_name:
            by_name[key].add_error_message(message)
    return config


def _parsed_values(config: Config) -> dict[str, Any]:
    return {value.name: value.value for value in config.config_values}


def _database(cfg: SourceConfig, *, pooled: bool = True) -> Database:
    return open_database(cfg.url, cfg.user, cfg.password, cfg.db_timezone, cfg.quote, pooled=pooled)


class JdbcSourceConnector(SourceConnector):
    """Lists the tables to copy and gives each task a share; re-plans when the set changes."""

    def __init__(self) -> None:
        self._props: dict[str, str] = {}
        self._cfg: SourceConfig | None = None
        self._db: Database | None = None
        self._monitor: TableMonitor | None = None

    def version(self) -> str:
        return VERSION

    def config(self) -> ConfigDef:
        return SOURCE_CONFIG_DEF

    def validate(self, props: Mapping[str, str]) -> Config:
        config = super().validate(props)
        return add_problems(config, source_problems(_parsed_values(config)))

    def exactly_once_support(self, connector_config: Mapping[str, str]) -> ExactlyOnceSupport:
        """``SUPPORTED`` in ``incrementing`` and ``timestamp+incrementing`` mode (tables or ``query``).

        There each record's source offset is its row's position in a strict order (the id, or
        timestamp then id), and a task restarts from the offset the worker committed in the
        same transaction as the records, so no row is written twice. ``bulk`` re-reads every
        table each poll (no offsets at all). ``timestamp`` cannot tell apart rows sharing a
        timestamp: when a batch ends among them its offset stays before them (querier.py), so
        after a crash they are written again. An invalid config is ``UNSUPPORTED`` here;
        ``validate`` names its fields. Confluent's connector does not answer (Kafka's null).
        """
        try:
            mode = SOURCE_CONFIG_DEF.parse(connector_config)[MODE]
        except Exception:
            return ExactlyOnceSupport.UNSUPPORTED
        return ExactlyOnceSupport.SUPPORTED if mode in EXACTLY_ONCE_MODES else ExactlyOnceSupport.UNSUPPORTED

    def start(self, props: Mapping[str, str]) -> None:
        self._props = dict(props)
        cfg = self._cfg = parse_source(props)
        if cfg.query:
            return
        db = self._db = _database(cfg, pooled=False)
        tables = self._list_with_retries(db, cfg)
        if not tables:
            log.warning("No tables of %s match the configuration: no task will run until one appears",
                        db.description)
        self._monitor = TableMonitor(db, cfg, tables, self.context.request_task_reconfiguration)
        self._monitor.start()

    @staticmethod
    def _list_with_retries(db: Database, cfg: SourceConfig) -> list[TableId]:
        for attempt in range(1, cfg.attempts + 1):
            try:
                return list_tables(db, cfg)
            except SQLAlchemyError as e:
                message = db.scrub(str(getattr(e, "orig", None) or e).strip().splitlines()[0])
                if attempt == cfg.attempts:
                    raise ConnectError(f"Could not list the tables of {db.description} after {attempt} "
                                       f"attempt(s): {message}") from None
                log.warning("Listing the tables of %s failed (attempt %d of %d): %s", db.description, attempt,
                            cfg.attempts, message)
                time.sleep(cfg.backoff_ms / 1000)
        return []

    def task_class(self) -> type[Task]:
        return JdbcSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        if self._cfg is not None and self._cfg.query:
            return [dict(self._props)]
        tables = self._monitor.tables if self._monitor is not None else []
        groups = group_partitions(tables, min(max_tasks, len(tables))) if tables else []
        return [{**self._props, TABLES_CONFIG: json.dumps([t.to_list() for t in group])} for group in groups]

    def stop(self) -> None:
        if self._monitor is not None:
            self._monitor.stop()
        if self._db is not None:
            self._db.dispose()


class JdbcSourceTask(SourceTask):
    """Polls its tables (or the query) round robin; see the module docstring for threads."""

    def __init__(self) -> None:
        self._cfg: SourceConfig | None = None
        self._db: Database | None = None
        self._connection: PoolProxiedConnection | None = None
        self._queue: deque[Querier] = deque()
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._failures = 0

    def version(self) -> str:
        return VERSION

    def start(self, props: Mapping[str, str]) -> None:
        cfg = self._cfg = parse_source(props)
        db = self._db = _database(cfg)
        reader = self.context.offset_storage_reader()
        if cfg.query:
            partition = query_partition()
            stored = reader.offset(partition)
            self._queue.append(Querier(db, cfg, table=None, topic=cfg.topic_prefix, partition=partition,
                                       offset=stored))
            return
        tables = [TableId(*entry) for entry in json.loads(props.get(TABLES_CONFIG, "[]"))]
        candidates = [table_partitions(t) for t in tables]
        found = {json.dumps(p, sort_keys=True): o
                     for p, o in reader.offsets([p for ps in candidates for p in ps])}
        for table, partitions in zip(tables, candidates, strict=True):
            offset = next((found[k] for k in (json.dumps(p, sort_keys=True) for p in partitions)
                           if found.get(k) is not None), None)
            if offset is not None:
                log.info("Resuming %s from offset %s", table.fqn, offset)
            self._queue.append(Querier(db, cfg, table=table, topic=cfg.topic_prefix + table.table,
                                       partition=partitions[0], offset=offset))

    def poll(self) -> SourceRecordBatch | None:
        cfg = self._cfg
        if cfg is None or not self._queue or self._stopping.is_set():
            self._stopping.wait(_IDLE_WAIT)
            return None
        querier = self._queue[0]
        if not querier.open:
            wait = querier.next_due - time.monotonic()
            if wait > 0:
                self._stopping.wait(min(wait, _IDLE_WAIT))
                return None
        with self._lock:
            if self._stopping.is_set():
                self._shutdown()
                return None
            try:
                batch = querier.poll(self._connect(), cfg.batch_max_rows)
                self._failures = 0
            except ConnectError:
                raise
            except Exception as e:
                self._failed(querier, e)
                raise RetriableError(f"Querying {querier.name} failed: {self._scrub(e)}") from None
            finally:
                if self._stopping.is_set():
                    self._shutdown()
        if not querier.open:
            self._queue.rotate(-1)
        return batch

    def _scrub(self, error: BaseException) -> str:
        text = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        return self._db.scrub(text) if self._db is not None else text

    def _failed(self, querier: Querier, error: Exception) -> None:
        """A failed query: drop the connection, count towards ``query.retry.attempts``."""
        cfg = self._cfg
        assert cfg is not None
        querier.finish(None)
        querier.next_due = 0.0
        self._close(invalidate=True)
        self._failures += 1
        log.warning("Querying %s failed (failure %d): %s", querier.name, self._failures, self._scrub(error))
        if 0 <= cfg.query_retry_attempts < self._failures:
            raise ConnectError(f"Querying {querier.name} failed {self._failures} time(s): "
                               f"{self._scrub(error)}") from None
        self._stopping.wait(min(cfg.backoff_ms, 1000) / 1000)

    def _connect(self) -> PoolProxiedConnection:
        if self._connection is None:
            cfg, db = self._cfg, self._db
            assert cfg is not None and db is not None
            self._connection = db.connect(cfg.attempts, cfg.backoff_ms, self._stopping)
        return self._connection

    def _close(self, *, invalidate: bool = False) -> None:
        """Close the connection (``invalidate``: it failed, never reuse it); ``_lock`` held or poll not running."""
        for querier in self._queue:
            querier.finish(None)
        connection, self._connection = self._connection, None
        if connection is not None:
            try:
                if invalidate:
                    connection.invalidate()
                else:
                    connection.close()
            except Exception as e:
                log.debug("closing the connection: %s", e)

    def _shutdown(self) -> None:
        """Close the connection and the engine's pool; by ``stop``, or by ``poll`` if it held the lock then."""
        self._close()
        if self._db is not None:
            self._db.dispose()

    def stop(self) -> None:
        self._stopping.set()
        if self._lock.acquire(blocking=False):
            try:
                self._shutdown()
            finally:
                self._lock.release()
