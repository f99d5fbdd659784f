"""The console's settings: where Kafka, the Connect clusters and the registry are, and how to reach them.

One ``.properties`` file (``seaway console --config console.properties``), command-line flags
winning over it, and ``--override key=value`` winning over both. The names reuse those the
parts already know, so a Kafka client file, a Connect worker's client settings and Confluent's
registry client settings can be pasted in:

=============================================  ============================================================
``listeners``                                  where the console serves, ``http://127.0.0.1:8080`` (loopback
                                               unless a host is named, as every Seaway port);
                                               ``https://...`` with ``ssl.certificate.location`` +
                                               ``ssl.key.location`` (PEM)
``bootstrap.servers``                          the Kafka cluster (``localhost:9092``)
``security.protocol``, ``sasl.*``, ``ssl.*``   Kafka client security, Java's names or librdkafka's
``connect.clusters``                           names of the Connect clusters, ``connect`` by default
``connect.<name>.url``                         a cluster's REST URL (several workers: comma-separated,
                                               the first that answers serves)
``connect.<name>.basic.auth.user.info``        ``user:password`` for that cluster; without it the console
                                               asks the user to log in and uses their credentials
``connect.<name>.ssl.truststore.*``            PEM/PKCS12 CA for an https cluster (Kafka's client TLS names)
``schema.registry.url``                        the registry (empty: no registry pages, no decoding)
``basic.auth.credentials.source``, ...         Confluent's registry client settings
                                               (``basic.auth.user.info``, ``schema.registry.ssl.*``)
``metrics.urls``                               the brokers' Prometheus ``/metrics`` (comma-separated)
``metrics.basic.auth.credentials.source``      whose HTTP Basic credentials scrape them (a broker with an
                                               authorizer asks for a broker user's): ``SASL_INHERIT``
                                               (default: the Kafka client's SASL PLAIN/SCRAM user, if
                                               any) or ``USER_INFO``
``metrics.basic.auth.user.info``               ``user:password`` for them (implies ``USER_INFO``)
``metrics.ssl.truststore.*``                   PEM/PKCS12 CA of an ``https://`` metrics listener
``read.only``                                  ``true``: no page changes anything (operators' mode)
``session.idle.timeout.ms``                    a login session ends after this long unused (1800000)
``lag.sample.interval.ms``                     how often every group's lag is sampled for its trend (10000)
``messages.max.records``                       the most records one message-browser page shows (1000)
=============================================  ============================================================

A value that cannot be used is a :class:`SettingsError` naming the key, raised before anything
starts. Secrets are never part of an error message.
"""

from __future__ import annotations

import ssl
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from seaway.errors import SeawayError

__all__ = [
    "DEFAULT_LISTENER",
    "ConnectTarget",
    "ConsoleSettings",
    "HttpTarget",
    "SettingsError",
    "parse_settings",
]

DEFAULT_LISTENER = "http://127.0.0.1:8080"
_NON_KAFKA_PREFIXES = ("connect.", "schema.registry.", "basic.auth.", "bearer.auth.", "metrics.", "listeners",
                       "lag.", "messages.", "session.", "read.only", "ssl.certificate.location", "ssl.key.location")
_CLUSTER_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")


class SettingsError(SeawayError, ValueError):
    """A console setting that cannot be used; the message names the key."""


@dataclass(frozen=True)
class HttpTarget:
    """A REST server the console calls: its URLs, configured credentials (or None), how TLS is verified."""

    urls: tuple[str, ...]
    auth: tuple[str, str] | None = field(default=None, repr=False)
    verify: ssl.SSLContext | bool = True

    @property
    def url(self) -> str:
        return self.urls[0]


@dataclass(frozen=True)
class ConnectTarget(HttpTarget):
    """One Connect cluster, by the name the pages show."""

    name: str = "connect"


@dataclass(frozen=True)
class ConsoleSettings:
    """Everything the app needs; build it with :func:`parse_settings`."""

    host: str = "127.0.0.1"
    port: int = 8080
    tls_cert: str | None = None
    tls_key: str | None = None
    bootstrap_servers: str = "localhost:9092"
    kafka: Mapping[str, Any] = field(default_factory=dict, repr=False)
    """librdkafka settings (security translated from Java's names), without bootstrap.servers."""
    connect: tuple[ConnectTarget, ...] = ()
    registry: HttpTarget | None = None
    metrics_urls: tuple[str, ...] = ()
    metrics_auth: tuple[str, str] | None = field(default=None, repr=False)
    """HTTP Basic credentials for ``metrics_urls`` (see :func:`_metrics_auth`)."""
    metrics_verify: ssl.SSLContext | bool = True
    read_only: bool = False
    session_idle_timeout_ms: int = 1_800_000
    lag_sample_interval_ms: int = 10_000
    messages_max_records: int = 1000

    @property
    def https(self) -> bool:
        return self.tls_cert is not None


def _int(props: Mapping[str, str], key: str, default: int, low: int, high: int) -> int:
    raw = props.get(key)
    if raw is None or not raw.strip():
        return default
    try:
        value = int(raw.strip())
    except ValueError:
        raise SettingsError(f"{key}={raw}: not an integer") from None
    if not low <= value <= high:
        raise SettingsError(f"{key}={value}: must be between {low} and {high}")
    return value


def _bool(props: Mapping[str, str], key: str) -> bool:
    raw = props.get(key, "false").strip().lower()
    if raw not in ("true", "false"):
        raise SettingsError(f"{key}={props.get(key)}: expected true or false")
    return raw == "true"


def _urls(key: str, raw: str) -> tuple[str, ...]:
    urls = tuple(u.strip().rstrip("/") for u in raw.split(",") if u.strip())
    if not urls:
        raise SettingsError(f"{key} is empty")
    for url in urls:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise SettingsError(f"{key}={url}: expected http://host:port or https://host:port")
    return urls


def _listener(raw: str) -> tuple[str, int, bool]:
    parts = urlsplit(raw.strip())
    if parts.scheme not in ("http", "https"):
        raise SettingsError(f"listeners={raw}: expected http://host:port or https://host:port")
    try:
        port = parts.port
    except ValueError:
        port = None
    if port is None:
        raise SettingsError(f"listeners={raw}: no port (write http://127.0.0.1:8080)")
    return parts.hostname or "127.0.0.1", port, parts.scheme == "https"


def _tls_context(prefix: str, props: Mapping[str, str]) -> ssl.SSLContext | bool:
    """A client context from Kafka's ``ssl.truststore.*``/``ssl.keystore.*`` names under ``prefix``.

    True (the system's CAs) when there are none.
    """
    from seaway.security.tls import TlsConfigError, build_client_context, tls_settings

    values = {k[len(prefix):]: v for k, v in props.items() if k.startswith(prefix)}
    if not values:
        return True
    try:
        return build_client_context(tls_settings(values, prefix))
    except TlsConfigError as exc:
        raise SettingsError(str(exc)) from None


def _user_info(key: str, raw: str | None) -> tuple[str, str] | None:
    if raw is None or not raw.strip():
        return None
    user, sep, password = raw.strip().partition(":")
    if not sep or not user:
        raise SettingsError(f"{key} must be user:password")
    return user, password


def _connect_targets(props: Mapping[str, str]) -> tuple[ConnectTarget, ...]:
    names = [n.strip() for n in props.get("connect.clusters", "connect").split(",") if n.strip()]
    targets: list[ConnectTarget] = []
    for name in names:
        if not set(name) <= _CLUSTER_NAME_CHARS:
            raise SettingsError(f"connect.clusters: {name!r} is not a valid cluster name (letters, digits, _ and -)")
        prefix = f"connect.{name}."
        raw = props.get(prefix + "url")
        if raw is None or not raw.strip():
            continue  # a cluster named but not located: not shown (seaway up without a worker)
        known = {"url", "basic.auth.user.info"}
        for key in props:
            if key.startswith(prefix) and key[len(prefix):] not in known and not key.startswith(prefix + "ssl."):
                raise SettingsError(f"{key} is not a Connect cluster setting the console knows "
                                    f"(url, basic.auth.user.info, ssl.*)")
        user_key = prefix + "basic.auth.user.info"
        targets.append(ConnectTarget(urls=_urls(prefix + "url", raw), auth=_user_info(user_key, props.get(user_key)),
                                     verify=_tls_context(prefix + "ssl.", props), name=name))
    if len({t.name for t in targets}) != len(targets):
        raise SettingsError("connect.clusters names a cluster twice")
    return tuple(targets)


def _registry_target(props: Mapping[str, str]) -> HttpTarget | None:
    raw = (props.get("schema.registry.url") or "").strip()
    if not raw:
        return None
    from seaway.connect.api.errors import ConfigError
    from seaway.schema_registry.client_security import registry_client_security

    urls = _urls("schema.registry.url", raw)
    client = {k: v for k, v in props.items() if k.startswith(("schema.registry.ssl.", "basic.auth.", "bearer.auth."))}
    if props.get("basic.auth.credentials.source", "").strip().upper() == "SASL_INHERIT":
        client["sasl.jaas.config"] = props.get("sasl.jaas.config", "")
    try:
        security = registry_client_security(urls[0], client)
    except ConfigError as exc:
        raise SettingsError(str(exc)) from None
    return HttpTarget(urls=(security.url, *urls[1:]), auth=security.auth, verify=security.verify)


_METRICS_KEYS = frozenset({"metrics.urls", "metrics.basic.auth.credentials.source", "metrics.basic.auth.user.info"})
_SASL_PASSWORD_MECHANISMS = frozenset({"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"})


def _metrics_auth(props: Mapping[str, str], kafka: Mapping[str, Any]) -> tuple[str, str] | None:
    """The credentials the brokers' ``/metrics`` are scraped with, or None.

    A broker with an authorizer serves ``/metrics`` to its own users only (HTTP Basic with a
    SCRAM or PLAIN user's password, docs/metrics.md), so by default the console reuses the user
    it logs in to Kafka with (``SASL_INHERIT``, as Confluent's ``basic.auth.credentials.source``
    names it), or the ``user:password`` of ``metrics.basic.auth.user.info`` (``USER_INFO``).
    """
    for key in props:
        if key.startswith("metrics.") and key not in _METRICS_KEYS and not key.startswith("metrics.ssl."):
            raise SettingsError(f"{key} is not a setting the console knows (metrics.urls, "
                                f"metrics.basic.auth.credentials.source, metrics.basic.auth.user.info, metrics.ssl.*)")
    info_key = "metrics.basic.auth.user.info"
    info = _user_info(info_key, props.get(info_key))
    raw = (props.get("metrics.basic.auth.credentials.source") or "").strip().upper()
    source = raw or ("USER_INFO" if info is not None else "SASL_INHERIT")
    if source == "USER_INFO":
        if info is None:
            raise SettingsError(f"metrics.basic.auth.credentials.source=USER_INFO needs {info_key} (user:password)")
        return info
    if source != "SASL_INHERIT":
        raise SettingsError(f"metrics.basic.auth.credentials.source={raw}: expected SASL_INHERIT or USER_INFO")
    if info is not None:
        raise SettingsError(f"{info_key} is set but metrics.basic.auth.credentials.source=SASL_INHERIT takes the "
                            "Kafka client's SASL user: set one of them")
    protocol = str(kafka.get("security.protocol", "")).upper()
    mechanism = str(kafka.get("sasl.mechanism") or kafka.get("sasl.mechanisms") or "").upper()
    user, password = kafka.get("sasl.username"), kafka.get("sasl.password")
    if protocol.startswith("SASL") and mechanism in _SASL_PASSWORD_MECHANISMS and user and password is not None:
        return str(user), str(password)
    return None


def parse_settings(props: Mapping[str, str]) -> ConsoleSettings:
    """:class:`ConsoleSettings` from the merged properties (file < flags < overrides); SettingsError."""
    from seaway.security.kafka_client import ClientConfigError, librdkafka_config

    props = {k.strip(): v.strip() for k, v in props.items()}
    host, port, https = _listener(props.get("listeners", DEFAULT_LISTENER).split(",")[0])
    cert, key = props.get("ssl.certificate.location") or None, props.get("ssl.key.location") or None
    if https and not (cert and key):
        raise SettingsError("listeners=https://... needs ssl.certificate.location and ssl.key.location (PEM files)")
    if not https and (cert or key):
        raise SettingsError("ssl.certificate.location/ssl.key.location are set but listeners is not https://...")
    kafka_props = {k: v for k, v in props.items() if not k.startswith(_NON_KAFKA_PREFIXES)
                   and k != "bootstrap.servers"}
    try:
        kafka = librdkafka_config(kafka_props)
    except ClientConfigError as exc:
        raise SettingsError(str(exc)) from None
    bootstrap = props.get("bootstrap.servers", "localhost:9092")
    if not bootstrap:
        raise SettingsError("bootstrap.servers is empty")
    metrics = tuple(u for u in (props.get("metrics.urls") or "").split(",") if u.strip())
    return ConsoleSettings(
        host=host, port=port, tls_cert=cert if https else None, tls_key=key if https else None,
        bootstrap_servers=bootstrap, kafka=kafka, connect=_connect_targets(props),
        registry=_registry_target(props),
        metrics_urls=_urls("metrics.urls", ",".join(metrics)) if metrics else (),
        metrics_auth=_metrics_auth(props, kafka), metrics_verify=_tls_context("metrics.ssl.", props),
        read_only=_bool(props, "read.only"),
        session_idle_timeout_ms=_int(props, "session.idle.timeout.ms", 1_800_000, 10_000, 7 * 86_400_000),
        lag_sample_interval_ms=_int(props, "lag.sample.interval.ms", 10_000, 200, 3_600_000),
        messages_max_records=_int(props, "messages.max.records", 1000, 1, 100_000),
    )
