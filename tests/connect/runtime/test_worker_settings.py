"""A worker's typed settings (runtime/worker_settings.py): the same values as the ConfigDef's parsed
result (Kafka's defaults, a full Kafka-style properties file, CONNECT_* overrides), and a bad value
still refused at start with the ConfigError naming the key."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from seaway.connect.api import ConfigError
from seaway.connect.converters import JsonConverter, SimpleHeaderConverter, StringConverter
from seaway.connect.runtime.config import StandaloneConfig, WorkerConfig
from seaway.connect.runtime.distributed.config import DistributedConfig
from seaway.connect.runtime.worker_settings import InternalTopic
from seaway.properties import load_properties, load_properties_file

BASE = {"group.id": "g", "config.storage.topic": "c", "offset.storage.topic": "o", "status.storage.topic": "s",
        "key.converter": "StringConverter", "value.converter": "StringConverter"}

# every typed field, the key it comes from and how the old call sites read that key
_COMMON: dict[str, tuple[str, Any]] = {
    "bootstrap_servers": ("bootstrap.servers", tuple),
    "key_converter": ("key.converter", None),
    "value_converter": ("value.converter", None),
    "header_converter": ("header.converter", None),
    "task_shutdown_graceful_timeout_ms": ("task.shutdown.graceful.timeout.ms", int),
    "offset_flush_interval_ms": ("offset.flush.interval.ms", int),
    "offset_flush_timeout_ms": ("offset.flush.timeout.ms", int),
    "plugin_allowlist": ("plugin.allowlist", tuple),
    "config_providers": ("config.providers", tuple),
    "connector_client_config_override_policy": ("connector.client.config.override.policy", str),
    "topic_creation_enable": ("topic.creation.enable", bool),
    "topic_tracking_enable": ("topic.tracking.enable", bool),
    "topic_tracking_allow_reset": ("topic.tracking.allow.reset", bool),
    "client_id": ("client.id", str),
    "metrics_sample_window_ms": ("metrics.sample.window.ms", int),
    "metrics_num_samples": ("metrics.num.samples", int),
}
_REST: dict[str, tuple[str, Any]] = {
    "listeners": ("listeners", tuple),
    "advertised_host_name": ("rest.advertised.host.name", None),
    "advertised_port": ("rest.advertised.port", None),
    "advertised_listener": ("rest.advertised.listener", None),
    "request_max_bytes": ("rest.request.max.bytes", int),
    "request_read_timeout_ms": ("rest.request.read.timeout.ms", int),
}
_GROUP: dict[str, tuple[str, Any]] = {
    "group_id": ("group.id", str),
    "session_timeout_ms": ("session.timeout.ms", int),
    "heartbeat_interval_ms": ("heartbeat.interval.ms", int),
    "rebalance_timeout_ms": ("rebalance.timeout.ms", int),
    "worker_sync_timeout_ms": ("worker.sync.timeout.ms", int),
    "worker_unsync_backoff_ms": ("worker.unsync.backoff.ms", int),
    "connect_protocol": ("connect.protocol", str),
    "scheduled_rebalance_max_delay_ms": ("scheduled.rebalance.max.delay.ms", int),
    "exactly_once_source_support": ("exactly.once.source.support", str),
}
_INTER_WORKER: dict[str, tuple[str, Any]] = {
    "key_generation_algorithm": ("inter.worker.key.generation.algorithm", str),
    "key_size": ("inter.worker.key.size", None),
    "key_ttl_ms": ("inter.worker.key.ttl.ms", int),
    "signature_algorithm": ("inter.worker.signature.algorithm", str),
    "verification_algorithms": ("inter.worker.verification.algorithms", tuple),
}


def _same_as_lookups(value: Any, config: WorkerConfig, fields: dict[str, tuple[str, Any]]) -> None:
    """Each field equals (and has the type of) what ``cast(config.get(key))`` gave at the call sites."""
    assert {f.name for f in dataclasses.fields(value)} >= fields.keys()
    for name, (key, cast) in fields.items():
        old = config.get(key)
        old = old if cast is None or old is None else cast(old)
        got = getattr(value, name)
        assert (name, got) == (name, old) and type(got) is type(old), key


def _same_topics(config: DistributedConfig) -> None:
    for topic, prefix in ((config.topics.offset, "offset.storage"), (config.topics.status, "status.storage")):
        assert topic == InternalTopic(str(config.get(f"{prefix}.topic")), int(config.get(f"{prefix}.partitions")),
                                      int(config.get(f"{prefix}.replication.factor")))
    assert config.topics.config == InternalTopic(str(config.get("config.storage.topic")), 1,
                                                 int(config.get("config.storage.replication.factor")))


def _same_everywhere(config: DistributedConfig) -> None:
    _same_as_lookups(config.common, config, _COMMON)
    _same_as_lookups(config.rest, config, _REST)
    _same_as_lookups(config.group, config, _GROUP)
    _same_as_lookups(config.group.inter_worker, config, _INTER_WORKER)
    _same_topics(config)


def test_defaults_are_the_config_defs_and_kafkas() -> None:
    c = DistributedConfig(BASE)
    _same_everywhere(c)
    # Kafka's defaults, spelled out so a changed default in either place fails here
    assert c.common.bootstrap_servers == ("localhost:9092",) and c.common.header_converter is SimpleHeaderConverter
    assert (c.common.offset_flush_interval_ms, c.common.offset_flush_timeout_ms) == (60000, 5000)
    assert c.common.task_shutdown_graceful_timeout_ms == 5000
    assert c.common.connector_client_config_override_policy == "All"
    assert c.common.topic_creation_enable and c.common.topic_tracking_enable and c.common.topic_tracking_allow_reset
    assert (c.common.metrics_sample_window_ms, c.common.metrics_num_samples) == (30000, 2)
    assert c.common.plugin_path == () and c.common.client_id == ""
    assert c.rest.listeners == ("http://:8083",) and c.rest.admin_listeners is None
    assert c.rest.request_read_timeout_ms == 30000 and c.rest.extension_classes == ()
    assert c.rest.advertised() == ("http", "127.0.0.1", 8083)
    assert (c.group.session_timeout_ms, c.group.heartbeat_interval_ms, c.group.rebalance_timeout_ms) == (
        10000, 3000, 60000)
    assert (c.group.worker_sync_timeout_ms, c.group.worker_unsync_backoff_ms) == (3000, 300000)
    assert c.group.worker_sync_timeout_s == 3.0
    assert c.group.connect_protocol == "sessioned" and c.group.scheduled_rebalance_max_delay_ms == 300000
    assert c.group.exactly_once_source_support == "disabled"
    assert c.group.inter_worker.key_size is None and c.group.inter_worker.key_ttl_ms == 3600000
    assert c.group.inter_worker.verification_algorithms == ("HmacSHA256",)
    assert c.topics.offset == InternalTopic("o", 25, 3) and c.topics.status == InternalTopic("s", 5, 3)
    assert c.topics.config == InternalTopic("c", 1, 3)


_FULL = r"""
# a Kafka connect-distributed.properties, every key set away from its default
bootstrap.servers=b1:9092, b2:9092
group.id=connect-cluster
key.converter=org.apache.kafka.connect.json.JsonConverter
value.converter=org.apache.kafka.connect.storage.StringConverter
header.converter=org.apache.kafka.connect.storage.SimpleHeaderConverter
key.converter.schemas.enable=false
task.shutdown.graceful.timeout.ms=7000
offset.flush.interval.ms=10000
offset.flush.timeout.ms=6000
listeners=http://0.0.0.0:18083,https://:18443
admin.listeners=
rest.advertised.host.name=worker-1.example
rest.advertised.port=28083
rest.advertised.listener=http
rest.request.max.bytes=4096
rest.request.read.timeout.ms=1500
connector.client.config.override.policy=Principal
topic.creation.enable=false
topic.tracking.enable=false
topic.tracking.allow.reset=false
client.id=w1
metrics.sample.window.ms=5000
metrics.num.samples=4
config.storage.topic=connect-configs
config.storage.replication.factor=1
config.storage.partitions=7
offset.storage.topic=connect-offsets
offset.storage.partitions=-1
offset.storage.replication.factor=-1
status.storage.topic=connect-status
status.storage.partitions=3
status.storage.replication.factor=2
session.timeout.ms=45000
heartbeat.interval.ms=9000
rebalance.timeout.ms=120000
worker.sync.timeout.ms=4000
worker.unsync.backoff.ms=1000
connect.protocol=compatible
scheduled.rebalance.max.delay.ms=0
exactly.once.source.support=preparing
inter.worker.key.generation.algorithm=HmacSHA512
inter.worker.key.size=512
inter.worker.key.ttl.ms=60000
inter.worker.signature.algorithm=HmacSHA384
inter.worker.verification.algorithms=HmacSHA384,HmacSHA256
producer.linger.ms=7
consumer.max.poll.records=50
"""


def test_a_full_kafka_properties_file_and_connect_environment_overrides() -> None:
    env = {"CONNECT_SESSION_TIMEOUT_MS": "30000", "CONNECT_OFFSET_STORAGE_TOPIC": "env-offsets",
           "CONNECT_REST_ADVERTISED_PORT": "38083", "CONNECT_PRODUCER_LINGER_MS": "9"}
    c = DistributedConfig.from_sources(load_properties(_FULL), env)
    _same_everywhere(c)
    assert c.common.bootstrap_servers == ("b1:9092", "b2:9092") and c.bootstrap_servers == "b1:9092,b2:9092"
    assert c.common.key_converter is JsonConverter and c.common.value_converter is StringConverter
    assert c.converter_props("key.converter") == {"schemas.enable": "false"}
    assert (c.common.task_shutdown_graceful_timeout_ms, c.common.offset_flush_interval_ms,
            c.common.offset_flush_timeout_ms) == (7000, 10000, 6000)
    assert c.common.connector_client_config_override_policy == "Principal"
    assert not (c.common.topic_creation_enable or c.common.topic_tracking_enable
                or c.common.topic_tracking_allow_reset)
    assert (c.common.client_id, c.common.metrics_sample_window_ms, c.common.metrics_num_samples) == ("w1", 5000, 4)
    assert c.rest.listeners == ("http://0.0.0.0:18083", "https://:18443") and c.rest.admin_listeners == ()
    assert (c.rest.request_max_bytes, c.rest.request_read_timeout_ms) == (4096, 1500)
    assert c.advertised_url() == "http://worker-1.example:38083"  # the environment wins
    assert (c.group.group_id, c.group.session_timeout_ms, c.group.heartbeat_interval_ms) == (
        "connect-cluster", 30000, 9000)
    assert (c.group.rebalance_timeout_ms, c.group.worker_sync_timeout_ms, c.group.worker_unsync_backoff_ms) == (
        120000, 4000, 1000)
    assert (c.group.connect_protocol, c.group.scheduled_rebalance_max_delay_ms) == ("compatible", 0)
    assert c.group.exactly_once_source_support == "preparing" and c.transactional_leader_enabled
    assert not c.exactly_once_source_enabled
    iw = c.group.inter_worker
    assert (iw.key_generation_algorithm, iw.key_size, iw.key_ttl_ms) == ("HmacSHA512", 512, 60000)
    assert (iw.signature_algorithm, iw.verification_algorithms) == ("HmacSHA384", ("HmacSHA384", "HmacSHA256"))
    assert c.topics.config == InternalTopic("connect-configs", 1, 1)  # config.storage.partitions is ignored
    assert c.topics.offset == InternalTopic("env-offsets", -1, -1)
    assert c.topics.status == InternalTopic("connect-status", 3, 2)
    assert c.client_id("configs") == "connect-cluster-w1-configs"
    assert c.client_props("producer.") == {"linger.ms": "9"} and c.client_props("consumer.") == {
        "max.poll.records": "50"}


def test_the_values_are_frozen() -> None:
    c = DistributedConfig(BASE)
    for value, field in ((c.group, "session_timeout_ms"), (c.rest, "listeners"), (c.topics.offset, "partitions")):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(value, field, 1)


def test_standalone_settings_from_a_properties_file(tmp_path: Path) -> None:
    path = tmp_path / "worker.properties"
    path.write_text("key.converter=StringConverter\nvalue.converter=StringConverter\n"
                    f"offset.storage.file.filename={tmp_path / 'offsets'}\nlisteners=http://localhost:18084\n"
                    "rest.extension.classes=\n", encoding="utf-8")
    c = StandaloneConfig(load_properties_file(path))
    _same_as_lookups(c.common, c, _COMMON)
    _same_as_lookups(c.rest, c, _REST)
    assert c.standalone.offset_storage_file_filename == str(tmp_path / "offsets")
    assert c.rest.advertised() == ("http", "localhost", 18084) and c.worker_id() == "localhost:18084"


@pytest.mark.parametrize(("key", "value", "message"), [
    ("session.timeout.ms", "soon", "Invalid value soon for configuration session.timeout.ms: Not a number of type INT"),
    ("topic.tracking.enable", "maybe",
     "Invalid value maybe for configuration topic.tracking.enable: Expected value to be either true or false"),
    ("rest.request.max.bytes", "0", "Invalid value 0 for configuration rest.request.max.bytes: Value must be at "
                                    "least 1"),
    ("connector.client.config.override.policy", "Some", "Invalid value Some for configuration "
     "connector.client.config.override.policy: String must be one of: All, None, Principal"),
    ("status.storage.partitions", "0", "Invalid value 0 for configuration status.storage.partitions: Number of "
     "partitions must be positive, or -1 to use the broker's default"),
])
def test_a_bad_value_fails_at_start_naming_the_key(key: str, value: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        DistributedConfig({**BASE, key: value})
    assert str(caught.value) == message and caught.value.name == key


def test_a_missing_required_key_fails_at_start_naming_it() -> None:
    with pytest.raises(ConfigError) as caught:
        StandaloneConfig({"key.converter": "StringConverter", "value.converter": "StringConverter"})
    assert caught.value.name == "offset.storage.file.filename"
