"""MirrorSourceTask: consume assigned source partitions, hand the records to Connect unchanged.

Each source record becomes a record of the remote topic (named by the replication policy)
with the **same partition number**, key, value, headers and timestamp as bytes; the
ByteArrayConverter the connectors declare passes them through, so the target holds the same
bytes. A record's Connect offset is ``{"offset": <upstream offset>}`` under the source
partition ``{"cluster": <source alias>, "topic": ..., "partition": ...}``: Connect commits it
once the target acknowledged the record, and a restarted task seeks to it + 1. Records sent
after the last commit are sent again after a crash: delivery is at-least-once.

Hot path, per batch, never per record object: one ``consume`` for up to :data:`BATCH`
messages (after a blocking ``poll`` for the first when nothing is buffered, so the first record
after a quiet spell is not held back), split into runs of one source partition, each run a
:class:`~seaway.connect.api.BytesRecordBatch` of columns (keys, values, headers, timestamps,
offsets: one list comprehension each). The worker produces straight from the columns and
reports the offsets the target gave them per batch (:meth:`commit_records`), which feed the
:class:`OffsetSyncWriter` (syncs bounded by ``offset.lag.max``). With SMTs or other
converters the worker iterates the batch as ``SourceRecord`` s and calls :meth:`commit_record`.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Mapping, Sequence
from itertools import groupby
from typing import Any

from confluent_kafka import OFFSET_BEGINNING, OFFSET_END, Consumer, KafkaError, TopicPartition
from seaway.connect.api import BytesRecordBatch, ConnectError, RecordMetadata, SourceRecord, SourceTask
from seaway.connectors.mirror._version import VERSION
from seaway.connectors.mirror.config import EMIT_OFFSET_SYNCS_ENABLED, SourceConfig
from seaway.connectors.mirror.offset_sync_writer import OffsetSyncWriter

__all__ = ["BATCH", "MirrorSourceTask"]

log = logging.getLogger(__name__)

BATCH = 2000
"""Messages taken from the consumer per ``poll``."""
_MAX_WAIT = 0.1
"""Longest a poll blocks for the first message (seconds): bounds how long ``stop`` waits for it."""



class _Offsets(Sequence[Mapping[str, Any]]):
    """A batch's Connect source offsets, ``{"offset": <upstream offset>}``, built only when asked for."""

    __slots__ = ("raw",)

    def __init__(self, raw: list[int]) -> None:
        self.raw = raw

    def __len__(self) -> int:
        return len(self.raw)

    def __getitem__(self, index: int) -> Mapping[str, Any]:  # type: ignore[override]
        return {"offset": self.raw[index]}


class MirrorSourceTask(SourceTask):
    """Replicates a set of topic-partitions from the source cluster."""

    def __init__(self) -> None:
        self._consumer: Consumer | None = None
        self._writer: OffsetSyncWriter | None = None
        self._source = ""
        self._wait = _MAX_WAIT
        self._stopping = False
        self._lock = threading.Lock()
        # per source partition (topic, partition): (Connect source partition, remote topic)
        self._partitions: dict[tuple[str, int], tuple[dict[str, Any], str]] = {}
        self._remote: dict[str, str] = {}
        self._ready: deque[BytesRecordBatch] = deque()
        self._config: SourceConfig | None = None

    def version(self) -> str:
        return VERSION

    def start(self, props: Any) -> None:
        config = self._config = SourceConfig(props, task=True)
        self._source = config.source
        self._wait = min(int(config.get("consumer.poll.timeout.ms")) / 1000, _MAX_WAIT)
        if config.get(EMIT_OFFSET_SYNCS_ENABLED):
            self._writer = OffsetSyncWriter(config.offset_syncs_producer(), config.offset_syncs_topic(),
                                            int(config.get("offset.lag.max")))
        consumer_config = config.source_consumer("replication-consumer")
        # librdkafka wants a group id; the task never joins or commits to it (it assigns, like Kafka's)
        consumer_config.setdefault("group.id", f"mm2-{config.entity_label()}")
        reset = str(consumer_config.get("auto.offset.reset", "earliest")).lower()
        partitions = config.task_topic_partitions()
        self._consumer = Consumer(consumer_config)
        stored = self._stored_offsets(partitions)
        assignment = []
        for topic, partition in partitions:
            offset = stored.get((topic, partition), -1)
            if offset >= 0:
                start_at = offset + 1
            else:
                start_at = OFFSET_END if reset in ("latest", "largest", "end") else OFFSET_BEGINNING
            assignment.append(TopicPartition(topic, partition, start_at))
        self._consumer.assign(assignment)
        log.info("%s replicating %d topic-partitions %s->%s: %s.", config.entity_label(), len(partitions),
                 config.source, config.target, [f"{t}-{p}" for t, p in partitions])

    def _stored_offsets(self, partitions: list[tuple[str, int]]) -> dict[tuple[str, int], int]:
        reader = self.context.offset_storage_reader()
        wanted = [self._partition(t, p)[0] for t, p in partitions]
        out: dict[tuple[str, int], int] = {}
        for partition, offset in reader.offsets(wanted):
            value = (offset or {}).get("offset")
            if isinstance(value, int) and not isinstance(value, bool):
                out[(str(partition["topic"]), int(partition["partition"]))] = value
        return out

    def _partition(self, topic: str, partition: int) -> tuple[dict[str, Any], str]:
        """The Connect source partition and remote topic of a source partition (built once)."""
        found = self._partitions.get((topic, partition))
        if found is None:
            assert self._config is not None
            remote = self._remote.get(topic)
            if remote is None:
                remote = self._remote[topic] = self._config.policy.format_remote_topic(self._source, topic)
            found = self._partitions[(topic, partition)] = (
                {"cluster": self._source, "topic": topic, "partition": partition}, remote)
        return found

    def poll(self) -> BytesRecordBatch | None:
        ready = self._ready
        if ready:
            return ready.popleft()
        with self._lock:
            consumer = self._consumer
            if self._stopping or consumer is None:
                return None
            if self._writer is not None:
                self._writer.fire_pending()
            messages = consumer.consume(BATCH, 0)
            if not messages:
                first = consumer.poll(self._wait)
                if first is None:
                    return None
                messages = [first, *consumer.consume(BATCH - 1, 0)]
        self._split(messages)
        return ready.popleft() if ready else None

    def _split(self, messages: list[Any]) -> None:
        """One batch per run of messages from the same source partition, as columns (queued in ``_ready``)."""
        if any(m.error() is not None for m in messages):
            for m in messages:
                if m.error() is not None:
                    self._consumer_error(m.error())
            messages = [m for m in messages if m.error() is None]
        lookup, partitions = self._partition, self._partitions
        begin = 0
        # runs of one source partition, found in C (groupby over the (topic, partition) column)
        for tp, group in groupby(zip([m.topic() for m in messages], [m.partition() for m in messages],
                                     strict=True)):
            end = begin + len(list(group))
            run = messages[begin:end]
            begin = end
            source_partition, remote = partitions.get(tp) or lookup(*tp)
            timestamps = [m.timestamp()[1] for m in run]
            if min(timestamps) < 0:  # no timestamp: the producer's clock, as Kafka's producer does
                timestamps = [t if t >= 0 else None for t in timestamps]
            self._ready.append(BytesRecordBatch(
                remote, tp[1], [m.key() for m in run], [m.value() for m in run], [m.headers() for m in run],
                timestamps, source_partition, _Offsets([m.offset() for m in run])))

    def _consumer_error(self, error: KafkaError) -> None:
        if error.code() == KafkaError._PARTITION_EOF:
            return
        if error.fatal():
            raise ConnectError(f"Fatal error consuming from {self._source}: {error}")
        log.warning("Failure during poll of %s: %s", self._source, error)

    def commit_record(self, record: SourceRecord, metadata: RecordMetadata | None) -> None:
        writer = self._writer
        if writer is None or self._stopping:
            return
        if metadata is None or metadata.offset < 0:
            return
        partition = record.source_partition
        offset = record.source_offset
        if partition is None or offset is None:
            return
        writer.record((partition["topic"], partition["partition"]), offset["offset"], metadata.offset)
        writer.fire_pending()

    def commit_records(self, records: Sequence[SourceRecord], offsets: Sequence[int]) -> None:
        """A batch was written on the target at ``offsets``: feed the offset syncs, per batch."""
        writer = self._writer
        if writer is None or self._stopping:
            return
        column = records.source_offsets if type(records) is BytesRecordBatch else None
        partition = records.source_partition if type(records) is BytesRecordBatch else None
        if not isinstance(column, _Offsets) or partition is None:
            super().commit_records(records, offsets)  # not one of ours: record by record
            return
        writer.record_batch((partition["topic"], partition["partition"]), column.raw, list(offsets))
        writer.fire_pending()

    def commit(self) -> None:
        """After Connect committed offsets: send each partition's newest pair, so quiet tails get synced."""
        writer = self._writer
        if writer is not None:
            writer.promote_delayed()
            writer.fire_pending()

    def stop(self) -> None:
        self._stopping = True
        with self._lock:  # poll holds it for at most _MAX_WAIT
            consumer, self._consumer = self._consumer, None
            writer, self._writer = self._writer, None
        if consumer is not None:
            consumer.close()
        if writer is not None:
            writer.close(1.0)
