"""DescribeTransactions: the state of transactional ids (``kafka-transactions.sh describe``).

Per id, as Kafka: DESCRIBE on the transactional id (else TRANSACTIONAL_ID_AUTHORIZATION_FAILED),
TRANSACTIONAL_ID_NOT_FOUND for an unknown id, COORDINATOR_LOAD_IN_PROGRESS while loading;
the transaction's partitions are listed only for topics the caller may DESCRIBE.
"""

from __future__ import annotations

from collections import defaultdict

from seaway.broker.context import Operation, RequestContext, ResourceType
from seaway.broker.coordinator.txn import transaction_coordinator_of
from seaway.broker.handlers.registry import handles
from seaway.protocol.errors import KafkaProtocolError, TransactionalIdAuthorizationFailedError
from seaway.protocol.messages.describe_transactions_request import DescribeTransactionsRequest
from seaway.protocol.messages.describe_transactions_response import (
    DescribeTransactionsResponse,
    TopicData,
    TransactionState,
)

__all__ = ["handle_describe_transactions"]


def _describe(ctx: RequestContext, transactional_id: str) -> TransactionState:
    if not ctx.allowed(Operation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, transactional_id):
        return TransactionState(error_code=TransactionalIdAuthorizationFailedError.code,
                                transactional_id=transactional_id)
    try:
        md = transaction_coordinator_of(ctx.broker).describe(transactional_id)
    except KafkaProtocolError as exc:
        return TransactionState(error_code=exc.code, transactional_id=transactional_id)
    topics: dict[str, list[int]] = defaultdict(list)
    for topic, partition in sorted(md.partitions):
        if ctx.allowed(Operation.DESCRIBE, ResourceType.TOPIC, topic):
            topics[topic].append(partition)
    return TransactionState(
        error_code=0, transactional_id=transactional_id, transaction_state=md.state.display_name,
        transaction_timeout_ms=md.timeout_ms, transaction_start_time_ms=md.start_ms,
        producer_id=md.producer_id, producer_epoch=md.producer_epoch,
        topics=[TopicData(topic=topic, partitions=partitions) for topic, partitions in topics.items()])


@handles(DescribeTransactionsRequest, DescribeTransactionsResponse)
async def handle_describe_transactions(ctx: RequestContext,
                                       request: DescribeTransactionsRequest) -> DescribeTransactionsResponse:
    return DescribeTransactionsResponse(
        transaction_states=[_describe(ctx, tid) for tid in request.transactional_ids])
