"""LogConfig: Kafka names, parsing, validation and DescribeConfigs sources."""

from __future__ import annotations

import pytest
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


def test_describe_reports_sources_and_synonyms() -> None:
    effective = LogConfig.from_properties({"retention.ms": "100"}, LogConfig(segment_bytes=4096))
    entries = {
        e.name: e
        for e in describe_topic_configs(
            effective, {"retention.ms": "100"}, {"log.segment.bytes": "4096", "log.retention.hours": "1"}
        )
    }
    assert entries["retention.ms"].source is ConfigSource.TOPIC_CONFIG
    assert entries["retention.ms"].value == "100"
    assert [s[0] for s in entries["retention.ms"].synonyms] == [
        "retention.ms",
        "log.retention.hours",
        "log.retention.ms",
    ]
    assert entries["segment.bytes"].source is ConfigSource.STATIC_BROKER_CONFIG
    assert entries["segment.bytes"].value == "4096"
    assert entries["flush.ms"].is_default
