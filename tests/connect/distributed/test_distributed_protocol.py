"""Connect group payloads: round trips and fixed bytes derived from Kafka's ConnectProtocol layouts."""

from __future__ import annotations

import pytest
from seaway.connect.runtime.distributed.connect_protocol import (
    CONFIG_MISMATCH,
    NO_ERROR,
    ConnectProtocol,
    ConnectProtocolError,
    ExtendedAssignment,
    WorkerState,
    decode_assignment,
    decode_metadata,
    encode_assignment,
    encode_metadata,
    protocols_for,
)
from seaway.connect.runtime.herder import ConnectorTaskId

T = ConnectorTaskId


def _hex(s: str) -> bytes:
    return bytes.fromhex(s.replace(" ", "").replace("\n", ""))


def test_metadata_v0_fixed_bytes() -> None:
    # int16 version 0 | string url (int16 length 13) | int64 config offset 5
    expected = _hex("0000 000d" + b"http://a:8083".hex() + "0000000000000005")
    data = encode_metadata(WorkerState("http://a:8083", 5), ConnectProtocol.EAGER)
    assert data == expected
    assert decode_metadata(data) == (0, WorkerState("http://a:8083", 5))


def test_metadata_v1_with_null_allocation_fixed_bytes() -> None:
    # version 1 | url "u" | offset -1 | allocation: nullable bytes, null = int32 -1
    expected = _hex("0001 0001 75 ffffffffffffffff ffffffff")
    data = encode_metadata(WorkerState("u", -1), ConnectProtocol.COMPATIBLE)
    assert data == expected
    assert decode_metadata(data) == (1, WorkerState("u", -1, None))


def test_metadata_v2_embeds_the_allocation_as_an_assignment() -> None:
    allocation = ExtendedAssignment(2, NO_ERROR, "", "", 3, ("c",), (T("c", 0),))
    inner = encode_assignment(allocation)
    data = encode_metadata(WorkerState("u", 3, allocation), ConnectProtocol.SESSIONED)
    assert data == _hex("0002 0001 75 0000000000000003") + len(inner).to_bytes(4, "big") + inner
    assert decode_metadata(data) == (2, WorkerState("u", 3, allocation))


def test_assignment_v0_fixed_bytes() -> None:
    a = ExtendedAssignment(0, NO_ERROR, "m1", "u", 7, ("c",), (T("c", 0), T("d", 2)))
    expected = _hex(
        "0000 0000"                      # version 0, error NONE
        "0002 6d31"                      # leader "m1"
        "0001 75"                        # leader url "u"
        "0000000000000007"               # config offset
        "00000002"                       # 2 connector assignments
        "0001 63 00000002 ffffffff 00000000"  # "c": [-1 (the connector), 0]
        "0001 64 00000001 00000002"      # "d": [2]
    )
    assert encode_assignment(a) == expected
    assert decode_assignment(expected) == a


def test_assignment_v1_fixed_bytes_with_revocations_and_delay() -> None:
    a = ExtendedAssignment(1, NO_ERROR, "m1", "u", 7, ("c",), (T("c", 0),), (), (T("c", 1),), 100)
    expected = _hex(
        "0001 0000 0002 6d31 0001 75 0000000000000007"
        "00000001 0001 63 00000002 ffffffff 00000000"   # assigned
        "00000001 0001 63 00000001 00000001"            # revoked: "c": [1]
        "00000064"                                      # delay 100 ms
    )
    assert encode_assignment(a) == expected
    assert decode_assignment(expected) == a


def test_assignment_round_trips_every_version() -> None:
    for version in (0, 1, 2):
        revoked = ((("x",), (T("x", 3),)) if version else ((), ()))
        a = ExtendedAssignment(version, CONFIG_MISMATCH, "leader-1", "http://h:1", 123456789012,
                               ("a", "b"), (T("a", 0), T("b", 1)), revoked[0], revoked[1], 5 if version else 0)
        assert decode_assignment(encode_assignment(a)) == a


def test_v1_decoder_tolerates_missing_trailing_fields() -> None:
    a = ExtendedAssignment(1, NO_ERROR, "m", "u", 1, ("c",))
    truncated = encode_assignment(a)[:-(4 + 4)]  # no revoked array, no delay
    assert decode_assignment(truncated) == a


def test_garbage_is_a_protocol_error() -> None:
    with pytest.raises(ConnectProtocolError):
        decode_assignment(b"\x00\x01\x00")
    with pytest.raises(ConnectProtocolError):
        decode_metadata(b"\xff\xff")


def test_protocols_offered_in_preference_order() -> None:
    assert [p.protocol_name for p in protocols_for("sessioned")] == ["sessioned", "compatible", "default"]
    assert [p.protocol_name for p in protocols_for("compatible")] == ["compatible", "default"]
    assert [p.protocol_name for p in protocols_for("EAGER")] == ["default"]
    with pytest.raises(ConnectProtocolError):
        protocols_for("fast")
