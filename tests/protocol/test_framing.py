"""Kafka's request and response framing (seaway.protocol.framing), byte by byte.

The expected bytes are written out from Kafka's header definitions, not produced by our
encoder, so a header rule broken in the one shared function fails here first.
"""

from __future__ import annotations

import struct

import pytest
from seaway.protocol.framing import FramingError, request_frame, response_reader
from seaway.protocol.messages.api_versions_request import ApiVersionsRequest
from seaway.protocol.messages.api_versions_response import ApiVersionsResponse
from seaway.protocol.messages.metadata_request import MetadataRequest
from seaway.protocol.primitives import Writer


def test_a_non_flexible_request_has_header_v1() -> None:
    frame = request_frame(MetadataRequest(topics=[]), 1, 7, "cli")
    # size, api key 3, version 1, correlation 7, client id as int16 length + bytes, then the body
    body = MetadataRequest(topics=[])
    w = Writer()
    body.encode(w, 1)
    expected = struct.pack(">hhih", 3, 1, 7, 3) + b"cli" + bytes(w.getvalue())
    assert frame == struct.pack(">i", len(expected)) + expected


def test_a_flexible_request_has_header_v2_with_tagged_fields_and_a_plain_client_id() -> None:
    frame = request_frame(MetadataRequest(topics=[]), 12, 9, "cli")
    w = Writer()
    MetadataRequest(topics=[]).encode(w, 12)
    # the client id stays an int16-length string in header v2; one empty tagged-fields byte follows
    expected = struct.pack(">hhih", 3, 12, 9, 3) + b"cli" + b"\x00" + bytes(w.getvalue())
    assert frame == struct.pack(">i", len(expected)) + expected


def test_a_null_client_id_is_length_minus_one() -> None:
    frame = request_frame(MetadataRequest(topics=[]), 1, 1, None)
    assert frame[4:14] == struct.pack(">hhih", 3, 1, 1, -1)


def test_a_flexible_response_header_has_tagged_fields_but_api_versions_never_does() -> None:
    # Metadata v12 answers with header v1: correlation id, then tagged fields (here none)
    r = response_reader(struct.pack(">i", 5) + b"\x00" + b"BODY", MetadataRequest, 12, 5)
    assert bytes(r.buf[r.pos:]) == b"BODY"
    # ApiVersions v3 is flexible but answers with header v0 (KIP-511): the body starts right away
    w = Writer()
    ApiVersionsResponse(error_code=0).encode(w, 3)
    r = response_reader(struct.pack(">i", 6) + bytes(w.getvalue()), ApiVersionsRequest, 3, 6)
    assert ApiVersionsResponse.decode(r, 3).error_code == 0


def test_a_response_to_another_request_is_refused() -> None:
    with pytest.raises(FramingError, match="correlation id 4 does not match the request's 5"):
        response_reader(struct.pack(">i", 4), MetadataRequest, 1, 5)
