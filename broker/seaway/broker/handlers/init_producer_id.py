"""InitProducerId: producer ids for idempotent (non-transactional) producers.

A null transactional id gets a fresh producer id with epoch 0, every time, as Kafka
answers it (an idempotent producer asking again, e.g. after a fatal sequence error, also
gets a new id). Ids are never reused, even after a crash (:mod:`seaway.broker.producer.ids`).

This broker has no transaction coordinator, so a transactional id is answered with
TRANSACTIONAL_ID_AUTHORIZATION_FAILED (53), the same error a transactional Produce gets
and FindCoordinator gives a transactional id first (with the reason in its error
message, see :mod:`seaway.broker.handlers.find_coordinator`): it is fatal to every
client, so ``init_transactions`` fails at once instead of retrying until its timeout.
An empty transactional id is INVALID_REQUEST, as in Kafka.
"""

from __future__ import annotations

import asyncio

from seaway.broker.context import RequestContext
from seaway.broker.handlers.registry import handles
from seaway.broker.producer import IDS_COMPONENT, ProducerIdAllocator
from seaway.protocol.errors import (
    CoordinatorNotAvailableError,
    InvalidRequestError,
    KafkaProtocolError,
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
        if request.transactional_id == "":
            return _error(InvalidRequestError)
        return _error(TransactionalIdAuthorizationFailedError)
    ids = ctx.broker.components.get(IDS_COMPONENT)
    if not isinstance(ids, ProducerIdAllocator):
        return _error(CoordinatorNotAvailableError)
    try:
        producer_id = await asyncio.to_thread(ids.allocate) if ids.needs_write else ids.allocate()
    except OSError:
        return _error(CoordinatorNotAvailableError)
    return InitProducerIdResponse(error_code=0, producer_id=producer_id, producer_epoch=0)
