"""The admin calls MirrorMaker 2 makes on a cluster, through confluent-kafka's AdminClient.

Every call waits at most ``admin.timeout.ms`` and turns librdkafka's errors into
:class:`~seaway.connect.api.RetriableError` (the scheduler logs it and tries again at the next
interval) or :class:`~seaway.connect.api.ConnectError`. Topic creation treats "already exists"
as success, as Kafka's ``MirrorUtils.createCompactedTopic`` does.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from confluent_kafka import ConsumerGroupState, ConsumerGroupTopicPartitions, KafkaException, TopicPartition
from confluent_kafka.admin import (  # type: ignore[attr-defined]
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ConfigSource,
    NewPartitions,
    NewTopic,
    ResourceType,
)
from seaway.connect.api import ConnectError, RetriableError

__all__ = ["ClusterAdmin", "TopicConfigEntry"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class TopicConfigEntry:
    """One topic config property as DescribeConfigs reports it."""

    name: str
    value: str | None
    is_default: bool
    is_read_only: bool
    is_sensitive: bool
    is_static_broker: bool


def _error(what: str, e: BaseException) -> ConnectError:
    error = e.args[0] if isinstance(e, KafkaException) and e.args else None
    retriable = bool(getattr(error, "retriable", lambda: False)()) or "TIMED_OUT" in str(e)
    message = f"Failed to {what}: {e}"
    return RetriableError(message) if retriable else ConnectError(message)


def _code(e: BaseException) -> str:
    error = e.args[0] if isinstance(e, KafkaException) and e.args else None
    name = getattr(error, "name", None)
    return str(name()) if callable(name) else str(e)


class ClusterAdmin:
    """One cluster's AdminClient; ``alias`` names the cluster in errors and logs."""

    def __init__(self, config: Mapping[str, Any], alias: str, timeout: float) -> None:
        self.alias = alias
        self.timeout = timeout
        self._admin = AdminClient(dict(config))

    def _wait(self, future: Future[Any], what: str) -> Any:
        self._admin.poll(0)  # hands librdkafka's queued log lines to Python logging (seaway.librdkafka_log)
        try:
            return future.result(self.timeout)
        except TimeoutError as e:
            raise RetriableError(f"Timed out after {self.timeout}s trying to {what} on {self.alias}") from e
        except KafkaException as e:
            raise _error(f"{what} on {self.alias}", e) from e

    def topic_partitions(self) -> dict[str, int]:
        """Every topic's partition count."""
        try:
            metadata = self._admin.list_topics(timeout=self.timeout)
        except KafkaException as e:
            raise _error(f"list topics on {self.alias}", e) from e
        return {name: len(t.partitions) for name, t in metadata.topics.items() if t.error is None}

    def create_compacted_topic(self, topic: str, replication_factor: int) -> None:
        """A single-partition compacted topic (MM2's internal topics); no error if it exists."""
        self.create_topics({topic: (1, replication_factor, {"cleanup.policy": "compact"})})

    def create_topics(self, topics: Mapping[str, tuple[int, int, Mapping[str, str]]]) -> list[str]:
        """``{name: (partitions, replication factor, configs)}``; the names created (existing ones skipped)."""
        if not topics:
            return []
        futures = self._admin.create_topics([NewTopic(name, partitions, replication, config=dict(configs))
                                             for name, (partitions, replication, configs) in topics.items()],
                                            request_timeout=self.timeout)
        created = []
        for name, future in futures.items():
            try:
                self._wait(future, f"create topic {name}")
                created.append(name)
                log.info("Created topic '%s' on %s", name, self.alias)
            except ConnectError as e:
                if "TOPIC_ALREADY_EXISTS" in str(e):
                    continue
                log.warning("Could not create topic %s on %s: %s", name, self.alias, e)
        return created

    def increase_partitions(self, counts: Mapping[str, int]) -> None:
        if not counts:
            return
        futures = self._admin.create_partitions([NewPartitions(t, n) for t, n in counts.items()],
                                                request_timeout=self.timeout)
        for topic, future in futures.items():
            try:
                self._wait(future, f"add partitions to {topic}")
                log.info("Increased size of %s on %s to %d partitions", topic, self.alias, counts[topic])
            except ConnectError as e:
                if "INVALID_PARTITIONS" not in str(e):  # already that many: normal
                    log.warning("Could not add partitions to %s on %s: %s", topic, self.alias, e)

    def topic_configs(self, topics: Iterable[str]) -> dict[str, list[TopicConfigEntry]]:
        resources = [ConfigResource(ResourceType.TOPIC, t) for t in topics]
        if not resources:
            return {}
        futures = self._admin.describe_configs(resources, request_timeout=self.timeout)
        out: dict[str, list[TopicConfigEntry]] = {}
        for resource, future in futures.items():
            try:
                entries = self._wait(future, f"describe configs of {resource.name}")
            except ConnectError as e:
                log.warning("%s", e)
                continue
            out[resource.name] = [
                TopicConfigEntry(e.name, e.value, bool(e.is_default), bool(e.is_read_only), bool(e.is_sensitive),
                                 e.source == ConfigSource.STATIC_BROKER_CONFIG.value)
                for e in entries.values()]
        return out

    def alter_topic_configs(self, changes: Mapping[str, Mapping[str, str | None]]) -> None:
        """Incremental alter: a value sets the property, None deletes it (back to the cluster default)."""
        resources = []
        for topic, props in changes.items():
            entries = [ConfigEntry(name, value, incremental_operation=AlterConfigOpType.DELETE if value is None
                                   else AlterConfigOpType.SET) for name, value in props.items()]
            if entries:
                resources.append(ConfigResource(ResourceType.TOPIC, topic, incremental_configs=entries))
        if not resources:
            return
        futures = self._admin.incremental_alter_configs(resources, request_timeout=self.timeout)
        for resource, future in futures.items():
            try:
                self._wait(future, f"alter configs of {resource.name}")
            except ConnectError as e:
                log.warning("Could not alter configuration of topic %s on %s: %s", resource.name, self.alias, e)

    def consumer_groups(self) -> list[str]:
        result = self._wait(self._admin.list_consumer_groups(request_timeout=self.timeout), "list consumer groups")
        return [g.group_id for g in result.valid]

    def group_offsets(self, group: str) -> dict[tuple[str, int], tuple[int, str]]:
        """A group's committed offsets: ``{(topic, partition): (offset, metadata)}``."""
        futures = self._admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)],
                                                          request_timeout=self.timeout)
        result = self._wait(futures[group], f"list offsets of consumer group {group}")
        return {(tp.topic, tp.partition): (tp.offset, tp.metadata or "") for tp in result.topic_partitions or []
                if tp.offset >= 0 and tp.error is None}

    def idle_groups(self, groups: Iterable[str]) -> set[str]:
        """The groups among ``groups`` with no active member here (EMPTY, or unknown to the cluster)."""
        names = list(groups)
        if not names:
            return set()
        futures = self._admin.describe_consumer_groups(names, request_timeout=self.timeout)
        idle = set()
        for name, future in futures.items():
            try:
                description = self._wait(future, f"describe consumer group {name}")
            except ConnectError as e:
                log.debug("%s", e)
                continue
            if description.state in (ConsumerGroupState.EMPTY, ConsumerGroupState.DEAD):
                idle.add(name)
        return idle

    def alter_group_offsets(self, group: str, offsets: Mapping[tuple[str, int], tuple[int, str]]) -> bool:
        """Commit ``offsets`` for ``group``; False (logged) if the cluster refused, e.g. the group became active."""
        partitions = [TopicPartition(t, p, o, metadata=m) for (t, p), (o, m) in offsets.items()]
        futures = self._admin.alter_consumer_group_offsets([ConsumerGroupTopicPartitions(group, partitions)],
                                                           request_timeout=self.timeout)
        try:
            result = self._wait(futures[group], f"alter offsets of consumer group {group}")
        except ConnectError as e:
            if "UNKNOWN_MEMBER_ID" in str(e) or _code(e) == "UNKNOWN_MEMBER_ID":
                log.warning("Unable to sync offsets for consumer group %s: consumers are using it on %s",
                            group, self.alias)
            else:
                log.error("Unable to sync offsets for consumer group %s on %s: %s", group, self.alias, e)
            return False
        failed = [tp for tp in result.topic_partitions or [] if tp.error is not None]
        for tp in failed:
            log.warning("Offset of %s for %s-%d not synced on %s: %s", group, tp.topic, tp.partition, self.alias,
                        tp.error)
        return not failed
