"""``__transaction_state`` as the transaction coordinator's durable store.

Created at startup when missing, as Kafka configures it (``cleanup.policy=compact``,
``compression.type=uncompressed``, ``segment.bytes = transaction.state.log.segment.bytes``,
``transaction.state.log.num.partitions`` partitions); a transactional id lives on
``abs(javaHashCode(id)) % partitions``, Kafka's ``partitionFor``. Replay (on a worker
thread) keeps the last value of every key, null values delete: what compaction keeps, so
a compacted log replays to the same state. A write is one uncompressed single-record
batch appended from the event loop; it returns once the bytes are in the page cache, as
every acks=all produce does on this single node.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from seaway.broker.context import BrokerContext
from seaway.broker.coordinator.offsets_topic import partition_for
from seaway.broker.coordinator.txn.log_format import (
    TxnLogValue,
    TxnRecordError,
    decode_txn_key,
    decode_txn_value,
    encode_txn_key,
    encode_txn_value,
)
from seaway.protocol.errors import CoordinatorNotAvailableError, TopicAlreadyExistsError
from seaway.protocol.record_batch import CorruptBatchError
from seaway.protocol.records import Record, build_batch, iter_batches

__all__ = ["TRANSACTION_STATE_TOPIC", "LoadedTransactions", "TransactionStore"]

log = logging.getLogger("seaway.broker.coordinator.txn")

TRANSACTION_STATE_TOPIC = "__transaction_state"
_READ_CHUNK = 1 << 20
_MAX_CACHED = 10_000


@dataclass
class LoadedTransactions:
    """The latest value of every live transactional id, as replay found it."""

    values: dict[str, TxnLogValue] = field(default_factory=dict)
    records: int = 0
    skipped: int = 0


class TransactionStore:
    """Reads and writes ``__transaction_state`` for the transaction coordinator."""

    def __init__(self, broker: BrokerContext, num_partitions: int, segment_bytes: int) -> None:
        self._broker = broker
        self.num_partitions = num_partitions
        self._segment_bytes = segment_bytes
        self._partitions: dict[str, int] = {}
        """Each id's partition: Java's String.hashCode in Python costs ~6 us, paid 3 times per transaction."""

    def partition_for(self, transactional_id: str) -> int:
        partition = self._partitions.get(transactional_id)
        if partition is None:
            if len(self._partitions) >= _MAX_CACHED:  # ids (and group ids) come from clients: bounded
                self._partitions.clear()
            partition = self._partitions[transactional_id] = partition_for(transactional_id, self.num_partitions)
        return partition

    def ensure_topic(self) -> None:
        """Create the topic if missing (blocking: call off the event loop).

        An existing topic keeps its partition count (moving ids between partitions would
        lose them); the config's count is then ignored with a warning.
        """
        logs = self._broker.logs
        meta = logs.topics().get(TRANSACTION_STATE_TOPIC)
        if meta is None:
            configs = {
                "cleanup.policy": "compact",
                "compression.type": "uncompressed",
                "segment.bytes": str(self._segment_bytes),
                "unclean.leader.election.enable": "false",
            }
            try:
                meta = logs.create_topic(TRANSACTION_STATE_TOPIC, self.num_partitions, configs)
            except TopicAlreadyExistsError:
                meta = logs.topics()[TRANSACTION_STATE_TOPIC]
        if meta.num_partitions != self.num_partitions:
            log.warning("%s has %d partitions, transaction.state.log.num.partitions says %d; using %d",
                        TRANSACTION_STATE_TOPIC, meta.num_partitions, self.num_partitions, meta.num_partitions)
            self.num_partitions = meta.num_partitions
            self._partitions.clear()

    def replay(self) -> LoadedTransactions:
        """Read every partition from its start; the last record per key wins (blocking)."""
        state = LoadedTransactions()
        for partition in range(self.num_partitions):
            plog = self._broker.logs.get_log(TRANSACTION_STATE_TOPIC, partition)
            if plog is None:
                continue
            offset = plog.log_start_offset
            while offset < plog.log_end_offset:
                region = plog.read(offset, _READ_CHUNK)
                if region is None or len(region) == 0:
                    break
                try:
                    for header, records in iter_batches(region.read_bytes()):
                        offset = header.next_offset
                        if header.is_control:
                            continue
                        for record in records:
                            self._apply(state, record)
                except CorruptBatchError as exc:
                    log.error("%s-%d: unreadable batch at offset %d (%s); skipping the rest",
                              TRANSACTION_STATE_TOPIC, partition, offset, exc)
                    break
        return state

    @staticmethod
    def _apply(state: LoadedTransactions, record: Record) -> None:
        state.records += 1
        try:
            if record.key is None:
                raise TxnRecordError("a record without a key")
            transactional_id = decode_txn_key(record.key)
            if record.value is None:
                state.values.pop(transactional_id, None)
            else:
                state.values[transactional_id] = decode_txn_value(record.value)
        except TxnRecordError as exc:
            state.skipped += 1
            log.warning("skipping a record of %s at offset %d: %s", TRANSACTION_STATE_TOPIC, record.offset, exc)

    def write(self, transactional_id: str, value: TxnLogValue | None, now_ms: int) -> None:
        """Append the id's new state (None: a tombstone). Raises when the append fails;
        the caller then keeps the old state in memory."""
        partition = self.partition_for(transactional_id)
        plog = self._broker.logs.get_log(TRANSACTION_STATE_TOPIC, partition)
        if plog is None:
            raise CoordinatorNotAvailableError(f"{TRANSACTION_STATE_TOPIC}-{partition} does not exist")
        payload = None if value is None else encode_txn_value(value)
        plog.append(build_batch([Record(0, now_ms, encode_txn_key(transactional_id), payload)]), now_ms=now_ms)
        if value is None:
            self._partitions.pop(transactional_id, None)
