"""Hand-built v2 record batches whose header and records may disagree (the attacks of issue 14).

``records_bytes`` encodes records field by field with whatever offset deltas, lengths and
trailing bytes a test asks for; ``raw_batch`` wraps any record bytes in a header with a
correct CRC32C, so only the broker's record checks can refuse it. Plus the raw produce
call the broker tests send them with.
"""

from __future__ import annotations

import struct
import time
from typing import Any

import cramjam
from crc32c import crc32c
from seaway.protocol.messages.produce_request import PartitionProduceData, ProduceRequest, TopicProduceData
from seaway.protocol.messages.produce_response import PartitionProduceResponse, ProduceResponse
from seaway.protocol.record_batch import Compression
from seaway.protocol.varint import encode_varint

from tests.broker.admin.rawclient import call

INT32_MAX = 2**31 - 1
CORRUPT_MESSAGE = 2
MESSAGE_TOO_LARGE = 10
INVALID_TIMESTAMP = 32
KAFKA_STORAGE_ERROR = 56
INVALID_RECORD = 87

_TAIL = struct.Struct(">hiqqqhii")
_HEAD = struct.Struct(">qiibI")


def record_bytes(
    offset_delta: int,
    value: bytes | None = b"v",
    *,
    key: bytes | None = b"k",
    timestamp_delta: int = 0,
    length_adjust: int = 0,
    length_varint: bytes | None = None,
) -> bytes:
    """One record; ``length_adjust`` makes its length prefix lie, ``length_varint`` replaces it."""
    body = b"\x00" + encode_varint(timestamp_delta) + encode_varint(offset_delta)
    body += encode_varint(-1) if key is None else encode_varint(len(key)) + key
    body += encode_varint(-1) if value is None else encode_varint(len(value)) + value
    body += encode_varint(0)
    prefix = length_varint if length_varint is not None else encode_varint(len(body) + length_adjust)
    return prefix + body


def records_bytes(count: int, *, value: bytes = b"v") -> bytes:
    """``count`` well-formed records, offset deltas 0..count-1."""
    return b"".join(record_bytes(i, value) for i in range(count))


def raw_batch(
    payload: bytes,
    *,
    count: int,
    last_offset_delta: int | None = None,
    codec: int = Compression.NONE,
    base_timestamp: int | None = None,
    max_timestamp: int | None = None,
    producer_id: int = -1,
) -> bytes:
    """A v2 batch around ``payload`` (compressed with ``codec`` here), header fields as given."""
    now = int(time.time() * 1000) if base_timestamp is None else base_timestamp
    if codec == Compression.ZSTD:
        payload = bytes(cramjam.zstd.compress(payload))
    elif codec != Compression.NONE:
        raise ValueError("only NONE and ZSTD are needed here")
    tail = _TAIL.pack(
        codec,
        count - 1 if last_offset_delta is None else last_offset_delta,
        now,
        now if max_timestamp is None else max_timestamp,
        producer_id,
        -1,
        -1,
        count,
    )
    crc = crc32c(payload, crc32c(tail))
    return _HEAD.pack(0, 49 + len(payload), -1, 2, crc) + tail + payload


def compressed_batch(compressed: bytes, *, count: int, codec: int = Compression.ZSTD) -> bytes:
    """A batch whose payload is ``compressed`` as given (e.g. a decompression bomb)."""
    now = int(time.time() * 1000)
    tail = _TAIL.pack(codec, count - 1, now, now, -1, -1, -1, count)
    crc = crc32c(compressed, crc32c(tail))
    return _HEAD.pack(0, 49 + len(compressed), -1, 2, crc) + tail + compressed


def crafted_attack_batch() -> bytes:
    """Issue 14's batch: one record, header claiming recordCount 2^31-1 / lastOffsetDelta 2^31-2."""
    return raw_batch(records_bytes(1, value=b"x" * 5000), count=INT32_MAX, last_offset_delta=INT32_MAX - 1)


def produce_raw(bootstrap: str, topic: str, records: bytes, partition: int = 0) -> PartitionProduceResponse:
    """One ProduceRequest v9 (acks=-1) with ``records`` as the partition's record set."""
    request = ProduceRequest(
        acks=-1,
        timeout_ms=5000,
        topic_data=[TopicProduceData(name=topic, partition_data=[PartitionProduceData(index=partition,
                                                                                     records=records)])],
    )
    response: Any = call(bootstrap, request, ProduceResponse, 9)
    part: PartitionProduceResponse = response.responses[0].partition_responses[0]
    return part
