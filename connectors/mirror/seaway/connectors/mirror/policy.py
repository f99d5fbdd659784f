"""Replication policies: how a topic is named on the cluster it is mirrored to (Kafka's ``ReplicationPolicy``).

The policy is the only thing that knows a remote topic's origin, so it is what stops records
from looping in an active/active pair: :class:`DefaultReplicationPolicy` names ``orders``
mirrored from ``A`` as ``A.orders``, and the mirror never copies a topic back to the cluster
its name says it came from. :class:`IdentityReplicationPolicy` (KIP-545) keeps names as they
are, so it cannot see cycles: use it for one-way flows only.

Kafka's class names are accepted in ``replication.policy.class``
(``org.apache.kafka.connect.mirror.DefaultReplicationPolicy`` and
``...IdentityReplicationPolicy``), as are the simple names.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = [
    "INTERNAL_TOPIC_SEPARATOR_ENABLED",
    "SEPARATOR",
    "DefaultReplicationPolicy",
    "IdentityReplicationPolicy",
    "ReplicationPolicy",
    "replication_policy",
]

SEPARATOR = "replication.policy.separator"
INTERNAL_TOPIC_SEPARATOR_ENABLED = "replication.policy.internal.topic.separator.enabled"
_HEARTBEATS = "heartbeats"
_MAX_HOPS = 1000
"""Longest chain of upstream names followed; a topic name is at most 249 characters anyway."""


class ReplicationPolicy:
    """Names remote topics; the defaults of the non-abstract methods are Kafka's interface defaults."""

    def configure(self, props: Mapping[str, Any]) -> None:
        """Read the policy's settings from a connector or client config (unknown keys ignored)."""

    def format_remote_topic(self, source_cluster_alias: str, topic: str) -> str:
        raise NotImplementedError

    def topic_source(self, topic: str) -> str | None:
        """The alias of the cluster ``topic`` was mirrored from, or None for a local topic."""
        raise NotImplementedError

    def upstream_topic(self, topic: str) -> str | None:
        """The topic's name one hop upstream, or None for a local topic."""
        raise NotImplementedError

    def original_topic(self, topic: str) -> str:
        """The topic's name where it was first written, however many hops away."""
        for _ in range(_MAX_HOPS):
            upstream = self.upstream_topic(topic)
            if upstream is None or upstream == topic:
                return topic
            topic = upstream
        return topic

    def heartbeats_topic(self) -> str:
        return _HEARTBEATS

    def offset_syncs_topic(self, cluster_alias: str) -> str:
        return f"mm2-offset-syncs.{cluster_alias}.internal"

    def checkpoints_topic(self, cluster_alias: str) -> str:
        return f"{cluster_alias}.checkpoints.internal"

    def is_heartbeats_topic(self, topic: str) -> bool:
        return self.heartbeats_topic() == self.original_topic(topic)

    def is_checkpoints_topic(self, topic: str) -> bool:
        return topic.endswith(".checkpoints.internal")

    def is_mm2_internal_topic(self, topic: str) -> bool:
        return topic.endswith(".internal")

    def is_internal_topic(self, topic: str) -> bool:
        """Kafka's internal topics (``__*``, ``.*``), Connect's (``*-internal``, ``*.internal``) and MM2's."""
        return (self.is_mm2_internal_topic(topic) or topic.startswith(("__", "."))
                or topic.endswith(("-internal", ".internal")))


def _java_split(text: str, separator: str) -> list[str]:
    """``Pattern.compile(Pattern.quote(separator)).split(text)``: trailing empty strings dropped."""
    parts = text.split(separator)
    while len(parts) > 1 and parts[-1] == "":
        parts.pop()
    if parts == [""] and text:
        return []  # the text is separators only: Java drops every (empty) part
    return parts


class DefaultReplicationPolicy(ReplicationPolicy):
    """``<source alias><separator><topic>``; the separator defaults to ``.``."""

    def __init__(self) -> None:
        self.separator = "."
        self.internal_separator_enabled = True

    def configure(self, props: Mapping[str, Any]) -> None:
        if props.get(SEPARATOR) is not None:
            self.separator = str(props[SEPARATOR])
            if not self.separator:
                raise ValueError(f"{SEPARATOR} must not be empty")
            enabled = props.get(INTERNAL_TOPIC_SEPARATOR_ENABLED)
            if enabled is not None:
                self.internal_separator_enabled = str(enabled).strip().lower() == "true"  # parseBoolean

    def format_remote_topic(self, source_cluster_alias: str, topic: str) -> str:
        return source_cluster_alias + self.separator + topic

    def topic_source(self, topic: str) -> str | None:
        parts = _java_split(topic, self.separator)
        return parts[0] if len(parts) >= 2 else None

    def upstream_topic(self, topic: str) -> str | None:
        source = self.topic_source(topic)
        return None if source is None else topic[len(source) + len(self.separator):]

    def _internal_separator(self) -> str:
        return self.separator if self.internal_separator_enabled else "."

    def offset_syncs_topic(self, cluster_alias: str) -> str:
        sep = self._internal_separator()
        return f"mm2-offset-syncs{sep}{cluster_alias}{sep}internal"

    def checkpoints_topic(self, cluster_alias: str) -> str:
        sep = self._internal_separator()
        return f"{cluster_alias}{sep}checkpoints{sep}internal"

    def is_checkpoints_topic(self, topic: str) -> bool:
        sep = self._internal_separator()
        return topic.endswith(f"{sep}checkpoints{sep}internal")

    def is_mm2_internal_topic(self, topic: str) -> bool:
        return topic.endswith(self._internal_separator() + "internal")


class IdentityReplicationPolicy(DefaultReplicationPolicy):
    """Topic names unchanged (except ``heartbeats``, still prefixed); the source is ``source.cluster.alias``."""

    def __init__(self) -> None:
        super().__init__()
        self.source_cluster_alias: str | None = None

    def configure(self, props: Mapping[str, Any]) -> None:
        super().configure(props)
        if props.get("source.cluster.alias") is not None:
            self.source_cluster_alias = str(props["source.cluster.alias"])

    def _looks_like_heartbeat(self, topic: str) -> bool:
        return topic.endswith(self.heartbeats_topic())

    def format_remote_topic(self, source_cluster_alias: str, topic: str) -> str:
        if self._looks_like_heartbeat(topic):
            return super().format_remote_topic(source_cluster_alias, topic)
        return topic

    def topic_source(self, topic: str) -> str | None:
        if self._looks_like_heartbeat(topic):
            return super().topic_source(topic)
        return self.source_cluster_alias

    def upstream_topic(self, topic: str) -> str | None:
        if self._looks_like_heartbeat(topic):
            return super().upstream_topic(topic)
        return topic


def replication_policy(cls: type, props: Mapping[str, Any]) -> ReplicationPolicy:
    """An instance of the configured policy class, configured with the whole connector/client config."""
    policy = cls()
    if not isinstance(policy, ReplicationPolicy):
        raise TypeError(f"{cls.__name__} is not a ReplicationPolicy")
    policy.configure(props)
    return policy
