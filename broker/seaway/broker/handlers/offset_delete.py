"""OffsetDelete: drop committed offsets of a group.

Allowed for empty groups; for active consumer groups only for topics no member subscribes
to (GROUP_SUBSCRIBED_TO_TOPIC otherwise); other active groups get NON_EMPTY_GROUP.
"""

from __future__ import annotations

from seaway.broker.context import Operation, RequestContext, ResourceType
from seaway.broker.coordinator import coordinator_of
from seaway.broker.coordinator.offsets import delete_offsets
from seaway.broker.handlers.registry import handles
from seaway.protocol.errors import GroupAuthorizationFailedError, KafkaProtocolError, TopicAuthorizationFailedError
from seaway.protocol.messages.offset_delete_request import OffsetDeleteRequest
from seaway.protocol.messages.offset_delete_response import (
    OffsetDeleteResponse,
    OffsetDeleteResponsePartition,
    OffsetDeleteResponseTopic,
)

__all__ = ["handle_offset_delete"]


@handles(OffsetDeleteRequest, OffsetDeleteResponse)
async def handle_offset_delete(ctx: RequestContext, request: OffsetDeleteRequest) -> OffsetDeleteResponse:
    if not ctx.allowed(Operation.DELETE, ResourceType.GROUP, request.group_id):
        return OffsetDeleteResponse(error_code=GroupAuthorizationFailedError.code)
    denied = {t.name for t in request.topics if not ctx.allowed(Operation.READ, ResourceType.TOPIC, t.name)}
    partitions = [(t.name, p.partition_index) for t in request.topics for p in t.partitions if t.name not in denied]
    try:
        errors = delete_offsets(coordinator_of(ctx.broker), request.group_id, partitions)
    except KafkaProtocolError as exc:
        return OffsetDeleteResponse(error_code=exc.code)
    errors.update({(t.name, p.partition_index): TopicAuthorizationFailedError.code
                   for t in request.topics if t.name in denied for p in t.partitions})
    return OffsetDeleteResponse(error_code=0, topics=[
        OffsetDeleteResponseTopic(name=t.name, partitions=[
            OffsetDeleteResponsePartition(partition_index=p.partition_index,
                                          error_code=errors[(t.name, p.partition_index)])
            for p in t.partitions])
        for t in request.topics
    ])
