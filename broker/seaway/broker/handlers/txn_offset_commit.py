"""TxnOffsetCommit: a consumer group's offsets, committed inside the producer's transaction.

ACLs as Kafka: WRITE on the transactional id (TRANSACTIONAL_ID_AUTHORIZATION_FAILED) and
READ on the group (GROUP_AUTHORIZATION_FAILED), on every partition; READ on each topic
(TOPIC_AUTHORIZATION_FAILED for that topic's partitions). The rest is
:func:`seaway.broker.coordinator.txn_offsets.txn_commit_offsets`: KIP-447's member and
generation check and KIP-890's verification, then the offsets wait for the transaction's
commit marker before OffsetFetch shows them.
"""

from __future__ import annotations

from seaway.broker.context import Operation, RequestContext, ResourceType
from seaway.broker.coordinator import coordinator_of
from seaway.broker.coordinator.txn_offsets import TxnCommit, txn_commit_offsets
from seaway.broker.handlers.registry import handles
from seaway.protocol.errors import (
    GroupAuthorizationFailedError,
    KafkaProtocolError,
    TopicAuthorizationFailedError,
    TransactionalIdAuthorizationFailedError,
)
from seaway.protocol.messages.txn_offset_commit_request import TxnOffsetCommitRequest
from seaway.protocol.messages.txn_offset_commit_response import (
    TxnOffsetCommitResponse,
    TxnOffsetCommitResponsePartition,
    TxnOffsetCommitResponseTopic,
)

__all__ = ["handle_txn_offset_commit"]


@handles(TxnOffsetCommitRequest, TxnOffsetCommitResponse)
async def handle_txn_offset_commit(ctx: RequestContext, request: TxnOffsetCommitRequest) -> TxnOffsetCommitResponse:
    version = ctx.api_version
    offsets: list[TxnCommit] = [
        (t.name, p.partition_index, p.committed_offset, p.committed_leader_epoch if version >= 2 else -1,
         p.committed_metadata)
        for t in request.topics for p in t.partitions
    ]
    errors: dict[tuple[str, int], int]
    if not ctx.allowed(Operation.WRITE, ResourceType.TRANSACTIONAL_ID, request.transactional_id):
        errors = {(o[0], o[1]): TransactionalIdAuthorizationFailedError.code for o in offsets}
    elif not ctx.allowed(Operation.READ, ResourceType.GROUP, request.group_id):
        errors = {(o[0], o[1]): GroupAuthorizationFailedError.code for o in offsets}
    else:
        errors = {(o[0], o[1]): TopicAuthorizationFailedError.code for o in offsets
                  if not ctx.allowed(Operation.READ, ResourceType.TOPIC, o[0])}
        allowed = [o for o in offsets if (o[0], o[1]) not in errors]
        if allowed:
            try:
                errors.update(txn_commit_offsets(
                    coordinator_of(ctx.broker), ctx.broker.components.txn_coordinator,
                    request.transactional_id, request.group_id, request.producer_id, request.producer_epoch,
                    request.generation_id if version >= 3 else -1, request.member_id if version >= 3 else "",
                    request.group_instance_id if version >= 3 else None, allowed, version))
            except KafkaProtocolError as exc:
                errors.update({(o[0], o[1]): exc.code for o in allowed})
    return TxnOffsetCommitResponse(topics=[
        TxnOffsetCommitResponseTopic(name=t.name, partitions=[
            TxnOffsetCommitResponsePartition(partition_index=p.partition_index,
                                             error_code=errors[(t.name, p.partition_index)])
            for p in t.partitions])
        for t in request.topics
    ])
