"""The records of ``__consumer_offsets``, byte for byte as Kafka writes them.

Every record key and value starts with an int16 schema version; strings are int16-length
UTF-8, nullable strings use length -1 for null, bytes are int32-length. The key's version
tells the record kind::

    OffsetCommitKey v0/v1 (we write v1)     GroupMetadataKey v2
      version   int16 = 1                     version   int16 = 2
      group     string                        group     string
      topic     string
      partition int32

    OffsetCommitValue (we write v3)         GroupMetadataValue (we write v3)
      version          int16 = 3              version               int16 = 3
      offset           int64                  protocolType          string
      leaderEpoch      int32   (v3)           generation            int32
      metadata         string                 protocol              nullable string
      commitTimestamp  int64                  leader                nullable string
      expireTimestamp  int64   (v1 only)      currentStateTimestamp int64 (v2+)
                                              members               int32 count, then each:
                                                memberId          string
                                                groupInstanceId   nullable string (v3+)
                                                clientId          string
                                                clientHost        string
                                                rebalanceTimeout  int32 (v1+)
                                                sessionTimeout    int32
                                                subscription      bytes
                                                assignment        bytes

A null value is a tombstone: the offset, or the whole group, is gone. Older value versions
(0-2) are read too, so a log written by Kafka replays here. The partition of a group is
``abs(String.hashCode(group)) % partitions`` with Java's hashCode and Kafka's ``Utils.abs``
(which maps Integer.MIN_VALUE to 0), so a group lives on the same partition as in Kafka.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from seaway.protocol.primitives import CorruptFrameError, Reader, Writer

__all__ = [
    "GroupMetadataValue",
    "MemberMetadataValue",
    "OffsetCommitValue",
    "RecordDecodeError",
    "decode_group_metadata",
    "decode_key",
    "decode_offset_commit",
    "encode_group_metadata",
    "encode_group_metadata_key",
    "encode_offset_commit",
    "encode_offset_commit_key",
    "java_string_hash",
    "partition_for",
]

OFFSET_KEY_VERSION = 1
GROUP_KEY_VERSION = 2
OFFSET_VALUE_VERSION = 3
GROUP_VALUE_VERSION = 3
_I16 = struct.Struct(">h")


class RecordDecodeError(ValueError):
    """A key or value of __consumer_offsets that is not one of Kafka's known layouts."""


def java_string_hash(text: str) -> int:
    """Java's ``String.hashCode``: over UTF-16 code units, wrapping at 32 bits, signed."""
    h = 0
    data = text.encode("utf-16-be", "surrogatepass")
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def partition_for(group_id: str, num_partitions: int) -> int:
    """The __consumer_offsets partition of ``group_id``, exactly as Kafka's partitionFor."""
    h = java_string_hash(group_id)
    return (0 if h == -(1 << 31) else abs(h)) % num_partitions


@dataclass(frozen=True, slots=True)
class OffsetCommitValue:
    offset: int
    leader_epoch: int
    metadata: str
    commit_timestamp: int
    expire_timestamp: int = -1


@dataclass(frozen=True, slots=True)
class MemberMetadataValue:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout: int
    session_timeout: int
    subscription: bytes
    assignment: bytes


@dataclass(frozen=True, slots=True)
class GroupMetadataValue:
    protocol_type: str
    generation: int
    protocol: str | None
    leader: str | None
    current_state_timestamp: int
    members: tuple[MemberMetadataValue, ...]


# ----------------------------------------------------------------------------- keys


def encode_offset_commit_key(group: str, topic: str, partition: int) -> bytes:
    w = Writer()
    w.int16(OFFSET_KEY_VERSION)
    w.string(group, False)
    w.string(topic, False)
    w.int32(partition)
    return bytes(w.getvalue())


def encode_group_metadata_key(group: str) -> bytes:
    w = Writer()
    w.int16(GROUP_KEY_VERSION)
    w.string(group, False)
    return bytes(w.getvalue())


def decode_key(key: bytes) -> tuple[str, str, str | None, int]:
    """``("offset", group, topic, partition)`` or ``("group", group, None, -1)``."""
    try:
        r = Reader(key)
        version = r.int16()
        if version in (0, 1):
            return "offset", r.string(False), r.string(False), r.int32()
        if version == GROUP_KEY_VERSION:
            return "group", r.string(False), None, -1
    except (CorruptFrameError, ValueError, IndexError, struct.error) as exc:
        raise RecordDecodeError(f"malformed __consumer_offsets key: {exc}") from exc
    raise RecordDecodeError(f"unknown __consumer_offsets key version {version}")


# --------------------------------------------------------------------------- values


def encode_offset_commit(value: OffsetCommitValue) -> bytes:
    w = Writer()
    w.int16(OFFSET_VALUE_VERSION)
    w.int64(value.offset)
    w.int32(value.leader_epoch)
    w.string(value.metadata, False)
    w.int64(value.commit_timestamp)
    return bytes(w.getvalue())


def decode_offset_commit(data: bytes) -> OffsetCommitValue:
    try:
        r = Reader(data)
        version = r.int16()
        if not 0 <= version <= 3:
            raise RecordDecodeError(f"unknown OffsetCommitValue version {version}")
        offset = r.int64()
        epoch = r.int32() if version >= 3 else -1
        metadata = r.string(False)
        commit_ts = r.int64()
        expire_ts = r.int64() if version == 1 else -1
    except (CorruptFrameError, ValueError, IndexError, struct.error) as exc:
        raise RecordDecodeError(f"malformed OffsetCommitValue: {exc}") from exc
    return OffsetCommitValue(offset, epoch, metadata, commit_ts, expire_ts)


def encode_group_metadata(value: GroupMetadataValue) -> bytes:
    w = Writer()
    w.int16(GROUP_VALUE_VERSION)
    w.string(value.protocol_type, False)
    w.int32(value.generation)
    w.nullable_string(value.protocol, False)
    w.nullable_string(value.leader, False)
    w.int64(value.current_state_timestamp)
    w.int32(len(value.members))
    for m in value.members:
        w.string(m.member_id, False)
        w.nullable_string(m.group_instance_id, False)
        w.string(m.client_id, False)
        w.string(m.client_host, False)
        w.int32(m.rebalance_timeout)
        w.int32(m.session_timeout)
        w.bytes(m.subscription, False)
        w.bytes(m.assignment, False)
    return bytes(w.getvalue())


def decode_group_metadata(data: bytes) -> GroupMetadataValue:
    try:
        r = Reader(data)
        version = r.int16()
        if not 0 <= version <= 3:
            raise RecordDecodeError(f"unknown GroupMetadataValue version {version}")
        protocol_type = r.string(False)
        generation = r.int32()
        protocol = r.nullable_string(False)
        leader = r.nullable_string(False)
        state_ts = r.int64() if version >= 2 else -1
        members = []
        for _ in range(r.int32()):
            member_id = r.string(False)
            instance_id = r.nullable_string(False) if version >= 3 else None
            client_id = r.string(False)
            client_host = r.string(False)
            session_timeout = rebalance_timeout = 0
            if version >= 1:
                rebalance_timeout = r.int32()
            session_timeout = r.int32()
            if version == 0:
                rebalance_timeout = session_timeout
            subscription = bytes(r.bytes(False))
            assignment = bytes(r.bytes(False))
            members.append(MemberMetadataValue(member_id, instance_id, client_id, client_host,
                                               rebalance_timeout, session_timeout, subscription, assignment))
    except (CorruptFrameError, ValueError, IndexError, struct.error) as exc:
        raise RecordDecodeError(f"malformed GroupMetadataValue: {exc}") from exc
    return GroupMetadataValue(protocol_type, generation, protocol, leader, state_ts, tuple(members))
