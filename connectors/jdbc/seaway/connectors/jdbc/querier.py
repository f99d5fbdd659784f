"""One table (or the custom query) read in one of the four modes (Confluent's ``TableQuerier`` family).

=========================  ======================================================================
mode                       query (``ts`` is ``COALESCE`` of ``timestamp.column.name``)
=========================  ======================================================================
bulk                       the whole table, every ``poll.interval.ms``; offsets: none
incrementing               ``WHERE inc > ? ORDER BY inc``; offset ``{"incrementing": n}``
timestamp                  ``WHERE ts > ? AND ts < ? ORDER BY ts``; offset ``{"timestamp": ms,
                           "timestamp_nanos": ns}``
timestamp+incrementing     ``WHERE ts < ? AND ((ts = ? AND inc > ?) OR ts > ?) ORDER BY ts, inc``;
                           offset with all three keys
=========================  ======================================================================

The upper bound of a timestamp window is the database's clock minus
``timestamp.delay.interval.ms``, so a row whose transaction commits within that delay after
its timestamp is still read. Offsets are stored exactly as Confluent stores them (partition
``{"protocol": "1", "table": "<fqn>"}``, or ``{"query": "query"}``), so a connector can
take over a Confluent connector's offsets and vice versa.

A query's result is read through a streaming cursor ``batch.max.rows`` rows per ``poll`` and
stays open between polls until it is exhausted (as Confluent keeps its ResultSet), then its
transaction ends, so the next query sees new commits. In timestamp mode the offset of a row is
only advanced past a timestamp once every row with that timestamp was read (one row of
lookahead), so stopping mid-way never skips rows that share a timestamp.
"""

from __future__ import annotations

import datetime
import logging
import time
from collections.abc import Mapping, Sequence
from typing import Any

from seaway.connect.api import ConnectError, SourceRecordBatch, Struct
from seaway.connectors.jdbc.columns import Column, RowMapper, column_from_description, parse_timestamp
from seaway.connectors.jdbc.config import SourceConfig
from seaway.connectors.jdbc.connection import Database
from seaway.connectors.jdbc.dialect import TableId
from seaway.connectors.jdbc.tables import reflect_columns
from sqlalchemy.pool import PoolProxiedConnection

__all__ = ["INCREMENTING", "TIMESTAMP", "TIMESTAMP_NANOS", "Querier", "offset_instant", "query_partition",
           "table_partitions"]

log = logging.getLogger(__name__)

INCREMENTING = "incrementing"
TIMESTAMP = "timestamp"
TIMESTAMP_NANOS = "timestamp_nanos"
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)


def table_partitions(table: TableId) -> list[dict[str, str]]:
    """The source partitions a table's offsets may be stored under, newest protocol first."""
    return [{"protocol": "1", "table": table.fqn}, {"table": table.table}]


def query_partition() -> dict[str, str]:
    return {"query": "query"}


def offset_instant(offset: Mapping[str, Any]) -> datetime.datetime | None:
    """The instant a stored offset's ``timestamp`` (+ ``timestamp_nanos``) names, or None."""
    millis = offset.get(TIMESTAMP)
    if millis is None:
        return None
    seconds, ms = divmod(int(millis), 1000)
    nanos = offset.get(TIMESTAMP_NANOS)
    micros = int(nanos) // 1000 if nanos is not None else ms * 1000
    return _EPOCH + datetime.timedelta(seconds=seconds, microseconds=micros)


def _timestamp_fields(instant: datetime.datetime) -> dict[str, int]:
    delta = instant - _EPOCH
    seconds = delta.days * 86400 + delta.seconds
    return {TIMESTAMP: seconds * 1000 + delta.microseconds // 1000, TIMESTAMP_NANOS: delta.microseconds * 1000}


class _Offsets(Sequence[Mapping[str, Any]]):
    """The source offset after each row of a batch, computed when asked (the runtime reads the last)."""

    __slots__ = ("_incs", "_lookahead", "_mode", "_previous", "_times")

    def __init__(self, mode: str, times: list[datetime.datetime | None], incs: list[int | None],
                 previous: dict[str, Any], lookahead: datetime.datetime | None) -> None:
        self._mode, self._times, self._incs = mode, times, incs
        self._previous, self._lookahead = previous, lookahead

    def __len__(self) -> int:
        return len(self._times) if self._mode != INCREMENTING else len(self._incs)

    def __getitem__(self, index: int) -> Mapping[str, Any]:  # type: ignore[override]
        n = len(self)
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise IndexError(index)
        if self._mode == INCREMENTING:
            return {INCREMENTING: self._incs[index]}
        if self._mode == "timestamp+incrementing":
            instant = self._times[index]
            assert instant is not None
            return {**_timestamp_fields(instant), INCREMENTING: self._incs[index]}
        # timestamp: advance only past a timestamp all of whose rows were read
        times = self._times
        for j in range(index, -1, -1):
            following = times[j + 1] if j + 1 < len(times) else self._lookahead
            current = times[j]
            if current is not None and (following is None or current < following):
                return _timestamp_fields(current)
        return dict(self._previous)


class Querier:
    """Reads one table or the custom query; ``poll`` returns the next batch of records (or None)."""

    def __init__(self, db: Database, cfg: SourceConfig, *, table: TableId | None, topic: str,
                 partition: dict[str, str], offset: Mapping[str, Any] | None) -> None:
        self.db, self.cfg, self.table, self.topic, self.partition = db, cfg, table, topic, partition
        self.mode = cfg.mode
        self.offset: dict[str, Any] = dict(offset or {})
        self.next_due = 0.0
        self.name = table.fqn if table is not None else "query"
        self._cursor: Any = None
        self._carry: list[Any] = []
        self._mapper: RowMapper | None = None
        self._signature: tuple[Any, ...] = ()
        self._reflected: dict[str, Column] = {}
        self._incrementing = cfg.incrementing_column
        self._ts_index: list[int] = []
        self._inc_index = -1
        self._zoned = False
        self._sqlite_types: dict[str, str] = {}
        if table is not None:
            self._reflect()

    # -- metadata -------------------------------------------------------------------------------
    def _reflect(self) -> None:
        assert self.table is not None
        columns, _primary, auto = reflect_columns(self.db, self.table)
        if not columns:
            raise ConnectError(f"Table {self.table.fqn} has no columns (or does not exist)")
        self._reflected = {c.name: c for c in columns}
        if self.mode in (INCREMENTING, "timestamp+incrementing") and not self.cfg.incrementing_column:
            if auto is None:
                raise ConnectError(f"Cannot find an auto-incrementing column in table {self.table.fqn}: set "
                                   "incrementing.column.name")
            self._incrementing = auto
        wanted = [*self.cfg.timestamp_columns, *([self._incrementing] if self._uses_incrementing else [])]
        for name in wanted:
            column = self._reflected.get(name)
            if column is None:
                raise ConnectError(f"Column {name!r} used for offsets is not in table {self.table.fqn} "
                                   f"(columns: {', '.join(self._reflected)})")
            if self.cfg.validate_non_null and column.nullable:
                raise ConnectError(f"Cannot make incremental queries using column {name!r} on {self.table.fqn} "
                                   "because this column is nullable (or set validate.non.null=false)")
        if self.cfg.timestamp_columns:
            self._zoned = self._reflected[self.cfg.timestamp_columns[0]].zoned

    @property
    def _uses_incrementing(self) -> bool:
        return self.mode in (INCREMENTING, "timestamp+incrementing")

    @property
    def _uses_timestamp(self) -> bool:
        return self.mode in (TIMESTAMP, "timestamp+incrementing")

    def _columns_for(self, description: Sequence[Sequence[Any]], cursor: Any) -> list[Column]:
        backend = self.db.engine.dialect.name
        names = [d[0] for d in description]
        if self.table is not None:
            if any(n not in self._reflected for n in names):
                self._reflect()  # the table changed
            return [self._reflected.get(n) or column_from_description(backend, d) for n, d in zip(names, description,
                                                                                                  strict=True)]
        if backend in ("mysql", "mariadb"):
            fields = getattr(getattr(cursor, "_result", None), "fields", None) or []
            charsets = [getattr(f, "charsetnr", None) for f in fields]
            return [column_from_description(backend, (*d[:7], charsets[i] if i < len(charsets) else None))
                    for i, d in enumerate(description)]
        if backend == "sqlite":
            return [column_from_description(backend, d, self._sqlite_types.get(d[0])) for d in description]
        return [column_from_description(backend, d) for d in description]

    def _sqlite_declared_types(self, connection: PoolProxiedConnection) -> None:
        """A query's declared column types in SQLite, read through a temporary view of it."""
        cursor = connection.cursor()
        try:
            cursor.execute("DROP VIEW IF EXISTS temp.seaway_jdbc_query")
            cursor.execute(f"CREATE TEMP VIEW seaway_jdbc_query AS {self.cfg.query}")
            cursor.execute("PRAGMA temp.table_info(seaway_jdbc_query)")
            self._sqlite_types = {row[1]: row[2] for row in cursor.fetchall() if row[2]}
            cursor.execute("DROP VIEW IF EXISTS temp.seaway_jdbc_query")
        finally:
            cursor.close()

    # -- the query ------------------------------------------------------------------------------
    def _sql(self) -> str:
        dialect = self.db.dialect
        if self.table is not None:
            base = f"SELECT * FROM {dialect.table_sql(self.table)}"
        else:
            base = self.cfg.query
            if self.mode != "bulk" and dialect.placeholder == "%s":
                base = base.replace("%", "%%")
        mark = dialect.placeholder
        if self._uses_timestamp:
            cols = [dialect.quote(c) for c in self.cfg.timestamp_columns]
            ts = dialect.timestamp_expr(cols[0] if len(cols) == 1 else f"COALESCE({','.join(cols)})")
        if self.mode == INCREMENTING:
            inc = dialect.quote(self._incrementing)
            where = f" WHERE {inc} > {mark} ORDER BY {inc} ASC"
        elif self.mode == TIMESTAMP:
            where = f" WHERE {ts} > {mark} AND {ts} < {mark} ORDER BY {ts} ASC"
        elif self.mode == "timestamp+incrementing":
            inc = dialect.quote(self._incrementing)
            where = (f" WHERE {ts} < {mark} AND (({ts} = {mark} AND {inc} > {mark}) OR {ts} > {mark})"
                     f" ORDER BY {ts},{inc} ASC")
        else:
            where = ""
        suffix = f" {self.cfg.query_suffix}" if self.cfg.query_suffix else ""
        return base + where + suffix

    def _begin(self, connection: PoolProxiedConnection) -> datetime.datetime:
        instant = offset_instant(self.offset)
        if instant is not None:
            return instant
        initial = self.cfg.timestamp_initial
        if initial == -1:
            return self._now(connection)
        return _EPOCH + datetime.timedelta(milliseconds=initial or 0)

    def _now(self, connection: PoolProxiedConnection) -> datetime.datetime:
        cursor = connection.cursor()
        try:
            cursor.execute(self.db.dialect.current_time_sql())
            row = cursor.fetchone()
        finally:
            cursor.close()
        assert row is not None
        return self.db.dialect.parse_current_time(row[0])

    def _params(self, connection: PoolProxiedConnection) -> tuple[Any, ...] | None:
        dialect = self.db.dialect
        last_inc = int(self.offset.get(INCREMENTING, -1))
        if self.mode == INCREMENTING:
            return (last_inc,)
        if not self._uses_timestamp:
            return None
        begin = self._begin(connection)
        end = self._now(connection) - datetime.timedelta(milliseconds=self.cfg.timestamp_delay_ms)
        b, e = dialect.timestamp_param(begin, self._zoned), dialect.timestamp_param(end, self._zoned)
        if self.mode == TIMESTAMP:
            return (b, e)
        return (e, b, last_inc, b)

    def _execute(self, connection: PoolProxiedConnection) -> None:
        if self.table is None and self.db.engine.dialect.name == "sqlite" and not self._sqlite_types:
            self._sqlite_declared_types(connection)
        params = self._params(connection)
        sql = self._sql()
        cursor = self.db.dialect.streaming_cursor(connection)
        try:
            if params is None:
                cursor.execute(sql)
            else:
                cursor.execute(sql, params)
        except Exception:
            cursor.close()
            raise
        description = cursor.description or ()
        signature = tuple((d[0], d[1]) for d in description)
        if self._mapper is None or signature != self._signature:
            columns = self._columns_for(description, cursor)
            names = [c.name for c in columns]
            self._mapper = RowMapper(self.table.table if self.table is not None else None, columns,
                                     self.db.dialect, self.cfg.numeric_mapping)
            self._signature = signature
            self._ts_index = [self._index(names, c) for c in self.cfg.timestamp_columns] if self._uses_timestamp \
                else []
            self._inc_index = self._index(names, self._incrementing) if self._uses_incrementing else -1
            if self.table is None and self._uses_timestamp:
                self._zoned = columns[self._ts_index[0]].zoned
        self._cursor = cursor
        self._carry = []
        log.debug("%s: %s %s", self.name, sql, params)

    def _index(self, names: list[str], column: str) -> int:
        if column in names:
            return names.index(column)
        folded = [n.lower() for n in names]
        if folded.count(column.lower()) == 1:
            return folded.index(column.lower())
        raise ConnectError(f"Column {column!r} used for offsets is not in the result of {self.name} "
                           f"(columns: {', '.join(names)})")

    # -- polling --------------------------------------------------------------------------------
    def poll(self, connection: PoolProxiedConnection, max_rows: int) -> SourceRecordBatch | None:
        """The next batch of up to ``max_rows`` records; None once the current query is exhausted."""
        if self._cursor is None:
            self._execute(connection)
        lookahead_mode = self.mode == TIMESTAMP
        want = max_rows + 1 if lookahead_mode else max_rows
        rows = self._carry + list(self._cursor.fetchmany(want - len(self._carry)))
        exhausted = len(rows) < want
        self._carry = [rows.pop()] if lookahead_mode and not exhausted else []
        if exhausted:
            self.finish(connection)
        if not rows:
            return None
        mapper = self._mapper
        assert mapper is not None
        schema = mapper.schema
        structs = [Struct.from_valid_values(schema, values) for values in mapper.values(rows)]
        offsets = self._offsets(rows, exhausted)
        if offsets is not None and len(offsets):
            self.offset = dict(offsets[-1])
        return SourceRecordBatch(self.topic, structs, value_schema=schema, source_partition=self.partition,
                                 source_offsets=offsets)

    def _offsets(self, rows: list[Sequence[Any]], exhausted: bool) -> _Offsets | None:
        if self.mode == "bulk":
            return None
        incs: list[int | None] = []
        if self._uses_incrementing:
            i = self._inc_index
            incs = [int(row[i]) if row[i] is not None else None for row in rows]
            if any(v is None for v in incs):
                raise ConnectError(f"Null value for incrementing column {self._incrementing!r} in {self.name}")
        times: list[datetime.datetime | None] = []
        lookahead = None
        if self._uses_timestamp:
            times = [self._row_instant(row) for row in rows]
            if not exhausted and self._carry:
                lookahead = self._row_instant(self._carry[0])
        return _Offsets(self.mode, times, incs, dict(self.offset), lookahead)

    def _row_instant(self, row: Sequence[Any]) -> datetime.datetime | None:
        for i in self._ts_index:
            value = row[i]
            if value is not None:
                return self.db.dialect.naive_timestamp(parse_timestamp(value), self._zoned)
        return None

    def finish(self, connection: PoolProxiedConnection | None) -> None:
        """Close the open query (if any) and end its transaction; the next one is due after poll.interval.ms."""
        cursor, self._cursor, self._carry = self._cursor, None, []
        if cursor is not None:
            try:
                cursor.close()
            except Exception as e:  # a broken connection: the task reconnects
                log.debug("closing the cursor of %s: %s", self.name, e)
            if connection is not None:
                connection.commit()
            self.next_due = time.monotonic() + self.cfg.poll_interval_ms / 1000

    @property
    def open(self) -> bool:
        return self._cursor is not None
