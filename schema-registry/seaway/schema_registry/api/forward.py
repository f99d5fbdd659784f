"""Forwarding a write that reached a follower to the leader, as Confluent does.

A follower's service raises :class:`~seaway.schema_registry.errors.NotLeaderError` (with
the leader's URL) before it validates or writes anything. This handler replays the request
(same method, path, query string, body and content type) against the leader and returns
the leader's answer unchanged: status, body, content type. So clients may talk to any
instance; after a successful forward the follower also waits until it has applied the
write, so the client reads its own write from the instance it wrote to.

Failures become Confluent's codes: no known leader -> 50004; the leader unreachable, or a
request that was already forwarded once (both sides think the other leads, mid-election)
-> 50003.
"""

from __future__ import annotations

import asyncio
import contextlib

import httpx
from fastapi import FastAPI, Request
from fastapi.responses import Response
from seaway.schema_registry.api.common import RegistryJSONResponse, get_service
from seaway.schema_registry.errors import ErrorCode, NotLeaderError, RegistryError

__all__ = ["FORWARDED_HEADER", "install_forwarding"]

FORWARDED_HEADER = "X-Seaway-Forwarded-By"
_PASSED_HEADERS = ("content-type", "accept", "authorization")


def _error(code: ErrorCode, message: str) -> Response:
    return RegistryJSONResponse({"error_code": int(code), "message": message}, status_code=code.http_status)


async def _forward(request: Request, leader_url: str, client: httpx.AsyncClient) -> Response:
    headers = {k: v for k, v in request.headers.items() if k.lower() in _PASSED_HEADERS}
    headers[FORWARDED_HEADER] = str(request.url.netloc)
    body: bytes = getattr(request.state, "raw_body", b"")
    raw = request.scope.get("raw_path")  # as the client sent it: %2F in a subject stays encoded
    path = raw.split(b"?", 1)[0].decode("latin-1") if isinstance(raw, bytes) else request.url.path
    url = leader_url.rstrip("/") + path
    response = await client.request(
        request.method, url, params=request.url.query, content=body or None, headers=headers
    )
    passed = {"content-type": response.headers.get("content-type", "application/vnd.schemaregistry.v1+json")}
    return Response(content=response.content, status_code=response.status_code, headers=passed)


def install_forwarding(app: FastAPI, timeout: float = 30.0) -> None:
    """Handle :class:`NotLeaderError` by forwarding; the client lives in ``app.state.forward_client``."""

    async def not_leader(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, NotLeaderError)
        if exc.leader_url is None:
            return _error(ErrorCode.UNKNOWN_LEADER, "Unknown leader: no registry instance is leader now")
        if request.headers.get(FORWARDED_HEADER):
            return _error(
                ErrorCode.REQUEST_FORWARDING_FAILED,
                f"Error while forwarding the request to the leader {exc.leader_url}: it was forwarded already",
            )
        client: httpx.AsyncClient | None = getattr(request.app.state, "forward_client", None)
        try:
            if client is not None:
                response = await _forward(request, exc.leader_url, client)
            else:
                async with httpx.AsyncClient(timeout=timeout) as own:  # an app served without lifespan
                    response = await _forward(request, exc.leader_url, own)
        except httpx.HTTPError as err:
            return _error(
                ErrorCode.REQUEST_FORWARDING_FAILED,
                f"Error while forwarding the request to the leader {exc.leader_url}: {err!r}",
            )
        if response.status_code < 300:
            # The leader applied it; wait until this instance has too, so a client that wrote
            # here reads its write here next (the leader's own guarantee, extended).
            service = get_service(request)
            with contextlib.suppress(RegistryError):
                await asyncio.to_thread(service.catch_up_to_end, timeout)
        return response

    app.add_exception_handler(NotLeaderError, not_leader)
