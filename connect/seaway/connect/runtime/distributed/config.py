"""DistributedConfig: a distributed worker's settings (Kafka's ``DistributedConfig``).

The common worker keys (``WorkerConfig``) plus group membership, the three internal topics,
the rebalance protocol and inter-worker request signing, with Kafka's names and defaults.
Containers set them through the environment, in the conventional form of Kafka Connect
images: ``CONNECT_`` prefix, then the key upper-cased with ``.`` written ``_``, ``_``
written ``__`` and ``-`` written ``___``::

    CONNECT_BOOTSTRAP_SERVERS=broker:9092      -> bootstrap.servers
    CONNECT_GROUP_ID=connect-cluster           -> group.id
    CONNECT_CONFIG_STORAGE_TOPIC=connect-configs

Environment values override the properties file.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from seaway.connect.api import (
    NO_DEFAULT,
    AbstractConfig,
    ConfigDef,
    ConfigError,
    ConfigType,
    Importance,
    Range,
    ValidString,
)
from seaway.connect.api.config.validators import LambdaValidator
from seaway.connect.runtime.config import WorkerConfig, allow_listed, worker_config_def
from seaway.connect.runtime.plugins import Plugins
from seaway.connect.runtime.worker_security import resolve_worker_placeholders
from seaway.connect.runtime.worker_settings import GroupSettings, InternalTopics

__all__ = ["ENV_PREFIX", "DistributedConfig", "distributed_config_def", "props_from_env"]

ENV_PREFIX = "CONNECT_"
_H, _M, _L = Importance.HIGH, Importance.MEDIUM, Importance.LOW
_SKIPPED_ENV = ("LOG4J", "OPTS", "JMX", "HEAP")
_INT_MAX = 2**31 - 1


def props_from_env(environ: Mapping[str, str]) -> dict[str, str]:
    """Worker properties from ``CONNECT_*`` environment variables (see the module docstring)."""
    out = {}
    for name, value in environ.items():
        if not name.startswith(ENV_PREFIX) or name[len(ENV_PREFIX):].startswith(_SKIPPED_ENV):
            continue
        key = name[len(ENV_PREFIX):].lower().replace("___", "\0").replace("__", "\1")
        out[key.replace("_", ".").replace("\0", "-").replace("\1", "_")] = value
    return out


def _partitions_or_default(name: str, value: Any) -> None:
    if value is not None and value != -1 and value < 1:
        raise ConfigError.invalid(name, value, "Number of partitions must be positive, or -1 to use the broker's "
                                              "default")


def _rf_or_default(name: str, value: Any) -> None:
    if value is not None and value != -1 and value < 1:
        raise ConfigError.invalid(name, value, "Replication factor must be positive, or -1 to use the broker's "
                                              "default")


def distributed_config_def(plugins: Plugins) -> ConfigDef:
    d = worker_config_def(plugins, standalone=False)
    partitions = LambdaValidator(_partitions_or_default, "Positive number, or -1 to use the broker's default")
    rf = LambdaValidator(_rf_or_default, "Positive number not larger than the number of brokers, or -1")
    (d.define("group.id", ConfigType.STRING, NO_DEFAULT, None, _H,
              "A unique string that identifies the Connect cluster group this worker belongs to.")
     .define("session.timeout.ms", ConfigType.INT, 10000, None, _H,
             "Timeout used to detect worker failures.")
     .define("heartbeat.interval.ms", ConfigType.INT, 3000, None, _H,
             "Expected time between heartbeats to the group coordinator.")
     .define("rebalance.timeout.ms", ConfigType.INT, 60000, None, _H,
             "Maximum time for each worker to join the group once a rebalance has begun.")
     .define("worker.sync.timeout.ms", ConfigType.INT, 3000, None, _M,
             "How long to try catching up on the config topic before leaving the group.")
     .define("worker.unsync.backoff.ms", ConfigType.INT, 300000, None, _M,
             "How long to wait before rejoining after failing to catch up.")
     .define("config.storage.topic", ConfigType.STRING, NO_DEFAULT, None, _H,
             "The compacted, single-partition topic holding connector and task configurations.")
     .define("config.storage.replication.factor", ConfigType.SHORT, 3, rf, _L,
             "Replication factor of the config topic when it is created.")
     .define("config.storage.partitions", ConfigType.INT, 1, None, _L,
             "Ignored: the config topic always has exactly one partition.")
     .define("offset.storage.topic", ConfigType.STRING, NO_DEFAULT, None, _H,
             "The compacted topic holding source connector offsets.")
     .define("offset.storage.partitions", ConfigType.INT, 25, partitions, _L,
             "Number of partitions of the offsets topic when it is created.")
     .define("offset.storage.replication.factor", ConfigType.SHORT, 3, rf, _L,
             "Replication factor of the offsets topic when it is created.")
     .define("status.storage.topic", ConfigType.STRING, NO_DEFAULT, None, _H,
             "The compacted topic holding connector and task statuses.")
     .define("status.storage.partitions", ConfigType.INT, 5, partitions, _L,
             "Number of partitions of the status topic when it is created.")
     .define("status.storage.replication.factor", ConfigType.SHORT, 3, rf, _L,
             "Replication factor of the status topic when it is created.")
     .define("connect.protocol", ConfigType.STRING, "sessioned",
             LambdaValidator(_protocol, "[eager, compatible, sessioned]"), _L,
             "Compatibility mode of the rebalance protocol.")
     .define("scheduled.rebalance.max.delay.ms", ConfigType.INT, 300000, Range.between(0, _INT_MAX), _L,
             "How long lost work waits for its worker to return before it is reassigned.")
     .define("inter.worker.key.generation.algorithm", ConfigType.STRING, "HmacSHA256",
             LambdaValidator(_hmac, "HmacSHA256, HmacSHA384 or HmacSHA512"), _L,
             "Algorithm of the session key that signs internal requests.")
     .define("inter.worker.key.size", ConfigType.INT, None, None, _L,
             "Size of the session key in bits (default: the algorithm's block-derived size).")
     .define("inter.worker.key.ttl.ms", ConfigType.INT, 3600000, Range.between(0, _INT_MAX), _L,
             "How long a session key is used before the leader rotates it.")
     .define("inter.worker.signature.algorithm", ConfigType.STRING, "HmacSHA256",
             LambdaValidator(_hmac, "HmacSHA256, HmacSHA384 or HmacSHA512"), _L,
             "Algorithm that signs internal requests.")
     .define("inter.worker.verification.algorithms", ConfigType.LIST, "HmacSHA256", None, _L,
             "Algorithms accepted when verifying internal requests; must contain the signature algorithm.")
     .define("exactly.once.source.support", ConfigType.STRING, "disabled",
             ValidString.in_("disabled", "preparing", "enabled"), _H,
             "Whether to enable exactly-once support for source connectors in the cluster by using transactions "
             "to write source records and their source offsets, and by proactively fencing out old task "
             "generations before bringing up new ones. To enable it on a new cluster, set 'enabled'; on an "
             "existing cluster, first set 'preparing' on every worker, then 'enabled' (rolling restarts are fine "
             "for both)."))
    return d


def _protocol(name: str, value: Any) -> None:
    if str(value).lower() not in ("eager", "compatible", "sessioned"):
        raise ConfigError.invalid(name, value, "must be one of eager, compatible, sessioned")


def _hmac(name: str, value: Any) -> None:
    if str(value) not in ("HmacSHA256", "HmacSHA384", "HmacSHA512"):
        raise ConfigError.invalid(name, value, "unsupported MAC algorithm")


class DistributedConfig(WorkerConfig):
    """A distributed worker's configuration: the common values plus ``topics`` and ``group``."""

    topics: InternalTopics
    group: GroupSettings

    def __init__(self, props: Mapping[str, Any], plugins: Plugins | None = None) -> None:
        self.plugins = plugins or Plugins()
        allow_listed(self.plugins, props)
        props = resolve_worker_placeholders(props, self.plugins)  # ${file:...} secrets, as Kafka's worker
        AbstractConfig.__init__(self, distributed_config_def(self.plugins), props)
        self._check_security()
        self._settle()
        signature = str(self.get("inter.worker.signature.algorithm"))
        if signature not in self.get("inter.worker.verification.algorithms"):
            raise ConfigError.invalid("inter.worker.verification.algorithms",
                                      self.get("inter.worker.verification.algorithms"),
                                      f"must contain the signature algorithm {signature}")

    @classmethod
    def from_sources(cls, props: Mapping[str, Any], environ: Mapping[str, str],
                     plugins: Plugins | None = None) -> DistributedConfig:
        """``props`` (a properties file) overridden by ``CONNECT_*`` environment variables."""
        return cls({**props, **props_from_env(environ)}, plugins)

    def _settle(self) -> None:
        super()._settle()
        self.topics = InternalTopics.of(self)
        self.group = GroupSettings.of(self)

    def advertised_url(self) -> str:
        """The REST URL other workers forward to (``rest.advertised.*`` over the first listener)."""
        scheme, host, port = self.rest.advertised()
        return f"{scheme}://{host}:{port}"

    @property
    def group_id(self) -> str:
        return self.group.group_id

    @property
    def exactly_once_source_enabled(self) -> bool:
        """``exactly.once.source.support=enabled``: source tasks write records and offsets in transactions."""
        return self.group.exactly_once_source_support == "enabled"

    @property
    def transactional_leader_enabled(self) -> bool:
        """``preparing`` or ``enabled``: the leader writes the config topic with a fenceable transactional
        producer, so a zombie leader cannot write after a new one took over (KIP-618)."""
        return self.group.exactly_once_source_support in ("preparing", "enabled")

    @property
    def transactional_producer_id(self) -> str:
        """The leader's ``transactional.id`` for config-topic writes: ``connect-cluster-<group.id>``."""
        return f"connect-cluster-{self.group_id}"

    def task_transactional_id(self, connector: str, task: int) -> str:
        """A source task's ``transactional.id`` under exactly-once: ``<group.id>-<connector>-<task>``."""
        return f"{self.group_id}-{connector}-{task}"

    def client_id(self, suffix: str) -> str:
        """Kafka's internal client ids: ``<group.id>[-<client.id>]-<suffix>``."""
        base = self.group_id + (f"-{self.common.client_id}" if self.common.client_id else "")
        return f"{base}-{suffix}"
