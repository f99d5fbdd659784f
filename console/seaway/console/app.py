"""The console's FastAPI app: pages rendered on the server, htmx for the parts that refresh.

``create_app(settings)`` builds the clients (one Kafka gateway, one REST backend per Connect
cluster and for the registry), the sessions and the lag watcher, and mounts the pages (one
module per area under :mod:`seaway.console.pages`) and the static assets (htmx 2.0.11, the
style sheet and a small script, all served from the package: no CDN, the console works
offline).

Every answer carries a strict Content-Security-Policy (scripts and styles from this origin
only, no inline script, no framing), ``X-Content-Type-Options: nosniff`` and
``Referrer-Policy: same-origin``. Failures become pages: a backend's refusal is shown with its
own message and status; a needed login redirects to ``/login``.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from seaway.console.errors import ConsoleError, LoginRequired
from seaway.console.kafka import KafkaGateway
from seaway.console.lagwatch import LagWatch
from seaway.console.rest import RestBackend
from seaway.console.security import Gate, Sessions, safe_next
from seaway.console.settings import ConsoleSettings
from seaway.console.web import Console, Ctx, LoginNeeded

__all__ = ["SECURITY_HEADERS", "create_app"]

SECURITY_HEADERS = [
    (b"content-security-policy", b"default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                                 b"connect-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'; "
                                 b"object-src 'none'"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
    (b"x-frame-options", b"DENY"),
]
STATIC = Path(__file__).parent / "static"


class _SecurityHeaders:
    """Adds :data:`SECURITY_HEADERS` to every HTTP answer (a plain ASGI wrapper: streaming stays streaming)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def wrapped(message: Any) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *SECURITY_HEADERS]}
            await send(message)
        await self.app(scope, receive, wrapped)


def create_app(settings: ConsoleSettings) -> FastAPI:
    """The console for ``settings``; its clients open in the app's lifespan."""
    from seaway.console.pages import auth, connect, connect_form, groups, overview, schemas, topics

    gateway = KafkaGateway(settings.bootstrap_servers, settings.kafka)
    connect_backends = {c.name: RestBackend(f"connect {c.name}", c) for c in settings.connect}
    registry = RestBackend("registry", settings.registry) if settings.registry is not None else None
    probes = [(b, "/connectors") for b in connect_backends.values()]
    if registry is not None:
        probes.append((registry, "/subjects"))
    console_ref: dict[str, Console] = {}

    async def metrics() -> str | None:
        return await console_ref["console"].broker_metrics()

    lag = LagWatch(gateway, settings.lag_sample_interval_ms / 1000, metrics if settings.metrics_urls else None)
    console = Console(settings, gateway, connect_backends, registry, Sessions(settings.session_idle_timeout_ms / 1000),
                      Gate(probes), lag)
    console_ref["console"] = console

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        await console.gate.probe()
        lag.start()
        try:
            yield
        finally:
            await lag.stop()
            for backend in connect_backends.values():
                await backend.aclose()
            if registry is not None:
                await registry.aclose()
            gateway.close()

    app = FastAPI(title="Seaway console", lifespan=lifespan, docs_url=None, redoc_url=None, openapi_url=None)
    app.state.console = console
    app.mount("/static", StaticFiles(directory=str(STATIC)), name="static")
    for module in (auth, overview, connect_form, connect, topics, groups, schemas):
        app.include_router(module.router)

    @app.get("/healthz", include_in_schema=False)
    async def healthz() -> PlainTextResponse:
        return PlainTextResponse("ok")

    @app.exception_handler(LoginNeeded)
    async def login_needed(request: Request, exc: LoginNeeded) -> Response:
        target = "/login?next=" + _quoted_next(request)
        if request.headers.get("HX-Request"):
            return Response(status_code=401, headers={"HX-Redirect": target})
        if request.method != "GET" or request.headers.get("Authorization"):
            return PlainTextResponse(f"Authentication required. {exc.message}".strip(), 401,
                                     headers={"WWW-Authenticate": 'Basic realm="Seaway console"'})
        return RedirectResponse(target, 303)

    @app.exception_handler(LoginRequired)
    async def backend_wants_login(request: Request, exc: LoginRequired) -> Response:
        console.gate.saw_login_required(exc.backend)
        session = console.sessions.get(request.cookies.get(console.cookie))
        if session is not None and session.user is not None:
            console.sessions.drop(session.sid)  # its credentials were refused: log in again
        return await login_needed(request, LoginNeeded(f"{exc.backend} asks for credentials"))

    @app.exception_handler(ConsoleError)
    async def console_error(request: Request, exc: ConsoleError) -> Response:
        ctx = Ctx(request, console, console.sessions.get(request.cookies.get(console.cookie)), None)
        if request.headers.get("HX-Request"):
            return ctx.render("_error.html", exc.status, error=exc.message)
        return ctx.render("error.html", exc.status, error=exc.message)

    @app.exception_handler(404)
    async def not_found(request: Request, exc: Exception) -> Response:
        detail = getattr(exc, "detail", None) or "Not Found"
        return HTMLResponse(f"<!doctype html><title>Not found</title><p>{_escape(str(detail))}: "
                            f"{_escape(request.url.path)}</p><p><a href=\"/\">Seaway console</a></p>", 404)

    app.add_middleware(_SecurityHeaders)
    return app


def _escape(text: str) -> str:
    from markupsafe import escape

    return str(escape(text))


def _quoted_next(request: Request) -> str:
    from urllib.parse import quote

    target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    if request.method != "GET" or request.headers.get("HX-Request"):
        target = request.headers.get("HX-Current-URL") or request.headers.get("Referer") or "/"
        from urllib.parse import urlsplit

        parts = urlsplit(target)
        target = parts.path + (f"?{parts.query}" if parts.query else "")
    return quote(safe_next(target), safe="")
