"""The produce-side rule of compacted topics: every record must have a key.

Kafka's ``LogValidator`` refuses a batch for a compacted topic when any of its records
has a null key, answering INVALID_RECORD (87) with one ``record_errors`` entry per keyless
record. It is the one produce check that has to look inside batches, so it runs only for
compacted topics and does the least it can: the payload is decompressed once and the
walk reads each record's length prefix and the three varints before the key length,
then jumps to the next record. No record object is built and no value is copied.
"""

from __future__ import annotations

from seaway.protocol.compression import decompress
from seaway.protocol.errors import CorruptMessageError, InvalidRecordError
from seaway.protocol.record_batch import BATCH_HEADER_SIZE, BatchHeader, Compression
from seaway.protocol.varint import VarintError, decode_varint

__all__ = ["KeylessRecordError", "check_keys_present", "keyless_record_indexes"]


class KeylessRecordError(InvalidRecordError):
    """INVALID_RECORD for keyless records on a compacted topic, with Kafka's record errors.

    ``record_errors`` holds ``(record index within the batch, message)`` pairs; the
    produce handler copies them into the response's ``record_errors``.
    """

    def __init__(self, message: str, record_errors: list[tuple[int, str]]) -> None:
        super().__init__(message)
        self.record_errors = record_errors


def _skip_varint(data: bytes, pos: int) -> int:
    """Position after the varint at ``pos`` (at most 10 bytes long)."""
    end = pos + 10
    while data[pos] & 0x80:
        pos += 1
        if pos >= end:
            raise VarintError("varint longer than 10 bytes")
    return pos + 1


def keyless_record_indexes(buf: bytes | bytearray | memoryview, header: BatchHeader) -> list[int]:
    """Indexes (within the batch) of the records of the batch at ``header`` with a null key."""
    payload = memoryview(buf)[header.position + BATCH_HEADER_SIZE : header.position + header.size]
    codec = header.compression
    data = bytes(payload) if codec == Compression.NONE else decompress(codec, payload)
    missing: list[int] = []
    pos = 0
    try:
        for index in range(header.record_count):
            length, pos = decode_varint(data, pos)
            end = pos + length
            if length <= 0 or end > len(data):
                raise CorruptMessageError(f"record {index} of length {length} overruns its batch")
            field = _skip_varint(data, _skip_varint(data, pos + 1))  # attributes, timestamp, offset
            key_length, _ = decode_varint(data, field)
            if key_length < 0:
                missing.append(index)
            pos = end
    except (IndexError, VarintError) as exc:
        raise CorruptMessageError(f"record batch at byte {header.position} is malformed: {exc}") from None
    return missing


def check_keys_present(buf: bytes | bytearray | memoryview, headers: list[BatchHeader], where: str) -> None:
    """Raise :class:`KeylessRecordError` if a record of any batch lacks a key.

    ``where`` names the partition in the message, as Kafka's does. Record indexes count
    across the whole request, which holds one batch per partition for every real client.
    """
    errors: list[tuple[int, str]] = []
    message = f"Compacted topic cannot accept message without key in topic partition {where}."
    first = 0
    for header in headers:
        errors.extend((first + i, message) for i in keyless_record_indexes(buf, header))
        first += header.record_count
    if errors:
        raise KeylessRecordError(message, errors)
