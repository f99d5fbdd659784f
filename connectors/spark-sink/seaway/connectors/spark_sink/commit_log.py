"""The per-topic-partition commit log: which offsets the lake holds, and recovery after a crash.

One folder per Kafka partition, ``_commits/<topic>/<partition>/``, of small immutable JSON
files, each created atomically (temp file + rename to a name that does not exist yet)::

    pending-<next:020d>.json   a file set about to become visible: [{temp, final, start, end}]
    commit-<next:020d>.json    the same set, now visible; <next> = last offset + 1

Commit protocol for one file set (offsets ``start..end`` of one Kafka partition, one data
file per partitioner folder)::

    1. Spark writes the files under _tmp/ (invisible to readers)
    2. write pending-<next>          the intent, with every temp -> final name
    3. rename each temp -> final     the files become visible
    4. write commit-<next>           the lake now says: offsets < next are here
    5. delete pending-<next>; keep the last few commit files

:meth:`CommitLog.recover`, run on every partition assignment, makes any crash point safe:
a pending set beyond the last commit is *rolled forward* when each of its files is either
visible already or still in ``_tmp/`` (renames are re-done, then the commit is written; so
a crash between 3 and 4 adopts the visible files instead of rewriting them), and *rolled
back* (visible ones deleted, to be rewritten by the replay) if a temp file is gone. Then
``_tmp/<topic>/<partition>/`` is emptied. The result is the offset to seek the consumer to.
If the log folder is missing altogether (e.g. deleted by hand) the offsets are recovered by
listing ``topic=<topic>/`` for data file names of this partition (the max end offset + 1).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

from seaway.connectors.spark_sink.lake import COMMITS_DIR, TMP_DIR, LakeFileSystem, parse_data_file_name
from seaway.connectors.spark_sink.partitioner import escape_path_name

__all__ = ["CommitEntry", "CommitLog", "FileMove"]

log = logging.getLogger(__name__)
KEEP_COMMITS = 5


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

    def __init__(self, lake: LakeFileSystem, topic: str, partition: int) -> None:
        self.lake = lake
        self.topic = topic
        self.partition = partition
        self.folder = f"{COMMITS_DIR}/{topic}/{partition}"
        self.tmp_folder = f"{TMP_DIR}/{topic}/{partition}"

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
        self.lake.write_atomic(f"{self.folder}/pending-{entry.next:020d}.json", entry.to_json())

    def commit(self, entry: CommitEntry) -> None:
        """Step 4 and 5: the files of ``entry`` are visible; record it and tidy up."""
        name = f"{self.folder}/commit-{entry.next:020d}.json"
        if not self.lake.exists(name):
            self.lake.write_atomic(name, entry.to_json())
        self.lake.delete(f"{self.folder}/pending-{entry.next:020d}.json")
        commits = self._entries("commit-")
        for old in commits[:-KEEP_COMMITS]:
            self.lake.delete(f"{self.folder}/commit-{old:020d}.json")

    def recover(self) -> int | None:
        """Finish or undo what a crash left, empty the temp folder; return the next offset to consume."""
        committed = self.last_committed()
        for offset in self._entries("pending-"):
            entry = self._read("pending-", offset)
            if committed is not None and entry.next <= committed:
                self.lake.delete(f"{self.folder}/pending-{offset:020d}.json")
                continue
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
        self.lake.delete(self.tmp_folder, recursive=True)
        return committed

    def _roll_forward(self, entry: CommitEntry) -> bool:
        missing = [f for f in entry.files if not self.lake.exists(f.final) and not self.lake.exists(f.temp)]
        if missing:
            return False
        for f in entry.files:
            if not self.lake.exists(f.final) and not self.lake.rename(f.temp, f.final):
                return False
        self.commit(entry)
        return True

    def _roll_back(self, entry: CommitEntry) -> None:
        for f in entry.files:
            self.lake.delete(f.final)
        self.lake.delete(f"{self.folder}/pending-{entry.next:020d}.json")

    def _recover_by_listing(self) -> int | None:
        """No log: the max end offset among this partition's data files (Confluent HDFS's fallback)."""
        ends = []
        for rel in self.lake.list_files("topic=" + escape_path_name(self.topic)):
            parsed = parse_data_file_name(rel.rsplit("/", 1)[-1])
            if parsed and parsed.topic == self.topic and parsed.partition == self.partition:
                ends.append(parsed.end)
        if not ends:
            return None
        next_offset = max(ends) + 1
        self.commit(CommitEntry(self.topic, self.partition, -1, next_offset, ()))
        return next_offset

    def entries(self) -> Sequence[CommitEntry]:
        """The commit files still kept, oldest first (for tests and tools)."""
        return [self._read("commit-", o) for o in self._entries("commit-")]
