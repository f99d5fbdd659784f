"""Source records in flight: what was produced, what the producer acknowledged, which offsets that
reaches (Kafka's ``SubmittedRecords``).

Each ``poll()`` result becomes one :class:`SubmittedBatch` holding the latest source offset
per source partition. How acknowledgements are tracked depends on the task:

* a task that overrides ``commit_record`` needs each record's metadata, so every record gets a
  delivery callback; a batch counts its records down (``ack``) and the longest prefix of fully
  acknowledged batches is committed, without blocking;
* otherwise (the common case) the producer reports failures only
  (``delivery.report.only.error``): ``fail`` is the callback, and a commit waits for what is in
  flight (see :mod:`.source_commits`).

Failed batches are also appended to the task's shared ``failures`` list, so the loop checks for
delivery errors in O(1). :class:`BatchAcks` collects, for a :class:`BytesRecordBatch`, the
offset each record was written at, for ``SourceTask.commit_records``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from seaway.connect.api import BytesRecordBatch, SourceRecord, SourceRecordBatch

__all__ = ["BatchAcks", "SubmittedBatch", "batch_offsets", "last_offsets", "partition_key"]


class SubmittedBatch:
    """One poll's records in flight.

    In per-record mode ``ack`` counts each delivery down: acknowledged when ``pending`` reaches 0
    after ``sealed``. In error-only mode ``fail`` is the callback and only sees failures.
    """

    __slots__ = ("error", "failures", "offsets", "pending", "sealed")

    def __init__(self, failures: list[SubmittedBatch]) -> None:
        self.pending = 0
        self.sealed = False
        self.error: Any = None
        self.offsets: dict[str, tuple[Any, Any]] = {}
        self.failures = failures

    def ack(self, err: Any, _msg: Any) -> None:
        self.pending -= 1
        if err is not None and self.error is None:
            self.error = err
            self.failures.append(self)

    def fail(self, err: Any, _msg: Any) -> None:
        if err is not None and self.error is None:
            self.error = err
            self.failures.append(self)

    @property
    def done(self) -> bool:
        return self.sealed and self.pending == 0


class BatchAcks:
    """Delivery reports of one :class:`BytesRecordBatch`: the offset of each record, then ``commit``."""

    __slots__ = ("batch", "commit", "committed", "offsets", "records")

    def __init__(self, batch: SubmittedBatch, records: BytesRecordBatch,
                 commit: Callable[[BytesRecordBatch, list[int]], None]) -> None:
        self.batch = batch
        self.records = records
        self.commit = commit
        self.offsets: list[int] = []
        self.committed = False

    def ack(self, err: Any, msg: Any) -> None:
        """One delivery report (``SubmittedBatch.ack`` and ``check_done`` inlined: this runs once per record)."""
        batch = self.batch
        batch.pending -= 1
        if err is None:
            self.offsets.append(msg.offset())
        else:
            self.offsets.append(-1)
            if batch.error is None:
                batch.error = err
                batch.failures.append(batch)
        if not batch.pending and batch.sealed:
            self.check_done()

    def check_done(self) -> None:
        batch = self.batch
        if batch.done and not self.committed:
            self.committed = True
            if len(self.offsets) == len(self.records):
                self.commit(self.records, self.offsets)


def partition_key(partition: Mapping[str, Any]) -> str:
    """A source partition (a dict) as a hashable key."""
    return repr(sorted(partition.items()))


def last_offsets(records: Sequence[SourceRecord]) -> dict[str, tuple[Any, Any]]:
    """The last (partition, offset) per source partition; cheap when a batch has one partition."""
    out: dict[str, tuple[Any, Any]] = {}
    previous: Any = object()
    for record in reversed(records):
        partition = record.source_partition
        if partition is previous or partition is None or partition == previous:
            continue
        previous = partition
        key = partition_key(partition)
        if key not in out:
            out[key] = (partition, record.source_offset)
    return out


def batch_offsets(records: Sequence[SourceRecord]) -> dict[str, tuple[Any, Any]]:
    """The last offset per source partition of one poll's records (of the batch, for the batch types)."""
    if type(records) is SourceRecordBatch or type(records) is BytesRecordBatch:
        partition = records.source_partition
        if partition is None or not len(records):
            return {}
        return {partition_key(partition): (partition, records.last_source_offset)}
    return last_offsets(records)
