"""MirrorHeartbeatConnector: a record every ``emit.heartbeats.interval.seconds`` in the target's ``heartbeats``.

The heartbeats topic is mirrored like any other topic (``heartbeats.replication.enabled``),
so a cluster several hops downstream holds ``A.heartbeats``, ``B.A.heartbeats``...: their
presence tells which clusters reach it (:func:`~seaway.connectors.mirror.client.upstream_clusters`,
``replication_hops``) and their latest timestamps how far behind replication is. One task;
none when ``emit.heartbeats.enabled`` is false.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

from seaway.connect.api import Config, ConfigDef, ConnectError, Schema, SourceConnector, SourceRecord, SourceTask, Task
from seaway.connectors.mirror._version import VERSION
from seaway.connectors.mirror.admin import ClusterAdmin
from seaway.connectors.mirror.config import HEARTBEAT_CONFIG_DEF, HeartbeatConfig, interval
from seaway.connectors.mirror.formats import Heartbeat
from seaway.connectors.mirror.offsets import validate_offsets
from seaway.connectors.mirror.source_connector import validate_byte_array_converters

__all__ = ["MirrorHeartbeatConnector", "MirrorHeartbeatTask"]

log = logging.getLogger(__name__)


def _interval(config: HeartbeatConfig) -> float | None:
    return interval(bool(config.get("emit.heartbeats.enabled")), int(config.get("emit.heartbeats.interval.seconds")))


class MirrorHeartbeatConnector(SourceConnector):
    """Creates the target's heartbeats topic and runs the one task that writes to it."""

    def __init__(self) -> None:
        self._config: HeartbeatConfig | None = None

    def version(self) -> str:
        return VERSION

    def config(self) -> ConfigDef:
        return HEARTBEAT_CONFIG_DEF

    def task_class(self) -> type[Task]:
        return MirrorHeartbeatTask

    def validate(self, props: Mapping[str, str]) -> Config:
        config = super().validate(props)
        validate_byte_array_converters(props, config)
        return config

    def start(self, props: Mapping[str, str]) -> None:
        config = self._config = HeartbeatConfig(props)
        try:
            admin = ClusterAdmin(config.target_admin("heartbeats-target-admin"), config.target, config.admin_timeout)
            admin.create_compacted_topic(config.policy.heartbeats_topic(),
                                         int(config.get("heartbeats.topic.replication.factor")))
        except ConnectError:  # as Kafka's scheduler: logged; the task's records create it if the cluster allows
            log.exception("%s could not create the heartbeats topic", config.entity_label())

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        config = self._config
        if config is None or _interval(config) is None:
            return []
        return [config.originals_strings()]

    def stop(self) -> None:
        """Nothing runs in the background."""

    def alter_offsets(self, connector_config: Mapping[str, str],
                      offsets: Sequence[tuple[Mapping[str, Any], Mapping[str, Any] | None]]) -> bool:
        validate_offsets(offsets, ("sourceClusterAlias", "targetClusterAlias"), only_zero=True, partition_key=False)
        return True


class MirrorHeartbeatTask(SourceTask):
    """Returns one heartbeat record per interval (partition 0 of the heartbeats topic)."""

    def __init__(self) -> None:
        self._stopped = threading.Event()
        self._interval = 1.0
        self._topic = "heartbeats"
        self._source = self._target = ""
        self._next = 0.0

    def version(self) -> str:
        return VERSION

    def start(self, props: Mapping[str, str]) -> None:
        config = HeartbeatConfig(props)
        self._interval = max(_interval(config) or 1.0, 0.01)
        self._topic = config.policy.heartbeats_topic()
        self._source, self._target = config.source, config.target
        self._next = time.monotonic() + self._interval

    def poll(self) -> list[SourceRecord] | None:
        # wait for the next beat in short steps, so the runtime's commits and stop are never held up long
        wait = self._next - time.monotonic()
        if wait > 0 and self._stopped.wait(min(wait, 0.5)):
            return None
        if time.monotonic() < self._next:
            return None
        self._next = max(self._next + self._interval, time.monotonic())
        timestamp = int(time.time() * 1000)
        beat = Heartbeat(self._source, self._target, timestamp)
        return [SourceRecord(beat.connect_partition(), {"offset": 0}, self._topic, 0, Schema.BYTES_SCHEMA,
                             beat.record_key(), Schema.BYTES_SCHEMA, beat.record_value(), timestamp)]

    def stop(self) -> None:
        self._stopped.set()
