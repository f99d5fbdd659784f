"""Closed file sets to visible, committed Parquet files: Arrow table -> Parquet -> temp -> visible -> committed.

On a ``file://`` lake (``parquet.writer=auto``, the default) pyarrow writes each file straight into
the set's temp folder: the same Arrow table, encoded by Arrow's C++ Parquet writer in the writer
thread (the GIL is released), without a Spark job. A Spark job re-reads the Arrow batches in the
JVM, turns them into rows and encodes them with parquet-mr: on the 2-core development machine
that was ~0.9 s of JVM CPU per 150,000 rows against ~0.03 s for pyarrow, plus the JIT work each
new query plan costs, all competing with the task threads for the same cores. On any other file
system (``hdfs://``, ``s3a://``), or with ``parquet.writer=spark``, files are written by Spark:

Sets handed to one :meth:`LakeWriter.write` (everything the task queued while the previous
write ran) whose columns agree are written by **one** Spark job (a job costs ~0.3-0.5 s of
driver and JIT work however small): their Arrow tables are concatenated with a ``__seaway_file``
column numbering the output files, and ``df.coalesce(1).write.partitionBy("__seaway_file")``
writes exactly one part file per output file into a staging folder. Each part file is then
renamed to the set's temp folder and, per set, the commit protocol of
:mod:`~seaway.connectors.lake.commit_log` makes them visible and commits the offsets.
"""

from __future__ import annotations

import logging
import os
import time
import urllib.parse
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from seaway.connectors.lake.commit_log import CommitEntry, CommitLog, FileMove
from seaway.connectors.lake.naming import data_file_name
from seaway.connectors.lake.rotation import FileSet
from seaway.connectors.spark_sink.config import SparkSinkConfig
from seaway.connectors.spark_sink.lake import TMP_DIR, LakeFileSystem

__all__ = ["FAULT_EXIT_CODE", "FILE_COLUMN", "LakeWriter", "arrow_table", "spark_write"]

log = logging.getLogger(__name__)
FILE_COLUMN = "__seaway_file"
FAULT_EXIT_CODE = 77


def arrow_table(file_set: FileSet) -> tuple[pa.Table, list[str]]:
    """The set's rows as Arrow (plus the file-number column), and the folder of each file number.

    Rows are grouped by folder (stable, so offsets stay in order within a file).
    """
    table = file_set.table()
    folders = list(dict.fromkeys(file_set.folders))
    if len(folders) == 1:
        return table.append_column(pa.field(FILE_COLUMN, pa.int32()),
                                   pa.repeat(pa.scalar(0, pa.int32()), table.num_rows)), folders
    number = {f: i for i, f in enumerate(folders)}
    numbers = pa.array([number[f] for f in file_set.folders], type=pa.int32())
    table = table.append_column(pa.field(FILE_COLUMN, pa.int32()), numbers)
    return table.take(pc.sort_indices(numbers)), folders  # Arrow's sort is stable


def spark_write(spark: Any, table: pa.Table, uri: str, codec: str) -> None:
    """One Spark job: ``table`` -> DataFrame -> one Parquet part file per ``FILE_COLUMN`` value under ``uri``.

    (The session's warm-up runs this very function, so the JVM compiles this path before
    the first real write; see :mod:`~seaway.connectors.spark_sink.session`.)
    """
    df = spark.createDataFrame(table)
    (df.coalesce(1).write.partitionBy(FILE_COLUMN).option("compression", codec)
     .option("maxRecordsPerFile", 0).mode("errorifexists").parquet(uri))


class LakeWriter:
    """Writes and commits file sets for one task (uses the process's shared SparkSession)."""

    def __init__(self, spark: Any, lake: LakeFileSystem, config: SparkSinkConfig) -> None:
        self.spark = spark
        self.lake = lake
        self.config = config
        self.logs: dict[tuple[str, int], CommitLog] = {}
        uri = urllib.parse.urlparse(config.lake_path)
        #: the lake's folder when pyarrow writes the files (a file:// lake, parquet.writer=auto)
        self.local_root = Path(urllib.parse.unquote(uri.path)) \
            if uri.scheme == "file" and config.parquet_writer == "auto" else None

    def commit_log(self, topic: str, partition: int) -> CommitLog:
        key = (topic, partition)
        if key not in self.logs:
            self.logs[key] = CommitLog(self.lake, topic, partition)
        return self.logs[key]

    def write(self, sets: Sequence[FileSet]) -> list[CommitEntry]:
        """Write, make visible and commit ``sets`` (in order per partition); the commits made."""
        moves: dict[int, list[FileMove]] = {}
        started = time.monotonic()
        if self.local_root is not None:
            for s in sets:
                moves[id(s)] = self._write_local(s, self.local_root)
        else:
            groups: dict[bytes, list[tuple[FileSet, pa.Table, list[str]]]] = {}
            for s in sets:
                table, folders = arrow_table(s)
                groups.setdefault(table.schema.serialize().to_pybytes(), []).append((s, table, folders))
            for members in groups.values():
                self._write_group(members, moves)
        written = time.monotonic()
        entries = []
        for s in sets:
            entry = CommitEntry(s.tp.topic, s.tp.partition, s.start, s.end + 1, tuple(moves[id(s)]))
            self._publish(entry)
            entries.append(entry)
        log.info("Landed %d records in %d file sets: %s %.3f s, commit %.3f s", sum(len(s) for s in sets),
                 len(sets), "Spark" if self.local_root is None else "pyarrow", written - started,
                 time.monotonic() - written)
        return entries

    def _write_local(self, s: FileSet, root: Path) -> list[FileMove]:
        """pyarrow writes one temp file per folder of the set under ``root`` (a file:// lake)."""
        moves = []
        folder = root / TMP_DIR / s.tp.topic / str(s.tp.partition)
        folder.mkdir(parents=True, exist_ok=True)
        for part in s.by_folder():
            temp = f"{TMP_DIR}/{s.tp.topic}/{s.tp.partition}/{uuid.uuid4().hex}.parquet"
            pq.write_table(part.table, root / temp, compression=self.config.parquet_codec)
            final = f"{part.folder}/{data_file_name(s.tp.topic, s.tp.partition, part.first, part.last)}"
            moves.append(FileMove(temp, final, part.first, part.last, part.count))
        return moves

    def _write_group(self, members: list[tuple[FileSet, pa.Table, list[str]]],
                     moves: dict[int, list[FileMove]]) -> None:
        tables: list[pa.Table] = []
        owners: list[tuple[FileSet, str, bool]] = []  # (set, folder, whether the set has only this folder)
        base = 0
        for s, table, folders in members:
            if base:
                numbers = pc.add(table.column(FILE_COLUMN), pa.scalar(base, pa.int32()))
                table = table.set_column(table.schema.get_field_index(FILE_COLUMN), FILE_COLUMN, numbers)
            tables.append(table)
            owners.extend((s, folder, len(folders) == 1) for folder in folders)
            base += len(folders)
        staging = f"{TMP_DIR}/_staging/{uuid.uuid4().hex}"
        spark_write(self.spark, pa.concat_tables(tables), self.lake.uri(staging), self.config.parquet_codec)
        for number, (s, folder, single) in enumerate(owners):
            source = self._single_part(f"{staging}/{FILE_COLUMN}={number}")
            temp = f"{TMP_DIR}/{s.tp.topic}/{s.tp.partition}/{uuid.uuid4().hex}.parquet"
            if not self.lake.rename(source, temp):
                raise OSError(f"could not move {source} to {temp} in {self.lake.root}")
            offsets = s.offsets if single else [o for o, f in zip(s.offsets, s.folders, strict=True) if f == folder]
            final = f"{folder}/{data_file_name(s.tp.topic, s.tp.partition, offsets[0], offsets[-1])}"
            moves.setdefault(id(s), []).append(FileMove(temp, final, offsets[0], offsets[-1], len(offsets)))
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
