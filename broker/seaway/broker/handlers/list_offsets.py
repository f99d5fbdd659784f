"""ListOffsets: earliest (-2), latest (-1), max timestamp (-3) or the first offset at a time."""

from __future__ import annotations

from seaway.broker.context import RequestContext
from seaway.broker.handlers.registry import handles
from seaway.protocol.errors import KafkaProtocolError, UnknownTopicOrPartitionError
from seaway.protocol.messages.list_offsets_request import ListOffsetsRequest
from seaway.protocol.messages.list_offsets_response import (
    ListOffsetsPartitionResponse,
    ListOffsetsResponse,
    ListOffsetsTopicResponse,
)

__all__ = ["handle_list_offsets"]

LATEST = -1
EARLIEST = -2
MAX_TIMESTAMP = -3


@handles(ListOffsetsRequest, ListOffsetsResponse)
async def handle_list_offsets(ctx: RequestContext, request: ListOffsetsRequest) -> ListOffsetsResponse:
    logs = ctx.broker.logs
    topics: list[ListOffsetsTopicResponse] = []
    for topic in request.topics:
        parts: list[ListOffsetsPartitionResponse] = []
        for p in topic.partitions:
            plog = logs.get_log(topic.name, p.partition_index)
            if plog is None:
                parts.append(ListOffsetsPartitionResponse(partition_index=p.partition_index,
                                                          error_code=UnknownTopicOrPartitionError.code))
                continue
            ts, offset = -1, -1
            try:
                if p.timestamp == LATEST:
                    offset = plog.log_end_offset
                elif p.timestamp == EARLIEST:
                    offset = plog.log_start_offset
                elif p.timestamp == MAX_TIMESTAMP:
                    found = plog.max_timestamp_and_offset()
                    if found is not None:
                        offset, ts = found
                else:
                    hit = plog.offset_for_timestamp(p.timestamp)
                    if hit is not None:
                        offset, ts = hit
            except KafkaProtocolError as exc:
                parts.append(ListOffsetsPartitionResponse(partition_index=p.partition_index, error_code=exc.code))
                continue
            parts.append(ListOffsetsPartitionResponse(partition_index=p.partition_index, error_code=0,
                                                      timestamp=ts, offset=offset, leader_epoch=0))
        topics.append(ListOffsetsTopicResponse(name=topic.name, partitions=parts))
    return ListOffsetsResponse(topics=topics)
