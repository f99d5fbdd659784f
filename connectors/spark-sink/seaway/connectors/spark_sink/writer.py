"""Closed file sets to visible, committed Parquet files: Arrow -> a Spark job -> temp -> visible -> committed.

Spark writes the files (``parquet.writer`` unset, or ``spark``), on every file system, so Spark's
Parquet settings (``spark.sql.parquet.*``), its output committers and its cluster apply: with
``spark.master=spark://...`` (or YARN, Kubernetes) the Parquet encoding runs on the cluster's
executors. The sets handed to one :meth:`LakeWriter.write` (everything the task queued while the
previous write ran) whose columns agree are written by **one** Spark job, however many files they
make: a job costs ~0.3-0.5 s of driver and JIT work however small.

How one job makes exactly one Parquet file per output file, without a shuffle or a sort: each
output file (a set's rows in one partitioner folder) becomes one Arrow record batch, and
``spark.createDataFrame(arrow_table)`` makes one Spark partition of each batch (with
``spark.sql.execution.arrow.localRelationThreshold=0`` the batches travel to the executors as
Arrow bytes; ``spark.sql.execution.arrow.maxRecordsPerBatch`` is raised, if needed, so no batch
is cut). Each task writes its partition as ``part-<partition number>-...parquet`` into a staging
folder (in the temp folder of the first set's Kafka partition), so the part number names the output
file. The part files are the sets' temp files: per set, the commit protocol of
:mod:`~seaway.connectors.lake.commit_log` renames them to their final names (one rename each: on
object stores, where a rename is a copy, one copy) and commits the offsets; then the staging folder
goes. A crash before that leaves the staging folder to the recovery of its Kafka partition, which
empties that partition's temp folder; a pending set of another partition whose part file it held
is then rolled back and replayed (never adopted half).

``parquet.writer=pyarrow`` (a ``file://`` lake only) instead has pyarrow encode each file straight
into the temp folder in the worker's writer thread (the GIL released): no JVM work at all, which
on one small machine lands more records per second; ``auto`` picks it for ``file://`` lakes.
"""

from __future__ import annotations

import logging
import os
import re
import threading
import time
import urllib.parse
import uuid
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from seaway.connect.api import ConnectError
from seaway.connectors.lake.commit_log import CommitEntry, CommitLog, FileMove
from seaway.connectors.lake.naming import data_file_name
from seaway.connectors.lake.rotation import FileSet, FolderPart
from seaway.connectors.spark_sink.config import SparkSinkConfig
from seaway.connectors.spark_sink.lake import LakeFileSystem

__all__ = ["FAULT_EXIT_CODE", "JOB_DESCRIPTION", "LakeWriter", "spark_write"]

log = logging.getLogger(__name__)
FAULT_EXIT_CODE = 77
#: the description of the sink's write jobs (Spark UI, event log), followed by what they write
JOB_DESCRIPTION = "seaway spark sink:"
MAX_RECORDS_PER_BATCH = "spark.sql.execution.arrow.maxRecordsPerBatch"
_PART = re.compile(r"^part-(\d+)-.+\.parquet$")
#: Kafka partitions whose sets are published at once (each a few metadata round trips)
PUBLISH_THREADS = 8
_batch_lock = threading.Lock()  # raising maxRecordsPerBatch and reading it in createDataFrame, as one step


def spark_write(spark: Any, tables: Sequence[pa.Table], uri: str, codec: str, description: str = "") -> None:
    """One Spark job: ``tables[i]`` -> ``<uri>/part-<i>-....parquet``, one file each, in parallel on the executors.

    ``tables`` share one schema. (The session's warm-up runs this very function, so the JVM
    compiles this path before the first real write; see :mod:`~seaway.connectors.spark_sink.session`.)
    """
    batches: list[pa.RecordBatch] = []
    for table in tables:
        one = table.combine_chunks().to_batches()
        if len(one) != 1:
            raise ValueError(f"a table of {table.num_rows} rows did not make one Arrow batch")
        batches.extend(one)
    largest = max(b.num_rows for b in batches)
    context = spark.sparkContext
    context.setJobDescription(f"{JOB_DESCRIPTION} {description or f'{len(batches)} files'}")
    try:
        with _batch_lock:  # createDataFrame cuts batches at this size: one batch must stay one partition
            current = int(spark.conf.get(MAX_RECORDS_PER_BATCH) or 0)
            if not 0 < largest <= current:
                spark.conf.set(MAX_RECORDS_PER_BATCH, str(max(largest, 10_000)))
            df = spark.createDataFrame(pa.Table.from_batches(batches))
        (df.write.option("compression", codec).option("maxRecordsPerFile", 0).mode("errorifexists")
         .parquet(uri))
    finally:
        context.setJobDescription(None)


class LakeWriter:
    """Writes and commits file sets for one task (uses the process's shared SparkSession)."""

    def __init__(self, spark: Any, lake: LakeFileSystem, config: SparkSinkConfig) -> None:
        self.spark = spark
        self.lake = lake
        self.config = config
        self.logs: dict[tuple[str, int], CommitLog] = {}
        self._staging: list[str] = []  # staging folders of the write in progress
        self._pool: ThreadPoolExecutor | None = None  # publishes the sets of several partitions at once
        uri = urllib.parse.urlparse(config.lake_path)
        pyarrow = config.parquet_writer == "pyarrow" or (config.parquet_writer == "auto" and uri.scheme == "file")
        #: the lake's folder when pyarrow writes the files (parquet.writer=pyarrow, or auto on a file:// lake)
        self.local_root = Path(urllib.parse.unquote(uri.path)) if pyarrow else None

    def commit_log(self, topic: str, partition: int) -> CommitLog:
        key = (topic, partition)
        if key not in self.logs:
            # a delete is one cheap call on Hadoop file systems: pending records go at once (step 5)
            self.logs[key] = CommitLog(self.lake, topic, partition, garbage_batch=1)
        return self.logs[key]

    def write(self, sets: Sequence[FileSet]) -> list[CommitEntry]:
        """Write, make visible and commit ``sets`` (in order per partition); the commits made."""
        moves: dict[int, list[FileMove]] = {}
        started = time.monotonic()
        parts = [(s, s.by_folder()) for s in sets]
        if self.local_root is not None:
            for s, folders in parts:
                moves[id(s)] = self._write_local(s, folders, self.local_root)
            jobs = 0
        else:
            groups: dict[pa.Schema, list[tuple[FileSet, FolderPart]]] = {}
            for s, folders in parts:
                for part in folders:
                    groups.setdefault(part.table.schema, []).append((s, part))
            self._staging.clear()  # a failed write's folders: its partitions' recovery empties their temp folders
            for members in groups.values():
                self._write_group(members, moves)
            jobs = len(groups)
        written = time.monotonic()
        entries = [CommitEntry(s.tp.topic, s.tp.partition, s.start, s.end + 1, tuple(moves[id(s)])) for s in sets]
        self._publish_all(entries)
        while self._staging:  # every part file has moved to its final name
            self.lake.delete(self._staging.pop(), recursive=True)
        log.info("Landed %d records in %d file sets: %s %.3f s, commit %.3f s", sum(len(s) for s in sets),
                 len(sets), f"{jobs} Spark jobs" if self.local_root is None else "pyarrow", written - started,
                 time.monotonic() - written)
        return entries

    def _write_local(self, s: FileSet, parts: list[FolderPart], root: Path) -> list[FileMove]:
        """pyarrow writes one temp file per folder of the set under ``root`` (a file:// lake)."""
        moves = []
        temp_dir = self.lake.temp_dir(s.tp.topic, s.tp.partition)
        (root / temp_dir).mkdir(parents=True, exist_ok=True)
        for part in parts:
            temp = f"{temp_dir}/{uuid.uuid4().hex}.parquet"
            pq.write_table(part.table, root / temp, compression=self.config.parquet_codec)
            final = f"{part.folder}/{data_file_name(s.tp.topic, s.tp.partition, part.first, part.last)}"
            moves.append(FileMove(temp, final, part.first, part.last, part.count))
        return moves

    def _write_group(self, members: list[tuple[FileSet, FolderPart]], moves: dict[int, list[FileMove]]) -> None:
        """One Spark job for the output files of ``members`` (one schema), each moved to its set's temp folder."""
        first = members[0][0].tp
        staging = f"{self.lake.temp_dir(first.topic, first.partition)}/_staging-{uuid.uuid4().hex}"
        rows = sum(part.count for _, part in members)
        spark_write(self.spark, [part.table for _, part in members], self.lake.uri(staging),
                    self.config.parquet_codec, f"{len(members)} files, {rows} records")
        files = self._part_files(staging, len(members))
        for (s, part), name in zip(members, files, strict=True):  # the part files are the sets' temp files
            final = f"{part.folder}/{data_file_name(s.tp.topic, s.tp.partition, part.first, part.last)}"
            moves.setdefault(id(s), []).append(FileMove(f"{staging}/{name}", final, part.first, part.last,
                                                        part.count))
        self._staging.append(staging)

    def _part_files(self, staging: str, count: int) -> list[str]:
        """The job's part files in partition order: ``part-00000-...`` holds the first table, and so on."""
        by_number: dict[int, str] = {}
        for name in self.lake.list_names(staging):
            m = _PART.match(name)
            if m and int(m.group(1)) in by_number:
                raise ConnectError(f"two part files of one partition in {self.lake.uri(staging)}: {name}, "
                                   f"{by_number[int(m.group(1))]}")
            if m:
                by_number[int(m.group(1))] = name
        if sorted(by_number) != list(range(count)):
            raise ConnectError(f"expected part files 0..{count - 1} in {self.lake.uri(staging)}, found "
                               f"{sorted(by_number)}: the Spark job did not write one file per Arrow batch")
        return [by_number[i] for i in range(count)]

    def _publish_all(self, entries: list[CommitEntry]) -> None:
        """Publish the sets: in order within a Kafka partition, partitions side by side.

        Each step is a round trip to the file system's metadata service, and creating a small file
        on HDFS waits for the NameNode to complete it (the client polls from a 400 ms back-off), so a
        set's commit takes tenths of a second there however small; partitions' logs are independent.
        """
        by_partition: dict[tuple[str, int], list[CommitEntry]] = {}
        for entry in entries:
            by_partition.setdefault((entry.topic, entry.partition), []).append(entry)
        if len(by_partition) == 1:
            for entry in entries:
                self._publish(entry)
            return
        if self._pool is None:
            self._pool = ThreadPoolExecutor(PUBLISH_THREADS, thread_name_prefix="spark-sink-commit")
        futures = [self._pool.submit(self._publish_run, run) for run in by_partition.values()]
        errors = [f.exception() for f in futures]  # waits for every partition before failing
        failed = next((e for e in errors if e is not None), None)
        if failed is not None:
            raise failed

    def _publish_run(self, run: list[CommitEntry]) -> None:
        for entry in run:
            self._publish(entry)

    def close(self) -> None:
        """Stop the commit threads (the task is done with this writer)."""
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None

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
