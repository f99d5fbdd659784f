"""DeleteGroups: remove empty groups and their committed offsets (tombstones in the log)."""

from __future__ import annotations

from seaway.broker.context import Operation, RequestContext, ResourceType
from seaway.broker.coordinator import coordinator_of
from seaway.broker.coordinator.admin import delete_groups
from seaway.broker.handlers.registry import handles
from seaway.protocol.errors import GroupAuthorizationFailedError, KafkaProtocolError
from seaway.protocol.messages.delete_groups_request import DeleteGroupsRequest
from seaway.protocol.messages.delete_groups_response import DeletableGroupResult, DeleteGroupsResponse

__all__ = ["handle_delete_groups"]


@handles(DeleteGroupsRequest, DeleteGroupsResponse)
async def handle_delete_groups(ctx: RequestContext, request: DeleteGroupsRequest) -> DeleteGroupsResponse:
    allowed = [g for g in request.groups_names if ctx.allowed(Operation.DELETE, ResourceType.GROUP, g)]
    try:
        results = delete_groups(coordinator_of(ctx.broker), allowed)
    except KafkaProtocolError as exc:
        results = dict.fromkeys(allowed, exc.code)
    for group in request.groups_names:
        results.setdefault(group, GroupAuthorizationFailedError.code)
    return DeleteGroupsResponse(results=[DeletableGroupResult(group_id=g, error_code=results[g])
                                         for g in dict.fromkeys(request.groups_names)])
