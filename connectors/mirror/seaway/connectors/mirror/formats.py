"""The binary records MirrorMaker 2 writes to its internal topics, byte for byte as Kafka writes them.

Kafka serializes them with its protocol ``Struct`` types: ``STRING`` is an int16 length and
UTF-8 bytes, ``INT16/32/64`` are big-endian. Checkpoints and heartbeats put a version header
(``version: int16``, always 0) before their value; offset syncs have none::

    offset sync  key:   topic STRING, partition INT32            (mm2-offset-syncs.<alias>.internal)
                 value: upstreamOffset INT64, offset INT64
    checkpoint   key:   group STRING, topic STRING, partition INT32   (<source>.checkpoints.internal)
                 value: version INT16 = 0, upstreamOffset INT64, offset INT64, metadata STRING
    heartbeat    key:   sourceClusterAlias STRING, targetClusterAlias STRING     (heartbeats)
                 value: version INT16 = 0, timestamp INT64

So a Java MirrorMaker, Kafka's ``RemoteClusterUtils`` and these classes read each other's
records. Decoding trusts nothing: every length is checked against the bytes present and a bad
record raises :class:`FormatError` (readers skip it, as Kafka's skip a ``SchemaException``).
Like Kafka, a value written with a later version is read by its version-0 fields.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

__all__ = ["VERSION", "Checkpoint", "FormatError", "Heartbeat", "OffsetSync"]

VERSION = 0
_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")
_TWO_I64 = struct.Struct(">qq")
_MAX_STRING = 32767


class FormatError(ValueError):
    """A record of an internal topic that does not decode (Kafka's ``SchemaException``)."""


def _string(value: str) -> bytes:
    data = value.encode("utf-8")
    if len(data) > _MAX_STRING:
        raise FormatError(f"String length {len(data)} is larger than the maximum string length.")
    return _I16.pack(len(data)) + data


class _Reader:
    """Reads Kafka protocol primitives from untrusted bytes, bounds-checked."""

    __slots__ = ("_data", "_pos")

    def __init__(self, data: bytes | None) -> None:
        if data is None:
            raise FormatError("missing key or value")
        self._data = data
        self._pos = 0

    def _take(self, n: int, what: str) -> bytes:
        end = self._pos + n
        if end > len(self._data):
            raise FormatError(f"Error reading field '{what}': {len(self._data) - self._pos} bytes left, {n} needed")
        chunk = self._data[self._pos:end]
        self._pos = end
        return chunk

    def int16(self, what: str) -> int:
        value: int = _I16.unpack(self._take(2, what))[0]
        return value

    def int32(self, what: str) -> int:
        value: int = _I32.unpack(self._take(4, what))[0]
        return value

    def int64(self, what: str) -> int:
        value: int = _I64.unpack(self._take(8, what))[0]
        return value

    def string(self, what: str) -> str:
        length = self.int16(what)
        if length < 0:
            raise FormatError(f"Error reading field '{what}': String length {length} cannot be negative")
        try:
            return self._take(length, what).decode("utf-8")
        except UnicodeDecodeError as e:
            raise FormatError(f"Error reading field '{what}': not UTF-8 ({e.reason})") from None


@dataclass(frozen=True, slots=True)
class OffsetSync:
    """``upstream_offset`` on the source partition is ``downstream_offset`` on its remote partition."""

    topic: str
    partition: int
    upstream_offset: int
    downstream_offset: int

    def record_key(self) -> bytes:
        return _string(self.topic) + _I32.pack(self.partition)

    def record_value(self) -> bytes:
        return _TWO_I64.pack(self.upstream_offset, self.downstream_offset)

    @classmethod
    def decode(cls, key: bytes | None, value: bytes | None) -> OffsetSync:
        k, v = _Reader(key), _Reader(value)
        topic, partition = k.string("topic"), k.int32("partition")
        return cls(topic, partition, v.int64("upstreamOffset"), v.int64("offset"))


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """A consumer group's committed ``upstream_offset`` and its translation on the target.

    ``topic`` is the name on the cluster the checkpoint is written to (the remote name, or the
    original name for a topic that came from there).
    """

    group: str
    topic: str
    partition: int
    upstream_offset: int
    downstream_offset: int
    metadata: str = ""

    def record_key(self) -> bytes:
        return _string(self.group) + _string(self.topic) + _I32.pack(self.partition)

    def record_value(self) -> bytes:
        return (_I16.pack(VERSION) + _TWO_I64.pack(self.upstream_offset, self.downstream_offset)
                + _string(self.metadata))

    def connect_partition(self) -> dict[str, object]:
        """The source partition a checkpoint record is stored under in Connect's offsets."""
        return {"group": self.group, "topic": self.topic, "partition": self.partition}

    @classmethod
    def decode(cls, key: bytes | None, value: bytes | None) -> Checkpoint:
        v = _Reader(value)
        v.int16("version")
        upstream, downstream, metadata = v.int64("upstreamOffset"), v.int64("offset"), v.string("metadata")
        k = _Reader(key)
        return cls(k.string("group"), k.string("topic"), k.int32("partition"), upstream, downstream, metadata)


@dataclass(frozen=True, slots=True)
class Heartbeat:
    """Written every ``emit.heartbeats.interval.seconds``: proof that ``source`` reaches ``target``."""

    source_cluster_alias: str
    target_cluster_alias: str
    timestamp: int

    def record_key(self) -> bytes:
        return _string(self.source_cluster_alias) + _string(self.target_cluster_alias)

    def record_value(self) -> bytes:
        return _I16.pack(VERSION) + _I64.pack(self.timestamp)

    def connect_partition(self) -> dict[str, object]:
        return {"sourceClusterAlias": self.source_cluster_alias, "targetClusterAlias": self.target_cluster_alias}

    @classmethod
    def decode(cls, key: bytes | None, value: bytes | None) -> Heartbeat:
        v = _Reader(value)
        v.int16("version")
        timestamp = v.int64("timestamp")
        k = _Reader(key)
        return cls(k.string("sourceClusterAlias"), k.string("targetClusterAlias"), timestamp)
