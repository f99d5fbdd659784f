"""File-set boundaries for one Kafka partition: flush.size, record time, schema changes, schedule.

Records of one Kafka partition accumulate in an *open set*; each set becomes one data file
per partitioner folder, all committed together. A set is closed:

* after its ``flush.size``-th record;
* before a record whose time (Kafka timestamp, or the time partitioner's extractor) is at
  least ``rotate.interval.ms`` after the set's first timed record (so a file spans less
  than the interval of record time);
* before a record whose value schema starts a new file under ``schema.compatibility``:
  NONE: any change; BACKWARD/FULL: a newer schema version (older records are projected to
  the set's schema); FORWARD: an older version (newer records are projected down);
* by ``rotate.schedule.interval.ms`` on the wall clock (when enabled), at the first ``put``
  after a boundary (multiples of the interval in ``timezone``).

All rules but the last depend only on the records, so a replay cuts the same sets and names
the same files. Records below the lake's committed offset are dropped (already landed).
"""

from __future__ import annotations

import datetime
import zoneinfo
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from seaway.connect.api import DataError, Schema, SchemaType, SinkRecord, TopicPartition
from seaway.connectors.lake.columns import metadata_arrays, metadata_fields, project_struct, value_columns
from seaway.connectors.lake.config import StorageConfig
from seaway.connectors.lake.partitioner import Partitioner

__all__ = ["ExtraColumns", "FileSet", "FolderPart", "PartitionBuffer"]

#: Columns a sink adds to every row from its records (e.g. the table sinks' tombstone marker and record
#: key for upserts): the fields and one array per field, aligned with ``records``.
ExtraColumns = Callable[[Sequence[SinkRecord]], tuple[list[pa.Field], list[pa.Array]]]


@dataclass(frozen=True, slots=True)
class FolderPart:
    """The rows of a file set that go to one folder: one output file, offsets ``first``..``last``."""

    folder: str
    table: pa.Table
    first: int
    last: int

    @property
    def count(self) -> int:
        return int(self.table.num_rows)


@dataclass(slots=True, eq=False)
class FileSet:
    """Closed (or still open) records of one Kafka partition: offsets ``start``..``end``, as Arrow.

    Records are converted to Arrow once per ``add`` (:meth:`seal`) and only their offsets and
    folders stay as Python lists (of untracked ints and strs). Holding the SinkRecords until
    the set is written would keep ``flush.size`` x partitions records of several objects each
    alive, and every full pass of Python's cyclic GC walks all of them: measured, that was a
    third of the task thread's time at 300,000 buffered records.
    """

    tp: TopicPartition
    schema: Schema | None
    include_metadata: bool = False
    offsets: list[int] = field(default_factory=list)
    folders: list[str] = field(default_factory=list)
    chunks: list[pa.RecordBatch] = field(default_factory=list)
    pending: list[SinkRecord] = field(default_factory=list)
    base_time: int | None = None
    deadline_ms: int | None = None
    #: columns appended to every row from its record (see :data:`ExtraColumns`); ``None``: none
    extras: ExtraColumns | None = None

    @property
    def start(self) -> int:
        return self.offsets[0]

    @property
    def end(self) -> int:
        return self.offsets[-1]

    def __len__(self) -> int:
        return len(self.offsets)

    def append(self, record: SinkRecord, folder: str) -> None:
        self.pending.append(record)
        self.offsets.append(record.original_kafka_offset)
        self.folders.append(folder)

    def extend(self, records: Sequence[SinkRecord], folders: Sequence[str]) -> None:
        self.pending.extend(records)
        self.offsets.extend([r.original_kafka_offset for r in records])
        self.folders.extend(folders)

    def extend_columns(self, offsets: Sequence[int], folder: str, columns: Sequence[Sequence[Any]]) -> None:
        """Add records given as their STRUCT values' field columns (all in ``folder``; no metadata
        columns): converted to one Arrow record batch at once, as :meth:`seal` converts records."""
        self.seal()  # records added before these come first
        assert not self.include_metadata and self.extras is None, "metadata and extra columns need the records"
        plan = value_columns(self.schema)
        assert plan.build_columns is not None, "value columns need a STRUCT schema"
        self.offsets.extend(offsets)
        self.folders.extend([folder] * len(offsets))
        self.chunks.append(pa.RecordBatch.from_arrays(plan.build_columns(columns), schema=pa.schema(plan.fields)))

    def seal(self) -> None:
        """Convert the records added since the last seal into one Arrow record batch."""
        if not self.pending:
            return
        columns = value_columns(self.schema)
        arrays = columns.build([r.value for r in self.pending])
        fields = list(columns.fields)
        if self.include_metadata:
            arrays += metadata_arrays(self.pending)
            fields += metadata_fields()
        if self.extras is not None:
            extra_fields, extra_arrays = self.extras(self.pending)
            fields += extra_fields
            arrays += extra_arrays
        self.chunks.append(pa.RecordBatch.from_arrays(arrays, schema=pa.schema(fields)))
        self.pending = []

    def table(self) -> pa.Table:
        """Every row of the set, in offset order, as one contiguous Arrow table."""
        self.seal()
        return pa.Table.from_batches(self.chunks).combine_chunks()

    def by_folder(self) -> list[FolderPart]:
        """The set split into one part per folder (first-seen order), rows in offset order in each.

        The grouping runs in Arrow (dictionary-encode the folders, a stable sort of the codes),
        not in a Python loop over rows.
        """
        table = self.table()
        if self.folders.count(self.folders[0]) == len(self.folders):
            return [FolderPart(self.folders[0], table, self.offsets[0], self.offsets[-1])]
        codes = pa.array(self.folders, type=pa.string()).dictionary_encode()
        names = codes.dictionary.to_pylist()
        order = pc.sort_indices(codes.indices)  # stable: offsets stay in order within a folder
        counts = pc.value_counts(codes.indices)
        sizes = dict(zip(counts.field("values").to_pylist(), counts.field("counts").to_pylist(), strict=True))
        table = table.take(order)
        offsets = pa.array(self.offsets, type=pa.int64()).take(order)
        parts: list[FolderPart] = []
        pos = 0
        for code in range(len(names)):  # dictionary codes are numbered in first-seen order
            size = sizes[code]
            parts.append(FolderPart(names[code], table.slice(pos, size), offsets[pos].as_py(),
                                    offsets[pos + size - 1].as_py()))
            pos += size
        return parts


class PartitionBuffer:
    """The open set of one Kafka partition and the rules that close it."""

    def __init__(self, tp: TopicPartition, config: StorageConfig, partitioner: Partitioner,
                 committed: int | None = None, extras: ExtraColumns | None = None) -> None:
        self.tp = tp
        self.config = config
        self.partitioner = partitioner
        self.committed = committed
        #: columns every set of this partition adds from its records (:data:`ExtraColumns`)
        self.extras = extras
        self.open: FileSet | None = None
        self._tz = zoneinfo.ZoneInfo(config.timezone)

    def _new_set(self, schema: Schema | None, now_ms: int) -> FileSet:
        fs = FileSet(self.tp, schema, self.config.include_kafka_metadata, extras=self.extras)
        interval = self.config.rotate_schedule_interval_ms
        if interval > 0:
            offset = datetime.datetime.fromtimestamp(now_ms / 1000, self._tz).utcoffset()
            shift = int(offset.total_seconds() * 1000) if offset is not None else 0
            fs.deadline_ms = ((now_ms + shift) // interval + 1) * interval - shift
        return fs

    def _fits_schema(self, record: SinkRecord, current: FileSet) -> SinkRecord | None:
        """``record`` (maybe projected) if it may join ``current``; ``None`` to rotate first."""
        new, cur = record.value_schema, current.schema
        if new is cur or new == cur or record.value is None:
            return record
        mode = self.config.schema_compatibility
        if mode == "NONE" or new is None or cur is None:
            return None
        if new.version is None or cur.version is None:
            raise DataError(f"schema.compatibility={mode} needs versioned value schemas (e.g. from the "
                            f"schema registry); {record.topic}-{record.kafka_partition}@{record.kafka_offset} "
                            "has none")
        newer = new.version > cur.version
        if new.version == cur.version or (mode in ("BACKWARD", "FULL")) == newer:
            return None
        if new.type is not SchemaType.STRUCT or cur.type is not SchemaType.STRUCT:
            return None
        return record.new_record(value_schema=cur, value=project_struct(record.value, cur))

    def add(self, records: Sequence[SinkRecord], now_ms: int) -> list[FileSet]:
        """Buffer records (in offset order); return the sets they closed."""
        if self.committed is not None:
            records = [r for r in records if r.original_kafka_offset >= self.committed]
        if not records:
            return []
        folders = self.partitioner.encode_batch(records)
        schema = self.open.schema if self.open is not None else records[0].value_schema
        if self.config.rotate_interval_ms <= 0 and all(r.value_schema is schema for r in records):
            closed = self._add_same_schema(records, folders, now_ms)
        else:
            closed = self._add_each(records, folders, now_ms)
        for file_set in closed:
            file_set.seal()
        if self.open is not None:
            self.open.seal()
        return closed

    def add_columns(self, schema: Schema, offsets: Sequence[int], columns: Sequence[Sequence[Any]], now_ms: int,
                    records: Callable[[], Sequence[SinkRecord]]) -> list[FileSet]:
        """``add`` for records given as columns (a :class:`SinkRecordBatch`'s ``record_value_columns``:
        non-null Structs of ``schema``, in offset order); the same sets, without a SinkRecord.

        Columns fit when only ``flush.size`` can cut (no ``rotate.interval.ms``), the folder
        does not depend on the record, no metadata column is wanted, the open set has this
        schema and no record is below the committed offset; otherwise the records (built by
        ``records()``) go through :meth:`add`.
        """
        config, current = self.config, self.open
        folder = self.partitioner.partition_folder(self.tp.topic, self.tp.partition)
        if folder is None or config.rotate_interval_ms > 0 or config.include_kafka_metadata \
                or self.extras is not None \
                or (current is not None and current.schema is not schema and current.schema != schema) \
                or (self.committed is not None and offsets and min(offsets) < self.committed) \
                or value_columns(schema).build_columns is None:
            return self.add(records(), now_ms)
        closed: list[FileSet] = []
        flush_size, count, pos = config.flush_size, len(offsets), 0
        while pos < count:
            if current is None:
                current = self._new_set(schema, now_ms)
            stop = pos + min(max(flush_size - len(current), 1), count - pos)
            whole = pos == 0 and stop == count
            current.extend_columns(offsets if whole else offsets[pos:stop], folder,
                                   columns if whole else [column[pos:stop] for column in columns])
            pos = stop
            if len(current) >= flush_size:
                closed.append(current)
                current = None
        self.open = current
        return closed

    def _add_each(self, records: Sequence[SinkRecord], folders: list[str], now_ms: int) -> list[FileSet]:
        """``add``, one record at a time: every rule may cut anywhere."""
        closed: list[FileSet] = []
        flush_size, interval = self.config.flush_size, self.config.rotate_interval_ms
        record_time = self.partitioner.record_time
        current = self.open
        for record, folder in zip(records, folders, strict=True):
            if current is not None:
                fitted = self._fits_schema(record, current)
                if fitted is None:
                    closed.append(current)
                    current = None
                else:
                    record = fitted
            ts = record_time(record) if interval > 0 else None
            if current is not None and ts is not None and current.base_time is not None \
                    and ts - current.base_time >= interval:
                closed.append(current)
                current = None
            if current is None:
                current = self._new_set(record.value_schema, now_ms)
            if current.base_time is None:
                current.base_time = ts
            current.append(record, folder)
            if len(current) >= flush_size:
                closed.append(current)
                current = None
        self.open = current
        return closed

    def _add_same_schema(self, records: Sequence[SinkRecord], folders: list[str], now_ms: int) -> list[FileSet]:
        """``add`` when only ``flush.size`` can close a set (no record-time rotation, one schema
        object throughout): the same sets, cut by slicing instead of a step per record."""
        closed: list[FileSet] = []
        flush_size, current, pos = self.config.flush_size, self.open, 0
        while pos < len(records):
            if current is None:
                current = self._new_set(records[pos].value_schema, now_ms)
            stop = pos + min(max(flush_size - len(current), 1), len(records) - pos)
            current.extend(records[pos:stop], folders[pos:stop])
            pos = stop
            if len(current) >= flush_size:
                closed.append(current)
                current = None
        self.open = current
        return closed

    def due(self, now_ms: int) -> FileSet | None:
        """The open set, taken, if the wall-clock schedule says it is time to commit it."""
        current = self.open
        if current is None or current.deadline_ms is None or now_ms < current.deadline_ms:
            return None
        self.open = None
        return current

    def take_open(self) -> FileSet | None:
        """The open set, taken (closed now whatever the rules say: a table sink's commit closes it)."""
        current, self.open = self.open, None
        return current

    def discard(self) -> None:
        """Drop the open set (partition closed: the next owner replays it from the lake's offset)."""
        self.open = None
