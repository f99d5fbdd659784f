"""The storage keys both lake sinks share, with Confluent's names, and the typed :class:`StorageConfig`.

Confluent's storage sinks (HDFS, S3) take the same partitioner and rotation keys from
``kafka-connect-storage-common``: ``flush.size``, ``rotate.interval.ms``,
``rotate.schedule.interval.ms``, ``partitioner.class``, ``partition.field.name``,
``path.format``, ``partition.duration.ms``, ``timestamp.extractor``, ``timestamp.field``,
``timezone``, ``locale`` and ``schema.compatibility``; and ``retry.backoff.ms`` (how long a task
waits after a storage failure) where the sink rides storage failures out.
:func:`define_storage_keys` adds them to a sink's :class:`ConfigDef`; the sink chooses the
defaults (the S3 sink keeps Confluent's, e.g. ``timestamp.extractor=Wallclock`` and no
``timezone``; the Spark sink its own, ``Record`` and ``UTC``). :func:`storage_cross_check` holds
the rules that span keys, each error on the key it concerns, so ``PUT .../config/validate`` and a
400 name the field. :class:`ConfigRules` pairs a sink's :class:`ConfigDef` with its cross-key rules
(the shared ones plus its own), so every lake sink parses and validates the same way.
"""

from __future__ import annotations

import re
import zoneinfo
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from seaway.connect.api import (
    CaseInsensitiveValidString,
    Config,
    ConfigDef,
    ConfigError,
    ConfigType,
    ConfigValue,
    Importance,
    LambdaValidator,
    Range,
)

__all__ = [
    "FLUSH_SIZE",
    "INCLUDE_KAFKA_METADATA",
    "LOCALE",
    "PARTITIONERS",
    "PARTITIONER_CLASS",
    "PARTITION_DURATION_MS",
    "PARTITION_FIELD_NAME",
    "PATH_FORMAT",
    "RETRY_BACKOFF_MS",
    "ROTATE_INTERVAL_MS",
    "ROTATE_SCHEDULE_INTERVAL_MS",
    "SCHEMA_COMPATIBILITY",
    "TIMESTAMP_EXTRACTOR",
    "TIMESTAMP_FIELD",
    "TIMEZONE",
    "ConfigRules",
    "CrossCheck",
    "StorageConfig",
    "define_storage_keys",
    "storage_cross_check",
    "storage_settings",
    "unknown_keys",
]

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
SCHEMA_COMPATIBILITY = "schema.compatibility"
INCLUDE_KAFKA_METADATA = "include.kafka.metadata"
RETRY_BACKOFF_MS = "retry.backoff.ms"
DEFAULT_RETRY_BACKOFF_MS = 5000  # Confluent's storage sinks'

#: ``partitioner.class`` values: short names, and Confluent's class names as aliases.
PARTITIONERS: dict[str, str] = {
    "default": "default", "field": "field", "time": "time", "hourly": "hourly", "daily": "daily",
    "io.confluent.connect.storage.partitioner.DefaultPartitioner": "default",
    "io.confluent.connect.storage.partitioner.FieldPartitioner": "field",
    "io.confluent.connect.storage.partitioner.TimeBasedPartitioner": "time",
    "io.confluent.connect.storage.partitioner.HourlyPartitioner": "hourly",
    "io.confluent.connect.storage.partitioner.DailyPartitioner": "daily",
}
_HOURLY = ("'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH", 3_600_000)
_DAILY = ("'year'=YYYY/'month'=MM/'day'=dd", 86_400_000)


def _check_partitioner(name: str, value: Any) -> None:
    if value not in PARTITIONERS:
        raise ConfigError.invalid(name, value, "must be one of " + ", ".join(PARTITIONERS))


def _check_timezone(name: str, value: Any) -> None:
    if value == "":
        return  # Confluent's default: allowed until a time-based rule needs a zone (cross-check)
    try:
        zoneinfo.ZoneInfo(value)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, TypeError) as e:
        raise ConfigError.invalid(name, value, f"unknown time zone ({e})") from None


def _check_locale(name: str, value: Any) -> None:
    if value == "":
        return
    if not isinstance(value, str) or not re.fullmatch(r"[A-Za-z]{2,3}([_-][A-Za-z0-9]{2,8})*", value):
        raise ConfigError.invalid(name, value, "must be a locale tag such as en, en_US or de-DE")


def define_storage_keys(config_def: ConfigDef, *, flush_size: Any, timestamp_extractor: str,
                        timezone: str, locale: str, flush_size_doc: str = "", retry_backoff: bool = True) -> ConfigDef:
    """Add the shared keys to ``config_def`` with the sink's defaults (``NO_DEFAULT`` makes one required).

    ``retry_backoff``: whether the sink rides out storage failures (``retry.backoff.ms``); a sink
    whose storage errors all fail the task leaves the key out (its tasks use the default).
    """
    config_def = (
        config_def
        .define(FLUSH_SIZE, ConfigType.INT, flush_size, Range.at_least(1), Importance.HIGH,
                flush_size_doc or "Records per Kafka partition in one file set before it is committed "
                "(deterministic).")
        .define(ROTATE_INTERVAL_MS, ConfigType.LONG, -1, Range.at_least(-1), Importance.MEDIUM,
                "Record-time span of one file set: a record whose timestamp is at least this much later "
                "than the first record of the open set starts a new set (deterministic). -1 disables.")
        .define(ROTATE_SCHEDULE_INTERVAL_MS, ConfigType.LONG, -1, Range.at_least(-1), Importance.MEDIUM,
                "Wall-clock schedule that commits open sets (aligned to multiples of the interval in "
                "'timezone'), so idle partitions still land. Not deterministic; exactly-once still holds "
                "because recovery starts from the commit log. -1 disables.")
        .define(PARTITIONER_CLASS, ConfigType.STRING, "default",
                LambdaValidator(_check_partitioner, "a partitioner"), Importance.HIGH,
                "default (Kafka partition), field, time, hourly, daily; Confluent's class names "
                "(io.confluent.connect.storage.partitioner.*) are accepted as aliases.")
        .define(PARTITION_FIELD_NAME, ConfigType.LIST, "", None, Importance.MEDIUM,
                "Field partitioner: value fields (dotted paths into nested structs) that name the folders.")
        .define(PATH_FORMAT, ConfigType.STRING, "", None, Importance.MEDIUM,
                "Time partitioner: Joda-style folder pattern, e.g. 'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH.")
        .define(PARTITION_DURATION_MS, ConfigType.LONG, -1, Range.at_least(-1), Importance.MEDIUM,
                "Time partitioner: bucket width; timestamps are floored to it in 'timezone'.")
        .define(TIMESTAMP_EXTRACTOR, ConfigType.STRING, timestamp_extractor,
                CaseInsensitiveValidString.in_("Record", "RecordField", "Wallclock"), Importance.MEDIUM,
                "Time partitioner: Record (Kafka timestamp), RecordField (timestamp.field) or Wallclock "
                "(not deterministic).")
        .define(TIMESTAMP_FIELD, ConfigType.STRING, "timestamp", None, Importance.LOW,
                "RecordField extractor: value field (dotted path) holding epoch millis, a Timestamp or "
                "ISO-8601 text.")
        .define(TIMEZONE, ConfigType.STRING, timezone, LambdaValidator(_check_timezone, "an IANA zone"),
                Importance.MEDIUM, "Time zone for time-based folders and the rotation schedule.")
        .define(LOCALE, ConfigType.STRING, locale, LambdaValidator(_check_locale, "a locale tag"),
                Importance.LOW, "Locale of month/day names in path.format (text fields MMM/EEE need an "
                "English locale).")
        .define(SCHEMA_COMPATIBILITY, ConfigType.STRING, "NONE",
                CaseInsensitiveValidString.in_("NONE", "BACKWARD", "FORWARD", "FULL"), Importance.MEDIUM,
                "On a value-schema change: NONE rotates; BACKWARD/FULL rotate on a newer version and project "
                "older records to the open file's schema; FORWARD rotates on an older version and projects "
                "newer ones.")
        .define(INCLUDE_KAFKA_METADATA, ConfigType.BOOLEAN, False, None, Importance.MEDIUM,
                "Add kafka_topic, kafka_partition, kafka_offset, kafka_timestamp and kafka_key columns.")
    )
    if retry_backoff:
        config_def.define(RETRY_BACKOFF_MS, ConfigType.LONG, DEFAULT_RETRY_BACKOFF_MS, Range.at_least(0),
                          Importance.LOW, "How long to wait before writing again after the storage failed (a "
                          "NameNode or DataNode down, the object store unreachable): closed file sets wait in "
                          "memory, the task stays RUNNING and asks the runtime to redeliver its records after "
                          "this long.")
    return config_def


@dataclass(frozen=True, slots=True)
class StorageConfig:
    """What partitioning and rotation need; each sink's config extends it."""

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
    schema_compatibility: str
    include_kafka_metadata: bool
    retry_backoff_ms: int


def storage_settings(p: Mapping[str, Any]) -> dict[str, Any]:
    """:class:`StorageConfig`'s fields from parsed values (``hourly``/``daily`` expanded to ``time``)."""
    kind = PARTITIONERS[p[PARTITIONER_CLASS]]
    path_format, duration = p[PATH_FORMAT], p[PARTITION_DURATION_MS]
    if kind == "hourly":
        path_format, duration = _HOURLY
    elif kind == "daily":
        path_format, duration = _DAILY
    return {
        "flush_size": p[FLUSH_SIZE], "rotate_interval_ms": p[ROTATE_INTERVAL_MS],
        "rotate_schedule_interval_ms": p[ROTATE_SCHEDULE_INTERVAL_MS],
        "partitioner": "time" if kind in ("hourly", "daily") else kind,
        "partition_fields": tuple(p[PARTITION_FIELD_NAME]), "path_format": path_format,
        "partition_duration_ms": duration, "timestamp_extractor": p[TIMESTAMP_EXTRACTOR].lower(),
        "timestamp_field": p[TIMESTAMP_FIELD], "timezone": p[TIMEZONE] or "UTC", "locale": p[LOCALE] or "en",
        "schema_compatibility": p[SCHEMA_COMPATIBILITY].upper(),
        "include_kafka_metadata": p[INCLUDE_KAFKA_METADATA],
        "retry_backoff_ms": p.get(RETRY_BACKOFF_MS, DEFAULT_RETRY_BACKOFF_MS),
    }


def storage_cross_check(parsed: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Rules that involve several keys, as ``(key, message)`` pairs (values may be ``None`` if invalid)."""
    from seaway.connectors.lake.partitioner import check_path_format  # the partitioner imports this module

    errors: list[tuple[str, str]] = []
    kind = PARTITIONERS.get(parsed.get(PARTITIONER_CLASS) or "", "")
    if kind == "field" and not parsed.get(PARTITION_FIELD_NAME):
        errors.append((PARTITION_FIELD_NAME, "The field partitioner needs partition.field.name"))
    if kind == "time":
        if not parsed.get(PATH_FORMAT):
            errors.append((PATH_FORMAT, "The time-based partitioner needs path.format"))
        if (parsed.get(PARTITION_DURATION_MS) or -1) <= 0:
            errors.append((PARTITION_DURATION_MS, "The time-based partitioner needs partition.duration.ms > 0"))
    if kind in ("time", "hourly", "daily"):
        if parsed.get(TIMEZONE) == "":
            errors.append((TIMEZONE, "Timezone cannot be empty when using a time-based partitioner"))
        if parsed.get(LOCALE) == "":
            errors.append((LOCALE, "Locale cannot be empty when using a time-based partitioner"))
        if parsed.get(PATH_FORMAT):
            problem = check_path_format(parsed[PATH_FORMAT], parsed.get(LOCALE) or "en")
            if problem:
                errors.append((PATH_FORMAT, f"Invalid value {parsed[PATH_FORMAT]} for configuration "
                                            f"{PATH_FORMAT}: {problem}"))
    if parsed.get(ROTATE_INTERVAL_MS) == 0:
        errors.append((ROTATE_INTERVAL_MS, "rotate.interval.ms must be -1 (off) or positive"))
    schedule = parsed.get(ROTATE_SCHEDULE_INTERVAL_MS)
    if schedule == 0:
        errors.append((ROTATE_SCHEDULE_INTERVAL_MS, "rotate.schedule.interval.ms must be -1 (off) or positive"))
    elif schedule is not None and schedule > 0 and parsed.get(TIMEZONE) == "":
        errors.append((TIMEZONE, "rotate.schedule.interval.ms needs a timezone to align the schedule to"))
    return errors


def unknown_keys(props: Mapping[str, str], namespace: str, definition: ConfigDef,
                 passthrough: tuple[str, ...] = ()) -> list[str]:
    """The keys of ``props`` under ``namespace`` (``"iceberg."``, ``"delta."``) that ``definition`` does not define
    and that are not under one of the ``passthrough`` prefixes (catalog, storage or table properties handed on
    as they are). A sink that owns a namespace refuses these, so a typo is a 400 rather than a setting silently
    ignored."""
    return [key for key in props
            if key.startswith(namespace) and key not in definition
            and not any(key.startswith(prefix) and len(key) > len(prefix) for prefix in passthrough)]


CrossCheck = Callable[[Mapping[str, Any], Mapping[str, str]], list[tuple[str, str]]]
"""A sink's rules across keys: (parsed values, the raw props) -> ``(key, message)`` pairs. The raw props are
for rules on keys the :class:`ConfigDef` does not define (unknown ``iceberg.*`` keys, prefixed passthroughs)."""


@dataclass(frozen=True)
class ConfigRules:
    """A sink's :class:`ConfigDef` and its cross-key rules, applied the same way at start and at validation.

    :meth:`parse` is for a connector's or task's ``start``: a :class:`ConfigError` naming the first broken
    rule's key. :meth:`validate` is for ``PUT /connector-plugins/{type}/config/validate`` and a create's 400:
    every error on the key it concerns, a key the definition does not know included; the cross-key rules
    run only once every key is valid on its own (they read typed values).
    """

    definition: ConfigDef
    cross_check: CrossCheck

    def parse(self, props: Mapping[str, str]) -> dict[str, Any]:
        """Typed values of ``props``; :class:`ConfigError` names the first bad key."""
        parsed = self.definition.parse(props)
        errors = self.cross_check(parsed, props)
        if errors:
            name, message = errors[0]
            raise ConfigError(message, name=name, value=props.get(name))
        return parsed

    def validate(self, props: Mapping[str, str]) -> Config:
        """Per-key validation plus the cross-key rules, each error on the key it concerns."""
        values = self.definition.validate(props)
        by_name: dict[str, ConfigValue] = {v.name: v for v in values}
        if all(not v.errors for v in values):
            for name, message in self.cross_check({v.name: v.value for v in values}, props):
                if name not in by_name:
                    by_name[name] = ConfigValue(name, props.get(name))
                    values.append(by_name[name])
                by_name[name].add_error_message(message)
        return Config(values)
