"""ConnectorConfig: a stored connector config parsed once into a frozen, typed value.

Unit tests of the parse (typed fields, trimming as Kafka's ConfigDef trims, errors naming the
key), then the worker using the parsed value where it used to read the dict again.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path

import pytest
from seaway.connect.api import NO_DEFAULT, ConfigDef, ConfigError, ConfigType, Importance, Password
from seaway.connect.converters import JsonConverter, StringConverter
from seaway.connect.runtime.connector_config import ConnectorConfig
from seaway.connect.runtime.herder import State
from seaway.connect.runtime.plugins import Plugins
from seaway.connect.testing import EmbeddedBroker, EmbeddedConnect
from seaway.connectors.file import FileStreamSinkConnector

from tests.connect.runtime.rt_support import PLUGINS, CounterConnector, CounterTask, reset_collectors, rt_broker

__all__ = ["rt_broker"]


@pytest.fixture(scope="module")
def plugins() -> Plugins:
    return Plugins()


def test_a_sink_config_becomes_typed_fields_trimmed_as_kafka_trims(plugins: Plugins) -> None:
    raw = {"name": "lake", "connector.class": " FileStreamSink ", "tasks.max": "3 ", "tasks.max.enforce": " false",
           "topics": " a , b ", "file": "/tmp/out.txt",
           "key.converter": "org.apache.kafka.connect.storage.StringConverter ", "key.converter.encoding": "UTF-8",
           "value.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter.schemas.enable": "false",
           "transforms": " mask , route", "transforms.mask.type": "MaskField$Value", "transforms.mask.fields": "ssn",
           "transforms.mask.predicate": "notOrders", "transforms.mask.negate": "true ",
           "transforms.route.type": "RegexRouter", "transforms.route.regex": "(.*)",
           "transforms.route.replacement": "$1-x", "predicates": "notOrders",
           "predicates.notOrders.type": "TopicNameMatches", "predicates.notOrders.pattern": "orders",
           "errors.tolerance": " ALL", "errors.retry.timeout": "1000 ", "errors.log.enable": "true",
           "errors.deadletterqueue.topic.name": "dlq", "errors.deadletterqueue.topic.replication.factor": "1",
           "consumer.override.max.poll.records": "50 ", "producer.override.acks": "all"}
    config = ConnectorConfig.parse(plugins, raw)
    assert config.name == "lake" and config.connector_class is FileStreamSinkConnector and config.is_sink
    assert (config.tasks_max, config.tasks_max_enforce) == (3, False)
    assert (config.topics, config.topics_regex, config.topic_creation) == (("a", "b"), "", None)
    assert config.key_converter is not None and config.key_converter.cls is StringConverter
    assert dict(config.key_converter.props) == {"encoding": "UTF-8"}
    assert config.value_converter is not None and config.value_converter.cls is JsonConverter
    assert config.header_converter is None  # the worker's is used
    assert [(t.alias, t.type_name, t.predicate, t.negate) for t in config.transforms] == [
        ("mask", "MaskField$Value", "notOrders", True), ("route", "RegexRouter", None, False)]
    assert dict(config.transforms[0].props) == {"type": "MaskField$Value", "fields": "ssn",
                                                 "predicate": "notOrders", "negate": "true "}
    assert [(p.alias, p.type_name, dict(p.props)) for p in config.predicates] == [
        ("notOrders", "TopicNameMatches", {"type": "TopicNameMatches", "pattern": "orders"})]
    errors = config.errors
    assert (errors.tolerate_all, errors.retry_timeout_ms, errors.retry_delay_max_ms, errors.log_enable) == (
        True, 1000, 60000, True)
    assert (errors.dlq_topic, errors.dlq_replication_factor, errors.dlq_context_headers) == ("dlq", 1, False)
    # librdkafka does not trim as Kafka's client ConfigDefs do: the runtime does it for them
    assert dict(config.client_overrides["consumer"]) == {"max.poll.records": "50"}
    assert dict(config.client_overrides["producer"]) == {"acks": "all"}
    assert config.consumer_group == "connect-lake"
    assert config.props == raw and config.raw == raw  # what Connector.start receives: as given
    assert "transforms.mask.fields" in config.definition  # it knows its (enriched) ConfigDef


def test_the_value_is_frozen(plugins: Plugins) -> None:
    config = ConnectorConfig.parse(plugins, {"name": "f", "connector.class": "FileStreamSource", "topic": "t"})
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.tasks_max = 5  # type: ignore[misc]
    props: Mapping[str, str] = config.props
    with pytest.raises(TypeError):
        props["tasks.max"] = "5"  # type: ignore[index]
    assert not config.is_sink and (config.tasks_max, config.topics, config.errors.dlq_topic) == (1, (), "")


def test_raw_keeps_placeholders_props_the_resolved_values(plugins: Plugins) -> None:
    raw = {"name": "s", "connector.class": "FileStreamSource", "topic": "${env:T}"}
    config = ConnectorConfig.parse(plugins, {**raw, "topic": "orders"}, raw=raw)
    assert (config.raw["topic"], config.props["topic"]) == ("${env:T}", "orders")
    # the name is the herder's key (a properties file may leave "name=s " with its space): never re-trimmed
    stored = ConnectorConfig.parse(plugins, {**raw, "name": "s "}, name="s ")
    assert (stored.name, stored.consumer_group) == ("s ", "connect-s ")


@pytest.mark.parametrize(("config_type", "raw", "parsed"), [
    (ConfigType.INT, " 7\t", 7), (ConfigType.LONG, "7 ", 7), (ConfigType.SHORT, "\t7", 7),
    (ConfigType.DOUBLE, "0.5 ", 0.5), (ConfigType.BOOLEAN, " TRUE ", True), (ConfigType.LIST, " a , b ", ["a", "b"]),
    (ConfigType.LIST, "  ", []), (ConfigType.CLASS, " StringConverter ", StringConverter),
    (ConfigType.STRING, " x y ", "x y"), (ConfigType.PASSWORD, " s3cret ", Password("s3cret")),
])
def test_configdef_trims_as_kafkas_parse_type_does(config_type: ConfigType, raw: str, parsed: object) -> None:
    """A .properties value keeps its trailing white space (Java does); Kafka's ConfigDef.parseType trims every
    String value before parsing it, STRING and PASSWORD included (``new Password(trimmed)``), and so does ours."""
    definition = ConfigDef().define("k", config_type, NO_DEFAULT, None, Importance.LOW, "a key")
    assert definition.parse({"k": raw})["k"] == parsed


@pytest.mark.parametrize(("props", "key", "message"), [
    ({"name": "x", "tasks.max": "1"}, "connector.class", "contains no connector type"),
    ({"name": "x", "connector.class": "NoSuchConnector"}, None, "NoSuchConnector"),
    ({"name": "x", "connector.class": "FileStreamSource", "topic": "t", "tasks.max": "0"}, "tasks.max",
     "Value must be at least 1"),
    ({"name": "x", "connector.class": "FileStreamSource", "topic": "t", "tasks.max": "two"}, "tasks.max",
     "Not a number"),
    ({"name": "x", "connector.class": "FileStreamSource", "topic": "t", "transforms": "a",
      "transforms.a.type": "NoSuchSmt"}, "transforms.a.type", "NoSuchSmt"),
    ({"name": "x", "connector.class": "FileStreamSource", "topic": "t", "topic.creation.default.partitions": "1",
      "topic.creation.default.replication.factor": "1", "topic.creation.groups": "g",
      "topic.creation.g.partitions": "many"}, "topic.creation.g.partitions", "Not a number"),
])
def test_a_bad_config_raises_naming_the_key(plugins: Plugins, props: dict[str, str], key: str | None,
                                            message: str) -> None:
    with pytest.raises(ConfigError, match=message) as caught:
        ConnectorConfig.parse(plugins, props)
    if key is not None:
        assert caught.value.name == key


def test_topic_creation_groups_match_in_order_default_last(plugins: Plugins) -> None:
    config = ConnectorConfig.parse(plugins, {
        "name": "s", "connector.class": "FileStreamSource", "topic": "t",
        "topic.creation.default.partitions": "1", "topic.creation.default.replication.factor": " 1",
        "topic.creation.default.cleanup.policy": "delete", "topic.creation.groups": "big",
        "topic.creation.big.include": "big-.*, huge", "topic.creation.big.exclude": "big-no",
        "topic.creation.big.partitions": "6", "topic.creation.big.cleanup.policy": "compact"})
    creation = config.topic_creation
    assert creation is not None
    assert creation.match("big-1") == (6, 1, {"cleanup.policy": "compact"})
    assert creation.match("huge") == (6, 1, {"cleanup.policy": "compact"})
    assert creation.match("big-no") == (1, 1, {"cleanup.policy": "delete"})
    without = ConnectorConfig.parse(plugins, {"name": "s", "connector.class": "FileStreamSource", "topic": "t"})
    assert without.topic_creation is None


class TwoTaskConnector(CounterConnector):
    """Generates two task configs whatever tasks.max says."""

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [{**self.props, "topic": f"{self.props['topic']}-{i}"} for i in range(2)]


@pytest.mark.timeout(60)
async def test_tasks_max_enforce_comes_from_the_parsed_config(rt_broker: EmbeddedBroker, tmp_path: Path,
                                                            topic_name: str) -> None:
    """``tasks.max.enforce=" false"`` validates (ConfigDef trims booleans) and so is not enforced.

    The worker used to read it from the dict again (``" false" != "false"``): the connector
    that validated failed with "generated 2 tasks, which is greater than 1".
    """
    reset_collectors()
    async with EmbeddedConnect(rt_broker.bootstrap, tmp_path, plugins=(*PLUGINS, TwoTaskConnector)) as connect:
        await connect.create_connector("two", {"connector.class": f"{__name__}:TwoTaskConnector",
                                               "topic": topic_name, "count": "1", "tasks.max": " 1",
                                               "tasks.max.enforce": " false"})
        status = await connect.wait_for_running("two", tasks=2)
        assert [t.state for t in status.tasks] == [State.RUNNING, State.RUNNING]
        assert len(connect.consume(topic_name + "-1", 1)) == 1
        assert sorted(c["topic"] for c in CounterTask.started) == [topic_name + "-0", topic_name + "-1"]

