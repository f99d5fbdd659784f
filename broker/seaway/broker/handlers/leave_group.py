"""LeaveGroup: one member (v0-2) or a batch of members by id and/or instance id (v3+).

Up to v2 the member's error is the response's error; from v3 each member has its own
error and the top-level error is only for the group as a whole, as in Kafka.
"""

from __future__ import annotations

from seaway.broker.context import Operation, RequestContext, ResourceType
from seaway.broker.coordinator import coordinator_of
from seaway.broker.handlers.registry import handles
from seaway.protocol.errors import KafkaProtocolError
from seaway.protocol.messages.leave_group_request import LeaveGroupRequest
from seaway.protocol.messages.leave_group_response import LeaveGroupResponse, MemberResponse

__all__ = ["handle_leave_group"]


@handles(LeaveGroupRequest, LeaveGroupResponse)
async def handle_leave_group(ctx: RequestContext, request: LeaveGroupRequest) -> LeaveGroupResponse:
    batched = ctx.api_version >= 3
    leaving: list[tuple[str, str | None]] = (
        [(m.member_id, m.group_instance_id) for m in request.members] if batched else [(request.member_id, None)])
    try:
        ctx.require(Operation.READ, ResourceType.GROUP, request.group_id)
        errors = coordinator_of(ctx.broker).leave_group(request.group_id, leaving)
    except KafkaProtocolError as exc:
        return LeaveGroupResponse(error_code=exc.code)
    if not batched:
        return LeaveGroupResponse(error_code=errors[0])
    return LeaveGroupResponse(error_code=0, members=[
        MemberResponse(member_id=mid, group_instance_id=iid, error_code=err)
        for (mid, iid), err in zip(leaving, errors, strict=True)
    ])
