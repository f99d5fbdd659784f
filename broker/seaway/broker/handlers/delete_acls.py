"""DeleteAcls v0-3: remove every ACL matching each filter, answering what was removed.

Needs ALTER on the cluster (CLUSTER_AUTHORIZATION_FAILED per filter otherwise) and an
authorizer (SECURITY_DISABLED per filter otherwise). All removals of one request are one
write to the ``__cluster_metadata`` log.
"""

from __future__ import annotations

from seaway.broker.context import RequestContext
from seaway.broker.handlers.acls_common import filter_of, no_authorizer
from seaway.broker.handlers.registry import handles
from seaway.broker.security.acl import CLUSTER_NAME, AclBinding, Operation, ResourceType
from seaway.protocol.errors import ClusterAuthorizationFailedError, InvalidRequestError, KafkaStorageError
from seaway.protocol.messages.delete_acls_request import DeleteAclsRequest
from seaway.protocol.messages.delete_acls_response import (
    DeleteAclsFilterResult,
    DeleteAclsMatchingAcl,
    DeleteAclsResponse,
)

__all__ = ["handle_delete_acls"]


def _matching(acl: AclBinding) -> DeleteAclsMatchingAcl:
    return DeleteAclsMatchingAcl(
        error_code=0, error_message=None, resource_type=int(acl.resource_type), resource_name=acl.resource_name,
        pattern_type=int(acl.pattern_type), principal=acl.principal, host=acl.host,
        operation=int(acl.operation), permission_type=int(acl.permission))


def _failed(code: int, message: str, count: int) -> DeleteAclsResponse:
    return DeleteAclsResponse(filter_results=[
        DeleteAclsFilterResult(error_code=code, error_message=message) for _ in range(count)])


@handles(DeleteAclsRequest, DeleteAclsResponse)
async def handle_delete_acls(ctx: RequestContext, request: DeleteAclsRequest) -> DeleteAclsResponse:
    authorizer = ctx.broker.authorizer
    store = ctx.broker.security_store
    if authorizer is None or store is None:
        return _failed(*no_authorizer(), len(request.filters))
    if not ctx.allowed(Operation.ALTER, ResourceType.CLUSTER, CLUSTER_NAME):
        return _failed(ClusterAuthorizationFailedError.code, "Cluster authorization failed.", len(request.filters))
    results: list[DeleteAclsFilterResult] = []
    doomed: dict[AclBinding, None] = {}
    for item in request.filters:
        acl_filter = filter_of(item, ctx.api_version)
        problem = acl_filter.invalid()
        if problem is not None:
            results.append(DeleteAclsFilterResult(error_code=InvalidRequestError.code, error_message=problem))
            continue
        matched = authorizer.acls(acl_filter)
        doomed.update(dict.fromkeys(matched))
        results.append(DeleteAclsFilterResult(error_code=0, error_message=None,
                                              matching_acls=[_matching(a) for a in matched]))
    try:
        await store.remove_acls(doomed)
    except OSError as exc:
        return _failed(KafkaStorageError.code, f"removing the ACLs failed: {exc}", len(request.filters))
    return DeleteAclsResponse(filter_results=results)
