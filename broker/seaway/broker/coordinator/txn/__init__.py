"""Kafka's transaction coordinator for one node (KIP-98, KIP-360, KIP-447, KIP-890's checks).

See README.md in the parent folder. Modules:

- :mod:`~seaway.broker.coordinator.txn.state`: the state machine of a transactional id;
- :mod:`~seaway.broker.coordinator.txn.log_format`: ``__transaction_state`` keys and values;
- :mod:`~seaway.broker.coordinator.txn.store`: creating, replaying and writing that topic;
- :mod:`~seaway.broker.coordinator.txn.coordinator`: InitProducerId, AddPartitionsToTxn,
  EndTxn with the markers, timeouts, expiry, recovery, Describe/ListTransactions.
"""

from __future__ import annotations

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
    NotCoordinatorError,
    NotEnoughReplicasError,
    ProducerFencedError,
    TransactionAbortableError,
)

if TYPE_CHECKING:
    from seaway.broker.log.partition_log import AppendResult, PartitionLog
    from seaway.broker.producer.manager import ProducerStateManager, Records

__all__ = [
    "COMPONENT",
    "TRANSACTION_STATE_TOPIC",
    "TXN_APPENDER_COMPONENT",
    "TransactionCoordinator",
    "TxnMetadata",
    "TxnSettings",
    "TxnState",
    "install",
    "transaction_coordinator_of",
]

COMPONENT = "txn_coordinator"
TXN_APPENDER_COMPONENT = "txn_appender"
"""``(plog, records, now_ms, transactional_id, produce_version) -> AppendResult``: the
produce path's appender for requests that carry a transactional id."""

# What a failed KIP-890 verification answers to a produce (Kafka's ReplicaManager): a
# retriable coordinator state becomes NOT_ENOUGH_REPLICAS, which every client retries
# without a metadata refresh.
_RETRY_AS_NOT_ENOUGH_REPLICAS = (ConcurrentTransactionsError, CoordinatorLoadInProgressError,
                                 CoordinatorNotAvailableError, NotCoordinatorError)
_TRANSACTION_ABORTABLE_FROM = 11
"""Produce v11 is the first whose clients understand TRANSACTION_ABORTABLE (KIP-890)."""


def transactional_append(producers: ProducerStateManager, plog: PartitionLog, records: Records, now_ms: int,
                         transactional_id: str, version: int) -> AppendResult:
    """Append a transactional produce's records, translating verification errors for ``version``."""
    try:
        return producers.append_transactional(plog, records, now_ms, transactional_id)
    except ProducerFencedError as exc:
        raise InvalidProducerEpochError(str(exc)) from exc
    except TransactionAbortableError as exc:
        if version < _TRANSACTION_ABORTABLE_FROM:
            raise InvalidTxnStateError(f"Partition was not added to the transaction: {exc}") from exc
        raise
    except _RETRY_AS_NOT_ENOUGH_REPLICAS as exc:
        raise NotEnoughReplicasError(
            f"Unable to verify the partition has been added to the transaction. Underlying error: {exc.name}"
        ) from exc


def install(context: BrokerContext) -> TransactionCoordinator:
    """Create the coordinator (after the group coordinator, producer state and cleaner),
    wire it to them, register it and its produce appender, and start loading."""
    from seaway.broker.coordinator import COMPONENT as GROUP_COMPONENT
    from seaway.broker.coordinator.txn_offsets import complete_txn
    from seaway.broker.log.cleaner import COMPONENT as CLEANER_COMPONENT
    from seaway.broker.producer import IDS_COMPONENT, STATE_COMPONENT

    producers = context.components[STATE_COMPONENT]
    settings = TxnSettings.from_config(context.config)
    coordinator = TransactionCoordinator(context, settings, producers, context.components[IDS_COMPONENT])
    groups = context.components.get(GROUP_COMPONENT)
    if groups is not None:
        coordinator.marker_listeners.append(functools.partial(complete_txn, groups))
    if settings.verification:
        producers.verifier = coordinator.verify
    cleaner = context.components.get(CLEANER_COMPONENT)
    if cleaner is not None:
        cleaner.transactions_ready = lambda: coordinator.recovered
    context.components[COMPONENT] = coordinator
    context.components[TXN_APPENDER_COMPONENT] = functools.partial(transactional_append, producers)
    coordinator.start()
    return coordinator


def transaction_coordinator_of(context: BrokerContext) -> TransactionCoordinator:
    """The installed coordinator; COORDINATOR_NOT_AVAILABLE if the broker runs without one."""
    coordinator = context.components.get(COMPONENT)
    if not isinstance(coordinator, TransactionCoordinator):
        raise CoordinatorNotAvailableError("this broker runs without a transaction coordinator")
    return coordinator
