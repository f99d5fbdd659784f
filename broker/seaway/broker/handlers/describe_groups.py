"""DescribeGroups: state, protocol and members (with metadata and assignment when Stable).

An unknown group is described as "Dead" with no error, as Kafka does up to v5. With
``include_authorized_operations`` (v3+) every group operation is reported as allowed
(READ, DELETE, DESCRIBE): this broker has no ACLs.
"""

from __future__ import annotations

from seaway.broker.context import RequestContext
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

# Kafka's AclOperation codes READ=3, DELETE=6, DESCRIBE=8 as a bit field.
GROUP_OPERATIONS = (1 << 3) | (1 << 6) | (1 << 8)
_OMITTED = -(2**31)


def _describe(ctx: RequestContext, group_id: str, operations: int) -> DescribedGroup:
    try:
        summary = describe_group(coordinator_of(ctx.broker), group_id)
    except KafkaProtocolError as exc:
        return DescribedGroup(error_code=exc.code, group_id=group_id, authorized_operations=_OMITTED)
    return DescribedGroup(
        error_code=0, group_id=group_id, group_state=summary.state, protocol_type=summary.protocol_type,
        protocol_data=summary.protocol, authorized_operations=operations,
        members=[DescribedGroupMember(member_id=m.member_id, group_instance_id=m.group_instance_id,
                                      client_id=m.client_id, client_host=m.client_host,
                                      member_metadata=m.metadata, member_assignment=m.assignment)
                 for m in summary.members],
    )


@handles(DescribeGroupsRequest, DescribeGroupsResponse)
async def handle_describe_groups(ctx: RequestContext, request: DescribeGroupsRequest) -> DescribeGroupsResponse:
    operations = GROUP_OPERATIONS if ctx.api_version >= 3 and request.include_authorized_operations else _OMITTED
    return DescribeGroupsResponse(groups=[_describe(ctx, g, operations) for g in request.groups])
