"""OffsetCommit v2-9: store committed offsets (with leader epoch and metadata) for a group.

A group-level failure (unknown member, illegal generation, loading, ...) is answered on
every partition, as Kafka does. v9 is the version of KIP-848 consumers: for a consumer
group ``generation_id_or_member_epoch`` is the member epoch (STALE_MEMBER_EPOCH when it is
not the member's), and an unknown group is GROUP_ID_NOT_FOUND instead of ILLEGAL_GENERATION.
``retention_time_ms`` (v2-4) is ignored: offsets expire
by ``offsets.retention.minutes`` only (what Kafka does since KIP-211 for v5+ clients).
"""

from __future__ import annotations

from seaway.broker.context import Operation, RequestContext, ResourceType
from seaway.broker.coordinator import coordinator_of
from seaway.broker.coordinator.offsets import OffsetToCommit, commit_offsets
from seaway.broker.handlers.registry import handles
from seaway.protocol.errors import GroupAuthorizationFailedError, KafkaProtocolError, TopicAuthorizationFailedError
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
    # ACLs, as Kafka: READ on the group (else every partition fails), then READ on each topic
    if not ctx.allowed(Operation.READ, ResourceType.GROUP, request.group_id):
        denied = {(topic, partition): GroupAuthorizationFailedError.code for topic, partition, *_ in offsets}
    else:
        denied = {(o[0], o[1]): TopicAuthorizationFailedError.code for o in offsets
                  if not ctx.allowed(Operation.READ, ResourceType.TOPIC, o[0])}
    offsets = [o for o in offsets if (o[0], o[1]) not in denied]
    try:
        errors = commit_offsets(coordinator_of(ctx.broker), request.group_id,
                                request.generation_id_or_member_epoch, request.member_id,
                                request.group_instance_id if version >= 7 else None, offsets,
                                version) if offsets else {}
    except KafkaProtocolError as exc:
        errors = {(topic, partition): exc.code for topic, partition, *_ in offsets}
    errors.update(denied)
    return OffsetCommitResponse(topics=[
        OffsetCommitResponseTopic(name=t.name, partitions=[
            OffsetCommitResponsePartition(partition_index=p.partition_index,
                                          error_code=errors[(t.name, p.partition_index)])
            for p in t.partitions
        ])
        for t in request.topics
    ])
