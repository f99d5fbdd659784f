"""Transaction end markers: the control batches that commit or abort a transaction.

What Kafka's coordinator writes into every partition of a transaction (its
``WriteTxnMarkers``, done here in-process). A marker is a batch of its own with the
transactional and control attribute bits set, the producer's id and epoch, no sequence,
and one record whose key and value are (Kafka's ``EndTransactionMarker``)::

    key:   version int16 = 0, type int16 (0 = ABORT, 1 = COMMIT)
    value: version int16 = 0, coordinatorEpoch int32

Consumers never see markers as records; a read_committed consumer uses them, with the
fetch response's aborted-transaction list, to drop aborted data.
"""

from __future__ import annotations

import os
import struct

from seaway.protocol.record_batch import BatchHeader, CorruptBatchError
from seaway.protocol.records import ControlType, Record, build_batch, decode_batch

__all__ = ["MARKER_VALUE", "build_marker", "parse_marker", "read_marker"]

_KEY = struct.Struct(">hh")
MARKER_VALUE = struct.Struct(">hi")
_MAX_MARKER_BYTES = 4096  # a marker batch is ~80 bytes; anything bigger is not one of ours


def build_marker(producer_id: int, epoch: int, coordinator_epoch: int, commit: bool, now_ms: int) -> bytes:
    """The control batch ending ``producer_id``'s transaction (base offset 0, to be stamped)."""
    kind = ControlType.COMMIT if commit else ControlType.ABORT
    record = Record(0, now_ms, _KEY.pack(0, kind), MARKER_VALUE.pack(0, coordinator_epoch))
    return build_batch([record], producer_id=producer_id, producer_epoch=epoch, is_transactional=True,
                       is_control=True)


def parse_marker(data: bytes | memoryview) -> tuple[bool, int]:
    """(is an abort, coordinator epoch) of the control batch in ``data``.

    Raises CorruptBatchError for a control batch that is not a transaction marker (Kafka's
    other control types, e.g. KRaft's, never occur in a topic partition).
    """
    _, records = decode_batch(data, verify_crc=False)
    if len(records) != 1 or records[0].key is None or len(records[0].key) < _KEY.size:
        raise CorruptBatchError("corrupt", "a control batch without one marker record")
    _, kind = _KEY.unpack_from(records[0].key)
    if kind not in (ControlType.ABORT, ControlType.COMMIT):
        raise CorruptBatchError("corrupt", f"unknown control record type {kind}")
    value = records[0].value
    epoch = MARKER_VALUE.unpack_from(value)[1] if value is not None and len(value) >= MARKER_VALUE.size else -1
    return kind == ControlType.ABORT, epoch


def read_marker(fd: int, header: BatchHeader) -> tuple[bool, int]:
    """:func:`parse_marker` of the control batch ``header`` describes in the segment file ``fd``."""
    if header.size > _MAX_MARKER_BYTES:
        raise CorruptBatchError("too_large", f"a control batch of {header.size} bytes")
    data = os.pread(fd, header.size, header.position)
    if len(data) != header.size:
        raise CorruptBatchError("truncated", "control batch is cut short")
    return parse_marker(data)
