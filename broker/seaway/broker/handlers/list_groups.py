"""ListGroups: every group, filtered by state (v4+) and by group type (v5+: "classic" or "consumer").

KIP-848 consumer groups are listed with protocol type "consumer", type "consumer" and
their own states (Empty, Assigning, Reconciling, Stable), as Kafka 4 lists them.
"""

from __future__ import annotations

from seaway.broker.context import Operation, RequestContext, ResourceType
from seaway.broker.coordinator import coordinator_of
from seaway.broker.coordinator.admin import list_groups
from seaway.broker.handlers.registry import handles
from seaway.broker.security.acl import CLUSTER_NAME
from seaway.protocol.errors import KafkaProtocolError
from seaway.protocol.messages.list_groups_request import ListGroupsRequest
from seaway.protocol.messages.list_groups_response import ListedGroup, ListGroupsResponse

__all__ = ["handle_list_groups"]


@handles(ListGroupsRequest, ListGroupsResponse)
async def handle_list_groups(ctx: RequestContext, request: ListGroupsRequest) -> ListGroupsResponse:
    version = ctx.api_version
    try:
        groups = list_groups(coordinator_of(ctx.broker),
                             request.states_filter if version >= 4 else [],
                             request.types_filter if version >= 5 else [])
    except KafkaProtocolError as exc:
        return ListGroupsResponse(error_code=exc.code)
    if not ctx.allowed(Operation.DESCRIBE, ResourceType.CLUSTER, CLUSTER_NAME):  # Kafka: else the describable
        groups = [g for g in groups if ctx.allowed(Operation.DESCRIBE, ResourceType.GROUP, g.group_id)]
    return ListGroupsResponse(error_code=0, groups=[
        ListedGroup(group_id=g.group_id, protocol_type=g.protocol_type, group_state=g.state, group_type=g.group_type)
        for g in groups
    ])
