"""DescribeGroups: state, protocol and members (with metadata and assignment when Stable).

An unknown group is described as "Dead" with no error, as Kafka does up to v5. With
``include_authorized_operations`` (v3+) the operations the caller may do on the group are
reported (all of Kafka's group operations without an authorizer). A group the caller may not
DESCRIBE is GROUP_AUTHORIZATION_FAILED.
"""

from __future__ import annotations

from seaway.broker.context import Operation, RequestContext, ResourceType
from seaway.broker.coordinator import coordinator_of
from seaway.broker.coordinator.admin import describe_group
from seaway.broker.handlers.registry import handles
from seaway.protocol.errors import KafkaProtocolError
from seaway.protocol.messages.describe_groups_request import DescribeGroupsRequest
from seaway.protocol.messages.describe_groups_response import (
    DescribedGroup,
    DescribedGroupMember,
    DescribeGroupsResponse,
)

__all__ = ["handle_describe_groups"]

_OMITTED = -(2**31)


def _describe(ctx: RequestContext, group_id: str, with_operations: bool) -> DescribedGroup:
    try:
        ctx.require(Operation.DESCRIBE, ResourceType.GROUP, group_id)
        summary = describe_group(coordinator_of(ctx.broker), group_id)
    except KafkaProtocolError as exc:
        return DescribedGroup(error_code=exc.code, group_id=group_id, authorized_operations=_OMITTED)
    return DescribedGroup(
        error_code=0, group_id=group_id, group_state=summary.state, protocol_type=summary.protocol_type,
        protocol_data=summary.protocol,
        authorized_operations=ctx.authorized_operations(ResourceType.GROUP, group_id) if with_operations
        else _OMITTED,
        members=[DescribedGroupMember(member_id=m.member_id, group_instance_id=m.group_instance_id,
                                      client_id=m.client_id, client_host=m.client_host,
                                      member_metadata=m.metadata, member_assignment=m.assignment)
                 for m in summary.members],
    )


@handles(DescribeGroupsRequest, DescribeGroupsResponse)
async def handle_describe_groups(ctx: RequestContext, request: DescribeGroupsRequest) -> DescribeGroupsResponse:
    with_operations = ctx.api_version >= 3 and request.include_authorized_operations
    return DescribeGroupsResponse(groups=[_describe(ctx, g, with_operations) for g in request.groups])
