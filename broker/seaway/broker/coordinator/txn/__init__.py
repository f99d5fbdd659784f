"""Kafka's transaction coordinator for one node (KIP-98, KIP-360, KIP-447, KIP-890's checks).

See README.md in the parent folder. Modules:

- :mod:`~seaway.broker.coordinator.txn.state`: the state machine of a transactional id;
- :mod:`~seaway.broker.coordinator.txn.log_format`: ``__transaction_state`` keys and values;
- :mod:`~seaway.broker.coordinator.txn.store`: creating, replaying and writing that topic;
- :mod:`~seaway.broker.coordinator.txn.coordinator`: InitProducerId, AddPartitionsToTxn,
  EndTxn with the markers, timeouts, expiry, recovery, Describe/ListTransactions.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import TYPE_CHECKING

from seaway.broker.context import BrokerContext
from seaway.broker.coordinator.txn.coordinator import TransactionCoordinator, TxnSettings
from seaway.broker.coordinator.txn.state import TxnMetadata, TxnState
from seaway.broker.coordinator.txn.store import TRANSACTION_STATE_TOPIC
from seaway.protocol.errors import (
    ConcurrentTransactionsError,
    CoordinatorLoadInProgressError,
    CoordinatorNotAvailableError,
    InvalidProducerEpochError,
    InvalidTxnStateError,
    KafkaProtocolError,
    NotCoordinatorError,
    NotEnoughReplicasError,
    ProducerFencedError,
    TransactionAbortableError,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from seaway.broker.log.partition_log import AppendGuard, AppendResult, PartitionLog
    from seaway.broker.producer.manager import ProducerStateManager
    from seaway.protocol.record_batch import BatchHeader

__all__ = [
    "TRANSACTION_STATE_TOPIC",
    "TransactionCoordinator",
    "TxnMetadata",
    "TxnSettings",
    "TxnState",
    "install",
    "transaction_coordinator_of",
    "transactional_guard",
    "transactional_verification",
]

# What a failed KIP-890 verification answers to a produce (Kafka's ReplicaManager): a
# retriable coordinator state becomes NOT_ENOUGH_REPLICAS, which every client retries
# without a metadata refresh.
_RETRY_AS_NOT_ENOUGH_REPLICAS = (ConcurrentTransactionsError, CoordinatorLoadInProgressError,
                                 CoordinatorNotAvailableError, NotCoordinatorError)
_TRANSACTION_ABORTABLE_FROM = 11
"""Produce v11 is the first whose clients understand TRANSACTION_ABORTABLE (KIP-890)."""


def transactional_guard(producers: ProducerStateManager, transactional_id: str, version: int) -> AppendGuard:
    """The produce path's guard for a request that carries ``transactional_id`` (the
    handler uses it when a transaction coordinator is installed): the producer state's,
    with its verification errors translated for produce ``version``."""
    return functools.partial(_translated, producers.transactional_guard(transactional_id), version)


def transactional_verification(producers: ProducerStateManager, transactional_id: str, version: int) -> (
    Callable[[PartitionLog, BatchHeader], None]
):
    """KIP-890's check alone, for a transactional batch the broker refuses after it anyway.

    Kafka's ``ReplicaManager`` verifies a transactional produce with the coordinator before
    the append, and refuses an append to an internal topic only in the append: a batch for
    a partition outside the producer's transaction is answered INVALID_TXN_STATE (produce
    v11: TRANSACTION_ABORTABLE) even there. The returned callable raises what the guard
    would for ``header`` (translated for produce ``version``) and writes nothing. As in
    the guard, a producer whose transaction already has data on the partition (its
    offsets, on ``__consumer_offsets``) is not asked about again.
    """
    def verify(plog: PartitionLog, header: BatchHeader) -> None:
        verifier = producers.verifier
        if verifier is None or not header.is_transactional or header.producer_id < 0:
            return
        state = producers.state_of(plog)
        with state.lock:
            entry = state.producers.get(header.producer_id)
            if entry is not None and entry.current_txn_first_offset >= 0 and entry.epoch == header.producer_epoch:
                return
        try:
            verifier(transactional_id, header.producer_id, header.producer_epoch, plog.topic, plog.partition)
        except KafkaProtocolError as exc:
            raise _for_produce(exc, version) from exc

    return verify


def _translated(guard: AppendGuard, version: int, plog: PartitionLog, headers: list[BatchHeader],
                write: Callable[[], AppendResult]) -> AppendResult:
    try:
        return guard(plog, headers, write)
    except KafkaProtocolError as exc:
        translated = _for_produce(exc, version)
        if translated is exc:
            raise
        raise translated from exc


def _for_produce(exc: KafkaProtocolError, version: int) -> KafkaProtocolError:
    """A verification error as a produce of ``version`` answers it (Kafka's ReplicaManager)."""
    if isinstance(exc, ProducerFencedError):
        return InvalidProducerEpochError(str(exc))
    if isinstance(exc, TransactionAbortableError) and version < _TRANSACTION_ABORTABLE_FROM:
        return InvalidTxnStateError(f"Partition was not added to the transaction: {exc}")
    if isinstance(exc, _RETRY_AS_NOT_ENOUGH_REPLICAS):
        return NotEnoughReplicasError(
            f"Unable to verify the partition has been added to the transaction. Underlying error: {exc.name}")
    return exc


def install(context: BrokerContext) -> TransactionCoordinator:
    """Create the coordinator (after the group coordinator, producer state and cleaner),
    wire it to them, set ``context.components.txn_coordinator`` and start loading."""
    from seaway.broker.coordinator.txn_offsets import complete_txn

    installed = context.components
    producers, ids = installed.producer_state, installed.producer_ids
    if producers is None or ids is None:
        raise RuntimeError("the transaction coordinator is installed after the producer state")
    settings = TxnSettings.from_config(context.config)
    coordinator = TransactionCoordinator(context, settings, producers, ids)
    if installed.group_coordinator is not None:
        coordinator.marker_listeners.append(functools.partial(complete_txn, installed.group_coordinator))
    if settings.verification:
        producers.verifier = coordinator.verify
    if installed.log_cleaner is not None:
        installed.log_cleaner.transactions_ready = lambda: coordinator.recovered
    context.components = dataclasses.replace(installed, txn_coordinator=coordinator)
    coordinator.start()
    return coordinator


def transaction_coordinator_of(context: BrokerContext) -> TransactionCoordinator:
    """The installed coordinator; COORDINATOR_NOT_AVAILABLE if the broker runs without one."""
    coordinator = context.components.txn_coordinator
    if coordinator is None:
        raise CoordinatorNotAvailableError("this broker runs without a transaction coordinator")
    return coordinator
