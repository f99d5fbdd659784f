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

The state is rebuilt by :meth:`PartitionProducerState.replay` over batch headers (no
checks, appends in log order) and persisted as JSON snapshots (:mod:`.manager`).
"""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass
from typing import Any

from seaway.protocol.errors import (
    InvalidProducerEpochError,
    InvalidRecordError,
    OutOfOrderSequenceNumberError,
)
from seaway.protocol.record_batch import BatchHeader

__all__ = ["NUM_BATCHES_TO_RETAIN", "BatchMetadata", "PartitionProducerState", "ProducerEntry"]

NUM_BATCHES_TO_RETAIN = 5
"""Kafka's ``ProducerStateEntry.NUM_BATCHES_TO_RETAIN`` (max.in.flight per idempotent producer)."""

_INT32_MAX = 2**31 - 1


@dataclass(frozen=True, slots=True)
class BatchMetadata:
    """One appended batch of a producer, as its duplicate check needs it."""

    first_seq: int
    last_seq: int
    first_offset: int
    last_offset: int
    timestamp: int


class ProducerEntry:
    """One producer id's epoch and recent batches on one partition."""

    __slots__ = ("batches", "epoch", "last_timestamp", "producer_id")

    def __init__(self, producer_id: int, epoch: int) -> None:
        self.producer_id = producer_id
        self.epoch = epoch
        self.batches: deque[BatchMetadata] = deque(maxlen=NUM_BATCHES_TO_RETAIN)
        self.last_timestamp = -1

    @property
    def last_seq(self) -> int:
        return self.batches[-1].last_seq if self.batches else -1

    def find_duplicate(self, header: BatchHeader) -> BatchMetadata | None:
        if header.producer_epoch != self.epoch:
            return None
        last_seq = header.last_sequence
        for batch in self.batches:
            if batch.first_seq == header.base_sequence and batch.last_seq == last_seq:
                return batch
        return None

    def add(self, header: BatchHeader) -> None:
        """Record an appended batch (offsets stamped); a new epoch forgets the old batches."""
        if header.producer_epoch != self.epoch:
            self.epoch = header.producer_epoch
            self.batches.clear()
        self.batches.append(
            BatchMetadata(
                header.base_sequence,
                header.last_sequence,
                header.base_offset,
                header.last_offset,
                header.max_timestamp,
            )
        )
        self.last_timestamp = max(self.last_timestamp, header.max_timestamp)

    def to_json(self) -> dict[str, Any]:
        return {
            "producer_id": self.producer_id,
            "epoch": self.epoch,
            "last_timestamp": self.last_timestamp,
            "batches": [[b.first_seq, b.last_seq, b.first_offset, b.last_offset, b.timestamp] for b in self.batches],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ProducerEntry:
        entry = cls(int(data["producer_id"]), int(data["epoch"]))
        entry.last_timestamp = int(data["last_timestamp"])
        for first_seq, last_seq, first_offset, last_offset, timestamp in data["batches"]:
            entry.batches.append(BatchMetadata(first_seq, last_seq, first_offset, last_offset, timestamp))
        return entry


def _in_sequence(last_seq: int, next_seq: int) -> bool:
    return next_seq == last_seq + 1 or (next_seq == 0 and last_seq == _INT32_MAX)


class PartitionProducerState:
    """The producers of one partition. ``lock`` serialises check + append + update."""

    def __init__(self) -> None:
        self.producers: dict[int, ProducerEntry] = {}
        self.lock = threading.Lock()
        self.changed = False
        """Set by every update; cleared when a snapshot is taken."""

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

    def update(self, header: BatchHeader) -> None:
        """Record an appended batch (also used to replay the log: no checks)."""
        entry = self.producers.get(header.producer_id)
        if entry is None:
            entry = self.producers[header.producer_id] = ProducerEntry(header.producer_id, header.producer_epoch)
        entry.add(header)
        self.changed = True

    replay = update

    def expire(self, now_ms: int, expiration_ms: int) -> int:
        """Forget producers idle for ``producer.id.expiration.ms``; returns how many went."""
        doomed = [pid for pid, e in self.producers.items() if now_ms - e.last_timestamp >= expiration_ms]
        for pid in doomed:
            del self.producers[pid]
        if doomed:
            self.changed = True
        return len(doomed)

    def to_json(self) -> list[dict[str, Any]]:
        return [entry.to_json() for entry in self.producers.values()]

    def load_json(self, data: list[dict[str, Any]]) -> None:
        self.producers = {int(e["producer_id"]): ProducerEntry.from_json(e) for e in data}
