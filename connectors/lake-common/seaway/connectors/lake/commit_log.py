"""The per-topic-partition commit log: which offsets the lake holds, and recovery after a crash.

One folder per Kafka partition, ``<commits dir>/<topic>/<partition>/`` (the Spark sink's
``_commits``, the S3 sink's ``logs.dir``), of small immutable JSON files, each created
atomically (:meth:`LakeStore.write_atomic`: temp file + rename, or one S3 PUT)::

    pending-<next:020d>.json   a file set about to become visible: [{temp, final, start, end}]
    commit-<next:020d>.json    the same set, now visible; <next> = last offset + 1

Commit protocol for one file set (offsets ``start..end`` of one Kafka partition, one data
file per partitioner folder)::

    1. write the files under temp names (invisible to readers)      Spark sink
    2. write pending-<next>          the intent, with every temp -> final name
    3. rename each temp -> final     the files become visible         (S3: upload each object
                                                                       under its final key)
    4. write commit-<next>           the lake now says: offsets < next are here
    5. delete pending-<next>; keep the last few commit files (a pending record whose set is
       committed is stale and recovery deletes it unread)

Step 5 runs right after step 4 where a delete is cheap (``garbage_batch=1``: the Spark sink,
on Hadoop file systems), so a lake at rest holds no pending record; the S3 sink batches the
deletes of :data:`GARBAGE_BATCH` records into one ``DeleteObjects`` request.

On S3 a file's temp and final names are the same: an object becomes visible whole when its
upload completes, so steps 1 and 3 are one upload after step 2.

:meth:`CommitLog.recover`, run on every partition assignment, makes any crash point safe:
a pending set beyond the last commit is *rolled forward* when each of its files is either
visible already or still in ``_tmp/`` (renames are re-done, then the commit is written; so
a crash between 3 and 4 adopts the visible files instead of rewriting them), and *rolled
back* (visible ones deleted, to be rewritten by the replay) if a temp file is gone. Then
what an interrupted writer left (:meth:`LakeStore.discard_temp`: temp files, multipart
uploads) is dropped. The result is the offset to seek the consumer to. If the log folder is
missing altogether (e.g. deleted by hand) the store is asked to recover the offset from the data
files themselves (:meth:`LakeStore.offset_by_listing`), as Confluent's HDFS sink does.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

from seaway.connectors.lake.store import LakeStore

__all__ = ["COMMITS_DIR", "CommitEntry", "CommitLog", "FileMove"]

COMMITS_DIR = "_commits"

log = logging.getLogger(__name__)
KEEP_COMMITS = 5
#: records no longer needed (pending records of committed sets, pruned commits) are deleted in
#: batches of this many: one request instead of two per file set on S3 (``DeleteObjects``)
GARBAGE_BATCH = 10


@dataclass(frozen=True, slots=True)
class FileMove:
    """One data file of a set: where Spark left it, where readers find it, its offsets and row count."""

    temp: str
    final: str
    start: int
    end: int
    count: int


@dataclass(frozen=True, slots=True)
class CommitEntry:
    """A file set of one Kafka partition covering offsets ``start`` to ``next - 1``."""

    topic: str
    partition: int
    start: int
    next: int
    files: tuple[FileMove, ...] = field(default_factory=tuple)

    def to_json(self) -> bytes:
        body = asdict(self)
        return json.dumps(body, sort_keys=True, separators=(",", ":")).encode()

    @classmethod
    def from_json(cls, data: bytes) -> CommitEntry:
        body = json.loads(data)
        return cls(body["topic"], int(body["partition"]), int(body["start"]), int(body["next"]),
                   tuple(FileMove(**f) for f in body.get("files", ())))


def _offset_of(name: str, prefix: str) -> int | None:
    if not name.startswith(prefix) or not name.endswith(".json"):
        return None
    digits = name[len(prefix):-len(".json")]
    return int(digits) if digits.isdigit() else None


class CommitLog:
    """The log of one topic partition in one lake."""

    def __init__(self, lake: LakeStore, topic: str, partition: int, commits_dir: str = COMMITS_DIR,
                 garbage_batch: int = GARBAGE_BATCH) -> None:
        self.lake = lake
        self.topic = topic
        self.partition = partition
        self.garbage_batch = garbage_batch
        self.folder = f"{commits_dir}/{topic}/{partition}"
        #: the commit offsets in the folder, as listed by :meth:`recover` and kept up to date by
        #: :meth:`commit` (the task is the partition's only writer), so a commit needs no listing
        #: and no existence check: two fewer requests per file set (on S3, ~30% of them)
        self._commits: list[int] | None = None
        self._garbage: list[str] = []  # records to delete at the next tidy()

    def _entries(self, prefix: str) -> list[int]:
        names = self.lake.list_names(self.folder)
        return sorted(o for o in (_offset_of(n, prefix) for n in names) if o is not None)

    def _read(self, prefix: str, offset: int) -> CommitEntry:
        return CommitEntry.from_json(self.lake.read_bytes(f"{self.folder}/{prefix}{offset:020d}.json"))

    def last_committed(self) -> int | None:
        """The next offset after what the log says is in the lake, or ``None`` if it has no commit."""
        commits = self._entries("commit-")
        return commits[-1] if commits else None

    def begin(self, entry: CommitEntry) -> None:
        """Step 2: record the intent before any file becomes visible."""
        name = f"{self.folder}/pending-{entry.next:020d}.json"
        if name in self._garbage:  # the same set again (a replay) while its old record awaits deletion
            self._garbage.remove(name)
            self.lake.delete(name)
        self.lake.write_atomic(name, entry.to_json())

    def commit(self, entry: CommitEntry, pending: bool = True) -> None:
        """Step 4 and 5: the files of ``entry`` are visible; record it and tidy up.

        ``pending=False``: no pending record was written for this set (see the S3 writer).
        """
        commits = self._commits if self._commits is not None else self._entries("commit-")
        if entry.next not in commits:
            self.lake.write_atomic(f"{self.folder}/commit-{entry.next:020d}.json", entry.to_json())
            commits = sorted([*commits, entry.next])
        if pending:
            self._garbage.append(f"{self.folder}/pending-{entry.next:020d}.json")
        self._garbage += [f"{self.folder}/commit-{old:020d}.json" for old in commits[:-KEEP_COMMITS]]
        self._commits = commits[-KEEP_COMMITS:]
        if len(self._garbage) >= self.garbage_batch:
            self.tidy()

    def tidy(self) -> None:
        """Delete the records :meth:`commit` left for later (when a partition closes, or in batches)."""
        garbage, self._garbage = self._garbage, []
        if garbage:
            self.lake.delete_many(garbage)

    def recover(self) -> int | None:
        """Finish or undo what a crash left, empty the temp folder; return the next offset to consume."""
        self._commits = self._entries("commit-")
        committed = self._commits[-1] if self._commits else None
        for offset in self._entries("pending-"):
            if committed is not None and offset <= committed:  # its set is committed: stale (see commit)
                self._garbage.append(f"{self.folder}/pending-{offset:020d}.json")
                continue
            entry = self._read("pending-", offset)
            if committed is not None and entry.start != committed:
                log.warning("%s-%d: pending set %d..%d does not follow commit %d; rolling it back",
                            self.topic, self.partition, entry.start, entry.next - 1, committed)
                self._roll_back(entry)
                continue
            if self._roll_forward(entry):
                log.info("%s-%d: adopted file set %d..%d after a crash", self.topic, self.partition,
                         entry.start, entry.next - 1)
                committed = entry.next
            else:
                self._roll_back(entry)
        if committed is None:
            committed = self._recover_by_listing()
        self.tidy()
        self.lake.discard_temp(self.topic, self.partition)
        return committed

    def _roll_forward(self, entry: CommitEntry) -> bool:
        visible = {f.final for f in entry.files if self.lake.exists(f.final)}
        if any(f.final not in visible and (f.temp == f.final or not self.lake.exists(f.temp))
               for f in entry.files):
            return False
        for f in entry.files:
            if f.final not in visible and not self.lake.rename(f.temp, f.final):
                return False
        self.commit(entry)
        return True

    def _roll_back(self, entry: CommitEntry) -> None:
        for f in entry.files:
            self.lake.delete(f.final)
        self.lake.delete(f"{self.folder}/pending-{entry.next:020d}.json")

    def _recover_by_listing(self) -> int | None:
        """No log: ask the data files (Confluent HDFS's fallback); record the answer as a commit."""
        next_offset = self.lake.offset_by_listing(self.topic, self.partition)
        if next_offset is None:
            return None
        self.commit(CommitEntry(self.topic, self.partition, -1, next_offset, ()))
        return next_offset

    def entries(self) -> Sequence[CommitEntry]:
        """The commit files still kept, oldest first (for tests and tools)."""
        return [self._read("commit-", o) for o in self._entries("commit-")]
