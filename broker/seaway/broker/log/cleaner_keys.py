"""The produce-side rule of compacted topics: every record must have a key.

Kafka's ``LogValidator`` refuses a batch for a compacted topic when any of its records
has a null key, answering INVALID_RECORD (87) with one ``record_errors`` entry per keyless
record. The record walk that every produced batch gets (:mod:`.record_check`, run by
:func:`~seaway.broker.log.validation.validate_batches`) reports the keyless records as it
goes, so this module only words the error; :func:`check_keys_present` is the same check
on its own (bounded decompression, no record objects) for callers outside the produce path.
"""

from __future__ import annotations

from seaway.broker.log.record_check import inspect_batch
from seaway.protocol.errors import InvalidRecordError
from seaway.protocol.record_batch import BatchHeader

__all__ = ["KeylessRecordError", "check_keys_present", "keyless_message", "keyless_record_indexes"]

_DEFAULT_MAX_MESSAGE_BYTES = 1048588


class KeylessRecordError(InvalidRecordError):
    """INVALID_RECORD for keyless records on a compacted topic, with Kafka's record errors.

    ``record_errors`` holds ``(record index within the batch, message)`` pairs; the
    produce handler copies them into the response's ``record_errors``.
    """

    def __init__(self, message: str, record_errors: list[tuple[int, str]]) -> None:
        super().__init__(message)
        self.record_errors = record_errors


def keyless_message(where: str) -> str:
    """Kafka's message for a keyless record; ``where`` names the partition (``t-0``)."""
    return f"Compacted topic cannot accept message without key in topic partition {where}."


def keyless_record_indexes(
    buf: bytes | bytearray | memoryview, header: BatchHeader, max_message_bytes: int = _DEFAULT_MAX_MESSAGE_BYTES
) -> list[int]:
    """Indexes (within the batch) of the records of the batch at ``header`` with a null key.

    Raises as :func:`~seaway.broker.log.record_check.inspect_batch` does for a batch whose
    records do not agree with its header.
    """
    return inspect_batch(buf, header, max_message_bytes, keyless=True).keyless


def check_keys_present(buf: bytes | bytearray | memoryview, headers: list[BatchHeader], where: str) -> None:
    """Raise :class:`KeylessRecordError` if a record of any batch lacks a key.

    ``where`` names the partition in the message, as Kafka's does. Record indexes count
    across the whole request, which holds one batch per partition for every real client.
    """
    errors: list[tuple[int, str]] = []
    message = keyless_message(where)
    first = 0
    for header in headers:
        errors.extend((first + i, message) for i in keyless_record_indexes(buf, header))
        first += header.record_count
    if errors:
        raise KeylessRecordError(message, errors)
