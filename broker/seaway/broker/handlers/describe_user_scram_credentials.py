"""DescribeUserScramCredentials v0: which users have SCRAM credentials, per mechanism and
iteration count (never salts or keys), as Kafka's ``ScramImage.describe`` answers.

Needs DESCRIBE on the cluster (CLUSTER_AUTHORIZATION_FAILED otherwise, see below). No users
(null or empty) means every user; a user named twice is DUPLICATE_RESOURCE, a user without
credentials RESOURCE_NOT_FOUND, each with Kafka's message.
"""

from __future__ import annotations

from collections import Counter

from seaway.broker.context import RequestContext
from seaway.broker.handlers.registry import handles
from seaway.broker.security.acl import CLUSTER_NAME, Operation, ResourceType
from seaway.protocol.errors import (
    ClusterAuthorizationFailedError,
    DuplicateResourceError,
    ResourceNotFoundError,
    SecurityDisabledError,
)
from seaway.protocol.messages.describe_user_scram_credentials_request import DescribeUserScramCredentialsRequest
from seaway.protocol.messages.describe_user_scram_credentials_response import (
    CredentialInfo,
    DescribeUserScramCredentialsResponse,
    DescribeUserScramCredentialsResult,
)

__all__ = ["handle_describe_user_scram_credentials"]

_DUPLICATE = "Cannot describe SCRAM credentials for the same user twice in a single request: "
_MISSING = "Attempt to describe a user credential that does not exist: "


@handles(DescribeUserScramCredentialsRequest, DescribeUserScramCredentialsResponse)
async def handle_describe_user_scram_credentials(
    ctx: RequestContext, request: DescribeUserScramCredentialsRequest
) -> DescribeUserScramCredentialsResponse:
    store = ctx.broker.security_store
    if store is None:
        return DescribeUserScramCredentialsResponse(error_code=SecurityDisabledError.code,
                                                    error_message="no credential store")
    if not ctx.allowed(Operation.DESCRIBE, ResourceType.CLUSTER, CLUSTER_NAME):
        # Kafka puts the error at the top (and on every user asked for). confluent-kafka 2.16
        # frees memory twice on a top-level error in this response and crashes the client
        # process, so when users are named the error goes on each of them only; describing
        # every user has no other place for it.
        denied = "Cluster authorization failed."
        named = [DescribeUserScramCredentialsResult(user=u.name, error_code=ClusterAuthorizationFailedError.code,
                                                    error_message=denied) for u in request.users or []]
        return DescribeUserScramCredentialsResponse(
            error_code=0 if named else ClusterAuthorizationFailedError.code,
            error_message=None if named else denied, results=named)
    known = store.scram_users()
    wanted = [u.name for u in request.users or []]
    results: list[DescribeUserScramCredentialsResult] = []
    if not wanted:
        wanted = list(known)
    counts = Counter(wanted)
    for user in dict.fromkeys(wanted):
        if counts[user] > 1:
            results.append(DescribeUserScramCredentialsResult(
                user=user, error_code=DuplicateResourceError.code, error_message=_DUPLICATE + user))
        elif user not in known:
            results.append(DescribeUserScramCredentialsResult(
                user=user, error_code=ResourceNotFoundError.code, error_message=_MISSING + user))
        else:
            results.append(DescribeUserScramCredentialsResult(
                user=user, error_code=0, error_message=None,
                credential_infos=[CredentialInfo(mechanism=m.type_code, iterations=i) for m, i in known[user]]))
    return DescribeUserScramCredentialsResponse(error_code=0, error_message=None, results=results)
