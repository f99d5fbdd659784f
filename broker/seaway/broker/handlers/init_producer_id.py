"""InitProducerId: producer ids for idempotent producers, and epochs for transactional ones.

A null transactional id gets a fresh producer id with epoch 0, every time, as Kafka
answers it (an idempotent producer asking again, e.g. after a fatal sequence error, also
gets a new id). Ids are never reused, even after a crash (:mod:`seaway.broker.producer.ids`).

A transactional id goes to the transaction coordinator
(:mod:`seaway.broker.coordinator.txn.coordinator`): WRITE on the transactional id is
required (TRANSACTIONAL_ID_AUTHORIZATION_FAILED); an empty one is INVALID_REQUEST; v3+
may name the producer's current id and epoch (KIP-360: bump the epoch instead of being
fenced), both or neither (else INVALID_REQUEST); PRODUCER_FENCED is INVALID_PRODUCER_EPOCH
before v4, as Kafka answers older clients.
"""

from __future__ import annotations

import asyncio

from seaway.broker.context import Operation, RequestContext, ResourceType
from seaway.broker.coordinator.txn import transaction_coordinator_of
from seaway.broker.handlers.registry import handles
from seaway.broker.security.acl import CLUSTER_NAME
from seaway.protocol.errors import (
    ClusterAuthorizationFailedError,
    CoordinatorNotAvailableError,
    InvalidProducerEpochError,
    InvalidRequestError,
    KafkaProtocolError,
    ProducerFencedError,
    TransactionalIdAuthorizationFailedError,
)
from seaway.protocol.messages.init_producer_id_request import InitProducerIdRequest
from seaway.protocol.messages.init_producer_id_response import InitProducerIdResponse

__all__ = ["handle_init_producer_id"]


def _error(exc: type[KafkaProtocolError]) -> InitProducerIdResponse:
    return InitProducerIdResponse(error_code=exc.code, producer_id=-1, producer_epoch=-1)


@handles(InitProducerIdRequest, InitProducerIdResponse)
async def handle_init_producer_id(ctx: RequestContext, request: InitProducerIdRequest) -> InitProducerIdResponse:
    if request.transactional_id is not None:
        return await _transactional(ctx, request, request.transactional_id)
    # ACLs, as Kafka: IDEMPOTENT_WRITE on the cluster, or WRITE on at least one topic
    if not (ctx.allowed(Operation.IDEMPOTENT_WRITE, ResourceType.CLUSTER, CLUSTER_NAME)
            or ctx.allowed_for_type(Operation.WRITE, ResourceType.TOPIC)):
        return _error(ClusterAuthorizationFailedError)
    ids = ctx.broker.components.producer_ids
    if ids is None:
        return _error(CoordinatorNotAvailableError)
    try:
        producer_id = await asyncio.to_thread(ids.allocate) if ids.needs_write else ids.allocate()
    except OSError:
        return _error(CoordinatorNotAvailableError)
    return InitProducerIdResponse(error_code=0, producer_id=producer_id, producer_epoch=0)


async def _transactional(ctx: RequestContext, request: InitProducerIdRequest, transactional_id: str
                         ) -> InitProducerIdResponse:
    if not ctx.allowed(Operation.WRITE, ResourceType.TRANSACTIONAL_ID, transactional_id):
        return _error(TransactionalIdAuthorizationFailedError)
    pid, epoch = (request.producer_id, request.producer_epoch) if ctx.api_version >= 3 else (-1, -1)
    if (pid == -1) != (epoch == -1):
        return _error(InvalidRequestError)
    try:
        producer_id, producer_epoch = await transaction_coordinator_of(ctx.broker).init_producer_id(
            transactional_id, request.transaction_timeout_ms, None if pid == -1 else (pid, epoch))
    except ProducerFencedError:
        return _error(InvalidProducerEpochError if ctx.api_version < 4 else ProducerFencedError)
    except KafkaProtocolError as exc:
        return _error(type(exc))
    return InitProducerIdResponse(error_code=0, producer_id=producer_id, producer_epoch=producer_epoch)
