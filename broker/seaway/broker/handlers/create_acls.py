"""CreateAcls v0-3: add ACLs (Kafka: ALTER on the cluster; the authorizer must be on).

Without ``authorizer.class.name`` every creation answers SECURITY_DISABLED, as Kafka does.
A caller without ALTER on the cluster gets CLUSTER_AUTHORIZATION_FAILED for every creation.
Each binding is checked as Kafka's controller checks it (INVALID_REQUEST with its message:
UNKNOWN/ANY values, an empty name, a CLUSTER resource not named ``kafka-cluster``, a principal
without ``Type:``); delegation-token ACLs are refused (no delegation tokens here). The valid
ones are written to the ``__cluster_metadata`` log in one batch, then answered; creating an
ACL that exists already succeeds and stores nothing new.
"""

from __future__ import annotations

from seaway.broker.context import RequestContext
from seaway.broker.handlers.acls_common import binding_of, no_authorizer
from seaway.broker.handlers.registry import handles
from seaway.broker.security.acl import CLUSTER_NAME, AclBinding, Operation, ResourceType
from seaway.protocol.errors import ClusterAuthorizationFailedError, InvalidRequestError, KafkaStorageError
from seaway.protocol.messages.create_acls_request import CreateAclsRequest
from seaway.protocol.messages.create_acls_response import AclCreationResult, CreateAclsResponse

__all__ = ["handle_create_acls"]


@handles(CreateAclsRequest, CreateAclsResponse)
async def handle_create_acls(ctx: RequestContext, request: CreateAclsRequest) -> CreateAclsResponse:
    store = ctx.broker.security_store
    if ctx.broker.authorizer is None or store is None:
        code, message = no_authorizer()
        return CreateAclsResponse(results=[AclCreationResult(error_code=code, error_message=message)
                                           for _ in request.creations])
    if not ctx.allowed(Operation.ALTER, ResourceType.CLUSTER, CLUSTER_NAME):
        return CreateAclsResponse(results=[
            AclCreationResult(error_code=ClusterAuthorizationFailedError.code,
                              error_message="Cluster authorization failed.")
            for _ in request.creations])
    results: list[AclCreationResult] = []
    valid: list[AclBinding] = []
    for creation in request.creations:
        binding = binding_of(creation, ctx.api_version)
        problem = binding.validation_error()
        if problem is not None:
            results.append(AclCreationResult(error_code=InvalidRequestError.code, error_message=problem))
        else:
            valid.append(binding)
            results.append(AclCreationResult(error_code=0, error_message=None))
    try:
        await store.add_acls(valid)
    except OSError as exc:
        return CreateAclsResponse(results=[
            r if r.error_code else AclCreationResult(error_code=KafkaStorageError.code,
                                                      error_message=f"storing the ACLs failed: {exc}")
            for r in results])
    return CreateAclsResponse(results=results)
