"""ListOffsets: earliest (-2), latest (-1), max timestamp (-3) or the first offset at a time.

Both timestamp lookups answer a *record*, as Kafka does, while the log indexes only batches:
the time index finds the batch, and that one batch is read back and decoded (decompressed,
bounded like every decompression) in a worker thread by :func:`first_record_at_or_after`.
This is off the produce and fetch paths and costs one batch per partition asked for.

- A timestamp ``t >= 0`` answers the first record whose timestamp is ``>= t`` (Kafka's
  ``FileRecords.searchForTimestamp``), with that record's own timestamp; the batch's base
  offset would be too early for a batch whose first records are older than ``t``.
- MAX_TIMESTAMP (KIP-734) answers, as Kafka 3.8+ does (KAFKA-16310), the first record
  carrying the partition's largest timestamp, not the last offset of the batch holding it.

``isolation_level=1`` (read_committed, v2+) answers as Kafka does: LATEST is the last
stable offset, and a timestamp lookup (MAX_TIMESTAMP too) finds nothing at or after it.
Right after a start it first waits (up to 10 s) until the transaction coordinator knows
every partition's LSO, else answers LEADER_NOT_AVAILABLE, which clients retry.
"""

from __future__ import annotations

import asyncio

from seaway.broker.context import Operation, RequestContext, ResourceType
from seaway.broker.handlers.registry import handles
from seaway.broker.log.partition_log import PartitionLog
from seaway.protocol.errors import (
    KafkaProtocolError,
    LeaderNotAvailableError,
    TopicAuthorizationFailedError,
    UnknownTopicOrPartitionError,
)
from seaway.protocol.messages.list_offsets_request import ListOffsetsRequest
from seaway.protocol.messages.list_offsets_response import (
    ListOffsetsPartitionResponse,
    ListOffsetsResponse,
    ListOffsetsTopicResponse,
)
from seaway.protocol.record_batch import CorruptBatchError, parse_batch_header
from seaway.protocol.records import decode_batch

__all__ = ["handle_list_offsets"]

LATEST = -1
EARLIEST = -2
MAX_TIMESTAMP = -3
READ_COMMITTED = 1
_RECOVERY_WAIT_S = 10.0


@handles(ListOffsetsRequest, ListOffsetsResponse)
async def handle_list_offsets(ctx: RequestContext, request: ListOffsetsRequest) -> ListOffsetsResponse:
    logs = ctx.broker.logs
    committed = ctx.api_version >= 2 and request.isolation_level == READ_COMMITTED
    unknown_lso = False
    if committed:
        txn = ctx.broker.components.txn_coordinator
        unknown_lso = txn is not None and not await txn.wait_recovered(_RECOVERY_WAIT_S)
    topics: list[ListOffsetsTopicResponse] = []
    for topic in request.topics:
        parts: list[ListOffsetsPartitionResponse] = []
        described = ctx.allowed(Operation.DESCRIBE, ResourceType.TOPIC, topic.name)  # ACLs
        for p in topic.partitions:
            plog = logs.get_log(topic.name, p.partition_index) if described else None
            if plog is None:
                parts.append(ListOffsetsPartitionResponse(
                    partition_index=p.partition_index,
                    error_code=UnknownTopicOrPartitionError.code if described else TopicAuthorizationFailedError.code))
                continue
            ts, offset = -1, -1
            if unknown_lso:
                parts.append(ListOffsetsPartitionResponse(partition_index=p.partition_index,
                                                          error_code=LeaderNotAvailableError.code))
                continue
            # What a read at this isolation level can see ends here (Kafka's lastFetchableOffset).
            fetchable = plog.last_stable_offset if committed else plog.log_end_offset
            try:
                if p.timestamp == LATEST:
                    offset = fetchable
                elif p.timestamp == EARLIEST:
                    offset = plog.log_start_offset
                elif p.timestamp == MAX_TIMESTAMP:
                    found = plog.max_timestamp_and_offset()
                    if found is not None:
                        offset, ts = await asyncio.to_thread(record_of_max_timestamp, plog, *found, fetchable)
                else:
                    hit = plog.offset_for_timestamp(p.timestamp)
                    if hit is not None:
                        offset, ts = await asyncio.to_thread(record_at_timestamp, plog, *hit, p.timestamp,
                                                             fetchable)
                if p.timestamp not in (LATEST, EARLIEST) and offset >= fetchable:
                    ts, offset = -1, -1
            except KafkaProtocolError as exc:
                parts.append(ListOffsetsPartitionResponse(partition_index=p.partition_index, error_code=exc.code))
                continue
            parts.append(ListOffsetsPartitionResponse(partition_index=p.partition_index, error_code=0,
                                                      timestamp=ts, offset=offset, leader_epoch=0))
        topics.append(ListOffsetsTopicResponse(name=topic.name, partitions=parts))
    return ListOffsetsResponse(topics=topics)


def first_record_at_or_after(plog: PartitionLog, offset: int, timestamp: int, end: int,
                             max_batches: int | None = None) -> tuple[int, int] | None:
    """(offset, timestamp) of the first record at or after the batch holding ``offset`` whose
    timestamp is ``>= timestamp``, below ``end``; None when there is none.

    Kafka's ``FileRecords.searchForTimestamp``: a batch whose maxTimestamp is below
    ``timestamp`` cannot hold the answer and is not decoded. The first batch normally holds
    the answer (the time index found it by its maxTimestamp), so one batch is read and
    decoded (a LogAppendTime batch is not even decoded: its records all carry its
    maxTimestamp); the scan goes on only past a batch whose matching records all lie below the log
    start offset (DeleteRecords inside it) or whose header claims a larger maxTimestamp than
    its records carry (Kafka rewrites that field on append; Seaway stores batches verbatim).
    Like Kafka's, which searches the one segment the index chose, the scan stops after
    ``segment.bytes`` read (or ``max_batches`` batches). Raises ``CorruptBatchError`` /
    ``KafkaProtocolError`` (e.g. retention removed the batch since the index lookup).
    """
    budget, batches = plog.config.segment_bytes, 0
    while offset < end and budget > 0 and (max_batches is None or batches < max_batches):
        region = plog.read(offset, 1, min_one_batch=True)
        if region is None:
            return None
        data = region.read_bytes()
        budget, batches = budget - len(data), batches + 1
        header = parse_batch_header(data)
        if header.max_timestamp >= timestamp:
            start = plog.log_start_offset
            if header.is_log_append_time:  # every record carries the batch's time: no decoding
                first = max(header.base_offset, start)
                if first <= header.last_offset and first < end:
                    return first, header.max_timestamp
            else:
                for record in decode_batch(data)[1]:
                    if record.timestamp >= timestamp and start <= record.offset < end:
                        return record.offset, record.timestamp
        offset = max(offset, header.last_offset + 1)
    return None


def record_at_timestamp(plog: PartitionLog, batch_offset: int, batch_timestamp: int, timestamp: int,
                        end: int) -> tuple[int, int]:
    """ListOffsets for ``timestamp >= 0``: the first record stamped ``>= timestamp`` from the
    batch the time index found, ``(-1, -1)`` when no record below ``end`` is.

    Should that batch not read back (corrupt, or removed since the index lookup), the
    batch-level answer the index gave stands.
    """
    try:
        found = first_record_at_or_after(plog, batch_offset, timestamp, end)
    except (CorruptBatchError, KafkaProtocolError):
        return batch_offset, batch_timestamp
    return found if found is not None else (-1, -1)


def record_of_max_timestamp(plog: PartitionLog, batch_offset: int, timestamp: int, end: int) -> tuple[int, int]:
    """(offset, timestamp) of the first record stamped ``timestamp`` in the batch holding ``batch_offset``.

    Kafka reads the batches from the one its segment remembers and takes the first record
    whose timestamp equals the maximum; with LogAppendTime every record carries the batch's
    time, so that is the batch's first record. Should the batch be gone (retention between
    the two reads) or hold no such record (a producer's maxTimestamp field larger than
    any of its records), the batch-level answer stands.
    """
    try:
        found = first_record_at_or_after(plog, batch_offset, timestamp, end, max_batches=1)
    except (CorruptBatchError, KafkaProtocolError):
        return batch_offset, timestamp
    return found if found is not None else (batch_offset, timestamp)
