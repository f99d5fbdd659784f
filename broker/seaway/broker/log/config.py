"""Topic-level log configuration: Kafka's topic configs, names, types and defaults.

A topic's effective :class:`LogConfig` is the broker's default (built from ``log.*``
broker properties, see :mod:`seaway.broker.config`) with the topic's overrides laid
over it, exactly as Kafka's ``LogConfig.fromProps(defaults, overrides)``. The table
:data:`TOPIC_CONFIG_DEFS` is the single source for parsing, validation, the broker
synonym each config inherits its default from, and DescribeConfigs output; its keys are
the config engine's (:data:`TOPIC_CONFIG_DEF`, :mod:`seaway.configdef`), so a value parses
as Kafka parses it and a bad one is refused in Kafka's words (``Invalid value abc for
configuration retention.ms: Not a number of type LONG``), and docs/config-reference.md is
rendered from the same table.

Deliberate deviations from Kafka 4.x (documented in log/README.md):
``segment.bytes`` accepts values down to 14 bytes (Kafka 4 requires 1 MiB, keeping a
hidden ``internal.segment.bytes`` for tests); ``compression.type`` other than
``producer`` is accepted and reported but batches are stored as produced (the broker
never recompresses).
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from seaway.configdef import (
    ConfigDef,
    ConfigException,
    ConfigKey,
    ConfigType,
    LambdaValidator,
    Range,
    Validator,
    ValidList,
    ValidString,
    convert_to_string,
    parse_value,
)
from seaway.protocol.errors import InvalidConfigError

__all__ = [
    "TOPIC_CONFIG_DEF",
    "TOPIC_CONFIG_DEFS",
    "ConfigEntry",
    "ConfigSource",
    "KeyedConfig",
    "LogConfig",
    "TopicConfigDef",
    "broker_value",
    "describe_topic_configs",
    "parse_broker_value",
    "synonym_chain",
]

LONG_MAX = 9223372036854775807


class ConfigSource(enum.IntEnum):
    """DescribeConfigs ``ConfigSource`` codes (org.apache.kafka.common.requests)."""

    UNKNOWN = 0
    TOPIC_CONFIG = 1
    DYNAMIC_BROKER_CONFIG = 2
    DYNAMIC_DEFAULT_BROKER_CONFIG = 3
    STATIC_BROKER_CONFIG = 4
    DEFAULT_CONFIG = 5


def broker_value(value: Any) -> Any:
    """A parsed value in the broker's form: a LIST is a tuple without empty items (``"compact,"`` is
    ``("compact",)``), so a frozen :class:`LogConfig` stays hashable."""
    if isinstance(value, list | tuple):
        return tuple(item for item in value if item)
    return value


def parse_broker_value(key: ConfigKey, raw: str) -> Any:
    """``raw`` typed by the config engine, in the broker's form, then checked by the key's validator.

    :class:`~seaway.configdef.ConfigException` with Kafka's text naming the key when it is invalid.
    """
    value = broker_value(parse_value(key.name, raw, key.type))
    if key.validator is not None:
        key.validator.ensure_valid(key.name, value)
    return value


def _no_tiered_storage(name: str, value: Any) -> None:
    if value:
        raise ConfigException.invalid(name, value, "tiered storage is not supported by this broker")


TOPIC_CONFIG_DEF = ConfigDef()
"""Every topic config Kafka knows, as the config engine's table (parsing, validation, docs)."""


@dataclass(frozen=True)
class KeyedConfig:
    """A broker-side config backed by one config-engine key: the names DescribeConfigs and the
    broker's parsers read, in one place for topic and broker configs."""

    key: ConfigKey

    @property
    def name(self) -> str:
        return self.key.name

    @property
    def type(self) -> ConfigType:
        return self.key.type

    @property
    def default(self) -> Any:
        return broker_value(self.key.default)

    @property
    def doc(self) -> str:
        return self.key.documentation

    @property
    def validator(self) -> Validator | None:
        return self.key.validator

    @property
    def attr(self) -> str:
        return self.name.replace(".", "_")

    def default_string(self) -> str | None:
        return self.key.default_string()

    def parse(self, raw: str) -> Any:
        """Parse and validate; raises InvalidConfigError naming the key (Kafka's text)."""
        try:
            return parse_broker_value(self.key, raw)
        except ConfigException as exc:
            raise InvalidConfigError(str(exc)) from None


@dataclass(frozen=True)
class TopicConfigDef(KeyedConfig):
    """One topic config: its key in :data:`TOPIC_CONFIG_DEF`, and where its default comes from.

    ``synonyms`` lists the broker properties that supply the default, in Kafka's
    precedence order (``log.retention.ms`` before ``.minutes`` before ``.hours``).
    """

    synonyms: tuple[str, ...] = ()
    is_sensitive: bool = False
    read_only: bool = False


def _t(name: str, type: ConfigType, default: Any, doc: str, synonyms: tuple[str, ...] = (),
       validator: Validator | None = None) -> TopicConfigDef:
    TOPIC_CONFIG_DEF.define(name, type, default, validator, documentation=doc)
    return TopicConfigDef(TOPIC_CONFIG_DEF.key(name), synonyms)


_T = ConfigType
_DEFS: list[TopicConfigDef] = [
    _t(
        "cleanup.policy",
        _T.LIST,
        ("delete",),
        "delete (drop old segments) and/or compact (keep the latest value per key).",
        ("log.cleanup.policy",),
        ValidList.in_("compact", "delete"),
    ),
    _t(
        "compression.type",
        _T.STRING,
        "producer",
        "Final compression of the topic; 'producer' keeps the producer's codec.",
        ("compression.type",),
        ValidString.in_("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"),
    ),
    _t(
        "compression.gzip.level",
        _T.INT,
        -1,
        "gzip level when compression.type is gzip.",
        ("compression.gzip.level",),
        Range.between(-1, 9),
    ),
    _t(
        "compression.lz4.level",
        _T.INT,
        9,
        "lz4 level when compression.type is lz4.",
        ("compression.lz4.level",),
        Range.between(1, 17),
    ),
    _t(
        "compression.zstd.level",
        _T.INT,
        3,
        "zstd level when compression.type is zstd.",
        ("compression.zstd.level",),
        Range.between(-131072, 22),
    ),
    _t(
        "delete.retention.ms",
        _T.LONG,
        86400000,
        "How long tombstones are kept in compacted topics.",
        ("log.cleaner.delete.retention.ms",),
        Range.at_least(0),
    ),
    _t(
        "file.delete.delay.ms",
        _T.LONG,
        60000,
        "Wait before a deleted file leaves the disk.",
        ("log.segment.delete.delay.ms",),
        Range.at_least(0),
    ),
    _t(
        "flush.messages",
        _T.LONG,
        LONG_MAX,
        "fsync after this many messages.",
        ("log.flush.interval.messages",),
        Range.at_least(1),
    ),
    _t(
        "flush.ms",
        _T.LONG,
        LONG_MAX,
        "fsync when data is this old.",
        ("log.flush.interval.ms", "log.flush.scheduler.interval.ms"),
        Range.at_least(0),
    ),
    _t(
        "follower.replication.throttled.replicas",
        _T.LIST,
        (),
        "Replicas throttled on the follower side (no effect on a single node).",
    ),
    _t(
        "index.interval.bytes",
        _T.INT,
        4096,
        "Bytes of log between offset index entries.",
        ("log.index.interval.bytes",),
        Range.at_least(0),
    ),
    _t(
        "leader.replication.throttled.replicas",
        _T.LIST,
        (),
        "Replicas throttled on the leader side (no effect on a single node).",
    ),
    _t(
        "local.retention.bytes",
        _T.LONG,
        -2,
        "Local retention with tiered storage (unused).",
        ("log.local.retention.bytes",),
        Range.at_least(-2),
    ),
    _t(
        "local.retention.ms",
        _T.LONG,
        -2,
        "Local retention with tiered storage (unused).",
        ("log.local.retention.ms",),
        Range.at_least(-2),
    ),
    _t(
        "max.compaction.lag.ms",
        _T.LONG,
        LONG_MAX,
        "Longest time a message stays ineligible for compaction.",
        ("log.cleaner.max.compaction.lag.ms",),
        Range.at_least(1),
    ),
    _t(
        "max.message.bytes",
        _T.INT,
        1048588,
        "Largest record batch the topic accepts.",
        ("message.max.bytes",),
        Range.at_least(0),
    ),
    _t(
        "message.timestamp.after.max.ms",
        _T.LONG,
        3600000,
        "How far in the future a CreateTime batch timestamp may be.",
        ("log.message.timestamp.after.max.ms",),
        Range.at_least(0),
    ),
    _t(
        "message.timestamp.before.max.ms",
        _T.LONG,
        LONG_MAX,
        "How far in the past a CreateTime batch timestamp may be.",
        ("log.message.timestamp.before.max.ms",),
        Range.at_least(0),
    ),
    _t(
        "message.timestamp.type",
        _T.STRING,
        "CreateTime",
        "CreateTime keeps producer timestamps; LogAppendTime stamps the broker's clock.",
        ("log.message.timestamp.type",),
        ValidString.in_("CreateTime", "LogAppendTime"),
    ),
    _t(
        "min.cleanable.dirty.ratio",
        _T.DOUBLE,
        0.5,
        "Dirty fraction of the log that triggers compaction.",
        ("log.cleaner.min.cleanable.ratio",),
        Range.between(0, 1),
    ),
    _t(
        "min.compaction.lag.ms",
        _T.LONG,
        0,
        "Minimum age before a message can be compacted.",
        ("log.cleaner.min.compaction.lag.ms",),
        Range.at_least(0),
    ),
    _t(
        "min.insync.replicas",
        _T.INT,
        1,
        "Replicas that must ack acks=all (always 1 here).",
        ("min.insync.replicas",),
        Range.at_least(1),
    ),
    _t(
        "preallocate", _T.BOOLEAN, False, "Preallocate segment files (ignored).", ("log.preallocate",)
    ),
    _t(
        "remote.storage.enable",
        _T.BOOLEAN,
        False,
        "Tiered storage (not supported).",
        (),
        LambdaValidator.with_(_no_tiered_storage, "false (tiered storage is not supported)"),
    ),
    _t(
        "retention.bytes",
        _T.LONG,
        -1,
        "Largest size of a partition before old segments go.",
        ("log.retention.bytes",),
    ),
    _t(
        "retention.ms",
        _T.LONG,
        604800000,
        "Age after which old segments are deleted.",
        ("log.retention.ms", "log.retention.minutes", "log.retention.hours"),
        Range.at_least(-1),
    ),
    _t(
        "segment.bytes",
        _T.INT,
        1073741824,
        "Size at which a segment is rolled.",
        ("log.segment.bytes",),
        Range.at_least(14),
    ),
    _t(
        "segment.index.bytes",
        _T.INT,
        10485760,
        "Size limit of a segment's offset index.",
        ("log.index.size.max.bytes",),
        Range.at_least(12),
    ),
    _t(
        "segment.jitter.ms",
        _T.LONG,
        0,
        "Random jitter subtracted from segment.ms.",
        ("log.roll.jitter.ms", "log.roll.jitter.hours"),
        Range.at_least(0),
    ),
    _t(
        "segment.ms",
        _T.LONG,
        604800000,
        "Age at which a segment is rolled.",
        ("log.roll.ms", "log.roll.hours"),
        Range.at_least(1),
    ),
    _t(
        "unclean.leader.election.enable",
        _T.BOOLEAN,
        False,
        "Unclean leader election (no effect on a single node).",
        ("unclean.leader.election.enable",),
    ),
]

TOPIC_CONFIG_DEFS: Mapping[str, TopicConfigDef] = {d.name: d for d in _DEFS}
"""Every topic config Kafka knows, keyed by name, in alphabetical order."""


@dataclass(frozen=True)
class LogConfig:
    """The effective configuration of one partition log; attributes mirror Kafka's names.

    Frozen so a log can swap its whole config atomically (``PartitionLog.update_config``).
    """

    cleanup_policy: tuple[str, ...] = ("delete",)
    compression_type: str = "producer"
    compression_gzip_level: int = -1
    compression_lz4_level: int = 9
    compression_zstd_level: int = 3
    delete_retention_ms: int = 86400000
    file_delete_delay_ms: int = 60000
    flush_messages: int = LONG_MAX
    flush_ms: int = LONG_MAX
    follower_replication_throttled_replicas: tuple[str, ...] = ()
    index_interval_bytes: int = 4096
    leader_replication_throttled_replicas: tuple[str, ...] = ()
    local_retention_bytes: int = -2
    local_retention_ms: int = -2
    max_compaction_lag_ms: int = LONG_MAX
    max_message_bytes: int = 1048588
    message_timestamp_after_max_ms: int = 3600000
    message_timestamp_before_max_ms: int = LONG_MAX
    message_timestamp_type: str = "CreateTime"
    min_cleanable_dirty_ratio: float = 0.5
    min_compaction_lag_ms: int = 0
    min_insync_replicas: int = 1
    preallocate: bool = False
    remote_storage_enable: bool = False
    retention_bytes: int = -1
    retention_ms: int = 604800000
    segment_bytes: int = 1073741824
    segment_index_bytes: int = 10485760
    segment_jitter_ms: int = 0
    segment_ms: int = 604800000
    unclean_leader_election_enable: bool = False

    @property
    def is_log_append_time(self) -> bool:
        return self.message_timestamp_type == "LogAppendTime"

    @property
    def deletes(self) -> bool:
        """Whether time/size retention applies (``delete`` in cleanup.policy)."""
        return "delete" in self.cleanup_policy

    @property
    def compacts(self) -> bool:
        return "compact" in self.cleanup_policy

    @classmethod
    def from_properties(cls, props: Mapping[str, str], defaults: LogConfig | None = None) -> LogConfig:
        """``defaults`` with ``props`` (Kafka names, string values) laid over it.

        Raises InvalidConfigError naming the first unknown or invalid key.
        """
        values: dict[str, Any] = {}
        for key, raw in props.items():
            definition = TOPIC_CONFIG_DEFS.get(key)
            if definition is None:
                raise InvalidConfigError(f"Unknown topic config name: {key}")
            if raw is None:
                raise InvalidConfigError(f"Missing value for configuration {key}")
            values[definition.attr] = definition.parse(str(raw))
        config = dataclasses.replace(defaults if defaults is not None else cls(), **values)
        if config.min_compaction_lag_ms > config.max_compaction_lag_ms:
            raise InvalidConfigError(
                "Invalid value for configuration min.compaction.lag.ms: "
                f"{config.min_compaction_lag_ms} is greater than max.compaction.lag.ms "
                f"{config.max_compaction_lag_ms}"
            )
        return config

    def to_properties(self) -> dict[str, str]:
        """Every config under its Kafka name, as Kafka prints it."""
        return {name: convert_to_string(getattr(self, d.attr)) or "" for name, d in TOPIC_CONFIG_DEFS.items()}

    def value_of(self, name: str) -> Any:
        """The value of one config by Kafka name (KeyError when unknown)."""
        return getattr(self, TOPIC_CONFIG_DEFS[name].attr)


@dataclass(frozen=True)
class ConfigEntry:
    """One row of a DescribeConfigs answer; ``synonyms`` are (name, value, source), strongest first."""

    name: str
    value: str | None
    source: ConfigSource
    type: ConfigType
    doc: str
    read_only: bool = False
    is_sensitive: bool = False
    synonyms: tuple[tuple[str, str | None, ConfigSource], ...] = ()

    @property
    def is_default(self) -> bool:
        return self.source is ConfigSource.DEFAULT_CONFIG


def synonym_chain(
    keys: Sequence[str], primary: str, broker_set: Mapping[str, str], broker_defaults: Mapping[str, str]
) -> list[tuple[str, str | None, ConfigSource]]:
    """Kafka's ``ConfigHelper.configSynonyms`` for the broker keys ``keys`` (strongest first).

    The keys set statically, then those with a (non-null) default, each group in ``keys``'
    order; everything before the first entry named ``primary`` is dropped (Kafka's
    ``dropWhile(name != primary)``), so a key whose default lives in a weaker synonym
    (``log.retention.ms`` -> ``log.retention.hours``) may end up with no synonyms at all.
    """
    chain: list[tuple[str, str | None, ConfigSource]] = [
        (k, broker_set[k], ConfigSource.STATIC_BROKER_CONFIG) for k in keys if k in broker_set]
    chain += [(k, broker_defaults[k], ConfigSource.DEFAULT_CONFIG) for k in keys if k in broker_defaults]
    names = [synonym[0] for synonym in chain]
    return chain[names.index(primary):] if primary in names else []


def describe_topic_configs(
    effective: LogConfig,
    overrides: Mapping[str, str],
    broker_set: Mapping[str, str],
    broker_defaults: Mapping[str, str],
) -> list[ConfigEntry]:
    """Every topic config with its value, where it came from and its synonyms, as Kafka lists them.

    ``overrides`` are the topic's own configs; ``broker_set`` the broker properties set
    explicitly (``BrokerConfig.raw``); ``broker_defaults`` the broker's defaults as strings,
    for the keys whose default is not null (Kafka's ``staticDefaultConfigs``).

    Kafka's ``ConfigHelper.configSynonyms``: after the topic's own value come the broker
    synonyms set statically, then those with a default, each group in the synonyms' order,
    and everything before the first entry naming the *primary* synonym is dropped. So
    ``retention.ms`` lists no DEFAULT_CONFIG synonym (``log.retention.ms`` has no default;
    ``log.retention.hours=168`` is dropped), and when only ``log.retention.hours`` is set
    the config still reports DEFAULT_CONFIG with no synonyms, as Kafka 4.x does. Configs
    without a broker synonym (the throttled-replica lists, ``remote.storage.enable``) list
    none.
    """
    entries = []
    for name, definition in TOPIC_CONFIG_DEFS.items():
        value = convert_to_string(effective.value_of(name)) or ""
        synonyms: list[tuple[str, str | None, ConfigSource]] = []
        if name in overrides:
            synonyms.append((name, value, ConfigSource.TOPIC_CONFIG))
        if definition.synonyms:
            synonyms += synonym_chain(definition.synonyms, definition.synonyms[0], broker_set, broker_defaults)
        entries.append(
            ConfigEntry(
                name=name,
                value=value,
                source=synonyms[0][2] if synonyms else ConfigSource.DEFAULT_CONFIG,
                type=definition.type,
                doc=definition.doc,
                read_only=definition.read_only,
                is_sensitive=definition.is_sensitive,
                synonyms=tuple(synonyms),
            )
        )
    return entries
