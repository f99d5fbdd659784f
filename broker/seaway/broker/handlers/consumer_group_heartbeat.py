"""ConsumerGroupHeartbeat v0-1: the KIP-848 consumer group protocol (``group.protocol=consumer``).

The coordinator does the work (:mod:`seaway.broker.coordinator.consumer_coordinator`);
this turns the request into its terms and the result (or the error, with its message)
into the response. ACLs as Kafka's ``handleConsumerGroupHeartbeat``: READ on the group
(GROUP_AUTHORIZATION_FAILED), DESCRIBE on every subscribed topic name
(TOPIC_AUTHORIZATION_FAILED); a regex resolves only to topics the member may DESCRIBE.
"""

from __future__ import annotations

import uuid
from collections import defaultdict

from seaway.broker.context import Operation, RequestContext, ResourceType
from seaway.broker.coordinator import coordinator_of
from seaway.broker.coordinator.consumer_coordinator import HeartbeatRequest
from seaway.broker.coordinator.consumer_records import Assignment
from seaway.broker.handlers.join_group import client_host
from seaway.broker.handlers.registry import handles
from seaway.protocol.errors import (
    GroupAuthorizationFailedError,
    KafkaProtocolError,
    TopicAuthorizationFailedError,
)
from seaway.protocol.messages.consumer_group_heartbeat_request import ConsumerGroupHeartbeatRequest
from seaway.protocol.messages.consumer_group_heartbeat_response import (
    Assignment as AssignmentMessage,
)
from seaway.protocol.messages.consumer_group_heartbeat_response import (
    ConsumerGroupHeartbeatResponse,
    TopicPartitions,
)

__all__ = ["handle_consumer_group_heartbeat"]


def _error(exc: KafkaProtocolError) -> ConsumerGroupHeartbeatResponse:
    return ConsumerGroupHeartbeatResponse(error_code=exc.code, error_message=str(exc) or None)


def _assignment(assignment: Assignment) -> AssignmentMessage:
    by_topic: dict[uuid.UUID, list[int]] = defaultdict(list)
    for topic_id, partition in assignment:
        by_topic[topic_id].append(partition)
    return AssignmentMessage(topic_partitions=[
        TopicPartitions(topic_id=topic_id, partitions=sorted(parts))
        for topic_id, parts in sorted(by_topic.items(), key=lambda item: str(item[0]))])


@handles(ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse)
async def handle_consumer_group_heartbeat(ctx: RequestContext, request: ConsumerGroupHeartbeatRequest
                                          ) -> ConsumerGroupHeartbeatResponse:
    if not ctx.allowed(Operation.READ, ResourceType.GROUP, request.group_id):
        return _error(GroupAuthorizationFailedError(f"Not authorized to READ group {request.group_id!r}"))
    names = request.subscribed_topic_names
    if names:
        denied = sorted(n for n in set(names) if not ctx.allowed(Operation.DESCRIBE, ResourceType.TOPIC, n))
        if denied:
            return _error(TopicAuthorizationFailedError(f"Not authorized to DESCRIBE topics {denied}"))
    owned = request.topic_partitions
    req = HeartbeatRequest(
        group_id=request.group_id,
        member_id=request.member_id,
        member_epoch=request.member_epoch,
        instance_id=request.instance_id,
        rack_id=request.rack_id,
        rebalance_timeout_ms=request.rebalance_timeout_ms,
        topic_names=None if names is None else tuple(names),
        topic_regex=request.subscribed_topic_regex,
        server_assignor=request.server_assignor,
        owned=None if owned is None else frozenset((tp.topic_id, p) for tp in owned for p in tp.partitions),
        client_id=ctx.client_id or "",
        client_host=client_host(ctx),
    )
    try:
        result = coordinator_of(ctx.broker).consumer.heartbeat(
            req, lambda topic: ctx.allowed(Operation.DESCRIBE, ResourceType.TOPIC, topic))
    except KafkaProtocolError as exc:
        return _error(exc)
    return ConsumerGroupHeartbeatResponse(
        error_code=0, member_id=result.member_id, member_epoch=result.member_epoch,
        heartbeat_interval_ms=result.heartbeat_interval_ms,
        assignment=None if result.assignment is None else _assignment(result.assignment))
