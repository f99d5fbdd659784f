"""MirrorSourceConnector: which topic-partitions of the source are mirrored, and the remote topics for them.

On start (Kafka's order): create the offset-syncs topic, load the source's matching
topic-partitions and the target's remote ones, create what is missing on the target. Then,
on the connector's scheduler thread:

* every ``refresh.topics.interval.seconds``: find new topics and partitions on the source (and
  remote topics that went missing on the target), create them, and ask the runtime for new
  task configs when the set of source partitions changed;
* every ``sync.topic.configs.interval.seconds``: copy the source topics' configs to their
  remote topics (incremental alter; properties left at the source's default are reset to the
  target's default unless ``use.defaults.from=source``; ``config.properties.exclude`` kept out).

A topic is mirrored when the topic filter takes it (or it is a heartbeats topic and
``heartbeats.replication.enabled``), it is not internal, and the replication policy does not
say it came from the target: that last check is what keeps an active/active pair from looping.
Topic ACLs are not synced yet (``sync.topic.acls.*`` are accepted).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from seaway.connect.api import Config, ConfigDef, ConfigValue, ExactlyOnceSupport, SourceConnector, Task
from seaway.connectors.mirror._version import VERSION
from seaway.connectors.mirror.admin import ClusterAdmin, TopicConfigEntry
from seaway.connectors.mirror.config import (
    BYTE_ARRAY_CONVERTER,
    EMIT_OFFSET_SYNCS_ENABLED,
    SOURCE_CONFIG_DEF,
    SourceConfig,
    interval,
)
from seaway.connectors.mirror.filters import ConfigPropertyFilter, TopicFilter
from seaway.connectors.mirror.offsets import validate_offsets
from seaway.connectors.mirror.policy import ReplicationPolicy
from seaway.connectors.mirror.scheduler import Scheduler

__all__ = ["MirrorSourceConnector", "is_cycle", "should_replicate_topic", "validate_byte_array_converters"]

log = logging.getLogger(__name__)

TopicPartitions = list[tuple[str, int]]


def is_cycle(policy: ReplicationPolicy, topic: str, target: str) -> bool:
    """Whether ``topic`` came (maybe several hops back) from ``target``: mirroring it there would loop."""
    seen = 0
    while seen < 1000:
        source = policy.topic_source(topic)
        if source is None:
            return False
        if source == target:
            return True
        upstream = policy.upstream_topic(topic)
        if upstream is None or upstream == topic:  # IdentityReplicationPolicy cannot tell
            return False
        topic, seen = upstream, seen + 1
    return False


def should_replicate_topic(topic: str, topic_filter: TopicFilter, policy: ReplicationPolicy, target: str,
                           heartbeats: bool) -> bool:
    return ((topic_filter.should_replicate_topic(topic) or (heartbeats and policy.is_heartbeats_topic(topic)))
            and not policy.is_internal_topic(topic) and not is_cycle(policy, topic, target))


def validate_byte_array_converters(props: Mapping[str, str], config: Config) -> None:
    """A converter other than ByteArrayConverter would re-encode the mirrored bytes: say so on its key.

    The framework validates these keys itself, so their entries stay in the answer only when
    they carry this error (else the REST validate answer would list each key twice).
    """
    keys = ("key.converter", "value.converter", "header.converter")
    config.config_values[:] = [v for v in config.config_values if v.name not in keys or v.errors]
    for key in keys:
        name = str(props.get(key) or "").strip()
        if name and name.rsplit(".", 1)[-1].rsplit(":", 1)[-1] != "ByteArrayConverter":
            value = next((v for v in config.config_values if v.name == key), None)
            if value is None:
                value = ConfigValue(key, name)
                config.config_values.append(value)
            value.add_error_message(f"The mirror connectors copy bytes unchanged and need {BYTE_ARRAY_CONVERTER} "
                                    f"(or no {key}: they then use it whatever the worker's default is)")


class MirrorSourceConnector(SourceConnector):
    """Replicates topics (data and configs) from the source cluster to the target cluster."""

    def __init__(self) -> None:
        self._config: SourceConfig | None = None
        self._scheduler: Scheduler | None = None
        self._source_admin: ClusterAdmin | None = None
        self._target_admin: ClusterAdmin | None = None
        self._topic_filter: TopicFilter | None = None
        self._property_filter: ConfigPropertyFilter | None = None
        self._lock = threading.Lock()
        self._known_source: TopicPartitions = []
        self._known_target: TopicPartitions = []

    def version(self) -> str:
        return VERSION

    def config(self) -> ConfigDef:
        return SOURCE_CONFIG_DEF

    def task_class(self) -> type[Task]:
        from seaway.connectors.mirror.source_task import MirrorSourceTask

        return MirrorSourceTask

    def validate(self, props: Mapping[str, str]) -> Config:
        config = super().validate(props)
        validate_byte_array_converters(props, config)
        offset_sync_keys = [k for k in props if k.startswith(("offset-syncs-", "offset-syncs.topic."))]
        if str(props.get(EMIT_OFFSET_SYNCS_ENABLED, "")).strip().lower() == "false" and offset_sync_keys:
            for value in config.config_values:
                if value.name == EMIT_OFFSET_SYNCS_ENABLED:
                    value.add_error_message("MirrorSourceConnector can't setup offset-syncs feature while "
                                            f"{EMIT_OFFSET_SYNCS_ENABLED} set to false")
        return config

    def exactly_once_support(self, connector_config: Mapping[str, str]) -> ExactlyOnceSupport | None:
        """Supported when the replication consumer reads the source with ``read_committed``, as Kafka's.

        The task's source offsets travel with its records (SourceRecord offsets), so an
        exactly-once worker commits both in one transaction; but a ``read_uncommitted``
        consumer could copy records that the source cluster later aborts, so only a
        ``read_committed`` source is exactly-once end to end (Kafka's MirrorSourceConnector).
        """
        try:
            consumer = SourceConfig(connector_config).source_consumer("replication-consumer")
        except Exception:  # an invalid config is reported by validate(), not here
            return ExactlyOnceSupport.UNSUPPORTED
        level = str(consumer.get("isolation.level", "read_uncommitted")).strip().lower()
        return ExactlyOnceSupport.SUPPORTED if level == "read_committed" else ExactlyOnceSupport.UNSUPPORTED

    def alter_offsets(self, connector_config: Mapping[str, str],
                      offsets: Sequence[tuple[Mapping[str, Any], Mapping[str, Any] | None]]) -> bool:
        validate_offsets(offsets, ("cluster", "topic"), only_zero=False)
        return True

    # -- lifecycle ------------------------------------------------------------------------------
    def start(self, props: Mapping[str, str]) -> None:
        config = SourceConfig(props)
        self._config = config
        if not config.enabled:
            return
        self._topic_filter = config.topic_filter()
        self._property_filter = config.config_property_filter()
        self._source_admin = ClusterAdmin(config.source_admin("replication-source-admin"), config.source,
                                          config.admin_timeout)
        self._target_admin = ClusterAdmin(config.target_admin("replication-target-admin"), config.target,
                                          config.admin_timeout)
        scheduler = self._scheduler = Scheduler(config.entity_label())
        scheduler.execute(self._create_offset_syncs_topic, "creating upstream offset-syncs topic")
        scheduler.execute(self._load_topic_partitions, "loading initial set of topic-partitions")
        scheduler.execute(self._create_topic_partitions, "creating downstream topic-partitions")
        scheduler.schedule(self._sync_topic_configs,
                           interval(bool(config.get("sync.topic.configs.enabled")),
                                    int(config.get("sync.topic.configs.interval.seconds"))), "syncing topic configs")
        scheduler.schedule(self._refresh_topic_partitions,
                           interval(bool(config.get("refresh.topics.enabled")),
                                    int(config.get("refresh.topics.interval.seconds"))),
                           "refreshing topics", delayed=True)
        log.info("Started %s with %d topic-partitions.", config.connector_name, len(self._known_source))

    def stop(self) -> None:
        if self._scheduler is not None:
            self._scheduler.close()

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        """Source topic-partitions dealt round-robin over ``min(tasks.max, partitions)`` tasks."""
        config = self._config
        with self._lock:
            known = list(self._known_source)
        if config is None or not config.enabled or not known:
            return []
        count = min(max_tasks, len(known))
        assigned: list[TopicPartitions] = [[] for _ in range(count)]
        for i, tp in enumerate(known):
            assigned[i % count].append(tp)
        return [config.task_config(assigned[i], i) for i in range(count)]

    # -- scheduled jobs -------------------------------------------------------------------------
    def _create_offset_syncs_topic(self) -> None:
        config = self._config
        assert config is not None
        if not config.get(EMIT_OFFSET_SYNCS_ENABLED):
            return
        admin = ClusterAdmin(config.offset_syncs_admin(), config.source if config.offset_syncs_on_source
                             else config.target, config.admin_timeout)
        admin.create_compacted_topic(config.offset_syncs_topic(),
                                     int(config.get("offset-syncs.topic.replication.factor")))

    def _should_replicate(self, topic: str) -> bool:
        config = self._config
        assert config is not None and self._topic_filter is not None
        return should_replicate_topic(topic, self._topic_filter, config.policy, config.target,
                                      bool(config.get("heartbeats.replication.enabled")))

    def _find_source(self) -> TopicPartitions:
        assert self._source_admin is not None
        counts = self._source_admin.topic_partitions()
        return sorted((t, p) for t, n in counts.items() if self._should_replicate(t) for p in range(n))

    def _find_target(self) -> TopicPartitions:
        config = self._config
        assert config is not None and self._target_admin is not None
        counts = self._target_admin.topic_partitions()
        checkpoints = config.checkpoints_topic()
        return sorted((t, p) for t, n in counts.items()
                      if config.policy.topic_source(t) == config.source and t != checkpoints for p in range(n))

    def _load_topic_partitions(self) -> None:
        source, target = self._find_source(), self._find_target()
        with self._lock:
            self._known_source, self._known_target = source, target

    def _refresh_topic_partitions(self) -> None:
        config = self._config
        assert config is not None
        source, target = self._find_source(), self._find_target()
        upstream_of_target = {(config.policy.upstream_topic(t), p) for t, p in target}
        missing = [tp for tp in source if tp not in upstream_of_target]
        with self._lock:
            changed = set(source) != set(self._known_source)
            self._known_target = target
            if changed or missing:
                log.info("Found %d new topic-partitions on %s. Found %d deleted topic-partitions on %s. "
                         "Found %d topic-partitions missing on %s.", len(set(source) - set(self._known_source)),
                         config.source, len(set(self._known_source) - set(source)), config.source, len(missing),
                         config.target)
                self._known_source = source
        if changed or missing:
            self._create_topic_partitions()
            self.context.request_task_reconfiguration()

    def _create_topic_partitions(self) -> None:
        """Remote topics for new source topics (same partitions, configs copied), partitions for grown ones."""
        config = self._config
        assert config is not None and self._source_admin is not None and self._target_admin is not None
        with self._lock:
            source_counts = _counts(self._known_source)
            target_counts = _counts(self._known_target)
        remote = {t: config.policy.format_remote_topic(config.source, t) for t in source_counts}
        new = [t for t in source_counts if remote[t] not in target_counts]
        if new:
            source_configs = self._source_admin.topic_configs(new)
            replication = int(config.get("replication.factor"))
            self._target_admin.create_topics({
                remote[t]: (source_counts[t], replication, _set_only(self._target_config(source_configs.get(t, []))))
                for t in new})
        grown = {remote[t]: n for t, n in source_counts.items()
                 if remote[t] in target_counts and n > target_counts[remote[t]]}
        self._target_admin.increase_partitions(grown)

    def _target_config(self, entries: list[TopicConfigEntry], incremental: bool = False) -> dict[str, str | None]:
        """The source configs a remote topic gets; with ``incremental`` defaults become deletes (or sets)."""
        prop_filter = self._property_filter
        assert prop_filter is not None
        out: dict[str, str | None] = {}
        for e in entries:
            if e.is_read_only or e.is_sensitive or e.is_static_broker:
                continue
            if not prop_filter.should_replicate_config_property(e.name):
                continue
            replicate_default = prop_filter.should_replicate_source_default(e.name)
            if e.is_default and not replicate_default:
                if incremental:
                    out[e.name] = None
                continue
            out[e.name] = e.value
        return out

    def _sync_topic_configs(self) -> None:
        config = self._config
        assert config is not None and self._source_admin is not None and self._target_admin is not None
        with self._lock:
            target_topics = {t for t, _ in self._known_target}
            source_topics = {t for t, _ in self._known_source}
        replicated = [t for t in source_topics if config.policy.format_remote_topic(config.source, t) in target_topics]
        source_configs = self._source_admin.topic_configs(replicated)
        changes = {config.policy.format_remote_topic(config.source, t): self._target_config(entries, incremental=True)
                   for t, entries in source_configs.items()}
        if changes:
            self._target_admin.alter_topic_configs(changes)


def _counts(partitions: TopicPartitions) -> dict[str, int]:
    counts: dict[str, int] = {}
    for topic, partition in partitions:
        counts[topic] = max(counts.get(topic, 0), partition + 1)
    return counts


def _set_only(props: dict[str, str | None]) -> dict[str, str]:
    return {k: v for k, v in props.items() if v is not None}
