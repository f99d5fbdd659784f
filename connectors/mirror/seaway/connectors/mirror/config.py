"""The three connectors' configuration: Kafka's MirrorMaker 2 keys, defaults and client prefixes.

Every key has Kafka's name and default (``MirrorConnectorConfig``, ``MirrorSourceConfig``,
``MirrorCheckpointConfig``, ``MirrorHeartbeatConfig``). The clients each connector opens are
configured the way Kafka's are::

    source consumer   source.cluster.<client key>, then consumer.*, then source.consumer.*
    target admin      target.cluster.<client key>, then admin.*, then target.admin.*
    ...

where a ``<client key>`` is ``bootstrap.servers``, ``security.protocol``, ``ssl.*`` or
``sasl.*``. The clients are librdkafka's (confluent-kafka), so these take librdkafka's names
(``ssl.ca.location``, ``sasl.username``; ``sasl.mechanism`` and ``sasl.mechanisms`` both work);
Java-only keys such as ``ssl.truststore.location`` are refused by librdkafka when the client
is created, which fails the connector with librdkafka's message.

Class-typed keys accept Kafka's class names (``org.apache.kafka.connect.mirror.
DefaultReplicationPolicy``), the simple names, this package's Python paths, and otherwise what
any Seaway class-typed key accepts (an installed plugin or a ``plugin.allowlist`` entry).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from seaway.connect.api import (
    NO_DEFAULT,
    AbstractConfig,
    ConfigDef,
    ConfigError,
    ConfigType,
    Importance,
    LambdaValidator,
    NonEmptyString,
    Range,
    ValidString,
)
from seaway.connect.api.config.types import load_class
from seaway.connectors.mirror import filters as f
from seaway.connectors.mirror.policy import (
    INTERNAL_TOPIC_SEPARATOR_ENABLED,
    SEPARATOR,
    DefaultReplicationPolicy,
    IdentityReplicationPolicy,
    ReplicationPolicy,
    replication_policy,
)
from seaway.kafka_clients import STREAMING_CONSUMER
from seaway.librdkafka_log import client_logging

__all__ = [
    "BYTE_ARRAY_CONVERTER",
    "CHECKPOINT_CONFIG_DEF",
    "CHECKPOINT_TASK_CONFIG_DEF",
    "HEARTBEAT_CONFIG_DEF",
    "SOURCE_CONFIG_DEF",
    "SOURCE_TASK_CONFIG_DEF",
    "CheckpointConfig",
    "ForwardingAdmin",
    "HeartbeatConfig",
    "MirrorConnectorConfig",
    "SourceConfig",
    "class_loader",
    "decode_topic_partition",
    "encode_topic_partition",
    "interval",
]

BYTE_ARRAY_CONVERTER = "org.apache.kafka.connect.converters.ByteArrayConverter"
"""The converter the connectors' records need (bytes pass through unchanged), as Kafka's MirrorMaker sets."""

ENABLED = "enabled"
SOURCE_CLUSTER_ALIAS = "source.cluster.alias"
TARGET_CLUSTER_ALIAS = "target.cluster.alias"
REPLICATION_POLICY_CLASS = "replication.policy.class"
OFFSET_SYNCS_TOPIC_LOCATION = "offset-syncs.topic.location"
EMIT_OFFSET_SYNCS_ENABLED = "emit.offset-syncs.enabled"
TASK_INDEX = "task.index"
TASK_TOPIC_PARTITIONS = "task.assigned.partitions"
TASK_CONSUMER_GROUPS = "task.assigned.groups"
EMIT_CHECKPOINTS_ENABLED = "emit.checkpoints.enabled"
SOURCE_CLUSTER_PREFIX = "source.cluster."
TARGET_CLUSTER_PREFIX = "target.cluster."


class ForwardingAdmin:
    """Kafka's ``forwarding.admin.class`` default. Seaway's connectors always use confluent-kafka's
    AdminClient, so only the default is accepted."""


def _known_classes() -> dict[str, type]:
    known: dict[str, type] = {}
    for cls, package in ((DefaultReplicationPolicy, "org.apache.kafka.connect.mirror."),
                         (IdentityReplicationPolicy, "org.apache.kafka.connect.mirror."),
                         (f.DefaultTopicFilter, "org.apache.kafka.connect.mirror."),
                         (f.DefaultGroupFilter, "org.apache.kafka.connect.mirror."),
                         (f.DefaultConfigPropertyFilter, "org.apache.kafka.connect.mirror."),
                         (ForwardingAdmin, "org.apache.kafka.clients.admin.")):
        for name in (package + cls.__name__, cls.__name__, f"{cls.__module__}.{cls.__qualname__}",
                     f"{cls.__module__}:{cls.__qualname__}"):
            known[name] = cls
    return known


_KNOWN = _known_classes()


def class_loader(name: str) -> type:
    """Kafka's and this package's class names, else what any Seaway class-typed key may name."""
    return _KNOWN.get(name.strip()) or load_class(name)


def _subclass_of(base: type) -> LambdaValidator:
    def check(name: str, value: Any) -> None:
        if value is not None and not (isinstance(value, type) and issubclass(value, base)):
            raise ConfigError.invalid(name, getattr(value, "__name__", value), f"must be a {base.__name__}")

    return LambdaValidator.with_(check, f"a {base.__name__}")


def _only_default(name: str, value: Any) -> None:
    if value is not ForwardingAdmin:
        raise ConfigError.invalid(name, getattr(value, "__name__", value),
                                  "Seaway's mirror connectors use confluent-kafka's AdminClient; only "
                                  "org.apache.kafka.clients.admin.ForwardingAdmin is supported")


def _patterns(name: str, value: Any) -> None:
    try:
        f.compile_pattern_list(list(value or []))
    except re.error as e:
        raise ConfigError.invalid(name, ",".join(value), f"not a regular expression: {e}") from None


_PATTERNS = LambdaValidator.with_(_patterns, "comma-separated names or regular expressions")
_SECURITY_PROTOCOLS = ValidString.in_("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
L, M, H = Importance.LOW, Importance.MEDIUM, Importance.HIGH
S, B, LONG, INT, SHORT, LIST, CLASS = (ConfigType.STRING, ConfigType.BOOLEAN, ConfigType.LONG, ConfigType.INT,
                                       ConfigType.SHORT, ConfigType.LIST, ConfigType.CLASS)

_BASE = (
    ConfigDef(class_loader=class_loader)
    .define(ENABLED, B, True, None, L, "Whether to replicate source->target.")
    .define(SOURCE_CLUSTER_ALIAS, S, NO_DEFAULT, NonEmptyString(), H, "Alias of source cluster")
    .define(TARGET_CLUSTER_ALIAS, S, "target", NonEmptyString(), H,
            "Alias of target cluster. Used in metrics reporting.")
    .define("admin.timeout.ms", LONG, 60000, Range.at_least(1), L,
            "Timeout for administrative tasks, e.g. detecting new topics.")
    .define(REPLICATION_POLICY_CLASS, CLASS, DefaultReplicationPolicy, _subclass_of(ReplicationPolicy), L,
            "Class which defines the remote topic naming convention.")
    .define(SEPARATOR, S, ".", NonEmptyString(), L, "Separator used in remote topic naming convention.")
    .define(INTERNAL_TOPIC_SEPARATOR_ENABLED, B, True, None, L,
            "Whether to use replication.policy.separator to control the names of topics used for checkpoints "
            "and offset syncs.")
    .define("forwarding.admin.class", CLASS, ForwardingAdmin, LambdaValidator.with_(_only_default, "the default"),
            L, "Class which extends ForwardingAdmin (only the default is supported).")
    .define("metric.reporters", LIST, "org.apache.kafka.common.metrics.JmxReporter", None, L,
            "Metrics reporters (accepted for compatibility; Seaway exposes no JMX).")
    .define("security.protocol", S, "PLAINTEXT", _SECURITY_PROTOCOLS, M,
            "Protocol used to communicate with brokers.")
)
for _key in ("key.converter", "value.converter", "header.converter"):
    # Seaway's runtime uses a connector's declared converter when its config names none, so the
    # mirrored bytes pass through unchanged whatever the worker's default converters are
    _BASE.define(_key, S, BYTE_ARRAY_CONVERTER, None, L,
                 f"The mirror connectors copy bytes unchanged: {BYTE_ARRAY_CONVERTER} (the default here, "
                 "whatever the worker's) is the only converter they accept.")


def _source_keys(d: ConfigDef) -> ConfigDef:
    return (
        d.define(f.TOPICS, LIST, f.TOPICS_DEFAULT, _PATTERNS, H,
                 "Topics to replicate. Supports comma-separated topic names and regexes.")
        .define(f.TOPICS_EXCLUDE, LIST, f.TOPICS_EXCLUDE_DEFAULT, _PATTERNS, H,
                "Excluded topics. Supports comma-separated topic names and regexes. Excludes take precedence "
                "over includes.")
        .define(f.CONFIG_PROPERTIES_EXCLUDE, LIST, f.CONFIG_PROPERTIES_EXCLUDE_DEFAULT, _PATTERNS, H,
                "Topic config properties that should not be replicated. Supports comma-separated property names "
                "and regexes.")
        .define("topic.filter.class", CLASS, f.DefaultTopicFilter, _subclass_of(f.TopicFilter), L,
                "TopicFilter to use. Selects topics to replicate.")
        .define("config.property.filter.class", CLASS, f.DefaultConfigPropertyFilter,
                _subclass_of(f.ConfigPropertyFilter), L,
                "ConfigPropertyFilter to use. Selects topic config  properties to replicate.")
        .define("consumer.poll.timeout.ms", LONG, 1000, Range.at_least(0), L, "Timeout when polling source cluster.")
        .define("refresh.topics.enabled", B, True, None, L,
                "Whether to periodically check for new topics and partitions.")
        .define("refresh.topics.interval.seconds", LONG, 600, None, L, "Frequency of topic refresh.")
        .define("sync.topic.configs.enabled", B, True, None, L,
                "Whether to periodically configure remote topics to match their corresponding upstream topics.")
        .define("sync.topic.configs.interval.seconds", LONG, 600, None, L, "Frequency of topic config sync.")
        .define("sync.topic.acls.enabled", B, True, None, L,
                "Whether to periodically configure remote topic ACLs to match their corresponding upstream "
                "topics (accepted; ACL sync is not implemented yet).")
        .define("sync.topic.acls.interval.seconds", LONG, 600, None, L, "Frequency of topic ACL sync.")
        .define("replication.factor", INT, 2, Range.at_least(-1), L,
                "Replication factor for newly created remote topics.")
        .define("offset-syncs.topic.replication.factor", SHORT, 3, Range.at_least(-1), L,
                "Replication factor for offset-syncs topic.")
        .define("offset.lag.max", LONG, 100, Range.at_least(0), L,
                "How out-of-sync a remote partition can be before it is resynced.")
        .define(OFFSET_SYNCS_TOPIC_LOCATION, S, "source", ValidString.in_("source", "target"), L,
                "The location (source/target) of the offset-syncs topic.")
        .define(EMIT_OFFSET_SYNCS_ENABLED, B, True, None, L,
                "Whether to store the new offset of the replicated records in offset-syncs topic or not.")
        .define("heartbeats.replication.enabled", B, True, None, L,
                "Whether to replicate the heartbeats topics even when the topic filter does not include them.")
    )


def _checkpoint_keys(d: ConfigDef) -> ConfigDef:
    return (
        d.define("consumer.poll.timeout.ms", LONG, 1000, Range.at_least(0), L, "Timeout when polling source cluster.")
        .define(f.GROUPS, LIST, f.GROUPS_DEFAULT, _PATTERNS, H,
                "Consumer groups to replicate. Supports comma-separated group IDs and regexes.")
        .define(f.GROUPS_EXCLUDE, LIST, f.GROUPS_EXCLUDE_DEFAULT, _PATTERNS, H,
                "Exclude groups. Supports comma-separated group IDs and regexes. Excludes take precedence over "
                "includes.")
        .define("group.filter.class", CLASS, f.DefaultGroupFilter, _subclass_of(f.GroupFilter), L,
                "GroupFilter to use. Selects consumer groups to replicate.")
        .define("refresh.groups.enabled", B, True, None, L, "Whether to periodically check for new consumer groups.")
        .define("refresh.groups.interval.seconds", LONG, 600, None, L, "Frequency of group refresh.")
        .define(EMIT_CHECKPOINTS_ENABLED, B, True, None, L,
                "Whether to replicate consumer offsets to target cluster.")
        .define("emit.checkpoints.interval.seconds", LONG, 60, None, L, "Frequency of checkpoints.")
        .define("sync.group.offsets.enabled", B, False, None, L,
                "Whether to periodically write the translated offsets to __consumer_offsets topic in target "
                "cluster, as long as no active consumers in that group are connected to the target cluster")
        .define("sync.group.offsets.interval.seconds", LONG, 60, None, L, "Frequency of consumer group offset sync.")
        .define("checkpoints.topic.replication.factor", SHORT, 3, Range.at_least(-1), L,
                "Replication factor for checkpoints topic.")
        .define(OFFSET_SYNCS_TOPIC_LOCATION, S, "source", ValidString.in_("source", "target"), L,
                "The location (source/target) of the offset-syncs topic.")
        .define("topic.filter.class", CLASS, f.DefaultTopicFilter, _subclass_of(f.TopicFilter), L,
                "TopicFilter to use. Selects topics to replicate.")
    )


def _heartbeat_keys(d: ConfigDef) -> ConfigDef:
    return (
        d.define("emit.heartbeats.enabled", B, True, None, L, "Whether to emit heartbeats to target cluster.")
        .define("emit.heartbeats.interval.seconds", LONG, 1, None, L, "Frequency of heartbeats.")
        .define("heartbeats.topic.replication.factor", SHORT, 3, Range.at_least(-1), L,
                "Replication factor for heartbeats topic.")
    )


SOURCE_CONFIG_DEF = _source_keys(ConfigDef(_BASE))
CHECKPOINT_CONFIG_DEF = _checkpoint_keys(ConfigDef(_BASE))
HEARTBEAT_CONFIG_DEF = _heartbeat_keys(ConfigDef(_BASE))
SOURCE_TASK_CONFIG_DEF = (ConfigDef(SOURCE_CONFIG_DEF)
                          .define(TASK_TOPIC_PARTITIONS, LIST, None, None, L,
                                  "Topic-partitions assigned to this task to replicate.")
                          .define(TASK_INDEX, INT, None, None, L, "The index of the task"))
CHECKPOINT_TASK_CONFIG_DEF = (ConfigDef(CHECKPOINT_CONFIG_DEF)
                              .define(TASK_CONSUMER_GROUPS, LIST, None, None, L,
                                      "Consumer groups assigned to this task to replicate.")
                              .define(TASK_INDEX, INT, None, None, L, "The index of the task"))


def interval(enabled: bool, seconds: int) -> float | None:
    """A ``*.interval.seconds`` setting in seconds, None when its ``*.enabled`` is false or it is negative."""
    if not enabled or seconds < 0:
        return None
    return float(seconds)


def encode_topic_partition(topic: str, partition: int) -> str:
    """Kafka's ``TopicPartition.toString``: ``<topic>-<partition>``."""
    return f"{topic}-{partition}"


def decode_topic_partition(text: str) -> tuple[str, int]:
    """``<topic>-<partition>`` back to its parts (split at the last ``-``, as Kafka does)."""
    topic, sep, partition = text.rpartition("-")
    if not sep or not topic or not partition.isdigit():
        raise ConfigError.invalid(TASK_TOPIC_PARTITIONS, text, "expected <topic>-<partition>")
    return topic, int(partition)


def _is_client_key(key: str) -> bool:
    return key in ("bootstrap.servers", "security.protocol") or key.startswith(("ssl.", "sasl."))


class MirrorConnectorConfig(AbstractConfig):
    """What all three connectors share: cluster aliases, the replication policy, client configs."""

    def __init__(self, definition: ConfigDef, props: Mapping[str, Any]) -> None:
        super().__init__(definition, props)
        try:
            self.policy = replication_policy(self.get_class(REPLICATION_POLICY_CLASS) or DefaultReplicationPolicy,
                                             self.originals())
        except (TypeError, ValueError) as e:
            raise ConfigError.invalid(REPLICATION_POLICY_CLASS, props.get(REPLICATION_POLICY_CLASS), str(e)) from e

    @property
    def enabled(self) -> bool:
        return bool(self.get(ENABLED))

    @property
    def source(self) -> str:
        return str(self.get(SOURCE_CLUSTER_ALIAS))

    @property
    def target(self) -> str:
        return str(self.get(TARGET_CLUSTER_ALIAS))

    @property
    def admin_timeout(self) -> float:
        return int(self.get("admin.timeout.ms")) / 1000

    @property
    def connector_name(self) -> str:
        return str(self.originals().get("name", ""))

    def entity_label(self) -> str:
        label = f"{self.source}->{self.target}|{self.connector_name}"
        index = self.originals().get(TASK_INDEX)
        return label if index is None else f"{label}-{index}"

    def _client(self, cluster_prefix: str, client: str, role: str, extra: Mapping[str, Any]) -> dict[str, Any]:
        props = {k: v for k, v in self.originals_with_prefix(cluster_prefix).items() if _is_client_key(k)}
        props.update(self.originals_with_prefix(client + "."))
        props.update(self.originals_with_prefix(cluster_prefix.split(".")[0] + "." + client + "."))
        props.update(extra)
        user = props.get("client.id")
        props["client.id"] = (f"{user}|" if user else "") + f"{self.entity_label()}|{role}"
        # librdkafka's lines through Python logging, repeats held back (not straight to stderr)
        return {**{k: str(v).strip() for k, v in props.items()}, **client_logging()}

    def source_consumer(self, role: str) -> dict[str, Any]:
        return self._consumer(SOURCE_CLUSTER_PREFIX, role)

    def target_consumer(self, role: str) -> dict[str, Any]:
        return self._consumer(TARGET_CLUSTER_PREFIX, role)

    def _consumer(self, cluster_prefix: str, role: str) -> dict[str, Any]:
        """A consumer of ``cluster_prefix``'s cluster: the user's settings over ``earliest`` and
        :data:`STREAMING_CONSUMER` (a replication task behind its source would otherwise stop for
        1 s each time librdkafka's prefetch queue fills: 1 KiB records went 80k -> 150k records/s)."""
        props = self._client(cluster_prefix, "consumer", role, {"enable.auto.commit": "false"})
        props.setdefault("auto.offset.reset", "earliest")
        for key, value in STREAMING_CONSUMER.items():
            props.setdefault(key, value)
        return props

    def source_producer(self, role: str) -> dict[str, Any]:
        return self._client(SOURCE_CLUSTER_PREFIX, "producer", role, {})

    def target_producer(self, role: str) -> dict[str, Any]:
        return self._client(TARGET_CLUSTER_PREFIX, "producer", role, {})

    def source_admin(self, role: str) -> dict[str, Any]:
        return self._client(SOURCE_CLUSTER_PREFIX, "admin", role, {})

    def target_admin(self, role: str) -> dict[str, Any]:
        return self._client(TARGET_CLUSTER_PREFIX, "admin", role, {})

    @property
    def offset_syncs_on_source(self) -> bool:
        return bool(self.get(OFFSET_SYNCS_TOPIC_LOCATION) == "source")

    def offset_syncs_topic(self) -> str:
        """``mm2-offset-syncs.<the other cluster>.internal`` (KIP-716: the alias is of the cluster it is not on)."""
        return self.policy.offset_syncs_topic(self.target if self.offset_syncs_on_source else self.source)

    def checkpoints_topic(self) -> str:
        return self.policy.checkpoints_topic(self.source)

    def topic_filter(self) -> f.TopicFilter:
        cls = self.get_class("topic.filter.class") or f.DefaultTopicFilter
        topic_filter: f.TopicFilter = f.filter_instance(cls, f.TopicFilter, self.originals())
        return topic_filter


class SourceConfig(MirrorConnectorConfig):
    """``MirrorSourceConnector``'s config (``task=True``: a task's, with its assigned partitions)."""

    def __init__(self, props: Mapping[str, Any], *, task: bool = False) -> None:
        super().__init__(SOURCE_TASK_CONFIG_DEF if task else SOURCE_CONFIG_DEF, props)

    def offset_syncs_producer(self) -> dict[str, Any]:
        return (self.source_producer("offset-syncs-source-producer") if self.offset_syncs_on_source
                else self.target_producer("offset-syncs-target-producer"))

    def offset_syncs_admin(self) -> dict[str, Any]:
        return (self.source_admin("offset-syncs-source-admin") if self.offset_syncs_on_source
                else self.target_admin("offset-syncs-target-admin"))

    def config_property_filter(self) -> f.ConfigPropertyFilter:
        cls = self.get_class("config.property.filter.class") or f.DefaultConfigPropertyFilter
        prop_filter: f.ConfigPropertyFilter = f.filter_instance(cls, f.ConfigPropertyFilter, self.originals())
        return prop_filter

    def task_topic_partitions(self) -> list[tuple[str, int]]:
        return [decode_topic_partition(t) for t in self.get_list(TASK_TOPIC_PARTITIONS) or [] if t]

    def task_config(self, partitions: list[tuple[str, int]], index: int) -> dict[str, str]:
        props = self.originals_strings()
        props[TASK_TOPIC_PARTITIONS] = ",".join(encode_topic_partition(t, p) for t, p in partitions)
        props[TASK_INDEX] = str(index)
        return props


class CheckpointConfig(MirrorConnectorConfig):
    """``MirrorCheckpointConnector``'s config (``task=True``: a task's, with its assigned groups)."""

    def __init__(self, props: Mapping[str, Any], *, task: bool = False) -> None:
        super().__init__(CHECKPOINT_TASK_CONFIG_DEF if task else CHECKPOINT_CONFIG_DEF, props)

    def offset_syncs_consumer(self) -> dict[str, Any]:
        return (self.source_consumer("offset-syncs-source-consumer") if self.offset_syncs_on_source
                else self.target_consumer("offset-syncs-target-consumer"))

    def group_filter(self) -> f.GroupFilter:
        cls = self.get_class("group.filter.class") or f.DefaultGroupFilter
        group_filter: f.GroupFilter = f.filter_instance(cls, f.GroupFilter, self.originals())
        return group_filter

    def task_groups(self) -> list[str]:
        return [g for g in self.get_list(TASK_CONSUMER_GROUPS) or [] if g]

    def task_config(self, groups: list[str], index: int) -> dict[str, str]:
        props = self.originals_strings()
        props[TASK_CONSUMER_GROUPS] = ",".join(groups)
        props[TASK_INDEX] = str(index)
        return props


class HeartbeatConfig(MirrorConnectorConfig):
    """``MirrorHeartbeatConnector``'s config."""

    def __init__(self, props: Mapping[str, Any]) -> None:
        super().__init__(HEARTBEAT_CONFIG_DEF, props)
