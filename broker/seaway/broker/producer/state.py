"""Per-partition idempotent producer state: Kafka's ``ProducerStateManager`` entries.

For every producer id that wrote to a partition we keep its epoch and the metadata of
its last five batches (first/last sequence, first/last offset, max timestamp). That is
enough to answer, per batch and from the 61-byte header alone, Kafka's questions:

- same epoch, and (first seq, last seq) equal to one of the five: a **duplicate**, acked
  with its original offsets and not appended again;
- epoch below the producer's: **INVALID_PRODUCER_EPOCH** (KIP-588);
- a new epoch must start at sequence 0, unless the broker knows nothing of the producer:
  then any sequence is accepted (KIP-360, Kafka 2.5+; that is why this broker never
  answers UNKNOWN_PRODUCER_ID to a produce, exactly as Kafka no longer does);
- same epoch: the first sequence must follow the last (wrapping after 2**31-1), else
  **OUT_OF_ORDER_SEQUENCE_NUMBER**.

Transactions (Kafka's ``ProducerAppendInfo`` transaction tracking): a producer's first
transactional batch opens its transaction on the partition (its offset is the entry's
``current_txn_first_offset`` and one of ``ongoing``, whose minimum is the partition's
first unstable offset); a non-transactional batch while one is open is
**INVALID_TXN_STATE**; the end marker the coordinator writes closes it
(:meth:`PartitionProducerState.complete_txn`), may raise the producer's epoch (a fenced
or timed-out transaction is aborted with a bumped epoch, which fences the old producer
here too) and, for an abort, yields the entry of the segment's aborted-transaction index.
Batches the coordinators write themselves (transactional offset commits) carry no
sequence: they move the epoch and open transactions, without sequence checks (Kafka's
``AppendOrigin.COORDINATOR``).

The state is rebuilt by :meth:`PartitionProducerState.replay` over batch headers (no
checks, appends in log order; markers through :meth:`~PartitionProducerState.complete_txn`)
and persisted as JSON snapshots (:mod:`.manager`).
"""

from __future__ import annotations

import threading
from collections import deque
from typing import Any, NamedTuple

from seaway.broker.log.txn_index import AbortedTxn
from seaway.protocol.errors import (
    InvalidProducerEpochError,
    InvalidRecordError,
    InvalidTxnStateError,
    OutOfOrderSequenceNumberError,
    TransactionCoordinatorFencedError,
)
from seaway.protocol.record_batch import ATTR_TRANSACTIONAL, BatchHeader

__all__ = ["NUM_BATCHES_TO_RETAIN", "BatchMetadata", "PartitionProducerState", "ProducerEntry"]

NUM_BATCHES_TO_RETAIN = 5
"""Kafka's ``ProducerStateEntry.NUM_BATCHES_TO_RETAIN`` (max.in.flight per idempotent producer)."""

_INT32_MAX = 2**31 - 1


class BatchMetadata(NamedTuple):
    """One appended batch of a producer, as its duplicate check needs it.

    A NamedTuple: one is made for every idempotent batch appended (a frozen dataclass
    costs several times as much to build).
    """

    first_seq: int
    last_seq: int
    first_offset: int
    last_offset: int
    timestamp: int


class ProducerEntry:
    """One producer id's epoch and recent batches on one partition."""

    __slots__ = ("batches", "coordinator_epoch", "current_txn_first_offset", "epoch", "last_timestamp",
                 "producer_id")

    def __init__(self, producer_id: int, epoch: int) -> None:
        self.producer_id = producer_id
        self.epoch = epoch
        self.batches: deque[BatchMetadata] = deque(maxlen=NUM_BATCHES_TO_RETAIN)
        self.last_timestamp = -1
        self.coordinator_epoch = -1
        self.current_txn_first_offset = -1
        """Offset of this producer's open transaction's first batch here (-1: none open)."""

    @property
    def last_seq(self) -> int:
        return self.batches[-1].last_seq if self.batches else -1

    def find_duplicate(self, header: BatchHeader) -> BatchMetadata | None:
        if header.producer_epoch != self.epoch:
            return None
        first_seq = header.base_sequence
        last_seq = _last_sequence(first_seq, header.last_offset_delta)
        for batch in self.batches:
            if batch.first_seq == first_seq and batch.last_seq == last_seq:
                return batch
        return None

    def bump_epoch(self, epoch: int) -> None:
        """Move to ``epoch``; a new epoch forgets the old epoch's batches (sequences restart)."""
        if epoch != self.epoch:
            self.epoch = epoch
            self.batches.clear()

    def add(self, header: BatchHeader) -> None:
        """Record an appended batch (offsets stamped); a new epoch forgets the old batches.

        A batch without a sequence (written by a coordinator) only moves the epoch.
        """
        if header.producer_epoch != self.epoch:
            self.bump_epoch(header.producer_epoch)
        max_timestamp = header.max_timestamp
        if max_timestamp > self.last_timestamp:
            self.last_timestamp = max_timestamp
        first_seq = header.base_sequence
        if first_seq < 0:
            return
        delta = header.last_offset_delta
        base_offset = header.base_offset
        self.batches.append(
            _new_tuple(BatchMetadata, (first_seq, _last_sequence(first_seq, delta), base_offset,
                                       base_offset + delta, max_timestamp))
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "producer_id": self.producer_id,
            "epoch": self.epoch,
            "last_timestamp": self.last_timestamp,
            "coordinator_epoch": self.coordinator_epoch,
            "txn_first_offset": self.current_txn_first_offset,
            "batches": [[b.first_seq, b.last_seq, b.first_offset, b.last_offset, b.timestamp] for b in self.batches],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ProducerEntry:
        entry = cls(int(data["producer_id"]), int(data["epoch"]))
        entry.last_timestamp = int(data["last_timestamp"])
        entry.coordinator_epoch = int(data.get("coordinator_epoch", -1))
        entry.current_txn_first_offset = int(data.get("txn_first_offset", -1))
        for first_seq, last_seq, first_offset, last_offset, timestamp in data["batches"]:
            entry.batches.append(BatchMetadata(first_seq, last_seq, first_offset, last_offset, timestamp))
        return entry


def _last_sequence(base_sequence: int, last_offset_delta: int) -> int:
    """``BatchHeader.last_sequence`` from its two fields (the hot path avoids the property)."""
    return -1 if base_sequence < 0 else (base_sequence + last_offset_delta) & _INT32_MAX


_new_tuple = tuple.__new__


def _in_sequence(last_seq: int, next_seq: int) -> bool:
    return next_seq == last_seq + 1 or (next_seq == 0 and last_seq == _INT32_MAX)


class PartitionProducerState:
    """The producers of one partition. ``lock`` serialises check + append + update."""

    def __init__(self) -> None:
        self.producers: dict[int, ProducerEntry] = {}
        self.ongoing: dict[int, int] = {}
        """Producer id -> first offset of its open transaction on this partition."""
        self.lock = threading.Lock()
        self.changed = False
        """Set by every update; cleared when a snapshot is taken."""

    @property
    def first_unstable_offset(self) -> int | None:
        """First offset of the oldest open transaction (None when none is open)."""
        return min(self.ongoing.values()) if self.ongoing else None

    def check(self, header: BatchHeader, where: str) -> BatchMetadata | None:
        """Validate an idempotent batch before it is appended; its duplicate if it is one.

        Raises INVALID_PRODUCER_EPOCH or OUT_OF_ORDER_SEQUENCE_NUMBER as Kafka does.
        """
        if header.base_sequence < 0:
            raise InvalidRecordError(f"idempotent batch of producer {header.producer_id} has no sequence")
        entry = self.producers.get(header.producer_id)
        if entry is None:
            return None  # unknown producer: any sequence is accepted (KIP-360)
        duplicate = entry.find_duplicate(header)
        if duplicate is not None:
            return duplicate
        if entry.current_txn_first_offset >= 0 and not header.attributes & ATTR_TRANSACTIONAL:
            raise InvalidTxnStateError(
                f"Expected transactional write from producer {header.producer_id} in {where}: it has a "
                f"transaction open since offset {entry.current_txn_first_offset}"
            )
        if header.producer_epoch < entry.epoch:
            raise InvalidProducerEpochError(
                f"Epoch of producer {header.producer_id} in {where} is "
                f"{header.producer_epoch}, which is smaller than the last seen epoch {entry.epoch}"
            )
        if header.producer_epoch != entry.epoch:
            if header.base_sequence != 0:
                raise OutOfOrderSequenceNumberError(
                    f"Invalid sequence number for new epoch of producer {header.producer_id} in {where}: "
                    f"{header.producer_epoch} (request epoch), {header.base_sequence} (seq. number), "
                    f"{entry.epoch} (current producer epoch)"
                )
        elif not _in_sequence(entry.last_seq, header.base_sequence):
            raise OutOfOrderSequenceNumberError(
                f"Out of order sequence number for producer {header.producer_id} in {where}: "
                f"{header.base_sequence} (incoming seq. number), {entry.last_seq} (current end sequence number)"
            )
        return None

    def check_coordinator_write(self, producer_id: int, epoch: int, where: str) -> None:
        """A coordinator's batch or marker for ``producer_id``: its epoch must not be older."""
        entry = self.producers.get(producer_id)
        if entry is not None and epoch < entry.epoch:
            raise InvalidProducerEpochError(
                f"Epoch of producer {producer_id} in {where} is {epoch}, which is smaller than the last seen "
                f"epoch {entry.epoch}"
            )

    def update(self, header: BatchHeader) -> None:
        """Record an appended batch (also used to replay the log: no checks)."""
        entry = self.producers.get(header.producer_id)
        if entry is None:
            entry = self.producers[header.producer_id] = ProducerEntry(header.producer_id, header.producer_epoch)
        entry.add(header)
        if header.attributes & ATTR_TRANSACTIONAL and entry.current_txn_first_offset < 0:
            entry.current_txn_first_offset = header.base_offset
            self.ongoing[header.producer_id] = header.base_offset
        self.changed = True

    replay = update

    def complete_txn(
        self, producer_id: int, epoch: int, coordinator_epoch: int, marker_offset: int, abort: bool,
        timestamp: int, *, check: bool = True,
    ) -> AbortedTxn | None:
        """Apply an end marker written at ``marker_offset``; the index entry of an abort.

        ``check`` (off for replay) raises INVALID_PRODUCER_EPOCH for a marker older than
        the producer's epoch and TRANSACTION_COORDINATOR_FENCED for an older coordinator
        epoch, as Kafka's ``appendEndTxnMarker``. An abort of a transaction that wrote
        nothing here yields no entry (it aborted nothing in this partition).
        """
        entry = self.producers.get(producer_id)
        if entry is None:
            entry = self.producers[producer_id] = ProducerEntry(producer_id, epoch)
        elif check:
            if epoch < entry.epoch:
                raise InvalidProducerEpochError(
                    f"marker epoch {epoch} of producer {producer_id} is below its epoch {entry.epoch}")
            if coordinator_epoch < entry.coordinator_epoch:
                raise TransactionCoordinatorFencedError(
                    f"marker coordinator epoch {coordinator_epoch} is below {entry.coordinator_epoch}")
        first = entry.current_txn_first_offset
        entry.bump_epoch(epoch)
        entry.coordinator_epoch = coordinator_epoch
        entry.current_txn_first_offset = -1
        if timestamp > entry.last_timestamp:
            entry.last_timestamp = timestamp
        self.ongoing.pop(producer_id, None)
        self.changed = True
        if first < 0 or not abort:
            return None
        lso = min(self.ongoing.values()) if self.ongoing else marker_offset + 1
        return AbortedTxn(producer_id, first, marker_offset, lso)

    def expire(self, now_ms: int, expiration_ms: int) -> int:
        """Forget producers idle for ``producer.id.expiration.ms`` (never one with an open
        transaction, as Kafka); returns how many went."""
        doomed = [pid for pid, e in self.producers.items()
                  if now_ms - e.last_timestamp >= expiration_ms and e.current_txn_first_offset < 0]
        for pid in doomed:
            del self.producers[pid]
        if doomed:
            self.changed = True
        return len(doomed)

    def to_json(self) -> list[dict[str, Any]]:
        return [entry.to_json() for entry in self.producers.values()]

    def load_json(self, data: list[dict[str, Any]]) -> None:
        self.producers = {int(e["producer_id"]): ProducerEntry.from_json(e) for e in data}
        self.ongoing = {pid: e.current_txn_first_offset for pid, e in self.producers.items()
                        if e.current_txn_first_offset >= 0}
