"""Registry settings with Confluent Schema Registry's property names.

Each field is a Confluent property with dots turned into underscores
(``kafkastore.bootstrap.servers`` -> ``kafkastore_bootstrap_servers``). Three ways in:

* keyword arguments (``RegistrySettings(kafkastore_topic="_schemas")``);
* environment variables ``SCHEMA_REGISTRY_<PROPERTY>`` upper-cased with dots as
  underscores, the convention of Confluent's container images
  (``SCHEMA_REGISTRY_KAFKASTORE_BOOTSTRAP_SERVERS``);
* a ``.properties``-style mapping with the dotted names: :meth:`RegistrySettings.from_properties`.

Every key is defined once, in :data:`REGISTRY_CONFIG_DEF` (the config engine,
:mod:`seaway.configdef`): type, default, check and doc, parsed as Confluent's own ConfigDef
parses it (strings trimmed, booleans ``true``/``false``); a value it refuses is a
:class:`SettingsError` in Kafka's words (``Invalid value abc for configuration
http.request.max.size: Not a number of type INT``). docs/config-reference.md is rendered from it.

``avro.compatibility.level`` is Confluent's deprecated spelling of
``schema.compatibility.level``; it applies when the new name is not set.

Security (Confluent's names; :mod:`seaway.schema_registry.security` loads and applies them):
``listeners=https://...`` with ``ssl.keystore.*``, ``ssl.truststore.*`` and
``ssl.client.authentication`` (NONE, REQUESTED, REQUIRED; the deprecated boolean
``ssl.client.auth=true`` means REQUIRED); ``authentication.method=BASIC`` with
``authentication.realm`` (the JAAS file's section), ``authentication.roles`` and
``authentication.skip.paths``; the JAAS file named by ``java.security.auth.login.config``
(or ``-Djava.security.auth.login.config=`` in ``SCHEMA_REGISTRY_OPTS``); and the ``_schemas``
clients' ``kafkastore.security.protocol``, ``kafkastore.sasl.*`` and ``kafkastore.ssl.*``
(:attr:`RegistrySettings.kafkastore_client`). ``listeners`` defaults to 127.0.0.1 (Confluent:
every interface), a deliberate deviation. A security setting the registry does not implement
(another ``authentication.method``, resource extensions, CORS, ``ssl.provider``, Kerberos or
OAuth for the ``_schemas`` clients...) is refused with :class:`SettingsError` naming it.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping
from typing import Any, ClassVar
from urllib.parse import urlsplit

from seaway.configdef import (
    CaseInsensitiveValidString,
    ConfigDef,
    ConfigException,
    ConfigType,
    Importance,
    LambdaValidator,
    Password,
    Range,
)
from seaway.errors import SeawayError
from seaway.schema_registry.compatibility import CompatibilityLevel
from seaway.security.kafka_client import is_security_key

__all__ = ["KAFKASTORE_PREFIX", "REGISTRY_CONFIG_DEF", "RegistrySettings", "SettingsError", "refusal"]

KAFKASTORE_PREFIX = "kafkastore."
_ENV_PREFIX = "SCHEMA_REGISTRY_"
_REFUSED = {
    "schema.registry.resource.extension.class": "resource extensions (Java classes) are not supported",
    "resource.extension.class": "resource extensions (Java classes) are not supported",
    "rest.servlet.initializor.classes": "servlet initializers (Java classes) are not supported",
    "websocket.servlet.initializor.classes": "servlet initializers (Java classes) are not supported",
    "schema.registry.auth.mechanism": "Confluent's security plugin is not supported (use authentication.method=BASIC)",
    "access.control.allow.origin": "CORS is not supported by Seaway's registry",
    "access.control.allow.methods": "CORS is not supported by Seaway's registry",
    "access.control.allow.headers": "CORS is not supported by Seaway's registry",
    "ssl.provider": "Java security providers are not supported (OpenSSL is used)",
    "ssl.engine.factory.class": "custom SSL engine factories are not supported",
    "ssl.keystore.reload": "keystores are not reloaded at run time; restart the registry instead",
}
_REFUSED_PREFIXES = {
    "confluent.schema.registry.auth": "Confluent's security plugin is not supported (use authentication.method=BASIC)",
    "confluent.schema.registry.authorizer": "Confluent's security plugin is not supported",
    "authentication.bearer.": "bearer token authentication is not supported (use authentication.method=BASIC)",
    "oauthbearer.": "OAuth is not supported (use authentication.method=BASIC)",
}
_SSL_KEYS = frozenset({
    "ssl.keystore.type", "ssl.keystore.location", "ssl.keystore.password", "ssl.key.password",
    "ssl.truststore.type", "ssl.truststore.location", "ssl.truststore.password", "ssl.client.authentication",
    "ssl.client.auth", "ssl.enabled.protocols", "ssl.cipher.suites", "ssl.protocol",
    "ssl.endpoint.identification.algorithm", "ssl.keymanager.algorithm", "ssl.trustmanager.algorithm",
})


class SettingsError(SeawayError):
    """A setting the registry cannot honour; the message names it (Kafka's ``Invalid value <v> for
    configuration <key>: <reason>`` for a value the definitions refuse)."""


def refusal(key: str, value: Any) -> str | None:
    """Why the registry refuses to start with ``key=value`` (a security setting it does not
    implement), or None."""
    text = str(value).strip()
    if key in _REFUSED and not (key == "ssl.keystore.reload" and text.lower() == "false") and text:
        return f"{key}: {_REFUSED[key]}"
    prefix = next((p for p in _REFUSED_PREFIXES if key.startswith(p)), None)
    if prefix is not None:
        return f"{key}: {_REFUSED_PREFIXES[prefix]}"
    if key == "authentication.method" and text.upper() not in ("", "NONE", "BASIC"):
        return f"authentication.method={text}: only NONE and BASIC are supported by Seaway's registry"
    if key.startswith("ssl.") and key not in _SSL_KEYS:
        return f"{key} is not an HTTPS setting Seaway's registry knows (check for a typo)"
    if key in ("ssl.keymanager.algorithm", "ssl.trustmanager.algorithm") and text not in (
            "", "SunX509", "PKIX"):
        return f"{key}={text}: only Java's default algorithm is supported"
    return None


def _env_properties(environ: Mapping[str, str]) -> dict[str, str]:
    """``SCHEMA_REGISTRY_*`` variables as dotted property names (the container image convention; the
    name's case does not matter, as with the pydantic-settings this replaced)."""
    return {name[len(_ENV_PREFIX):].lower().replace("_", "."): value for name, value in environ.items()
            if name.upper().startswith(_ENV_PREFIX) and name.upper() != "SCHEMA_REGISTRY_OPTS"}


def _compatibility_level(name: str, value: Any) -> None:
    if value is not None and CompatibilityLevel.parse(value) is None:
        raise ConfigException.invalid(name, value, "not a compatibility level")


_H, _M, _L = Importance.HIGH, Importance.MEDIUM, Importance.LOW
_S, _I, _B, _P = ConfigType.STRING, ConfigType.INT, ConfigType.BOOLEAN, ConfigType.PASSWORD
_LEVELS = LambdaValidator.with_(_compatibility_level, "a compatibility level (any case): " + ", ".join(
    level.value for level in CompatibilityLevel))

REGISTRY_CONFIG_DEF = (
    ConfigDef()
    .define("kafkastore.bootstrap.servers", _S, "localhost:9092", None, _H,
            "Kafka brokers of the _schemas topic.")
    .define("kafkastore.topic", _S, "_schemas", None, _H, "The topic that stores schemas, configs and modes.")
    .define("kafkastore.topic.replication.factor", _I, 3, None, _H,
            "Replication factor of the _schemas topic when the registry creates it.")
    .define("kafkastore.timeout.ms", _I, 500, None, _M, "Timeout of a _schemas write.")
    .define("kafkastore.init.timeout.ms", _I, 60_000, None, _M, "How long the start may wait for the _schemas topic.")
    .define("listeners", _S, "http://127.0.0.1:8081", None, _H,
            "http:// or https:// URLs to listen on; no host or 127.0.0.1 binds loopback (Confluent: every "
            "interface).")
    .define("host.name", _S, "", None, _H, "The host name other instances reach this one by (default: the "
                                            "listener's host, or the machine's name for 0.0.0.0).")
    .define("schema.compatibility.level", _S, None, _LEVELS, _H,
            "Global compatibility level (default BACKWARD).")
    .define("avro.compatibility.level", _S, None, _LEVELS, _L,
            "Deprecated name of schema.compatibility.level; used when that is not set.")
    .define("leader.eligibility", _B, True, None, _M, "Whether this instance may become the leader.")
    .define("mode.mutability", _B, True, None, _L, "Whether PUT /mode may change modes.")
    .define("schema.registry.group.id", _S, "schema-registry", None, _M, "Leader-election group of the instances.")
    .define("session.timeout.ms", _I, 10_000, None, _L, "Leader-election group session timeout (Seaway's name; "
                                                         "Confluent keeps it internal).")
    .define("heartbeat.interval.ms", _I, 3_000, None, _L, "Leader-election group heartbeat interval.")
    .define("rebalance.timeout.ms", _I, 30_000, None, _L, "Leader-election group rebalance timeout.")
    .define("inter.instance.protocol", _S, "http", None, _L, "Scheme of requests forwarded to the leader.")
    .define("http.request.max.size", _I, 2 * 1024 * 1024, Range.at_least(1), _L,
            "Largest request body accepted, 413 beyond (Karapace's name). 2 MiB: twice Kafka's default record "
            "size limit, which a schema must fit in the _schemas topic anyway.")
    .define("idle.timeout.ms", _I, 30_000, Range.at_least(1), _L,
            "How long a client may take to send a request's head, and then its body (rest-utils' name and "
            "default; a deadline, so a client trickling bytes is closed too).")
    .define("ssl.keystore.type", _S, "JKS", None, _H, "HTTPS listeners' keystore: PEM, PKCS12, or JKS (PKCS12).")
    .define("ssl.keystore.location", _S, "", None, _H, "Keystore file of HTTPS listeners.")
    .define("ssl.keystore.password", _P, "", None, _H, "Keystore password.")
    .define("ssl.key.password", _P, "", None, _H, "Password of the private key.")
    .define("ssl.truststore.type", _S, "JKS", None, _H, "Truststore type: PEM, PKCS12, or JKS (PKCS12).")
    .define("ssl.truststore.location", _S, "", None, _H, "Truststore file: CAs that sign client certificates.")
    .define("ssl.truststore.password", _P, "", None, _H, "Truststore password.")
    .define("ssl.client.authentication", _S, "NONE", CaseInsensitiveValidString.in_("NONE", "REQUESTED", "REQUIRED"),
            _M, "Client certificates of HTTPS listeners.")
    .define("ssl.client.auth", _B, False, None, _L, "Deprecated: true means ssl.client.authentication=REQUIRED.")
    .define("ssl.enabled.protocols", _S, "", None, _M, "TLS versions served (empty: TLSv1.2 and TLSv1.3).")
    .define("ssl.cipher.suites", _S, "", None, _L, "Cipher suites by IANA name (empty: OpenSSL's defaults).")
    .define("ssl.protocol", _S, "TLS", None, _L, "Kept for compatibility (ssl.enabled.protocols decides).")
    .define("ssl.endpoint.identification.algorithm", _S, "https", None, _L,
            "Host name checking of the registry's own HTTPS requests to the leader.")
    .define("authentication.method", _S, "NONE", None, _H, "NONE or BASIC (HTTP Basic authentication).")
    .define("authentication.realm", _S, "", None, _H, "The JAAS file's section that lists the users.")
    .define("authentication.roles", _S, "*", None, _M, "Roles allowed in (* for any).")
    .define("authentication.skip.paths", _S, "", None, _L, "Paths served without authentication.")
    .define("java.security.auth.login.config", _S, "", None, _H,
            "The JAAS file (or -Djava.security.auth.login.config= in SCHEMA_REGISTRY_OPTS).")
)
"""The registry's settings with Confluent's names: types, defaults, checks and docs in one table."""


def _attribute(name: str) -> str:
    return name.replace(".", "_")


_FIELDS: dict[str, str] = {_attribute(name): name for name in REGISTRY_CONFIG_DEF.config_keys()}


class RegistrySettings:
    """The registry's typed settings: one attribute per :data:`REGISTRY_CONFIG_DEF` key (dots as
    underscores), plus ``kafkastore_client``: the _schemas clients' security settings, prefix removed.

    Immutable; keyword arguments win over ``SCHEMA_REGISTRY_*`` variables, those over the defaults.
    Unknown keyword arguments are ignored; a value the definitions refuse, or a refused setting of
    the environment, raises :class:`SettingsError`.
    """

    kafkastore_bootstrap_servers: str
    kafkastore_topic: str
    kafkastore_topic_replication_factor: int
    kafkastore_timeout_ms: int
    kafkastore_init_timeout_ms: int
    listeners: str
    host_name: str
    schema_compatibility_level: str | None
    avro_compatibility_level: str | None
    leader_eligibility: bool
    mode_mutability: bool
    schema_registry_group_id: str
    session_timeout_ms: int
    heartbeat_interval_ms: int
    rebalance_timeout_ms: int
    inter_instance_protocol: str
    http_request_max_size: int
    idle_timeout_ms: int
    ssl_keystore_type: str
    ssl_keystore_location: str
    ssl_keystore_password: str
    ssl_key_password: str
    ssl_truststore_type: str
    ssl_truststore_location: str
    ssl_truststore_password: str
    ssl_client_authentication: str
    ssl_client_auth: bool
    ssl_enabled_protocols: str
    ssl_cipher_suites: str
    ssl_protocol: str
    ssl_endpoint_identification_algorithm: str
    authentication_method: str
    authentication_realm: str
    authentication_roles: str
    authentication_skip_paths: str
    java_security_auth_login_config: str
    kafkastore_client: dict[str, str]

    _HIDDEN: ClassVar[frozenset[str]] = frozenset(
        {_attribute(k.name) for k in REGISTRY_CONFIG_DEF.config_keys().values() if k.type is ConfigType.PASSWORD}
        | {"kafkastore_client"})

    def __init__(self, **values: Any) -> None:
        env = _env_properties(os.environ)
        for key, value in env.items():
            problem = refusal(key, value)
            if problem is not None:
                raise SettingsError(f"{problem} (from the environment)")
        props = {name: value for name, value in env.items() if name in REGISTRY_CONFIG_DEF}
        props.update({_FIELDS[field]: value for field, value in values.items() if field in _FIELDS})
        try:
            parsed = REGISTRY_CONFIG_DEF.parse(props)
        except ConfigException as exc:
            raise SettingsError(str(exc)) from None
        parsed["ssl.client.authentication"] = parsed["ssl.client.authentication"].upper()
        client = {k[len(KAFKASTORE_PREFIX):]: v for k, v in env.items()
                  if k.startswith(KAFKASTORE_PREFIX) and is_security_key(k[len(KAFKASTORE_PREFIX):])}
        client.update(values.get("kafkastore_client") or {})
        for name, value in parsed.items():
            object.__setattr__(self, _attribute(name), value.value if isinstance(value, Password) else value)
        object.__setattr__(self, "kafkastore_client", client)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"RegistrySettings are immutable: use replace({name}=...)")

    def _values(self) -> dict[str, Any]:
        return {field: getattr(self, field) for field in (*_FIELDS, "kafkastore_client")}

    def replace(self, **changes: Any) -> RegistrySettings:
        """A copy with ``changes`` (attribute names) applied, checked like the original."""
        return RegistrySettings(**{**self._values(), **changes})

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RegistrySettings):
            return NotImplemented
        return self._values() == other._values()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={v!r}" for k, v in self._values().items() if k not in self._HIDDEN)
        return f"RegistrySettings({shown})"

    @classmethod
    def from_properties(cls, properties: Mapping[str, Any]) -> RegistrySettings:
        """Settings from Confluent's dotted property names; unknown properties are ignored, but an
        unsupported security setting raises :class:`SettingsError` naming it."""
        fields: dict[str, Any] = {}
        client: dict[str, str] = {}
        for key, value in properties.items():
            problem = refusal(key, value)
            if problem is not None:
                raise SettingsError(problem)
            rest = key[len(KAFKASTORE_PREFIX):] if key.startswith(KAFKASTORE_PREFIX) else ""
            if rest and is_security_key(rest):
                client[rest] = str(value).strip()
            else:
                fields[key.replace(".", "_").replace("-", "_")] = value
        return cls(**fields, kafkastore_client=client)

    def to_properties(self) -> dict[str, Any]:
        """The dotted property names with their effective values."""
        values = self._values()
        client = values.pop("kafkastore_client")
        return {**{_FIELDS[name]: value for name, value in values.items()},
                **{KAFKASTORE_PREFIX + key: value for key, value in client.items()}}

    @property
    def compatibility_level(self) -> CompatibilityLevel:
        """``schema.compatibility.level``, else ``avro.compatibility.level``, else BACKWARD."""
        raw = self.schema_compatibility_level or self.avro_compatibility_level or "backward"
        level = CompatibilityLevel.parse(raw)
        assert level is not None
        return level
    @property
    def first_listener(self) -> tuple[str, str, int]:
        """(scheme, host, port) of the first ``listeners`` entry."""
        first = self.listeners.split(",")[0].strip()
        parts = urlsplit(first)
        default_port = 443 if parts.scheme == "https" else 8081
        port = default_port if parts.port is None else parts.port
        return parts.scheme or "http", parts.hostname or "127.0.0.1", port  # no host: loopback only

    @property
    def advertised_url(self) -> str:
        """This instance's URL as other instances reach it (``host.name`` + listener port)."""
        scheme, host, port = self.first_listener
        advertised = self.host_name or (socket.gethostname() if host in ("0.0.0.0", "::", "") else host)
        return f"{scheme}://{advertised}:{port}"
