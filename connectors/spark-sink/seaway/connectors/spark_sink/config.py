"""The sink's configuration: Kafka-style names in a :class:`ConfigDef`, parsed once into :class:`SparkSinkConfig`.

Names follow Confluent's storage sinks (``flush.size``, ``rotate.interval.ms``,
``partitioner.class``, ``path.format``, ``partition.duration.ms``, ``timestamp.extractor``,
``schema.compatibility``...) so a Kafka Connect user can carry a config over. Cross-key rules
(e.g. the time-based partitioner needs ``path.format``) are checked by :func:`validate_config`,
which attaches each error to the key it names, so ``PUT .../config/validate`` and a 400 point
at the field.
"""

from __future__ import annotations

import re
import zoneinfo
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

__all__ = [
    "CODECS",
    "CONFIG_DEF",
    "FAULT_EXIT_AFTER_RENAME",
    "PARTITIONERS",
    "SparkSinkConfig",
    "validate_config",
]

LAKE_PATH = "lake.path"
FLUSH_SIZE = "flush.size"
ROTATE_INTERVAL_MS = "rotate.interval.ms"
ROTATE_SCHEDULE_INTERVAL_MS = "rotate.schedule.interval.ms"
PARTITIONER_CLASS = "partitioner.class"
PARTITION_FIELD_NAME = "partition.field.name"
PATH_FORMAT = "path.format"
PARTITION_DURATION_MS = "partition.duration.ms"
TIMESTAMP_EXTRACTOR = "timestamp.extractor"
TIMESTAMP_FIELD = "timestamp.field"
TIMEZONE = "timezone"
LOCALE = "locale"
SPARK_MASTER = "spark.master"
SPARK_CONF_PREFIX = "spark.conf."
SPARK_SESSION_IDLE_TIMEOUT_MS = "spark.session.idle.timeout.ms"
PARQUET_CODEC = "parquet.codec"
SCHEMA_COMPATIBILITY = "schema.compatibility"
INCLUDE_KAFKA_METADATA = "include.kafka.metadata"
#: Test-only: ``os._exit`` after a file is made visible and before its offsets are committed.
FAULT_EXIT_AFTER_RENAME = "seaway.test.fault.exit.after.rename"

#: ``partitioner.class`` values: short names, and Confluent's class names as aliases.
PARTITIONERS: dict[str, str] = {
    "default": "default", "field": "field", "time": "time", "hourly": "hourly", "daily": "daily",
    "io.confluent.connect.storage.partitioner.DefaultPartitioner": "default",
    "io.confluent.connect.storage.partitioner.FieldPartitioner": "field",
    "io.confluent.connect.storage.partitioner.TimeBasedPartitioner": "time",
    "io.confluent.connect.storage.partitioner.HourlyPartitioner": "hourly",
    "io.confluent.connect.storage.partitioner.DailyPartitioner": "daily",
}
#: ``parquet.codec`` value -> Spark's ``compression`` option.
CODECS: dict[str, str] = {"snappy": "snappy", "zstd": "zstd", "gzip": "gzip", "none": "none"}
_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:/")


def _check_partitioner(name: str, value: Any) -> None:
    if value not in PARTITIONERS:
        raise ConfigError.invalid(name, value, "must be one of " + ", ".join(PARTITIONERS))


def _check_lake_path(name: str, value: Any) -> None:
    if not isinstance(value, str) or not (_URI.match(value) or value.startswith("/")):
        raise ConfigError.invalid(name, value, "must be an absolute path or a Hadoop FileSystem URI "
                                  "such as file:///data/lake or hdfs://namenode:8020/lake")


def _check_timezone(name: str, value: Any) -> None:
    try:
        zoneinfo.ZoneInfo(value)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, TypeError) as e:
        raise ConfigError.invalid(name, value, f"unknown time zone ({e})") from None


def _check_locale(name: str, value: Any) -> None:
    if not isinstance(value, str) or not re.fullmatch(r"[A-Za-z]{2,3}([_-][A-Za-z0-9]{2,8})*", value):
        raise ConfigError.invalid(name, value, "must be a locale tag such as en, en_US or de-DE")


CONFIG_DEF = (
    ConfigDef()
    .define(LAKE_PATH, ConfigType.STRING, NO_DEFAULT, LambdaValidator(_check_lake_path, "a URI"),
            Importance.HIGH, "Root of the lake: any Hadoop FileSystem URI Spark can write (file:///..., "
            "hdfs://namenode:8020/..., s3a://... with the Hadoop AWS jars). A bare absolute path means file://.")
    .define(FLUSH_SIZE, ConfigType.INT, 10000, Range.at_least(1), Importance.HIGH,
            "Records per Kafka partition in one file set before it is committed (deterministic).")
    .define(ROTATE_INTERVAL_MS, ConfigType.LONG, -1, Range.at_least(-1), Importance.MEDIUM,
            "Record-time span of one file set: a record whose timestamp is at least this much later than "
            "the first record of the open set starts a new set (deterministic). -1 disables.")
    .define(ROTATE_SCHEDULE_INTERVAL_MS, ConfigType.LONG, -1, Range.at_least(-1), Importance.MEDIUM,
            "Wall-clock schedule that commits open sets (aligned to multiples of the interval in "
            "'timezone'), so idle partitions still land. Not deterministic; exactly-once still holds "
            "because recovery starts from the lake's commit log. -1 disables.")
    .define(PARTITIONER_CLASS, ConfigType.STRING, "default", LambdaValidator(_check_partitioner, "a partitioner"),
            Importance.HIGH, "default (topic + Kafka partition), field, time, hourly, daily; Confluent's "
            "class names are accepted as aliases.")
    .define(PARTITION_FIELD_NAME, ConfigType.LIST, "", None, Importance.MEDIUM,
            "Field partitioner: value fields (dotted paths into nested structs) that name the folders.")
    .define(PATH_FORMAT, ConfigType.STRING, "", None, Importance.MEDIUM,
            "Time partitioner: Joda-style folder pattern, e.g. 'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH.")
    .define(PARTITION_DURATION_MS, ConfigType.LONG, -1, Range.at_least(-1), Importance.MEDIUM,
            "Time partitioner: bucket width; timestamps are floored to it in 'timezone'.")
    .define(TIMESTAMP_EXTRACTOR, ConfigType.STRING, "Record",
            CaseInsensitiveValidString.in_("Record", "RecordField", "Wallclock"), Importance.MEDIUM,
            "Time partitioner: Record (Kafka timestamp), RecordField (timestamp.field) or Wallclock "
            "(not deterministic).")
    .define(TIMESTAMP_FIELD, ConfigType.STRING, "timestamp", None, Importance.LOW,
            "RecordField extractor: value field (dotted path) holding epoch millis, a Timestamp or ISO-8601 text.")
    .define(TIMEZONE, ConfigType.STRING, "UTC", LambdaValidator(_check_timezone, "an IANA zone"),
            Importance.MEDIUM, "Time zone for time-based folders and the rotation schedule.")
    .define(LOCALE, ConfigType.STRING, "en", LambdaValidator(_check_locale, "a locale tag"), Importance.LOW,
            "Locale of month/day names in path.format (text fields MMM/EEE need an English locale).")
    .define(SPARK_MASTER, ConfigType.STRING, "local[*]", NonEmptyString(), Importance.MEDIUM,
            "Spark master for the worker's shared SparkSession (used only if no session is running yet).")
    .define(SPARK_SESSION_IDLE_TIMEOUT_MS, ConfigType.LONG, 60_000, Range.at_least(-1), Importance.LOW,
            "How long the worker's SparkSession (and its JVM, ~800 MB) stays up once no task of any Spark "
            "sink uses it, before it is stopped; the next task starts a new one. The value of the task "
            "that stops last applies. -1 keeps it until the worker exits.")
    .define(PARQUET_CODEC, ConfigType.STRING, "snappy", CaseInsensitiveValidString.in_(*CODECS),
            Importance.MEDIUM, "Parquet compression codec.")
    .define(SCHEMA_COMPATIBILITY, ConfigType.STRING, "NONE",
            CaseInsensitiveValidString.in_("NONE", "BACKWARD", "FORWARD", "FULL"), Importance.MEDIUM,
            "On a value-schema change: NONE rotates; BACKWARD/FULL rotate on a newer version and project "
            "older records to the open file's schema; FORWARD rotates on an older version and projects newer ones.")
    .define(INCLUDE_KAFKA_METADATA, ConfigType.BOOLEAN, False, None, Importance.MEDIUM,
            "Add kafka_topic, kafka_partition, kafka_offset, kafka_timestamp and kafka_key columns.")
    .define(FAULT_EXIT_AFTER_RENAME, ConfigType.BOOLEAN, False, None, Importance.LOW,
            "TEST ONLY: kill the worker process (os._exit) right after a file is made visible, before "
            "its offsets are committed, to prove recovery. Never set this in production.")
)


@dataclass(frozen=True, slots=True)
class SparkSinkConfig:
    """The parsed, cross-checked config a task works from."""

    lake_path: str
    flush_size: int
    rotate_interval_ms: int
    rotate_schedule_interval_ms: int
    partitioner: str
    partition_fields: tuple[str, ...]
    path_format: str
    partition_duration_ms: int
    timestamp_extractor: str
    timestamp_field: str
    timezone: str
    locale: str
    spark_master: str
    spark_conf: Mapping[str, str]
    parquet_codec: str
    schema_compatibility: str
    include_kafka_metadata: bool
    fault_exit_after_rename: bool = False
    extra: Mapping[str, str] = field(default_factory=dict)
    spark_session_idle_timeout_ms: int = 60_000

    @classmethod
    def from_props(cls, props: Mapping[str, str]) -> SparkSinkConfig:
        """Parse and cross-check; :class:`ConfigError` names the first bad key."""
        p = CONFIG_DEF.parse(props)
        errors = _cross_check(props, p)
        if errors:
            name, message = errors[0]
            raise ConfigError(message, name=name, value=props.get(name))
        partitioner = PARTITIONERS[p[PARTITIONER_CLASS]]
        path_format, duration = p[PATH_FORMAT], p[PARTITION_DURATION_MS]
        if partitioner == "hourly":
            path_format, duration = "'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH", 3_600_000
        elif partitioner == "daily":
            path_format, duration = "'year'=YYYY/'month'=MM/'day'=dd", 86_400_000
        lake = p[LAKE_PATH]
        return cls(
            lake_path=("file://" + lake if lake.startswith("/") else lake).rstrip("/"),
            flush_size=p[FLUSH_SIZE], rotate_interval_ms=p[ROTATE_INTERVAL_MS],
            rotate_schedule_interval_ms=p[ROTATE_SCHEDULE_INTERVAL_MS],
            partitioner="time" if partitioner in ("hourly", "daily") else partitioner,
            partition_fields=tuple(p[PARTITION_FIELD_NAME]), path_format=path_format,
            partition_duration_ms=duration, timestamp_extractor=p[TIMESTAMP_EXTRACTOR].lower(),
            timestamp_field=p[TIMESTAMP_FIELD], timezone=p[TIMEZONE], locale=p[LOCALE],
            spark_master=p[SPARK_MASTER], spark_conf=spark_conf(props),
            parquet_codec=CODECS[p[PARQUET_CODEC].lower()],
            schema_compatibility=p[SCHEMA_COMPATIBILITY].upper(),
            include_kafka_metadata=p[INCLUDE_KAFKA_METADATA],
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


def _cross_check(props: Mapping[str, Any], parsed: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Rules that involve several keys, as ``(key, message)`` pairs."""
    from seaway.connectors.spark_sink.partitioner import check_path_format  # cycle: partitioner uses config

    errors: list[tuple[str, str]] = []
    kind = PARTITIONERS.get(parsed.get(PARTITIONER_CLASS) or "", "")
    if kind == "field" and not parsed.get(PARTITION_FIELD_NAME):
        errors.append((PARTITION_FIELD_NAME, "The field partitioner needs partition.field.name"))
    if kind == "time":
        if not parsed.get(PATH_FORMAT):
            errors.append((PATH_FORMAT, "The time-based partitioner needs path.format"))
        if (parsed.get(PARTITION_DURATION_MS) or -1) <= 0:
            errors.append((PARTITION_DURATION_MS, "The time-based partitioner needs partition.duration.ms > 0"))
    if kind in ("time", "hourly", "daily") and parsed.get(PATH_FORMAT):
        problem = check_path_format(parsed[PATH_FORMAT], parsed.get(LOCALE) or "en")
        if problem:
            errors.append((PATH_FORMAT, f"Invalid value {parsed[PATH_FORMAT]} for configuration "
                                        f"{PATH_FORMAT}: {problem}"))
    if parsed.get(ROTATE_INTERVAL_MS) == 0:
        errors.append((ROTATE_INTERVAL_MS, "rotate.interval.ms must be -1 (off) or positive"))
    if parsed.get(ROTATE_SCHEDULE_INTERVAL_MS) == 0:
        errors.append((ROTATE_SCHEDULE_INTERVAL_MS, "rotate.schedule.interval.ms must be -1 (off) or positive"))
    return errors


def validate_config(props: Mapping[str, str]) -> Config:
    """Per-key validation plus the cross-key rules, each error on the key it concerns."""
    values = CONFIG_DEF.validate(props)
    by_name: dict[str, ConfigValue] = {v.name: v for v in values}
    if all(not v.errors for v in values):
        for name, message in _cross_check(props, {v.name: v.value for v in values}):
            by_name[name].add_error_message(message)
    return Config(values)
