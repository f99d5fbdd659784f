"""AlterUserScramCredentials v0: add, replace or delete users' SCRAM credentials.

Kafka's ``ScramControlManager.alterCredentials`` rules, message for message: a user altered
twice in one request is DUPLICATE_RESOURCE ("A user credential cannot be altered twice in the
same request"); an empty name or an iteration count outside 4096-16384 is
UNACCEPTABLE_CREDENTIAL; an unknown mechanism UNSUPPORTED_SASL_MECHANISM; deleting a credential
that does not exist RESOURCE_NOT_FOUND. Needs ALTER on the cluster (CLUSTER_AUTHORIZATION_FAILED
for every user otherwise). The client sends the salted password (it ran PBKDF2); the broker
keeps only the salt, the iterations, StoredKey and ServerKey. All accepted changes of a request
are one fsynced write to the ``__cluster_metadata`` log; connections authenticate against the
new credentials from then on (established ones stay authenticated, as in Kafka).
"""

from __future__ import annotations

from seaway.broker.context import RequestContext
from seaway.broker.handlers.registry import handles
from seaway.broker.security.acl import CLUSTER_NAME, Operation, ResourceType
from seaway.broker.security.scram import (
    MAX_ITERATIONS,
    MIN_ITERATIONS,
    ScramCredential,
    ScramMechanism,
    credential_from_salted_password,
)
from seaway.protocol.errors import (
    ClusterAuthorizationFailedError,
    DuplicateResourceError,
    KafkaStorageError,
    ResourceNotFoundError,
    SecurityDisabledError,
    UnacceptableCredentialError,
    UnsupportedSaslMechanismError,
)
from seaway.protocol.messages.alter_user_scram_credentials_request import AlterUserScramCredentialsRequest
from seaway.protocol.messages.alter_user_scram_credentials_response import (
    AlterUserScramCredentialsResponse,
    AlterUserScramCredentialsResult,
)

__all__ = ["handle_alter_user_scram_credentials"]

Error = tuple[int, str]
_TWICE: Error = (DuplicateResourceError.code, "A user credential cannot be altered twice in the same request")


def _check_name_and_mechanism(name: str, code: int) -> tuple[ScramMechanism | None, Error | None]:
    if not name:
        return None, (UnacceptableCredentialError.code, "Username must not be empty")
    mechanism = ScramMechanism.from_type(code)
    if mechanism is None:
        return None, (UnsupportedSaslMechanismError.code, "Unknown SCRAM mechanism")
    return mechanism, None


@handles(AlterUserScramCredentialsRequest, AlterUserScramCredentialsResponse)
async def handle_alter_user_scram_credentials(
    ctx: RequestContext, request: AlterUserScramCredentialsRequest
) -> AlterUserScramCredentialsResponse:
    names = list(dict.fromkeys([d.name for d in request.deletions] + [u.name for u in request.upsertions]))
    store = ctx.broker.security_store

    def every(code: int, message: str) -> AlterUserScramCredentialsResponse:
        return AlterUserScramCredentialsResponse(results=[
            AlterUserScramCredentialsResult(user=n, error_code=code, error_message=message) for n in names])

    if store is None:
        return every(SecurityDisabledError.code, "no credential store")
    if not ctx.allowed(Operation.ALTER, ResourceType.CLUSTER, CLUSTER_NAME):
        return every(ClusterAuthorizationFailedError.code, "Cluster authorization failed.")
    errors: dict[str, Error] = {}
    deletions: dict[str, ScramMechanism] = {}
    upserts: dict[str, tuple[ScramMechanism, ScramCredential]] = {}
    for deletion in request.deletions:
        name = deletion.name
        if name in errors:
            continue
        if deletions.pop(name, None) is not None:
            errors[name] = _TWICE
            continue
        mechanism, error = _check_name_and_mechanism(name, deletion.mechanism)
        if error is None and mechanism is not None and store.scram_credential(mechanism, name) is None:
            error = (ResourceNotFoundError.code, "Attempt to delete a user credential that does not exist")
        if error is not None:
            errors[name] = error
        elif mechanism is not None:
            deletions[name] = mechanism
    for upsertion in request.upsertions:
        name = upsertion.name
        if name in errors:
            continue
        if deletions.pop(name, None) is not None or upserts.pop(name, None) is not None:
            errors[name] = _TWICE
            continue
        mechanism, error = _check_name_and_mechanism(name, upsertion.mechanism)
        if error is None and upsertion.iterations < MIN_ITERATIONS:
            error = (UnacceptableCredentialError.code, "Too few iterations")
        elif error is None and upsertion.iterations > MAX_ITERATIONS:
            error = (UnacceptableCredentialError.code, "Too many iterations")
        if error is not None:
            errors[name] = error
        elif mechanism is not None:
            upserts[name] = (mechanism, credential_from_salted_password(
                mechanism, bytes(upsertion.salt), bytes(upsertion.salted_password), upsertion.iterations))
    try:
        await store.alter_scram([(n, m, c) for n, (m, c) in upserts.items()], list(deletions.items()))
    except OSError as exc:
        return every(KafkaStorageError.code, f"storing the credentials failed: {exc}")
    ok = [AlterUserScramCredentialsResult(user=n, error_code=0, error_message=None)
          for n in [*deletions, *upserts]]
    failed = [AlterUserScramCredentialsResult(user=n, error_code=code, error_message=message)
              for n, (code, message) in errors.items()]
    return AlterUserScramCredentialsResponse(results=ok + failed)
