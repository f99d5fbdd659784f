"""Registry settings with Confluent Schema Registry's property names.

Each field is a Confluent property with dots turned into underscores
(``kafkastore.bootstrap.servers`` -> ``kafkastore_bootstrap_servers``). Three ways in:

* keyword arguments (``RegistrySettings(kafkastore_topic="_schemas")``);
* environment variables ``SCHEMA_REGISTRY_<PROPERTY>`` upper-cased with dots as
  underscores, the convention of Confluent's container images
  (``SCHEMA_REGISTRY_KAFKASTORE_BOOTSTRAP_SERVERS``);
* a ``.properties``-style mapping with the dotted names: :meth:`RegistrySettings.from_properties`.

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
from typing import Any
from urllib.parse import urlsplit

from pydantic import Field, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict
from seaway.errors import SeawayError
from seaway.schema_registry.compatibility import CompatibilityLevel
from seaway.security.kafka_client import is_security_key

__all__ = ["KAFKASTORE_PREFIX", "RegistrySettings", "SettingsError", "refusal"]

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
    """A setting the registry cannot honour; the message names it. (Not a ValueError: pydantic
    would fold it into a ValidationError and lose the message's own wording.)"""


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
    """``SCHEMA_REGISTRY_*`` variables as dotted property names (the container image convention)."""
    return {name[len(_ENV_PREFIX):].lower().replace("_", "."): value for name, value in environ.items()
            if name.startswith(_ENV_PREFIX) and name != "SCHEMA_REGISTRY_OPTS"}


class RegistrySettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="SCHEMA_REGISTRY_", extra="ignore", frozen=True)

    kafkastore_bootstrap_servers: str = "localhost:9092"
    kafkastore_topic: str = "_schemas"
    kafkastore_topic_replication_factor: int = 3
    kafkastore_timeout_ms: int = 500
    kafkastore_init_timeout_ms: int = 60_000
    listeners: str = "http://127.0.0.1:8081"
    host_name: str = ""
    schema_compatibility_level: str | None = None
    avro_compatibility_level: str | None = None
    leader_eligibility: bool = True
    mode_mutability: bool = True
    schema_registry_group_id: str = "schema-registry"
    # Leader-election group timing (Kafka's group-member names; ours, Confluent keeps them internal).
    session_timeout_ms: int = 10_000
    heartbeat_interval_ms: int = 3_000
    rebalance_timeout_ms: int = 30_000
    inter_instance_protocol: str = "http"
    # The largest request body accepted (413 beyond; Karapace's name). 2 MiB: twice Kafka's
    # default record size limit, which a schema must fit in the _schemas topic anyway.
    http_request_max_size: int = 2 * 1024 * 1024
    # How long a client may take to send a request's head, and then its body (rest-utils' name and
    # default; a deadline here, so a client trickling bytes is closed too: seaway.http_timeouts).
    idle_timeout_ms: int = 30_000
    # HTTPS listeners (Confluent's rest-utils names; PEM and PKCS12 as the broker reads them).
    ssl_keystore_type: str = "JKS"
    ssl_keystore_location: str = ""
    ssl_keystore_password: str = Field(default="", repr=False)
    ssl_key_password: str = Field(default="", repr=False)
    ssl_truststore_type: str = "JKS"
    ssl_truststore_location: str = ""
    ssl_truststore_password: str = Field(default="", repr=False)
    ssl_client_authentication: str = "NONE"
    ssl_client_auth: bool = False
    ssl_enabled_protocols: str = ""
    ssl_cipher_suites: str = ""
    ssl_protocol: str = "TLS"
    ssl_endpoint_identification_algorithm: str = "https"
    # HTTP Basic authentication.
    authentication_method: str = "NONE"
    authentication_realm: str = ""
    authentication_roles: str = "*"
    authentication_skip_paths: str = ""
    java_security_auth_login_config: str = ""
    # The _schemas clients' security settings, kafkastore. prefix removed (kafkastore.sasl.* ...).
    kafkastore_client: dict[str, str] = Field(default_factory=dict, repr=False)

    @model_validator(mode="before")
    @classmethod
    def _refuse_and_collect(cls, data: Any) -> Any:
        """Refuse unsupported security settings of the environment; collect its kafkastore ones."""
        if not isinstance(data, dict):
            return data
        env = _env_properties(os.environ)
        for key, value in env.items():
            problem = refusal(key, value)
            if problem is not None:
                raise SettingsError(f"{problem} (from the environment)")
        client = {k[len(KAFKASTORE_PREFIX):]: v for k, v in env.items()
                  if k.startswith(KAFKASTORE_PREFIX) and is_security_key(k[len(KAFKASTORE_PREFIX):])}
        client.update(data.get("kafkastore_client") or {})
        return {**data, "kafkastore_client": client}

    @field_validator("ssl_client_authentication")
    @classmethod
    def _client_authentication(cls, value: str) -> str:
        if value.strip().upper() not in ("NONE", "REQUESTED", "REQUIRED"):
            raise ValueError("ssl.client.authentication must be NONE, REQUESTED or REQUIRED")
        return value.strip().upper()

    @field_validator("http_request_max_size")
    @classmethod
    def _positive(cls, value: int) -> int:
        if value < 1:
            raise ValueError("http.request.max.size must be at least 1 byte")
        return value

    @field_validator("idle_timeout_ms")
    @classmethod
    def _positive_timeout(cls, value: int) -> int:
        if value < 1:
            raise ValueError("idle.timeout.ms must be at least 1 ms")
        return value

    @field_validator("schema_compatibility_level", "avro_compatibility_level")
    @classmethod
    def _level(cls, value: str | None) -> str | None:
        if value is not None and CompatibilityLevel.parse(value) is None:
            raise ValueError(f"invalid compatibility level {value!r}")
        return value

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
        values = self.model_dump()
        client = values.pop("kafkastore_client")
        return {**{name.replace("_", "."): value for name, value in values.items()},
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
