"""Heartbeat: keeps a member's session alive and tells it when to rejoin."""

from __future__ import annotations

from seaway.broker.context import Operation, RequestContext, ResourceType
from seaway.broker.coordinator import coordinator_of
from seaway.broker.handlers.registry import handles
from seaway.protocol.errors import KafkaProtocolError
from seaway.protocol.messages.heartbeat_request import HeartbeatRequest
from seaway.protocol.messages.heartbeat_response import HeartbeatResponse

__all__ = ["handle_heartbeat"]


@handles(HeartbeatRequest, HeartbeatResponse)
async def handle_heartbeat(ctx: RequestContext, request: HeartbeatRequest) -> HeartbeatResponse:
    try:
        ctx.require(Operation.READ, ResourceType.GROUP, request.group_id)
        coordinator_of(ctx.broker).heartbeat(
            request.group_id, request.generation_id, request.member_id,
            request.group_instance_id if ctx.api_version >= 3 else None)
    except KafkaProtocolError as exc:
        return HeartbeatResponse(error_code=exc.code)
    return HeartbeatResponse(error_code=0)
