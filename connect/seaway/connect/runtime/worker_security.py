"""Which Kafka client security settings each of a worker's clients uses (Kafka Connect's rules),
and the worker's security keys checked at start.

Kafka Connect's rules, kept here:

- the worker's **own** clients (the config/offsets/status topics, the group membership, the
  shared admin client, the cluster id lookup) take the **top-level** ``security.protocol``,
  ``sasl.*`` and ``ssl.*`` (Kafka passes them ``config.originals()``);
- a task's **producer** and **consumer** take only ``producer.*`` / ``consumer.*`` (then the
  connector's ``*.override.*``): top-level security settings do *not* reach them, as in Kafka,
  so a secured cluster needs ``producer.security.protocol`` and friends too;
- a connector's **admin** client takes the top-level settings overridden by ``admin.*``.

Settings are Java's or librdkafka's names, translated by :mod:`seaway.security.kafka_client`.
``ssl.client.auth`` / ``ssl.client.authentication`` are the REST server's and never reach a
client.

The REST API's TLS settings (:func:`rest_tls_settings`) follow Kafka's ``RestServer``: an HTTPS
listener takes ``listeners.https.ssl.*`` (``admin.listeners.https.ssl.*`` for the admin
listeners) if *any* such key is set, all or nothing, else the top-level ``ssl.*`` keys; the
worker's own HTTPS requests to other workers verify them (and present the keystore as client
certificate) with the same settings, as Kafka's ``RestClient`` does.

Secrets: as Kafka's ``AbstractConfig``, the worker's own properties may use the config
providers it defines (``config.providers=file`` ... ``sasl.jaas.config=... password="${file:
/etc/connect/secrets.properties:password}";``): :func:`resolve_worker_placeholders` resolves
them before anything is parsed (and the values are hidden from the logs). Give the file
provider ``config.providers.file.param.allowed.paths`` (KIP-993) so connector configs cannot
read other files through it.

The worker refuses to start (a :class:`ConfigError` naming the key) on a client
security setting Seaway cannot honour, on ``rest.extension.classes`` other than Kafka's
basic-auth extension, and on the CORS and response-header keys Seaway does not implement.
"""

from __future__ import annotations

import ssl
from collections.abc import Mapping
from typing import Any

from seaway.connect.api import ConfigError
from seaway.connect.runtime.config_providers import REDACTOR, ConfigTransformer, has_placeholders
from seaway.connect.runtime.plugins import PluginKind, Plugins
from seaway.librdkafka_log import client_logging
from seaway.protocol.client import ClientSecurity
from seaway.protocol.client_security import protocol_security
from seaway.security.kafka_client import ClientConfigError, is_security_key, librdkafka_config
from seaway.security.tls import TlsConfigError, TlsSettings, build_client_context, tls_settings

__all__ = [
    "BASIC_AUTH_EXTENSION",
    "REST_ONLY_KEYS",
    "WorkerClientSecurity",
    "check_rest_keys",
    "resolve_worker_placeholders",
    "rest_tls_settings",
]

BASIC_AUTH_EXTENSION = "org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension"
REST_ONLY_KEYS = frozenset({"ssl.client.auth", "ssl.client.authentication"})
_UNSUPPORTED_REST = {
    "access.control.allow.origin": "CORS is not supported by Seaway's worker (browsers get same-origin only)",
    "access.control.allow.methods": "CORS is not supported by Seaway's worker",
    "response.http.headers.config": "custom response headers are not supported by Seaway's worker",
}


_REST_TLS_KEYS = frozenset({
    "keystore.type", "keystore.location", "keystore.password", "key.password", "keystore.certificate.chain",
    "keystore.key", "truststore.type", "truststore.location", "truststore.password", "truststore.certificates",
    "client.auth", "client.authentication", "enabled.protocols", "protocol", "cipher.suites",
    "endpoint.identification.algorithm", "keymanager.algorithm", "trustmanager.algorithm",
})
_REST_TLS_REFUSED = {
    "provider": "Java security providers are not supported (OpenSSL is used)",
    "engine.factory.class": "custom SSL engine factories are not supported",
    "secure.random.implementation": "Java SecureRandom implementations are not supported",
}
_REST_TLS_ONLY = {"keymanager.algorithm": "SunX509", "trustmanager.algorithm": "PKIX"}


def rest_tls_settings(originals: Mapping[str, Any], admin: bool = False) -> TlsSettings:
    """The REST (or admin REST) listeners' TLS settings, Kafka's all-or-nothing prefix rule;
    raises ConfigError naming a key that cannot be used."""
    prefix = "admin.listeners.https." if admin else "listeners.https."
    chosen = {k[len(prefix):]: str(v) for k, v in originals.items() if k.startswith(prefix)}
    if not chosen:
        prefix, chosen = "", {k: str(v) for k, v in originals.items() if k.startswith("ssl.")}
    values: dict[str, str] = {}
    for key, value in chosen.items():
        shown = prefix + key
        if not key.startswith("ssl."):
            raise ConfigError(f"{shown} is not an HTTPS listener setting (expected {prefix}ssl.*)", name=shown)
        name = key[len("ssl."):]
        if name in _REST_TLS_REFUSED:
            raise ConfigError(f"{shown}: {_REST_TLS_REFUSED[name]}", name=shown)
        if name in _REST_TLS_ONLY and value.strip() != _REST_TLS_ONLY[name]:
            raise ConfigError.invalid(shown, value, f"only {_REST_TLS_ONLY[name]} is supported")
        if name in _REST_TLS_KEYS:
            values[name] = value
        elif prefix:  # unprefixed: librdkafka's client-only ssl.* keys may be there too
            raise ConfigError(f"{shown} is not an HTTPS listener setting Seaway knows (check for a typo)", name=shown)
    if "client.auth" in values and "client.authentication" in values:
        raise ConfigError(f"set only one of {prefix}ssl.client.auth and {prefix}ssl.client.authentication",
                          name=f"{prefix}ssl.client.auth")
    if "client.authentication" in values:
        values["client.auth"] = values.pop("client.authentication")
    return tls_settings(values, f"{prefix}ssl.")


def _error(exc: ClientConfigError) -> ConfigError:
    text = str(exc)
    return ConfigError(text, name=text.split("=", 1)[0].split(":", 1)[0].split(" ", 1)[0])


def resolve_worker_placeholders(props: Mapping[str, Any], plugins: Plugins) -> dict[str, Any]:
    """``props`` with ``${provider:path:key}`` resolved by the providers they define (Kafka's
    ``AbstractConfig`` does this for a worker's own config); unknown references stay as they are."""
    out = dict(props)
    names = [n.strip() for n in str(out.get("config.providers") or "").split(",") if n.strip()]
    candidates = {k: str(v) for k, v in out.items()
                  if isinstance(v, str) and has_placeholders(v) and not k.startswith("config.providers.")}
    if not names or not candidates:
        return out
    providers = {}
    for name in names:
        cls = out.get(f"config.providers.{name}.class")
        if not cls:
            raise ConfigError(f"Missing config.providers.{name}.class", name=f"config.providers.{name}.class")
        prefix = f"config.providers.{name}.param."
        provider = plugins.new_instance(PluginKind.CONFIG_PROVIDER, str(cls))
        provider.configure({k[len(prefix):]: v for k, v in out.items() if k.startswith(prefix)})
        providers[name] = provider
    try:
        result = ConfigTransformer(providers).transform(candidates)
    finally:
        for provider in providers.values():
            provider.close()
    REDACTOR.add(result.secrets)
    out.update(result.data)
    return out


def check_rest_keys(originals: Mapping[str, Any], extensions: list[str]) -> None:
    """``rest.extension.classes`` and the REST keys Seaway does not implement; raises ConfigError."""
    for name in extensions:
        if name.strip() and name.strip() != BASIC_AUTH_EXTENSION:
            raise ConfigError.invalid("rest.extension.classes", ",".join(extensions),
                                      f"{name} is not supported; Seaway's worker implements only "
                                      f"{BASIC_AUTH_EXTENSION}")
    advertised = originals.get("rest.advertised.listener")
    if advertised is not None and str(advertised).strip().lower() not in ("", "http", "https"):
        raise ConfigError.invalid("rest.advertised.listener", advertised, "expected http or https")
    for key, reason in _UNSUPPORTED_REST.items():
        value = originals.get(key)
        if value is not None and str(value).strip():
            raise ConfigError.invalid(key, value, reason)


class WorkerClientSecurity:
    """The worker's client security settings, checked once at start (see the module docstring)."""

    def __init__(self, originals: Mapping[str, Any]) -> None:
        self._originals = dict(originals)
        self.top_level = {k: str(v).strip() for k, v in originals.items()
                          if is_security_key(k) and k not in REST_ONLY_KEYS}
        try:
            self.translated = librdkafka_config(self.top_level)
            for prefix in ("producer.", "consumer."):
                librdkafka_config(self.prefixed(prefix), prefix)
            librdkafka_config({**self.top_level, **self.prefixed("admin.")}, "admin.")
        except ClientConfigError as exc:
            raise _error(exc) from None
        self._protocol: ClientSecurity | None = None
        self._rest_client: ssl.SSLContext | None = None

    def rest_client_context(self) -> ssl.SSLContext:
        """For this worker's HTTPS requests to other workers (forwarding, task configs, fencing)."""
        if self._rest_client is None:
            settings = rest_tls_settings(self._originals)
            try:
                self._rest_client = build_client_context(settings)
            except TlsConfigError as exc:
                raise ConfigError(str(exc), name=str(exc).split("=", 1)[0].split(":", 1)[0]) from None
        return self._rest_client

    def prefixed(self, prefix: str) -> dict[str, str]:
        """``<prefix>*`` settings, prefix removed (``admin.listeners*`` are the REST server's, not the admin's)."""
        out = {k[len(prefix):]: str(v).strip() for k, v in self._originals.items() if k.startswith(prefix)}
        if prefix == "admin.":
            out = {k: v for k, v in out.items() if k != "listeners" and not k.startswith("listeners.")}
        return out

    def protocol(self) -> ClientSecurity:
        """For the group membership (Seaway's own protocol client): the top-level settings."""
        if self._protocol is None:
            try:
                self._protocol = protocol_security(self.top_level)
            except ClientConfigError as exc:
                raise _error(exc) from None
        return self._protocol

    @staticmethod
    def translate(props: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
        """A merged client config in librdkafka's names; raises ConfigError naming the key.

        It also sends the client's librdkafka lines through Python logging
        (:mod:`seaway.librdkafka_log`), not straight to stderr."""
        try:
            return {**librdkafka_config(props, prefix), **client_logging()}
        except ClientConfigError as exc:
            raise _error(exc) from None
