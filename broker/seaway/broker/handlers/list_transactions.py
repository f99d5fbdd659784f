"""ListTransactions: transactional ids by state, producer id and age (``kafka-transactions.sh list``).

Filters as Kafka: ``state_filters`` by Kafka's state names (unknown names come back in
``unknown_state_filters``), ``producer_id_filters``, and (v1) ``duration_filter``: only
transactions running longer than that many milliseconds. Only ids the caller may DESCRIBE
are listed.
"""

from __future__ import annotations

from seaway.broker.context import Operation, RequestContext, ResourceType
from seaway.broker.coordinator.txn import transaction_coordinator_of
from seaway.broker.handlers.registry import handles
from seaway.protocol.errors import KafkaProtocolError
from seaway.protocol.messages.list_transactions_request import ListTransactionsRequest
from seaway.protocol.messages.list_transactions_response import ListTransactionsResponse, TransactionState

__all__ = ["handle_list_transactions"]


@handles(ListTransactionsRequest, ListTransactionsResponse)
async def handle_list_transactions(ctx: RequestContext, request: ListTransactionsRequest) -> ListTransactionsResponse:
    duration = request.duration_filter if ctx.api_version >= 1 else -1
    try:
        found, unknown = transaction_coordinator_of(ctx.broker).list_transactions(
            request.state_filters, request.producer_id_filters, duration)
    except KafkaProtocolError as exc:
        return ListTransactionsResponse(error_code=exc.code)
    return ListTransactionsResponse(error_code=0, unknown_state_filters=unknown, transaction_states=[
        TransactionState(transactional_id=md.transactional_id, producer_id=md.producer_id,
                         transaction_state=md.state.display_name)
        for md in sorted(found, key=lambda m: m.transactional_id)
        if ctx.allowed(Operation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, md.transactional_id)
    ])
