"""IcebergSinkTask and IcebergSinkConnector: Kafka topics into Apache Iceberg tables, exactly once.

Each task is a :class:`~seaway.connectors.lake.task.LakeSinkTask` (file sets per Kafka partition by
``flush.size`` and the other rotation rules, a pipelined writer thread, storage outages ridden out by
``retry.backoff.ms``). Its writer turns each closed set into data files of each destination table and
announces them on the control topic (DATA_WRITTEN); the committer (:mod:`.coordinator`, in one of the
tasks) adds them to the tables. A START_COMMIT closes every open set, so each commit interval lands
everything consumed before it.

**Offsets.** Per table and topic-partition a task keeps a *chain*: the offset its next DATA_WRITTEN for
that table starts at. On assignment it reads each table's offsets from the table's snapshots and starts
there (the smallest over its tables: rows below a table's own offset are left out of that table), so a
restarted or reassigned task resumes from the tables, never from the consumer group (whose offset, set
from ``pre_commit``, trails the tables and serves lag display). COMMIT_COMPLETE tells each task what the
tables hold: when a table did not take what the task sent (a zombie's or a previous run's files came
first, or a committer died with them), the task rewinds that partition to the tables' offsets and
writes it again; the committer's chain check keeps any row from landing twice.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Collection, Mapping, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from confluent_kafka import KafkaException
from seaway.connect.api import (
    ConnectError,
    OffsetAndMetadata,
    SinkRecord,
    SinkRecordBatch,
    TopicPartition,
)
from seaway.connectors.lake import (
    CommitEntry,
    CommitLog,
    FileSet,
    LakeSinkConnector,
    LakeSinkTask,
    PartitionBuffer,
    Partitioner,
    StorageConfig,
)
from seaway.connectors.lake_tables import control
from seaway.connectors.lake_tables._version import VERSION
from seaway.connectors.lake_tables.control import ControlChannel, client_settings
from seaway.connectors.lake_tables.coordinator import Coordinator
from seaway.connectors.lake_tables.data_files import data_file_to_json
from seaway.connectors.lake_tables.iceberg_config import RULES, IcebergSinkConfig
from seaway.connectors.lake_tables.iceberg_tables import IcebergTables, write_data_files
from seaway.connectors.lake_tables.routing import RoutePartitioner, Router
from seaway.connectors.lake_tables.table_schema import normalize, required_columns
from seaway.connectors.lake_tables.upserts import DELETED, KEY, newest_per_key, upsert_columns

__all__ = ["IcebergSinkConnector", "IcebergSinkTask"]

log = logging.getLogger(__name__)
_OFFSET = "__seaway_offset"
Chain = tuple[str, TopicPartition]


class IcebergWriter:
    """The writer thread's side: file sets -> data files per table -> DATA_WRITTEN events."""

    def __init__(self, task: IcebergSinkTask) -> None:
        self.task = task
        assert task.config is not None and task.tables is not None and task.channel is not None
        self.config = task.config
        self.tables = task.tables
        self.channel = task.channel
        self.router = Router(self.config)

    def commit_log(self, topic: str, partition: int) -> CommitLog:
        raise AssertionError("the Iceberg sink keeps its offsets in the tables")  # recover() is overridden

    def write(self, sets: Sequence[FileSet]) -> list[CommitEntry]:
        started = time.monotonic()
        entries = [self._write_set(s) for s in sets]
        self.channel.flush()
        log.info("Wrote %d records of %d file sets for the next Iceberg commit in %.3f s",
                 sum(len(s) for s in sets), len(sets), time.monotonic() - started)
        return entries

    def _write_set(self, file_set: FileSet) -> CommitEntry:
        tp = file_set.tp
        data = file_set.table()
        data = data.append_column(_OFFSET, pa.array(file_set.offsets, type=pa.int64()))
        folders = file_set.folders
        if folders.count(folders[0]) == len(folders):
            parts = [(folders[0], data)]
        else:
            codes = pa.array(folders, type=pa.string())
            parts = [(f, data.filter(pc.equal(codes, f))) for f in dict.fromkeys(folders)]
        routed: dict[str, list[pa.Table]] = {}
        for folder, rows in parts:
            for name in self.router.tables(folder):
                routed.setdefault(name, []).append(rows)
        if not self.config.dynamic:  # every static table's chain advances over the set, rows or not
            for name in self.config.tables:
                routed.setdefault(name, [])
        required = required_columns(file_set.schema, self.config.include_kafka_metadata)
        for name, pieces in routed.items():
            rows = (pa.concat_tables(pieces) if len(pieces) > 1 else pieces[0]) if pieces else None
            self._write_table(name, tp, file_set, rows, required)
        return CommitEntry(tp.topic, tp.partition, file_set.start, file_set.end + 1)

    def _write_table(self, name: str, tp: TopicPartition, file_set: FileSet, rows: pa.Table | None,
                     required: set[str]) -> None:
        start, origin = self.task.chain_start(name, tp, file_set.start)
        if file_set.end < start:
            return  # the table holds these offsets already (a replay)
        event: dict[str, Any] = {"type": control.DATA_WRITTEN, "table": name, "topic": tp.topic,
                                 "partition": tp.partition, "start": start, "next": file_set.end + 1,
                                 "files": [], "spec_id": 0, "origin": origin}
        if rows is not None and rows.num_rows:
            offsets = rows.column(_OFFSET)
            if offsets[0].as_py() < start:
                rows = rows.filter(pc.greater_equal(offsets, start))
            where = f"{tp.topic}-{tp.partition} {start}..{file_set.end}"
            id_columns = self.config.table(name).id_columns
            if DELETED in rows.column_names:
                if id_columns:
                    rows, event["deletes"] = newest_per_key(rows, rows.column(_OFFSET).to_pylist(), id_columns,
                                                            f"{tp.topic}-{tp.partition}")
                else:  # tombstones of a table without id columns are skipped
                    rows = rows.filter(pc.invert(rows.column(DELETED))).drop_columns([DELETED, KEY])
            rows = normalize(rows.drop_columns([_OFFSET]))
            if rows.num_rows:
                table, projected = self.tables.for_write(name, rows, required, where)
                files = write_data_files(table, projected, self.config.write_props)
                event["files"] = [data_file_to_json(f) for f in files]
                event["spec_id"] = table.metadata.default_spec_id
        self.channel.send(event, flush=False)
        self.task.chain_advanced(name, tp, file_set.end + 1)


class IcebergSinkTask(LakeSinkTask):
    """One task: a worker for the committer, and the committer itself when it holds the first partition."""

    writer_thread_name = "iceberg-sink-writer"

    def __init__(self) -> None:
        super().__init__()
        self.config: IcebergSinkConfig | None = None
        self.tables: IcebergTables | None = None
        self.channel: ControlChannel | None = None
        self.coordinator: Coordinator | None = None
        self._writer: IcebergWriter | None = None
        self._settings: dict[str, Any] = {}
        self._lock = threading.Lock()
        self._chains: dict[Chain, int] = {}  # next offset each table's next event starts at
        self._floors: dict[Chain, int] = {}  # what each table holds, as last read or told
        # where each chain begun with no offset in its table started: its first event is an origin, the
        # only kind the committer accepts for a partition the table has never held
        self._origins: dict[Chain, int] = {}
        self._expected: dict[str, dict[Chain, int]] = {}  # per commit id: the chains its DATA_COMPLETE reported
        self._resync: dict[TopicPartition, int] = {}  # rewound partitions: records above this are pre-seek
        self._all_partitions: tuple[float, set[TopicPartition]] = (0.0, set())

    def version(self) -> str:
        return VERSION

    # -- configuration and plumbing -----------------------------------------------------------------
    def parse_config(self, props: Mapping[str, str]) -> StorageConfig:
        self.config = IcebergSinkConfig.from_props(props)
        return self.config

    def make_partitioner(self, config: StorageConfig) -> Partitioner:
        assert self.config is not None
        return RoutePartitioner(self.config)

    def start(self, props: Mapping[str, str]) -> None:
        super().start(props)
        assert self.config is not None
        self._topics = [t.strip() for t in props.get("topics", "").split(",") if t.strip()]
        self._topics_regex = props.get("topics.regex", "")
        self._settings = client_settings(self.config.kafka_props)
        self.tables = IcebergTables(self.config)
        self.channel = ControlChannel(self._settings, self.config.control_topic, self.config.connector,
                                      f"{self.config.control_group_prefix}{self.config.connector}")
        self._writer = IcebergWriter(self)
        if any(self.config.table(t).id_columns for t in self.config.tables) or self.config.default_id_columns:
            self.accepts_value_columns = False  # tombstones must reach the buffers (see upserts)

    @property
    def writer(self) -> IcebergWriter:
        assert self._writer is not None, "start() first"
        return self._writer

    def lake_name(self) -> str:
        assert self.config is not None
        return f"the Iceberg warehouse {self.config.catalog_props.get('warehouse', '')}".rstrip()

    def tidy(self, tp: TopicPartition) -> None:
        """Nothing to tidy: the offsets live in the tables."""

    def new_buffer(self, tp: TopicPartition, committed: int | None) -> PartitionBuffer:
        assert self.storage is not None and self.partitioner is not None and self.config is not None
        upserts = bool(self.config.default_id_columns) or any(self.config.table(t).id_columns
                                                               for t in self.config.tables)
        return PartitionBuffer(tp, self.storage, self.partitioner, committed,
                               upsert_columns if upserts else None)

    def filter_records(self, records: Sequence[SinkRecord]) -> Sequence[SinkRecord]:
        """Tombstones only matter to upsert tables (they delete a key); elsewhere they are skipped."""
        if self.accepts_value_columns and any(r.value is None for r in records):
            return [r for r in records if r.value is not None]
        return records

    # -- offsets: chains per table and partition ------------------------------------------------------
    def chain_start(self, table: str, tp: TopicPartition, set_start: int) -> tuple[int, bool]:
        """Where the next DATA_WRITTEN of ``table`` for ``tp`` starts, and whether it is its chain's
        origin (writer thread)."""
        key = (table, tp)
        with self._lock:
            start = self._chains.get(key)
            if start is not None:
                return start, start == self._origins.get(key)
        assert self.tables is not None
        floor = self.tables.offsets(table).get(tp)  # a table met for the first time (dynamic routing)
        with self._lock:
            if floor is not None:
                self._floors[key] = floor
                self._origins.pop(key, None)
                return self._chains.setdefault(key, max(floor, set_start)), False
            if key not in self._floors:
                self._origins[key] = set_start
            start = self._chains.setdefault(key, set_start)
            return start, start == self._origins.get(key)

    def chain_advanced(self, table: str, tp: TopicPartition, next_offset: int) -> None:
        with self._lock:
            self._chains[(table, tp)] = next_offset

    def recover(self, tp: TopicPartition) -> int | None:
        """On assignment: the tables' offsets (the smallest; ``None`` if a static table has none yet).
        After a storage failure (the partition is assigned already): where its sets in memory start."""
        buffer = self.buffers.get(tp)
        if buffer is not None:
            return buffer.committed
        assert self.tables is not None and self.config is not None
        offsets = {name: self.tables.offsets(name).get(tp) for name in self.tables.connector_tables()}
        with self._lock:
            for name, floor in offsets.items():
                if floor is not None:
                    self._floors[(name, tp)] = self._chains[(name, tp)] = floor
        known = [o for o in offsets.values() if o is not None]
        if not known or (not self.config.dynamic and len(known) < len(offsets)):
            return None
        return min(known)

    def pre_commit(self, current_offsets: Mapping[TopicPartition, OffsetAndMetadata]
                   ) -> dict[TopicPartition, OffsetAndMetadata]:
        """The tables' offsets (what every table holds), for the consumer group's lag display."""
        self.pump(wait=False)
        assert self.config is not None
        out = {}
        with self._lock:
            for tp in self.buffers:
                floors = {name: n for (name, t), n in self._floors.items() if t == tp}
                if floors and (self.config.dynamic or all(name in floors for name in self.config.tables)):
                    out[tp] = OffsetAndMetadata(min(floors.values()))
        return out

    # -- the task loop ------------------------------------------------------------------------------
    def open(self, partitions: Collection[TopicPartition]) -> None:
        super().open(partitions)
        self._elect()

    def close(self, partitions: Collection[TopicPartition]) -> None:
        super().close(partitions)
        closing = set(partitions)
        with self._lock:
            for key in [k for k in self._chains if k[1] in closing]:
                del self._chains[key]
            for key in [k for k in self._floors if k[1] in closing]:
                del self._floors[key]
            for key in [k for k in self._origins if k[1] in closing]:
                del self._origins[key]
        for tp in closing:
            self._resync.pop(tp, None)
        self._elect()

    def put(self, records: Sequence[SinkRecord]) -> None:
        if self.coordinator is not None and self.coordinator.failure is not None:
            raise ConnectError(f"The Iceberg committer of this task failed: {self.coordinator.failure}")
        self._control()
        if self._resync and records:
            records = self._skip_pre_seek(records)
        super().put(records)

    def _control(self) -> None:
        """Answer START_COMMIT, check COMMIT_COMPLETE (task thread)."""
        assert self.channel is not None
        for event in self.channel.poll(0.0):
            kind = event.get("type")
            if kind == control.START_COMMIT:
                self._answer(str(event["commit_id"]))
            elif kind == control.COMMIT_COMPLETE:
                self._check(event)

    def _answer(self, commit_id: str) -> None:
        assert self.channel is not None
        self.close_open_sets()
        with self._lock:
            chains = {k: v for k, v in self._chains.items() if k[1] in self.buffers}
        self._expected[commit_id] = chains
        while len(self._expected) > 20:
            del self._expected[next(iter(self._expected))]
        self.channel.send({"type": control.DATA_COMPLETE, "commit_id": commit_id,
                           "partitions": [[tp.topic, tp.partition] for tp in self.buffers],
                           "tables": sorted({name for name, _ in chains})})

    def _check(self, event: Mapping[str, Any]) -> None:
        """Compare what the tables hold with what this task sent; rewind partitions they did not take."""
        assert self.channel is not None
        tables: Mapping[str, Mapping[str, Mapping[str, int]]] = event.get("tables", {})
        expected = self._expected.pop(str(event.get("commit_id")), None)
        counted = self.channel.member in event.get("members", ())
        rewind: set[TopicPartition] = set()
        if expected is not None and counted:
            self.drain()  # nothing in flight while chains are compared and reset
        with self._lock:
            for name, by_topic in tables.items():
                for topic, by_partition in by_topic.items():
                    for partition, offset in by_partition.items():
                        tp = TopicPartition(topic, int(partition))
                        if tp not in self.buffers:
                            continue
                        key = (name, tp)
                        self._floors[key] = offset
                        self._origins.pop(key, None)
                        if expected is None or not counted or key not in expected:
                            continue
                        if offset < expected[key] or offset > self._chains.get(key, offset):
                            rewind.add(tp)
            if expected is not None and counted:
                # a chain the table never took though this task sent past its origin: the committer that
                # had the origin died with it; the chain is sent again from there
                for key, sent_to in expected.items():
                    origin = self._origins.get(key)
                    if key not in self._floors and origin is not None and sent_to > origin:
                        rewind.add(key[1])
        for tp in rewind:
            self._rewind(tp)

    def _rewind(self, tp: TopicPartition) -> None:
        buffer = self.buffers.get(tp)
        if buffer is None:
            return
        with self._lock:
            floors = {k: v for k, v in self._floors.items() if k[1] == tp}
            origins = {k: v for k, v in self._origins.items() if k[1] == tp and k not in floors}
            for key in [k for k in self._chains if k[1] == tp]:
                del self._chains[key]
            self._chains.update(floors)  # a chain without a floor begins again at its origin (chain_start)
        if not floors and not origins:
            return
        target = min([*floors.values(), *origins.values()])
        seen = max(buffer.open.end if buffer.open is not None else -1,
                   (buffer.committed or 0) - 1)
        log.warning("%s: the tables hold offsets %s, not what this task sent; going on from %d", tp,
                    {k[0]: v for k, v in floors.items()}, target)
        buffer.discard()
        buffer.committed = target
        if target <= seen:
            self.context.offset(tp, target)
            self._resync[tp] = seen

    def _skip_pre_seek(self, records: Sequence[SinkRecord]) -> Sequence[SinkRecord]:
        """After a rewind, records fetched before the seek (above what was seen) are dropped until the
        re-read begins (a record at or below it)."""
        if type(records) is SinkRecordBatch:
            records = records.records()
        out = []
        for r in records:
            tp = TopicPartition(r.original_topic, r.original_kafka_partition or 0)
            limit = self._resync.get(tp)
            if limit is not None:
                if r.original_kafka_offset > limit:
                    continue
                del self._resync[tp]
            out.append(r)
        return out

    # -- the committer ------------------------------------------------------------------------------
    def _partitions(self) -> set[TopicPartition]:
        """Every topic-partition of the connector (metadata, refreshed every 30 s)."""
        at, cached = self._all_partitions
        if time.monotonic() - at < 30 and cached:
            return cached
        assert self.channel is not None
        import re

        try:
            metadata = self.channel.consumer.list_topics(timeout=10)
        except KafkaException:
            return cached
        regex = re.compile(self._topics_regex) if self._topics_regex else None
        found = {TopicPartition(name, p) for name, topic in metadata.topics.items()
                 if name in self._topics or (regex is not None and regex.fullmatch(name))
                 for p in topic.partitions}
        self._all_partitions = (time.monotonic(), found)
        return found

    def _elect(self) -> None:
        """Run the committer here iff this task holds the connector's first topic-partition."""
        assert self.config is not None
        partitions = self._partitions()
        first = min(partitions, key=lambda tp: (tp.topic, tp.partition)) if partitions else None
        leader = first is not None and first in self.buffers
        if leader and self.coordinator is None:
            self.coordinator = Coordinator(self.config, self._settings, self._partitions)
            self.coordinator.start()
        elif not leader and self.coordinator is not None:
            self.coordinator.stop()
            self.coordinator = None

    def stop(self) -> None:
        """The committer stops first: what the drain below writes is never committed by this task anyway
        (the next owner replays it from the tables), and a committer left running would keep the control
        topic's clients past the worker's task.shutdown.graceful.timeout.ms."""
        try:
            if self.coordinator is not None:
                self.coordinator.stop()
                self.coordinator = None
        finally:
            super().stop()

    def release(self) -> None:
        try:
            if self.coordinator is not None:
                self.coordinator.stop()
                self.coordinator = None
        finally:
            if self.channel is not None:
                self.channel.close()
                self.channel = None


class IcebergSinkConnector(LakeSinkConnector):
    """Aliases ``IcebergSinkConnector``, ``IcebergSink`` and Apache Iceberg's
    ``org.apache.iceberg.connect.IcebergSinkConnector``."""

    task = IcebergSinkTask
    config_class = IcebergSinkConfig
    rules = RULES
    plugin_version = VERSION
