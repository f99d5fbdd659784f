"""OffsetFetch v1-8: committed offsets of one group (v1-7) or several (v8).

A partition with nothing committed answers offset -1 with no error. v2+ may ask for all
of a group's partitions with a null topic list. ``require_stable`` (v7+) asks to wait for
pending transactional commits; there are none here, so it is satisfied trivially.
Group-level errors go in the top-level error code (v2-7), the group's error code (v8), or
on every requested partition (v1, which has no top-level code).
"""

from __future__ import annotations

from collections import defaultdict

from seaway.broker.context import RequestContext
from seaway.broker.coordinator import coordinator_of
from seaway.broker.coordinator.group import CommittedOffset
from seaway.broker.coordinator.offsets import fetch_offsets
from seaway.broker.handlers.registry import handles
from seaway.protocol.errors import KafkaProtocolError
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


def _fetch(ctx: RequestContext, group_id: str, partitions: list[tuple[str, int]] | None) -> tuple[int, Fetched]:
    try:
        return 0, fetch_offsets(coordinator_of(ctx.broker), group_id, partitions)
    except KafkaProtocolError as exc:
        return exc.code, [(tp, None) for tp in partitions or []]


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
            error, fetched = _fetch(ctx, g.group_id, wanted)
            groups.append(OffsetFetchResponseGroup(group_id=g.group_id, error_code=error, topics=[
                OffsetFetchResponseTopics(name=topic, partitions=[
                    OffsetFetchResponsePartitions(
                        partition_index=p, error_code=0,
                        committed_offset=c.offset if c else -1,
                        committed_leader_epoch=c.leader_epoch if c else -1,
                        metadata=c.metadata if c else "")
                    for p, c in parts])
                for topic, parts in _by_topic(fetched).items()
            ]))
        return OffsetFetchResponse(groups=groups)
    topics = request.topics
    wanted = None if topics is None else [(t.name, p) for t in topics for p in t.partition_indexes]
    error, fetched = _fetch(ctx, request.group_id, wanted)
    partition_error = error if version < 2 else 0
    if error and version >= 2:
        fetched = []
    return OffsetFetchResponse(error_code=error, topics=[
        OffsetFetchResponseTopic(name=topic, partitions=[
            OffsetFetchResponsePartition(
                partition_index=p, error_code=partition_error,
                committed_offset=c.offset if c else -1,
                committed_leader_epoch=c.leader_epoch if c else -1,
                metadata=c.metadata if c else "")
            for p, c in parts])
        for topic, parts in _by_topic(fetched).items()
    ])
