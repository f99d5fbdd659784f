"""DeleteGroups: remove empty groups and their committed offsets (tombstones in the log)."""

from __future__ import annotations

from seaway.broker.context import RequestContext
from seaway.broker.coordinator import coordinator_of
from seaway.broker.coordinator.admin import delete_groups
from seaway.broker.handlers.registry import handles
from seaway.protocol.errors import KafkaProtocolError
from seaway.protocol.messages.delete_groups_request import DeleteGroupsRequest
from seaway.protocol.messages.delete_groups_response import DeletableGroupResult, DeleteGroupsResponse

__all__ = ["handle_delete_groups"]


@handles(DeleteGroupsRequest, DeleteGroupsResponse)
async def handle_delete_groups(ctx: RequestContext, request: DeleteGroupsRequest) -> DeleteGroupsResponse:
    try:
        results = delete_groups(coordinator_of(ctx.broker), request.groups_names)
    except KafkaProtocolError as exc:
        results = {g: exc.code for g in request.groups_names}
    return DeleteGroupsResponse(results=[DeletableGroupResult(group_id=g, error_code=results[g])
                                         for g in dict.fromkeys(request.groups_names)])
