"""OffsetCommit v2-8: store committed offsets (with leader epoch and metadata) for a group.

A group-level failure (unknown member, illegal generation, loading, ...) is answered on
every partition, as Kafka does. ``retention_time_ms`` (v2-4) is ignored: offsets expire
by ``offsets.retention.minutes`` only (what Kafka does since KIP-211 for v5+ clients).
"""

from __future__ import annotations

from seaway.broker.context import RequestContext
from seaway.broker.coordinator import coordinator_of
from seaway.broker.coordinator.offsets import OffsetToCommit, commit_offsets
from seaway.broker.handlers.registry import handles
from seaway.protocol.errors import KafkaProtocolError
from seaway.protocol.messages.offset_commit_request import OffsetCommitRequest
from seaway.protocol.messages.offset_commit_response import (
    OffsetCommitResponse,
    OffsetCommitResponsePartition,
    OffsetCommitResponseTopic,
)

__all__ = ["handle_offset_commit"]


@handles(OffsetCommitRequest, OffsetCommitResponse)
async def handle_offset_commit(ctx: RequestContext, request: OffsetCommitRequest) -> OffsetCommitResponse:
    version = ctx.api_version
    offsets: list[OffsetToCommit] = [
        (t.name, p.partition_index, p.committed_offset, p.committed_leader_epoch if version >= 6 else -1,
         p.committed_metadata)
        for t in request.topics for p in t.partitions
    ]
    try:
        errors = commit_offsets(coordinator_of(ctx.broker), request.group_id,
                                request.generation_id_or_member_epoch, request.member_id,
                                request.group_instance_id if version >= 7 else None, offsets)
    except KafkaProtocolError as exc:
        errors = {(topic, partition): exc.code for topic, partition, *_ in offsets}
    return OffsetCommitResponse(topics=[
        OffsetCommitResponseTopic(name=t.name, partitions=[
            OffsetCommitResponsePartition(partition_index=p.partition_index,
                                          error_code=errors[(t.name, p.partition_index)])
            for p in t.partitions
        ])
        for t in request.topics
    ])
