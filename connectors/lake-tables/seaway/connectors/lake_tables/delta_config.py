"""The Delta sink's configuration (``DeltaSinkConnector``, alias ``DeltaSink``).

kafka-delta-ingest is a command-line daemon, not a Kafka Connect plugin, so there are no Connect config
names to keep; the keys follow its options where it has them (``delta.app.id`` = its ``--app_id``,
``delta.checkpoints`` = ``--checkpoints``) and the Iceberg sink's where it does not
(``delta.evolve-schema-enabled``, ``delta.id-columns``). Each topic is a table of its own,
``<delta.tables.location>/<topic>``; the lake sinks' rotation keys (``flush.size``, ...) apply, and
``partitioner.class=field`` + ``partition.field.name`` become the table's partition columns (Delta
partitions by column values only: a day or hour column comes from the records, e.g. with an SMT).
Unknown ``delta.*`` keys are errors on that key.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from seaway.connect.api import NO_DEFAULT, Config, ConfigDef, ConfigType, Importance, NonEmptyString, Range
from seaway.connectors.lake import (
    PARTITIONERS,
    ConfigRules,
    StorageConfig,
    define_storage_keys,
    storage_cross_check,
    storage_settings,
    unknown_keys,
)
from seaway.connectors.lake_tables.partition_by import PARTITIONER_CLASS

__all__ = ["CONFIG_DEF", "RULES", "DeltaSinkConfig", "validate_config"]

LOCATION = "delta.tables.location"
APP_ID = "delta.app.id"
ID_COLUMNS = "delta.id-columns"
EVOLVE = "delta.evolve-schema-enabled"
CHECKPOINTS = "delta.checkpoints"
CHECKPOINT_INTERVAL = "delta.checkpoint.interval"
TARGET_FILE_SIZE = "delta.target-file-size-bytes"
STORAGE_PREFIX = "delta.storage."
TABLE_PROPS_PREFIX = "delta.table.properties."

CONFIG_DEF = define_storage_keys(
    ConfigDef()
    .define(LOCATION, ConfigType.STRING, NO_DEFAULT, NonEmptyString(), Importance.HIGH,
            "Root of the tables: each topic is the Delta table <location>/<topic> (file:///..., s3://bucket/..., "
            "or a local path).")
    .define(APP_ID, ConfigType.STRING, "", None, Importance.MEDIUM,
            "The application id of the txn actions (kafka-delta-ingest's --app_id): each Kafka partition's offset "
            "is the txn version of app id <app id>-<partition>. Default: the connector's name.")
    .define(ID_COLUMNS, ConfigType.LIST, "", None, Importance.MEDIUM,
            "Id columns: rows are upserted (MERGE) by them and a tombstone deletes its key's row.")
    .define(EVOLVE, ConfigType.BOOLEAN, False, None, Importance.MEDIUM,
            "Add record fields missing from the table as nullable columns (Delta's schema merge); other changes "
            "fail the task.")
    .define(CHECKPOINTS, ConfigType.BOOLEAN, True, None, Importance.LOW,
            "Write a checkpoint every delta.checkpoint.interval commits (kafka-delta-ingest's --checkpoints).")
    .define(CHECKPOINT_INTERVAL, ConfigType.INT, 10, Range.at_least(1), Importance.LOW,
            "The delta.checkpointInterval of tables the sink creates.")
    .define(TARGET_FILE_SIZE, ConfigType.LONG, -1, Range.at_least(-1), Importance.LOW,
            "Target size of the data files a write makes (delta-rs's target_file_size); -1: delta-rs's default."),
    flush_size=50_000, timestamp_extractor="Record", timezone="UTC", locale="en",
    flush_size_doc="Records of one Kafka partition per file set; the sets closed together land in one Delta commit "
    "per table.")


@dataclass(frozen=True, slots=True)
class DeltaSinkConfig(StorageConfig):
    """The parsed, cross-checked config of a Delta sink task."""

    connector: str
    location: str
    app_id: str
    id_columns: tuple[str, ...]
    evolve: bool
    checkpoints: bool
    checkpoint_interval: int
    target_file_size: int
    storage_options: Mapping[str, str]
    table_properties: Mapping[str, str]

    @classmethod
    def from_props(cls, props: Mapping[str, str]) -> DeltaSinkConfig:
        """Parse and cross-check; :class:`ConfigError` names the first bad key."""
        p = RULES.parse(props)
        connector = props.get("name", "delta-sink")
        return cls(
            **storage_settings(p), connector=connector, location=p[LOCATION].rstrip("/"),
            app_id=p[APP_ID] or connector, id_columns=tuple(c.strip() for c in p[ID_COLUMNS] if c.strip()),
            evolve=p[EVOLVE], checkpoints=p[CHECKPOINTS], checkpoint_interval=p[CHECKPOINT_INTERVAL],
            target_file_size=p[TARGET_FILE_SIZE],
            storage_options={k[len(STORAGE_PREFIX):]: v for k, v in props.items() if k.startswith(STORAGE_PREFIX)},
            table_properties={k[len(TABLE_PROPS_PREFIX):]: v for k, v in props.items()
                              if k.startswith(TABLE_PROPS_PREFIX)},
        )

    def table_uri(self, topic: str) -> str:
        return f"{self.location}/{topic}"


def cross_check(parsed: Mapping[str, Any], props: Mapping[str, str]) -> list[tuple[str, str]]:
    """Rules across keys, unsupported values and unknown ``delta.*`` keys, as ``(key, message)`` pairs."""
    errors = storage_cross_check(parsed)
    errors += [(key, f"{key} is not a Delta sink setting Seaway supports")
               for key in unknown_keys(props, "delta.", CONFIG_DEF, (STORAGE_PREFIX, TABLE_PROPS_PREFIX))]
    kind = PARTITIONERS.get(parsed.get(PARTITIONER_CLASS) or "", "default")
    if kind in ("time", "hourly", "daily"):
        errors.append((PARTITIONER_CLASS, "Delta partitions by column values: use partitioner.class=field with "
                                          "partition.field.name (a day or hour column can come from an SMT)"))
    location = str(parsed.get(LOCATION) or "")
    if location.startswith("s3a://"):
        errors.append((LOCATION, f"{location}: delta-rs reaches object stores as s3://, not s3a://"))
    return errors


RULES = ConfigRules(CONFIG_DEF, cross_check)


def validate_config(props: Mapping[str, str]) -> Config:
    """Per-key validation plus the cross-key rules, each error on the key it concerns (unknown keys too)."""
    return RULES.validate(props)
