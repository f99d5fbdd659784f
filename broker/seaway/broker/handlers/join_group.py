"""JoinGroup: park the member until its group's rebalance completes (see the coordinator).

Version differences handled here: v0 has no rebalance timeout (the session timeout is
used, as Kafka does), v4+ first joins get MEMBER_ID_REQUIRED (KIP-394), v5+ carry
``group_instance_id`` (static membership), v7+ return the protocol type and a nullable
protocol name, v9 lets a restarted static leader skip the assignment (KIP-814).
"""

from __future__ import annotations

from seaway.broker.context import Operation, RequestContext, ResourceType
from seaway.broker.coordinator import JoinRequest, JoinResult, coordinator_of
from seaway.broker.handlers.registry import handles
from seaway.protocol.errors import KafkaProtocolError
from seaway.protocol.messages.join_group_request import JoinGroupRequest
from seaway.protocol.messages.join_group_response import JoinGroupResponse, JoinGroupResponseMember

__all__ = ["client_host", "handle_join_group"]


def client_host(ctx: RequestContext) -> str:
    """The client's address as Kafka shows it (``InetAddress.toString``: ``/127.0.0.1``)."""
    host = ctx.client_host.rsplit(":", 1)[0] if ":" in ctx.client_host else ctx.client_host
    return f"/{host}"


@handles(JoinGroupRequest, JoinGroupResponse)
async def handle_join_group(ctx: RequestContext, request: JoinGroupRequest) -> JoinGroupResponse:
    version = ctx.api_version
    try:
        ctx.require(Operation.READ, ResourceType.GROUP, request.group_id)
        result = await coordinator_of(ctx.broker).join_group(JoinRequest(
            group_id=request.group_id,
            member_id=request.member_id,
            group_instance_id=request.group_instance_id if version >= 5 else None,
            client_id=ctx.client_id or "",
            client_host=client_host(ctx),
            session_timeout_ms=request.session_timeout_ms,
            rebalance_timeout_ms=request.rebalance_timeout_ms if version >= 1 else request.session_timeout_ms,
            protocol_type=request.protocol_type,
            protocols=[(p.name, bytes(p.metadata)) for p in request.protocols],
            require_known_member_id=version >= 4,
            supports_skip_assignment=version >= 9,
        ))
    except KafkaProtocolError as exc:
        result = JoinResult(error=exc.code, member_id=request.member_id)
    return JoinGroupResponse(
        error_code=result.error,
        generation_id=result.generation_id,
        protocol_type=result.protocol_type,
        protocol_name=result.protocol_name if version >= 7 else (result.protocol_name or ""),
        leader=result.leader_id,
        skip_assignment=result.skip_assignment,
        member_id=result.member_id,
        members=[JoinGroupResponseMember(member_id=mid, group_instance_id=iid, metadata=meta)
                 for mid, iid, meta in result.members],
    )
