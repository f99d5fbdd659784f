"""Reading a request body: its content type, its size and its nesting, before anything parses it.

* **Content type** (Confluent's ``@Consumes``): ``application/vnd.schemaregistry.v1+json``,
  ``application/vnd.schemaregistry+json``, ``application/json`` and
  ``application/octet-stream``, parameters such as ``charset`` aside. A request without one
  counts as ``application/octet-stream``, as in Confluent (``Versions.GENERIC_REQUEST``: "the
  default for request entities if no content type is specified"). Anything else is
  ``415 {"error_code": 415, "message": "HTTP 415 Unsupported Media Type"}``, before the body
  is read: that is what refuses the ``text/plain`` and form posts a browser may send to
  another origin without asking first.
* **Size**: at most ``http.request.max.size`` bytes (a registry setting). A larger
  ``Content-Length`` is refused before a byte of the body is read; a chunked body is counted
  as it streams and refused as soon as it passes the limit, so memory never holds more than
  the limit. Both answer ``413`` and close the connection (the rest of the body is not read).
* **Nesting**: a body nesting deeper than :data:`~seaway.schema_registry.nesting.MAX_JSON_DEPTH`
  is refused with 42201 before ``json.loads`` (itself recursive) sees it.
"""

from __future__ import annotations

import json
from typing import Any

from fastapi import Request
from seaway.schema_registry.errors import ErrorCode, RegistryError, invalid_schema
from seaway.schema_registry.nesting import MAX_JSON_DEPTH, json_depth_exceeds
from starlette.requests import ClientDisconnect

__all__ = ["ACCEPTED_CONTENT_TYPES", "decode_json", "json_body", "read_body"]

ACCEPTED_CONTENT_TYPES = frozenset({
    "application/vnd.schemaregistry.v1+json",
    "application/vnd.schemaregistry+json",
    "application/json",
    "application/octet-stream",
})
DEFAULT_MAX_BODY = 2 * 1024 * 1024


def check_content_type(request: Request) -> None:
    raw = request.headers.get("content-type")
    if raw is None or not raw.strip():
        return  # Confluent reads a body without a content type as application/octet-stream
    if raw.split(";", 1)[0].strip().lower() not in ACCEPTED_CONTENT_TYPES:
        raise RegistryError(ErrorCode.UNSUPPORTED_MEDIA_TYPE, "HTTP 415 Unsupported Media Type")


def _too_large(limit: int) -> RegistryError:
    return RegistryError(
        ErrorCode.PAYLOAD_TOO_LARGE,
        f"HTTP 413 Payload Too Large: the request body exceeds http.request.max.size ({limit} bytes)",
    )


def body_limit(request: Request) -> int:
    limit: int = getattr(request.app.state, "max_body", DEFAULT_MAX_BODY)
    return limit


async def read_body(request: Request) -> bytes:
    """The body, once its content type and size are known to be acceptable."""
    check_content_type(request)
    limit = body_limit(request)
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise _too_large(limit)
    chunks: list[bytes] = []
    size = 0
    try:
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise _too_large(limit)
            chunks.append(chunk)
    except ClientDisconnect:  # nobody to answer; an error instead of a logged 500 traceback
        raise RegistryError(ErrorCode.BAD_REQUEST, "Client disconnected before sending its body") from None
    body = b"".join(chunks)
    request.state.raw_body = body  # kept for forwarding to the leader (request state is per scope)
    return body


def decode_json(raw: bytes) -> Any:
    """``json.loads`` for a body, after its nesting was measured."""
    if json_depth_exceeds(raw):
        raise invalid_schema(f"the request body nests deeper than {MAX_JSON_DEPTH} levels")
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise RegistryError(ErrorCode.BAD_REQUEST, f"Unrecognized JSON body: {exc}") from exc


async def json_body(request: Request) -> Any:
    """The request body decoded as JSON whatever its (accepted) content type."""
    return decode_json(await read_body(request))
