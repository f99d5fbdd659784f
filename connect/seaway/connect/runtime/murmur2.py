"""Kafka's default partitioner for keyed records: ``toPositive(murmur2(key)) % partitions``.

The offsets topic is written by two producers: the worker's (librdkafka's ``murmur2_random``,
which is this function) and, under exactly-once, each source task's transactional producer,
whose partitioner is the task's own (librdkafka's default is CRC32-based). A task therefore
picks the partition of each offset record itself, so a key always lands in the partition
that compaction and every reader expect, whichever producer wrote it.
"""

from __future__ import annotations

import struct

__all__ = ["murmur2", "partition_for"]

_M = 0x5BD1E995
_MASK = 0xFFFFFFFF


def murmur2(data: bytes) -> int:
    """Kafka's ``Utils.murmur2`` (seed 0x9747b28c) as an unsigned 32-bit value."""
    length = len(data)
    h = (0x9747B28C ^ length) & _MASK
    whole = length - length % 4
    for (k,) in struct.iter_unpack("<I", data[:whole]):
        k = (k * _M) & _MASK
        k ^= k >> 24
        k = (k * _M) & _MASK
        h = ((h * _M) & _MASK) ^ k
    tail = length % 4
    if tail == 3:
        h ^= data[whole + 2] << 16
    if tail >= 2:
        h ^= data[whole + 1] << 8
    if tail >= 1:
        h ^= data[whole]
        h = (h * _M) & _MASK
    h ^= h >> 13
    h = (h * _M) & _MASK
    h ^= h >> 15
    return h


def partition_for(key: bytes, partitions: int) -> int:
    """The partition Kafka's default partitioner gives a record with ``key``."""
    return (murmur2(key) & 0x7FFFFFFF) % partitions
