"""Committed offsets: OffsetCommit, OffsetFetch, OffsetDelete and retention expiry.

A commit is validated against the group as Kafka's ``doCommitOffsets`` does (simple
consumers with generation -1 may commit to an empty group; members must match the
generation; CompletingRebalance answers REBALANCE_IN_PROGRESS), written to the group's
``__consumer_offsets`` partition as one batch, and only then applied in memory.

KIP-848 consumer groups (``group.protocol=consumer``) are checked as Kafka's
``ConsumerGroup.validateOffsetCommit``: a commit with member epoch -1 is accepted while the
group has no members; otherwise the member must exist (UNKNOWN_MEMBER_ID), commit with
OffsetCommit v9+ (UNSUPPORTED_VERSION) and with its current member epoch, or, as Kafka 4.3 allows
(KIP-1251), an older one for partitions it has held since that epoch (STALE_MEMBER_EPOCH
otherwise). The epoch each partition was assigned at is kept in memory as the member's current
assignment records are applied; after a restart whose log was compacted, a held partition counts
as assigned at the member's epoch, so a lagging commit is refused as before KIP-1251 (safe: the
client retries or re-consumes). OffsetFetch v9 names the member and epoch and must match exactly.
A commit to a group that does not exist with a generation/epoch >= 0 is ILLEGAL_GENERATION
before v9 and GROUP_ID_NOT_FOUND from v9 on.

Expiry (``offsets.retention.minutes``, checked every ``offsets.retention.check.interval.ms``)
follows KIP-211: offsets of an *empty* classic group expire once the group has been empty
for the retention time; offsets of a group that never used group management (no protocol
type) expire by their commit time. Stable classic groups keep their offsets (Kafka would
expire offsets of topics nobody subscribes to any more; we do not). A consumer group's
offsets of topics no member subscribes to expire by their commit time, as Kafka does. An
empty group left with no offsets becomes Dead and is removed, with tombstones for its
metadata.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable

from seaway.broker.context import now_ms
from seaway.broker.coordinator.consumer_group import ConsumerGroup
from seaway.broker.coordinator.coordinator import GroupCoordinator
from seaway.broker.coordinator.group import CommittedOffset, Group, GroupState
from seaway.broker.coordinator.offsets_topic import (
    OffsetCommitValue,
    encode_group_metadata_key,
    encode_offset_commit,
    encode_offset_commit_key,
)
from seaway.protocol.errors import (
    CoordinatorNotAvailableError,
    FencedInstanceIdError,
    GroupIdNotFoundError,
    GroupSubscribedToTopicError,
    IllegalGenerationError,
    InvalidCommitOffsetSizeError,
    KafkaProtocolError,
    MessageTooLargeError,
    NonEmptyGroupError,
    OffsetMetadataTooLargeError,
    RebalanceInProgressError,
    RecordListTooLargeError,
    StaleMemberEpochError,
    UnknownMemberIdError,
    UnknownServerError,
    UnknownTopicOrPartitionError,
    UnsupportedVersionError,
)
from seaway.protocol.messages.consumer_protocol_subscription import ConsumerProtocolSubscription
from seaway.protocol.primitives import Reader

__all__ = [
    "OffsetToCommit",
    "cleanup_group",
    "commit_offsets",
    "delete_offsets",
    "expire_offsets",
    "expire_offsets_forever",
    "fetch_offsets",
    "unstable_partitions",
]

log = logging.getLogger("seaway.broker.coordinator")

TopicPartition = tuple[str, int]
# (topic, partition, offset, leader epoch, metadata)
OffsetToCommit = tuple[str, int, int, int, str | None]


def _validate_commit(coord: GroupCoordinator, group: Group, generation_id: int, member_id: str,
                     instance_id: str | None) -> None:
    """Kafka's doCommitOffsets checks, in its order; raises the error to answer with."""
    if group.is_(GroupState.DEAD):
        raise CoordinatorNotAvailableError(f"group {group.group_id} is being removed")
    if instance_id is not None and group.static_member_id(instance_id) not in (None, member_id):
        raise FencedInstanceIdError(f"{member_id} is fenced (instance {instance_id})")
    if generation_id < 0 and group.is_(GroupState.EMPTY):
        return  # a simple consumer: Kafka only stores its offsets
    member = group.members.get(member_id)
    if member is None:
        raise UnknownMemberIdError(f"member {member_id!r} is not in group {group.group_id}")
    if generation_id != group.generation_id:
        raise IllegalGenerationError(f"generation {generation_id} is not {group.generation_id}")
    if group.is_(GroupState.COMPLETING_REBALANCE):
        raise RebalanceInProgressError(f"group {group.group_id} is completing a rebalance")
    coord.schedule_heartbeat(group, member)


def validate_consumer_commit(group: ConsumerGroup, member_epoch: int, member_id: str, version: int,
                             partitions: Iterable[TopicPartition], transactional: bool = False) -> None:
    """Kafka's ``ConsumerGroup.validateOffsetCommit`` with KIP-1251's per-partition check (Kafka
    4.3); raises the error to answer the whole commit with.

    A commit at the member's epoch commits anything; at a newer epoch nothing. At an older epoch
    (a commit sent before the heartbeat that moved the member on, the common case while a group
    rebalances) each partition must still be held by the member, assigned or pending revocation,
    since an epoch no newer than the commit's: the member owned it when it consumed what it commits.
    """
    if member_epoch < 0 and group.is_empty():
        return  # the admin client, or a consumer without group management
    member = group.members.get(member_id)
    if member is None:
        raise UnknownMemberIdError(f"Member {member_id!r} is not a member of group {group.group_id}.")
    if not transactional and version < 9:
        raise UnsupportedVersionError("OffsetCommit version 9 or above must be used by members using the "
                                      "modern group protocol")
    if member_epoch == member.member_epoch:
        return
    if member_epoch > member.member_epoch:
        raise StaleMemberEpochError(f"Received member epoch {member_epoch} is newer than current member epoch "
                                    f"{member.member_epoch}.")
    topic_ids = {topic.name: topic.topic_id for topic in group.subscription_metadata}
    for topic, partition in partitions:
        topic_id = topic_ids.get(topic)
        assigned_at = None if topic_id is None else member.assignment_epochs.get((topic_id, partition))
        if assigned_at is None:
            raise StaleMemberEpochError(f"Partition {topic}-{partition} is not assigned or pending revocation "
                                        f"for member.")
        if member_epoch < assigned_at:
            raise StaleMemberEpochError(f"Received member epoch {member_epoch} is older than assignment epoch "
                                        f"{assigned_at} for partition {topic}-{partition}.")


def commit_offsets(coord: GroupCoordinator, group_id: str, generation_id: int, member_id: str,
                   instance_id: str | None, offsets: list[OffsetToCommit],
                   version: int = 9) -> dict[TopicPartition, int]:
    """Store ``offsets``; one error code per partition. Group-level failures raise.

    ``version`` is the OffsetCommit version (it decides a few errors, see the module docstring).
    """
    coord.check_ready()
    group = coord.groups.get(group_id)
    if group is None:
        if generation_id >= 0:
            if version >= 9:
                raise GroupIdNotFoundError(f"group {group_id} does not exist")
            raise IllegalGenerationError(f"group {group_id} does not exist (generation {generation_id})")
        group = Group(group_id, now_ms())
    if isinstance(group, ConsumerGroup):
        validate_consumer_commit(group, generation_id, member_id, version, [(t, p) for t, p, *_ in offsets])
    else:
        _validate_commit(coord, group, generation_id, member_id, instance_id)
    logs = coord.broker.logs
    limit = coord.settings.offset_metadata_max_bytes
    errors: dict[TopicPartition, int] = {}
    accepted: dict[TopicPartition, CommittedOffset] = {}
    now = now_ms()
    for topic, partition, offset, epoch, metadata in offsets:
        tp = (topic, partition)
        text = metadata or ""
        if logs.get_log(topic, partition) is None:
            errors[tp] = UnknownTopicOrPartitionError.code
        elif len(text.encode("utf-8")) > limit:
            errors[tp] = OffsetMetadataTooLargeError.code
        else:
            errors[tp] = 0
            accepted[tp] = CommittedOffset(offset, epoch, text, now)
    if accepted:
        entries = [
            (encode_offset_commit_key(group_id, t, p),
             encode_offset_commit(OffsetCommitValue(c.offset, c.leader_epoch, c.metadata, c.commit_timestamp)))
            for (t, p), c in accepted.items()
        ]
        try:
            at = coord.store.write(group_id, entries, now)
        except (KafkaProtocolError, OSError) as exc:
            code = _storage_error(exc)
            log.error("could not store offsets of group %s: %s", group_id, exc)
            return {tp: (code if tp in accepted else err) for tp, err in errors.items()}
        if group_id not in coord.groups:
            coord.groups[group_id] = group
        for committed in accepted.values():
            committed.record_offset = at
        group.offsets.update(accepted)
    return errors


def _storage_error(exc: Exception) -> int:
    """Kafka's mapping of append errors to commit errors."""
    if isinstance(exc, (MessageTooLargeError, RecordListTooLargeError)):
        return InvalidCommitOffsetSizeError.code
    if isinstance(exc, UnknownTopicOrPartitionError | CoordinatorNotAvailableError):
        return CoordinatorNotAvailableError.code
    return UnknownServerError.code


def fetch_offsets(coord: GroupCoordinator, group_id: str, partitions: list[TopicPartition] | None,
                  member_id: str | None = None, member_epoch: int = -1
                  ) -> list[tuple[TopicPartition, CommittedOffset | None]]:
    """The committed offset of each partition (None: nothing committed); all when ``partitions`` is None.

    A consumer group's member that names itself (OffsetFetch v9) must be a member at that
    epoch (UNKNOWN_MEMBER_ID / STALE_MEMBER_EPOCH), as Kafka's ``validateOffsetFetch``.
    """
    coord.check_ready()
    group = coord.groups.get(group_id)
    if isinstance(group, ConsumerGroup) and (member_id is not None or member_epoch >= 0):
        member = group.members.get(member_id or "")
        if member is None:
            raise UnknownMemberIdError(f"Member {member_id} is not a member of group {group_id}.")
        if member_epoch != member.member_epoch:
            raise StaleMemberEpochError(f"The received member epoch {member_epoch} does not match the expected "
                                        f"member epoch {member.member_epoch}.")
    stored = group.offsets if group is not None else {}
    if partitions is None:
        return sorted(stored.items())
    return [(tp, stored.get(tp)) for tp in partitions]


def unstable_partitions(coord: GroupCoordinator, group_id: str) -> set[TopicPartition]:
    """Partitions with offsets committed in a still open transaction (OffsetFetch's
    ``require_stable`` answers UNSTABLE_OFFSET_COMMIT for them, KIP-447)."""
    group = coord.groups.get(group_id)
    if group is None:
        return set()
    return {tp for offsets in group.pending_txn_offsets.values() for tp in offsets}


def subscribed_topics(group: Group) -> set[str] | None:
    """Topics the members of a consumer group subscribe to; None when it cannot be told."""
    if group.protocol_type != "consumer" or group.protocol_name is None:
        return None
    topics: set[str] = set()
    for member in group.members.values():
        data = member.metadata(group.protocol_name)
        try:
            r = Reader(data)
            version = r.int16()
            sub = ConsumerProtocolSubscription.decode(r, min(max(version, 0), 3))
        except Exception:  # any malformed subscription: be conservative
            return None
        topics.update(sub.topics)
    return topics


def delete_offsets(coord: GroupCoordinator, group_id: str, partitions: list[TopicPartition]
                   ) -> dict[TopicPartition, int]:
    """OffsetDelete: per-partition errors; group-level errors raise."""
    coord.check_ready()
    group = coord.groups.get(group_id)
    if group is None or (group.dead if isinstance(group, ConsumerGroup) else group.is_(GroupState.DEAD)):
        raise GroupIdNotFoundError(f"group {group_id} does not exist")
    errors: dict[TopicPartition, int] = {}
    if isinstance(group, ConsumerGroup):
        deletable = []
        for tp in partitions:
            if group.is_subscribed_to(tp[0]):
                errors[tp] = GroupSubscribedToTopicError.code
            else:
                deletable.append(tp)
    elif group.is_(GroupState.EMPTY):
        deletable = list(partitions)
    elif group.protocol_type == "consumer":
        topics = subscribed_topics(group)
        deletable = []
        for tp in partitions:
            if topics is None or tp[0] in topics:
                errors[tp] = GroupSubscribedToTopicError.code
            else:
                deletable.append(tp)
    else:
        raise NonEmptyGroupError(f"group {group_id} is not empty")
    for tp in deletable:
        errors[tp] = 0
    cleanup_group(coord, group, [tp for tp in deletable if tp in group.offsets])
    return errors


def cleanup_group(coord: GroupCoordinator, group: Group | ConsumerGroup, removed: Iterable[TopicPartition]) -> None:
    """Tombstone ``removed`` offsets; an empty group left without offsets dies (Kafka's cleanupGroupMetadata)."""
    gid = group.group_id
    entries: list[tuple[bytes, bytes | None]] = [(encode_offset_commit_key(gid, t, p), None) for t, p in removed]
    empty = group.is_empty() if isinstance(group, ConsumerGroup) else group.is_(GroupState.EMPTY)
    dead = empty and not group.pending_txn_offsets and not (group.offsets.keys() - set(removed))
    try:
        if dead and isinstance(group, ConsumerGroup):
            coord.consumer.delete(group, entries)
        else:
            if dead:
                entries.append((encode_group_metadata_key(gid), None))
            coord.store.write(gid, entries, now_ms())
    except (KafkaProtocolError, OSError) as exc:
        log.error("could not write tombstones for group %s: %s", gid, exc)
        return
    for tp in removed:
        group.offsets.pop(tp, None)
    if dead:
        if isinstance(group, Group):
            group.transition(GroupState.DEAD, now_ms())
            group.cancel_all_timers()
            if coord.groups.get(gid) is group:
                del coord.groups[gid]
        log.info("group %s is empty with no offsets left: removed", gid)


def _expired(group: Group | ConsumerGroup, now: int, retention_ms: int) -> list[TopicPartition]:
    if isinstance(group, ConsumerGroup):
        # Kafka's rule for consumer groups: offsets of topics no member subscribes to age
        # from their commit; one with a pending transactional commit waits for it.
        pending = {tp for offsets in group.pending_txn_offsets.values() for tp in offsets}
        return [tp for tp, c in group.offsets.items()
                if tp not in pending and not group.is_subscribed_to(tp[0]) and _aged(c, now, None, retention_ms)]
    if not group.is_(GroupState.EMPTY):
        return []
    # A group that used group management ages from when it became empty; a simple
    # consumer's offsets (no protocol type) age from their own commit time.
    base = group.state_timestamp if group.protocol_type is not None else None
    return [tp for tp, c in group.offsets.items() if _aged(c, now, base, retention_ms)]


def _aged(c: CommittedOffset, now: int, base: int | None, retention_ms: int) -> bool:
    if c.expire_timestamp >= 0:
        return now >= c.expire_timestamp
    return now - (base if base is not None else c.commit_timestamp) >= retention_ms


def expire_offsets(coord: GroupCoordinator, now: int | None = None) -> int:
    """One expiry pass; returns how many offsets were removed."""
    when = now_ms() if now is None else now
    removed = 0
    for group in list(coord.groups.values()):
        expired = _expired(group, when, coord.settings.offsets_retention_ms)
        if isinstance(group, ConsumerGroup):
            idle = group.is_empty() and not group.offsets and not group.pending_txn_offsets
        else:
            idle = (group.is_(GroupState.EMPTY) and not group.offsets and not group.pending_members
                    and not group.pending_txn_offsets)
        if expired or idle:
            cleanup_group(coord, group, expired)
            removed += len(expired)
    if removed:
        log.info("expired %d committed offsets", removed)
    return removed


async def expire_offsets_forever(coord: GroupCoordinator) -> None:
    interval = max(coord.settings.offsets_retention_check_interval_ms, 10) / 1000
    while True:
        await asyncio.sleep(interval)
        try:
            expire_offsets(coord)
        except Exception:
            log.exception("offset expiry failed")
