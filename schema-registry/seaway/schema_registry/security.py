"""The registry's HTTPS listener, HTTP Basic authentication and secured ``_schemas`` clients.

As Confluent's registry (rest-utils on Jetty):

- ``listeners=https://host:port``: ``ssl.keystore.*`` (PEM or PKCS12, and a PKCS12 file under
  the default type JKS), ``ssl.truststore.*``, ``ssl.client.authentication`` NONE / REQUESTED /
  REQUIRED (client certificates signed by the truststore's CAs). The same settings verify
  another instance when a write is forwarded to an https leader.
- ``authentication.method=BASIC``: every request needs HTTP Basic credentials of a user of the
  Jetty users file named by the JAAS file's ``authentication.realm`` section
  (``org.eclipse.jetty.jaas.spi.PropertyFileLoginModule``); without them 401
  ``{"error_code":401,"message":"Unauthorized"}`` (with ``WWW-Authenticate``), and 403
  ``Forbidden`` for a user with none of ``authentication.roles`` (``*``, the default: any
  authenticated user). ``authentication.skip.paths`` (``/path`` or ``/prefix/*``) are open.
  The JAAS file comes from ``java.security.auth.login.config`` (a property, or
  ``SCHEMA_REGISTRY_JAVA_SECURITY_AUTH_LOGIN_CONFIG``), else from
  ``-Djava.security.auth.login.config=<file>`` in ``SCHEMA_REGISTRY_OPTS`` as Confluent's
  start script takes it. A forwarded write carries the client's ``Authorization`` header.
- ``kafkastore.security.protocol`` / ``kafkastore.sasl.*`` / ``kafkastore.ssl.*`` for the
  ``_schemas`` producer and consumers (librdkafka) and the leader-election group member
  (Seaway's protocol client), Java's names translated by :mod:`seaway.security.kafka_client`.

Everything is loaded when the registry starts, so a bad keystore or users file stops it with a
message naming the setting (:class:`~seaway.schema_registry.settings.SettingsError`).
"""

from __future__ import annotations

import ssl
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from fastapi import FastAPI
from seaway.protocol.client import ClientSecurity
from seaway.protocol.client_security import protocol_security
from seaway.schema_registry.settings import RegistrySettings, SettingsError
from seaway.security.basic_auth import AuthConfigError, BasicAuth, Users, jaas_file_from_opts, jetty_users
from seaway.security.kafka_client import ClientConfigError, librdkafka_config
from seaway.security.tls import TlsConfigError, TlsSettings, build_client_context, build_server_context

__all__ = ["RegistrySecurity", "install_authentication", "registry_security"]

UNAUTHORIZED = (401, "application/json", b'{"error_code":401,"message":"Unauthorized"}')
FORBIDDEN = (403, "application/json", b'{"error_code":403,"message":"Forbidden"}')


@dataclass(frozen=True)
class RegistrySecurity:
    server_ssl: ssl.SSLContext | None = None
    client_ssl: ssl.SSLContext | None = None
    users: Users | None = None
    realm: str = ""
    roles: frozenset[str] | None = None
    skip_paths: tuple[str, ...] = ()
    kafka_client: dict[str, Any] = field(default_factory=dict, repr=False)
    protocol: ClientSecurity = field(default_factory=ClientSecurity)


def _tls(settings: RegistrySettings) -> TlsSettings:
    client_auth = settings.ssl_client_authentication.lower()
    if settings.ssl_client_auth and client_auth == "none":
        client_auth = "required"  # the deprecated boolean
    protocols = tuple(p.strip() for p in settings.ssl_enabled_protocols.split(",") if p.strip())
    return TlsSettings(
        prefix="ssl.", keystore_type=settings.ssl_keystore_type,
        keystore_location=settings.ssl_keystore_location or None,
        keystore_password=settings.ssl_keystore_password or None, key_password=settings.ssl_key_password or None,
        truststore_type=settings.ssl_truststore_type, truststore_location=settings.ssl_truststore_location or None,
        truststore_password=settings.ssl_truststore_password or None,
        client_auth=client_auth, enabled_protocols=protocols or ("TLSv1.2", "TLSv1.3"),
        protocol=settings.ssl_protocol if settings.ssl_protocol != "TLS" else "TLSv1.3",
        cipher_suites=tuple(c.strip() for c in settings.ssl_cipher_suites.split(",") if c.strip()),
        endpoint_identification_algorithm=settings.ssl_endpoint_identification_algorithm,
        names={"client.auth": "ssl.client.authentication"},
    )


def _users(settings: RegistrySettings, environ: Mapping[str, str]) -> Users:
    if not settings.authentication_realm.strip():
        raise SettingsError("authentication.realm must name the JAAS file's section (e.g. SchemaRegistry-Props) "
                            "when authentication.method=BASIC")
    path, source = settings.java_security_auth_login_config.strip(), "java.security.auth.login.config"
    if not path:
        path, source = jaas_file_from_opts(environ.get("SCHEMA_REGISTRY_OPTS")) or "", "SCHEMA_REGISTRY_OPTS"
    if not path:
        raise SettingsError("authentication.method=BASIC needs a JAAS file: set java.security.auth.login.config=<file> "
                            "or SCHEMA_REGISTRY_OPTS=-Djava.security.auth.login.config=<file>")
    try:
        return jetty_users(path, settings.authentication_realm.strip(), source)
    except AuthConfigError as exc:
        raise SettingsError(str(exc)) from None


def registry_security(settings: RegistrySettings, environ: Mapping[str, str]) -> RegistrySecurity:
    """Check and load the registry's security settings; raises SettingsError naming the one at fault."""
    try:
        kafka_client = librdkafka_config(settings.kafkastore_client, "kafkastore.")
        protocol = protocol_security(settings.kafkastore_client, "kafkastore.")
    except ClientConfigError as exc:
        raise SettingsError(str(exc)) from None
    https = any(item.strip().lower().startswith("https://") for item in settings.listeners.split(","))
    server_ssl = client_ssl = None
    tls = _tls(settings)
    try:
        if https:
            server_ssl = build_server_context(tls)
        if https or settings.inter_instance_protocol.strip().lower() == "https":
            client_ssl = build_client_context(tls)  # its keystore too, for a leader that wants client certificates
    except TlsConfigError as exc:
        raise SettingsError(str(exc)) from None
    users = roles = None
    method = settings.authentication_method.strip().upper() or "NONE"
    if method == "BASIC":
        users = _users(settings, environ)
        wanted = {r.strip() for r in settings.authentication_roles.split(",") if r.strip()}
        roles = None if not wanted or "*" in wanted or "**" in wanted else frozenset(wanted)
    skip = tuple(p.strip() for p in settings.authentication_skip_paths.split(",") if p.strip())
    return RegistrySecurity(server_ssl, client_ssl, users, settings.authentication_realm.strip(), roles, skip,
                            kafka_client, protocol)


def _skipped(paths: tuple[str, ...]) -> Any:
    def exempt(method: str, path: str) -> bool:
        return any(path == p or (p.endswith("/*") and (path == p[:-2] or path.startswith(p[:-1])))
                   for p in paths)
    return exempt


def install_authentication(app: FastAPI, security: RegistrySecurity) -> None:
    """HTTP Basic authentication in front of every route (outermost: nothing is read before it)."""
    if security.users is None:
        return
    app.add_middleware(BasicAuth, users=security.users, realm=security.realm, unauthorized=UNAUTHORIZED,
                       forbidden=FORBIDDEN, roles=security.roles, exempt=_skipped(security.skip_paths))
