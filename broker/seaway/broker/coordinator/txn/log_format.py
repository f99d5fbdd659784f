"""The records of ``__transaction_state``, byte for byte as Kafka writes them.

One record per state change of a transactional id, keyed by the id, so the compacted
topic keeps the latest state of each (a null value, a tombstone, is an expired id)::

    TransactionLogKey v0                 TransactionLogValue v0 (we write v0, read v0 and v1)
      version          int16 = 0           version                    int16 = 0
      transactionalId  string              producerId                 int64
                                           producerEpoch              int16
                                           transactionTimeoutMs       int32
                                           transactionStatus          int8   (TxnState id)
                                           transactionPartitions      nullable array of
                                             topic          string
                                             partitionIds   array of int32
                                           transactionLastUpdateTimestampMs  int64
                                           transactionStartTimestampMs       int64

Value v1 (Kafka 4's transaction version 2) is the flexible form of the same fields: compact
strings and arrays, tagged fields (previousProducerId tag 0, nextProducerId tag 1,
clientTransactionVersion tag 2) after the struct and after each partitions entry. We write
v0, which Kafka writes too until ``transaction.version`` 2 is enabled, and read both so a
Kafka-written log replays here. The partitions are null for an Empty transaction, as Kafka
writes them. Strings are int16-length (compact: varint length + 1) UTF-8.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from seaway.broker.coordinator.txn.state import TxnState
from seaway.protocol.primitives import CorruptFrameError, Reader, Writer

__all__ = ["TxnLogValue", "TxnRecordError", "decode_txn_key", "decode_txn_value", "encode_txn_key",
           "encode_txn_value"]

KEY_VERSION = 0
VALUE_VERSION = 0


class TxnRecordError(ValueError):
    """A key or value of __transaction_state that is not one of Kafka's layouts."""


@dataclass(frozen=True, slots=True)
class TxnLogValue:
    """One TransactionLogValue, version independent."""

    producer_id: int
    producer_epoch: int
    timeout_ms: int
    state: TxnState
    partitions: frozenset[tuple[str, int]]
    last_update_ms: int
    start_ms: int
    previous_producer_id: int = -1


def encode_txn_key(transactional_id: str) -> bytes:
    w = Writer()
    w.int16(KEY_VERSION)
    w.string(transactional_id, False)
    return bytes(w.buf)


def decode_txn_key(data: bytes) -> str:
    """The transactional id of a key; TxnRecordError for an unknown version or bad bytes."""
    try:
        r = Reader(data)
        version = r.int16()
        if version != KEY_VERSION:
            raise TxnRecordError(f"unknown TransactionLogKey version {version}")
        return r.string(False)
    except (CorruptFrameError, struct.error) as exc:
        raise TxnRecordError(f"malformed TransactionLogKey: {exc}") from exc


def encode_txn_value(value: TxnLogValue) -> bytes:
    w = Writer()
    w.int16(VALUE_VERSION)
    w.int64(value.producer_id)
    w.int16(value.producer_epoch)
    w.int32(value.timeout_ms)
    w.int8(int(value.state))
    if value.state == TxnState.EMPTY:
        w.array_length(-1, False)
    else:
        by_topic: dict[str, list[int]] = {}
        for topic, partition in sorted(value.partitions):
            by_topic.setdefault(topic, []).append(partition)
        w.array_length(len(by_topic), False)
        for topic, partitions in by_topic.items():
            w.string(topic, False)
            w.array_length(len(partitions), False)
            for partition in partitions:
                w.int32(partition)
    w.int64(value.last_update_ms)
    w.int64(value.start_ms)
    return bytes(w.buf)


def decode_txn_value(data: bytes) -> TxnLogValue:
    """A TransactionLogValue v0 or v1; TxnRecordError for anything else."""
    try:
        r = Reader(data)
        version = r.int16()
        if version not in (0, 1):
            raise TxnRecordError(f"unknown TransactionLogValue version {version}")
        flexible = version >= 1
        producer_id = r.int64()
        epoch = r.int16()
        timeout_ms = r.int32()
        status = r.int8()
        try:
            state = TxnState(status)
        except ValueError:
            raise TxnRecordError(f"unknown transaction status {status}") from None
        partitions: set[tuple[str, int]] = set()
        count = r.array_length(flexible)
        for _ in range(max(count, 0)):
            topic = r.string(flexible)
            for _ in range(max(r.array_length(flexible), 0)):
                partitions.add((topic, r.int32()))
            if flexible:
                r.skip_tagged_fields()
        last_update = r.int64()
        start = r.int64()
        previous = -1
        if flexible:
            previous = _read_tagged_previous_id(r)
    except (CorruptFrameError, struct.error) as exc:
        raise TxnRecordError(f"malformed TransactionLogValue: {exc}") from exc
    if state == TxnState.EMPTY:
        partitions.clear()
    return TxnLogValue(producer_id, epoch, timeout_ms, state, frozenset(partitions), last_update, start, previous)


def _read_tagged_previous_id(r: Reader) -> int:
    """The struct's tagged fields: previousProducerId (tag 0) is kept, the rest skipped."""
    previous = -1
    for _ in range(r.uvarint()):
        tag = r.uvarint()
        size = r.uvarint()
        end = r.tagged_field_end(size)
        if tag == 0 and size == 8:
            previous = r.int64()
        r.pos = end
    return previous
