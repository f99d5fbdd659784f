"""OffsetFetch v1-9: committed offsets of one group (v1-7) or several (v8+).

A partition with nothing committed answers offset -1 with no error. v2+ may ask for all
of a group's partitions with a null topic list. Offsets committed in a still open
transaction (TxnOffsetCommit) are never shown; with ``require_stable`` (v7+, KIP-447) their
partitions answer UNSTABLE_OFFSET_COMMIT, which clients retry until the transaction ends.
Group-level errors go in the top-level error code (v2-7), the group's error code (v8+), or
on every requested partition (v1, which has no top-level code). v9 (KIP-848 consumers)
names the member and its epoch; for a consumer group they are checked
(UNKNOWN_MEMBER_ID, STALE_MEMBER_EPOCH), for a classic group ignored, as Kafka does.

ACLs, as Kafka: DESCRIBE on the group (GROUP_AUTHORIZATION_FAILED), DESCRIBE on each topic:
named partitions of other topics are TOPIC_AUTHORIZATION_FAILED, and "all partitions" lists
only topics the caller may describe.
"""

from __future__ import annotations

from collections import defaultdict

from seaway.broker.context import Operation, RequestContext, ResourceType
from seaway.broker.coordinator import coordinator_of
from seaway.broker.coordinator.group import CommittedOffset
from seaway.broker.coordinator.offsets import fetch_offsets, unstable_partitions
from seaway.broker.handlers.registry import handles
from seaway.protocol.errors import (
    GroupAuthorizationFailedError,
    KafkaProtocolError,
    TopicAuthorizationFailedError,
    UnstableOffsetCommitError,
)
from seaway.protocol.messages.offset_fetch_request import OffsetFetchRequest
from seaway.protocol.messages.offset_fetch_response import (
    OffsetFetchResponse,
    OffsetFetchResponseGroup,
    OffsetFetchResponsePartition,
    OffsetFetchResponsePartitions,
    OffsetFetchResponseTopic,
    OffsetFetchResponseTopics,
)

__all__ = ["handle_offset_fetch"]

Fetched = list[tuple[tuple[str, int], CommittedOffset | None]]


def _fetch(ctx: RequestContext, group_id: str, partitions: list[tuple[str, int]] | None,
           require_stable: bool = False, member_id: str | None = None, member_epoch: int = -1
           ) -> tuple[int, Fetched]:
    if not ctx.allowed(Operation.DESCRIBE, ResourceType.GROUP, group_id):
        return GroupAuthorizationFailedError.code, [(tp, None) for tp in partitions or []]
    try:
        fetched = fetch_offsets(coordinator_of(ctx.broker), group_id, partitions, member_id, member_epoch)
        if require_stable:
            unstable = unstable_partitions(coordinator_of(ctx.broker), group_id)
            if unstable:
                fetched = [(tp, _UNSTABLE) if tp in unstable else (tp, c) for tp, c in fetched]
    except KafkaProtocolError as exc:
        return exc.code, [(tp, None) for tp in partitions or []]
    if ctx.broker.authorizer is not None:
        visible = {t for (t, _), _ in fetched if ctx.allowed(Operation.DESCRIBE, ResourceType.TOPIC, t)}
        if partitions is None:  # all of the group's partitions: only the describable topics
            fetched = [item for item in fetched if item[0][0] in visible]
        else:
            fetched = [item if item[0][0] in visible else (item[0], _DENIED) for item in fetched]
    return 0, fetched


# Stands for "not authorized" in a Fetched list; rendered as TOPIC_AUTHORIZATION_FAILED.
_DENIED = CommittedOffset(offset=-1, leader_epoch=-1, metadata="", commit_timestamp=-1)
# Stands for "an open transaction committed here" (require_stable): UNSTABLE_OFFSET_COMMIT.
_UNSTABLE = CommittedOffset(offset=-1, leader_epoch=-1, metadata="", commit_timestamp=-1)


def _code(committed: CommittedOffset | None, otherwise: int = 0) -> int:
    if committed is _UNSTABLE:
        return UnstableOffsetCommitError.code
    return TopicAuthorizationFailedError.code if committed is _DENIED else otherwise


def _by_topic(fetched: Fetched) -> dict[str, list[tuple[int, CommittedOffset | None]]]:
    topics: dict[str, list[tuple[int, CommittedOffset | None]]] = defaultdict(list)
    for (topic, partition), committed in fetched:
        topics[topic].append((partition, committed))
    return topics


@handles(OffsetFetchRequest, OffsetFetchResponse)
async def handle_offset_fetch(ctx: RequestContext, request: OffsetFetchRequest) -> OffsetFetchResponse:
    version = ctx.api_version
    if version >= 8:
        groups = []
        for g in request.groups:
            wanted = None if g.topics is None else [(t.name, p) for t in g.topics for p in t.partition_indexes]
            error, fetched = _fetch(ctx, g.group_id, wanted, request.require_stable, g.member_id, g.member_epoch)
            groups.append(OffsetFetchResponseGroup(group_id=g.group_id, error_code=error, topics=[
                OffsetFetchResponseTopics(name=topic, partitions=[
                    OffsetFetchResponsePartitions(
                        partition_index=p, error_code=_code(c),
                        committed_offset=c.offset if c else -1,
                        committed_leader_epoch=c.leader_epoch if c else -1,
                        metadata=c.metadata if c else "")
                    for p, c in parts])
                for topic, parts in _by_topic(fetched).items()
            ]))
        return OffsetFetchResponse(groups=groups)
    topics = request.topics
    wanted = None if topics is None else [(t.name, p) for t in topics for p in t.partition_indexes]
    error, fetched = _fetch(ctx, request.group_id, wanted, version >= 7 and request.require_stable)
    partition_error = error if version < 2 else 0
    if error and version >= 2:
        fetched = []
    return OffsetFetchResponse(error_code=error, topics=[
        OffsetFetchResponseTopic(name=topic, partitions=[
            OffsetFetchResponsePartition(
                partition_index=p, error_code=_code(c, partition_error),
                committed_offset=c.offset if c else -1,
                committed_leader_epoch=c.leader_epoch if c else -1,
                metadata=c.metadata if c else "")
            for p, c in parts])
        for topic, parts in _by_topic(fetched).items()
    ])
