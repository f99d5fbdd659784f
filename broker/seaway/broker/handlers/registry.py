"""The handler registry: one entry per API key, each declaring the versions it serves.

ApiVersions is derived from this registry, never hand-kept: a handler module registers
itself with :func:`handles` when imported, and ``seaway.broker.handlers`` imports every
handler module.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from seaway.broker.context import RequestContext

__all__ = ["HANDLERS", "HandlerSpec", "handles"]

Handler = Callable[["RequestContext", Any], Awaitable[Any]]
F = TypeVar("F", bound=Handler)


@dataclass(frozen=True, slots=True)
class HandlerSpec:
    """How to serve one API: message classes, served version range and the coroutine.

    The coroutine returns the response object, or ``None`` when no response is sent
    (a produce with acks=0).
    """

    api_key: int
    min_version: int
    max_version: int
    request_cls: Any
    response_cls: Any
    func: Handler
    name: str

    def request_flexible(self, version: int) -> bool:
        return bool(version >= self.request_cls.FLEXIBLE_FROM)


HANDLERS: dict[int, HandlerSpec] = {}


def handles(request_cls: Any, response_cls: Any, versions: tuple[int, int] | None = None) -> Callable[[F], F]:
    """Register the decorated coroutine as the handler of ``request_cls``'s API.

    ``versions`` narrows the generated range when a handler serves fewer versions
    than the codec knows.
    """
    lo, hi = versions or (request_cls.MIN_VERSION, request_cls.MAX_VERSION)
    if lo < request_cls.MIN_VERSION or hi > request_cls.MAX_VERSION:
        raise ValueError(f"{request_cls.__name__}: versions {lo}-{hi} are not all generated")

    def register(func: F) -> F:
        key = int(request_cls.API_KEY)
        if key in HANDLERS:
            raise ValueError(f"API key {key} is registered twice")
        HANDLERS[key] = HandlerSpec(
            key, lo, hi, request_cls, response_cls, func, request_cls.__name__.removesuffix("Request")
        )
        return func

    return register
