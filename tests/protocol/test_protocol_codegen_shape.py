"""The generated classes' fast constructors and inlined codec paths keep dataclass semantics.

tools/gen_protocol.py replaces the dataclass ``__init__`` (slot setters, shared frozen
defaults) and inlines fixed-width runs, null strings, short array lengths and empty
tagged sections. Round-trip tests cover the wire format; these cover what a caller of
the classes can observe besides it.
"""

from __future__ import annotations

import dataclasses

import pytest
from seaway.protocol.messages.fetch_response import FetchResponse, PartitionData
from seaway.protocol.messages.produce_request import PartitionProduceData
from seaway.protocol.messages.produce_response import (
    BatchIndexAndErrorMessage,
    LeaderIdAndEpoch,
    PartitionProduceResponse,
)
from seaway.protocol.primitives import CorruptFrameError, Reader, Writer


def test_instances_stay_frozen_hashable_and_replaceable() -> None:
    part = PartitionProduceResponse(3, 0, 42, -1, 7)
    assert part == PartitionProduceResponse(index=3, error_code=0, base_offset=42, log_start_offset=7)
    with pytest.raises(dataclasses.FrozenInstanceError):
        part.base_offset = 1  # type: ignore[misc]
    moved = dataclasses.replace(part, base_offset=43)
    assert (moved.index, moved.base_offset, moved.log_start_offset) == (3, 43, 7)
    assert hash(LeaderIdAndEpoch(1, 2)) == hash(LeaderIdAndEpoch(leader_id=1, leader_epoch=2))
    assert repr(LeaderIdAndEpoch()) == "LeaderIdAndEpoch(leader_id=-1, leader_epoch=-1)"


def test_defaults_are_fresh_lists_and_equal_structs() -> None:
    a, b = PartitionProduceResponse(), PartitionProduceResponse()
    assert a.record_errors == [] and a.record_errors is not b.record_errors
    a.record_errors.append(BatchIndexAndErrorMessage(0, "x"))
    assert b.record_errors == []
    assert a.current_leader == LeaderIdAndEpoch() and (a.current_leader.leader_id, a.current_leader.leader_epoch) == (
        -1,
        -1,
    )
    assert [f.name for f in dataclasses.fields(PartitionProduceResponse)][-1] == "current_leader"
    assert FetchResponse().responses == [] and FetchResponse().responses is not FetchResponse().responses


@pytest.mark.parametrize("version", [8, 9, 10])
def test_inlined_encodings_match_the_writer(version: int) -> None:
    flexible = version >= 9
    w = Writer()
    PartitionProduceResponse(1, 0, 5, -1, 0, error_message=None).encode(w, version)
    reference = Writer()
    for value, write in ((1, reference.int32), (0, reference.int16), (5, reference.int64), (-1, reference.int64),
                         (0, reference.int64)):
        write(value)
    reference.array_length(0, flexible)
    reference.nullable_string(None, flexible)
    if flexible:
        reference.uvarint(0)
    assert w.getvalue() == reference.getvalue()
    leader = PartitionProduceResponse(1, current_leader=LeaderIdAndEpoch(4, 9))
    w = Writer()
    leader.encode(w, version)
    decoded = PartitionProduceResponse.decode(Reader(w.getvalue()), version)
    assert decoded.current_leader == (LeaderIdAndEpoch(4, 9) if version >= 10 else LeaderIdAndEpoch())


def test_truncated_input_raises_the_readers_error() -> None:
    w = Writer()
    PartitionData(partition_index=1, high_watermark=10, records=b"abc").encode(w, 12)
    data = w.getvalue()
    for cut in (3, 10, len(data) - 2):
        with pytest.raises(CorruptFrameError):
            PartitionData.decode(Reader(data[:cut]), 12)
    w = Writer()
    PartitionProduceData(2, b"xyz").encode(w, 9)
    for cut in (2, 6):
        with pytest.raises(CorruptFrameError):
            PartitionProduceData.decode(Reader(w.getvalue()[:cut]), 9)
    whole = PartitionProduceData.decode(Reader(w.getvalue()), 9)
    assert isinstance(whole.records, (bytes, bytearray, memoryview)), whole.records
    assert (whole.index, bytes(whole.records)) == (2, b"xyz")
