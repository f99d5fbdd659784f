"""JdbcSinkConnector: topics into database tables (Confluent's ``JdbcSinkConnector``).

Each ``put`` is one database transaction (see ``writer.py``): everything in it is written, or
nothing. A driver error rolls back, drops the connection and raises ``RetriableError`` after
``context.timeout(retry.backoff.ms)``, so the runtime hands the same records again, up to
``max.retries`` times in a row before the task fails, as Confluent's task does. Errors that a
retry cannot fix (a record without a Struct value schema or that does not fit ``pk.mode``:
``validator.py``; a missing table without ``auto.create``) fail the task at once, before any
SQL, with a message naming the record or table.

Offsets are committed by the runtime after ``put`` returned, so a crash between the commit of
the transaction and the offset commit delivers the last records again: upserts make that
harmless (the table ends up the same); plain inserts then fail on the primary key, or add
duplicate rows when there is none (docs/jdbc.md).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from seaway.connect.api import (
    Config,
    ConfigDef,
    ConnectError,
    RetriableError,
    SinkConnector,
    SinkRecord,
    SinkTask,
    Task,
)
from seaway.connectors.jdbc._version import VERSION
from seaway.connectors.jdbc.config import SINK_CONFIG_DEF, SinkConfig, parse_sink, sink_problems
from seaway.connectors.jdbc.connection import Database, open_database
from seaway.connectors.jdbc.source import _parsed_values, add_problems
from seaway.connectors.jdbc.writer import Writer
from sqlalchemy.pool import PoolProxiedConnection

__all__ = ["JdbcSinkConnector", "JdbcSinkTask"]

log = logging.getLogger(__name__)


class JdbcSinkConnector(SinkConnector):
    """Gives every task the same config: the runtime spreads topic partitions over them."""

    def __init__(self) -> None:
        self._props: dict[str, str] = {}

    def version(self) -> str:
        return VERSION

    def config(self) -> ConfigDef:
        return SINK_CONFIG_DEF

    def validate(self, props: Mapping[str, str]) -> Config:
        config = super().validate(props)
        return add_problems(config, sink_problems(_parsed_values(config)))

    def start(self, props: Mapping[str, str]) -> None:
        parse_sink(props)  # fail the connector early on a bad config
        self._props = dict(props)

    def task_class(self) -> type[Task]:
        return JdbcSinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self._props) for _ in range(max_tasks)]

    def stop(self) -> None:
        """Nothing to release: tasks own their connections."""


class JdbcSinkTask(SinkTask):
    """Writes each ``put`` in one transaction on its own connection."""

    def __init__(self) -> None:
        self._cfg: SinkConfig | None = None
        self._db: Database | None = None
        self._writer: Writer | None = None
        self._connection: PoolProxiedConnection | None = None
        self._retries_left = 0

    def version(self) -> str:
        return VERSION

    def start(self, props: Mapping[str, str]) -> None:
        cfg = self._cfg = parse_sink(props)
        self._db = open_database(cfg.url, cfg.user, cfg.password, cfg.db_timezone, cfg.quote)
        self._writer = Writer(self._db, cfg)
        self._retries_left = cfg.max_retries

    def put(self, records: Sequence[SinkRecord]) -> None:
        if not records:
            return
        cfg, db, writer = self._cfg, self._db, self._writer
        assert cfg is not None and db is not None and writer is not None
        connection = self._connect()
        try:
            cursor = connection.cursor()
            try:
                writer.write(cursor, records)
            finally:
                cursor.close()
            connection.commit()
        except ConnectError:
            self._rollback(connection)
            raise
        except Exception as e:
            self._rollback(connection, broken=True)
            message = db.scrub(_first_line(e))
            if self._retries_left <= 0:
                raise ConnectError(f"Writing {len(records)} record(s) failed after {cfg.max_retries} retries: "
                                   f"{message}") from None
            self._retries_left -= 1
            log.warning("Writing %d record(s) failed (%d retries left): %s", len(records), self._retries_left,
                        message)
            self.context.timeout(cfg.retry_backoff_ms)
            raise RetriableError(message) from None
        self._retries_left = cfg.max_retries

    def _connect(self) -> PoolProxiedConnection:
        if self._connection is None:
            cfg, db = self._cfg, self._db
            assert cfg is not None and db is not None
            self._connection = db.connect(cfg.attempts, cfg.backoff_ms)
        return self._connection

    def _rollback(self, connection: PoolProxiedConnection, *, broken: bool = False) -> None:
        """Undo the put (and forget cached tables: their DDL may be undone too); drop a broken connection."""
        if self._writer is not None:
            self._writer.forget_tables()
        try:
            connection.rollback()
        except Exception as e:
            log.debug("rollback failed: %s", e)
            broken = True
        if broken:
            self._connection = None
            try:
                connection.invalidate()
            except Exception as e:
                log.debug("invalidating the connection: %s", e)

    def stop(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            try:
                connection.close()
            except Exception as e:
                log.debug("closing the connection: %s", e)
        if self._db is not None:
            self._db.dispose()


def _first_line(error: BaseException) -> str:
    text: Any = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__
