"""HTTP Basic authentication (RFC 7617) for Seaway's REST APIs, with their users files.

Two operator setups, both named by a JAAS file (Java's ``-Djava.security.auth.login.config``):

- **Kafka Connect** (``rest.extension.classes=...BasicAuthSecurityRestExtension``): the file's
  ``KafkaConnect`` section holds one
  ``org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule`` entry whose
  ``file`` option names a ``.properties`` file of ``user=password`` (or ``user: password``)
  lines (:func:`connect_users`). No roles.
- **Confluent's registry** (``authentication.method=BASIC``): the section named by
  ``authentication.realm`` holds one ``org.eclipse.jetty.jaas.spi.PropertyFileLoginModule``
  entry whose ``file`` is Jetty's users file, ``user: password[,role...]`` lines, where a
  password may be ``MD5:<hex>`` or ``OBF:<Jetty obfuscation>`` instead of clear text
  (:func:`jetty_users`; ``CRYPT:`` is refused at start: Python has no portable crypt(3)).

:class:`BasicAuth` is the ASGI middleware: a request without valid credentials is answered
401 (with ``WWW-Authenticate: Basic realm=...``), one whose user has none of the required
roles 403, before any route sees it. Passwords are compared in constant time; the users
file is read once at start. Deviation from Kafka: an empty Connect credentials file (which
Kafka's module takes as "accept everyone") is refused at start.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from seaway.properties import PropertiesError, load_properties
from seaway.security.jaas import JaasEntry, parse_jaas_file

__all__ = [
    "CONNECT_LOGIN_MODULE",
    "CONNECT_REALM",
    "JETTY_LOGIN_MODULES",
    "AuthConfigError",
    "BasicAuth",
    "User",
    "Users",
    "basic_credentials",
    "connect_users",
    "deobfuscate",
    "jaas_file_from_opts",
    "jetty_users",
]

CONNECT_REALM = "KafkaConnect"
CONNECT_LOGIN_MODULE = "org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule"
JETTY_LOGIN_MODULES = ("org.eclipse.jetty.jaas.spi.PropertyFileLoginModule",
                       "org.eclipse.jetty.plus.jaas.spi.PropertyFileLoginModule")
_JAAS_PROPERTY = "-Djava.security.auth.login.config="

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
Response = tuple[int, str, bytes]
"""(status, content type, body) of a refusal."""


class AuthConfigError(ValueError):
    """The authentication setup cannot be used; the message names the setting or file at fault."""


@dataclass(frozen=True)
class User:
    name: str
    credential: str = field(repr=False)
    roles: frozenset[str] = frozenset()

    def check(self, password: str) -> bool:
        """Whether ``password`` is this user's (constant time for clear-text and MD5 credentials)."""
        credential = self.credential
        if credential.startswith("MD5:"):  # Jetty digests the ISO-8859-1 bytes
            given = hashlib.md5(password.encode("latin-1", "replace"), usedforsecurity=False).hexdigest()
            return hmac.compare_digest(given.encode(), credential[4:].strip().lower().encode())
        if credential.startswith("OBF:"):
            credential = deobfuscate(credential)
        return hmac.compare_digest(password.encode("utf-8"), credential.encode("utf-8"))


@dataclass(frozen=True)
class Users:
    """The users a server accepts, from one users file."""

    source: str
    users: Mapping[str, User]

    def authenticate(self, username: str, password: str) -> User | None:
        user = self.users.get(username)
        if user is None:
            hmac.compare_digest(password.encode("utf-8"), b"\0" * 16)  # about the same time as a wrong password
            return None
        return user if user.check(password) else None


def deobfuscate(text: str) -> str:
    """Jetty's ``Password.deobfuscate`` (``OBF:`` credentials: obfuscated, not encrypted)."""
    body = text[4:] if text.startswith("OBF:") else text
    out = bytearray()
    i = 0
    try:
        while i < len(body):
            if body[i] == "U":
                i += 1
                out.append((int(body[i:i + 4], 36) >> 8) & 0xFF)
            else:
                value = int(body[i:i + 4], 36)
                out.append(((value // 256 + value % 256 - 254) // 2) & 0xFF)
            i += 4
        return out.decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        raise AuthConfigError("an OBF: credential is not Jetty's obfuscated form") from None


def jaas_file_from_opts(opts: str | None) -> str | None:
    """The ``-Djava.security.auth.login.config=`` path in ``KAFKA_OPTS``-style JVM options, if any."""
    for word in (opts or "").split():
        if word.startswith(_JAAS_PROPERTY):
            return word[len(_JAAS_PROPERTY):].strip("\"'") or None
    return None


def _section(jaas_path: str, section: str, modules: tuple[str, ...], setting: str) -> JaasEntry:
    try:
        text = Path(jaas_path).read_text(encoding="utf-8")
    except OSError as exc:
        raise AuthConfigError(f"{setting}={jaas_path}: {exc.strerror or exc}") from None
    try:
        sections = parse_jaas_file(text)
    except ValueError as exc:
        raise AuthConfigError(f"{setting}={jaas_path}: {exc}") from None
    entries = sections.get(section)
    if not entries:
        raise AuthConfigError(f"{setting}={jaas_path} has no {section} {{ ... }}; section")
    if len(entries) != 1 or entries[0].module not in modules:
        found = ", ".join(e.module for e in entries)
        raise AuthConfigError(f"{setting}={jaas_path}: section {section} must hold exactly one "
                              f"{' or '.join(modules)} entry (found {found}); other login modules are not supported")
    entry = entries[0]
    if entry.flag != "required":
        raise AuthConfigError(f"{setting}={jaas_path}: the {section} login module must be 'required' "
                              f"(it is the only one), not {entry.flag!r}")
    if not entry.options.get("file"):
        raise AuthConfigError(f"{setting}={jaas_path}: the {section} login module needs file=\"<users file>\"")
    return entry


def _read_users_file(path: str, what: str) -> dict[str, str]:
    try:
        return load_properties(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise AuthConfigError(f"{what} {path}: {exc.strerror or exc}") from None
    except (PropertiesError, UnicodeDecodeError) as exc:
        raise AuthConfigError(f"{what} {path}: {exc}") from None


def connect_users(jaas_path: str, setting: str) -> Users:
    """Kafka Connect's basic-auth users, from the JAAS file's ``KafkaConnect`` section."""
    entry = _section(jaas_path, CONNECT_REALM, (CONNECT_LOGIN_MODULE,), setting)
    path = entry.options["file"]
    lines = _read_users_file(path, "the credentials file")
    if not lines:
        raise AuthConfigError(f"the credentials file {path} holds no user: Kafka would then accept any request "
                              "without checking credentials; Seaway refuses to start instead")
    return Users(path, {name: User(name, password) for name, password in lines.items()})


def jetty_users(jaas_path: str, realm: str, setting: str) -> Users:
    """Jetty ``PropertyFileLoginModule`` users (with roles), from the section named ``realm``."""
    entry = _section(jaas_path, realm, JETTY_LOGIN_MODULES, setting)
    path = entry.options["file"]
    users: dict[str, User] = {}
    for name, value in _read_users_file(path, "the users file").items():
        credential, *roles = [part.strip() for part in value.split(",")]
        if credential.startswith("CRYPT:"):
            raise AuthConfigError(f"the users file {path}: user {name}'s CRYPT: credential is not supported "
                                  "(use MD5:, OBF: or clear text)")
        if credential.startswith("OBF:"):
            deobfuscate(credential)  # fails now rather than at the first login
        users[name] = User(name, credential, frozenset(r for r in roles if r))
    if not users:
        raise AuthConfigError(f"the users file {path} holds no user")
    return Users(path, users)


def basic_credentials(authorization: bytes | str) -> tuple[str, str] | None:
    """(user, password) of an ``Authorization: Basic ...`` header value; None for any other value.

    Shared by every Seaway HTTP server that asks for Basic credentials (the REST APIs here, the
    broker's ``/metrics``), so all parse the header alike.
    """
    value = authorization.encode("latin-1") if isinstance(authorization, str) else bytes(authorization)
    scheme, _, token = value.strip().partition(b" ")
    if scheme.lower() != b"basic":
        return None
    try:
        decoded = base64.b64decode(token.strip(), validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return None
    username, sep, password = decoded.partition(":")
    return (username, password) if sep else None


def _credentials(scope: Scope) -> tuple[str, str] | None:
    for key, value in scope.get("headers", ()):
        if key.lower() == b"authorization":
            return basic_credentials(value)
    return None


class BasicAuth:
    """ASGI middleware: only requests with a known user's credentials (and a role in ``roles``,
    when given) reach ``app``. ``exempt(method, path)`` lets a request through unchecked
    (Connect's signed internal requests); ``unauthorized``/``forbidden`` are the refusals."""

    def __init__(self, app: ASGIApp, users: Users, realm: str, unauthorized: Response, forbidden: Response,
                 roles: frozenset[str] | None = None, exempt: Callable[[str, str], bool] | None = None) -> None:
        self.app = app
        self.users = users
        self.roles = roles
        self.exempt = exempt
        self.unauthorized = unauthorized
        self.forbidden = forbidden
        self._challenge = f'Basic realm="{realm}"'.encode()

    async def _refuse(self, send: Send, response: Response, challenge: bool) -> None:
        status, content_type, body = response
        headers = [(b"content-type", content_type.encode()), (b"content-length", str(len(body)).encode())]
        if challenge:
            headers.append((b"www-authenticate", self._challenge))
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or (self.exempt is not None and self.exempt(scope["method"], scope["path"])):
            await self.app(scope, receive, send)
            return
        given = _credentials(scope)
        user = None if given is None else self.users.authenticate(*given)
        if user is None:
            await self._refuse(send, self.unauthorized, challenge=True)
            return
        if self.roles is not None and not (user.roles & self.roles):
            await self._refuse(send, self.forbidden, challenge=False)
            return
        scope.setdefault("state", {})["principal"] = user.name
        await self.app(scope, receive, send)
