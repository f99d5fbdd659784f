"""FindCoordinator: this single node coordinates every group and every transactional id.

v0-3 ask for one key, v4+ for a batch (``coordinator_keys``). Group keys (type 0) get this
broker once ``__consumer_offsets`` exists; transaction keys (type 1) once
``__transaction_state`` exists (COORDINATOR_NOT_AVAILABLE before, which every client
retries). ACLs as Kafka: DESCRIBE on the group (GROUP_AUTHORIZATION_FAILED) or on the
transactional id (TRANSACTIONAL_ID_AUTHORIZATION_FAILED). Other key types are INVALID_REQUEST.
"""

from __future__ import annotations

from seaway.broker.context import Operation, RequestContext, ResourceType
from seaway.broker.coordinator import coordinator_of
from seaway.broker.coordinator.txn import transaction_coordinator_of
from seaway.broker.handlers.registry import handles
from seaway.protocol.errors import (
    CoordinatorNotAvailableError,
    InvalidRequestError,
    KafkaProtocolError,
)
from seaway.protocol.messages.find_coordinator_request import FindCoordinatorRequest
from seaway.protocol.messages.find_coordinator_response import Coordinator, FindCoordinatorResponse

__all__ = ["handle_find_coordinator"]

GROUP_KEY = 0
TRANSACTION_KEY = 1


def _lookup(ctx: RequestContext, key: str, key_type: int) -> Coordinator:
    try:
        if key_type == TRANSACTION_KEY:
            ctx.require(Operation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, key)
            if not transaction_coordinator_of(ctx.broker).topic_ready:
                raise CoordinatorNotAvailableError("the transaction state topic is not available yet")
            return _this_node(ctx, key)
        if key_type != GROUP_KEY:
            raise InvalidRequestError(f"unknown coordinator key type {key_type}")
        ctx.require(Operation.DESCRIBE, ResourceType.GROUP, key)  # ACLs: GROUP_AUTHORIZATION_FAILED
        if not coordinator_of(ctx.broker).topic_ready:
            raise CoordinatorNotAvailableError("the offsets topic is not available yet")
    except KafkaProtocolError as exc:
        return Coordinator(key=key, node_id=-1, host="", port=-1, error_code=exc.code, error_message=str(exc))
    return _this_node(ctx, key)


def _this_node(ctx: RequestContext, key: str) -> Coordinator:
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
