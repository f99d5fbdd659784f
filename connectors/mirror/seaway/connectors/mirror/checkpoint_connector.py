"""MirrorCheckpointConnector: which consumer groups of the source get checkpoints on the target.

A group is checkpointed when the group filter takes it (``groups`` minus ``groups.exclude``)
and it has committed offsets for at least one topic the topic filter takes. The list is
loaded on start on the connector's scheduler thread and refreshed every
``refresh.groups.interval.seconds``; a change asks the runtime for new task configs. Until the
first load finished, ``task_configs`` raises :class:`RetriableError` (the runtime retries),
as Kafka's does. Groups are split over ``tasks.max`` tasks with ``group_partitions``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from seaway.connect.api import (
    Config,
    ConfigDef,
    ConfigValue,
    RetriableError,
    SourceConnector,
    Task,
    group_partitions,
)
from seaway.connectors.mirror._version import VERSION
from seaway.connectors.mirror.admin import ClusterAdmin
from seaway.connectors.mirror.config import (
    CHECKPOINT_CONFIG_DEF,
    EMIT_CHECKPOINTS_ENABLED,
    EMIT_OFFSET_SYNCS_ENABLED,
    ENABLED,
    CheckpointConfig,
    interval,
)
from seaway.connectors.mirror.filters import GroupFilter, TopicFilter
from seaway.connectors.mirror.offsets import validate_offsets
from seaway.connectors.mirror.scheduler import Scheduler
from seaway.connectors.mirror.source_connector import validate_byte_array_converters

__all__ = ["MirrorCheckpointConnector", "find_groups"]

log = logging.getLogger(__name__)


def find_groups(admin: ClusterAdmin, group_filter: GroupFilter, topic_filter: TopicFilter) -> set[str]:
    """Groups passing the group filter with committed offsets for a topic passing the topic filter."""
    found = set()
    for group in admin.consumer_groups():
        if not group_filter.should_replicate_group(group):
            continue
        offsets = admin.group_offsets(group)
        if any(topic_filter.should_replicate_topic(topic) for topic, _ in offsets):
            found.add(group)
    return found


class MirrorCheckpointConnector(SourceConnector):
    """Replicates consumer group state: emits checkpoints (and, optionally, syncs group offsets)."""

    def __init__(self) -> None:
        self._config: CheckpointConfig | None = None
        self._scheduler: Scheduler | None = None
        self._admin: ClusterAdmin | None = None
        self._groups: set[str] | None = None
        self._lock = threading.Lock()
        self._topic_filter: TopicFilter | None = None
        self._group_filter: GroupFilter | None = None

    def version(self) -> str:
        return VERSION

    def config(self) -> ConfigDef:
        return CHECKPOINT_CONFIG_DEF

    def task_class(self) -> type[Task]:
        from seaway.connectors.mirror.checkpoint_task import MirrorCheckpointTask

        return MirrorCheckpointTask

    def validate(self, props: Mapping[str, str]) -> Config:
        config = super().validate(props)
        validate_byte_array_converters(props, config)
        if str(props.get(ENABLED, "true")).strip().lower() == "false":
            return config
        errors = {}
        if str(props.get(EMIT_CHECKPOINTS_ENABLED, "")).strip().lower() == "false":
            errors[EMIT_CHECKPOINTS_ENABLED] = f"MirrorCheckpointConnector can't run with {EMIT_CHECKPOINTS_ENABLED} " \
                                               "set to false"
        if str(props.get(EMIT_OFFSET_SYNCS_ENABLED, "")).strip().lower() == "false":
            errors[EMIT_OFFSET_SYNCS_ENABLED] = "MirrorCheckpointConnector can't run without offset syncs"
        for key, message in errors.items():
            value = next((v for v in config.config_values if v.name == key), None)
            if value is None:
                value = ConfigValue(key, props.get(key))
                config.config_values.append(value)
            value.add_error_message(message)
        return config

    def alter_offsets(self, connector_config: Mapping[str, str],
                      offsets: Sequence[tuple[Mapping[str, Any], Mapping[str, Any] | None]]) -> bool:
        validate_offsets(offsets, ("group", "topic"), only_zero=True)
        return True

    def start(self, props: Mapping[str, str]) -> None:
        config = self._config = CheckpointConfig(props)
        if not config.enabled:
            return
        self._topic_filter = config.topic_filter()
        self._group_filter = config.group_filter()
        self._admin = ClusterAdmin(config.source_admin("checkpoint-source-admin"), config.source, config.admin_timeout)
        target = ClusterAdmin(config.target_admin("checkpoint-target-admin"), config.target, config.admin_timeout)
        scheduler = self._scheduler = Scheduler(config.entity_label())
        scheduler.execute(lambda: target.create_compacted_topic(
            config.checkpoints_topic(), int(config.get("checkpoints.topic.replication.factor"))),
            "creating internal topics")
        scheduler.execute(self._load_groups, "loading initial consumer groups")
        scheduler.schedule(self._refresh_groups, interval(bool(config.get("refresh.groups.enabled")),
                                                          int(config.get("refresh.groups.interval.seconds"))),
                           "refreshing consumer groups", delayed=True)

    def stop(self) -> None:
        if self._scheduler is not None:
            self._scheduler.close()

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        config = self._config
        if config is None or not config.enabled:
            return []
        with self._lock:
            groups = None if self._groups is None else sorted(self._groups)
        if groups is None:
            raise RetriableError("Timeout while loading consumer groups.")
        emit = interval(bool(config.get(EMIT_CHECKPOINTS_ENABLED)),
                        int(config.get("emit.checkpoints.interval.seconds")))
        if not groups or emit is None:
            return []
        count = min(max_tasks, len(groups))
        return [config.task_config(chunk, i) for i, chunk in enumerate(group_partitions(groups, count))]

    def _find(self) -> set[str]:
        assert self._admin is not None and self._group_filter is not None and self._topic_filter is not None
        return find_groups(self._admin, self._group_filter, self._topic_filter)

    def _load_groups(self) -> None:
        groups = self._find()
        with self._lock:
            self._groups = groups
        log.info("Started %s with %d consumer groups.", self._config.connector_name if self._config else "",
                 len(groups))

    def _refresh_groups(self) -> None:
        groups = self._find()
        with self._lock:
            known = self._groups or set()
            changed = groups != known
            if changed:
                log.info("Found %d consumer groups. %d are new. %d were removed. Previously had %d.", len(groups),
                         len(groups - known), len(known - groups), len(known))
                self._groups = groups
        if changed:
            self.context.request_task_reconfiguration()
