"""The REST API's listeners, TLS and HTTP Basic authentication, from the worker's config.

As Kafka Connect's ``RestServer`` and ``BasicAuthSecurityRestExtension``:

- ``listeners``: ``http://host:port`` and ``https://host:port`` entries, every one served.
  A listener without a host binds **127.0.0.1** (Kafka: every interface; a documented Seaway
  deviation): write ``http://0.0.0.0:8083`` to serve other machines.
- ``admin.listeners``: unset, ``/admin/loggers`` is served on the regular listeners; empty, it
  is served nowhere; else only there (and a 404 on the regular listeners).
- HTTPS: ``listeners.https.ssl.*`` (``admin.listeners.https.ssl.*``), all or nothing, else the
  worker's ``ssl.*`` keys (:func:`~seaway.connect.runtime.worker_security.rest_tls_settings`);
  PEM or PKCS12 key material; ``ssl.client.auth`` (or ``ssl.client.authentication``)
  ``requested``/``required`` asks for client certificates signed by the truststore's CAs.
- ``rest.extension.classes=org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension``:
  every request needs HTTP Basic credentials of a user in the credentials file that the JAAS
  file's ``KafkaConnect`` section names. The JAAS file comes from the worker key
  ``java.security.auth.login.config`` (``CONNECT_JAVA_SECURITY_AUTH_LOGIN_CONFIG`` in a
  container), else from ``-Djava.security.auth.login.config=<file>`` in ``KAFKA_OPTS``, as
  ``connect-distributed.sh`` users set it. Without credentials, or with wrong ones: 401 with
  Kafka's text ``User cannot access the resource.``. As in Kafka, the two internal endpoints
  workers call on each other (``POST /connectors/{c}/tasks``, ``PUT /connectors/{c}/fence``)
  are exempt: they carry the cluster's request signature (``inter.worker.*``) instead, and a
  request a worker forwards to another carries the user's own ``Authorization`` header. Only
  ``connect.protocol=sessioned`` signs, so basic authentication with ``eager`` or
  ``compatible`` is refused at start (Kafka would leave those endpoints open).

Everything is checked and loaded when the worker starts, so a bad keystore, a missing JAAS
file or an unknown key stops it with a message naming the setting.
"""

from __future__ import annotations

import re
import ssl
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from fastapi import FastAPI
from seaway.connect.api import ConfigError
from seaway.connect.runtime.config import WorkerConfig
from seaway.connect.runtime.worker_security import BASIC_AUTH_EXTENSION, rest_tls_settings
from seaway.connect.runtime.worker_settings import GroupSettings
from seaway.security.basic_auth import (
    CONNECT_REALM,
    AuthConfigError,
    BasicAuth,
    Users,
    connect_users,
    jaas_file_from_opts,
)
from seaway.security.tls import TlsConfigError, build_server_context

__all__ = [
    "JAAS_CONFIG_KEY",
    "RestListener",
    "RestSecurity",
    "install_basic_auth",
    "is_internal_request",
    "parse_listeners",
    "rest_security",
]

JAAS_CONFIG_KEY = "java.security.auth.login.config"
UNAUTHORIZED = (401, "text/plain", b"User cannot access the resource.")
_INTERNAL = (("POST", re.compile(r"/connectors/[^/]+/tasks/?")), ("PUT", re.compile(r"/connectors/[^/]+/fence/?")))


@dataclass(frozen=True)
class RestListener:
    scheme: str
    host: str
    port: int

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.scheme}://{host}:{self.port}"


@dataclass(frozen=True)
class RestSecurity:
    """What the REST server needs: where to listen, TLS per kind of listener, the users."""

    listeners: tuple[RestListener, ...]
    admin_listeners: tuple[RestListener, ...] | None  # None: /admin on the regular listeners
    server_ssl: ssl.SSLContext | None
    admin_ssl: ssl.SSLContext | None
    client_ssl: ssl.SSLContext | None
    users: Users | None


def parse_listeners(values: list[str] | None, key: str) -> tuple[RestListener, ...]:
    """``http://host:port`` / ``https://host:port`` entries; an empty host is 127.0.0.1."""
    out = []
    for value in values or []:
        item = value.strip()
        if not item:
            continue
        parts = urlsplit(item)
        scheme = parts.scheme.lower()
        try:
            port = parts.port
        except ValueError:
            port = None
        if scheme not in ("http", "https") or port is None or parts.path not in ("", "/"):
            raise ConfigError.invalid(key, ",".join(values or []), f"{item!r} is not http://host:port or "
                                                                     "https://host:port")
        out.append(RestListener(scheme, parts.hostname or "127.0.0.1", port))
    return tuple(out)


def is_internal_request(method: str, path: str) -> bool:
    """The worker-to-worker endpoints Kafka's basic-auth filter lets through (they are signed)."""
    return any(method == m and pattern.fullmatch(path) for m, pattern in _INTERNAL)


def _server_context(config: WorkerConfig, admin: bool) -> ssl.SSLContext:
    settings = rest_tls_settings(config.originals(), admin=admin)
    try:
        return build_server_context(settings)
    except TlsConfigError as exc:
        which = "admin.listeners" if admin else "listeners"
        raise ConfigError(f"{which} (https, {settings.prefix}* settings): {exc}", name=settings.prefix) from None


def _jaas_file(config: WorkerConfig, environ: Mapping[str, str]) -> tuple[str, str]:
    """(path, where it came from) of the JAAS file, or a ConfigError saying how to give it."""
    value = config.originals().get(JAAS_CONFIG_KEY)
    if value is not None and str(value).strip():
        return str(value).strip(), JAAS_CONFIG_KEY
    from_opts = jaas_file_from_opts(environ.get("KAFKA_OPTS"))
    if from_opts:
        return from_opts, "KAFKA_OPTS -Djava.security.auth.login.config"
    raise ConfigError(f"rest.extension.classes={BASIC_AUTH_EXTENSION} needs a JAAS file with a {CONNECT_REALM} "
                      f"section: set the worker key {JAAS_CONFIG_KEY}=<file> or "
                      "KAFKA_OPTS=-Djava.security.auth.login.config=<file>", name="rest.extension.classes")


def _check_signed_internal_requests(config: WorkerConfig) -> None:
    """Basic authentication needs ``connect.protocol=sessioned`` (a distributed worker's default).

    The internal endpoints are exempt from basic authentication (as in Kafka) because the
    cluster's request signature protects them, and only the ``sessioned`` protocol signs: under
    ``eager`` or ``compatible`` anyone reaching the port could write task configs. Kafka starts
    anyway; Seaway refuses, naming the key.
    """
    group = getattr(config, "group", None)  # a distributed worker's group settings (REST sees WorkerConfig)
    if not isinstance(group, GroupSettings):  # standalone: no internal endpoints
        return
    protocol = group.connect_protocol
    if protocol.strip().lower() == "sessioned":
        return
    raise ConfigError.invalid("connect.protocol", protocol,
                              f"rest.extension.classes={BASIC_AUTH_EXTENSION} needs connect.protocol=sessioned "
                              "(the default): the internal endpoints, exempt from basic authentication, are "
                              "protected only by the request signatures of the sessioned protocol")


def rest_security(config: WorkerConfig, environ: Mapping[str, str]) -> RestSecurity:
    """Check and load everything the REST server needs; raises ConfigError naming the setting."""
    listeners = parse_listeners(list(config.rest.listeners), "listeners")
    if not listeners:
        raise ConfigError.invalid("listeners", "", "at least one http:// or https:// listener is needed")
    raw_admin = config.rest.admin_listeners
    admin = None if raw_admin is None else parse_listeners(list(raw_admin), "admin.listeners")
    https = any(listener.scheme == "https" for listener in listeners)
    server_ssl = _server_context(config, admin=False) if https else None
    admin_ssl = (_server_context(config, admin=True)
                 if admin and any(listener.scheme == "https" for listener in admin) else None)
    client_ssl = config.client_security.rest_client_context() if https else None
    users = None
    if BASIC_AUTH_EXTENSION in config.rest.extension_classes:
        _check_signed_internal_requests(config)
        path, source = _jaas_file(config, environ)
        try:
            users = connect_users(path, source)
        except AuthConfigError as exc:
            raise ConfigError(str(exc), name=source) from None
    return RestSecurity(listeners, admin, server_ssl, admin_ssl, client_ssl, users)


def install_basic_auth(app: FastAPI, users: Users) -> None:
    """Kafka's basic-auth filter as the app's outermost middleware (add it last)."""
    app.add_middleware(BasicAuth, users=users, realm=CONNECT_REALM, unauthorized=UNAUTHORIZED,
                       forbidden=(403, "text/plain", b"User cannot access the resource."), exempt=is_internal_request)
