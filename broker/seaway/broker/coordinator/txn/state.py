"""A transactional id's state: Kafka's ``TransactionState`` machine and ``TransactionMetadata``.

::

    Empty ──AddPartitions──> Ongoing ──EndTxn(commit)──> PrepareCommit ──markers──> CompleteCommit
      ^                        │  └────EndTxn(abort), timeout, fence──> PrepareAbort ──> CompleteAbort
      └──InitProducerId────────┴── (from Empty/Complete*; Ongoing is aborted first)
    Empty/Complete* ──transactional.id.expiration.ms──> Dead (a tombstone)

A transition is computed as a new :class:`TxnMetadata` (``with_*`` methods, which check
that the move is one Kafka allows), written to ``__transaction_state``, and only then
installed: what is in memory is always what a replay of the log would give. The ids match
Kafka's (``TransactionStatus`` in the log, names in DescribeTransactions/ListTransactions).
PrepareEpochFence (7) exists in Kafka only as a pending state, never in the log; here
fencing goes straight to PrepareAbort with the bumped epoch, which is what Kafka writes.
"""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass

__all__ = ["NO_EPOCH", "NO_PRODUCER_ID", "TxnMetadata", "TxnState", "is_epoch_exhausted"]

NO_PRODUCER_ID = -1
NO_EPOCH = -1
_SHORT_MAX = 32767


class TxnState(enum.IntEnum):
    EMPTY = 0
    ONGOING = 1
    PREPARE_COMMIT = 2
    PREPARE_ABORT = 3
    COMPLETE_COMMIT = 4
    COMPLETE_ABORT = 5
    DEAD = 6
    PREPARE_EPOCH_FENCE = 7

    @property
    def display_name(self) -> str:
        """Kafka's name (DescribeTransactions, ListTransactions, kafka-transactions.sh)."""
        return _NAMES[self]

    @classmethod
    def from_display_name(cls, name: str) -> TxnState | None:
        return _BY_NAME.get(name)

    @property
    def expirable(self) -> bool:
        """Kafka's ``isExpirationAllowed``: no transaction is in flight."""
        return self in (TxnState.EMPTY, TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT)

    @property
    def in_flight(self) -> bool:
        """A transaction is open or ending (its partitions may hold unstable data)."""
        return self in (TxnState.ONGOING, TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT)


_NAMES = {
    TxnState.EMPTY: "Empty",
    TxnState.ONGOING: "Ongoing",
    TxnState.PREPARE_COMMIT: "PrepareCommit",
    TxnState.PREPARE_ABORT: "PrepareAbort",
    TxnState.COMPLETE_COMMIT: "CompleteCommit",
    TxnState.COMPLETE_ABORT: "CompleteAbort",
    TxnState.DEAD: "Dead",
    TxnState.PREPARE_EPOCH_FENCE: "PrepareEpochFence",
}
_BY_NAME = {name: state for state, name in _NAMES.items()}

_VALID_PREVIOUS = {
    TxnState.EMPTY: {TxnState.EMPTY, TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT},
    TxnState.ONGOING: {TxnState.ONGOING, TxnState.EMPTY, TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT},
    TxnState.PREPARE_COMMIT: {TxnState.ONGOING},
    TxnState.PREPARE_ABORT: {TxnState.ONGOING},
    TxnState.COMPLETE_COMMIT: {TxnState.PREPARE_COMMIT},
    TxnState.COMPLETE_ABORT: {TxnState.PREPARE_ABORT},
    TxnState.DEAD: {TxnState.EMPTY, TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT},
}


def is_epoch_exhausted(epoch: int) -> bool:
    """Kafka keeps Short.MAX_VALUE for fencing: an epoch of 32766 or more needs a new id."""
    return epoch >= _SHORT_MAX - 1


class IllegalTransition(RuntimeError):
    """A transition Kafka's state machine forbids: a bug, never a client's doing."""


@dataclass(frozen=True, slots=True)
class TxnMetadata:
    """One transactional id's state, immutable: transitions return a new one."""

    transactional_id: str
    producer_id: int
    producer_epoch: int
    timeout_ms: int
    state: TxnState
    partitions: frozenset[tuple[str, int]] = frozenset()
    start_ms: int = -1
    last_update_ms: int = -1
    previous_producer_id: int = NO_PRODUCER_ID
    last_producer_epoch: int = NO_EPOCH
    """The epoch before the last InitProducerId bump (KIP-360 retries); not persisted, as in Kafka."""

    def _to(self, state: TxnState, now_ms: int, **changes: object) -> TxnMetadata:
        if self.state not in _VALID_PREVIOUS[state]:
            raise IllegalTransition(f"{self.transactional_id}: {self.state.display_name} -> {state.display_name}")
        return dataclasses.replace(self, state=state, last_update_ms=now_ms, **changes)  # type: ignore[arg-type]

    # -- InitProducerId --------------------------------------------------------------------

    def with_epoch_bump(self, timeout_ms: int, expected_epoch: int | None, now_ms: int) -> TxnMetadata | None:
        """Kafka's ``prepareIncrementProducerEpoch``; None when the caller is fenced.

        Without an expected epoch (a new producer instance) the epoch goes up and the last
        epoch is forgotten; with one (KIP-360: the same producer recovering) it must be the
        current epoch (bump, remember it) or the last one (a retry of a bump whose answer
        was lost: answer the current epoch again).
        """
        bumped = self.producer_epoch + 1
        if expected_epoch is None:
            epoch, last = bumped, NO_EPOCH
        elif self.producer_epoch == NO_EPOCH or expected_epoch == self.producer_epoch:
            epoch, last = bumped, self.producer_epoch
        elif expected_epoch == self.last_producer_epoch:
            epoch, last = self.producer_epoch, self.last_producer_epoch
        else:
            return None
        return self._to(TxnState.EMPTY, now_ms, producer_epoch=epoch, last_producer_epoch=last,
                        timeout_ms=timeout_ms, partitions=frozenset(), start_ms=-1)

    def with_new_producer_id(self, producer_id: int, timeout_ms: int, record_last_epoch: bool,
                             now_ms: int) -> TxnMetadata:
        """Kafka's ``prepareProducerIdRotation``: the epoch is exhausted, start over at 0."""
        return self._to(TxnState.EMPTY, now_ms, producer_id=producer_id, previous_producer_id=self.producer_id,
                        producer_epoch=0,
                        last_producer_epoch=self.producer_epoch if record_last_epoch else NO_EPOCH,
                        timeout_ms=timeout_ms, partitions=frozenset(), start_ms=-1)

    # -- a transaction ---------------------------------------------------------------------

    def with_partitions(self, added: frozenset[tuple[str, int]], now_ms: int) -> TxnMetadata:
        """Kafka's ``prepareAddPartitions``: the transaction starts (or grows)."""
        start = now_ms if self.state in (TxnState.EMPTY, TxnState.COMPLETE_ABORT, TxnState.COMPLETE_COMMIT) \
            else self.start_ms
        return self._to(TxnState.ONGOING, now_ms, partitions=self.partitions | added, start_ms=start)

    def with_fenced_epoch(self) -> TxnMetadata:
        """Kafka's ``prepareFenceProducerEpoch``: the epoch an abort-to-fence is written with."""
        if self.producer_epoch >= _SHORT_MAX:
            raise IllegalTransition(f"{self.transactional_id}: epoch {self.producer_epoch} cannot be bumped")
        return dataclasses.replace(self, producer_epoch=self.producer_epoch + 1, last_producer_epoch=NO_EPOCH)

    def with_end(self, commit: bool, now_ms: int) -> TxnMetadata:
        """Kafka's ``prepareAbortOrCommit`` (transaction version 1: the epoch stays)."""
        return self._to(TxnState.PREPARE_COMMIT if commit else TxnState.PREPARE_ABORT, now_ms)

    def with_complete(self, now_ms: int) -> TxnMetadata:
        """Kafka's ``prepareComplete``: every marker is written; the partitions are done."""
        state = TxnState.COMPLETE_COMMIT if self.state == TxnState.PREPARE_COMMIT else TxnState.COMPLETE_ABORT
        return self._to(state, now_ms, partitions=frozenset())
