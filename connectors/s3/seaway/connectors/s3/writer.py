"""Closed file sets to committed S3 objects: one object per partitioner folder, then a commit record.

For one file set (offsets ``start..end`` of one Kafka partition)::

    1. PUT   <logs.dir>/<topic>/<partition>/pending-<next>.json   the keys it is about to write
    2. each folder's rows -> Parquet/Avro/JSON -> one object      PUT, or a multipart upload
       <topics.dir>/<topic>/<folders>/<topic>+<partition>+<first offset, zero-padded><ext>
    3. PUT   <logs.dir>/<topic>/<partition>/commit-<next>.json    offsets < next are in the bucket
    4. DELETE the pending record; old commit records pruned

Keys depend only on the topic, partition, folder and first offset (Confluent's S3 naming), so a
replay of the same offsets overwrites the same keys. Step 1 is skipped for a set of one object
when folders do not depend on the wall clock (any partitioner but a time-based one with
``timestamp.extractor=Wallclock``): the replay's first object then has the very key the crashed
upload had (the same first offset, the same folder) and overwrites it, however the replay cuts
its sets. With the default partitioner every set is one object, so a set costs its uploads plus
one PUT of the commit record (old records are deleted in batches). A crash between 1 and 3 is settled on the
next assignment by :meth:`~seaway.connectors.lake.commit_log.CommitLog.recover`: if every key of
the pending set exists (each object appears whole or not at all) the set is adopted, else the
objects that did land are deleted and the set is replayed. So even non-deterministic boundaries
(``rotate.schedule.interval.ms``, ``Wallclock``) leave no duplicate objects behind.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import BinaryIO, cast

from seaway.connectors.lake.commit_log import CommitEntry, CommitLog, FileMove
from seaway.connectors.lake.naming import start_offset_file_name
from seaway.connectors.lake.rotation import FileSet, FolderPart
from seaway.connectors.s3.config import S3SinkConfig
from seaway.connectors.s3.formats import write_file
from seaway.connectors.s3.store import SET_NEXT_METADATA, S3Store

__all__ = ["S3Writer"]

log = logging.getLogger(__name__)


class S3Writer:
    """Writes and commits file sets for one task (the task's writer thread calls it)."""

    def __init__(self, store: S3Store, config: S3SinkConfig) -> None:
        self.store = store
        self.config = config
        self.logs: dict[tuple[str, int], CommitLog] = {}
        #: whether a record's folder depends on when it is written (then a replay may not overwrite)
        self.wallclock_folders = config.partitioner == "time" and config.timestamp_extractor == "wallclock"

    def commit_log(self, topic: str, partition: int) -> CommitLog:
        key = (topic, partition)
        if key not in self.logs:
            self.logs[key] = CommitLog(self.store, topic, partition, self.config.logs_dir)
        return self.logs[key]

    def key(self, file_set: FileSet, part: FolderPart) -> str:
        name = start_offset_file_name(file_set.tp.topic, file_set.tp.partition, part.first,
                                      self.config.zero_pad_width, self.config.extension)
        return "/".join(p for p in (self.config.topics_dir, part.folder, name) if p)

    def write(self, sets: Sequence[FileSet]) -> list[CommitEntry]:
        """Upload and commit ``sets`` in order; the commits made."""
        started = time.monotonic()
        entries = [self._write_set(s) for s in sets]
        log.info("Landed %d records in %d file sets (%d objects) in %.3f s", sum(len(s) for s in sets), len(sets),
                 sum(len(e.files) for e in entries), time.monotonic() - started)
        return entries

    def _write_set(self, file_set: FileSet) -> CommitEntry:
        parts = file_set.by_folder()
        keys = [self.key(file_set, part) for part in parts]
        entry = CommitEntry(file_set.tp.topic, file_set.tp.partition, file_set.start, file_set.end + 1,
                            tuple(FileMove(k, k, p.first, p.last, p.count) for k, p in zip(keys, parts, strict=True)))
        commit_log = self.commit_log(entry.topic, entry.partition)
        pending = len(parts) > 1 or self.wallclock_folders
        if pending:
            commit_log.begin(entry)
        metadata = {SET_NEXT_METADATA: str(entry.next)}
        for key, part in zip(keys, parts, strict=True):
            upload = self.store.upload(key, metadata)
            try:
                # an S3Upload is a raw binary stream (io.RawIOBase): what the format writers write to
                write_file(self.config, part.table, file_set.schema, cast(BinaryIO, upload))
                upload.commit()
            except BaseException:
                upload.abort()
                raise
        commit_log.commit(entry, pending=pending)
        return entry
