"""The Iceberg sink's configuration: Apache Iceberg's Kafka Connect config names, meanings and defaults.

An Iceberg user's connector config runs unchanged: ``iceberg.tables``, ``iceberg.tables.dynamic-enabled``
+ ``iceberg.tables.route-field``, ``iceberg.table.<t>.route-regex``, ``iceberg.tables.auto-create-enabled``
(+ ``iceberg.tables.auto-create-props.*``), ``iceberg.tables.evolve-schema-enabled``,
``iceberg.tables.schema-force-optional``, ``iceberg.tables.default-id-columns`` /
``iceberg.table.<t>.id-columns``, ``iceberg.tables.default-partition-by`` / ``iceberg.table.<t>.partition-by``,
``iceberg.tables.write-props.*``, ``iceberg.control.topic``, ``iceberg.control.group-id-prefix``,
``iceberg.control.commit.interval-ms`` (300000) / ``timeout-ms`` (30000) / ``threads``,
``iceberg.connect.group-id``, ``iceberg.catalog`` (the catalog's name) and ``iceberg.catalog.*`` (its
properties), ``iceberg.kafka.*`` (the control topic's Kafka clients). Keys the sink does not support (a
commit branch, case-insensitive schemas, Hadoop configuration, keys of older Tabular releases, anything
else under ``iceberg.``) are errors on that key, so a create is a 400 naming it rather than a setting
silently ignored.

The lake sinks' rotation keys come from :mod:`seaway.connectors.lake.config` (``flush.size``, ...), and
``partitioner.class`` maps to a partition spec (``field`` -> identity, ``hourly``/``daily`` -> hour/day).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from seaway.connect.api import Config, ConfigDef, ConfigType, Importance, Range
from seaway.connectors.lake import (
    PARTITIONERS,
    ConfigRules,
    StorageConfig,
    define_storage_keys,
    storage_cross_check,
    storage_settings,
    unknown_keys,
)
from seaway.connectors.lake_tables.partition_by import (
    PARTITIONER_CLASS,
    PartitionTerm,
    parse_partition_by,
    partitioner_terms,
)

__all__ = ["CONFIG_DEF", "RULES", "IcebergSinkConfig", "TableConfig", "validate_config"]

TABLES = "iceberg.tables"
DYNAMIC = "iceberg.tables.dynamic-enabled"
ROUTE_FIELD = "iceberg.tables.route-field"
COMMIT_BRANCH = "iceberg.tables.default-commit-branch"
DEFAULT_ID_COLUMNS = "iceberg.tables.default-id-columns"
DEFAULT_PARTITION_BY = "iceberg.tables.default-partition-by"
AUTO_CREATE = "iceberg.tables.auto-create-enabled"
FORCE_OPTIONAL = "iceberg.tables.schema-force-optional"
CASE_INSENSITIVE = "iceberg.tables.schema-case-insensitive"
EVOLVE = "iceberg.tables.evolve-schema-enabled"
CATALOG_NAME = "iceberg.catalog"
CONTROL_TOPIC = "iceberg.control.topic"
CONTROL_GROUP_PREFIX = "iceberg.control.group-id-prefix"
CONNECT_GROUP_ID = "iceberg.connect.group-id"
COMMIT_INTERVAL_MS = "iceberg.control.commit.interval-ms"
COMMIT_TIMEOUT_MS = "iceberg.control.commit.timeout-ms"
COMMIT_THREADS = "iceberg.control.commit.threads"
HADOOP_CONF_DIR = "iceberg.hadoop-conf-dir"

CATALOG_PREFIX = "iceberg.catalog."
KAFKA_PREFIX = "iceberg.kafka."
TABLE_PREFIX = "iceberg.table."
AUTO_CREATE_PROPS_PREFIX = "iceberg.tables.auto-create-props."
WRITE_PROPS_PREFIX = "iceberg.tables.write-props."
#: per-table keys: iceberg.table.<table>.<key>
TABLE_KEYS = ("id-columns", "partition-by", "route-regex", "commit-branch")

#: keys of Tabular's iceberg-kafka-connect (the sink's predecessor) that Apache Iceberg dropped, with what
#: to use instead
_RETIRED = {
    "iceberg.tables.cdc-field": "change-data capture fields are not supported; use id columns (upsert) with "
                                "tombstones for deletes",
    "iceberg.tables.upsert-mode-enabled": "set iceberg.tables.default-id-columns (or iceberg.table.<t>.id-columns): "
                                          "tables with id columns are upserted",
    "iceberg.tables.dynamic.enabled": "the name is iceberg.tables.dynamic-enabled",
    "iceberg.tables.routeField": "the name is iceberg.tables.route-field",
    "iceberg.table.commitIntervalMs": "the name is iceberg.control.commit.interval-ms",
}


def _defs() -> ConfigDef:
    d = (
        ConfigDef()
        .define(TABLES, ConfigType.LIST, "", None, Importance.HIGH,
                "Comma-separated destination tables (namespace.table). Without a route field every record goes "
                "to every table.")
        .define(DYNAMIC, ConfigType.BOOLEAN, False, None, Importance.MEDIUM,
                "Route each record to the table named by its iceberg.tables.route-field value (lower-cased).")
        .define(ROUTE_FIELD, ConfigType.STRING, None, None, Importance.MEDIUM,
                "Value field (dotted path) routing records: the table name (dynamic), or matched against each "
                "table's iceberg.table.<t>.route-regex.")
        .define(COMMIT_BRANCH, ConfigType.STRING, None, None, Importance.LOW,
                "Not supported: the sink commits to the table's main branch.")
        .define(DEFAULT_ID_COLUMNS, ConfigType.STRING, None, None, Importance.MEDIUM,
                "Comma-separated id columns of every table (identifier fields): rows are upserted by them and a "
                "tombstone (null value) deletes its key's row.")
        .define(DEFAULT_PARTITION_BY, ConfigType.STRING, None, None, Importance.MEDIUM,
                "Partition spec of tables the sink creates: comma-separated terms such as region, day(ts), "
                "hour(ts), month(ts), year(ts), bucket(16, id), truncate(4, name).")
        .define(AUTO_CREATE, ConfigType.BOOLEAN, False, None, Importance.MEDIUM,
                "Create a missing destination table from the first record's schema.")
        .define(FORCE_OPTIONAL, ConfigType.BOOLEAN, False, None, Importance.LOW,
                "Create and add every column as optional (nullable) whatever the record schema says.")
        .define(CASE_INSENSITIVE, ConfigType.BOOLEAN, False, None, Importance.LOW,
                "Not supported (true): columns are looked up by exact name.")
        .define(EVOLVE, ConfigType.BOOLEAN, False, None, Importance.MEDIUM,
                "Add record fields missing from the table as optional columns, widen int->long and "
                "float->double, make required columns optional; an incompatible change fails the task.")
        .define(CATALOG_NAME, ConfigType.STRING, "iceberg", None, Importance.MEDIUM, "The catalog's name.")
        .define(CONTROL_TOPIC, ConfigType.STRING, "control-iceberg", None, Importance.MEDIUM,
                "The control topic the tasks and the committer talk through (created with one partition if "
                "missing); connectors may share it.")
        .define(CONTROL_GROUP_PREFIX, ConfigType.STRING, "cg-control-", None, Importance.LOW,
                "Prefix of the group ids of the control topic's consumers.")
        .define(CONNECT_GROUP_ID, ConfigType.STRING, None, None, Importance.LOW,
                "The Connect consumer group of the connector (default connect-<name>); the committer reads the "
                "assignment from it.")
        .define(COMMIT_INTERVAL_MS, ConfigType.INT, 300_000, Range.at_least(1), Importance.MEDIUM,
                "How often the committer commits all tasks' data to the tables: one snapshot per table per "
                "interval.")
        .define(COMMIT_TIMEOUT_MS, ConfigType.INT, 30_000, Range.at_least(1), Importance.MEDIUM,
                "How long the committer waits for every partition's task to answer before committing what it "
                "has.")
        .define(COMMIT_THREADS, ConfigType.INT, max(2, 2 * (os.cpu_count() or 1)), Range.at_least(1),
                Importance.LOW, "Tables committed in parallel.")
        .define(HADOOP_CONF_DIR, ConfigType.STRING, None, None, Importance.LOW,
                "Not supported: the sink has no Hadoop configuration (FileIO settings go in iceberg.catalog.*).")
    )
    return define_storage_keys(d, flush_size=50_000, timestamp_extractor="Record", timezone="UTC", locale="en",
                               flush_size_doc="Records of one Kafka partition per data file set; the committer's "
                               "interval closes open sets too.")


CONFIG_DEF = _defs()


@dataclass(frozen=True, slots=True)
class TableConfig:
    """What one destination table needs: routing, id columns, partition spec."""

    name: str
    id_columns: tuple[str, ...]
    partition_by: tuple[PartitionTerm, ...]
    route_regex: re.Pattern[str] | None


@dataclass(frozen=True, slots=True)
class IcebergSinkConfig(StorageConfig):
    """The parsed, cross-checked config of an Iceberg sink task."""

    connector: str
    tables: tuple[str, ...]
    dynamic: bool
    route_field: str | None
    default_id_columns: tuple[str, ...]
    default_partition_by: tuple[PartitionTerm, ...]
    auto_create: bool
    force_optional: bool
    evolve: bool
    catalog_name: str
    catalog_props: Mapping[str, str]
    kafka_props: Mapping[str, str]
    auto_create_props: Mapping[str, str]
    write_props: Mapping[str, str]
    table_props: Mapping[str, Mapping[str, str]]
    control_topic: str
    control_group_prefix: str
    connect_group_id: str
    commit_interval_ms: int
    commit_timeout_ms: int
    commit_threads: int

    @classmethod
    def from_props(cls, props: Mapping[str, str]) -> IcebergSinkConfig:
        """Parse and cross-check; :class:`ConfigError` names the first bad key."""
        p = RULES.parse(props)
        connector = props.get("name", "iceberg-sink")
        per_table: dict[str, dict[str, str]] = {}
        for key, value in props.items():
            split = _table_key(key)
            if split is not None:
                per_table.setdefault(split[0], {})[split[1]] = value
        return cls(
            **storage_settings(p),
            connector=connector, tables=tuple(t.strip() for t in p[TABLES] if t.strip()), dynamic=p[DYNAMIC],
            route_field=p[ROUTE_FIELD] or None, default_id_columns=_columns(p[DEFAULT_ID_COLUMNS]),
            default_partition_by=tuple(parse_partition_by(p[DEFAULT_PARTITION_BY] or "")),
            auto_create=p[AUTO_CREATE], force_optional=p[FORCE_OPTIONAL], evolve=p[EVOLVE],
            catalog_name=p[CATALOG_NAME], catalog_props=_prefixed(props, CATALOG_PREFIX),
            kafka_props=_prefixed(props, KAFKA_PREFIX), auto_create_props=_prefixed(props, AUTO_CREATE_PROPS_PREFIX),
            write_props=_prefixed(props, WRITE_PROPS_PREFIX), table_props=per_table,
            control_topic=p[CONTROL_TOPIC], control_group_prefix=p[CONTROL_GROUP_PREFIX],
            connect_group_id=p[CONNECT_GROUP_ID] or f"connect-{connector}",
            commit_interval_ms=p[COMMIT_INTERVAL_MS], commit_timeout_ms=p[COMMIT_TIMEOUT_MS],
            commit_threads=p[COMMIT_THREADS],
        )

    def table(self, name: str) -> TableConfig:
        """A destination table's settings (``iceberg.table.<name>.*`` over the defaults)."""
        own = self.table_props.get(name, {})
        regex = own.get("route-regex")
        partition_by = (tuple(parse_partition_by(own["partition-by"])) if "partition-by" in own
                        else self.default_partition_by or tuple(partitioner_terms(self)))
        return TableConfig(name, _columns(own["id-columns"]) if "id-columns" in own else self.default_id_columns,
                           partition_by, re.compile(regex) if regex else None)


def _columns(text: str | None) -> tuple[str, ...]:
    return tuple(c.strip() for c in (text or "").split(",") if c.strip())


def _prefixed(props: Mapping[str, str], prefix: str) -> dict[str, str]:
    return {k[len(prefix):]: v for k, v in props.items() if k.startswith(prefix) and len(k) > len(prefix)}


def _table_key(key: str) -> tuple[str, str] | None:
    """``iceberg.table.<table>.<key>`` -> (table, key) for the per-table keys (the table may hold dots)."""
    if not key.startswith(TABLE_PREFIX):
        return None
    rest = key[len(TABLE_PREFIX):]
    for suffix in TABLE_KEYS:
        if rest.endswith("." + suffix) and len(rest) > len(suffix) + 1:
            return rest[:-len(suffix) - 1], suffix
    return None


def _unknown_keys(props: Mapping[str, str]) -> list[tuple[str, str]]:
    """``iceberg.*`` keys the sink does not know, each with why (a 400 names them)."""
    errors = []
    passthrough = (CATALOG_PREFIX, KAFKA_PREFIX, AUTO_CREATE_PROPS_PREFIX, WRITE_PROPS_PREFIX)
    for key in unknown_keys(props, "iceberg.", CONFIG_DEF, passthrough):
        if key in _RETIRED:
            errors.append((key, f"{key} is not supported: {_RETIRED[key]}"))
        elif key.startswith("iceberg.hadoop."):
            errors.append((key, f"{key} is not supported: the sink has no Hadoop configuration; FileIO "
                                "settings (s3.endpoint, s3.access-key-id, ...) go in iceberg.catalog.*"))
        elif _table_key(key) is None:
            errors.append((key, f"{key} is not an Iceberg sink setting Seaway supports (per-table keys are "
                                f"iceberg.table.<table>.{{{','.join(TABLE_KEYS)}}})"))
    return errors


def cross_check(parsed: Mapping[str, Any], props: Mapping[str, str]) -> list[tuple[str, str]]:
    """Rules across keys, unsupported values and unknown keys, as ``(key, message)`` pairs."""
    errors = _unknown_keys(props)
    errors += [(k, m) for k, m in storage_cross_check(parsed)]
    tables = [t.strip() for t in (parsed.get(TABLES) or []) if t.strip()]
    if tables and parsed.get(DYNAMIC):
        errors.append((TABLES, "Cannot specify both static and dynamic table names"))
    elif not tables and not parsed.get(DYNAMIC):
        errors.append((TABLES, "Must specify table name(s): iceberg.tables, or iceberg.tables.dynamic-enabled=true "
                               "with iceberg.tables.route-field"))
    if parsed.get(DYNAMIC) and not parsed.get(ROUTE_FIELD):
        errors.append((ROUTE_FIELD, "Must specify a route field if using dynamic table names"))
    for table in tables:
        if "." not in table:
            errors.append((TABLES, f"Table {table!r} needs a namespace: namespace.table"))
    for key, value in props.items():
        split = _table_key(key)
        if split is not None and split[1] == "commit-branch" and value not in ("", "main"):
            errors.append((key, f"{key}={value} is not supported: the sink commits to the main branch"))
        if split is not None and split[1] == "route-regex":
            try:
                re.compile(value)
            except re.error as e:
                errors.append((key, f"Invalid value {value} for configuration {key}: {e}"))
        if split is not None and split[1] == "partition-by":
            try:
                parse_partition_by(value)
            except ValueError as e:
                errors.append((key, f"Invalid value {value} for configuration {key}: {e}"))
    if parsed.get(COMMIT_BRANCH) not in (None, "", "main"):
        errors.append((COMMIT_BRANCH, f"{COMMIT_BRANCH}={parsed[COMMIT_BRANCH]} is not supported: the sink commits "
                                      "to the main branch"))
    if parsed.get(CASE_INSENSITIVE):
        errors.append((CASE_INSENSITIVE, f"{CASE_INSENSITIVE}=true is not supported: columns are matched by exact "
                                         "name"))
    if parsed.get(HADOOP_CONF_DIR):
        errors.append((HADOOP_CONF_DIR, f"{HADOOP_CONF_DIR} is not supported: the sink has no Hadoop "
                                        "configuration; FileIO settings go in iceberg.catalog.*"))
    if parsed.get(DEFAULT_PARTITION_BY):
        try:
            parse_partition_by(parsed[DEFAULT_PARTITION_BY])
        except ValueError as e:
            errors.append((DEFAULT_PARTITION_BY, f"Invalid value {parsed[DEFAULT_PARTITION_BY]} for configuration "
                                                 f"{DEFAULT_PARTITION_BY}: {e}"))
        if PARTITIONERS.get(parsed.get(PARTITIONER_CLASS) or "", "default") != "default":
            errors.append((PARTITIONER_CLASS, f"Set either {PARTITIONER_CLASS} or {DEFAULT_PARTITION_BY}, not both"))
    errors += partitioner_errors(parsed)
    timeout, interval = parsed.get(COMMIT_TIMEOUT_MS), parsed.get(COMMIT_INTERVAL_MS)
    if timeout is not None and interval is not None and timeout > interval:
        errors.append((COMMIT_TIMEOUT_MS, f"{COMMIT_TIMEOUT_MS} ({timeout}) must not exceed {COMMIT_INTERVAL_MS} "
                                          f"({interval})"))
    from seaway.connectors.lake_tables.catalog import catalog_errors  # catalog imports pyiceberg lazily

    errors += catalog_errors(_prefixed(props, CATALOG_PREFIX))
    return errors


def partitioner_errors(parsed: Mapping[str, Any]) -> list[tuple[str, str]]:
    """What ``partitioner.class`` cannot become as a table's partition spec."""
    kind = PARTITIONERS.get(parsed.get(PARTITIONER_CLASS) or "", "default")
    if kind == "time" and parsed.get("partition.duration.ms") not in (3_600_000, 86_400_000):
        return [(PARTITIONER_CLASS, "A table's time partitioning is hour or day: use partitioner.class=hourly or "
                                    "daily, or a partition-by term such as hour(ts) (path.format folders do not "
                                    "apply to tables)")]
    if kind in ("time", "hourly", "daily"):
        extractor = str(parsed.get("timestamp.extractor") or "").lower()
        if extractor == "wallclock":
            return [("timestamp.extractor", "A table partition comes from a column: use Record (the Kafka "
                                            "timestamp, with include.kafka.metadata=true) or RecordField")]
        if extractor == "record" and not parsed.get("include.kafka.metadata"):
            return [("include.kafka.metadata", "Partitioning by the Kafka timestamp (timestamp.extractor=Record) "
                                               "needs include.kafka.metadata=true (the kafka_timestamp column)")]
    return []


RULES = ConfigRules(CONFIG_DEF, cross_check)


def validate_config(props: Mapping[str, str]) -> Config:
    """Per-key validation plus the cross-key rules, each error on the key it concerns (unknown keys too)."""
    return RULES.validate(props)
