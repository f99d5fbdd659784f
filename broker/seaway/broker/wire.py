"""Produce requests decoded in C: the generated decoder's result, at a tenth of its cost.

Every Produce request is decoded once on the event loop, and in Python that is a few
microseconds per partition (a classmethod call, a frozen dataclass built through its slot
descriptors, the tagged-field checks) on top of the request's own fields: ~9 us for a Java
producer's six-partition request, a tenth of what the broker spends on it apart from the
kernel's copy. :func:`decode_produce` is the C version (``_wire.c``): it builds the very same
``ProduceRequest`` / ``TopicProduceData`` / ``PartitionProduceData`` instances (records as
slices of the frame, as before) and raises ``CorruptFrameError`` wherever the generated
decoder does, which ``tests/broker/clients/test_produce_decoder.py`` checks over mutated
frames of every version. Without a C compiler at install time it is the generated decoder.
"""

from __future__ import annotations

from collections.abc import Callable

from seaway.protocol.messages.produce_request import PartitionProduceData, ProduceRequest, TopicProduceData
from seaway.protocol.primitives import CorruptFrameError, Reader

__all__ = ["DECODER_IS_NATIVE", "decode_produce", "decode_produce_py"]


def decode_produce_py(view: memoryview, pos: int, version: int) -> ProduceRequest:
    """The generated decoder, from ``pos`` of the frame ``view`` (the reference of the C one)."""
    return ProduceRequest.decode(Reader(view, pos), version)


def _native() -> Callable[[memoryview, int, int], ProduceRequest] | None:
    try:
        from seaway.broker._wire import decode_produce, set_types
    except ImportError:
        return None
    set_types(ProduceRequest, TopicProduceData, PartitionProduceData, CorruptFrameError)
    return decode_produce


_decode = _native()
DECODER_IS_NATIVE = _decode is not None
"""Whether :func:`decode_produce` runs in C."""

decode_produce: Callable[[memoryview, int, int], ProduceRequest] = _decode or decode_produce_py
"""``decode_produce(view, pos, version)``: the Produce request body at ``pos`` of ``view``."""
