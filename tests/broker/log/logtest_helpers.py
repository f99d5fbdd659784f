"""Builders of valid v2 record batches for the storage tests (kafka-python's builder)."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

with warnings.catch_warnings():  # kafka-python imports importlib.resources.read_text (deprecated)
    warnings.simplefilter("ignore", DeprecationWarning)
    from kafka.record.default_records import DefaultRecordBatchBuilder

from seaway.broker.log.config import LogConfig
from seaway.broker.log.partition_log import PartitionLog
from seaway.protocol.record_batch import iter_batch_headers


def make_batch(values: list[bytes], *, timestamp: int = 1000, key: bytes | None = b"k") -> bytes:
    """One uncompressed v2 batch, record i stamped ``timestamp + i``, CRC correct."""
    builder = DefaultRecordBatchBuilder(
        magic=2,
        compression_type=0,
        is_transactional=0,
        producer_id=-1,
        producer_epoch=-1,
        base_sequence=-1,
        batch_size=1 << 30,
    )
    for i, value in enumerate(values):
        builder.append(i, timestamp=timestamp + i, key=key, value=value, headers=[])
    return bytes(builder.build())


def payload(batch: bytes) -> bytes:
    """The part of a batch the broker must keep verbatim (after the CRC'd header fields)."""
    return bytes(batch[21:])


def read_all(plog: PartitionLog, start: int | None = None) -> list[bytes]:
    """Every batch from ``start`` (default log start) to the end, via repeated reads."""
    out: list[bytes] = []
    offset = plog.log_start_offset if start is None else start
    while True:
        region = plog.read(offset, 1 << 20)
        if region is None:
            return out
        data = region.read_bytes()
        for header in iter_batch_headers(data):
            out.append(data[header.position : header.position + header.size])
            offset = header.next_offset


def open_log(directory: Path, **config: Any) -> PartitionLog:
    return PartitionLog.open(directory, LogConfig(**config), topic="t", partition=0)
