"""MirrorCheckpointTask: translate consumer group offsets and write checkpoints (and sync group offsets).

Every ``emit.checkpoints.interval.seconds`` the task reads each assigned group's committed
offsets on the source, translates them through the offset syncs (:class:`OffsetSyncStore`)
and returns a checkpoint record per partition whose translation moved forward (or whose group
rewound upstream) to ``<source>.checkpoints.internal`` on the target. Checkpoint topics are
named as on the target: the remote name (``A.orders``), or the original name for a topic
that came from the target itself.

With ``sync.group.offsets.enabled``, every ``sync.group.offsets.interval.seconds`` the latest
checkpoints are committed as the group's offsets on the target, for groups with no active
member there (EMPTY or unknown), and only where that moves the group forward: a consumer that
fails over to the target with the same group id resumes from the translated offsets.

The checkpoints already on the target are read when the task starts (:class:`CheckpointStore`),
so a restarted task never emits a checkpoint behind one its predecessor wrote.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping
from typing import Any

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, TopicPartition
from seaway.connect.api import ConnectError, Schema, SourceRecord, SourceTask
from seaway.connectors.mirror._version import VERSION
from seaway.connectors.mirror.admin import ClusterAdmin
from seaway.connectors.mirror.config import EMIT_CHECKPOINTS_ENABLED, CheckpointConfig, interval
from seaway.connectors.mirror.filters import DefaultTopicFilter, TopicFilter
from seaway.connectors.mirror.formats import Checkpoint, FormatError
from seaway.connectors.mirror.offset_sync_store import OffsetSyncStore
from seaway.connectors.mirror.scheduler import Scheduler

__all__ = ["CheckpointStore", "MirrorCheckpointTask"]

log = logging.getLogger(__name__)

GroupCheckpoints = dict[tuple[str, int], Checkpoint]


class CheckpointStore:
    """The latest checkpoint per (group, topic, partition) of the task's groups, preloaded from the topic."""

    def __init__(self, groups: set[str]) -> None:
        self.groups = groups
        self._by_group: dict[str, GroupCheckpoints] = {}
        self._lock = threading.Lock()
        self.initialized = False

    def load(self, consumer_config: dict[str, Any], topic: str, timeout: float) -> bool:
        """Read ``topic`` to its end; False (logged) if that failed, e.g. not readable."""
        config = {**consumer_config, "enable.auto.commit": "false"}
        config.setdefault("group.id", f"mm2-checkpoints-reader-{topic}")
        loaded: dict[str, GroupCheckpoints] = {}
        try:
            consumer = Consumer(config)
            try:
                low, high = consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=min(timeout, 10))
                consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
                position, deadline = low, time.monotonic() + timeout
                while position < high:
                    if time.monotonic() > deadline:
                        raise TimeoutError(f"read {position} of {high}")
                    for message in consumer.consume(10_000, 0.2):
                        error = message.error()
                        if error is not None:
                            if error.code() != KafkaError._PARTITION_EOF:
                                raise ConnectError(str(error))
                            continue
                        position = max(position, (message.offset() or 0) + 1)
                        try:
                            checkpoint = Checkpoint.decode(message.key(), message.value())
                        except FormatError as e:
                            log.warning("Ignored invalid checkpoint record at offset %d: %s", message.offset(), e)
                            continue
                        if checkpoint.group in self.groups:
                            loaded.setdefault(checkpoint.group, {})[(checkpoint.topic, checkpoint.partition)] = \
                                checkpoint
            finally:
                consumer.close()
        except Exception as e:
            log.info("Exception encountered loading checkpoints topic %s - this may degrade offset translation as only "
                     "checkpoints for offsets which were mirrored after the task started will be emitted: %s", topic, e)
            with self._lock:
                self.initialized = True
            return False
        with self._lock:
            self._by_group = loaded
            self.initialized = True
        return True

    def get(self, group: str) -> GroupCheckpoints:
        with self._lock:
            return dict(self._by_group.get(group, {}))

    def update(self, group: str, checkpoints: GroupCheckpoints) -> None:
        with self._lock:
            self._by_group.setdefault(group, {}).update(checkpoints)

    def converted_offsets(self) -> dict[str, dict[tuple[str, int], tuple[int, str]]]:
        """Per group: ``{(topic, partition): (downstream offset, metadata)}`` of the latest checkpoints."""
        with self._lock:
            return {group: {tp: (c.downstream_offset, c.metadata) for tp, c in checkpoints.items()}
                    for group, checkpoints in self._by_group.items()}


def is_more_recent(checkpoint: Checkpoint, last: Checkpoint | None) -> bool:
    """Emit when new, when the group rewound upstream, or when the translation moved forward (never back)."""
    return (last is None or checkpoint.upstream_offset < last.upstream_offset
            or checkpoint.downstream_offset > last.downstream_offset)


class MirrorCheckpointTask(SourceTask):
    """Emits checkpoints for the consumer groups assigned to it."""

    def __init__(self) -> None:
        self._stopped = threading.Event()
        self._config: CheckpointConfig | None = None
        self._groups: list[str] = []
        self._interval = 60.0
        self._next = 0.0
        self._topic = ""
        self._source_admin: ClusterAdmin | None = None
        self._target_admin: ClusterAdmin | None = None
        self._syncs: OffsetSyncStore | None = None
        self._store = CheckpointStore(set())
        self._scheduler: Scheduler | None = None
        self._ready = threading.Event()
        self._topic_filter: TopicFilter = DefaultTopicFilter()

    def version(self) -> str:
        return VERSION

    def start(self, props: Mapping[str, str]) -> None:
        config = self._config = CheckpointConfig(props, task=True)
        self._groups = config.task_groups()
        self._topic = config.checkpoints_topic()
        self._topic_filter = config.topic_filter()
        self._interval = interval(bool(config.get(EMIT_CHECKPOINTS_ENABLED)),
                                  int(config.get("emit.checkpoints.interval.seconds"))) or 60.0
        self._next = time.monotonic() + self._interval
        self._source_admin = ClusterAdmin(config.source_admin("checkpoint-source-admin"), config.source,
                                          config.admin_timeout)
        self._target_admin = ClusterAdmin(config.target_admin("checkpoint-target-admin"), config.target,
                                          config.admin_timeout)
        self._syncs = OffsetSyncStore(config.offset_syncs_consumer(), config.offset_syncs_topic())
        self._store = CheckpointStore(set(self._groups))
        scheduler = self._scheduler = Scheduler(config.entity_label())
        scheduler.submit(self._load_stores, "starting checkpoint and offset sync stores")
        log.info("%s checkpointing %d consumer groups %s->%s: %s.", config.entity_label(), len(self._groups),
                 config.source, config.target, self._groups)

    def _load_stores(self) -> None:
        config, syncs = self._config, self._syncs
        assert config is not None and syncs is not None
        ok = self._store.load(config.target_consumer("checkpoints-target-consumer"), self._topic, config.admin_timeout)
        syncs.start(not ok, config.admin_timeout)
        self._ready.set()
        # operators (and tests) see from when offsets are translated; without the checkpoints,
        # only offsets mirrored from here on are (as in Kafka)
        log.info("%s read the checkpoints in %s (%s) and the offset syncs in %s: checkpointing from here.",
                 config.entity_label(), self._topic, "loaded" if ok else "not readable", syncs.topic)
        assert self._scheduler is not None
        self._scheduler.schedule(self._sync_group_offsets,
                                 interval(bool(config.get("sync.group.offsets.enabled")),
                                          int(config.get("sync.group.offsets.interval.seconds"))),
                                 "sync idle consumer group offset from source to target", delayed=True)

    def poll(self) -> list[SourceRecord] | None:
        wait = self._next - time.monotonic()
        if wait > 0 and self._stopped.wait(min(wait, 0.5)):
            return None
        if time.monotonic() < self._next or self._stopped.is_set():
            return None
        self._next = time.monotonic() + self._interval
        if not self._ready.is_set():
            return None
        try:
            return self._checkpoint_records() or None
        except Exception:
            log.warning("Failure polling consumer state for checkpoints.", exc_info=True)
            return None

    def _checkpoint_records(self) -> list[SourceRecord]:
        assert self._syncs is not None
        self._syncs.update()
        timestamp = int(time.time() * 1000)
        records = []
        for group in self._groups:
            if self._stopped.is_set():
                break
            checkpoints = self.checkpoints_for_group(group)
            self._store.update(group, checkpoints)
            records += [SourceRecord(c.connect_partition(), {"offset": 0}, self._topic, 0, Schema.BYTES_SCHEMA,
                                     c.record_key(), Schema.BYTES_SCHEMA, c.record_value(), timestamp)
                        for c in checkpoints.values()]
        return records

    def checkpoints_for_group(self, group: str) -> GroupCheckpoints:
        """The group's new checkpoints: translated, filtered by topic, never behind the last ones."""
        config, syncs, admin = self._config, self._syncs, self._source_admin
        assert config is not None and syncs is not None and admin is not None
        last = self._store.get(group)
        out: GroupCheckpoints = {}
        for (topic, partition), (upstream, metadata) in admin.group_offsets(group).items():
            if not self._topic_filter.should_replicate_topic(topic):
                continue
            downstream = syncs.translate_downstream(topic, partition, upstream)
            if downstream is None or downstream < 0:
                continue
            checkpoint = Checkpoint(group, self._rename(topic), partition, upstream, downstream, metadata)
            if is_more_recent(checkpoint, last.get((checkpoint.topic, partition))):
                out[(checkpoint.topic, partition)] = checkpoint
        return out

    def _rename(self, topic: str) -> str:
        config = self._config
        assert config is not None
        policy = config.policy
        if policy.topic_source(topic) == config.target:
            return policy.original_topic(topic)  # came from the target: back to its name there
        return policy.format_remote_topic(config.source, topic)

    def _sync_group_offsets(self) -> None:
        """Commit the latest checkpoints on the target for groups idle there, only moving them forward."""
        admin = self._target_admin
        assert admin is not None
        converted = self._store.converted_offsets()
        if not converted:
            return
        idle = admin.idle_groups(converted)
        for group, offsets in converted.items():
            if group not in idle or self._stopped.is_set():
                continue
            current = admin.group_offsets(group)
            ahead = {tp: o for tp, o in offsets.items() if tp not in current or current[tp][0] < o[0]}
            if ahead and admin.alter_group_offsets(group, ahead):
                log.debug("Synced %d offsets of consumer group %s", len(ahead), group)

    def stop(self) -> None:
        self._stopped.set()
        if self._scheduler is not None:
            self._scheduler.close(timeout=1.0)
        if self._syncs is not None:
            self._syncs.close()
