"""``mm2.properties``, Kafka's ``connect-mirror-maker.properties`` format (Kafka's ``MirrorMakerConfig``).

::

    clusters = A, B                      # the aliases
    A.bootstrap.servers = a1:9092        # <alias>.<client key>: how to reach each cluster
    A->B.enabled = true                  # a flow; <source>-><target>.<key> overrides for it
    A->B.topics = .*
    replication.factor = 1               # top-level connector keys apply to every flow

For each flow a Connect worker bound to the *target* cluster runs the three connectors. This
module only computes configs (no I/O): :meth:`MirrorMakerConfig.worker_config` (Kafka's
defaults: group ``<source>-mm2``, topics ``mm2-{configs,offsets,status}.<source>.internal``,
ByteArrayConverter) and :meth:`MirrorMakerConfig.connector_config` (the ``source.cluster.*`` /
``target.cluster.*`` prefixes filled in from the clusters' settings). ``seaway mirror`` runs them.

As in Kafka, a flow gets a worker even when not ``enabled`` as long as heartbeats are on
(``emit.heartbeats.enabled``, true by default): its source and checkpoint connectors then do
nothing, and its heartbeat connector writes the heartbeats the opposite flow mirrors back.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from seaway.connect.api import ConfigError
from seaway.connectors.mirror.config import (
    BYTE_ARRAY_CONVERTER,
    CHECKPOINT_CONFIG_DEF,
    HEARTBEAT_CONFIG_DEF,
    SOURCE_CONFIG_DEF,
)

__all__ = ["CONNECTORS", "ENABLE_INTERNAL_REST", "FlowPair", "MirrorMakerConfig"]

CONNECTORS = ("MirrorSourceConnector", "MirrorHeartbeatConnector", "MirrorCheckpointConnector")
"""The connectors each flow runs, named by their simple class names (as Kafka's dedicated mode names them)."""
ENABLE_INTERNAL_REST = "dedicated.mode.enable.internal.rest"
_PACKAGE = "org.apache.kafka.connect.mirror."
_CLIENT_KEYS = ("bootstrap.servers", "security.protocol")
_FRAMEWORK_KEYS = frozenset({
    "name", "connector.class", "tasks.max", "tasks.max.enforce", "key.converter", "value.converter",
    "header.converter", "config.action.reload", "transforms", "predicates", "errors.retry.timeout",
    "errors.retry.delay.max.ms", "errors.tolerance", "errors.log.enable", "errors.log.include.messages"})
_CLIENT_PREFIXED = re.compile(r"^(consumer|producer|admin).*")


def _is_client_key(key: str) -> bool:
    return key in _CLIENT_KEYS or key.startswith(("ssl.", "sasl."))


@dataclass(frozen=True, slots=True, order=True)
class FlowPair:
    """A replication flow: ``source`` mirrored to ``target``."""

    source: str
    target: str

    def __str__(self) -> str:
        return f"{self.source}->{self.target}"


def _as_bool(value: str | None, default: bool) -> bool:
    return default if value is None else value.strip().lower() == "true"


class MirrorMakerConfig:
    """The parsed top-level file; ``props`` as read (java.util.Properties semantics)."""

    def __init__(self, props: Mapping[str, str]) -> None:
        self.props = dict(props)
        clusters = [c.strip() for c in self.props.get("clusters", "").split(",") if c.strip()]
        if not clusters:
            raise ConfigError('Missing required configuration "clusters" which has no default value.', name="clusters")
        if len(set(clusters)) != len(clusters):
            raise ConfigError.invalid("clusters", self.props["clusters"], "an alias is listed twice")
        for alias in clusters:
            if "->" in alias:  # it would make <source>-><target>.* keys ambiguous
                raise ConfigError.invalid("clusters", self.props["clusters"], f"alias {alias!r} may not contain '->'")
        self.clusters = clusters
        if _as_bool(self.props.get(ENABLE_INTERNAL_REST), False):
            raise ConfigError.invalid(ENABLE_INTERNAL_REST, self.props[ENABLE_INTERNAL_REST],
                                      "Seaway's dedicated mode runs single-node per target cluster; the internal "
                                      "REST server for several MirrorMaker nodes is not supported yet")

    def _with_prefix(self, prefix: str, *, strip: bool = True) -> dict[str, str]:
        n = len(prefix) if strip else 0
        return {k[n:]: v for k, v in self.props.items() if k.startswith(prefix)}

    def flow_enabled(self, pair: FlowPair) -> bool:
        return _as_bool(self.props.get(f"{pair}.enabled"), False)

    def cluster_pairs(self) -> list[FlowPair]:
        """Every flow that gets a worker: enabled, or with heartbeats on (see the module docstring)."""
        heartbeats = _as_bool(self.props.get("emit.heartbeats.enabled"), True)
        pairs = []
        for source in self.clusters:
            for target in self.clusters:
                if source == target:
                    continue
                pair = FlowPair(source, target)
                flow_heartbeats = _as_bool(self.props.get(f"{pair}.emit.heartbeats.enabled"), heartbeats)
                if self.flow_enabled(pair) or flow_heartbeats:
                    pairs.append(pair)
        return pairs

    def cluster_props(self, cluster: str) -> dict[str, str]:
        """``<cluster>.*`` stripped, with its client keys (and the top-level ones) copied to each client."""
        props = self._with_prefix(cluster + ".")
        for source in (dict(props), {k: v for k, v in self.props.items() if _is_client_key(k)}):
            for key, value in source.items():
                if _is_client_key(key):
                    for client in ("producer.", "consumer.", "admin."):
                        props.setdefault(client + key, value)
                    props.setdefault(key, value)
        return props

    def worker_config(self, pair: FlowPair) -> dict[str, str]:
        """The Connect worker config of ``pair``: bound to the target, Kafka's defaults for the rest."""
        props = self.cluster_props(pair.target)
        for prefix in ("offset.storage", "config.storage", "status.storage", "key.converter", "value.converter",
                       "header.converter", "task", "worker", "replication.policy", "config.providers"):
            props.update(self._with_prefix(prefix, strip=False))
        props.setdefault("client.id", str(pair))
        props.setdefault("group.id", f"{pair.source}-mm2")
        props.setdefault("offset.storage.topic", f"mm2-offsets.{pair.source}.internal")
        props.setdefault("status.storage.topic", f"mm2-status.{pair.source}.internal")
        props.setdefault("config.storage.topic", f"mm2-configs.{pair.source}.internal")
        for key in ("key.converter", "value.converter", "header.converter"):
            props.setdefault(key, BYTE_ARRAY_CONVERTER)
        return props

    def connector_config(self, pair: FlowPair, connector: str) -> dict[str, str]:
        """The config of ``connector`` (a simple class name) for ``pair``; disabled unless the flow is enabled."""
        names = CHECKPOINT_CONFIG_DEF.names() | SOURCE_CONFIG_DEF.names() | HEARTBEAT_CONFIG_DEF.names()
        props = {k: v for k, v in self.props.items() if k in names or k in _FRAMEWORK_KEYS}
        props.update(self._with_prefix("config.providers", strip=False))
        props.update(self._with_prefix("replication.policy", strip=False))
        for prefix, cluster in (("source", pair.source), ("target", pair.target)):
            cluster_props = self.cluster_props(cluster)
            for key, value in cluster_props.items():
                if _CLIENT_PREFIXED.match(key):
                    props[f"{prefix}.{key}"] = value  # source.consumer.*, target.admin.*, ...
                else:
                    props[f"{prefix}.cluster.{key}"] = value
        props.setdefault("name", connector)
        props.setdefault("connector.class", _PACKAGE + connector)
        props.setdefault("source.cluster.alias", pair.source)
        props.setdefault("target.cluster.alias", pair.target)
        props.update(self._with_prefix(f"{pair}."))  # the flow's own settings win
        props.setdefault("enabled", "false")
        return props
