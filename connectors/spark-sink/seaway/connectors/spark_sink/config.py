"""The sink's configuration: Kafka-style names in a :class:`ConfigDef`, parsed once into :class:`SparkSinkConfig`.

The partitioner and rotation keys are the ones both lake sinks share, with Confluent's storage
sinks' names (``flush.size``, ``rotate.interval.ms``, ``partitioner.class``, ``path.format``,
``partition.duration.ms``, ``timestamp.extractor``, ``schema.compatibility``...), defined in
:mod:`seaway.connectors.lake.config`; this module adds the Spark sink's own (``lake.path``,
``spark.*``, ``parquet.codec``). Cross-key rules (e.g. the time-based partitioner needs
``path.format``) are checked by :func:`validate_config`, which attaches each error to the key it
names, so ``PUT .../config/validate`` and a 400 point at the field.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from seaway.connect.api import (
    NO_DEFAULT,
    CaseInsensitiveValidString,
    Config,
    ConfigDef,
    ConfigError,
    ConfigType,
    ConfigValue,
    Importance,
    LambdaValidator,
    NonEmptyString,
    Range,
)
from seaway.connectors.lake.config import (
    PARTITIONERS,
    StorageConfig,
    define_storage_keys,
    storage_cross_check,
    storage_settings,
)

__all__ = [
    "CODECS",
    "CONFIG_DEF",
    "FAULT_EXIT_AFTER_RENAME",
    "PARTITIONERS",
    "SparkSinkConfig",
    "validate_config",
]

LAKE_PATH = "lake.path"
SPARK_MASTER = "spark.master"
SPARK_CONF_PREFIX = "spark.conf."
SPARK_SESSION_IDLE_TIMEOUT_MS = "spark.session.idle.timeout.ms"
PARQUET_CODEC = "parquet.codec"
PARQUET_WRITER = "parquet.writer"
#: Test-only: ``os._exit`` after a file is made visible and before its offsets are committed.
FAULT_EXIT_AFTER_RENAME = "seaway.test.fault.exit.after.rename"

#: ``parquet.codec`` value -> Spark's ``compression`` option.
CODECS: dict[str, str] = {"snappy": "snappy", "zstd": "zstd", "gzip": "gzip", "none": "none"}
_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:/")


def _check_lake_path(name: str, value: Any) -> None:
    if not isinstance(value, str) or not (_URI.match(value) or value.startswith("/")):
        raise ConfigError.invalid(name, value, "must be an absolute path or a Hadoop FileSystem URI "
                                  "such as file:///data/lake or hdfs://namenode:8020/lake")


CONFIG_DEF = ConfigDef().define(
    LAKE_PATH, ConfigType.STRING, NO_DEFAULT, LambdaValidator(_check_lake_path, "a URI"), Importance.HIGH,
    "Root of the lake: any Hadoop FileSystem URI Spark can write (file:///..., hdfs://namenode:8020/..., "
    "s3a://... with the Hadoop AWS jars). A bare absolute path means file://.")
define_storage_keys(CONFIG_DEF, flush_size=10000, timestamp_extractor="Record", timezone="UTC", locale="en")
(CONFIG_DEF
 .define(SPARK_MASTER, ConfigType.STRING, "local[*]", NonEmptyString(), Importance.MEDIUM,
         "Spark master for the worker's shared SparkSession (used only if no session is running yet).")
 .define(SPARK_SESSION_IDLE_TIMEOUT_MS, ConfigType.LONG, 60_000, Range.at_least(-1), Importance.LOW,
         "How long the worker's SparkSession (and its JVM, ~800 MB) stays up once no task of any Spark "
         "sink uses it, before it is stopped; the next task starts a new one. The value of the task "
         "that stops last applies. -1 keeps it until the worker exits.")
 .define(PARQUET_CODEC, ConfigType.STRING, "snappy", CaseInsensitiveValidString.in_(*CODECS),
         Importance.MEDIUM, "Parquet compression codec.")
 .define(PARQUET_WRITER, ConfigType.STRING, "auto", CaseInsensitiveValidString.in_("auto", "spark"),
         Importance.LOW, "Who encodes the Parquet files: auto (pyarrow writes them straight into the temp "
         "folder of a file:// lake, a Spark job on any other file system) or spark (always a Spark job, e.g. "
         "for spark.conf.spark.sql.parquet.* settings). Commits go through Hadoop's FileSystem either way.")
 .define(FAULT_EXIT_AFTER_RENAME, ConfigType.BOOLEAN, False, None, Importance.LOW,
         "TEST ONLY: kill the worker process (os._exit) right after a file is made visible, before "
         "its offsets are committed, to prove recovery. Never set this in production."))


@dataclass(frozen=True, slots=True)
class SparkSinkConfig(StorageConfig):
    """The parsed, cross-checked config a task works from (the shared storage keys plus Spark's)."""

    lake_path: str
    spark_master: str
    spark_conf: Mapping[str, str]
    parquet_codec: str
    parquet_writer: str = "auto"
    fault_exit_after_rename: bool = False
    extra: Mapping[str, str] = field(default_factory=dict)
    spark_session_idle_timeout_ms: int = 60_000

    @classmethod
    def from_props(cls, props: Mapping[str, str]) -> SparkSinkConfig:
        """Parse and cross-check; :class:`ConfigError` names the first bad key."""
        p = CONFIG_DEF.parse(props)
        errors = storage_cross_check(p)
        if errors:
            name, message = errors[0]
            raise ConfigError(message, name=name, value=props.get(name))
        lake = p[LAKE_PATH]
        return cls(
            **storage_settings(p),
            lake_path=("file://" + lake if lake.startswith("/") else lake).rstrip("/"),
            spark_master=p[SPARK_MASTER], spark_conf=spark_conf(props),
            parquet_codec=CODECS[p[PARQUET_CODEC].lower()], parquet_writer=p[PARQUET_WRITER].lower(),
            fault_exit_after_rename=p[FAULT_EXIT_AFTER_RENAME],
            spark_session_idle_timeout_ms=p[SPARK_SESSION_IDLE_TIMEOUT_MS],
        )


def spark_conf(props: Mapping[str, str]) -> dict[str, str]:
    """``spark.conf.<name>`` passthrough: ``spark.conf.spark.sql.x`` and ``spark.conf.sql.x`` mean ``spark.sql.x``."""
    out: dict[str, str] = {}
    for key, value in props.items():
        if key.startswith(SPARK_CONF_PREFIX) and len(key) > len(SPARK_CONF_PREFIX):
            name = key[len(SPARK_CONF_PREFIX):]
            out[name if name.startswith("spark.") else "spark." + name] = str(value)
    return out


def validate_config(props: Mapping[str, str]) -> Config:
    """Per-key validation plus the cross-key rules, each error on the key it concerns."""
    values = CONFIG_DEF.validate(props)
    by_name: dict[str, ConfigValue] = {v.name: v for v in values}
    if all(not v.errors for v in values):
        for name, message in storage_cross_check({v.name: v.value for v in values}):
            by_name[name].add_error_message(message)
    return Config(values)
