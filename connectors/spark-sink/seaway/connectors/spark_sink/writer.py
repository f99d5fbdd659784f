"""Closed file sets to visible, committed Parquet files: Arrow table -> Spark DataFrame -> Parquet.

Sets closed in the same ``put`` whose columns agree are written by **one** Spark job (a job
costs ~0.3 s however small): their Arrow tables are concatenated with a ``__seaway_file``
column numbering the output files, and ``df.coalesce(1).write.partitionBy("__seaway_file")``
writes exactly one part file per output file into a staging folder. Each part file is then
renamed to the set's temp folder and, per set, the commit protocol of
:mod:`~seaway.connectors.spark_sink.commit_log` makes them visible and commits the offsets.
"""

from __future__ import annotations

import logging
import os
import time
import uuid
from collections.abc import Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from seaway.connectors.spark_sink.columns import metadata_arrays, metadata_fields, value_columns
from seaway.connectors.spark_sink.commit_log import CommitEntry, CommitLog, FileMove
from seaway.connectors.spark_sink.config import SparkSinkConfig
from seaway.connectors.spark_sink.lake import TMP_DIR, LakeFileSystem, data_file_name
from seaway.connectors.spark_sink.rotation import FileSet

__all__ = ["FAULT_EXIT_CODE", "FILE_COLUMN", "LakeWriter", "arrow_table"]

log = logging.getLogger(__name__)
FILE_COLUMN = "__seaway_file"
FAULT_EXIT_CODE = 77


def arrow_table(file_set: FileSet, include_metadata: bool) -> tuple[pa.Table, list[str]]:
    """The set's rows as Arrow (plus the file-number column), and the folder of each file number.

    Rows are grouped by folder (stable, so offsets stay in order within a file).
    """
    columns = value_columns(file_set.schema)
    records = file_set.records
    arrays = columns.build([r.value for r in records])
    fields = list(columns.fields)
    if include_metadata:
        arrays += metadata_arrays(records)
        fields += metadata_fields()
    folders = list(dict.fromkeys(file_set.folders))
    number = {f: i for i, f in enumerate(folders)}
    arrays.append(pa.array([number[f] for f in file_set.folders], type=pa.int32()))
    fields.append(pa.field(FILE_COLUMN, pa.int32()))
    table = pa.Table.from_arrays(arrays, schema=pa.schema(fields))
    if len(folders) > 1:
        table = table.take(pa.array(sorted(range(len(records)), key=lambda i: number[file_set.folders[i]])))
    return table, folders


class LakeWriter:
    """Writes and commits file sets for one task (uses the process's shared SparkSession)."""

    def __init__(self, spark: Any, lake: LakeFileSystem, config: SparkSinkConfig) -> None:
        self.spark = spark
        self.lake = lake
        self.config = config
        self.logs: dict[tuple[str, int], CommitLog] = {}

    def commit_log(self, topic: str, partition: int) -> CommitLog:
        key = (topic, partition)
        if key not in self.logs:
            self.logs[key] = CommitLog(self.lake, topic, partition)
        return self.logs[key]

    def write(self, sets: Sequence[FileSet]) -> list[CommitEntry]:
        """Write, make visible and commit ``sets`` (in order per partition); the commits made."""
        groups: dict[bytes, list[tuple[FileSet, pa.Table, list[str]]]] = {}
        for s in sets:
            table, folders = arrow_table(s, self.config.include_kafka_metadata)
            groups.setdefault(table.schema.serialize().to_pybytes(), []).append((s, table, folders))
        moves: dict[int, list[FileMove]] = {}
        started = time.monotonic()
        for members in groups.values():
            self._write_group(members, moves)
        written = time.monotonic()
        entries = []
        for s in sets:
            entry = CommitEntry(s.tp.topic, s.tp.partition, s.start, s.end + 1, tuple(moves[id(s)]))
            self._publish(entry)
            entries.append(entry)
        log.info("Landed %d records in %d file sets: Spark %.3f s, commit %.3f s", sum(len(s.records) for s in sets),
                 len(sets), written - started, time.monotonic() - written)
        return entries

    def _write_group(self, members: list[tuple[FileSet, pa.Table, list[str]]],
                     moves: dict[int, list[FileMove]]) -> None:
        tables: list[pa.Table] = []
        owners: list[tuple[FileSet, str]] = []
        base = 0
        for s, table, folders in members:
            if base:
                numbers = pc.add(table.column(FILE_COLUMN), pa.scalar(base, pa.int32()))
                table = table.set_column(table.schema.get_field_index(FILE_COLUMN), FILE_COLUMN, numbers)
            tables.append(table)
            owners.extend((s, folder) for folder in folders)
            base += len(folders)
        staging = f"{TMP_DIR}/_staging/{uuid.uuid4().hex}"
        df = self.spark.createDataFrame(pa.concat_tables(tables))
        (df.coalesce(1).write.partitionBy(FILE_COLUMN).option("compression", self.config.parquet_codec)
         .option("maxRecordsPerFile", 0).mode("errorifexists").parquet(self.lake.uri(staging)))
        for number, (s, folder) in enumerate(owners):
            source = self._single_part(f"{staging}/{FILE_COLUMN}={number}")
            temp = f"{TMP_DIR}/{s.tp.topic}/{s.tp.partition}/{uuid.uuid4().hex}.parquet"
            if not self.lake.rename(source, temp):
                raise OSError(f"could not move {source} to {temp} in {self.lake.root}")
            rows = s.records if len(set(s.folders)) == 1 else \
                [r for r, f in zip(s.records, s.folders, strict=True) if f == folder]
            first, last = rows[0].original_kafka_offset, rows[-1].original_kafka_offset
            final = f"{folder}/{data_file_name(s.tp.topic, s.tp.partition, first, last)}"
            moves.setdefault(id(s), []).append(
                FileMove(temp, final, first, last, len(rows)))
        self.lake.delete(staging, recursive=True)

    def _single_part(self, folder: str) -> str:
        parts = [n for n in self.lake.list_names(folder) if n.endswith(".parquet") and not n.startswith(".")]
        if len(parts) != 1:
            raise OSError(f"expected one Parquet part file in {folder}, found {parts}")
        return f"{folder}/{parts[0]}"

    def _publish(self, entry: CommitEntry) -> None:
        """Steps 2-5 of the commit protocol for one set."""
        log_ = self.commit_log(entry.topic, entry.partition)
        log_.begin(entry)
        for f in entry.files:
            if self.lake.exists(f.final):
                # the same offsets of the same partition: a deterministic replay wrote it before
                self.lake.delete(f.temp)
            elif not self.lake.rename(f.temp, f.final):
                raise OSError(f"could not rename {f.temp} to {f.final} in {self.lake.root}")
            if self.config.fault_exit_after_rename:
                log.error("seaway.test.fault.exit.after.rename: exiting after making %s visible", f.final)
                logging.shutdown()
                os._exit(FAULT_EXIT_CODE)
        log_.commit(entry)
