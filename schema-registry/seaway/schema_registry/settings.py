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
"""

from __future__ import annotations

import socket
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from pydantic import field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict
from seaway.schema_registry.compatibility import CompatibilityLevel

__all__ = ["RegistrySettings"]


class RegistrySettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="SCHEMA_REGISTRY_", extra="ignore", frozen=True)

    kafkastore_bootstrap_servers: str = "localhost:9092"
    kafkastore_topic: str = "_schemas"
    kafkastore_topic_replication_factor: int = 3
    kafkastore_timeout_ms: int = 500
    kafkastore_init_timeout_ms: int = 60_000
    listeners: str = "http://0.0.0.0:8081"
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

    @field_validator("schema_compatibility_level", "avro_compatibility_level")
    @classmethod
    def _level(cls, value: str | None) -> str | None:
        if value is not None and CompatibilityLevel.parse(value) is None:
            raise ValueError(f"invalid compatibility level {value!r}")
        return value

    @classmethod
    def from_properties(cls, properties: Mapping[str, Any]) -> RegistrySettings:
        """Settings from Confluent's dotted property names; unknown properties are ignored."""
        return cls(**{key.replace(".", "_").replace("-", "_"): value for key, value in properties.items()})

    def to_properties(self) -> dict[str, Any]:
        """The dotted property names with their effective values."""
        return {name.replace("_", "."): value for name, value in self.model_dump().items()}

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
        return parts.scheme or "http", parts.hostname or "0.0.0.0", port

    @property
    def advertised_url(self) -> str:
        """This instance's URL as other instances reach it (``host.name`` + listener port)."""
        scheme, host, port = self.first_listener
        advertised = self.host_name or (socket.gethostname() if host in ("0.0.0.0", "::", "") else host)
        return f"{scheme}://{advertised}:{port}"
