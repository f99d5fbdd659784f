"""How a registry client authenticates and verifies TLS, from Confluent's client settings.

The settings Confluent's serializers and ``AvroConverter`` take (``value.converter.*`` for a
Connect worker, with the prefix stripped):

- ``basic.auth.credentials.source``: ``URL`` (default: ``https://user:password@host:8081``
  in ``schema.registry.url``), ``USER_INFO`` (``basic.auth.user.info`` or
  ``schema.registry.basic.auth.user.info``, ``user:password``) or ``SASL_INHERIT`` (the
  ``username``/``password`` of ``sasl.jaas.config``);
- ``schema.registry.ssl.*``: Kafka's client TLS names (``truststore.location``/``password``/
  ``type``, ``truststore.certificates``, ``keystore.*`` and ``key.password`` for a client
  certificate, ``endpoint.identification.algorithm``), PEM or PKCS12; without a truststore the
  system's CAs verify the registry.

Refused, naming the key: ``bearer.auth.*`` (OAuth bearer tokens are not supported), other
``basic.auth.credentials.source`` values, and ``schema.registry.ssl.*`` keys that do not exist
(a typo would silently weaken the setup). Passwords never appear in messages.
"""

from __future__ import annotations

import ssl
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

from seaway.connect.api.errors import ConfigError
from seaway.security.jaas import parse_jaas
from seaway.security.tls import TlsConfigError, build_client_context, tls_settings

__all__ = ["CREDENTIALS_SOURCE", "USER_INFO", "RegistryClientSecurity", "registry_client_security"]

CREDENTIALS_SOURCE = "basic.auth.credentials.source"
USER_INFO = "basic.auth.user.info"
SSL_PREFIX = "schema.registry.ssl."
_SSL_NAMES = frozenset({
    "keystore.type", "keystore.location", "keystore.password", "key.password", "keystore.certificate.chain",
    "keystore.key", "truststore.type", "truststore.location", "truststore.password", "truststore.certificates",
    "endpoint.identification.algorithm", "protocol", "enabled.protocols", "cipher.suites", "keymanager.algorithm",
    "trustmanager.algorithm",
})


@dataclass(frozen=True)
class RegistryClientSecurity:
    """What an httpx client to the registry needs: the URL without credentials, auth, TLS."""

    url: str
    auth: tuple[str, str] | None = field(default=None, repr=False)
    verify: ssl.SSLContext | bool = True


def _split_user_info(value: str, key: str) -> tuple[str, str]:
    user, sep, password = value.partition(":")
    if not sep or not user:
        raise ConfigError(f"{key} must be user:password", name=key)
    return user, password


def registry_client_security(url: str, props: Mapping[str, Any]) -> RegistryClientSecurity:
    """The registry client's URL, credentials and TLS from Confluent's settings; raises ConfigError."""
    for key in props:
        if key.startswith("bearer.auth."):
            raise ConfigError(f"{key}: bearer token authentication is not supported by Seaway's registry client "
                              "(use basic.auth.credentials.source=USER_INFO)", name=key)
    parts = urlsplit(url)
    source = str(props.get(CREDENTIALS_SOURCE) or "URL").strip().upper()
    auth: tuple[str, str] | None = None
    if source == "URL":
        if parts.username is not None:
            auth = (unquote(parts.username), unquote(parts.password or ""))
    elif source == "USER_INFO":
        key = USER_INFO if props.get(USER_INFO) else f"schema.registry.{USER_INFO}"
        value = props.get(key)
        if not value:
            raise ConfigError(f"{CREDENTIALS_SOURCE}=USER_INFO needs {USER_INFO}=user:password", name=USER_INFO)
        auth = _split_user_info(str(value), key)
    elif source == "SASL_INHERIT":
        jaas = props.get("sasl.jaas.config")
        if not jaas:
            raise ConfigError(f"{CREDENTIALS_SOURCE}=SASL_INHERIT needs sasl.jaas.config", name="sasl.jaas.config")
        try:
            options = parse_jaas(str(jaas)).options
        except ValueError as exc:
            raise ConfigError(f"sasl.jaas.config: {exc}", name="sasl.jaas.config") from None
        if "username" not in options or "password" not in options:
            raise ConfigError('sasl.jaas.config: needs username="..." and password="..."', name="sasl.jaas.config")
        auth = (options["username"], options["password"])
    else:
        raise ConfigError.invalid(CREDENTIALS_SOURCE, source, "expected URL, USER_INFO or SASL_INHERIT")
    netloc = parts.hostname or ""
    if ":" in netloc:
        netloc = f"[{netloc}]"
    if parts.port is not None:
        netloc += f":{parts.port}"
    clean = urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
    ssl_values: dict[str, str] = {}
    for key, value in props.items():
        if key.startswith(SSL_PREFIX):
            name = key[len(SSL_PREFIX):]
            if name not in _SSL_NAMES:
                raise ConfigError(f"{key} is not a registry client TLS setting Seaway knows (check for a typo)",
                                  name=key)
            ssl_values[name] = str(value)
    verify: ssl.SSLContext | bool = True
    if parts.scheme == "https" and ssl_values:
        settings = tls_settings(ssl_values, SSL_PREFIX)
        try:
            verify = build_client_context(settings)
        except TlsConfigError as exc:
            raise ConfigError(str(exc), name=str(exc).split("=", 1)[0].split(":", 1)[0]) from None
    return RegistryClientSecurity(clean, auth, verify)
