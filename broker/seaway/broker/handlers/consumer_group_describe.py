"""ConsumerGroupDescribe v0: KIP-848 consumer groups with their members' assignments and targets.

Any id that is not a consumer group is GROUP_ID_NOT_FOUND, which Kafka's admin client
takes as "describe it with DescribeGroups". ACLs as Kafka: DESCRIBE on each group
(GROUP_AUTHORIZATION_FAILED); with ``include_authorized_operations`` the operations the
caller may do on the group are reported.
"""

from __future__ import annotations

from seaway.broker.context import Operation, RequestContext, ResourceType
from seaway.broker.coordinator import coordinator_of
from seaway.broker.coordinator.admin import TopicPartitions as Named
from seaway.broker.coordinator.admin import describe_consumer_group
from seaway.broker.handlers.registry import handles
from seaway.protocol.errors import KafkaProtocolError
from seaway.protocol.messages.consumer_group_describe_request import ConsumerGroupDescribeRequest
from seaway.protocol.messages.consumer_group_describe_response import (
    Assignment,
    ConsumerGroupDescribeResponse,
    DescribedGroup,
    Member,
    TopicPartitions,
)

__all__ = ["handle_consumer_group_describe"]

_OMITTED = -(2**31)


def _assignment(topics: list[Named]) -> Assignment:
    return Assignment(topic_partitions=[TopicPartitions(topic_id=tid, topic_name=name, partitions=parts)
                                        for tid, name, parts in topics])


def _describe(ctx: RequestContext, group_id: str, with_operations: bool) -> DescribedGroup:
    try:
        ctx.require(Operation.DESCRIBE, ResourceType.GROUP, group_id)
        summary = describe_consumer_group(coordinator_of(ctx.broker), group_id)
    except KafkaProtocolError as exc:
        return DescribedGroup(error_code=exc.code, error_message=str(exc) or None, group_id=group_id,
                              authorized_operations=_OMITTED)
    return DescribedGroup(
        error_code=0, group_id=group_id, group_state=summary.state, group_epoch=summary.group_epoch,
        assignment_epoch=summary.assignment_epoch, assignor_name=summary.assignor,
        members=[Member(member_id=m.member_id, instance_id=m.instance_id, rack_id=m.rack_id,
                        member_epoch=m.member_epoch, client_id=m.client_id, client_host=m.client_host,
                        subscribed_topic_names=m.topic_names, subscribed_topic_regex=m.topic_regex,
                        assignment=_assignment(m.assignment), target_assignment=_assignment(m.target))
                 for m in summary.members],
        authorized_operations=ctx.authorized_operations(ResourceType.GROUP, group_id) if with_operations
        else _OMITTED)


@handles(ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse)
async def handle_consumer_group_describe(ctx: RequestContext, request: ConsumerGroupDescribeRequest
                                         ) -> ConsumerGroupDescribeResponse:
    return ConsumerGroupDescribeResponse(groups=[_describe(ctx, g, request.include_authorized_operations)
                                                 for g in request.group_ids])
