"""ListOffsets: earliest (-2), latest (-1), max timestamp (-3) or the first offset at a time.

MAX_TIMESTAMP (KIP-734) answers, as Kafka 3.8+ does (KAFKA-16310), the offset of the first
record carrying the partition's largest timestamp, not the last offset of the batch
holding it: the log only indexes batches, so that one batch is read back and decoded
(decompressed, bounded like every decompression) in a worker thread. This is off the
produce and fetch paths and costs one batch per request.
"""

from __future__ import annotations

import asyncio

from seaway.broker.context import RequestContext
from seaway.broker.handlers.registry import handles
from seaway.broker.log.partition_log import PartitionLog
from seaway.protocol.errors import KafkaProtocolError, UnknownTopicOrPartitionError
from seaway.protocol.messages.list_offsets_request import ListOffsetsRequest
from seaway.protocol.messages.list_offsets_response import (
    ListOffsetsPartitionResponse,
    ListOffsetsResponse,
    ListOffsetsTopicResponse,
)
from seaway.protocol.record_batch import CorruptBatchError
from seaway.protocol.records import decode_batch

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
                        offset, ts = await asyncio.to_thread(record_of_max_timestamp, plog, *found)
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


def record_of_max_timestamp(plog: PartitionLog, batch_offset: int, timestamp: int) -> tuple[int, int]:
    """(offset, timestamp) of the first record stamped ``timestamp`` in the batch holding ``batch_offset``.

    Kafka reads the batches from the one its segment remembers and takes the first record
    whose timestamp equals the maximum; with LogAppendTime every record carries the batch's
    time, so that is the batch's first record. Should the batch be gone (retention between
    the two reads) or hold no such record (a producer's maxTimestamp field larger than
    any of its records), the batch-level answer stands.
    """
    try:
        region = plog.read(batch_offset, 1, min_one_batch=True)
        if region is None:
            return batch_offset, timestamp
        header, records = decode_batch(region.read_bytes())
    except (CorruptBatchError, KafkaProtocolError):
        return batch_offset, timestamp
    if not header.base_offset <= batch_offset <= header.last_offset:
        return batch_offset, timestamp
    for record in records:
        if record.timestamp == timestamp:
            return max(record.offset, plog.log_start_offset), timestamp
    return batch_offset, timestamp
