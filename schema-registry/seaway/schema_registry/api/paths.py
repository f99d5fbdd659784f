"""Subjects holding ``/``: routed from their encoded form (``%2F``), as Confluent routes them.

Confluent's Jersey routes match the raw path, so ``/subjects/com%2Facme%2Forder.proto/versions``
reaches subject ``com/acme/order.proto``. Such subjects are common: confluent-kafka's Protobuf
serializer registers each imported file under its import path. Starlette decodes the path
before routing, where ``%2F`` would become a separator and the route would not match. So
:class:`EncodedSlashes` (a plain ASGI middleware, a no-op unless the raw path holds ``%2F``)
decodes the raw path segment by segment, writing an encoded slash as :data:`SLASH`, a
private-use character; :class:`SubjectRoute` (the routers' route class) and
:func:`path_param` turn it back into ``/`` in path parameters. The raw path is left as the
client sent it (forwarding to the leader replays it).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import unquote

from fastapi import FastAPI, Request
from fastapi.routing import APIRoute
from starlette.routing import Match
from starlette.types import Scope

__all__ = ["SLASH", "EncodedSlashes", "SubjectRoute", "install_subject_paths", "path_param"]

SLASH = "\uf8ff"
"""What an encoded ``/`` inside a path segment is while the request is routed."""

_Message = MutableMapping[str, Any]
_ASGI = Callable[[Scope, Callable[[], Awaitable[_Message]], Callable[[_Message], Awaitable[None]]], Awaitable[None]]


class EncodedSlashes:
    """Route ``%2F`` inside a segment as part of the segment (see the module docstring)."""

    def __init__(self, app: _ASGI) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Callable[[], Awaitable[_Message]],
                       send: Callable[[_Message], Awaitable[None]]) -> None:
        if scope["type"] == "http":
            raw = scope.get("raw_path")
            if isinstance(raw, bytes) and b"%2f" in raw.lower():
                path = raw.split(b"?", 1)[0].decode("latin-1")
                decoded = "/".join(unquote(segment).replace("/", SLASH) for segment in path.split("/"))
                scope = {**scope, "path": decoded}
        await self.app(scope, receive, send)


def _restore(params: dict[str, Any]) -> dict[str, Any]:
    return {k: v.replace(SLASH, "/") if isinstance(v, str) else v for k, v in params.items()}


class SubjectRoute(APIRoute):
    """An ``APIRoute`` whose path parameters have encoded slashes turned back into ``/``."""

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        match, child = super().matches(scope)
        params = child.get("path_params")
        if params and any(isinstance(v, str) and SLASH in v for v in params.values()):
            child = {**child, "path_params": _restore(params)}
        return match, child


def path_param(request: Request, name: str) -> str:
    """A path parameter of a hand-routed (hot) endpoint, encoded slashes restored."""
    value: str = request.path_params[name]
    return value.replace(SLASH, "/") if SLASH in value else value


def install_subject_paths(app: FastAPI) -> None:
    """Let subjects holding ``/`` be addressed as ``%2F`` (Confluent's routing)."""
    app.add_middleware(EncodedSlashes)
