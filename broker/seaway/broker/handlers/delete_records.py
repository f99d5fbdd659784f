"""DeleteRecords: advance partitions' log start offsets, as ``kafka-delete-records.sh`` does.

Offset -1 means the high watermark (delete everything); an offset below zero otherwise,
or above the high watermark, is OFFSET_OUT_OF_RANGE. An offset below the current log
start changes nothing and answers the current low watermark. Topics whose
``cleanup.policy`` lacks ``delete`` refuse with POLICY_VIOLATION, as Kafka does. Records
below the new start are unreadable at once (fetch answers OFFSET_OUT_OF_RANGE and
ListOffsets earliest gives the new start); their segments go at the next retention pass.
Internal topics (``__consumer_offsets``, ``__transaction_state``) are INVALID_TOPIC_EXCEPTION,
after the ACL and existence checks, as in Kafka's ``ReplicaManager`` (:mod:`.internal_topics`).
"""

from __future__ import annotations

from seaway.broker.context import BrokerContext, Operation, RequestContext, ResourceType
from seaway.broker.handlers.internal_topics import delete_records_refusal
from seaway.broker.handlers.registry import handles
from seaway.protocol.errors import (
    KafkaProtocolError,
    OffsetOutOfRangeError,
    PolicyViolationError,
    UnknownTopicOrPartitionError,
)
from seaway.protocol.messages.delete_records_request import DeleteRecordsPartition, DeleteRecordsRequest
from seaway.protocol.messages.delete_records_response import (
    DeleteRecordsPartitionResult,
    DeleteRecordsResponse,
    DeleteRecordsTopicResult,
)

__all__ = ["handle_delete_records"]

HIGH_WATERMARK = -1


def _delete(broker: BrokerContext, topic: str, part: DeleteRecordsPartition) -> int:
    """Advance one partition's start; returns its new low watermark."""
    plog = broker.logs.get_log(topic, part.partition_index)
    if plog is None:
        raise UnknownTopicOrPartitionError(f"{topic}-{part.partition_index} does not exist")
    internal = delete_records_refusal(topic)
    if internal is not None:
        raise internal
    if not plog.config.deletes:
        raise PolicyViolationError(
            f"Records of partition {topic}-{part.partition_index} can not be deleted due to the "
            "configured policy (cleanup.policy has no 'delete')"
        )
    if part.offset < 0 and part.offset != HIGH_WATERMARK:
        raise OffsetOutOfRangeError(f"Cannot delete records before offset {part.offset}")
    return plog.delete_records_before(part.offset)


@handles(DeleteRecordsRequest, DeleteRecordsResponse)
async def handle_delete_records(ctx: RequestContext, request: DeleteRecordsRequest) -> DeleteRecordsResponse:
    # delete_records_before only moves an offset under the partition's lock: no disk I/O.
    topics: list[DeleteRecordsTopicResult] = []
    for topic in request.topics:
        parts: list[DeleteRecordsPartitionResult] = []
        for part in topic.partitions:
            try:
                ctx.require(Operation.DELETE, ResourceType.TOPIC, topic.name)
                low = _delete(ctx.broker, topic.name, part)
                parts.append(DeleteRecordsPartitionResult(partition_index=part.partition_index,
                                                          low_watermark=low, error_code=0))
            except KafkaProtocolError as exc:
                parts.append(DeleteRecordsPartitionResult(partition_index=part.partition_index,
                                                          low_watermark=-1, error_code=exc.code))
        topics.append(DeleteRecordsTopicResult(name=topic.name, partitions=parts))
    return DeleteRecordsResponse(topics=topics)
