"""FindCoordinator: this single node coordinates every group.

v0-3 ask for one key, v4+ for a batch (``coordinator_keys``). Group keys (type 0) get this
broker once ``__consumer_offsets`` exists (COORDINATOR_NOT_AVAILABLE before, which every
client retries). Other key types are INVALID_REQUEST.

Transaction keys (type 1): this broker has no transaction coordinator. Kafka answers
TRANSACTIONAL_ID_AUTHORIZATION_FAILED (53) when a client may not use transactions, and
that is the one answer both librdkafka and the Java client treat as fatal at once, so
``init_transactions()`` fails within a round trip with our message ("transactions are not
supported"). COORDINATOR_NOT_AVAILABLE (what Kafka says while its transaction log is not
ready) is retried by every client until its timeout: a transactional producer waited
that long (10-60 s) before failing with a misleading "coordinator not found". Redpanda
answers UNSUPPORTED_VERSION when transactions are disabled, which librdkafka retries too.
InitProducerId with a transactional id answers the same error
(:mod:`seaway.broker.handlers.init_producer_id`).
"""

from __future__ import annotations

from seaway.broker.context import RequestContext
from seaway.broker.coordinator import coordinator_of
from seaway.broker.handlers.registry import handles
from seaway.protocol.errors import (
    CoordinatorNotAvailableError,
    InvalidRequestError,
    KafkaProtocolError,
    TransactionalIdAuthorizationFailedError,
)
from seaway.protocol.messages.find_coordinator_request import FindCoordinatorRequest
from seaway.protocol.messages.find_coordinator_response import Coordinator, FindCoordinatorResponse

__all__ = ["NO_TRANSACTIONS", "handle_find_coordinator"]

NO_TRANSACTIONS = (
    "transactions are not supported by this Seaway broker (it has no transaction coordinator); "
    "use an idempotent producer (enable.idempotence=true) without transactional.id"
)

GROUP_KEY = 0
TRANSACTION_KEY = 1


def _lookup(ctx: RequestContext, key: str, key_type: int) -> Coordinator:
    try:
        if key_type == TRANSACTION_KEY:
            raise TransactionalIdAuthorizationFailedError(NO_TRANSACTIONS)
        if key_type != GROUP_KEY:
            raise InvalidRequestError(f"unknown coordinator key type {key_type}")
        if not coordinator_of(ctx.broker).topic_ready:
            raise CoordinatorNotAvailableError("the offsets topic is not available yet")
    except KafkaProtocolError as exc:
        return Coordinator(key=key, node_id=-1, host="", port=-1, error_code=exc.code, error_message=str(exc))
    ep = ctx.broker.endpoint_for(ctx.listener)
    return Coordinator(key=key, node_id=ctx.broker.node_id, host=ep.host, port=ep.port, error_code=0,
                       error_message=None)


@handles(FindCoordinatorRequest, FindCoordinatorResponse)
async def handle_find_coordinator(ctx: RequestContext, request: FindCoordinatorRequest) -> FindCoordinatorResponse:
    if ctx.api_version >= 4:
        return FindCoordinatorResponse(
            coordinators=[_lookup(ctx, key, request.key_type) for key in request.coordinator_keys])
    found = _lookup(ctx, request.key, request.key_type)
    return FindCoordinatorResponse(error_code=found.error_code, error_message=found.error_message,
                                   node_id=found.node_id, host=found.host, port=found.port)
