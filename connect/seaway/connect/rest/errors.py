"""Every error the REST API sends, as Kafka Connect's ``{"error_code", "message"}`` body.

Kafka's ``ConnectExceptionMapper`` turns any exception into that body; this module is its
equivalent. The mapping (``error_code`` equals the HTTP status unless the herder chose a
distinct one)::

    HerderError (and subclasses)   -> its .status / .error_code
        BadRequestError                400
        RebalanceNeededError           409
        NotLeaderError                 forwarded by the route (see forwarding.py); 409 if not
    NotFoundError                  -> 404
    AlreadyExistsError             -> 409
    ConfigError                    -> 400   (an invalid value the user supplied)
    malformed JSON, wrong shapes   -> 400   (FastAPI's 422 validation errors, reshaped)
    unknown path / method          -> 404 / 405 (``Allow`` lists every method of the path)
    anything else                  -> 500 with the exception's message

Malformed input must never surface as a 500: a client bug is a 400.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from http import HTTPStatus
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from seaway.connect.api.errors import AlreadyExistsError, ConfigError, NotFoundError
from seaway.connect.runtime.herder import HerderError
from starlette.exceptions import HTTPException as StarletteHTTPException

__all__ = ["MAPPED_ERRORS", "allowed_methods", "error_response", "install_error_handlers", "validation_message"]

log = logging.getLogger(__name__)

MAPPED_ERRORS: tuple[type[Exception], ...] = (HerderError, NotFoundError, AlreadyExistsError, ConfigError,
                                              RequestValidationError, StarletteHTTPException)
"""Exceptions with a handler of their own; any other exception becomes a 500."""


def error_response(status: int, message: str, error_code: int | None = None,
                   headers: dict[str, str] | None = None) -> JSONResponse:
    """Kafka Connect's error body with ``status``."""
    code = status if error_code is None else error_code
    return JSONResponse({"error_code": code, "message": message}, status_code=status, headers=headers)


def _location(loc: Sequence[Any]) -> str:
    """``("body", "config", "tasks.max")`` -> ``config.tasks.max``; the leading ``body`` adds nothing."""
    parts = [str(p) for p in loc]
    if parts and parts[0] == "body":
        parts = parts[1:]
    return ".".join(parts)


def validation_message(errors: Sequence[Any]) -> str:
    """One readable message from pydantic/FastAPI validation errors."""
    lines = []
    for err in errors:
        if not isinstance(err, dict):
            lines.append(str(err))
            continue
        if err.get("type") == "json_invalid":
            ctx = err.get("ctx") or {}
            detail = ctx.get("error", "invalid JSON")
            return f"Request body is not valid JSON: {detail}"
        where = _location(err.get("loc", ()))
        if err.get("type") == "missing" and where == "":
            lines.append("Request body is required")
            continue
        what = err.get("msg", "invalid value")
        lines.append(f"{where}: {what}" if where else str(what))
    return "; ".join(lines) or "Invalid request"


async def _herder_error(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, HerderError)
    if exc.status >= 500:
        # the text, not the exception: a handler that keeps records (a test's log capture) would keep its
        # traceback's frames, and the clients they hold, alive
        log.error("REST request failed: %s", str(exc))
    return error_response(exc.status, str(exc), exc.error_code)


async def _not_found(_: Request, exc: Exception) -> JSONResponse:
    return error_response(404, str(exc))


async def _already_exists(_: Request, exc: Exception) -> JSONResponse:
    return error_response(409, str(exc))


async def _config_error(_: Request, exc: Exception) -> JSONResponse:
    return error_response(400, str(exc))


async def _validation_error(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    return error_response(400, validation_message(exc.errors()))


def allowed_methods(request: Request) -> list[str]:
    """Every method some route serves at this path.

    Starlette answers 405 with the methods of the first route whose path matched, but a path
    like ``/connectors/{connector}`` has a route per method: ``Allow`` must list them all.
    """
    path = request.scope.get("path", "")
    methods: set[str] = set()
    for route in request.app.router.routes:
        regex = getattr(route, "path_regex", None)
        route_methods = getattr(route, "methods", None)
        if regex is not None and route_methods and regex.match(path):
            methods |= set(route_methods)
    return sorted(methods)


_STATUS_CODES = frozenset(status.value for status in HTTPStatus)


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    detail = exc.detail if isinstance(exc.detail, str) else str(exc.detail)
    phrase = HTTPStatus(exc.status_code).phrase if exc.status_code in _STATUS_CODES else None
    if detail == phrase:  # a bare status (unknown path, method): Jersey's wording, as Kafka Connect answers
        detail = f"HTTP {exc.status_code} {phrase}"
    headers = dict(exc.headers) if exc.headers else {}
    if exc.status_code == 405:
        headers["Allow"] = ", ".join(allowed_methods(request))
    return error_response(exc.status_code, detail, headers=headers or None)


async def _unexpected(_: Request, exc: Exception) -> JSONResponse:
    log.exception("Uncaught exception in REST call")
    return error_response(500, str(exc) or type(exc).__name__)


def install_error_handlers(app: FastAPI) -> None:
    """Register the handlers above on ``app`` (most specific class wins, as in Starlette)."""
    app.add_exception_handler(HerderError, _herder_error)
    app.add_exception_handler(NotFoundError, _not_found)
    app.add_exception_handler(AlreadyExistsError, _already_exists)
    app.add_exception_handler(ConfigError, _config_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(Exception, _unexpected)
