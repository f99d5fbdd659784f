"""LogConfig: Kafka names, parsing, validation and DescribeConfigs sources."""

from __future__ import annotations

import pytest
from seaway.broker.config import BrokerConfig
from seaway.broker.log.config import TOPIC_CONFIG_DEFS, ConfigSource, LogConfig, describe_topic_configs
from seaway.protocol.errors import InvalidConfigError


def test_from_properties_overrides_defaults() -> None:
    defaults = LogConfig(retention_ms=1000, segment_bytes=2048)
    config = LogConfig.from_properties(
        {
            "retention.ms": " 5000 ",
            "cleanup.policy": "compact, delete",
            "preallocate": "TRUE",
            "min.cleanable.dirty.ratio": "0.25",
            "message.timestamp.type": "LogAppendTime",
        },
        defaults,
    )
    assert config.retention_ms == 5000 and config.segment_bytes == 2048
    assert config.cleanup_policy == ("compact", "delete") and config.compacts and config.deletes
    assert config.preallocate is True and config.min_cleanable_dirty_ratio == 0.25
    assert config.is_log_append_time


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("retention.ms", "abc"),
        ("retention.ms", "-5"),
        ("segment.bytes", "3000000000"),
        ("cleanup.policy", "forever"),
        ("message.timestamp.type", "Now"),
        ("min.cleanable.dirty.ratio", "2"),
        ("preallocate", "yes"),
        ("compression.type", "brotli"),
        ("unknown.key", "1"),
    ],
)
def test_bad_values_name_the_key(key: str, value: str) -> None:
    with pytest.raises(InvalidConfigError, match=key.replace(".", r"\.")) as info:
        LogConfig.from_properties({key: value})
    assert info.value.code == 40


def test_compaction_lags_must_be_ordered() -> None:
    with pytest.raises(InvalidConfigError, match=r"min\.compaction\.lag\.ms"):
        LogConfig.from_properties({"min.compaction.lag.ms": "10", "max.compaction.lag.ms": "5"})


def test_to_properties_round_trips_every_config() -> None:
    config = LogConfig.from_properties({"retention.bytes": "77", "cleanup.policy": "compact"})
    props = config.to_properties()
    assert set(props) == set(TOPIC_CONFIG_DEFS)
    assert props["retention.bytes"] == "77" and props["cleanup.policy"] == "compact"
    assert props["flush.messages"] == "9223372036854775807"
    assert LogConfig.from_properties(props) == config
    assert all(getattr(LogConfig(), d.attr) == d.default for d in TOPIC_CONFIG_DEFS.values())


def _broker_defaults() -> dict[str, str]:
    """What DescribeConfigs passes: broker keys with a non-null default, as strings."""
    return {k: d.default_string() or "" for k, d in BrokerConfig.definitions().items()
            if d.default_string() is not None}


def test_describe_reports_sources_and_synonyms_as_kafka() -> None:
    """Kafka's ConfigHelper.configSynonyms order and its dropWhile(name != primary synonym) (P-C2)."""
    effective = LogConfig.from_properties({"retention.ms": "100"}, LogConfig(segment_bytes=4096))
    static = {"log.segment.bytes": "4096", "log.retention.hours": "1", "log.roll.ms": "5000",
              "log.flush.interval.ms": "1000"}
    entries = {e.name: e for e in describe_topic_configs(effective, {"retention.ms": "100"}, static,
                                                         _broker_defaults())}
    static_, default, topic = ConfigSource.STATIC_BROKER_CONFIG, ConfigSource.DEFAULT_CONFIG, ConfigSource.TOPIC_CONFIG
    assert entries["retention.ms"].source is topic
    assert entries["retention.ms"].value == "100"
    # log.retention.hours (set, and its default 168) come before the primary log.retention.ms,
    # which is neither set nor has a default: Kafka drops them
    assert entries["retention.ms"].synonyms == (("retention.ms", "100", topic),)
    assert entries["segment.bytes"].source is static_
    assert entries["segment.bytes"].value == "4096"
    assert entries["segment.bytes"].synonyms == (("log.segment.bytes", "4096", static_),
                                                 ("log.segment.bytes", "1073741824", default))
    assert entries["segment.ms"].synonyms == (("log.roll.ms", "5000", static_), ("log.roll.hours", "168", default))
    assert entries["flush.ms"].synonyms == (("log.flush.interval.ms", "1000", static_),
                                            ("log.flush.scheduler.interval.ms", "9223372036854775807", default))
    assert entries["cleanup.policy"].synonyms == (("log.cleanup.policy", "delete", default),)
    assert entries["min.cleanable.dirty.ratio"].synonyms == (("log.cleaner.min.cleanable.ratio", "0.5", default),)
    for name in ("segment.jitter.ms", "follower.replication.throttled.replicas", "remote.storage.enable"):
        assert (entries[name].source, entries[name].synonyms) == (default, ()), name


def test_describe_without_the_primary_synonym_reports_default_config() -> None:
    """Only log.retention.hours set: Kafka 4.x still says DEFAULT_CONFIG, with no synonyms."""
    effective = LogConfig.from_properties({}, LogConfig(retention_ms=3_600_000))
    entries = {e.name: e for e in describe_topic_configs(effective, {}, {"log.retention.hours": "1"},
                                                         _broker_defaults())}
    assert (entries["retention.ms"].value, entries["retention.ms"].source) == ("3600000", ConfigSource.DEFAULT_CONFIG)
    assert entries["retention.ms"].synonyms == ()
    assert entries["flush.ms"].is_default and entries["flush.ms"].synonyms == ()
