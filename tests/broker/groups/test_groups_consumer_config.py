"""The KIP-848 ``group.consumer.*`` broker configs: Kafka's names and defaults, bad combinations refused."""

from __future__ import annotations

import pytest
from seaway.broker.config import BrokerConfig, ConfigError
from seaway.broker.coordinator.coordinator import CoordinatorSettings


def test_defaults_are_kafkas() -> None:
    settings = CoordinatorSettings.from_config(BrokerConfig({})).consumer
    assert (settings.session_timeout_ms, settings.heartbeat_interval_ms) == (45_000, 5_000)
    assert settings.assignors == ("uniform", "range")


def test_assignors_by_kafka_class_name_or_short_name() -> None:
    by_class = BrokerConfig({"group.consumer.assignors": "org.apache.kafka.coordinator.group.assignor.RangeAssignor"})
    assert CoordinatorSettings.from_config(by_class).consumer.assignors == ("range",)
    short = BrokerConfig({"group.consumer.assignors": "range,uniform"})
    assert CoordinatorSettings.from_config(short).consumer.assignors == ("range", "uniform")


@pytest.mark.parametrize(("props", "named"), [
    ({"group.consumer.assignors": "sticky"}, "group.consumer.assignors"),
    ({"group.consumer.session.timeout.ms": "3000"}, "group.consumer.min.session.timeout.ms"),
    ({"group.consumer.heartbeat.interval.ms": "20000"}, "group.consumer.max.heartbeat.interval.ms"),
    ({"group.consumer.min.session.timeout.ms": "1000", "group.consumer.session.timeout.ms": "4000",
      "group.consumer.heartbeat.interval.ms": "5000"}, "group.consumer.heartbeat.interval.ms"),
    ({"group.consumer.max.size": "0"}, "group.consumer.max.size"),
])
def test_bad_values_stop_the_broker_naming_the_key(props: dict[str, str], named: str) -> None:
    with pytest.raises(ConfigError, match=named.replace(".", r"\.")):
        BrokerConfig(props)
