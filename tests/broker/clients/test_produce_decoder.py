"""The broker's C Produce decoder (``seaway.broker.wire``) is the generated decoder, faster.

Held to the generated ``ProduceRequest.decode`` on every Produce frame of the fuzz corpus
(every served version, captured from librdkafka and kafka-python or made by the codec) and
on those frames mutated: the same request (the same classes, records as views of the
frame) or the same refusal (CorruptFrameError), never a crash of another kind.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from seaway.broker.wire import DECODER_IS_NATIVE, decode_produce, decode_produce_py
from seaway.protocol.messages.produce_request import PartitionProduceData, ProduceRequest, TopicProduceData
from seaway.protocol.primitives import CorruptFrameError, Reader

CORPUS = Path(__file__).resolve().parents[2] / "fuzz" / "corpus" / "request"
FRAMES = sorted(p.read_bytes()[4:] for p in CORPUS.glob("Produce-v*.bin"))  # without the size prefix

# without a C compiler the broker runs the generated decoder and there is nothing to compare; CI
# builds the extension, so there the comparison always runs (test_ci_runs_the_compiled_decoder)
pytestmark = pytest.mark.skipif(not DECODER_IS_NATIVE and not os.environ.get("CI"),
                                reason="seaway.broker._wire was not compiled")


def test_ci_runs_the_compiled_decoder() -> None:
    """A CI build whose C decoder failed to compile would compare the Python decoder with itself."""
    assert DECODER_IS_NATIVE, "seaway.broker._wire was not compiled: see the build hook's warning"


def _body(frame: bytes | bytearray) -> tuple[memoryview, int, int]:
    """(view, body position, version) of a frame: past its header's client id and tagged fields."""
    view = memoryview(frame)
    version = int.from_bytes(frame[2:4], "big", signed=True)
    r = Reader(view, 8)
    r.nullable_string(False)
    if version >= ProduceRequest.FLEXIBLE_FROM:
        r.skip_tagged_fields()
    return view, r.pos, version


def _outcome(decode: object, view: memoryview, pos: int, version: int) -> ProduceRequest | str:
    try:
        return decode(view, pos, version)  # type: ignore[operator, no-any-return]
    except CorruptFrameError:
        return "refused"


def test_the_corpus_decodes_to_the_same_requests() -> None:
    versions = set()
    for frame in FRAMES:
        view, pos, version = _body(frame)
        versions.add(version)
        native, generated = decode_produce(view, pos, version), decode_produce_py(view, pos, version)
        assert native == generated
        assert type(native) is ProduceRequest
        for topic in native.topic_data:
            assert type(topic) is TopicProduceData
            for part in topic.partition_data:
                assert type(part) is PartitionProduceData
                assert part.records is None or (type(part.records) is memoryview and part.records.obj is view.obj)
    assert versions == set(range(3, 12))  # every served version is in the corpus


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_mutated_frames_get_the_same_request_or_the_same_refusal(data: st.DataObject) -> None:
    frame = bytearray(data.draw(st.sampled_from(FRAMES)))
    view, pos, version = _body(frame)
    body = bytearray(frame[pos:])
    for _ in range(data.draw(st.integers(1, 4))):
        i = data.draw(st.integers(0, max(0, min(len(body) - 1, 80 if data.draw(st.booleans()) else len(body)))))
        body[i] = data.draw(st.sampled_from([0, 1, 0x7F, 0x80, 0xFF, data.draw(st.integers(0, 255))]))
    cut = data.draw(st.sampled_from([0, 0, 0, 1, 5, len(body) // 2]))
    mutated = bytearray(frame[:pos]) + body[: len(body) - cut]
    view = memoryview(mutated)
    assert _outcome(decode_produce, view, pos, version) == _outcome(decode_produce_py, view, pos, version)


def test_what_the_generated_decoder_refuses_is_refused() -> None:
    frame = bytearray(FRAMES[-1])
    view, pos, version = _body(frame)
    for cut in range(1, len(frame) - pos):  # every truncation of the body
        short = memoryview(frame[: len(frame) - cut])
        assert _outcome(decode_produce, short, pos, version) == _outcome(decode_produce_py, short, pos, version)
    not_utf8 = bytearray(frame)
    name = bytes(decode_produce_py(view, pos, version).topic_data[0].name, "utf-8")
    at = not_utf8.index(name, pos)
    not_utf8[at] = 0xFF
    with pytest.raises(CorruptFrameError, match="UTF-8"):
        decode_produce(memoryview(not_utf8), pos, version)


@pytest.mark.parametrize("version", [8, 9])
def test_an_array_longer_than_the_frame_is_refused_before_anything_is_allocated(version: int) -> None:
    """2**31 - 1 topics claimed by a few bytes: refused by the count check, as the generated
    decoder refuses them, not by running out of bytes after allocating a list that long."""
    head = (b"\xff\xff" if version < 9 else b"\x00") + (1).to_bytes(2, "big") + (30000).to_bytes(4, "big")
    count = (2**31 - 1).to_bytes(4, "big") if version < 9 else bytes([0x80, 0x80, 0x80, 0x80, 0x08])  # 2**31 - 1
    view = memoryview(head + count + b"\x00" * 16)
    for decode in (decode_produce, decode_produce_py):
        with pytest.raises(CorruptFrameError, match="cannot fit"):
            decode(view, 0, version)
