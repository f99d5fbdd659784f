"""A worker's own configuration as frozen, typed values, parsed once at start (the worker's
counterpart of :mod:`.connector_config`).

:class:`~seaway.connect.runtime.config.WorkerConfig` (and its standalone and distributed
forms) parses the worker's properties against its ConfigDef, the one definition of every key,
type, default and validation error; a bad value fails there, at start, with the ConfigError
naming the key. The values here are built from that parsed result, grouped as Kafka groups
the worker's settings, and the runtime reads attributes of them, never a key by name::

    config.common     WorkerSettings     converters, flush and shutdown timeouts, topic tracking,
                                         client.id, metrics sampling, client overrides
    config.rest       RestSettings       listeners, advertised URL, admin listeners, request limits
    config.standalone StandaloneSettings offset.storage.file.filename (standalone workers)
    config.topics     InternalTopics     config/offset/status topics (distributed workers)
    config.group      GroupSettings      group.id, membership timeouts, protocol, EOS, inter.worker.*

The worker's client security settings are ``config.client_security``
(:class:`~seaway.connect.runtime.worker_security.WorkerClientSecurity`), checked at start too.
Where a name is what the runtime needs (a client's ``producer.*`` settings, a converter's
``key.converter.*``), ``WorkerConfig.client_props`` / ``converter_props`` give typed mappings.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, cast
from urllib.parse import urlsplit

from seaway.connect.api import AbstractConfig

__all__ = [
    "GroupSettings",
    "InterWorkerSettings",
    "InternalTopic",
    "InternalTopics",
    "RestSettings",
    "StandaloneSettings",
    "WorkerSettings",
]

OverridePolicy = Literal["All", "None", "Principal"]
ExactlyOnceSourceSupport = Literal["disabled", "preparing", "enabled"]


def _strings(value: Any) -> tuple[str, ...]:
    return tuple(str(v) for v in value or ())


@dataclass(frozen=True, slots=True)
class WorkerSettings:
    """Kafka's ``WorkerConfig`` common settings (both modes)."""

    bootstrap_servers: tuple[str, ...]
    key_converter: type
    value_converter: type
    header_converter: type
    task_shutdown_graceful_timeout_ms: int
    offset_flush_interval_ms: int
    offset_flush_timeout_ms: int
    plugin_path: tuple[str, ...]
    plugin_allowlist: tuple[str, ...]
    config_providers: tuple[str, ...]
    connector_client_config_override_policy: OverridePolicy
    topic_creation_enable: bool
    topic_tracking_enable: bool
    topic_tracking_allow_reset: bool
    client_id: str
    metrics_sample_window_ms: int
    metrics_num_samples: int

    @classmethod
    def of(cls, config: AbstractConfig) -> WorkerSettings:
        return cls(
            bootstrap_servers=_strings(config.get("bootstrap.servers")),
            key_converter=config.get("key.converter"),
            value_converter=config.get("value.converter"),
            header_converter=config.get("header.converter"),
            task_shutdown_graceful_timeout_ms=int(config.get("task.shutdown.graceful.timeout.ms")),
            offset_flush_interval_ms=int(config.get("offset.flush.interval.ms")),
            offset_flush_timeout_ms=int(config.get("offset.flush.timeout.ms")),
            plugin_path=tuple(p for p in (s.strip() for s in _strings(config.get("plugin.path"))) if p),
            plugin_allowlist=_strings(config.get("plugin.allowlist")),
            config_providers=_strings(config.get("config.providers")),
            connector_client_config_override_policy=cast(
                OverridePolicy, str(config.get("connector.client.config.override.policy"))),
            topic_creation_enable=bool(config.get("topic.creation.enable")),
            topic_tracking_enable=bool(config.get("topic.tracking.enable")),
            topic_tracking_allow_reset=bool(config.get("topic.tracking.allow.reset")),
            client_id=str(config.get("client.id") or ""),
            metrics_sample_window_ms=int(config.get("metrics.sample.window.ms")),
            metrics_num_samples=int(config.get("metrics.num.samples")),
        )

    def converter(self, key: str) -> type:
        """The class of ``key.converter``, ``value.converter`` or ``header.converter``."""
        return {"key.converter": self.key_converter, "value.converter": self.value_converter,
                "header.converter": self.header_converter}[key]

    @property
    def bootstrap(self) -> str:
        """``bootstrap.servers`` as librdkafka takes it (comma-separated)."""
        return ",".join(self.bootstrap_servers)


@dataclass(frozen=True, slots=True)
class RestSettings:
    """The REST server's settings (Kafka's ``RestServerConfig``)."""

    listeners: tuple[str, ...]
    admin_listeners: tuple[str, ...] | None
    """``None``: the REST listeners serve /admin too; empty: no admin endpoints at all."""
    advertised_host_name: str | None
    advertised_port: int | None
    advertised_listener: str | None
    extension_classes: tuple[str, ...]
    request_max_bytes: int
    request_read_timeout_ms: int

    @classmethod
    def of(cls, config: AbstractConfig) -> RestSettings:
        admin = config.get("admin.listeners")
        port = config.get("rest.advertised.port")
        return cls(
            listeners=_strings(config.get("listeners")),
            admin_listeners=None if admin is None else _strings(admin),
            advertised_host_name=config.get("rest.advertised.host.name"),
            advertised_port=None if port is None else int(port),
            advertised_listener=config.get("rest.advertised.listener"),
            extension_classes=tuple(str(c).strip() for c in config.get("rest.extension.classes") or ()),
            request_max_bytes=int(config.get("rest.request.max.bytes")),
            request_read_timeout_ms=int(config.get("rest.request.read.timeout.ms")),
        )

    def advertised(self) -> tuple[str, str, int]:
        """(scheme, host, port) other workers and statuses see (Kafka's advertised URL rules)."""
        listener = urlsplit((self.listeners or ("http://:8083",))[0])
        scheme = self.advertised_listener or listener.scheme or "http"
        # a listener without a host binds (and so is reached at) 127.0.0.1: Seaway's loopback default
        host = self.advertised_host_name or listener.hostname or "127.0.0.1"
        port = self.advertised_port or listener.port or 8083
        return scheme, host, port


@dataclass(frozen=True, slots=True)
class StandaloneSettings:
    """A standalone worker's own key (Kafka's ``StandaloneConfig``)."""

    offset_storage_file_filename: str

    @classmethod
    def of(cls, config: AbstractConfig) -> StandaloneSettings:
        return cls(str(config.get("offset.storage.file.filename")))


@dataclass(frozen=True, slots=True)
class InternalTopic:
    """One of a distributed worker's internal topics, as it is created when missing."""

    name: str
    partitions: int
    replication_factor: int
    """-1: the broker's default."""


@dataclass(frozen=True, slots=True)
class InternalTopics:
    """``config.storage.*``, ``offset.storage.*``, ``status.storage.*`` (the config topic has one partition,
    whatever ``config.storage.partitions`` says, as in Kafka)."""

    config: InternalTopic
    offset: InternalTopic
    status: InternalTopic

    @classmethod
    def of(cls, config: AbstractConfig) -> InternalTopics:
        def topic(prefix: str, partitions: int | None = None) -> InternalTopic:
            return InternalTopic(str(config.get(f"{prefix}.topic")),
                                 int(config.get(f"{prefix}.partitions")) if partitions is None else partitions,
                                 int(config.get(f"{prefix}.replication.factor")))
        return cls(topic("config.storage", 1), topic("offset.storage"), topic("status.storage"))


@dataclass(frozen=True, slots=True)
class InterWorkerSettings:
    """``inter.worker.*``: the session key that signs internal requests (KIP-507)."""

    key_generation_algorithm: str
    key_size: int | None
    """``None``: the algorithm's own default size."""
    key_ttl_ms: int
    signature_algorithm: str
    verification_algorithms: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class GroupSettings:
    """Kafka's ``DistributedConfig`` group settings: membership, rebalancing, exactly-once source support."""

    group_id: str
    session_timeout_ms: int
    heartbeat_interval_ms: int
    rebalance_timeout_ms: int
    worker_sync_timeout_ms: int
    worker_unsync_backoff_ms: int
    connect_protocol: str
    scheduled_rebalance_max_delay_ms: int
    exactly_once_source_support: ExactlyOnceSourceSupport
    inter_worker: InterWorkerSettings

    @classmethod
    def of(cls, config: AbstractConfig) -> GroupSettings:
        key_size = config.get("inter.worker.key.size")
        return cls(
            group_id=str(config.get("group.id")),
            session_timeout_ms=int(config.get("session.timeout.ms")),
            heartbeat_interval_ms=int(config.get("heartbeat.interval.ms")),
            rebalance_timeout_ms=int(config.get("rebalance.timeout.ms")),
            worker_sync_timeout_ms=int(config.get("worker.sync.timeout.ms")),
            worker_unsync_backoff_ms=int(config.get("worker.unsync.backoff.ms")),
            connect_protocol=str(config.get("connect.protocol")),
            scheduled_rebalance_max_delay_ms=int(config.get("scheduled.rebalance.max.delay.ms")),
            exactly_once_source_support=cast(ExactlyOnceSourceSupport, str(config.get("exactly.once.source.support"))),
            inter_worker=InterWorkerSettings(
                key_generation_algorithm=str(config.get("inter.worker.key.generation.algorithm")),
                key_size=None if key_size is None else int(key_size),
                key_ttl_ms=int(config.get("inter.worker.key.ttl.ms")),
                signature_algorithm=str(config.get("inter.worker.signature.algorithm")),
                verification_algorithms=_strings(config.get("inter.worker.verification.algorithms")),
            ),
        )

    @property
    def worker_sync_timeout_s(self) -> float:
        return self.worker_sync_timeout_ms / 1000
