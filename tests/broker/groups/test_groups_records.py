"""__consumer_offsets record formats and partitioning, checked against Kafka's exact bytes."""

from __future__ import annotations

import struct

import pytest
from seaway.broker.coordinator.offsets_topic import (
    GroupMetadataValue,
    MemberMetadataValue,
    OffsetCommitValue,
    RecordDecodeError,
    decode_group_metadata,
    decode_key,
    decode_offset_commit,
    encode_group_metadata,
    encode_group_metadata_key,
    encode_offset_commit,
    encode_offset_commit_key,
    java_string_hash,
    partition_for,
)


def test_java_hash_and_partition_for() -> None:
    assert java_string_hash("") == 0
    assert java_string_hash("hello") == 99162322
    assert java_string_hash("polygenelubricants") == -(2**31)  # Utils.abs maps it to 0
    assert java_string_hash("\U0001f600") == 0xD83D * 31 + 0xDE00  # UTF-16 surrogate pair
    assert partition_for("polygenelubricants", 50) == 0
    assert partition_for("hello", 50) == 99162322 % 50
    assert partition_for("connect-cluster", 50) == abs(java_string_hash("connect-cluster")) % 50


def test_offset_commit_bytes() -> None:
    key = encode_offset_commit_key("g", "t", 7)
    assert key == struct.pack(">hh1sh1si", 1, 1, b"g", 1, b"t", 7)
    assert decode_key(key) == ("offset", "g", "t", 7)
    value = encode_offset_commit(OffsetCommitValue(42, 5, "md", 1700))
    assert value == struct.pack(">hqih2sq", 3, 42, 5, 2, b"md", 1700)
    assert decode_offset_commit(value) == OffsetCommitValue(42, 5, "md", 1700)
    # Version 1 (with expireTimestamp) as older Kafka wrote it.
    v1 = struct.pack(">hqh2sqq", 1, 9, 2, b"ab", 100, 200)
    assert decode_offset_commit(v1) == OffsetCommitValue(9, -1, "ab", 100, 200)


def test_group_metadata_bytes_round_trip() -> None:
    key = encode_group_metadata_key("grp")
    assert key == struct.pack(">hh3s", 2, 3, b"grp") and decode_key(key) == ("group", "grp", None, -1)
    member = MemberMetadataValue("m-1", None, "cid", "/127.0.0.1", 300, 10, b"\x00\x01", b"\x02")
    value = GroupMetadataValue("consumer", 4, "range", "m-1", 1234, (member,))
    data = encode_group_metadata(value)
    expected = (struct.pack(">hh8sih5sh3sqi", 3, 8, b"consumer", 4, 5, b"range", 3, b"m-1", 1234, 1)
                + struct.pack(">h3shh3sh10siii2si1s", 3, b"m-1", -1, 3, b"cid", 10, b"/127.0.0.1", 300, 10,
                              2, b"\x00\x01", 1, b"\x02"))
    assert data == expected
    assert decode_group_metadata(data) == value
    empty = GroupMetadataValue("", 7, None, None, -1, ())
    assert decode_group_metadata(encode_group_metadata(empty)) == empty


def test_garbage_is_refused() -> None:
    with pytest.raises(RecordDecodeError):
        decode_key(struct.pack(">h", 9))
    with pytest.raises(RecordDecodeError):
        decode_offset_commit(b"\x00\x03\x00")
    with pytest.raises(RecordDecodeError):
        decode_group_metadata(struct.pack(">h", 3) + b"\x7f")
