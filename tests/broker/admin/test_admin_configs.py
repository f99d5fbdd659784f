"""DescribeConfigs, AlterConfigs and IncrementalAlterConfigs through AdminClient and raw requests."""

from __future__ import annotations

import pytest
from confluent_kafka import KafkaError, KafkaException, Producer
from confluent_kafka.admin import (  # type: ignore[attr-defined]
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ConfigSource,
    NewTopic,
)
from seaway.protocol.messages.alter_configs_request import AlterableConfig, AlterConfigsRequest, AlterConfigsResource
from seaway.protocol.messages.alter_configs_response import AlterConfigsResponse
from seaway.protocol.messages.describe_configs_request import DescribeConfigsRequest, DescribeConfigsResource
from seaway.protocol.messages.describe_configs_response import DescribeConfigsResponse

from tests.broker.admin.rawclient import call
from tests.support.broker import BrokerProcess

pytestmark = pytest.mark.timeout(60)

TOPIC_CONFIG = ConfigSource.DYNAMIC_TOPIC_CONFIG
DEFAULT = ConfigSource.DEFAULT_CONFIG
STATIC = ConfigSource.STATIC_BROKER_CONFIG


def _source(entry: ConfigEntry) -> ConfigSource:
    """The entry's config source as the enum: librdkafka hands back the wire's int, not the declared ConfigSource."""
    return ConfigSource(entry.source)


def _topic(admin: AdminClient, name: str, config: dict[str, str] | None = None) -> None:
    admin.create_topics([NewTopic(name, 1, 1, config=config or {})])[name].result(timeout=20)


def _describe(admin: AdminClient, name: str) -> dict[str, ConfigEntry]:
    resource = ConfigResource(ConfigResource.Type.TOPIC, name)
    result: dict[str, ConfigEntry] = admin.describe_configs([resource])[resource].result(timeout=20)
    return result


def _incremental(admin: AdminClient, name: str, *ops: ConfigEntry, validate_only: bool = False) -> None:
    resource = ConfigResource(ConfigResource.Type.TOPIC, name, incremental_configs=list(ops))
    admin.incremental_alter_configs([resource], validate_only=validate_only)[resource].result(timeout=20)


def _op(key: str, value: str | None, op: AlterConfigOpType) -> ConfigEntry:
    return ConfigEntry(key, value, incremental_operation=op)


def _failure(call_: object) -> KafkaError:
    with pytest.raises(KafkaException) as info:
        call_()  # type: ignore[operator]
    err = info.value.args[0]
    assert isinstance(err, KafkaError)
    return err


def test_describe_topic_configs_sources_and_synonyms(shared_broker: BrokerProcess, topic_name: str) -> None:
    admin = AdminClient({"bootstrap.servers": shared_broker.bootstrap})
    _topic(admin, topic_name, {"retention.ms": "60000"})
    configs = _describe(admin, topic_name)
    assert (configs["retention.ms"].value, _source(configs["retention.ms"])) == ("60000", TOPIC_CONFIG)
    assert (configs["cleanup.policy"].value, _source(configs["cleanup.policy"])) == ("delete", DEFAULT)
    assert configs["max.message.bytes"].value == "1048588"
    assert len(configs) >= 25  # every topic config Kafka has, not just the overrides
    # as Kafka: no DEFAULT_CONFIG synonym log.retention.ms (its default is null; the 168 h live in
    # log.retention.hours, which Kafka drops from the list), the broker default for cleanup.policy
    assert list(configs["retention.ms"].synonyms) == ["retention.ms"]
    assert list(configs["cleanup.policy"].synonyms) == ["log.cleanup.policy"]
    missing = ConfigResource(ConfigResource.Type.TOPIC, topic_name + "-nope")
    err = _failure(lambda: admin.describe_configs([missing])[missing].result(timeout=20))
    assert err.code() == KafkaError.UNKNOWN_TOPIC_OR_PART


def test_describe_configs_v4_keys_types_and_docs(shared_broker: BrokerProcess, topic_name: str) -> None:
    admin = AdminClient({"bootstrap.servers": shared_broker.bootstrap})
    _topic(admin, topic_name, {"cleanup.policy": "compact"})
    request = DescribeConfigsRequest(
        resources=[DescribeConfigsResource(resource_type=2, resource_name=topic_name,
                                           configuration_keys=["cleanup.policy", "segment.bytes", "nope"])],
        include_synonyms=True, include_documentation=True)
    result = call(shared_broker.bootstrap, request, DescribeConfigsResponse, 4).results[0]
    assert result.error_code == 0
    by_name = {c.name: c for c in result.configs}
    assert sorted(by_name) == ["cleanup.policy", "segment.bytes"]
    policy = by_name["cleanup.policy"]
    assert (policy.value, policy.config_source, policy.config_type) == ("compact", 1, 7)  # TOPIC_CONFIG, LIST
    assert policy.documentation and policy.synonyms[0].name == "cleanup.policy"
    assert by_name["segment.bytes"].config_type == 3  # INT


def test_incremental_alter_set_delete_append_subtract(shared_broker: BrokerProcess, topic_name: str) -> None:
    admin = AdminClient({"bootstrap.servers": shared_broker.bootstrap})
    _topic(admin, topic_name, {"retention.ms": "60000", "segment.ms": "3600000"})
    _incremental(admin, topic_name,
                 _op("retention.ms", "120000", AlterConfigOpType.SET),
                 _op("segment.ms", None, AlterConfigOpType.DELETE),
                 _op("cleanup.policy", "compact", AlterConfigOpType.APPEND))
    configs = _describe(admin, topic_name)
    assert (configs["retention.ms"].value, _source(configs["retention.ms"])) == ("120000", TOPIC_CONFIG)
    assert (configs["segment.ms"].value, _source(configs["segment.ms"])) == ("604800000", DEFAULT)
    assert configs["cleanup.policy"].value == "delete,compact"
    _incremental(admin, topic_name, _op("cleanup.policy", "delete", AlterConfigOpType.SUBTRACT))
    assert _describe(admin, topic_name)["cleanup.policy"].value == "compact"


def test_incremental_alter_refusals_and_validate_only(shared_broker: BrokerProcess, topic_name: str) -> None:
    admin = AdminClient({"bootstrap.servers": shared_broker.bootstrap})
    _topic(admin, topic_name)
    bad = _failure(lambda: _incremental(admin, topic_name, _op("retention.ms", "forever", AlterConfigOpType.SET)))
    assert bad.code() == KafkaError.INVALID_CONFIG and "retention.ms" in bad.str()
    append = _failure(lambda: _incremental(admin, topic_name, _op("retention.ms", "1", AlterConfigOpType.APPEND)))
    assert append.code() == KafkaError.INVALID_CONFIG and "retention.ms" in append.str()
    _incremental(admin, topic_name, _op("retention.ms", "1000", AlterConfigOpType.SET), validate_only=True)
    assert _source(_describe(admin, topic_name)["retention.ms"]) == DEFAULT
    broker = ConfigResource(ConfigResource.Type.BROKER, "1",
                            incremental_configs=[_op("num.partitions", "3", AlterConfigOpType.SET)])
    refused = _failure(lambda: admin.incremental_alter_configs([broker])[broker].result(timeout=20))
    assert refused.code() == KafkaError.INVALID_REQUEST and "static" in refused.str()


def test_legacy_alter_configs_replaces_the_override_set(shared_broker: BrokerProcess, topic_name: str) -> None:
    admin = AdminClient({"bootstrap.servers": shared_broker.bootstrap})
    _topic(admin, topic_name, {"retention.ms": "60000", "segment.ms": "3600000"})

    def alter(validate_only: bool, **configs: str) -> int:
        resource = AlterConfigsResource(resource_type=2, resource_name=topic_name, configs=[
            AlterableConfig(name=k.replace("_", "."), value=v) for k, v in configs.items()])
        response = call(shared_broker.bootstrap, AlterConfigsRequest(resources=[resource], validate_only=validate_only),
                        AlterConfigsResponse, 2)
        code: int = response.responses[0].error_code
        return code

    assert alter(False, max_message_bytes="5000") == 0
    configs = _describe(admin, topic_name)
    assert _source(configs["max.message.bytes"]) == TOPIC_CONFIG
    assert _source(configs["retention.ms"]) == DEFAULT and _source(configs["segment.ms"]) == DEFAULT
    assert alter(False, max_message_bytes="-5") == 40  # INVALID_CONFIG
    assert alter(True, retention_ms="1") == 0
    assert _source(_describe(admin, topic_name)["retention.ms"]) == DEFAULT


def test_describe_broker_configs(shared_broker: BrokerProcess) -> None:
    admin = AdminClient({"bootstrap.servers": shared_broker.bootstrap})
    node = admin.describe_cluster().result(timeout=20).nodes[0].id
    resource = ConfigResource(ConfigResource.Type.BROKER, str(node))
    configs = admin.describe_configs([resource])[resource].result(timeout=20)
    assert (configs["num.partitions"].value, _source(configs["num.partitions"])) == ("1", DEFAULT)
    assert _source(configs["log.dirs"]) == STATIC  # the fixture sets it with --override
    assert configs["log.dirs"].is_read_only
    # librdkafka sends a BROKER resource only to that broker, so ask for others raw.
    request = DescribeConfigsRequest(resources=[
        DescribeConfigsResource(resource_type=4, resource_name=str(node + 1), configuration_keys=None),
        DescribeConfigsResource(resource_type=4, resource_name="one", configuration_keys=None),
        DescribeConfigsResource(resource_type=4, resource_name="", configuration_keys=None),
    ])
    results = call(shared_broker.bootstrap, request, DescribeConfigsResponse, 4).results
    assert [r.error_code for r in results] == [42, 42, 0]  # INVALID_REQUEST twice; cluster default is empty
    assert results[2].configs == []


def test_altered_limit_applies_to_produce(shared_broker: BrokerProcess, topic_name: str) -> None:
    admin = AdminClient({"bootstrap.servers": shared_broker.bootstrap})
    _topic(admin, topic_name)
    _incremental(admin, topic_name, _op("max.message.bytes", "1000", AlterConfigOpType.SET))
    producer = Producer({"bootstrap.servers": shared_broker.bootstrap, "compression.type": "none"})
    errors: list[KafkaError | None] = []
    producer.produce(topic_name, b"x" * 5000, on_delivery=lambda err, msg: errors.append(err))
    assert producer.flush(20) == 0
    assert errors[0] is not None and errors[0].code() == KafkaError.MSG_SIZE_TOO_LARGE


@pytest.mark.timeout(60)
def test_overrides_survive_a_restart(broker: BrokerProcess, topic_name: str) -> None:
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    _topic(admin, topic_name, {"retention.ms": "60000"})
    _incremental(admin, topic_name, _op("cleanup.policy", "compact", AlterConfigOpType.SET))
    del admin
    broker.restart()
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    configs = _describe(admin, topic_name)
    assert (configs["retention.ms"].value, _source(configs["retention.ms"])) == ("60000", TOPIC_CONFIG)
    assert (configs["cleanup.policy"].value, _source(configs["cleanup.policy"])) == ("compact", TOPIC_CONFIG)
