"""What the fuzzers run: the broker's decoders on untrusted bytes, and the contract they keep.

Two targets, each a plain function of one ``bytes`` input, shared by the atheris
harnesses (``fuzz_request.py``, ``fuzz_batch.py``), the corpus replay test and the soak
script:

:func:`request_target`
    The bytes as they arrive on a client connection: one or more frames (int32 size
    prefix, request header, body), split and decoded the way
    ``seaway.broker.connection.KafkaConnection`` does (``_parse`` then ``_handle``): the
    size prefix bounded by ``socket.request.max.bytes``, the API key and version looked
    up in the handler registry, the header's client id and tagged fields, then the
    generated decoder of that API (for Produce also the broker's C decoder, which must
    return the same request or refuse the same input). A decoded request must also survive a round trip
    (encode, decode again, compare), which catches a decoder that reads what the encoder
    would never write.
:func:`batch_target`
    A produce request's records field: batch headers (CRC checked), the produce-path
    validation (``seaway.broker.log.validation``), then every record of every batch,
    decompressed, with the CRC not checked so that mutations reach the record decoder;
    then the same over the input rebuilt as one well-framed batch (:func:`as_valid_batch`),
    and the produce path's record walk in C against its Python reference on the record
    bytes (:func:`walk_differential`).

The contract, checked here: arbitrary input raises only the documented decode errors
(:data:`REQUEST_ERRORS`, :data:`BATCH_ERRORS`); anything else (``IndexError``,
``ValueError``, ``struct.error``, ``MemoryError``, ``RecursionError``, an
``AssertionError`` from the round trip) escapes and is a crash for the fuzzer. Memory
and time are bounded by the harness around it (an address-space rlimit, libFuzzer's
``-rss_limit_mb`` and ``-timeout``).
"""

from __future__ import annotations

import contextlib
import struct
import time
from typing import Any

from crc32c import crc32c
from seaway.broker.handlers import HANDLERS
from seaway.broker.log.config import LogConfig
from seaway.broker.log.record_check import MIN_RECORD_BYTES, WALK_IS_NATIVE, walk_records, walk_records_py
from seaway.broker.log.validation import validate_batches
from seaway.broker.wire import decode_produce, decode_produce_py
from seaway.protocol.compression import compress
from seaway.protocol.errors import InvalidRecordError, KafkaProtocolError
from seaway.protocol.primitives import CorruptFrameError, Reader, Writer
from seaway.protocol.record_batch import (
    BATCH_HEADER_SIZE,
    CRC_START,
    LOG_OVERHEAD,
    MAGIC_V2,
    Compression,
    CorruptBatchError,
    iter_batch_headers,
)
from seaway.protocol.records import iter_batches

__all__ = [
    "BATCH_ERRORS",
    "REQUEST_ERRORS",
    "as_valid_batch",
    "batch_target",
    "decode_frame",
    "request_target",
    "walk_differential",
]

# socket.request.max.bytes' default: the size-prefix bound of KafkaConnection._parse.
MAX_REQUEST_BYTES = 104_857_600
_SIZE = struct.Struct(">i")
_HEADER = struct.Struct(">hhi")
_API_VERSIONS_KEY = 18
_PRODUCE_KEY = 0

REQUEST_ERRORS: tuple[type[Exception], ...] = (CorruptFrameError,)
BATCH_ERRORS: tuple[type[Exception], ...] = (CorruptBatchError, KafkaProtocolError)
_CONFIG = LogConfig()


def decode_frame(frame: bytes | memoryview) -> tuple[int, int, Any] | None:
    """``(api_key, version, request)`` of one frame (no size prefix), as the broker decodes it.

    None for an ApiVersions request of a version not served (the broker answers it in
    v0 without decoding it); CorruptFrameError for everything the broker refuses by
    closing the connection.
    """
    if len(frame) < _HEADER.size:
        raise CorruptFrameError(f"frame of {len(frame)} bytes is shorter than a request header")
    api_key, version, _correlation_id = _HEADER.unpack_from(frame, 0)
    spec = HANDLERS.get(api_key)
    if spec is None:
        raise CorruptFrameError(f"unknown API key {api_key}")
    if not spec.min_version <= version <= spec.max_version:
        if api_key == _API_VERSIONS_KEY:
            return None
        raise CorruptFrameError(f"{spec.name} v{version} is not served")
    r = Reader(frame, _HEADER.size)
    r.nullable_string(False)  # client id: a classic string in every header version
    if spec.request_flexible(version):
        r.skip_tagged_fields()
    if api_key == _PRODUCE_KEY:  # the broker decodes Produce in C: held to the generated decoder
        return api_key, version, _produce_differential(r, version)
    request = spec.request_cls.decode(r, version)
    if r.pos > r.end:
        raise AssertionError(f"{spec.name} v{version}: the decoder claims {r.pos - r.end} bytes past the frame")
    return api_key, version, request


def _produce_differential(r: Reader, version: int) -> Any:
    """The C Produce decoder (what the broker runs) and the generated one: same request or same refusal."""
    try:
        native = decode_produce(r.buf, r.pos, version)
    except CorruptFrameError:
        native = None
    try:
        generated = decode_produce_py(r.buf, r.pos, version)
    except CorruptFrameError:
        if native is not None:
            raise AssertionError(f"Produce v{version}: the C decoder accepted what the generated one refuses") from None
        raise
    if native != generated:
        raise AssertionError(f"Produce v{version}: the C decoder's request differs from the generated one's")
    return generated


def _round_trip(api_key: int, version: int, request: Any) -> None:
    w = Writer()
    request.encode(w, version)
    encoded = w.getvalue()
    r = Reader(encoded)
    again = HANDLERS[api_key].request_cls.decode(r, version)
    if again != request:
        raise AssertionError(f"API {api_key} v{version}: decode(encode(request)) differs from request")
    if r.remaining:
        raise AssertionError(f"API {api_key} v{version}: {r.remaining} bytes left after decoding an encoding")


def request_target(data: bytes) -> int:
    """Split ``data`` into frames and decode each; returns how many requests decoded."""
    view = memoryview(data)
    pos, end, decoded = 0, len(data), 0
    while end - pos >= 4:
        (size,) = _SIZE.unpack_from(view, pos)
        if size < 8 or size > MAX_REQUEST_BYTES:
            raise CorruptFrameError(f"frame size {size} is outside [8, {MAX_REQUEST_BYTES}]")
        if end - pos - 4 < size:
            return decoded  # an incomplete frame: the broker waits for more bytes
        got = decode_frame(view[pos + 4 : pos + 4 + size])
        if got is not None:
            _round_trip(*got)
            decoded += 1
        pos += 4 + size
    return decoded


def _decode_batches(data: bytes | bytearray) -> int:
    """Every batch decoder over ``data``, each on its own; the last one's errors propagate."""
    try:
        for _ in iter_batch_headers(data, verify_crc=True):
            pass
    except BATCH_ERRORS:
        pass
    with contextlib.suppress(*BATCH_ERRORS):
        validate_batches(data, _CONFIG, int(time.time() * 1000))
    count = 0
    for _header, records in iter_batches(data, verify_crc=False):
        count += len(records)
    return count


def as_valid_batch(data: bytes) -> bytearray | None:
    """``data`` made one batch that passes the framing checks: magic 2, length, CRC.

    The bytes after the 61-byte header are taken as the *uncompressed* records and
    compressed with the codec the attributes name, so mutations of record bytes reach
    the record decoder (and validation past its CRC check) inside compressed batches
    too; random bytes would almost never pass the CRC or decompress.
    """
    if len(data) < BATCH_HEADER_SIZE:
        return None
    batch = bytearray(data[:BATCH_HEADER_SIZE])
    payload: bytes = data[BATCH_HEADER_SIZE:]
    codec = batch[22] & 0x07
    if Compression.NONE < codec <= Compression.ZSTD:
        payload = compress(codec, payload)
    batch[16] = MAGIC_V2
    batch += payload
    struct.pack_into(">i", batch, 8, len(batch) - LOG_OVERHEAD)
    struct.pack_into(">I", batch, 17, crc32c(memoryview(batch)[CRC_START:]))
    return batch


def walk_differential(records: bytes, count: int) -> None:
    """The produce path's C record walk against its Python reference: same answer or both refuse.

    ``count`` is first brought within what the caller (``record_check.inspect_batch``)
    guarantees: at least one record, at most one per 7 bytes.
    """
    if not WALK_IS_NATIVE:
        return  # the produce path runs walk_records_py itself, which the validation covers
    count = max(1, min(count, len(records) // MIN_RECORD_BYTES))
    answers: list[object] = []
    for walk in (walk_records_py, walk_records):
        try:
            answers.append(walk(records, 0, len(records), count, False))
        except InvalidRecordError:
            answers.append(InvalidRecordError)
    if answers[0] != answers[1]:
        raise AssertionError(f"record walks disagree on {count} records: Python {answers[0]}, C {answers[1]}")


def batch_target(data: bytes) -> int:
    """The decoders over ``data`` as it is, then over :func:`as_valid_batch` of it."""
    try:
        count = _decode_batches(data)
    except BATCH_ERRORS:
        count = 0
    fixed = as_valid_batch(data)
    if fixed is not None:
        walk_differential(data[BATCH_HEADER_SIZE:], int.from_bytes(data[57:61], "big", signed=True))
        count += _decode_batches(fixed)
    return count
