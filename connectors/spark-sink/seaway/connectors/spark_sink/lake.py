"""The lake's file system: Hadoop's ``FileSystem`` through the SparkSession's JVM gateway, and its layout.

Going through Hadoop (not ``os``) is what makes ``lake.path`` any URI Spark can write:
``file://``, ``hdfs://``, ``s3a://``... The operations the commit protocol needs are the
ones HDFS makes atomic: ``rename`` of a file to a path that does not exist yet, ``create``,
``delete`` and ``listStatus``. (On object stores rename is a copy: see docs/spark-sink.md.)

Layout under ``lake.path``: one folder per topic, each a table of its own (Confluent's HDFS
sink layout, and the S3 sink's), so ``spark.read.parquet(f"{lake}/orders")`` reads one topic
with its partition columns, while reading the lake's root with two or more topics fails with
Spark's CONFLICTING_DIRECTORY_STRUCTURES instead of silently mixing tables::

    <topic>/<partitioner folders>/<topic>+<partition>+<start:020d>+<end:020d>.parquet     data
    _commits/<topic>/<partition>/commit-<next:020d>.json                                  commit log
    _commits/<topic>/<partition>/pending-<next:020d>.json                                 during a commit
    _tmp/<topic>/<partition>/<uuid>.parquet                                               temp files
    _tmp/<topic>/<partition>/_staging-<uuid>/part-<n>-....parquet                         a Spark job's output

Spark (and pyarrow.dataset) skip paths whose names start with ``_`` or ``.``, so readers see
only committed data files. ``start``/``end`` are the first and last Kafka offsets in the file.
A Spark job's staging folder lives in the temp folder of one of the partitions it writes, so
the recovery of that partition (which empties its temp folder) also removes what a crashed job left.
"""

from __future__ import annotations

import urllib.parse
import uuid
from collections.abc import Sequence
from typing import Any

from seaway.connect.api import DataError
from seaway.connectors.lake.commit_log import COMMITS_DIR
from seaway.connectors.lake.naming import DataFileName, data_file_name, parse_data_file_name
from seaway.connectors.lake.partitioner import topic_folder

__all__ = ["COMMITS_DIR", "TMP_DIR", "DataFileName", "LakeFileSystem", "data_file_name", "parse_data_file_name",
           "table_dir"]

TMP_DIR = "_tmp"
#: Hadoop file systems on object stores: an object appears whole when its upload completes
OBJECT_STORES = frozenset({"s3a", "s3", "s3n", "gs", "oss", "cosn", "obs"})
_RESERVED = frozenset({COMMITS_DIR, TMP_DIR})


def table_dir(topic: str) -> str:
    """The topic's folder under the lake: its name (Hive-escaped), a table of its own.

    A topic named like one of the sink's own folders (``_commits``, ``_tmp``) cannot get one.
    """
    folder = topic_folder(topic)
    if folder in _RESERVED:
        raise DataError(f"Topic {topic!r} would land in the lake's own folder {folder}/: rename it with an SMT "
                        "(e.g. RegexRouter) before this sink")
    return folder


class LakeFileSystem:
    """Paths relative to the lake root, operated on through ``org.apache.hadoop.fs.FileSystem``.

    It is the :class:`~seaway.connectors.lake.store.LakeStore` of the Spark sink's commit log.
    """

    def __init__(self, spark: Any, root: str) -> None:
        self.root = root.rstrip("/")
        #: object stores make a new object visible whole when its upload ends: create it in place
        #: (a rename there is a copy and a delete)
        self.create_is_atomic = urllib.parse.urlparse(self.root).scheme.lower() in OBJECT_STORES
        # PySpark has no public API to the JVM it drives: its py4j handles are private attributes
        jvm = spark._jvm  # noqa: SLF001 - PySpark's py4j JVM view (no public API)
        self._jvm = jvm
        self._Path = jvm.org.apache.hadoop.fs.Path
        hadoop_conf = spark._jsc.hadoopConfiguration()  # noqa: SLF001 - PySpark's Java SparkContext (no public API)
        self.fs = self._Path(self.root).getFileSystem(hadoop_conf)

    def uri(self, rel: str) -> str:
        return f"{self.root}/{rel}" if rel else self.root

    def _path(self, rel: str) -> Any:
        return self._Path(self.uri(rel))

    def exists(self, rel: str) -> bool:
        return bool(self.fs.exists(self._path(rel)))

    def mkdirs(self, rel: str) -> None:
        self.fs.mkdirs(self._path(rel))

    def delete(self, rel: str, recursive: bool = False) -> bool:
        return bool(self.fs.delete(self._path(rel), recursive))

    def delete_many(self, rels: Sequence[str]) -> None:
        for rel in rels:
            self.delete(rel)

    def rename(self, src: str, dst: str) -> bool:
        """Atomic rename (HDFS, local); creates ``dst``'s parent first, as HDFS will not."""
        parent = dst.rsplit("/", 1)[0] if "/" in dst else ""
        if parent:
            self.mkdirs(parent)
        return bool(self.fs.rename(self._path(src), self._path(dst)))

    def list_names(self, rel: str) -> list[str]:
        """Names (not paths) in a folder; empty when it does not exist."""
        path = self._path(rel)
        if not self.fs.exists(path):
            return []
        return [str(s.getPath().getName()) for s in self.fs.listStatus(path)]

    def list_files(self, rel: str) -> list[str]:
        """Every file below ``rel`` (recursive), as lake-relative paths."""
        path = self._path(rel)
        if not self.fs.exists(path):
            return []
        prefix = str(self.fs.makeQualified(self._path("")).toString()).rstrip("/") + "/"
        out: list[str] = []
        it = self.fs.listFiles(path, True)
        while it.hasNext():
            full = str(it.next().getPath().toString())
            out.append(full[len(prefix):] if full.startswith(prefix) else full)
        return out

    def write_atomic(self, rel: str, data: bytes) -> None:
        """Create ``rel`` with ``data`` all at once: a hidden temp file beside it, then a rename (one PUT on S3)."""
        if self.create_is_atomic:
            out = self.fs.create(self._path(rel), False)
            try:
                out.write(bytearray(data))
            finally:
                out.close()
            return
        folder, _, name = rel.rpartition("/")
        tmp = f"{folder}/.{name}.{uuid.uuid4().hex}.tmp" if folder else f".{name}.{uuid.uuid4().hex}.tmp"
        out = self.fs.create(self._path(tmp), True)
        try:
            out.write(bytearray(data))
            out.hflush()
        finally:
            out.close()
        if not self.rename(tmp, rel):
            self.delete(tmp)
            raise OSError(f"could not rename {tmp} to {rel} in {self.root}")

    def discard_temp(self, topic: str, partition: int) -> None:
        """Empty ``_tmp/<topic>/<partition>/`` (temp files of sets never published, a crashed job's staging)."""
        self.delete(self.temp_dir(topic, partition), recursive=True)

    @staticmethod
    def temp_dir(topic: str, partition: int) -> str:
        return f"{TMP_DIR}/{topic}/{partition}"

    def offset_by_listing(self, topic: str, partition: int) -> int | None:
        """The max end offset + 1 among this partition's data file names under ``<topic>/``."""
        ends = []
        for rel in self.list_files(table_dir(topic)):
            parsed = parse_data_file_name(rel.rsplit("/", 1)[-1])
            if parsed and parsed.topic == topic and parsed.partition == partition and parsed.end is not None:
                ends.append(parsed.end)
        return max(ends) + 1 if ends else None

    def read_bytes(self, rel: str) -> bytes:
        stream = self.fs.open(self._path(rel))
        try:
            return bytes(self._jvm.org.apache.commons.io.IOUtils.toByteArray(stream))
        finally:
            stream.close()
