"""EndTxn: commit or abort the producer's transaction.

The coordinator writes PrepareCommit/PrepareAbort before this answers, as Kafka, and the
markers into every partition of the transaction and the completion right after the answer
is written, before any later request is read (see
:mod:`seaway.broker.coordinator.txn.coordinator`), so once a commit is acknowledged a
read_committed consumer can read the data. WRITE on the transactional id is required
(TRANSACTIONAL_ID_AUTHORIZATION_FAILED); PRODUCER_FENCED is INVALID_PRODUCER_EPOCH before v2.
v5 (KIP-890 part 2: an epoch bump per transaction) is not served, so clients use v4.
"""

from __future__ import annotations

from seaway.broker.context import Operation, RequestContext, ResourceType
from seaway.broker.coordinator.txn import transaction_coordinator_of
from seaway.broker.handlers.registry import handles
from seaway.protocol.errors import (
    InvalidProducerEpochError,
    KafkaProtocolError,
    ProducerFencedError,
    TransactionalIdAuthorizationFailedError,
)
from seaway.protocol.messages.end_txn_request import EndTxnRequest
from seaway.protocol.messages.end_txn_response import EndTxnResponse

__all__ = ["handle_end_txn"]


@handles(EndTxnRequest, EndTxnResponse)
async def handle_end_txn(ctx: RequestContext, request: EndTxnRequest) -> EndTxnResponse:
    if not ctx.allowed(Operation.WRITE, ResourceType.TRANSACTIONAL_ID, request.transactional_id):
        return EndTxnResponse(error_code=TransactionalIdAuthorizationFailedError.code)
    try:
        transaction_coordinator_of(ctx.broker).end_txn(request.transactional_id, request.producer_id,
                                                       request.producer_epoch, request.committed)
    except ProducerFencedError as exc:
        return EndTxnResponse(error_code=(InvalidProducerEpochError if ctx.api_version < 2 else exc).code)
    except KafkaProtocolError as exc:
        return EndTxnResponse(error_code=exc.code)
    return EndTxnResponse(error_code=0)
