"""DescribeAcls v0-3: the ACLs matching a filter, grouped by resource pattern (Kafka's shape).

Needs DESCRIBE on the cluster (CLUSTER_AUTHORIZATION_FAILED otherwise) and an authorizer
(SECURITY_DISABLED otherwise). A filter with UNKNOWN fields is INVALID_REQUEST.
"""

from __future__ import annotations

from seaway.broker.context import RequestContext
from seaway.broker.handlers.acls_common import filter_of, no_authorizer
from seaway.broker.handlers.registry import handles
from seaway.broker.security.acl import CLUSTER_NAME, Operation, ResourceType
from seaway.protocol.errors import ClusterAuthorizationFailedError, InvalidRequestError
from seaway.protocol.messages.describe_acls_request import DescribeAclsRequest
from seaway.protocol.messages.describe_acls_response import (
    AclDescription,
    DescribeAclsResource,
    DescribeAclsResponse,
)

__all__ = ["handle_describe_acls"]


@handles(DescribeAclsRequest, DescribeAclsResponse)
async def handle_describe_acls(ctx: RequestContext, request: DescribeAclsRequest) -> DescribeAclsResponse:
    authorizer = ctx.broker.authorizer
    if authorizer is None:
        code, message = no_authorizer()
        return DescribeAclsResponse(error_code=code, error_message=message)
    if not ctx.allowed(Operation.DESCRIBE, ResourceType.CLUSTER, CLUSTER_NAME):
        return DescribeAclsResponse(error_code=ClusterAuthorizationFailedError.code,
                                    error_message="Cluster authorization failed.")
    acl_filter = filter_of(request, ctx.api_version)
    problem = acl_filter.invalid()
    if problem is not None:
        return DescribeAclsResponse(error_code=InvalidRequestError.code, error_message=problem)
    resources: dict[tuple[int, str, int], list[AclDescription]] = {}
    for acl in authorizer.acls(acl_filter):
        key = (int(acl.resource_type), acl.resource_name, int(acl.pattern_type))
        resources.setdefault(key, []).append(AclDescription(
            principal=acl.principal, host=acl.host, operation=int(acl.operation),
            permission_type=int(acl.permission)))
    return DescribeAclsResponse(error_code=0, error_message=None, resources=[
        DescribeAclsResource(resource_type=rtype, resource_name=name, pattern_type=pattern, acls=acls)
        for (rtype, name, pattern), acls in resources.items()
    ])
