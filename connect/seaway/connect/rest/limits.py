"""What a request body must be before any route sees it: bounded in size, and declared as JSON.

An ASGI middleware in front of the whole API (so it also covers the internal worker-to-worker
route and requests that are forwarded):

* **Size** (``rest.request.max.bytes``): a ``Content-Length`` over the limit is answered 413
  before a byte of the body is read; a body without one (``Transfer-Encoding: chunked``) is
  read chunk by chunk and refused as soon as it passes the limit. The connection is closed
  after a 413, so the rest of the body is never read either. Memory per request is thereby
  bounded by the limit: the body the route reads is the one buffered here.
* **Content type**: a POST, PUT or PATCH carrying a body must say it is JSON
  (``application/json``, or a ``+json`` type such as ``application/merge-patch+json``);
  anything else, including no Content-Type at all, is a 415, as Kafka Connect's Jersey
  resources answer. This also closes the cross-origin path: a browser sends a page's
  form or ``fetch`` to another origin without asking first only with a "simple" content type
  (form encodings, ``text/plain``) or none, never with ``application/json``.

Requests without a body (``POST .../restart``) need no Content-Type, as in Kafka.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

__all__ = ["RequestLimits", "is_json_media_type"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

_BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})


def is_json_media_type(content_type: str | None) -> bool:
    """``application/json`` or ``application/<anything>+json``, parameters (charset) ignored."""
    if not content_type:
        return False
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or (media.startswith("application/") and media.endswith("+json"))


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key.lower() == name:
            return bytes(value).decode("latin-1")
    return None


async def _error(send: Send, status: int, message: str, *, close: bool = False) -> None:
    """Kafka Connect's ``{"error_code", "message"}`` body, sent by the middleware itself."""
    body = json.dumps({"error_code": status, "message": message}, separators=(",", ":")).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if close:
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class RequestLimits:
    """The middleware; ``max_body_bytes`` is ``rest.request.max.bytes``."""

    def __init__(self, app: ASGIApp, max_body_bytes: int) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes

    def _too_large(self, size: str) -> str:
        return (f"Request body of {size} bytes is larger than the worker accepts "
                f"(rest.request.max.bytes={self.max_body_bytes})")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _header(scope, b"content-length")
        chunked = "chunked" in (_header(scope, b"transfer-encoding") or "").lower()
        length = 0
        if declared is not None:
            if not declared.strip().isdigit():
                await _error(send, 400, f"Invalid Content-Length {declared!r}", close=True)
                return
            length = int(declared)
            if length > self.max_body_bytes:
                await _error(send, 413, self._too_large(str(length)), close=True)
                return
        if (length or chunked) and scope["method"] in _BODY_METHODS:
            content_type = _header(scope, b"content-type")
            if not is_json_media_type(content_type):
                shown = "none" if content_type is None else repr(content_type)
                await _error(send, 415, f"Unsupported Media Type (Content-Type: {shown}): send the body as "
                                        "application/json", close=True)
                return
        if not (length or chunked):
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client went away
                return
            chunk = bytes(message.get("body", b""))
            size += len(chunk)
            if size > self.max_body_bytes:
                await _error(send, 413, self._too_large(f"more than {self.max_body_bytes}"), close=True)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        chunks.clear()
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)
