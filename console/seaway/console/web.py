"""What every page handler shares: the app's state, the request's context, forms, rendering.

:class:`Console` is the app's state (clients, sessions, templates), built once by
:func:`seaway.console.app.create_app`. :func:`context` (a FastAPI dependency) gives each
request its :class:`Ctx`: the session, the credentials calls go out with, and views of Connect
and the registry bound to them. A request that needs a login it does not have is sent to
``/login`` (htmx requests through ``HX-Redirect``). :func:`writable` guards every POST: read-only
mode, then CSRF (:func:`seaway.console.security.check_csrf`).

Forms are ``application/x-www-form-urlencoded`` bodies parsed here, at most
:data:`MAX_FORM_BYTES`; the console needs no multipart parser.
"""

from __future__ import annotations

import asyncio
import datetime
import hashlib
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, TypeVar
from urllib.parse import parse_qsl, quote

import httpx
import jinja2
from fastapi import Depends, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from markupsafe import Markup
from seaway.console.cache import Refreshing
from seaway.console.errors import ConsoleError, Forbidden
from seaway.console.kafka import KafkaGateway
from seaway.console.lagwatch import LagWatch
from seaway.console.metrics import Scrape, topic_sizes
from seaway.console.rest import ConnectApi, RegistryApi, RestBackend
from seaway.console.security import Gate, Session, Sessions, basic_credentials, check_csrf, cookie_name
from seaway.console.settings import ConsoleSettings

__all__ = ["MAX_FORM_BYTES", "Console", "Ctx", "CtxDep", "Form", "LoginNeeded", "context", "read_form", "writable"]

ResponseT = TypeVar("ResponseT", bound=Response)
MAX_FORM_BYTES = 1 << 20
METRICS_TTL_S = 4.0
"""How long one scrape of a broker's /metrics serves the pages as it is (sizes, lag statuses, health)."""
METRICS_STALE_S = 30.0
CONNECTORS_TTL_S = 1.0
"""How long a Connect cluster's connector list serves the pages as it is (changes through the console
invalidate it; the connector pages themselves always ask afresh)."""
CONNECTORS_STALE_S = 10.0
TEMPLATES = Path(__file__).parent / "templates"


class LoginNeeded(Exception):
    """Raised by :func:`context`: the request must log in first (handled by a redirect)."""

    def __init__(self, message: str = "") -> None:
        super().__init__(message)
        self.message = message


def _refused(auth: tuple[str, str] | None) -> str:
    if auth is None:
        return (": the broker asks for a broker user's credentials (it has an authorizer); give the console "
                "Kafka SASL PLAIN/SCRAM credentials or metrics.basic.auth.user.info")
    return f": the broker refused the credentials of {auth[0]} (metrics.basic.auth.*, or the Kafka SASL user)"


def _ms_time(value: int | None) -> str:
    if value is None or value < 0:
        return "—"
    return datetime.datetime.fromtimestamp(value / 1000, datetime.UTC).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] + "Z"


def _number(value: int | float | None) -> str:
    if value is None:
        return "—"
    return f"{value:,}".replace(",", "\u202f")


def _size(value: int | None) -> str:
    if value is None:
        return "—"
    size = float(value)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if size < 1024 or unit == "TiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{value} B"


def _dom_id(text: str) -> str:
    """``text`` as an HTML id safe in a CSS selector (htmx finds out-of-band targets by selector)."""
    return "".join(c if c.isascii() and (c.isalnum() or c in "_-") else f"_{ord(c):x}_" for c in str(text))


def _clip(text: str, limit: int = 20_000) -> str:
    """A long key or value cut for the table (the filter still searched all of it)."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text) - limit:,} more characters)"


def _sparkline(points: Any, width: int = 120, height: int = 24) -> str:
    """An inline SVG polyline of (time, value) points (the lag trend); empty when fewer than two."""
    pts = list(points)
    if len(pts) < 2:
        return ""
    t0, t1 = pts[0][0], pts[-1][0]
    top = max(v for _, v in pts) or 1
    span = (t1 - t0) or 1
    coords = " ".join(f"{(t - t0) * width / span:.1f},{height - 1 - v * (height - 2) / top:.1f}" for t, v in pts)
    return (f'<svg class="spark" width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img" '
            f'aria-label="lag trend, last {pts[-1][1]}"><polyline fill="none" stroke="currentColor" '
            f'stroke-width="1.5" points="{coords}"/></svg>')


def _environment() -> jinja2.Environment:
    """The templates (autoescaped); the message browser streams rows rendered batch by batch."""
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)), autoescape=True,
                             trim_blocks=True, lstrip_blocks=True, undefined=jinja2.Undefined,
                             enable_async=False)
    env.filters.update(clip=_clip, domid=_dom_id, ms_time=_ms_time, number=_number, size=_size,
                       urlpart=lambda s: quote(str(s), safe=""))
    env.globals["sparkline"] = lambda points: Markup(_sparkline(points))
    return env


@dataclass
class Console:
    """The app's state: one of each client, the sessions, the templates."""

    settings: ConsoleSettings
    kafka: KafkaGateway
    connect: dict[str, RestBackend]
    registry: RestBackend | None
    sessions: Sessions
    gate: Gate
    lag: LagWatch
    templates: jinja2.Environment = field(default_factory=_environment)
    scrapes: dict[str, Scrape] = field(default_factory=dict)
    started: float = field(default_factory=time.time)
    metrics_error: str | None = None
    """Why the last scrape of the brokers' ``/metrics`` got nothing (None when it did)."""

    @property
    def cookie(self) -> str:
        return cookie_name(self.settings.https)

    def __post_init__(self) -> None:
        self._metrics = Refreshing(self._scrape, METRICS_TTL_S, METRICS_STALE_S)
        self._connectors: dict[tuple[str, str], Refreshing[dict[str, Any]]] = {}

    async def _scrape(self) -> tuple[str, dict[tuple[str, int], int]] | None:
        """The first broker ``/metrics`` that answers, and its partition sizes parsed off the event loop
        (megabytes of text with a thousand topics).

        With the configured credentials (``settings.metrics_auth``: a broker with an authorizer
        serves ``/metrics`` to its own users only); why nothing answered is kept in
        :attr:`metrics_error` for the health page.
        """
        settings = self.settings
        auth = httpx.BasicAuth(*settings.metrics_auth) if settings.metrics_auth is not None else None
        problems: list[str] = []
        async with httpx.AsyncClient(timeout=5.0, verify=settings.metrics_verify, auth=auth) as client:
            for url in settings.metrics_urls:
                try:
                    response = await client.get(url)
                except httpx.HTTPError as exc:
                    problems.append(f"{url}: {type(exc).__name__}: {exc}")
                    continue
                if response.status_code == 200:
                    self.metrics_error = None
                    text = response.text
                    return text, await asyncio.to_thread(topic_sizes, text)
                problems.append(f"{url} answered {response.status_code} {response.reason_phrase}"
                                + (_refused(settings.metrics_auth) if response.status_code == 401 else ""))
        self.metrics_error = "; ".join(problems)
        return None

    async def broker_metrics(self) -> str | None:
        """The brokers' ``/metrics`` text (shared, see :mod:`seaway.console.cache`); None without one."""
        if not self.settings.metrics_urls:
            return None
        scraped = await self._metrics.get()
        return None if scraped is None else scraped[0]

    async def topic_sizes(self) -> dict[tuple[str, int], int] | None:
        """Bytes per partition from the brokers' ``kafka_log_log_size``, parsed once per scrape."""
        if not self.settings.metrics_urls:
            return None
        scraped = await self._metrics.get()
        return None if scraped is None else scraped[1]

    async def connectors(self, api: ConnectApi) -> dict[str, Any]:
        """A Connect cluster's ``expand=status&expand=info`` answer, shared per cluster and credentials."""
        key = (api.name, hashlib.sha256(repr(api.creds).encode()).hexdigest())
        entry = self._connectors.get(key)
        if entry is None:
            if len(self._connectors) > 1000:
                self._connectors.clear()
            entry = self._connectors[key] = Refreshing(api.connectors_expanded, CONNECTORS_TTL_S, CONNECTORS_STALE_S)
        return await entry.get()

    def changed_connectors(self) -> None:
        """A connector was created, changed or deleted through the console: lists are fetched afresh."""
        for entry in self._connectors.values():
            entry.invalidate()


@dataclass
class Ctx:
    """One request: who, with which credentials, and the helpers its page needs."""

    request: Request
    console: Console
    session: Session | None
    creds: tuple[str, str] | None
    new_session: bool = False

    @property
    def user(self) -> str | None:
        return None if self.creds is None else self.creds[0]

    @property
    def read_only(self) -> bool:
        return self.console.settings.read_only

    @property
    def kafka(self) -> KafkaGateway:
        return self.console.kafka

    def connect(self, cluster: str) -> ConnectApi:
        backend = self.console.connect.get(cluster)
        if backend is None:
            raise ConsoleError(f"no Connect cluster named {cluster!r} is configured", 404)
        return ConnectApi(backend, self.creds)

    def connects(self) -> list[ConnectApi]:
        return [ConnectApi(b, self.creds) for b in self.console.connect.values()]

    def registry(self) -> RegistryApi:
        if self.console.registry is None:
            raise ConsoleError("no schema registry is configured (schema.registry.url)", 404)
        return RegistryApi(self.console.registry, self.creds)

    def has_registry(self) -> bool:
        return self.console.registry is not None

    def ensure_session(self) -> Session:
        if self.session is None:
            self.session = self.console.sessions.new()
            self.new_session = True
        return self.session

    def render(self, template: str, status: int = 200, headers: Mapping[str, str] | None = None,
               **values: Any) -> HTMLResponse:
        session = self.ensure_session()
        html = self.console.templates.get_template(template).render(
            ctx=self, csrf=session.csrf, user=self.user, read_only=self.read_only, path=self.request.url.path,
            clusters=list(self.console.connect), registry=self.console.registry is not None, **values)
        return self.finish(HTMLResponse(html, status, headers=dict(headers or {})))

    def redirect(self, url: str) -> Response:
        if self.request.headers.get("HX-Request"):
            return self.finish(Response(status_code=204, headers={"HX-Redirect": url}))
        return self.finish(RedirectResponse(url, 303))

    def finish(self, response: ResponseT) -> ResponseT:
        """Set the session cookie on a response when this request opened the session."""
        if self.new_session and self.session is not None:
            response.set_cookie(self.console.cookie, self.session.sid, httponly=True, samesite="strict",
                                secure=self.console.settings.https, path="/")
        return response


def _console(request: Request) -> Console:
    console: Console = request.app.state.console
    return console


async def context(request: Request) -> Ctx:
    """The request's :class:`Ctx`; raises :class:`LoginNeeded` when a login is required and missing."""
    console = _console(request)
    session = console.sessions.get(request.cookies.get(console.cookie))
    creds = session.credentials if session is not None else None
    basic = basic_credentials(request.headers.get("Authorization"))
    if basic is not None and creds is None:
        refused = await console.gate.verify(*basic)
        if refused is not None:
            raise LoginNeeded(f"{refused} refused the credentials of {basic[0]}")
        creds = basic
    if creds is None and console.gate.login_required:
        raise LoginNeeded()
    return Ctx(request, console, session, creds)


CtxDep = Annotated[Ctx, Depends(context)]
"""A page handler's ``ctx`` parameter: ``async def page(ctx: CtxDep) -> Response``."""


class Form:
    """A parsed urlencoded form: ``form["k"]`` (last value), ``form.get``, ``form.getlist``."""

    def __init__(self, pairs: list[tuple[str, str]]) -> None:
        self.pairs = pairs
        self._last = dict(pairs)

    def __getitem__(self, key: str) -> str:
        return self._last[key]

    def __contains__(self, key: object) -> bool:
        return key in self._last

    def get(self, key: str, default: str = "") -> str:
        return self._last.get(key, default)

    def getlist(self, key: str) -> list[str]:
        return [v for k, v in self.pairs if k == key]

    def items(self) -> list[tuple[str, str]]:
        return list(self._last.items())


async def read_form(request: Request) -> Form:
    """The body as a form; 413 past :data:`MAX_FORM_BYTES`, 415 for another content type."""
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind not in ("application/x-www-form-urlencoded", ""):
        raise ConsoleError(f"expected a form (application/x-www-form-urlencoded), got {kind}", 415)
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > MAX_FORM_BYTES:
        raise ConsoleError(f"the form is larger than {MAX_FORM_BYTES} bytes", 413)
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_FORM_BYTES:
            raise ConsoleError(f"the form is larger than {MAX_FORM_BYTES} bytes", 413)
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise ConsoleError("the form is not UTF-8", 400) from None
    return Form(parse_qsl(text, keep_blank_values=True, max_num_fields=10_000))


async def writable(ctx: Ctx) -> Form:
    """For every POST: refuse in read-only mode, check CSRF, and return the form."""
    if ctx.read_only:
        raise Forbidden("the console is read-only (read.only=true): nothing can be changed from it")
    form = await read_form(ctx.request)
    headers = ctx.request.headers
    check_csrf(ctx.session, headers.get("X-CSRF-Token") or form.get("csrf_token") or None,
               headers.get("Origin"), headers.get("Sec-Fetch-Site"), headers.get("Host"))
    return form



