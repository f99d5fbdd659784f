"""The client side of MirrorMaker 2 (Kafka's ``MirrorClient`` and ``RemoteClusterUtils``).

For applications on a cluster that mirrors others: which clusters reach it, how many hops
away, and, for a failover, where a consumer group should resume here::

    from seaway.connectors.mirror import translate_offsets, to_topic_partitions

    props = {"bootstrap.servers": "backup:9092"}         # the cluster the group moves to
    offsets = translate_offsets(props, "primary", "orders-app", timeout=10.0)
    consumer.assign(to_topic_partitions(offsets))         # or consumer.commit(offsets=...)

``props`` are Kafka's ``MirrorClientConfig``: ``bootstrap.servers`` and security settings,
``replication.policy.class`` / ``replication.policy.separator`` when not the defaults, and
``admin.*`` / ``consumer.*`` for the two clients used (librdkafka names). Offsets come from the
checkpoints the checkpoint connector wrote; topics are named as on this cluster.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError
from confluent_kafka import TopicPartition as KafkaTopicPartition
from confluent_kafka.admin import AdminClient
from seaway.connect.api import ConfigDef, ConfigType, OffsetAndMetadata, TopicPartition
from seaway.connectors.mirror.config import REPLICATION_POLICY_CLASS, class_loader
from seaway.connectors.mirror.formats import Checkpoint, FormatError
from seaway.connectors.mirror.policy import (
    INTERNAL_TOPIC_SEPARATOR_ENABLED,
    SEPARATOR,
    DefaultReplicationPolicy,
    ReplicationPolicy,
    replication_policy,
)
from seaway.kafka_clients import STREAMING_CONSUMER

__all__ = [
    "MirrorClient",
    "checkpoint_topics",
    "heartbeat_topics",
    "replication_hops",
    "to_topic_partitions",
    "translate_offsets",
    "upstream_clusters",
]

_CLIENT_KEYS = ("bootstrap.servers", "security.protocol")
_DEF = (ConfigDef(class_loader=class_loader)
        .define(REPLICATION_POLICY_CLASS, ConfigType.CLASS, DefaultReplicationPolicy)
        .define(SEPARATOR, ConfigType.STRING, ".")
        .define(INTERNAL_TOPIC_SEPARATOR_ENABLED, ConfigType.BOOLEAN, True))


def _client_config(props: Mapping[str, Any], prefix: str) -> dict[str, Any]:
    """Kafka's ``valuesWithPrefixOverride``: the client keys, overridden by ``<prefix>*``."""
    out = {k: str(v) for k, v in props.items() if k in _CLIENT_KEYS or k.startswith(("ssl.", "sasl."))}
    out.update({k[len(prefix):]: str(v) for k, v in props.items() if k.startswith(prefix)})
    return out


class MirrorClient:
    """Reads a cluster's MirrorMaker 2 topics: heartbeats, checkpoints, remote topics."""

    def __init__(self, props: Mapping[str, Any]) -> None:
        self.props = dict(props)
        cls = _DEF.parse(self.props)[REPLICATION_POLICY_CLASS]
        self.policy: ReplicationPolicy = replication_policy(cls, self.props)
        self._admin = AdminClient(_client_config(self.props, "admin."))

    def list_topics(self, timeout: float = 30.0) -> set[str]:
        return set(self._admin.list_topics(timeout=timeout).topics)

    def heartbeat_topics(self) -> set[str]:
        """Heartbeats topics here (``heartbeats``, ``A.heartbeats``, ``B.A.heartbeats``...)."""
        return {t for t in self.list_topics() if self.policy.is_heartbeats_topic(t)}

    def checkpoint_topics(self) -> set[str]:
        return {t for t in self.list_topics() if self.policy.is_checkpoints_topic(t)}

    def upstream_clusters(self) -> set[str]:
        """Every cluster whose heartbeats reach this one, however many hops away."""
        return {s for t in self.heartbeat_topics() for s in self._all_sources(t)}

    def replication_hops(self, upstream_cluster_alias: str) -> int:
        """Fewest hops from ``upstream_cluster_alias`` to here (A->B->C: 2 from A to C); -1 if unreachable."""
        hops = [self._count_hops(t, upstream_cluster_alias) for t in self.heartbeat_topics()]
        reachable = [h for h in hops if h != -1]
        return min(reachable) if reachable else -1

    def remote_topics(self, source: str | None = None) -> set[str]:
        """Topics mirrored here (from ``source`` directly, if given); internal topics excluded."""
        return {t for t in self.list_topics()
                if not self.policy.is_internal_topic(t) and self.policy.topic_source(t) is not None
                and (source is None or self.policy.topic_source(t) == source)}

    def remote_consumer_offsets(self, group: str, remote_cluster_alias: str,
                                timeout: float) -> dict[TopicPartition, OffsetAndMetadata]:
        """The last checkpoint of each partition ``group`` consumed on ``remote_cluster_alias``, as offsets here."""
        deadline = time.monotonic() + timeout
        topic = self.policy.checkpoints_topic(remote_cluster_alias)
        config = _client_config(self.props, "consumer.")
        config.setdefault("group.id", f"mm2-client-{group}")
        for key, value in STREAMING_CONSUMER.items():
            config.setdefault(key, value)
        config["enable.auto.commit"] = "false"
        offsets: dict[TopicPartition, OffsetAndMetadata] = {}
        consumer = Consumer(config)
        try:
            low, high = consumer.get_watermark_offsets(KafkaTopicPartition(topic, 0),
                                                       timeout=max(0.1, deadline - time.monotonic()))
            consumer.assign([KafkaTopicPartition(topic, 0, OFFSET_BEGINNING)])
            position = low
            while position < high and time.monotonic() < deadline:
                for message in consumer.consume(10_000, min(0.2, max(0.0, deadline - time.monotonic()))):
                    error = message.error()
                    if error is not None:
                        if error.code() != KafkaError._PARTITION_EOF:
                            raise RuntimeError(f"reading {topic}: {error}")
                        continue
                    position = max(position, (message.offset() or 0) + 1)
                    try:
                        checkpoint = Checkpoint.decode(message.key(), message.value())
                    except FormatError:
                        continue  # as Kafka's: not a checkpoint, skipped
                    if checkpoint.group == group:
                        offsets[TopicPartition(checkpoint.topic, checkpoint.partition)] = OffsetAndMetadata(
                            checkpoint.downstream_offset, checkpoint.metadata)
        finally:
            consumer.close()
        return offsets

    def _count_hops(self, topic: str, source_alias: str) -> int:
        visited: set[str] = set()
        hops = 0
        current: str | None = topic
        while current is not None:
            hops += 1
            source = self.policy.topic_source(current)
            if source is None or source in visited:  # the second: a policy that cannot prevent cycles
                return -1
            if source == source_alias:
                return hops
            visited.add(source)
            current = self.policy.upstream_topic(current)
        return -1

    def _all_sources(self, topic: str) -> set[str]:
        sources: set[str] = set()
        current: str | None = topic
        source = self.policy.topic_source(topic)
        while source is not None and source not in sources and current is not None:
            sources.add(source)
            current = self.policy.upstream_topic(current)
            source = None if current is None else self.policy.topic_source(current)
        return sources


def replication_hops(props: Mapping[str, Any], upstream_cluster_alias: str) -> int:
    return MirrorClient(props).replication_hops(upstream_cluster_alias)


def heartbeat_topics(props: Mapping[str, Any]) -> set[str]:
    return MirrorClient(props).heartbeat_topics()


def checkpoint_topics(props: Mapping[str, Any]) -> set[str]:
    return MirrorClient(props).checkpoint_topics()


def upstream_clusters(props: Mapping[str, Any]) -> set[str]:
    return MirrorClient(props).upstream_clusters()


def translate_offsets(props: Mapping[str, Any], remote_cluster_alias: str, group: str,
                      timeout: float = 30.0) -> dict[TopicPartition, OffsetAndMetadata]:
    """Where ``group``, which consumed on ``remote_cluster_alias``, resumes on the cluster of ``props``."""
    return MirrorClient(props).remote_consumer_offsets(group, remote_cluster_alias, timeout)


def to_topic_partitions(offsets: Mapping[TopicPartition, OffsetAndMetadata]) -> list[KafkaTopicPartition]:
    """Translated offsets as confluent-kafka ``TopicPartition`` s, for ``Consumer.assign`` or ``commit``."""
    return [KafkaTopicPartition(tp.topic, tp.partition, o.offset, metadata=o.metadata) if o.metadata
            else KafkaTopicPartition(tp.topic, tp.partition, o.offset) for tp, o in sorted(offsets.items())]
