"""AddOffsetsToTxn: put a consumer group's offsets partition into the transaction.

``send_offsets_to_transaction`` sends this first: the group's ``__consumer_offsets``
partition joins the transaction, so the TxnOffsetCommit that follows is ended by the same
markers as the data. ACLs as Kafka: WRITE on the transactional id, READ on the group.
PRODUCER_FENCED is INVALID_PRODUCER_EPOCH before v2.
"""

from __future__ import annotations

from seaway.broker.context import Operation, RequestContext, ResourceType
from seaway.broker.coordinator import coordinator_of
from seaway.broker.coordinator.store import OFFSETS_TOPIC
from seaway.broker.coordinator.txn import transaction_coordinator_of
from seaway.broker.handlers.registry import handles
from seaway.protocol.errors import (
    GroupAuthorizationFailedError,
    InvalidProducerEpochError,
    KafkaProtocolError,
    ProducerFencedError,
    TransactionalIdAuthorizationFailedError,
)
from seaway.protocol.messages.add_offsets_to_txn_request import AddOffsetsToTxnRequest
from seaway.protocol.messages.add_offsets_to_txn_response import AddOffsetsToTxnResponse

__all__ = ["handle_add_offsets_to_txn"]


@handles(AddOffsetsToTxnRequest, AddOffsetsToTxnResponse)
async def handle_add_offsets_to_txn(ctx: RequestContext, request: AddOffsetsToTxnRequest) -> AddOffsetsToTxnResponse:
    if not ctx.allowed(Operation.WRITE, ResourceType.TRANSACTIONAL_ID, request.transactional_id):
        return AddOffsetsToTxnResponse(error_code=TransactionalIdAuthorizationFailedError.code)
    if not ctx.allowed(Operation.READ, ResourceType.GROUP, request.group_id):
        return AddOffsetsToTxnResponse(error_code=GroupAuthorizationFailedError.code)
    try:
        groups = coordinator_of(ctx.broker)
        groups.check_ready()
        partition = groups.store.partition_for(request.group_id)
        transaction_coordinator_of(ctx.broker).add_partitions(
            request.transactional_id, request.producer_id, request.producer_epoch, [(OFFSETS_TOPIC, partition)])
    except ProducerFencedError as exc:
        return AddOffsetsToTxnResponse(error_code=(InvalidProducerEpochError if ctx.api_version < 2 else exc).code)
    except KafkaProtocolError as exc:
        return AddOffsetsToTxnResponse(error_code=exc.code)
    return AddOffsetsToTxnResponse(error_code=0)
