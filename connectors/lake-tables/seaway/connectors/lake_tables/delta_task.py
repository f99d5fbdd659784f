"""DeltaSinkTask and DeltaSinkConnector: Kafka topics into Delta Lake tables, exactly once (delta-rs).

Exactly-once as kafka-delta-ingest does it: each commit to a table carries a ``txn`` action per Kafka
partition whose sets it adds, app id ``<delta.app.id>-<partition>``, version = the last offset in the
table. On assignment a task reads the version back (``DeltaTable.transaction_version``) and goes on
from the next offset, never from the consumer group. Before writing, the task reads the versions
again and leaves out what the table holds already; delta-rs's conflict check refuses a commit when
another writer committed a txn of the same app id since the version the task read, so two writers
of one partition cannot both land its records (the loser fails with that message and its restart
resumes from the table). Commits of different partitions (other tasks) do not conflict: delta-rs
retries blind appends.

Each write of the task's writer thread is one commit per table: all the closed sets of that topic,
whatever their partitions. Checkpoints are written by delta-rs after every ``delta.checkpoint.interval``
commits (``delta.checkpoints``). Tables with ``delta.id-columns`` are upserted with a MERGE in the same
commit: the newest record of each key wins, a tombstone deletes the row.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from seaway.connect.api import ConnectError, SinkRecord, TopicPartition
from seaway.connectors.lake import (
    CommitEntry,
    CommitLog,
    DefaultPartitioner,
    FileSet,
    LakeSinkConnector,
    LakeSinkTask,
    PartitionBuffer,
    Partitioner,
    StorageConfig,
)
from seaway.connectors.lake_tables._version import VERSION
from seaway.connectors.lake_tables.delta_config import RULES, DeltaSinkConfig
from seaway.connectors.lake_tables.table_schema import compare, creation_schema, normalize, required_columns
from seaway.connectors.lake_tables.upserts import DELETED, KEY, newest_per_key, upsert_columns

__all__ = ["DeltaSinkConnector", "DeltaSinkTask", "delta_app_id"]

log = logging.getLogger(__name__)


def delta_app_id(app_id: str, partition: int) -> str:
    """kafka-delta-ingest's txn app id of a Kafka partition."""
    return f"{app_id}-{partition}"


def _load(config: DeltaSinkConfig, topic: str) -> Any:
    """The topic's DeltaTable now, or ``None`` when there is none yet."""
    from deltalake import DeltaTable
    from deltalake.exceptions import TableNotFoundError

    try:
        return DeltaTable(config.table_uri(topic), storage_options=dict(config.storage_options) or None)
    except TableNotFoundError:
        return None


def table_offset(config: DeltaSinkConfig, table: Any, partition: int) -> int | None:
    """The next offset of a partition in a Delta table (its txn version + 1)."""
    if table is None:
        return None
    version = table.transaction_version(delta_app_id(config.app_id, partition))
    return None if version is None else int(version) + 1


class DeltaWriter:
    """File sets -> one Delta commit per table (writer thread)."""

    def __init__(self, config: DeltaSinkConfig) -> None:
        self.config = config

    def commit_log(self, topic: str, partition: int) -> CommitLog:
        raise AssertionError("the Delta sink keeps its offsets in the tables")  # recover() is overridden

    def write(self, sets: Sequence[FileSet]) -> list[CommitEntry]:
        started = time.monotonic()
        by_topic: dict[str, list[FileSet]] = {}
        for s in sets:
            by_topic.setdefault(s.tp.topic, []).append(s)
        entries = []
        for topic, topic_sets in by_topic.items():
            entries += self._write_table(topic, topic_sets)
        log.info("Landed %d records of %d file sets in %d Delta commits in %.3f s", sum(len(s) for s in sets),
                 len(sets), len(by_topic), time.monotonic() - started)
        return entries

    def _write_table(self, topic: str, sets: Sequence[FileSet]) -> list[CommitEntry]:
        from deltalake import CommitProperties, PostCommitHookProperties, Transaction, write_deltalake
        from deltalake.exceptions import CommitFailedError

        config = self.config
        table = _load(config, topic)
        floors: dict[int, int | None] = {}
        pieces: list[pa.Table] = []
        last: dict[int, int] = {}
        required: set[str] = set()
        for s in sets:
            p = s.tp.partition
            if p not in floors:
                floors[p] = table_offset(config, table, p)
            floor = floors[p]
            if floor is not None and s.end < floor:
                continue  # in the table already (a write that failed after its commit landed)
            if floor is not None and s.start > floor and p not in last:
                raise ConnectError(f"Delta table {config.table_uri(topic)} holds {topic}-{p} up to offset {floor - 1}, "
                                   f"but this task's next records start at {s.start}: another writer changed it; "
                                   "restart the task to resume from the table")
            rows = s.table()
            if floor is not None and s.start < floor:
                rows = rows.filter(pc.greater_equal(pa.array(s.offsets, type=pa.int64()), floor))
            if config.id_columns:
                kept, deletes = newest_per_key(rows, [o for o in s.offsets if floor is None or o >= floor],
                                               config.id_columns, f"{topic}-{p}")
                rows = _with_deletes(kept, deletes, config.id_columns)
            elif DELETED in rows.column_names:
                rows = rows.filter(pc.invert(rows.column(DELETED))).drop_columns([DELETED, KEY])
            pieces.append(normalize(rows))
            last[p] = s.end
            required |= required_columns(s.schema, config.include_kafka_metadata)
        entries = [CommitEntry(s.tp.topic, s.tp.partition, s.start, s.end + 1) for s in sets]
        if not last:
            return entries
        data = pa.concat_tables(pieces, promote_options="permissive") if len(pieces) > 1 else pieces[0]
        data = self._check_schema(topic, table, data, required)
        commit = CommitProperties(app_transactions=[Transaction(delta_app_id(config.app_id, p), end)
                                                    for p, end in sorted(last.items())],
                                  custom_metadata={"seaway.connector": config.connector})
        hooks = PostCommitHookProperties(create_checkpoint=config.checkpoints)
        try:
            if config.id_columns and table is not None:
                self._merge(table, data, commit, hooks)
            else:
                if config.id_columns:
                    data = data.filter(pc.invert(data.column(DELETED))).drop_columns([DELETED])
                write_deltalake(
                    table if table is not None else config.table_uri(topic), data, mode="append",
                    schema_mode="merge" if config.evolve and table is not None else None,
                    partition_by=([f.split(".")[-1] for f in config.partition_fields] or None)
                    if table is None else None,
                    configuration=({"delta.checkpointInterval": str(config.checkpoint_interval),
                                    **config.table_properties} if table is None else None),
                    storage_options=dict(config.storage_options) or None,
                    target_file_size=config.target_file_size if config.target_file_size > 0 else None,
                    commit_properties=commit, post_commithook_properties=hooks)
        except CommitFailedError as e:
            raise ConnectError(f"Delta table {config.table_uri(topic)}: {e} (another writer committed offsets of "
                               f"partitions {sorted(last)} meanwhile); restart the task to resume from the "
                               "table") from e
        return entries

    def _check_schema(self, topic: str, table: Any, data: pa.Table, required: set[str]) -> pa.Table:
        config = self.config
        if table is None:
            ids = set(config.id_columns)
            return data.cast(creation_schema(data.schema, required | ids))
        target = pa.schema(table.schema().to_arrow())
        merging = DELETED in data.column_names
        # a MERGE source's delete rows hold only the id columns: nullability is the rows' matter
        rows = data.filter(pc.invert(data.column(DELETED))).drop_columns([DELETED]) if merging else data
        nullable = [c for c in rows.column_names if rows.column(c).null_count]
        change = compare(target, rows.schema, nullable)
        problems = [*change.incompatible, *(f"{c}: the table's type is narrower (Delta cannot widen it in place)"
                                            for c in change.widened),
                    *(f"{c}: the table requires it, the records have nulls" for c in change.loosened)]
        if problems:
            raise ConnectError(f"Delta table {config.table_uri(topic)}: the records have a schema the table cannot "
                               f"take ({'; '.join(problems)}). Nothing of them was written. Make the change "
                               "compatible (a new optional field), or write them to another table")
        if change.added and not config.evolve:
            data = data.drop_columns(list(change.added))
        fields = [target.field(c).with_nullable(target.field(c).nullable or merging) if c in target.names
                  else data.schema.field(c).with_nullable(True) for c in data.column_names]
        return data.cast(pa.schema(fields))

    def _merge(self, table: Any, data: pa.Table, commit: Any, hooks: Any) -> None:
        config = self.config
        columns = [c for c in data.column_names if c != DELETED]
        predicate = " AND ".join(f"t.`{c}` = s.`{c}`" for c in config.id_columns)
        values = {f"`{c}`": f"s.`{c}`" for c in columns}
        (table.merge(data, predicate, source_alias="s", target_alias="t", merge_schema=config.evolve,
                     commit_properties=commit, post_commithook_properties=hooks)
         .when_matched_delete(predicate=f"s.`{DELETED}`")
         .when_matched_update(values, predicate=f"NOT s.`{DELETED}`")
         .when_not_matched_insert(values, predicate=f"NOT s.`{DELETED}`")
         .execute())


def _with_deletes(kept: pa.Table, deletes: list[list[Any]], id_columns: Sequence[str]) -> pa.Table:
    """Rows to MERGE: the newest rows (not deleted) and one row per deleted key (id values only)."""
    kept = kept.append_column(DELETED, pa.array([False] * kept.num_rows, type=pa.bool_()))
    if not deletes:
        return kept
    for n, column in enumerate(id_columns):  # a set of tombstones only has no value columns at all
        if column not in kept.column_names:
            kept = kept.append_column(column, pa.array([d[n] for d in deletes]).slice(0, 0))
    arrays = []
    for f in kept.schema:
        if f.name == DELETED:
            arrays.append(pa.array([True] * len(deletes), type=pa.bool_()))
        elif f.name in id_columns:
            arrays.append(pa.array([d[id_columns.index(f.name)] for d in deletes]).cast(f.type))
        else:
            arrays.append(pa.nulls(len(deletes), f.type))
    return pa.concat_tables([kept, pa.Table.from_arrays(arrays, schema=kept.schema)])


class DeltaSinkTask(LakeSinkTask):
    """One task: its partitions' file sets -> Delta commits with txn actions."""

    writer_thread_name = "delta-sink-writer"

    def __init__(self) -> None:
        super().__init__()
        self.config: DeltaSinkConfig | None = None
        self._writer: DeltaWriter | None = None

    def version(self) -> str:
        return VERSION

    def parse_config(self, props: Mapping[str, str]) -> StorageConfig:
        self.config = DeltaSinkConfig.from_props(props)
        if self.config.id_columns:
            self.accepts_value_columns = False  # tombstones must reach the buffers
        return self.config

    def make_partitioner(self, config: StorageConfig) -> Partitioner:
        return DefaultPartitioner()  # one table per topic; the table's own partition columns place rows

    def start(self, props: Mapping[str, str]) -> None:
        super().start(props)
        assert self.config is not None
        self._writer = DeltaWriter(self.config)

    @property
    def writer(self) -> DeltaWriter:
        assert self._writer is not None, "start() first"
        return self._writer

    def lake_name(self) -> str:
        assert self.config is not None
        return self.config.location

    def tidy(self, tp: TopicPartition) -> None:
        """Nothing to tidy: the offsets live in the tables."""

    def new_buffer(self, tp: TopicPartition, committed: int | None) -> PartitionBuffer:
        assert self.storage is not None and self.partitioner is not None and self.config is not None
        return PartitionBuffer(tp, self.storage, self.partitioner, committed,
                               upsert_columns if self.config.id_columns else None)

    def recover(self, tp: TopicPartition) -> int | None:
        """The table's txn version of the partition, + 1."""
        assert self.config is not None
        return table_offset(self.config, _load(self.config, tp.topic), tp.partition)

    def filter_records(self, records: Sequence[SinkRecord]) -> Sequence[SinkRecord]:
        if self.accepts_value_columns and any(r.value is None for r in records):
            return [r for r in records if r.value is not None]  # tombstones matter to upsert tables only
        return records


class DeltaSinkConnector(LakeSinkConnector):
    """Aliases ``DeltaSinkConnector`` and ``DeltaSink``."""

    task = DeltaSinkTask
    config_class = DeltaSinkConfig
    rules = RULES
    plugin_version = VERSION
