"""The transaction coordinator: Kafka's ``TransactionCoordinator`` for one node.

It owns every transactional id's :class:`~.state.TxnMetadata`, persisted in
``__transaction_state`` before it is installed in memory, and drives each transaction
through Kafka's states. The rules (which error when, how epochs move, who is fenced)
follow ``TransactionCoordinator.scala``; comments name the Kafka behaviour where it is
not obvious.

One difference shapes the code: on a single node the coordinator writes the commit/abort
markers (Kafka's WriteTxnMarkers to each partition leader) by appending to the local logs
itself. EndTxn writes PrepareCommit and answers, as Kafka does; the markers and
CompleteCommit follow on the event loop right after the answer is written, before any
request that arrives after it is read, so clients never see the CONCURRENT_TRANSACTIONS
retries Kafka answers while its markers are in flight (they see it only if a marker cannot
be written, e.g. a failing disk; those are retried every second until written), and a
read_committed consumer that learns of the commit sees its records. Likewise a
transaction that is still open when its producer's successor calls InitProducerId is
aborted with a bumped epoch and the new epoch is answered at once, where Kafka answers
CONCURRENT_TRANSACTIONS first and bumps again on the retry (the epoch ends up the same).

Recovery: ``__transaction_state`` is replayed on a worker thread at start. Transactions
found in PrepareCommit/PrepareAbort get their markers (again; a repeated marker is
harmless) and complete; for every transaction still in flight the producer state of its
partitions is loaded, so each partition's last stable offset is exact before
:attr:`TransactionCoordinator.recovered` is set. Ongoing transactions past their timeout
are aborted by the periodic check, like any other.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from seaway.broker.context import BrokerContext, now_ms
from seaway.broker.coordinator.txn.log_format import TxnLogValue
from seaway.broker.coordinator.txn.state import (
    NO_EPOCH,
    TxnMetadata,
    TxnState,
    is_epoch_exhausted,
)
from seaway.broker.coordinator.txn.store import TransactionStore
from seaway.protocol.errors import (
    ConcurrentTransactionsError,
    CoordinatorLoadInProgressError,
    CoordinatorNotAvailableError,
    InvalidProducerEpochError,
    InvalidProducerIdMappingError,
    InvalidRequestError,
    InvalidTransactionTimeoutError,
    InvalidTxnStateError,
    KafkaProtocolError,
    KafkaStorageError,
    NotCoordinatorError,
    ProducerFencedError,
    TransactionAbortableError,
    TransactionalIdNotFoundError,
    UnknownServerError,
    UnknownTopicOrPartitionError,
)

if TYPE_CHECKING:
    from seaway.broker.producer.ids import ProducerIdAllocator
    from seaway.broker.producer.manager import ProducerStateManager

__all__ = ["MarkerListener", "TransactionCoordinator", "TxnSettings"]

log = logging.getLogger("seaway.broker.coordinator.txn")

COORDINATOR_EPOCH = 0
"""Kafka stamps markers with the __transaction_state partition's leader epoch; one node
never changes leader, so it is constant here (producer state still checks it)."""
_RETRY_MARKERS_S = 1.0
TopicPartition = tuple[str, int]
MarkerListener = Callable[[int, str, int, bool], None]
"""Told (producer id, topic, partition, committed) after each marker is written (the group
coordinator makes transactional offset commits visible this way)."""


@dataclass(frozen=True, slots=True)
class TxnSettings:
    """The broker configs the transaction coordinator reads, Kafka's names and defaults."""

    num_partitions: int = 50
    segment_bytes: int = 104857600
    max_timeout_ms: int = 900000
    id_expiration_ms: int = 604800000
    abort_interval_ms: int = 10000
    expire_interval_ms: int = 3600000
    verification: bool = True

    @classmethod
    def from_config(cls, config: Any) -> TxnSettings:
        get = config.get
        return cls(
            num_partitions=int(get("transaction.state.log.num.partitions")),
            segment_bytes=int(get("transaction.state.log.segment.bytes")),
            max_timeout_ms=int(get("transaction.max.timeout.ms")),
            id_expiration_ms=int(get("transactional.id.expiration.ms")),
            abort_interval_ms=int(get("transaction.abort.timed.out.transaction.cleanup.interval.ms")),
            expire_interval_ms=int(get("transaction.remove.expired.transaction.cleanup.interval.ms")),
            verification=bool(get("transaction.partition.verification.enable")),
        )


def _value(md: TxnMetadata) -> TxnLogValue:
    return TxnLogValue(md.producer_id, md.producer_epoch, md.timeout_ms, md.state, md.partitions,
                       md.last_update_ms, md.start_ms, md.previous_producer_id)


def _append_error(exc: BaseException) -> KafkaProtocolError:
    """Kafka's mapping of a failed __transaction_state append to the answer a client gets."""
    if isinstance(exc, UnknownTopicOrPartitionError | CoordinatorNotAvailableError):
        return CoordinatorNotAvailableError(f"cannot write the transaction state: {exc}")
    if isinstance(exc, KafkaStorageError | OSError):
        return NotCoordinatorError(f"cannot write the transaction state: {exc}")
    return UnknownServerError(f"cannot write the transaction state: {exc}")


class TransactionCoordinator:
    """Every transactional id of this broker (see the module docstring). Event loop only."""

    def __init__(self, broker: BrokerContext, settings: TxnSettings, producers: ProducerStateManager,
                 ids: ProducerIdAllocator) -> None:
        self.broker = broker
        self.settings = settings
        self.producers = producers
        self.ids = ids
        self.store = TransactionStore(broker, settings.num_partitions, settings.segment_bytes)
        self.transactions: dict[str, TxnMetadata] = {}
        self.unfinished: dict[str, set[TopicPartition]] = {}
        """Ids whose end could not be completed yet: the partitions still owed a marker."""
        self.marker_listeners: list[MarkerListener] = []
        self.topic_ready = False
        self.recovered = False
        self._recovered_event = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []

    # ================================================================== lifecycle
    def start(self) -> None:
        """Begin loading in the background (called from the running event loop)."""
        self._tasks.append(asyncio.get_running_loop().create_task(self._load()))

    async def _load(self) -> None:
        delay = 0.5
        while True:
            try:
                if not self.topic_ready:
                    await asyncio.to_thread(self.store.ensure_topic)
                    self.topic_ready = True
                started = time.monotonic()
                loaded = await asyncio.to_thread(self.store.replay)
                break
            except Exception as exc:  # a full disk, an unreadable segment: keep answering retriably
                log.error("cannot load %s (%s); retrying in %.1fs", "__transaction_state", exc, delay)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 10.0)
        for transactional_id, v in loaded.values.items():
            self.transactions[transactional_id] = TxnMetadata(
                transactional_id, v.producer_id, v.producer_epoch, v.timeout_ms, v.state, v.partitions,
                v.start_ms, v.last_update_ms, v.previous_producer_id)
        self._recover()
        self.recovered = True
        self._recovered_event.set()
        log.info("loaded %d transactional ids from %d records in %.3fs (%d in flight)", len(self.transactions),
                 loaded.records, time.monotonic() - started,
                 sum(1 for md in self.transactions.values() if md.state.in_flight))
        loop = asyncio.get_running_loop()
        self._tasks.append(loop.create_task(self._every(self.settings.abort_interval_ms / 1000,
                                                        self.abort_timed_out)))
        self._tasks.append(loop.create_task(self._every(self.settings.expire_interval_ms / 1000,
                                                        self.expire_transactional_ids)))
        self._tasks.append(loop.create_task(self._every(_RETRY_MARKERS_S, self.retry_unfinished)))

    def _recover(self) -> None:
        """Load the producer state of in-flight transactions' partitions; finish Prepare*."""
        for md in list(self.transactions.values()):
            if not md.state.in_flight:
                continue
            for topic, partition in md.partitions:
                plog = self.broker.logs.get_log(topic, partition)
                if plog is not None:
                    try:
                        self.producers.state_of(plog)
                    except Exception as exc:
                        log.error("cannot load the producer state of %s-%d: %s", topic, partition, exc)
            if md.state in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT):
                log.info("completing %s of %s found at start", md.state.display_name, md.transactional_id)
                self._finish(md)

    async def _every(self, interval_s: float, job: Callable[[], object]) -> None:
        while True:
            await asyncio.sleep(max(interval_s, 0.01))
            try:
                job()
            except Exception:
                log.exception("transaction coordinator task %s failed", getattr(job, "__name__", job))

    async def wait_recovered(self, timeout_s: float) -> bool:
        """Wait (at most ``timeout_s``) until every partition's last stable offset is known."""
        if not self.recovered:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._recovered_event.wait(), timeout_s)
        return self.recovered

    async def close(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    def check_ready(self) -> None:
        if not self.topic_ready:
            raise CoordinatorNotAvailableError("the transaction state topic is not available yet")
        if not self.recovered:
            raise CoordinatorLoadInProgressError("the transaction coordinator is loading __transaction_state")

    # ================================================================== persistence
    def _persist(self, md: TxnMetadata) -> None:
        """Write ``md`` to __transaction_state, then install it (raises the client's error)."""
        try:
            self.store.write(md.transactional_id, _value(md), now_ms())
        except (KafkaProtocolError, OSError) as exc:
            log.error("cannot persist the state of transactional id %s: %s", md.transactional_id, exc)
            raise _append_error(exc) from exc
        self.transactions[md.transactional_id] = md

    def _require(self, transactional_id: str, producer_id: int, epoch: int) -> TxnMetadata:
        """The id's metadata if ``producer_id``/``epoch`` are its current ones (Kafka's order)."""
        if not transactional_id:
            raise InvalidRequestError("the transactional id must not be empty")
        self.check_ready()
        md = self.transactions.get(transactional_id)
        if md is None or md.producer_id != producer_id:
            raise InvalidProducerIdMappingError(
                f"producer id {producer_id} is not the current producer of transactional id {transactional_id!r}")
        if md.producer_epoch != epoch:
            raise ProducerFencedError(
                f"producer epoch {epoch} of {transactional_id!r} is fenced by epoch {md.producer_epoch}")
        if transactional_id in self.unfinished:
            raise ConcurrentTransactionsError(f"the last transaction of {transactional_id!r} is still ending")
        return md

    # ================================================================== InitProducerId
    async def init_producer_id(self, transactional_id: str, timeout_ms: int,
                               expected: tuple[int, int] | None) -> tuple[int, int]:
        """Kafka's ``handleInitProducerId`` for a transactional id: (producer id, epoch)."""
        if not transactional_id:
            raise InvalidRequestError("the transactional id must not be empty")
        if not 0 < timeout_ms <= self.settings.max_timeout_ms:
            raise InvalidTransactionTimeoutError(
                f"transaction timeout {timeout_ms} ms is not in (0, transaction.max.timeout.ms="
                f"{self.settings.max_timeout_ms}]")
        self.check_ready()
        if self.ids.needs_write:
            try:
                await asyncio.to_thread(self.ids.ensure_block)  # no disk I/O on the event loop below
            except OSError as exc:
                raise CoordinatorNotAvailableError(f"cannot reserve producer ids: {exc}") from exc
        now = now_ms()
        md = self.transactions.get(transactional_id)
        if md is None:
            md = TxnMetadata(transactional_id, self.ids.allocate(), NO_EPOCH, timeout_ms, TxnState.EMPTY,
                             last_update_ms=now)
        if transactional_id in self.unfinished:
            raise ConcurrentTransactionsError(f"the last transaction of {transactional_id!r} is still ending")
        if expected is not None and not self._valid_producer_id(md, *expected):
            raise ProducerFencedError(f"producer {expected[0]} epoch {expected[1]} of {transactional_id!r} is fenced")
        if md.state == TxnState.ONGOING:
            # Kafka's PrepareEpochFence: abort the open transaction with a bumped epoch,
            # which fences the old producer in every partition it wrote to.
            log.info("fencing producer %d epoch %d of %s: aborting its open transaction", md.producer_id,
                     md.producer_epoch, transactional_id)
            self._end(md.with_fenced_epoch(), commit=False)
            if transactional_id in self.unfinished:
                raise ConcurrentTransactionsError(f"the fenced transaction of {transactional_id!r} is ending")
            md = self.transactions[transactional_id]
        if md.state.in_flight:
            raise ConcurrentTransactionsError(f"the last transaction of {transactional_id!r} is still ending")
        if is_epoch_exhausted(md.producer_epoch) and (expected is None or expected[1] == md.producer_epoch):
            new = md.with_new_producer_id(self.ids.allocate(), timeout_ms, expected is not None, now)
        else:
            bumped = md.with_epoch_bump(timeout_ms, None if expected is None else expected[1], now)
            if bumped is None:
                raise ProducerFencedError(
                    f"epoch {expected and expected[1]} of {transactional_id!r} is neither the current "
                    f"({md.producer_epoch}) nor the last ({md.last_producer_epoch})")
            new = bumped
        self._persist(new)
        log.info("initialized transactional id %s with producer id %d epoch %d", transactional_id,
                 new.producer_id, new.producer_epoch)
        return new.producer_id, new.producer_epoch

    @staticmethod
    def _valid_producer_id(md: TxnMetadata, producer_id: int, epoch: int) -> bool:
        """Kafka's ``isValidProducerId`` (KIP-360): may this producer re-initialize?"""
        return (md.producer_epoch == NO_EPOCH or producer_id == md.producer_id
                or (producer_id == md.previous_producer_id and is_epoch_exhausted(epoch)))

    # ================================================================== a transaction
    def add_partitions(self, transactional_id: str, producer_id: int, epoch: int,
                       partitions: Iterable[TopicPartition]) -> None:
        """Kafka's ``handleAddPartitionsToTransaction``: one outcome for all ``partitions``."""
        md = self._require(transactional_id, producer_id, epoch)
        if md.state in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT):
            raise ConcurrentTransactionsError(f"the last transaction of {transactional_id!r} is still ending")
        added = frozenset(partitions)
        if md.state == TxnState.ONGOING and added <= md.partitions:
            return
        self._persist(md.with_partitions(added, now_ms()))

    def verify(self, transactional_id: str, producer_id: int, epoch: int, topic: str, partition: int) -> None:
        """Kafka's ``handleVerifyPartitionsInTransaction`` (KIP-890) for one partition.

        The producer state calls it before the first batch of a transaction on a partition:
        the partition must be in the producer's ongoing transaction, so nothing is written
        that no marker would ever end (a hanging transaction).
        """
        md = self.transactions.get(transactional_id) if self.recovered else None
        if not self.recovered:
            raise CoordinatorLoadInProgressError("the transaction coordinator is loading")
        if md is None or md.producer_id != producer_id:
            raise InvalidProducerIdMappingError(
                f"producer id {producer_id} is not the current producer of transactional id {transactional_id!r}")
        if md.producer_epoch != epoch:
            raise ProducerFencedError(f"producer epoch {epoch} of {transactional_id!r} is fenced")
        if md.state in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT):
            raise ConcurrentTransactionsError(f"the last transaction of {transactional_id!r} is still ending")
        if (topic, partition) not in md.partitions:
            raise TransactionAbortableError(f"{topic}-{partition} was not added to the transaction of "
                                            f"{transactional_id!r}")

    def end_txn(self, transactional_id: str, producer_id: int, epoch: int, commit: bool) -> None:
        """Kafka's ``handleEndTransaction`` from a client (transaction version 1)."""
        md = self._require(transactional_id, producer_id, epoch)
        wanted = TxnState.COMPLETE_COMMIT if commit else TxnState.COMPLETE_ABORT
        if md.state == TxnState.ONGOING:
            self._end(md, commit, answer_first=True)
        elif md.state == wanted:
            return  # a retry of an end that completed
        elif md.state in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT) and \
                md.state == (TxnState.PREPARE_COMMIT if commit else TxnState.PREPARE_ABORT):
            raise ConcurrentTransactionsError(f"the transaction of {transactional_id!r} is still ending")
        else:
            raise InvalidTxnStateError(f"cannot {'commit' if commit else 'abort'} the transaction of "
                                       f"{transactional_id!r} in state {md.state.display_name}")

    def _end(self, md: TxnMetadata, commit: bool, *, answer_first: bool = False) -> None:
        """PrepareCommit/PrepareAbort (raises if it cannot be written), markers, Complete*.

        ``answer_first`` (a client's EndTxn): as Kafka, the end is acknowledged once its
        PrepareCommit/PrepareAbort is written, and the markers and the completion follow
        right after the answer is on the socket (:meth:`_finish_after_answer`), not before
        it: they are then off the client's critical path (about 0.1 ms of an EndTxn's
        0.2 ms, docs/performance.md). Nothing can be read in between: a request that
        arrives after the answer is handled in a later loop iteration than the markers.
        A crash in between is what recovery already handles (a Prepare* record is
        completed at start).
        """
        prepared = md.with_end(commit, now_ms())
        self._persist(prepared)
        if not answer_first:
            self._finish(prepared)
            return
        # owed: every partition; anything of this id meanwhile gets CONCURRENT_TRANSACTIONS
        self.unfinished[prepared.transactional_id] = set(prepared.partitions)
        loop = asyncio.get_running_loop()
        # the handler's answer is written by a callback its connection schedules after this
        # one returns (connection.py, _send): one hop more puts the markers after it
        loop.call_soon(loop.call_soon, self._finish_after_answer, prepared.transactional_id)

    def _finish_after_answer(self, transactional_id: str) -> None:
        """The markers and completion of an end already answered (unless a retry did them)."""
        md = self.transactions.get(transactional_id)
        if transactional_id not in self.unfinished or md is None or \
                md.state not in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT):
            return
        try:
            self._finish(md)
        except Exception:  # the periodic retry takes over, as for a failed marker
            log.exception("cannot finish the transaction of %s (retrying)", transactional_id)
            self.unfinished.setdefault(transactional_id, set(md.partitions))

    def _finish(self, prepared: TxnMetadata) -> None:
        """Write the markers of a prepared end, then its completion; what fails is retried."""
        owed = self.unfinished.pop(prepared.transactional_id, None)
        partitions = prepared.partitions if owed is None else owed
        failed = self._write_markers(prepared, partitions)
        if failed:
            self.unfinished[prepared.transactional_id] = failed
            return
        try:
            self._persist(prepared.with_complete(now_ms()))
        except KafkaProtocolError:
            self.unfinished[prepared.transactional_id] = set()

    def _write_markers(self, md: TxnMetadata, partitions: Iterable[TopicPartition]) -> set[TopicPartition]:
        """Append the end marker to each partition; returns the partitions that failed."""
        commit = md.state == TxnState.PREPARE_COMMIT
        failed: set[TopicPartition] = set()
        now = now_ms()
        for topic, partition in sorted(partitions):
            plog = self.broker.logs.get_log(topic, partition)
            if plog is None:
                log.info("no marker for %s-%d of %s: the partition no longer exists", topic, partition,
                         md.transactional_id)
                continue
            try:
                self.producers.append_marker(plog, md.producer_id, md.producer_epoch, COORDINATOR_EPOCH, commit,
                                             now)
            except InvalidProducerEpochError as exc:
                # Kafka's marker handler gives up on such a partition too: a newer epoch of
                # this producer already wrote there, so nothing of this transaction is open.
                log.warning("no marker for %s-%d of %s: %s", topic, partition, md.transactional_id, exc)
                continue
            except (KafkaProtocolError, OSError) as exc:
                log.error("cannot write the %s marker of %s to %s-%d (retrying): %s",
                          "commit" if commit else "abort", md.transactional_id, topic, partition, exc)
                failed.add((topic, partition))
                continue
            self.broker.waiters.notify(topic, partition)
            for listener in self.marker_listeners:
                listener(md.producer_id, topic, partition, commit)
        return failed

    def retry_unfinished(self) -> None:
        """Retry markers (or completions) that could not be written (runs every second)."""
        for transactional_id in list(self.unfinished):
            md = self.transactions.get(transactional_id)
            if md is None or md.state not in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT):
                self.unfinished.pop(transactional_id, None)
                continue
            self._finish(md)

    # ================================================================== timers
    def abort_timed_out(self, now: int | None = None) -> int:
        """Abort (with a bumped epoch, fencing the producer) transactions open past their timeout."""
        when = now_ms() if now is None else now
        aborted = 0
        for md in list(self.transactions.values()):
            if md.state != TxnState.ONGOING or md.transactional_id in self.unfinished:
                continue
            if md.start_ms + md.timeout_ms < when:
                log.info("aborting the transaction of %s (producer %d epoch %d): open for %d ms, timeout %d ms",
                         md.transactional_id, md.producer_id, md.producer_epoch, when - md.start_ms, md.timeout_ms)
                try:
                    self._end(md.with_fenced_epoch(), commit=False)
                except KafkaProtocolError as exc:
                    log.error("cannot abort the timed-out transaction of %s: %s", md.transactional_id, exc)
                    continue
                aborted += 1
        return aborted

    def expire_transactional_ids(self, now: int | None = None) -> int:
        """Tombstone ids idle for ``transactional.id.expiration.ms`` with nothing in flight."""
        when = now_ms() if now is None else now
        expired = 0
        for md in list(self.transactions.values()):
            if not md.state.expirable or md.transactional_id in self.unfinished:
                continue
            if md.last_update_ms > when - self.settings.id_expiration_ms:
                continue
            try:
                self.store.write(md.transactional_id, None, when)
            except (KafkaProtocolError, OSError) as exc:
                log.error("cannot expire transactional id %s: %s", md.transactional_id, exc)
                continue
            del self.transactions[md.transactional_id]
            expired += 1
        if expired:
            log.info("expired %d transactional ids idle for %d ms", expired, self.settings.id_expiration_ms)
        return expired

    # ================================================================== admin
    def describe(self, transactional_id: str) -> TxnMetadata:
        """Kafka's ``handleDescribeTransactions`` for one id (raises its error)."""
        self.check_ready()
        if not transactional_id:
            raise InvalidRequestError("the transactional id must not be empty")
        md = self.transactions.get(transactional_id)
        if md is None or md.state == TxnState.DEAD:
            raise TransactionalIdNotFoundError(f"transactional id {transactional_id!r} is not known")
        return md

    def list_transactions(self, states: Iterable[str], producer_ids: Iterable[int], duration_ms: int = -1
                          ) -> tuple[list[TxnMetadata], list[str]]:
        """Kafka's ``listTransactionStates``: (matching transactions, unknown state names)."""
        self.check_ready()
        wanted: set[TxnState] = set()
        unknown: list[str] = []
        names = list(states)
        for name in names:
            state = TxnState.from_display_name(name)
            if state is None:
                unknown.append(name)
            else:
                wanted.add(state)
        pids = set(producer_ids)
        now = now_ms()
        found = [md for md in self.transactions.values()
                 if md.state != TxnState.DEAD
                 and (not pids or md.producer_id in pids)
                 and (not names or md.state in wanted)
                 and (duration_ms < 0 or now - md.start_ms > duration_ms)]
        return found, unknown
