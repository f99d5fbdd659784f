"""DescribeTopicPartitions (KIP-966): topics and their partitions, a page at a time.

Kafka's admin client (3.8+) asks this before Metadata for ``describeTopics`` by name, so
``kafka-topics --describe`` prints its ``Elr:`` / ``LastKnownElr:`` columns from it. The
answer follows Kafka's ``DescribeTopicPartitionsRequestHandler`` and
``KRaftMetadataCache.describeTopicResponse`` for one node:

- no topics named means every topic; topics sort by name and start at the cursor's topic
  (a named list must contain the cursor's topic, and its partition must not be negative:
  INVALID_REQUEST otherwise, answered on every named topic as Kafka's error response does);
- at most ``min(max.request.partition.size.limit, ResponsePartitionLimit)`` (at least 1)
  partitions are returned; when a topic is cut, or the next topic gets no room,
  ``NextCursor`` says where the next page starts;
- a named topic the caller may not DESCRIBE is TOPIC_AUTHORIZATION_FAILED with no id (listed
  after the others); when all topics are asked for, such topics are left out silently; a
  named topic that does not exist is UNKNOWN_TOPIC_OR_PARTITION (INVALID_TOPIC_EXCEPTION for
  an illegal name), which listing all topics never produces;
- each partition is led by this node at epoch 0 with this node as its only replica and ISR;
  eligible leader replicas and the last known ELR are empty lists (this node keeps no ELR),
  as a Kafka cluster with ELR enabled reports for healthy partitions;
- ``TopicAuthorizedOperations`` is always filled in for the topics described.
"""

from __future__ import annotations

import logging

from seaway.broker.context import Operation, RequestContext, ResourceType
from seaway.broker.handlers.registry import handles
from seaway.broker.log.log_manager import INTERNAL_TOPICS, validate_topic_name
from seaway.protocol.errors import (
    InvalidRequestError,
    InvalidTopicException,
    TopicAuthorizationFailedError,
    UnknownTopicOrPartitionError,
)
from seaway.protocol.messages.describe_topic_partitions_request import DescribeTopicPartitionsRequest
from seaway.protocol.messages.describe_topic_partitions_response import (
    Cursor,
    DescribeTopicPartitionsResponse,
    DescribeTopicPartitionsResponsePartition,
    DescribeTopicPartitionsResponseTopic,
)

__all__ = ["handle_describe_topic_partitions"]

log = logging.getLogger("seaway.broker.metadata")

PARTITION_LIMIT = "max.request.partition.size.limit"


@handles(DescribeTopicPartitionsRequest, DescribeTopicPartitionsResponse)
async def handle_describe_topic_partitions(ctx: RequestContext, request: DescribeTopicPartitionsRequest) -> (
    DescribeTopicPartitionsResponse
):
    broker = ctx.broker
    cursor = request.cursor
    cursor_topic = cursor.topic_name if cursor is not None else ""
    fetch_all = not request.topics
    if fetch_all:
        names = {n for n in broker.logs.topics() if n >= cursor_topic}
    else:
        names = {t.name for t in request.topics if t.name >= cursor_topic}
        if cursor is not None and cursor.topic_name not in names:
            return _invalid(request, f"the topic list must contain the cursor topic: {cursor.topic_name}")
    if cursor is not None and cursor.partition_index < 0:
        return _invalid(request, f"the cursor partition must not be negative: {cursor.partition_index}")

    denied: list[DescribeTopicPartitionsResponseTopic] = []
    allowed: list[str] = []
    for name in sorted(names):
        if ctx.allowed(Operation.DESCRIBE, ResourceType.TOPIC, name):
            allowed.append(name)
        elif not fetch_all:  # no id: the caller learns nothing about the topic
            denied.append(DescribeTopicPartitionsResponseTopic(
                error_code=TopicAuthorizationFailedError.code, name=name, is_internal=False, partitions=[]))

    limit = max(min(int(broker.config.get(PARTITION_LIMIT)), request.response_partition_limit), 1)
    start_of = {cursor.topic_name: cursor.partition_index} if cursor is not None else {}
    topics, next_cursor = _describe(ctx, allowed, start_of, limit, fetch_all)
    return DescribeTopicPartitionsResponse(topics=topics + denied, next_cursor=next_cursor)


def _describe(ctx: RequestContext, names: list[str], start_of: dict[str, int], limit: int,
              fetch_all: bool) -> tuple[list[DescribeTopicPartitionsResponseTopic], Cursor | None]:
    """Kafka's ``describeTopicResponse``: up to ``limit`` partitions, from each topic's start index."""
    node = ctx.broker.node_id
    known = ctx.broker.logs.topics()
    remaining = limit
    out: list[DescribeTopicPartitionsResponseTopic] = []
    for name in names:
        if remaining == 0:
            return out, Cursor(topic_name=name, partition_index=0)
        meta = known.get(name)
        if meta is None:
            if not fetch_all:
                out.append(DescribeTopicPartitionsResponseTopic(
                    error_code=_missing_topic_error(name), name=name, is_internal=name in INTERNAL_TOPICS,
                    topic_authorized_operations=ctx.authorized_operations(ResourceType.TOPIC, name)))
            continue
        start = start_of.get(name, 0)
        upper = min(meta.num_partitions, start + remaining)
        partitions = [
            DescribeTopicPartitionsResponsePartition(
                error_code=0, partition_index=p, leader_id=node, leader_epoch=0, replica_nodes=[node],
                isr_nodes=[node], eligible_leader_replicas=[], last_known_elr=[], offline_replicas=[])
            for p in range(start, upper)
        ]
        out.append(DescribeTopicPartitionsResponseTopic(
            error_code=0, name=name, topic_id=meta.topic_id, is_internal=meta.is_internal, partitions=partitions,
            topic_authorized_operations=ctx.authorized_operations(ResourceType.TOPIC, name)))
        if upper < meta.num_partitions:
            return out, Cursor(topic_name=name, partition_index=upper)
        remaining -= len(partitions)
    return out, None


def _missing_topic_error(name: str) -> int:
    try:
        validate_topic_name(name)
    except InvalidTopicException:
        return InvalidTopicException.code
    return UnknownTopicOrPartitionError.code


def _invalid(request: DescribeTopicPartitionsRequest, reason: str) -> DescribeTopicPartitionsResponse:
    """Kafka's error response for the whole request: every named topic carries the error.

    The response has no message field: the reason is logged, as Kafka logs it.
    """
    log.info("DescribeTopicPartitions refused with INVALID_REQUEST: %s", reason)
    return DescribeTopicPartitionsResponse(topics=[
        DescribeTopicPartitionsResponseTopic(error_code=InvalidRequestError.code, name=t.name, is_internal=False,
                                             partitions=[])
        for t in request.topics])
