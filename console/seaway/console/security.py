"""Who may use the console, with whose credentials, and protection of every state-changing request.

**Login.** The console keeps no users of its own. A Connect cluster or a registry that has HTTP
Basic authentication on and no credentials configured for the console
(``connect.<name>.basic.auth.user.info``, the registry's ``basic.auth.user.info``) needs the
user's: the console then asks every visitor to log in (a form, or an ``Authorization: Basic``
header for scripts) and checks the credentials against those servers themselves; their answer
(401 or not) decides, and every later call goes out with them, so the servers' own users and
roles apply. Whether a server wants credentials is found by asking it anonymously at start and
again whenever it answers 401. Kafka is reached with the configured client settings
(``sasl.*``): one principal for the console.

**Sessions.** A random 256-bit id in a cookie that is ``HttpOnly`` and ``SameSite=Strict``, and
``Secure`` with the ``__Host-`` prefix when the console serves HTTPS; the credentials stay in
the console's memory, never in the cookie. A session ends after ``session.idle.timeout.ms``
unused, 12 hours after its login, at logout, or when its credentials are refused; the login
rotates the id (no fixation). At most :data:`MAX_SESSIONS` are kept (the least recently used
goes first).

**CSRF.** Every POST (the only state-changing method the console serves) must carry the
session's token, in the ``X-CSRF-Token`` header (htmx sends it) or the ``csrf_token`` form
field, compared in constant time; a request whose ``Origin`` is another site, or that the
browser marks ``Sec-Fetch-Site: cross-site``, is refused as well. The login form is protected
the same way (login CSRF).

**Read-only mode** (``read.only=true``): pages show no action, and every POST is refused with 403.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import hmac
import secrets
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from seaway.console.errors import ConsoleError, Forbidden, LoginRequired
from seaway.console.rest import RestBackend

__all__ = ["COOKIE", "MAX_SESSIONS", "Gate", "Session", "Sessions", "basic_credentials", "check_csrf",
           "cookie_name", "safe_next"]

COOKIE = "seaway_console"
MAX_SESSIONS = 10_000
ABSOLUTE_S = 12 * 3600
PROBE_TIMEOUT_S = 5.0
_VERIFIED_S = 60.0


def cookie_name(https: bool) -> str:
    """``__Host-`` binds the cookie to this origin (Secure, Path=/, no Domain), which needs HTTPS."""
    return f"__Host-{COOKIE}" if https else COOKIE


@dataclass
class Session:
    sid: str
    csrf: str
    user: str | None = None
    password: str | None = field(default=None, repr=False)
    created: float = field(default_factory=time.monotonic)
    seen: float = field(default_factory=time.monotonic)

    @property
    def credentials(self) -> tuple[str, str] | None:
        return None if self.user is None or self.password is None else (self.user, self.password)


class Sessions:
    """In-memory sessions, bounded, expiring when idle and absolutely."""

    def __init__(self, idle_s: float, max_sessions: int = MAX_SESSIONS) -> None:
        self.idle_s = idle_s
        self.max = max_sessions
        self._items: OrderedDict[str, Session] = OrderedDict()

    def get(self, sid: str | None) -> Session | None:
        if not sid:
            return None
        session = self._items.get(sid)
        if session is None:
            return None
        now = time.monotonic()
        if now - session.seen > self.idle_s or now - session.created > ABSOLUTE_S:
            del self._items[sid]
            return None
        session.seen = now
        self._items.move_to_end(sid)
        return session

    def new(self, user: str | None = None, password: str | None = None) -> Session:
        session = Session(secrets.token_urlsafe(32), secrets.token_urlsafe(32), user, password)
        self._items[session.sid] = session
        while len(self._items) > self.max:
            self._items.popitem(last=False)
        return session

    def drop(self, sid: str) -> None:
        self._items.pop(sid, None)

    def __len__(self) -> int:
        return len(self._items)


def basic_credentials(header: str | None) -> tuple[str, str] | None:
    """``Authorization: Basic ...`` -> (user, password); None when absent or malformed."""
    if not header or header[:6].lower() != "basic ":
        return None
    try:
        user, sep, password = base64.b64decode(header[6:].strip(), validate=True).decode("utf-8").partition(":")
    except (ValueError, UnicodeDecodeError):
        return None
    return (user, password) if sep and user else None


def check_csrf(session: Session | None, token: str | None, origin: str | None, fetch_site: str | None,
               host: str | None) -> None:
    """Raise Forbidden unless the request carries its session's token and comes from this site."""
    if fetch_site is not None and fetch_site.lower() == "cross-site":
        raise Forbidden("cross-site request refused (CSRF protection)")
    if origin and origin != "null" and host and urlsplit(origin).netloc.lower() != host.lower():
        raise Forbidden(f"request from another origin ({origin}) refused (CSRF protection)")
    if session is None or not token or not hmac.compare_digest(session.csrf.encode(), token.encode()):
        raise Forbidden("missing or invalid CSRF token: reload the page and try again")


def safe_next(target: str | None) -> str:
    """Where to go after login: a path on this site only (never ``//evil`` or ``https://evil``)."""
    if not target or not target.startswith("/") or target.startswith(("//", "/\\")):
        return "/"
    return target


class Gate:
    """Decides whether users must log in, and checks their credentials against the servers that want them."""

    def __init__(self, backends: Sequence[tuple[RestBackend, str]]) -> None:
        """``backends``: each REST server with a path that requires authentication when it is on."""
        self._backends = [(b, path) for b, path in backends if b.needs_user]
        self._wanting: set[str] = set()
        self._verified: dict[str, float] = {}
        self.probed = False

    @property
    def login_required(self) -> bool:
        return bool(self._wanting)

    async def probe(self, timeout: float = PROBE_TIMEOUT_S) -> None:
        """Ask each server anonymously; those answering 401 want the user's credentials.

        A server that does not answer within ``timeout`` is decided later, by its first 401.
        """
        async def one(backend: RestBackend, path: str) -> None:
            try:
                await backend.request("GET", path, None)
                self._wanting.discard(backend.label)
            except LoginRequired:
                self._wanting.add(backend.label)
            except ConsoleError:
                pass  # down or failing: its pages say so; the next probe decides
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.gather(*(one(b, p) for b, p in self._backends)), timeout)
        self.probed = True

    def saw_login_required(self, label: str) -> None:
        self._wanting.add(label)

    async def verify(self, user: str, password: str) -> str | None:
        """None if every server that wants credentials accepts these, else which refused them."""
        key = hashlib.sha256(f"{user}\0{password}".encode()).hexdigest()
        if time.monotonic() - self._verified.get(key, -_VERIFIED_S) < _VERIFIED_S:
            return None
        for backend, path in self._backends:
            if backend.label not in self._wanting:
                continue
            try:
                await backend.request("GET", path, (user, password))
            except LoginRequired:
                return backend.label
            except ConsoleError:
                continue  # refused for another reason (403: a role it lacks) or down: not a wrong password
        if len(self._verified) > 1000:
            self._verified.clear()
        self._verified[key] = time.monotonic()
        return None
