"""Records inside a v2 record batch: decode them, and build whole batches from them.

The broker's produce path never comes here (it stores batches verbatim, see
:mod:`seaway.protocol.record_batch`); compaction, the idempotent-producer state, our own
clients and tests do. Batch header layout: that module's docstring.

Byte layout of one record (after the 61-byte header; the records of a compressed batch
are compressed together, with no record count or length in front of them)::

    field             type                     notes
    length            varint                   bytes of the record after this field
    attributes        int8                     unused, written 0
    timestampDelta    varlong                  timestamp - batch baseTimestamp
    offsetDelta       varint                   offset - batch baseOffset
    keyLength         varint                   -1 = null key
    key               keyLength bytes
    valueLength       varint                   -1 = null value (a tombstone)
    value             valueLength bytes
    headerCount       varint
    headers           headerCount times:
      keyLength       varint                   header keys are never null
      key             keyLength bytes, UTF-8
      valueLength     varint                   -1 = null
      value           valueLength bytes

Varints are zigzag-encoded (:mod:`seaway.protocol.varint`). Decoded records carry
absolute offsets and timestamps; a LogAppendTime batch gives every record the batch's
``maxTimestamp``, as Kafka clients do. Malformed input raises
:class:`~seaway.protocol.record_batch.CorruptBatchError` (reasons ``"truncated"``,
``"corrupt"``, ``"crc"``, ``"too_large"``, plus the header's own), never ``IndexError`` or
``struct.error``. Decompression is capped (``max_decompressed``), so no batch can make
the decoder allocate more than that, whatever its records claim.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from crc32c import crc32c
from seaway.protocol.compression import (
    CODEC_NAMES,
    MAX_DECOMPRESSED_BYTES,
    DecompressedTooLargeError,
    compress,
    decompress,
)
from seaway.protocol.errors import CorruptMessageError, UnsupportedCompressionTypeError
from seaway.protocol.record_batch import (
    ATTR_CONTROL,
    ATTR_DELETE_HORIZON,
    ATTR_TIMESTAMP_TYPE,
    ATTR_TRANSACTIONAL,
    BATCH_HEADER_SIZE,
    LOG_OVERHEAD,
    MAGIC_V2,
    BatchHeader,
    Compression,
    CorruptBatchError,
    batch_crc,
    parse_batch_header,
)
from seaway.protocol.varint import VarintError, decode_varint, encode_varint

__all__ = [
    "ControlType",
    "Record",
    "RecordLike",
    "build_batch",
    "control_type",
    "decode_batch",
    "iter_batches",
    "iter_records",
]

NO_TIMESTAMP = -1
_INT32_MAX = (1 << 31) - 1
# The header split at the CRC: the CRC covers _TAIL and the records, not _HEAD.
_HEAD = struct.Struct(">qiibI")
_TAIL = struct.Struct(">hiqqqhii")
_CONTROL_KEY = struct.Struct(">hh")
_NULL = encode_varint(-1)
_ZERO = encode_varint(0)
_ATTRIBUTES = b"\x00"


@dataclass(frozen=True, slots=True)
class Record:
    """One record with its absolute offset and timestamp (ms)."""

    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...] = ()


# A frozen dataclass's __init__ sets each field through object.__setattr__, which costs
# about twice as much as writing the slots through their descriptors; the decoder
# makes one Record per record, so it uses this equivalent, faster constructor.
_new_object = object.__new__
_slot = Record.__dict__  # the slot descriptors, typed Any: mypy cannot see them on a frozen class
_set_offset: Callable[[Record, int], None] = _slot["offset"].__set__
_set_timestamp: Callable[[Record, int], None] = _slot["timestamp"].__set__
_set_key: Callable[[Record, bytes | None], None] = _slot["key"].__set__
_set_value: Callable[[Record, bytes | None], None] = _slot["value"].__set__
_set_headers: Callable[[Record, tuple[tuple[str, bytes | None], ...]], None] = _slot["headers"].__set__


def _make_record(
    offset: int,
    timestamp: int,
    key: bytes | None,
    value: bytes | None,
    headers: tuple[tuple[str, bytes | None], ...],
) -> Record:
    record: Record = _new_object(Record)
    _set_offset(record, offset)
    _set_timestamp(record, timestamp)
    _set_key(record, key)
    _set_value(record, value)
    _set_headers(record, headers)
    return record


class RecordLike(Protocol):
    """What :func:`build_batch` reads from each record: a :class:`Record` or a look-alike."""

    @property
    def offset(self) -> int: ...
    @property
    def timestamp(self) -> int: ...
    @property
    def key(self) -> bytes | None: ...
    @property
    def value(self) -> bytes | None: ...
    @property
    def headers(self) -> Sequence[tuple[str, bytes | None]]: ...


class ControlType:
    """The type field of a control record's key (an end-transaction marker)."""

    ABORT = 0
    COMMIT = 1


def control_type(record: Record) -> int:
    """The :class:`ControlType` of a record from a control batch."""
    if record.key is None or len(record.key) < _CONTROL_KEY.size:
        raise CorruptBatchError("corrupt", "control record key is shorter than 4 bytes")
    _version, kind = _CONTROL_KEY.unpack_from(record.key)
    return int(kind)


# ---------------------------------------------------------------------------- decoding


def decode_batch(
    buf: bytes | bytearray | memoryview,
    pos: int = 0,
    *,
    verify_crc: bool = True,
    max_decompressed: int = MAX_DECOMPRESSED_BYTES,
) -> tuple[BatchHeader, list[Record]]:
    """Decode the batch at ``buf[pos:]``: its header and its records, decompressed.

    Control batches decode like any other (see :func:`control_type`). An unknown codec
    raises ``UnsupportedCompressionTypeError``; anything malformed, ``CorruptBatchError``
    (reason ``"too_large"`` when the records decompress to more than ``max_decompressed``
    bytes: decompression stops there, see :mod:`seaway.protocol.compression`).
    """
    header = parse_batch_header(buf, pos)
    if verify_crc and batch_crc(buf, header) != header.crc:
        raise CorruptBatchError("crc", f"record batch at byte {pos} fails its CRC32C check")
    if header.record_count < 0:
        raise CorruptBatchError("corrupt", f"negative record count {header.record_count}")
    payload = memoryview(buf)[pos + BATCH_HEADER_SIZE : pos + header.size]
    codec = header.compression
    if codec == Compression.NONE or (header.record_count == 0 and not payload):
        data = bytes(payload)
    else:
        try:
            data = decompress(codec, payload, max_bytes=max_decompressed)
        except DecompressedTooLargeError as exc:
            raise CorruptBatchError("too_large", str(exc)) from exc
        except CorruptMessageError as exc:
            raise CorruptBatchError("corrupt", str(exc)) from exc
    fixed_timestamp = header.max_timestamp if header.is_log_append_time else None
    records = _decode_records(
        data, header.record_count, header.base_offset, header.base_timestamp, fixed_timestamp
    )
    return header, records


def iter_batches(
    buf: bytes | bytearray | memoryview, *, verify_crc: bool = True
) -> Iterator[tuple[BatchHeader, list[Record]]]:
    """Decode each batch of ``buf`` (whole batches back to back) in order."""
    pos = 0
    end = len(buf)
    while pos < end:
        header, records = decode_batch(buf, pos, verify_crc=verify_crc)
        yield header, records
        pos += header.size


def iter_records(buf: bytes | bytearray | memoryview, *, verify_crc: bool = True) -> Iterator[Record]:
    """Every record of every batch in ``buf``, in order."""
    for _, records in iter_batches(buf, verify_crc=verify_crc):
        yield from records


def _decode_records(
    data: bytes, count: int, base_offset: int, base_timestamp: int, fixed_timestamp: int | None
) -> list[Record]:
    """The per-record loop, over slices of one ``bytes`` object.

    Varints of one and two bytes (lengths under 8 KiB, most deltas) are decoded inline:
    a call per field would cost about a fifth of the whole loop.
    """
    records: list[Record] = []
    append = records.append
    read = decode_varint
    make = _make_record
    size = len(data)
    pos = 0
    try:
        for _ in range(count):
            b = data[pos]
            if b < 0x80:
                length = (b >> 1) ^ -(b & 1)
                pos += 1
            elif data[pos + 1] < 0x80:
                z = (b & 0x7F) | (data[pos + 1] << 7)
                length = (z >> 1) ^ -(z & 1)
                pos += 2
            else:
                length, pos = read(data, pos)
            end = pos + length
            if length <= 0 or end > size:
                reason = "truncated" if end > size else "corrupt"
                raise CorruptBatchError(reason, f"record of length {length} at byte {pos} overruns the batch")
            pos += 1  # attributes: no bits are defined
            b = data[pos]
            if b < 0x80:
                timestamp_delta = (b >> 1) ^ -(b & 1)
                pos += 1
            elif data[pos + 1] < 0x80:
                z = (b & 0x7F) | (data[pos + 1] << 7)
                timestamp_delta = (z >> 1) ^ -(z & 1)
                pos += 2
            else:
                timestamp_delta, pos = read(data, pos)
            b = data[pos]
            if b < 0x80:
                offset_delta = (b >> 1) ^ -(b & 1)
                pos += 1
            elif data[pos + 1] < 0x80:
                z = (b & 0x7F) | (data[pos + 1] << 7)
                offset_delta = (z >> 1) ^ -(z & 1)
                pos += 2
            else:
                offset_delta, pos = read(data, pos)

            b = data[pos]
            if b < 0x80:
                n = (b >> 1) ^ -(b & 1)
                pos += 1
            elif data[pos + 1] < 0x80:
                z = (b & 0x7F) | (data[pos + 1] << 7)
                n = (z >> 1) ^ -(z & 1)
                pos += 2
            else:
                n, pos = read(data, pos)
            key: bytes | None
            if n >= 0:
                key = data[pos : pos + n]
                pos += n
            elif n == -1:
                key = None
            else:
                raise CorruptBatchError("corrupt", f"invalid key length {n}")

            b = data[pos]
            if b < 0x80:
                n = (b >> 1) ^ -(b & 1)
                pos += 1
            elif data[pos + 1] < 0x80:
                z = (b & 0x7F) | (data[pos + 1] << 7)
                n = (z >> 1) ^ -(z & 1)
                pos += 2
            else:
                n, pos = read(data, pos)
            value: bytes | None
            if n >= 0:
                value = data[pos : pos + n]
                pos += n
            elif n == -1:
                value = None
            else:
                raise CorruptBatchError("corrupt", f"invalid value length {n}")

            b = data[pos]
            if b == 0:
                headers: tuple[tuple[str, bytes | None], ...] = ()
                pos += 1
            else:
                headers, pos = _decode_headers(data, pos)
            if pos != end:
                raise CorruptBatchError("corrupt", f"record body is {pos - end + length} bytes, not {length}")
            append(
                make(
                    base_offset + offset_delta,
                    base_timestamp + timestamp_delta if fixed_timestamp is None else fixed_timestamp,
                    key,
                    value,
                    headers,
                )
            )
    except IndexError:
        raise CorruptBatchError("truncated", f"record data ends inside record {len(records)}") from None
    except VarintError as exc:
        raise CorruptBatchError("corrupt", str(exc)) from None
    if pos != size:
        raise CorruptBatchError("corrupt", f"{size - pos} bytes follow the last of {count} records")
    return records


def _decode_headers(data: bytes, pos: int) -> tuple[tuple[tuple[str, bytes | None], ...], int]:
    count, pos = decode_varint(data, pos)
    if count < 0:
        raise CorruptBatchError("corrupt", f"invalid header count {count}")
    headers: list[tuple[str, bytes | None]] = []
    size = len(data)
    for _ in range(count):
        n, pos = decode_varint(data, pos)
        if n < 0 or pos + n > size:
            raise CorruptBatchError("corrupt", f"invalid header key length {n}")
        try:
            name = data[pos : pos + n].decode("utf-8")
        except UnicodeDecodeError as exc:
            raise CorruptBatchError("corrupt", f"header key is not UTF-8: {exc}") from None
        pos += n
        n, pos = decode_varint(data, pos)
        if n >= 0:
            headers.append((name, data[pos : pos + n]))
            pos += n
        elif n == -1:
            headers.append((name, None))
        else:
            raise CorruptBatchError("corrupt", f"invalid header value length {n}")
    return tuple(headers), pos


# ---------------------------------------------------------------------------- encoding


def build_batch(
    records: Sequence[RecordLike],
    *,
    base_offset: int = 0,
    compression: int = Compression.NONE,
    timestamp_type: int = 0,
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = -1,
    is_transactional: bool = False,
    is_control: bool = False,
    partition_leader_epoch: int = -1,
    base_timestamp: int | None = None,
    max_timestamp: int | None = None,
    last_offset_delta: int | None = None,
    delete_horizon_ms: int | None = None,
) -> bytes:
    """Encode ``records`` as one v2 batch with a correct CRC32C.

    Records keep their own offsets (``offsetDelta = offset - base_offset``), so a
    compacted batch may have gaps; offsets must strictly increase. ``timestamp_type``
    is 0 (CreateTime) or 1 (LogAppendTime). Defaults follow Kafka's builder:
    ``base_timestamp`` is the first record's timestamp (the delete horizon when
    ``delete_horizon_ms`` is set), ``max_timestamp`` the largest record timestamp (pass
    the append time for LogAppendTime), ``last_offset_delta`` the last record's delta.
    Override ``last_offset_delta`` to keep a compacted batch's original last offset and
    so its producer's last sequence; an empty ``records`` makes the header-only batch
    compaction leaves behind for idempotent producers (always uncompressed).
    """
    if compression not in CODEC_NAMES:
        raise UnsupportedCompressionTypeError(f"unsupported record batch compression codec {compression}")
    if timestamp_type not in (0, 1):
        raise ValueError(f"timestamp_type must be 0 (CreateTime) or 1 (LogAppendTime), not {timestamp_type}")
    if delete_horizon_ms is not None:
        if base_timestamp is not None and base_timestamp != delete_horizon_ms:
            raise ValueError("a batch with a delete horizon stores it as its base timestamp")
        base_timestamp = delete_horizon_ms
    if base_timestamp is None:
        base_timestamp = records[0].timestamp if records else NO_TIMESTAMP

    payload, last_delta, newest = _encode_records(records, base_offset, base_timestamp)
    if last_offset_delta is None:
        last_offset_delta = max(last_delta, 0)
    elif not last_delta <= last_offset_delta <= _INT32_MAX:
        raise ValueError(f"last_offset_delta {last_offset_delta} is below the last record's {last_delta}")
    if max_timestamp is None:
        max_timestamp = newest if records else base_timestamp
    if records and compression != Compression.NONE:
        payload = compress(compression, payload)
    else:
        compression = Compression.NONE

    attributes = (
        compression
        | (ATTR_TIMESTAMP_TYPE if timestamp_type else 0)
        | (ATTR_TRANSACTIONAL if is_transactional else 0)
        | (ATTR_CONTROL if is_control else 0)
        | (ATTR_DELETE_HORIZON if delete_horizon_ms is not None else 0)
    )
    try:
        tail = _TAIL.pack(
            attributes,
            last_offset_delta,
            base_timestamp,
            max_timestamp,
            producer_id,
            producer_epoch,
            base_sequence,
            len(records),
        )
        crc = crc32c(payload, crc32c(tail))
        head = _HEAD.pack(
            base_offset,
            BATCH_HEADER_SIZE - LOG_OVERHEAD + len(payload),
            partition_leader_epoch,
            MAGIC_V2,
            crc,
        )
    except struct.error as exc:
        raise ValueError(f"a batch header field is out of range: {exc}") from None
    return b"".join((head, tail, payload))


def _encode_records(
    records: Sequence[RecordLike], base_offset: int, base_timestamp: int
) -> tuple[bytes, int, int]:
    """Encode the record list; returns ``(bytes, last offset delta, max timestamp)``."""
    parts: list[bytes] = []
    push = parts.append
    varint = encode_varint
    previous = -1
    newest = records[0].timestamp if records else NO_TIMESTAMP
    for record in records:
        offset_delta = record.offset - base_offset
        if offset_delta <= previous or offset_delta > _INT32_MAX:
            raise ValueError(
                f"record offset {record.offset} must exceed the previous one and lie within "
                f"2**31 of base offset {base_offset}"
            )
        previous = offset_delta
        timestamp = record.timestamp
        if timestamp > newest:
            newest = timestamp
        timestamp_field = varint(timestamp - base_timestamp)
        offset_field = varint(offset_delta)
        key = record.key
        value = record.value
        headers = record.headers
        size = 1 + len(timestamp_field) + len(offset_field)
        start = len(parts)
        push(b"")  # the record length, filled in below
        push(_ATTRIBUTES)
        push(timestamp_field)
        push(offset_field)
        if key is None:
            push(_NULL)
            size += 1
        else:
            field = varint(len(key))
            push(field)
            push(key)
            size += len(field) + len(key)
        if value is None:
            push(_NULL)
            size += 1
        else:
            field = varint(len(value))
            push(field)
            push(value)
            size += len(field) + len(value)
        if not headers:
            push(_ZERO)
            size += 1
        else:
            size += _encode_headers(headers, push)
        parts[start] = varint(size)
    return b"".join(parts), previous, newest


def _encode_headers(headers: Sequence[tuple[str, bytes | None]], push: Callable[[bytes], None]) -> int:
    """Append the header fields through ``push``; returns how many bytes they take."""
    fields: list[bytes] = [encode_varint(len(headers))]
    for name, value in headers:
        raw = name.encode("utf-8")
        fields.append(encode_varint(len(raw)))
        fields.append(raw)
        if value is None:
            fields.append(_NULL)
        else:
            fields.append(encode_varint(len(value)))
            fields.append(value)
    blob = b"".join(fields)
    push(blob)
    return len(blob)
