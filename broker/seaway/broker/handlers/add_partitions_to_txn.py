"""AddPartitionsToTxn: put partitions into a producer's ongoing transaction.

v0-3 come from clients (one transaction); v4+ is Kafka's broker-to-broker batch form
(many transactions, ``verify_only`` for KIP-890's check) and needs CLUSTER_ACTION on the
cluster, as in Kafka. Per transaction, as Kafka's ``KafkaApis``: WRITE on the
transactional id (else TRANSACTIONAL_ID_AUTHORIZATION_FAILED on every partition); WRITE
on each topic, internal topics never (TOPIC_AUTHORIZATION_FAILED); partitions that do not
exist are UNKNOWN_TOPIC_OR_PARTITION; if any partition fails, the rest are
OPERATION_NOT_ATTEMPTED and nothing is added. Otherwise the coordinator's one answer goes
on every partition (PRODUCER_FENCED is INVALID_PRODUCER_EPOCH before v2).
"""

from __future__ import annotations

from collections import defaultdict

from seaway.broker.context import Operation, RequestContext, ResourceType
from seaway.broker.coordinator.txn import transaction_coordinator_of
from seaway.broker.handlers.registry import handles
from seaway.broker.log import INTERNAL_TOPICS
from seaway.broker.security.acl import CLUSTER_NAME
from seaway.protocol.errors import (
    ClusterAuthorizationFailedError,
    InvalidProducerEpochError,
    InvalidRequestError,
    KafkaProtocolError,
    OperationNotAttemptedError,
    ProducerFencedError,
    TopicAuthorizationFailedError,
    TransactionalIdAuthorizationFailedError,
    UnknownTopicOrPartitionError,
)
from seaway.protocol.messages.add_partitions_to_txn_request import (
    AddPartitionsToTxnRequest,
    AddPartitionsToTxnTopic,
    AddPartitionsToTxnTransaction,
)
from seaway.protocol.messages.add_partitions_to_txn_response import (
    AddPartitionsToTxnPartitionResult,
    AddPartitionsToTxnResponse,
    AddPartitionsToTxnResult,
    AddPartitionsToTxnTopicResult,
)

__all__ = ["handle_add_partitions_to_txn"]

TopicPartition = tuple[str, int]


def _results(errors: dict[TopicPartition, int]) -> list[AddPartitionsToTxnTopicResult]:
    by_topic: dict[str, list[AddPartitionsToTxnPartitionResult]] = defaultdict(list)
    for (topic, partition), code in errors.items():
        by_topic[topic].append(AddPartitionsToTxnPartitionResult(partition_index=partition,
                                                                  partition_error_code=code))
    return [AddPartitionsToTxnTopicResult(name=topic, results_by_partition=parts) for topic, parts in by_topic.items()]


def _one(ctx: RequestContext, txn: AddPartitionsToTxnTransaction, version: int) -> dict[TopicPartition, int]:
    """Error code per partition of one transaction."""
    wanted = [(t.name, p) for t in txn.topics for p in t.partitions]
    if version < 4 and not ctx.allowed(Operation.WRITE, ResourceType.TRANSACTIONAL_ID, txn.transactional_id):
        return dict.fromkeys(wanted, TransactionalIdAuthorizationFailedError.code)
    failed: dict[TopicPartition, int] = {}
    for topic, partition in wanted:
        if version < 4 and (topic in INTERNAL_TOPICS or not ctx.allowed(Operation.WRITE, ResourceType.TOPIC, topic)):
            failed[(topic, partition)] = TopicAuthorizationFailedError.code
        elif ctx.broker.logs.get_log(topic, partition) is None:
            failed[(topic, partition)] = UnknownTopicOrPartitionError.code
    if failed:
        return {tp: failed.get(tp, OperationNotAttemptedError.code) for tp in wanted}
    try:
        coordinator = transaction_coordinator_of(ctx.broker)
        if version >= 4 and txn.verify_only:
            errors: dict[TopicPartition, int] = {}
            for topic, partition in wanted:
                try:
                    coordinator.verify(txn.transactional_id, txn.producer_id, txn.producer_epoch, topic, partition)
                    errors[(topic, partition)] = 0
                except KafkaProtocolError as exc:
                    errors[(topic, partition)] = exc.code
            return errors
        coordinator.add_partitions(txn.transactional_id, txn.producer_id, txn.producer_epoch, wanted)
    except ProducerFencedError as exc:
        return dict.fromkeys(wanted, (InvalidProducerEpochError if version < 2 else exc).code)
    except KafkaProtocolError as exc:
        return dict.fromkeys(wanted, exc.code)
    return dict.fromkeys(wanted, 0)


@handles(AddPartitionsToTxnRequest, AddPartitionsToTxnResponse)
async def handle_add_partitions_to_txn(ctx: RequestContext,
                                       request: AddPartitionsToTxnRequest) -> AddPartitionsToTxnResponse:
    version = ctx.api_version
    if version < 4:
        txn = AddPartitionsToTxnTransaction(
            transactional_id=request.v3_and_below_transactional_id,
            producer_id=request.v3_and_below_producer_id,
            producer_epoch=request.v3_and_below_producer_epoch,
            topics=[AddPartitionsToTxnTopic(name=t.name, partitions=t.partitions)
                    for t in request.v3_and_below_topics])
        return AddPartitionsToTxnResponse(results_by_topic_v3_and_below=_results(_one(ctx, txn, version)))
    if not ctx.allowed(Operation.CLUSTER_ACTION, ResourceType.CLUSTER, CLUSTER_NAME):
        return AddPartitionsToTxnResponse(error_code=ClusterAuthorizationFailedError.code)
    if len({t.transactional_id for t in request.transactions}) != len(request.transactions):
        return AddPartitionsToTxnResponse(error_code=InvalidRequestError.code)
    return AddPartitionsToTxnResponse(results_by_transaction=[
        AddPartitionsToTxnResult(transactional_id=txn.transactional_id, topic_results=_results(_one(ctx, txn, version)))
        for txn in request.transactions
    ])
