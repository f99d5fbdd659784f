"""The JDBC connectors' configs: Confluent's kafka-connect-jdbc names, defaults and meanings.

Both connectors share the ``connection.*`` keys, ``dialect.name``, ``db.timezone`` and
``quote.sql.identifiers``; the source adds the table selection and query modes, the sink the
write modes. Keys are checked one by one by the :class:`ConfigDef` (a 400 naming the key from
``PUT .../config/validate`` and connector creation), and across keys by :func:`source_problems`
/ :func:`sink_problems` (e.g. ``mode=timestamp`` without ``timestamp.column.name``), which
both ``Connector.validate`` and the parse at start use, so the REST answer and the start agree.

``connection.password`` is a PASSWORD: the runtime shows it as ``[hidden]`` in validation
answers and logs, and it is read (``.value``) only where the engine is made.
"""

from __future__ import annotations

import zoneinfo
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from seaway.connect.api import (
    CaseInsensitiveValidString,
    ConfigDef,
    ConfigError,
    ConfigType,
    Importance,
    LambdaValidator,
    Password,
    Range,
    ValidString,
)
from seaway.connectors.jdbc.urls import sqlite_path_problem, to_sqlalchemy_url

__all__ = ["SINK_CONFIG_DEF", "SOURCE_CONFIG_DEF", "SinkConfig", "SourceConfig", "parse_sink", "parse_source",
           "sink_problems", "source_problems"]

CONNECTION_URL = "connection.url"
CONNECTION_USER = "connection.user"
CONNECTION_PASSWORD = "connection.password"
CONNECTION_ATTEMPTS = "connection.attempts"
CONNECTION_BACKOFF = "connection.backoff.ms"
DIALECT_NAME = "dialect.name"
DB_TIMEZONE = "db.timezone"
QUOTE_SQL_IDENTIFIERS = "quote.sql.identifiers"

MODE = "mode"
MODES = ("bulk", "incrementing", "timestamp", "timestamp+incrementing")


def _zone(name: str, value: Any) -> None:
    try:
        zoneinfo.ZoneInfo(str(value))
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise ConfigError.invalid(name, value, "not a time zone name (e.g. UTC, Europe/Paris)") from None


def _url(name: str, value: Any) -> None:
    if value:
        to_sqlalchemy_url(str(value))


_ZONE = LambdaValidator(_zone, "a time zone name, e.g. UTC or America/Los_Angeles")
_URL = LambdaValidator(_url, "jdbc:postgresql://, jdbc:mysql://, jdbc:mariadb://, jdbc:sqlite: or a SQLAlchemy URL")
_NUMERIC_MAPPING_VALUES = ("none", "precision_only", "best_fit", "best_fit_eager_double")


def _numeric_mapping(name: str, value: Any) -> None:
    if value is not None and value not in _NUMERIC_MAPPING_VALUES:
        raise ConfigError.invalid(name, value, "String must be one of: " + ", ".join(_NUMERIC_MAPPING_VALUES))


_NUMERIC_MAPPINGS = LambdaValidator(_numeric_mapping, "[" + ", ".join(_NUMERIC_MAPPING_VALUES) + "] or null")
_DIALECTS = ValidString.in_("", "PostgreSqlDatabaseDialect", "MySqlDatabaseDialect", "SqliteDatabaseDialect")


def _connection(definition: ConfigDef, group: str) -> ConfigDef:
    return (definition
            .define(CONNECTION_URL, ConfigType.STRING, None, _URL, Importance.HIGH,
                    "JDBC connection URL (jdbc:postgresql://host:5432/db, jdbc:mysql://host/db, "
                    "jdbc:mariadb://host/db, jdbc:sqlite:file.db) or a SQLAlchemy URL.", group, 1)
            .define(CONNECTION_USER, ConfigType.STRING, None, None, Importance.HIGH, "JDBC connection user.",
                    group, 2)
            .define(CONNECTION_PASSWORD, ConfigType.PASSWORD, None, None, Importance.HIGH,
                    "JDBC connection password.", group, 3)
            .define(CONNECTION_ATTEMPTS, ConfigType.INT, 3, Range.at_least(1), Importance.LOW,
                    "Maximum number of attempts to retrieve a valid JDBC connection. Must be a positive integer.",
                    group, 4)
            .define(CONNECTION_BACKOFF, ConfigType.LONG, 10000, Range.at_least(0), Importance.LOW,
                    "Backoff time in milliseconds between connection attempts.", group, 5)
            .define(DIALECT_NAME, ConfigType.STRING, "", _DIALECTS, Importance.LOW,
                    "The database dialect; empty: from the connection URL.", group, 6)
            .define(DB_TIMEZONE, ConfigType.STRING, "UTC", _ZONE, Importance.MEDIUM,
                    "Time zone of timestamp columns without a time zone, for reading and writing them.", group, 7)
            .define(QUOTE_SQL_IDENTIFIERS, ConfigType.STRING, "always",
                    CaseInsensitiveValidString.in_("always", "never"),
                    Importance.MEDIUM, "When to quote table names, column names, and other identifiers in "
                    "SQL statements.", group, 8))


def _sqlite_path(url: Any, problems: list[tuple[str, str]]) -> None:
    """A relative SQLite path must name an existing file in the worker's directory (urls.py says why)."""
    problem = sqlite_path_problem(str(url)) if url else None
    if problem:
        problems.append((CONNECTION_URL, problem))


# -- source -------------------------------------------------------------------------------------------

SOURCE_CONFIG_DEF = _connection(ConfigDef(), "Database")
(SOURCE_CONFIG_DEF
 .define("table.whitelist", ConfigType.LIST, "", None, Importance.MEDIUM,
         "List of tables to include in copying. If specified, table.blacklist may not be set.", "Database", 10)
 .define("table.blacklist", ConfigType.LIST, "", None, Importance.MEDIUM,
         "List of tables to exclude from copying. If specified, table.whitelist may not be set.", "Database", 11)
 .define("table.include.list", ConfigType.LIST, "", None, Importance.MEDIUM,
         "Regular expressions matching the fully-qualified names of tables to copy.", "Database", 12)
 .define("table.exclude.list", ConfigType.LIST, "", None, Importance.MEDIUM,
         "Regular expressions matching the fully-qualified names of tables not to copy (needs "
         "table.include.list).", "Database", 13)
 .define("schema.pattern", ConfigType.STRING, None, None, Importance.MEDIUM,
         "Schema pattern (SQL LIKE) to fetch table metadata from the database; null: every schema.",
         "Database", 14)
 .define("catalog.pattern", ConfigType.STRING, None, None, Importance.LOW,
         "Catalog pattern (SQL LIKE; MariaDB's databases); null: the connection's database.", "Database", 15)
 .define("table.types", ConfigType.LIST, "TABLE", None, Importance.LOW,
         "Table types to copy: TABLE, VIEW.", "Database", 16)
 .define("numeric.mapping", ConfigType.STRING, None, _NUMERIC_MAPPINGS, Importance.LOW,
         "Map NUMERIC values by precision and optionally scale to integral or decimal types.", "Database", 17)
 .define("numeric.precision.mapping", ConfigType.BOOLEAN, False, None, Importance.LOW,
         "Deprecated: numeric.mapping=precision_only.", "Database", 18)
 .define(MODE, ConfigType.STRING, "", ValidString.in_("", *MODES), Importance.HIGH,
         "The mode for updating a table each time it is polled: bulk, incrementing, timestamp, "
         "timestamp+incrementing.", "Mode", 1)
 .define("incrementing.column.name", ConfigType.STRING, "", None, Importance.MEDIUM,
         "The name of the strictly incrementing column to use to detect new rows; empty: the table's "
         "auto-increment column.", "Mode", 2)
 .define("timestamp.column.name", ConfigType.LIST, "", None, Importance.MEDIUM,
         "One or more timestamp columns to detect new or modified rows (COALESCE of them, in order).",
         "Mode", 3)
 .define("timestamp.initial", ConfigType.LONG, None, None, Importance.LOW,
         "Epoch milliseconds of the first timestamp to read from; -1: now; null: everything.", "Mode", 4)
 .define("validate.non.null", ConfigType.BOOLEAN, True, None, Importance.LOW,
         "Fail unless the incrementing and timestamp columns are NOT NULL.", "Mode", 5)
 .define("query", ConfigType.STRING, "", None, Importance.MEDIUM,
         "A query to run instead of copying tables (custom query mode).", "Mode", 6)
 .define("query.suffix", ConfigType.STRING, "", None, Importance.LOW,
         "Suffix to append at the end of the generated query.", "Mode", 7)
 .define("poll.interval.ms", ConfigType.INT, 5000, Range.at_least(1), Importance.HIGH,
         "Frequency in ms to poll for new data in each table.", "Connector", 1)
 .define("batch.max.rows", ConfigType.INT, 100, Range.at_least(1), Importance.LOW,
         "Maximum number of rows to include in a single batch when polling for new data.", "Connector", 2)
 .define("table.poll.interval.ms", ConfigType.LONG, 60000, Range.at_least(1), Importance.LOW,
         "Frequency in ms to poll for new or removed tables.", "Connector", 3)
 .define("topic.prefix", ConfigType.STRING, "", None, Importance.HIGH,
         "Prefix to prepend to table names to generate the topic name, or the whole topic name in "
         "query mode.", "Connector", 4)
 .define("timestamp.delay.interval.ms", ConfigType.LONG, 0, Range.at_least(0), Importance.HIGH,
         "How long to wait after a row with a certain timestamp appears before including it, so that "
         "transactions with earlier timestamps can commit.", "Connector", 5)
 .define("query.retry.attempts", ConfigType.INT, -1, Range.at_least(-1), Importance.LOW,
         "Times to retry a failed query before failing the task; -1: forever.", "Connector", 6))


@dataclass(frozen=True, slots=True)
class SourceConfig:
    """The parsed source config (see docs/jdbc.md for each key)."""

    url: str
    user: str | None
    password: Password | None
    attempts: int
    backoff_ms: int
    db_timezone: str
    quote: bool
    whitelist: tuple[str, ...]
    blacklist: tuple[str, ...]
    include: tuple[str, ...]
    exclude: tuple[str, ...]
    schema_pattern: str | None
    catalog_pattern: str | None
    table_types: tuple[str, ...]
    numeric_mapping: str
    mode: str
    incrementing_column: str
    timestamp_columns: tuple[str, ...]
    timestamp_initial: int | None
    validate_non_null: bool
    query: str
    query_suffix: str
    poll_interval_ms: int
    batch_max_rows: int
    table_poll_interval_ms: int
    topic_prefix: str
    timestamp_delay_ms: int
    query_retry_attempts: int


def source_problems(props: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Cross-key errors as (key, message); each key was already parsed on its own."""
    problems: list[tuple[str, str]] = []

    def get(key: str) -> Any:
        return props.get(key)

    if not get(CONNECTION_URL):
        problems.append((CONNECTION_URL, f'Missing required configuration "{CONNECTION_URL}" which has no '
                                         "default value."))
    _sqlite_path(get(CONNECTION_URL), problems)
    mode = get(MODE) or ""
    if not mode:
        problems.append((MODE, "Missing required configuration \"mode\": one of " + ", ".join(MODES)))
    if mode in ("timestamp", "timestamp+incrementing") and not [c for c in get("timestamp.column.name") or [] if c]:
        problems.append(("timestamp.column.name", f"mode={mode} needs timestamp.column.name"))
    if get("table.whitelist") and get("table.blacklist"):
        problems.append(("table.blacklist", "table.whitelist and table.blacklist are exclusive"))
    if get("table.include.list") and (get("table.whitelist") or get("table.blacklist")):
        problems.append(("table.include.list", "table.include.list cannot be used with table.whitelist or "
                                               "table.blacklist"))
    if get("table.exclude.list") and not get("table.include.list"):
        problems.append(("table.exclude.list", "table.exclude.list needs table.include.list"))
    if get("query") and (get("table.whitelist") or get("table.blacklist") or get("table.include.list")):
        problems.append(("query", "query cannot be combined with table.whitelist, table.blacklist or "
                                  "table.include.list"))
    if get("query") and not get("topic.prefix"):
        problems.append(("topic.prefix", "query mode needs topic.prefix (the whole topic name)"))
    problems.extend(("table.types", f"table type {table_type!r} is not supported (TABLE, VIEW)")
                    for table_type in get("table.types") or [] if table_type.upper() not in ("TABLE", "VIEW"))
    return problems


def parse_source(props: Mapping[str, str]) -> SourceConfig:
    """The typed config, or :class:`ConfigError` naming the first bad key."""
    v = SOURCE_CONFIG_DEF.parse(props)
    for key, message in source_problems(v):
        raise ConfigError(message, name=key)
    mapping = v["numeric.mapping"] or ("precision_only" if v["numeric.precision.mapping"] else "none")
    return SourceConfig(
        url=v[CONNECTION_URL], user=v[CONNECTION_USER], password=v[CONNECTION_PASSWORD],
        attempts=v[CONNECTION_ATTEMPTS], backoff_ms=v[CONNECTION_BACKOFF], db_timezone=v[DB_TIMEZONE],
        quote=v[QUOTE_SQL_IDENTIFIERS].lower() == "always",
        whitelist=tuple(t for t in v["table.whitelist"] if t), blacklist=tuple(t for t in v["table.blacklist"] if t),
        include=tuple(t for t in v["table.include.list"] if t), exclude=tuple(t for t in v["table.exclude.list"] if t),
        schema_pattern=v["schema.pattern"], catalog_pattern=v["catalog.pattern"],
        table_types=tuple(t.upper() for t in v["table.types"] if t), numeric_mapping=mapping, mode=v[MODE],
        incrementing_column=v["incrementing.column.name"],
        timestamp_columns=tuple(c for c in v["timestamp.column.name"] if c),
        timestamp_initial=v["timestamp.initial"], validate_non_null=v["validate.non.null"], query=v["query"],
        query_suffix=v["query.suffix"], poll_interval_ms=v["poll.interval.ms"], batch_max_rows=v["batch.max.rows"],
        table_poll_interval_ms=v["table.poll.interval.ms"], topic_prefix=v["topic.prefix"],
        timestamp_delay_ms=v["timestamp.delay.interval.ms"], query_retry_attempts=v["query.retry.attempts"])


# -- sink ---------------------------------------------------------------------------------------------

KAFKA_PK_NAMES = ("__connect_topic", "__connect_partition", "__connect_offset")

SINK_CONFIG_DEF = _connection(ConfigDef(), "Connection")
(SINK_CONFIG_DEF
 .define("insert.mode", ConfigType.STRING, "insert", ValidString.in_("insert", "upsert", "update"),
         Importance.HIGH, "The insertion mode to use: insert, upsert, update.", "Writes", 1)
 .define("batch.size", ConfigType.INT, 3000, Range.at_least(0), Importance.MEDIUM,
         "Specifies how many records to attempt to batch together for insertion into the destination table.",
         "Writes", 2)
 .define("delete.enabled", ConfigType.BOOLEAN, False, None, Importance.MEDIUM,
         "Whether to treat null record values as deletes. Requires pk.mode to be record_key.", "Writes", 3)
 .define("table.name.format", ConfigType.STRING, "${topic}", None, Importance.MEDIUM,
         "A format string for the destination table name, which may contain '${topic}'.", "Data Mapping", 1)
 .define("pk.mode", ConfigType.STRING, "none", ValidString.in_("none", "kafka", "record_key", "record_value"),
         Importance.HIGH, "The primary key mode: none, kafka, record_key, record_value.", "Data Mapping", 2)
 .define("pk.fields", ConfigType.LIST, "", None, Importance.MEDIUM,
         "List of comma-separated primary key field names; its meaning depends on pk.mode.", "Data Mapping", 3)
 .define("fields.whitelist", ConfigType.LIST, "", None, Importance.MEDIUM,
         "List of comma-separated record value field names; empty: all fields.", "Data Mapping", 4)
 .define("auto.create", ConfigType.BOOLEAN, False, None, Importance.MEDIUM,
         "Whether to automatically create the destination table based on record schema if it is missing.",
         "DDL Support", 1)
 .define("auto.evolve", ConfigType.BOOLEAN, False, None, Importance.MEDIUM,
         "Whether to automatically add columns in the table schema when found to be missing relative to the "
         "record schema.", "DDL Support", 2)
 .define("max.retries", ConfigType.INT, 10, Range.at_least(0), Importance.MEDIUM,
         "The maximum number of times to retry on errors before failing the task.", "Retries", 1)
 .define("retry.backoff.ms", ConfigType.INT, 3000, Range.at_least(0), Importance.MEDIUM,
         "The time in milliseconds to wait following an error before a retry attempt is made.", "Retries", 2))


@dataclass(frozen=True, slots=True)
class SinkConfig:
    """The parsed sink config (see docs/jdbc.md for each key)."""

    url: str
    user: str | None
    password: Password | None
    attempts: int
    backoff_ms: int
    db_timezone: str
    quote: bool
    insert_mode: str
    batch_size: int
    delete_enabled: bool
    table_name_format: str
    pk_mode: str
    pk_fields: tuple[str, ...]
    fields_whitelist: tuple[str, ...]
    auto_create: bool
    auto_evolve: bool
    max_retries: int
    retry_backoff_ms: int
    connector: str = ""
    """The connector's ``name`` (the runtime puts it in every task's config), for messages."""


def sink_problems(props: Mapping[str, Any]) -> list[tuple[str, str]]:
    problems: list[tuple[str, str]] = []
    if not props.get(CONNECTION_URL):
        problems.append((CONNECTION_URL, f'Missing required configuration "{CONNECTION_URL}" which has no '
                                         "default value."))
    _sqlite_path(props.get(CONNECTION_URL), problems)
    pk_mode, pk_fields = props.get("pk.mode"), [f for f in props.get("pk.fields") or [] if f]
    if props.get("delete.enabled") and pk_mode != "record_key":
        problems.append(("delete.enabled", "Deletes are only supported for pk.mode record_key"))
    if props.get("insert.mode") in ("upsert", "update") and pk_mode == "none":
        problems.append(("pk.mode", f"insert.mode={props.get('insert.mode')} needs primary keys: pk.mode must "
                                    "be kafka, record_key or record_value"))
    if pk_mode == "kafka" and pk_fields and len(pk_fields) != 3:
        problems.append(("pk.fields", "pk.mode=kafka needs exactly 3 pk.fields (topic, partition, offset "
                                      "column names) or none"))
    return problems


def parse_sink(props: Mapping[str, str]) -> SinkConfig:
    v = SINK_CONFIG_DEF.parse(props)
    for key, message in sink_problems(v):
        raise ConfigError(message, name=key)
    return SinkConfig(
        url=v[CONNECTION_URL], user=v[CONNECTION_USER], password=v[CONNECTION_PASSWORD],
        attempts=v[CONNECTION_ATTEMPTS], backoff_ms=v[CONNECTION_BACKOFF], db_timezone=v[DB_TIMEZONE],
        quote=v[QUOTE_SQL_IDENTIFIERS].lower() == "always", insert_mode=v["insert.mode"], batch_size=v["batch.size"],
        delete_enabled=v["delete.enabled"], table_name_format=v["table.name.format"], pk_mode=v["pk.mode"],
        pk_fields=tuple(f for f in v["pk.fields"] if f),
        fields_whitelist=tuple(f for f in v["fields.whitelist"] if f), auto_create=v["auto.create"],
        auto_evolve=v["auto.evolve"], max_retries=v["max.retries"], retry_backoff_ms=v["retry.backoff.ms"],
        connector=str(props.get("name") or ""))
