"""Forwarding a request to the worker that can serve it (Kafka's ``HerderRequestHandler``).

In distributed mode only the leader writes configs and only the owner of a connector can
restart it; any other worker raises :class:`NotLeaderError` with the target's URL. The REST
layer then replays the same request there, at most twice:

* a user's request carries no ``forward`` query param: forward once with ``forward=true``;
* ``forward=true`` arrives and this worker cannot serve it either: forward with ``forward=false``;
* ``forward=false`` arrives and it would have to forward again: 409, a rebalance is under way.

No known target (``target_url`` None) is a 409 too. The forwarded response's status and
body are returned as they are (so a 201 from a create stays 201); an error from the target
is re-raised as a :class:`HerderError` so the user sees the target's status and message.

:class:`HerderRoute` applies this (and the request timeout) to every route of the API.
"""

from __future__ import annotations

import asyncio
import logging
import ssl
from collections.abc import Callable, Coroutine
from typing import Any

import httpx
from fastapi import Request, Response
from fastapi.routing import APIRoute
from seaway.connect.rest.errors import MAPPED_ERRORS, error_response
from seaway.connect.runtime.herder import HerderError, NotLeaderError

__all__ = [
    "CONFLICTING_OPERATION",
    "NO_KNOWN_LEADER",
    "HerderRoute",
    "forward_request",
    "forward_target",
]

NO_KNOWN_LEADER = ("Cannot complete request momentarily due to no known leader URL, "
                   "likely because a rebalance was underway.")
CONFLICTING_OPERATION = "Cannot complete request because of a conflicting operation (e.g. worker rebalance)"
REQUEST_TIMED_OUT = "Request timed out"
log = logging.getLogger(__name__)
# the KIP-507 signature too: a signed internal request (PUT /connectors/{c}/fence) reaching a
# follower is verified there and again by the leader it is forwarded to (the key is shared)
_COPIED_HEADERS = ("authorization", "content-type", "accept", "x-connect-authorization",
                   "x-connect-request-signature-algorithm")
_RETURNED_HEADERS = ("location", "content-type")


def forward_target(request: Request, error: NotLeaderError) -> str:
    """The URL to replay ``request`` at, or a 409 :class:`HerderError` when it may not be forwarded."""
    forward = request.query_params.get("forward")
    if forward is not None and forward.lower() == "false":
        raise HerderError(CONFLICTING_OPERATION, status=409)
    if error.target_url is None:
        raise HerderError(NO_KNOWN_LEADER, status=409)
    recursive = forward is None  # only the first worker may let the target forward once more
    params: list[tuple[str, str | int | float | bool | None]] = [
        (k, v) for k, v in request.query_params.multi_items() if k != "forward"]
    params.insert(0, ("forward", "true" if recursive else "false"))
    url = httpx.URL(error.target_url.rstrip("/") + request.url.path)
    return str(url.copy_with(params=httpx.QueryParams(params)))


async def forward_request(request: Request, error: NotLeaderError, *,
                          transport: httpx.AsyncBaseTransport | None = None,
                          timeout: float = 90.0, ssl_context: ssl.SSLContext | None = None) -> Response:
    """Replay ``request`` (method, body, Authorization) at the worker ``error`` names.

    An https target is verified with ``ssl_context`` (the worker's REST TLS settings, which
    also present its keystore as client certificate, as Kafka's ``RestClient`` does).
    """
    url = forward_target(request, error)
    body = await request.body()
    headers = {k: v for k, v in request.headers.items() if k.lower() in _COPIED_HEADERS}
    verify: ssl.SSLContext | bool = ssl_context if ssl_context is not None and url.startswith("https:") else True
    try:
        async with httpx.AsyncClient(transport=transport, timeout=timeout, verify=verify) as client:
            reply = await client.request(request.method, url, content=body, headers=headers)
    except httpx.HTTPError as exc:
        raise HerderError(f"IO Error trying to forward REST request: {exc}", status=500) from exc
    if reply.status_code >= 400:
        status, code, message = reply.status_code, reply.status_code, reply.text
        try:
            payload = reply.json()
        except ValueError:
            payload = None
        if isinstance(payload, dict):
            message = str(payload.get("message", message))
            code = int(payload.get("error_code", code))
        raise HerderError(message, status=status, error_code=code)
    kept = {k: v for k, v in reply.headers.items() if k.lower() in _RETURNED_HEADERS}
    return Response(reply.content, status_code=reply.status_code, headers=kept)


class HerderRoute(APIRoute):
    """A route that forwards on :class:`NotLeaderError` and gives up after the request timeout.

    The body is read (and cached on the request) before the endpoint runs, so it can be
    re-sent when forwarding; its size and content type were checked before (see
    :mod:`seaway.connect.rest.limits`). ``request.app.state`` holds ``request_timeout`` and
    ``forward_transport`` (see :func:`seaway.connect.rest.app.create_app`).
    """

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def handle(request: Request) -> Response:
            await request.body()
            state: Any = request.app.state
            timeout: float = state.request_timeout
            try:
                async with asyncio.timeout(timeout):
                    return await handler(request)
            except NotLeaderError as exc:
                return await forward_request(request, exc, transport=state.forward_transport, timeout=timeout,
                                             ssl_context=getattr(state, "forward_ssl_context", None))
            except TimeoutError:
                raise HerderError(REQUEST_TIMED_OUT, status=500) from None
            except MAPPED_ERRORS:
                raise
            except Exception as exc:  # Kafka: anything else is a 500 carrying the exception's message
                log.exception("Uncaught exception in REST call to %s %s", request.method, request.url.path)
                return error_response(500, str(exc) or type(exc).__name__)

        return handle
