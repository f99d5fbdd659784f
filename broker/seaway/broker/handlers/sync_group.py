"""SyncGroup: the leader hands in the assignments; every member waits for its own.

v5+ carry the protocol type and name, checked against the group's
(INCONSISTENT_GROUP_PROTOCOL on a mismatch) and echoed back.
"""

from __future__ import annotations

from seaway.broker.context import Operation, RequestContext, ResourceType
from seaway.broker.coordinator import SyncResult, coordinator_of
from seaway.broker.handlers.registry import handles
from seaway.protocol.errors import KafkaProtocolError
from seaway.protocol.messages.sync_group_request import SyncGroupRequest
from seaway.protocol.messages.sync_group_response import SyncGroupResponse

__all__ = ["handle_sync_group"]


@handles(SyncGroupRequest, SyncGroupResponse)
async def handle_sync_group(ctx: RequestContext, request: SyncGroupRequest) -> SyncGroupResponse:
    version = ctx.api_version
    try:
        ctx.require(Operation.READ, ResourceType.GROUP, request.group_id)
        result = await coordinator_of(ctx.broker).sync_group(
            request.group_id, request.generation_id, request.member_id,
            request.group_instance_id if version >= 3 else None,
            request.protocol_type if version >= 5 else None,
            request.protocol_name if version >= 5 else None,
            {a.member_id: bytes(a.assignment) for a in request.assignments},
        )
    except KafkaProtocolError as exc:
        result = SyncResult(error=exc.code)
    return SyncGroupResponse(error_code=result.error, protocol_type=result.protocol_type,
                             protocol_name=result.protocol_name, assignment=result.assignment)
