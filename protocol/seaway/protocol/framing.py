"""Kafka's request and response framing, written once for every sender (sans-IO).

A request on the wire is ``int32 size``, the request header (v1: api key, api version,
correlation id, client id; v2 adds tagged fields when the API version is flexible) and the
body at that version. A response is ``int32 size``, the response header (v0: correlation
id; v1 adds tagged fields when flexible, except ApiVersions, which always answers with v0 so
that a client can read it before it knows the broker's versions: KIP-511) and the body.

The protocol client, the tests that speak to a broker on raw sockets and the benchmarks
that pre-build request frames all use these two functions, so the header rules live here
only.
"""

from __future__ import annotations

import struct
from typing import ClassVar, Protocol

from seaway.protocol.messages.request_header import RequestHeader
from seaway.protocol.primitives import Reader, Writer

__all__ = ["FRAME_SIZE", "FramingError", "request_frame", "response_reader"]

FRAME_SIZE = struct.Struct(">i")
"""The int32 size that starts every frame."""

_API_VERSIONS_KEY = 18


class _Request(Protocol):
    API_KEY: ClassVar[int]
    FLEXIBLE_FROM: ClassVar[int]

    def encode(self, w: Writer, version: int) -> None: ...


class FramingError(ValueError):
    """A response frame does not answer the request it was read for."""


def request_frame(request: _Request, version: int, correlation_id: int, client_id: str | None) -> bytes:
    """``request`` at ``version`` as one whole frame, size prefix included."""
    w = Writer()
    flexible = version >= request.FLEXIBLE_FROM
    RequestHeader(request_api_key=request.API_KEY, request_api_version=version,
                  correlation_id=correlation_id, client_id=client_id).encode(w, 2 if flexible else 1)
    request.encode(w, version)
    body = w.getvalue()
    return FRAME_SIZE.pack(len(body)) + body


def response_reader(frame: bytes, request: _Request | type[_Request], version: int, correlation_id: int) -> Reader:
    """A reader at the start of the response body of ``frame`` (the bytes after the size).

    Raises :class:`FramingError` when the frame's correlation id is not ``correlation_id``.
    """
    r = Reader(frame)
    answered = r.int32()
    if answered != correlation_id:
        raise FramingError(f"response correlation id {answered} does not match the request's {correlation_id}")
    if version >= request.FLEXIBLE_FROM and request.API_KEY != _API_VERSIONS_KEY:
        r.skip_tagged_fields()
    return r
