"""BrokerConfig: server.properties syntax, Kafka names/defaults/precedence, errors."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from seaway.broker.config import BrokerConfig, ConfigError
from seaway.properties import load_properties


def test_properties_syntax() -> None:
    text = (
        "# comment\n"
        "   ! another comment\n"
        "\n"
        "a=1\n"
        "b : two words \n"
        "c   3\n"
        "long = first,\\\n"
        "       second\n"
        "esc\\=key = tab\\there \\u0041\\\\\n"
        "empty=\n"
        "a=overridden\n"
        "path=C:\\\\data\n"
    )
    assert load_properties(text) == {
        "a": "overridden",
        "b": "two words ",
        "c": "3",
        "long": "first,second",
        "esc=key": "tab\there A\\",
        "empty": "",
        "path": "C:\\data",
    }


def test_defaults() -> None:
    config = BrokerConfig.load(None)
    assert config.node_id == 1
    assert config.listeners == [("PLAINTEXT", "", 9092)] == config.advertised_listeners
    assert config.log_dirs == [Path("./data/broker")]
    assert (config.num_partitions, config.default_replication_factor, config.auto_create_topics_enable) == (
        1,
        1,
        True,
    )
    assert config.offsets_topic_num_partitions == 50 and config.offsets_retention_minutes == 10080
    assert config.group_initial_rebalance_delay_ms == 3000
    assert (config.group_min_session_timeout_ms, config.group_max_session_timeout_ms) == (6000, 1800000)
    assert config.socket_request_max_bytes == 104857600 and config.delete_topic_enable
    assert config.log_retention_check_interval_ms == 300000
    log_config = config.default_log_config()
    assert log_config.retention_ms == 7 * 24 * 3600 * 1000 and log_config.max_message_bytes == 1048588
    assert config.raw == {} and config.source_of("num.partitions") == "default"


def test_file_and_overrides(tmp_path: Path) -> None:
    path = tmp_path / "server.properties"
    path.write_text(
        "node.id=3\nlisteners=PLAINTEXT://:9092,CONTROLLER://:9093\ncontroller.listener.names=CONTROLLER\n"
        "log.dirs=/a,/b\nnum.partitions=4\nlog.segment.bytes=1048576\nmessage.max.bytes=2000000\n"
        "log.message.timestamp.type=LogAppendTime\nlog.cleanup.policy=compact\n"
        "log.flush.interval.messages=10\nlog.flush.scheduler.interval.ms=500\n"
        "advertised.listeners=PLAINTEXT://broker.example:19092\n"
    )
    config = BrokerConfig.load(path, {"num.partitions": "6"})
    assert config.node_id == 3 and config.num_partitions == 6
    assert config.listeners == [("PLAINTEXT", "", 9092)]
    assert config.advertised_listeners == [("PLAINTEXT", "broker.example", 19092)]
    assert config.log_dirs == [Path("/a"), Path("/b")]
    log_config = config.default_log_config()
    assert (log_config.segment_bytes, log_config.max_message_bytes) == (1048576, 2000000)
    assert log_config.message_timestamp_type == "LogAppendTime" and log_config.cleanup_policy == ("compact",)
    assert (log_config.flush_messages, log_config.flush_ms) == (10, 500)
    assert config.source_of("num.partitions") == "static" and config.value_string("num.partitions") == "6"
    assert config.value_string("log.retention.hours") == "168"


@pytest.mark.parametrize(
    ("props", "expected"),
    [
        ({"log.retention.hours": "2"}, 2 * 3_600_000),
        ({"log.retention.hours": "2", "log.retention.minutes": "3"}, 3 * 60_000),
        ({"log.retention.hours": "2", "log.retention.minutes": "3", "log.retention.ms": "1234"}, 1234),
        ({"log.retention.ms": "-1"}, -1),
        ({"log.retention.hours": "-1"}, -1),
    ],
)
def test_retention_precedence(props: dict[str, str], expected: int) -> None:
    assert BrokerConfig(props).default_log_config().retention_ms == expected


def test_roll_precedence_and_log_dir_fallback() -> None:
    config = BrokerConfig({"log.roll.hours": "1", "log.dir": "/x"})
    assert config.default_log_config().segment_ms == 3_600_000 and config.log_dirs == [Path("/x")]
    assert BrokerConfig({"log.roll.hours": "1", "log.roll.ms": "5"}).default_log_config().segment_ms == 5


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("num.partitions", "abc"),
        ("num.partitions", "0"),
        ("auto.create.topics.enable", "maybe"),
        ("log.segment.bytes", "10"),
        ("log.message.timestamp.type", "Whenever"),
        ("listeners", "nonsense"),
        ("default.replication.factor", "3"),
        ("log.cleanup.policy", "archive"),
    ],
)
def test_bad_values_name_key_and_value(key: str, value: str) -> None:
    with pytest.raises(ConfigError) as info:
        BrokerConfig({key: value})
    assert key in str(info.value) and value in str(info.value)


def test_listener_rules() -> None:
    with pytest.raises(ConfigError, match=r"ssl\.keystore\.location"):  # an SSL listener needs key material
        BrokerConfig({"listeners": "SSL://:9093"})
    with pytest.raises(ConfigError, match="not in listeners"):
        BrokerConfig({"advertised.listeners": "CONTROLLER://h:1"})
    config = BrokerConfig({"listeners": "PLAINTEXT://[::1]:0"})
    assert config.listeners == [("PLAINTEXT", "::1", 0)]
    with pytest.raises(ConfigError, match=r"broker\.id"):
        BrokerConfig({"node.id": "1", "broker.id": "2"})
    assert BrokerConfig({"broker.id": "7"}).node_id == 7


def test_unknown_keys_warn_and_cluster_keys_are_ignored(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="seaway.broker.config"):
        config = BrokerConfig(
            {"no.such.thing": "1", "num.network.threads": "3", "ssl.keystore.location": "/k"}
        )
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings == ["unknown broker config(s) ignored: no.such.thing"]
    assert config.raw["num.network.threads"] == "3"
