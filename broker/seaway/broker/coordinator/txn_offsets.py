"""Transactional offset commits (KIP-98, KIP-447): TxnOffsetCommit and the markers that end them.

``send_offsets_to_transaction`` commits a consumer group's offsets inside the producer's
transaction: AddOffsetsToTxn puts the group's ``__consumer_offsets`` partition into the
transaction, then TxnOffsetCommit writes the offsets there as a *transactional* batch
(the producer's id and epoch, no sequence), held per producer in
``Group.pending_txn_offsets``. They become the group's committed offsets only when the
transaction coordinator's commit marker lands in that partition (:func:`complete_txn`,
called for each marker); an abort drops them. OffsetFetch never shows them, and with
``require_stable`` answers UNSTABLE_OFFSET_COMMIT while they are pending.

Checks, in Kafka's order (``GroupCoordinator.handleTxnCommitOffsets``): the coordinator
is loaded; the offsets partition is verified to be in the producer's transaction
(KIP-890; PRODUCER_FENCED becomes INVALID_PRODUCER_EPOCH, TRANSACTION_ABORTABLE becomes
INVALID_TXN_STATE before v4); the group is not Dead; a request that names a member
(generation >= 0, a member id or an instance id) must be that member of the current
generation (KIP-447: a zombie consumer's producer cannot commit). A group unknown so far
is created Empty, as Kafka does.
"""

from __future__ import annotations

import logging

from seaway.broker.context import now_ms
from seaway.broker.coordinator.consumer_group import ConsumerGroup
from seaway.broker.coordinator.coordinator import GroupCoordinator
from seaway.broker.coordinator.group import CommittedOffset, Group, GroupState
from seaway.broker.coordinator.offsets import validate_consumer_commit
from seaway.broker.coordinator.offsets_topic import (
    OffsetCommitValue,
    encode_offset_commit,
    encode_offset_commit_key,
)
from seaway.broker.coordinator.store import OFFSETS_TOPIC
from seaway.broker.coordinator.txn.coordinator import TransactionCoordinator
from seaway.protocol.errors import (
    CoordinatorLoadInProgressError,
    CoordinatorNotAvailableError,
    FencedInstanceIdError,
    IllegalGenerationError,
    InvalidCommitOffsetSizeError,
    InvalidProducerEpochError,
    InvalidTxnStateError,
    KafkaProtocolError,
    KafkaStorageError,
    MessageTooLargeError,
    NotCoordinatorError,
    NotEnoughReplicasError,
    OffsetMetadataTooLargeError,
    ProducerFencedError,
    RecordListTooLargeError,
    StaleMemberEpochError,
    TransactionAbortableError,
    UnknownMemberIdError,
    UnknownServerError,
    UnknownTopicOrPartitionError,
)
from seaway.protocol.records import Record, build_batch

__all__ = ["TxnCommit", "complete_txn", "txn_commit_offsets"]

log = logging.getLogger("seaway.broker.coordinator")

TopicPartition = tuple[str, int]
TxnCommit = tuple[str, int, int, int, str | None]
"""(topic, partition, offset, leader epoch, metadata)."""


def _verification_error(exc: KafkaProtocolError, version: int) -> KafkaProtocolError:
    """What a TxnOffsetCommit of ``version`` answers for a failed KIP-890 verification."""
    if isinstance(exc, ProducerFencedError):
        return InvalidProducerEpochError(str(exc))
    if isinstance(exc, TransactionAbortableError) and version < 4:
        return InvalidTxnStateError(str(exc))
    return exc


def _append_error(exc: BaseException) -> int:
    """Kafka's ``maybeConvertOffsetCommitError`` for a failed append."""
    if isinstance(exc, UnknownTopicOrPartitionError | NotEnoughReplicasError):
        return CoordinatorNotAvailableError.code
    if isinstance(exc, KafkaStorageError | OSError):
        return NotCoordinatorError.code
    if isinstance(exc, MessageTooLargeError | RecordListTooLargeError):
        return InvalidCommitOffsetSizeError.code
    if isinstance(exc, KafkaProtocolError):
        return exc.code
    return UnknownServerError.code


def _validate_member(group: Group, generation_id: int, member_id: str, instance_id: str | None) -> None:
    """Kafka's ``validateOffsetCommit`` for a transactional commit; raises its error."""
    if group.is_(GroupState.DEAD):
        raise CoordinatorNotAvailableError(f"group {group.group_id} is being removed")
    if generation_id < 0 and not member_id and instance_id is None:
        return  # an old client that names no member: Kafka accepts it
    if instance_id is not None:
        current = group.static_member_id(instance_id)
        if current is None:
            raise UnknownMemberIdError(f"no static member with instance id {instance_id}")
        if current != member_id:
            raise FencedInstanceIdError(f"{member_id} is fenced by {current} (instance {instance_id})")
    if member_id not in group.members:
        raise UnknownMemberIdError(f"member {member_id!r} is not in group {group.group_id}")
    if generation_id != group.generation_id:
        raise IllegalGenerationError(f"generation {generation_id} is not {group.generation_id}")


def _validate_consumer_member(group: ConsumerGroup, member_epoch: int, member_id: str,
                              partitions: list[TopicPartition]) -> None:
    """A consumer group's check of a transactional commit: a stale member epoch is ILLEGAL_GENERATION."""
    try:
        validate_consumer_commit(group, member_epoch, member_id, 0, partitions, transactional=True)
    except StaleMemberEpochError as exc:
        raise IllegalGenerationError(str(exc)) from exc


def txn_commit_offsets(coord: GroupCoordinator, txn_coordinator: TransactionCoordinator | None,
                       transactional_id: str, group_id: str,
                       producer_id: int, epoch: int, generation_id: int, member_id: str, instance_id: str | None,
                       offsets: list[TxnCommit], version: int) -> dict[TopicPartition, int]:
    """TxnOffsetCommit: one error code per partition (group-level failures on every one)."""
    requested = [(t, p) for t, p, *_ in offsets]
    try:
        coord.check_ready()
        partition = coord.store.partition_for(group_id)
        if txn_coordinator is None:
            raise CoordinatorNotAvailableError("this broker runs without a transaction coordinator")
        try:
            txn_coordinator.verify(transactional_id, producer_id, epoch, OFFSETS_TOPIC, partition)
        except CoordinatorLoadInProgressError:
            raise
        except KafkaProtocolError as exc:
            raise _verification_error(exc, version) from exc
        group = coord.groups.get(group_id)
        if group is None:
            group = coord.groups[group_id] = Group(group_id, now_ms())
        if isinstance(group, ConsumerGroup):
            _validate_consumer_member(group, generation_id, member_id, requested)
        else:
            _validate_member(group, generation_id, member_id, instance_id)
    except KafkaProtocolError as exc:
        return dict.fromkeys(requested, exc.code)
    errors: dict[TopicPartition, int] = {}
    accepted: dict[TopicPartition, CommittedOffset] = {}
    now = now_ms()
    limit = coord.settings.offset_metadata_max_bytes
    for topic, p, offset, leader_epoch, metadata in offsets:
        text = metadata or ""
        if coord.broker.logs.get_log(topic, p) is None:
            errors[(topic, p)] = UnknownTopicOrPartitionError.code
        elif len(text.encode("utf-8")) > limit:
            errors[(topic, p)] = OffsetMetadataTooLargeError.code
        else:
            errors[(topic, p)] = 0
            accepted[(topic, p)] = CommittedOffset(offset, leader_epoch, text, now)
    if not accepted:
        return errors
    records = [
        Record(i, now, encode_offset_commit_key(group_id, t, p),
               encode_offset_commit(OffsetCommitValue(c.offset, c.leader_epoch, c.metadata, c.commit_timestamp)))
        for i, ((t, p), c) in enumerate(accepted.items())
    ]
    batch = build_batch(records, producer_id=producer_id, producer_epoch=epoch, is_transactional=True)
    plog = coord.broker.logs.get_log(OFFSETS_TOPIC, partition)
    appender = coord.broker.components.producer_state
    try:
        if plog is None or appender is None:
            raise CoordinatorNotAvailableError(f"{OFFSETS_TOPIC}-{partition} is not available")
        at = appender.append_for_coordinator(plog, batch, now).base_offset
    except (KafkaProtocolError, OSError) as exc:
        code = _append_error(exc)
        log.error("could not store transactional offsets of group %s: %s", group_id, exc)
        return {tp: (code if tp in accepted else err) for tp, err in errors.items()}
    coord.broker.waiters.notify(OFFSETS_TOPIC, partition)
    for committed in accepted.values():
        committed.record_offset = at
    group.pending_txn_offsets.setdefault(producer_id, {}).update(accepted)
    return errors


def complete_txn(coord: GroupCoordinator, producer_id: int, topic: str, partition: int, commit: bool) -> None:
    """A marker for ``producer_id`` was written to ``topic``-``partition``: if that is an
    offsets partition, its groups' pending offsets of the producer are committed or dropped."""
    if topic != OFFSETS_TOPIC:
        return
    for group in coord.groups.values():
        pending = group.pending_txn_offsets.get(producer_id)
        if pending is None or coord.store.partition_for(group.group_id) != partition:
            continue
        del group.pending_txn_offsets[producer_id]
        if not commit:
            continue
        for tp, committed in pending.items():
            current = group.offsets.get(tp)
            if current is None or current.record_offset < committed.record_offset:
                group.offsets[tp] = committed
