"""Broker configuration: Kafka's ``server.properties`` names, defaults and precedence.

``BrokerConfig.load(path, overrides)`` reads a properties file (read exactly as Java's
``Properties.load`` reads it, by :mod:`seaway.properties`) and lays ``--override key=value``
pairs over it. Every key Kafka's broker knows that matters to a single node is typed and
validated here, in the config engine's table :data:`BROKER_CONFIG_DEF` (a bad value raises
:class:`ConfigError` naming key and value in Kafka's words); keys that
only matter to a cluster (threads, replication, controller quorum) are accepted and ignored
with an info line; unknown keys get a warning naming them. Security keys are resolved by
:mod:`seaway.broker.security.settings`; one the broker does not implement stops it, naming the key.

Deliberate deviations from Kafka, for an embedded single node:

- ``node.id`` (or its older name ``broker.id``) defaults to 1; Kafka requires it;
- ``log.dirs``/``log.dir`` default to ``./data/broker`` (Kafka: ``/tmp/kafka-logs``);
- ``default.replication.factor`` must be 1 (there is one node); the internal topics'
  replication factors are accepted and ignored;
- ``socket.receive.buffer.bytes`` defaults to -1 (the OS's autotuning; Kafka: 102400):
  a 100 KiB receive buffer splits a 1 MiB produce request into about ten reads, and
  each read costs this Python broker more than it costs the JVM (twice the CPU per
  produce request, measured with ``bench/broker_produce.py``);
- ``queued.max.request.bytes`` defaults to 268435456 (256 MiB; Kafka: -1, unbounded):
  Kafka's JVM heap (``-Xmx1G`` by default) bounds its queued requests anyway, and this
  process has no heap limit, so the bound is explicit (see ``request_memory.py``);
- a listener with no host (``PLAINTEXT://:9092``, the default) binds and advertises 127.0.0.1
  (Kafka: every interface): an unconfigured broker is reachable from this machine only;
- listeners named in ``controller.listener.names`` are not bound (there is no KRaft quorum);
- ``num.io.threads`` (Kafka's default 8) sizes the threads that decompress compressed produce
  batches, the part of request handling that may take long; the rest runs on the event loop
  (see ``decompression.py``);
- ``connections.max.decompressed.bytes.per.second`` (64 MiB/s) is Seaway's own: a
  per-connection quota on what compressed batches unpack to, enforced by throttling
  (``throttle_time_ms``, delay) as Kafka enforces its quotas (``decompression.py``).

``log.*`` broker keys become the topic-config defaults exactly as in Kafka (``log.retention.ms``
> ``.minutes`` > ``.hours`` -> ``retention.ms``, ``message.max.bytes`` -> ``max.message.bytes``,
...): :meth:`BrokerConfig.default_log_config` follows the synonym lists of
:data:`~seaway.broker.log.config.TOPIC_CONFIG_DEFS`.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from seaway.broker.log.config import TOPIC_CONFIG_DEFS, KeyedConfig, LogConfig, parse_broker_value
from seaway.broker.security.settings import (
    PROTOCOLS,
    SECURITY_CONFIGS,
    BrokerSecurity,
    ListenerSecurity,
    SecurityConfigError,
    override_target,
    refusal,
    resolve_security,
)
from seaway.configdef import (
    CompositeValidator,
    ConfigDef,
    ConfigException,
    ConfigType,
    Range,
    Validator,
    ValidList,
    ValidString,
    convert_to_string,
)
from seaway.errors import SeawayError
from seaway.properties import PropertiesError, load_properties_file
from seaway.protocol.errors import InvalidConfigError

__all__ = [
    "BROKER_CONFIG_DEF",
    "BROKER_CONFIG_DEFS",
    "BrokerConfig",
    "BrokerConfigDef",
    "ConfigError",
    "Listener",
]

log = logging.getLogger("seaway.broker.config")

Listener = tuple[str, str, int]
"""(listener name, host, port); an empty host means 127.0.0.1 here (see the module docstring)."""

LONG_MAX = 9223372036854775807
INT_MAX = 2147483647
DEFAULT_DECOMPRESSED_BYTES_PER_SECOND = 64 * 1024 * 1024
"""``connections.max.decompressed.bytes.per.second``: see docs/broker.md, "Compressed batches"."""
CONSUMER_GROUP_ASSIGNORS = ("org.apache.kafka.coordinator.group.assignor.UniformAssignor",
                            "org.apache.kafka.coordinator.group.assignor.RangeAssignor")


BROKER_CONFIG_DEF = ConfigDef()
"""Every broker config this broker types and validates, as the config engine's table (parsing,
validation, docs); :data:`BROKER_CONFIG_DEFS` adds whether DescribeConfigs hides the value."""


@dataclass(frozen=True)
class BrokerConfigDef(KeyedConfig):
    """One broker config: its key in :data:`BROKER_CONFIG_DEF` and whether its value is secret."""

    is_sensitive: bool = False


def _validator(type: ConfigType, minimum: float | None, choices: tuple[str, ...]) -> Validator | None:
    """Range.at_least(minimum) and/or the choices (each item of a LIST, or the STRING itself)."""
    checks: list[Validator] = []
    if minimum is not None:
        checks.append(Range.at_least(minimum))
    if choices:
        checks.append(ValidList.in_(*choices) if type is ConfigType.LIST else ValidString.in_(*choices))
    if len(checks) > 1:
        return CompositeValidator.of(*checks)
    return checks[0] if checks else None


def _d(
    name: str,
    type: ConfigType,
    default: Any,
    doc: str,
    minimum: float | None = None,
    choices: tuple[str, ...] = (),
    sensitive: bool = False,
) -> BrokerConfigDef:
    BROKER_CONFIG_DEF.define(name, type, default, _validator(type, minimum, choices), documentation=doc)
    return BrokerConfigDef(BROKER_CONFIG_DEF.key(name), sensitive)


_INT, _LONG, _BOOL, _STR, _LIST, _DOUBLE, _SHORT = (
    ConfigType.INT,
    ConfigType.LONG,
    ConfigType.BOOLEAN,
    ConfigType.STRING,
    ConfigType.LIST,
    ConfigType.DOUBLE,
    ConfigType.SHORT,
)
BROKER_CONFIG_DEFS: Mapping[str, BrokerConfigDef] = {
    d.name: d
    for d in [
        _d("node.id", _INT, None, "This node's id (default 1 here; Kafka requires it).", -1),
        _d("broker.id", _INT, -1, "Older name of node.id.", -1),
        _d(
            "listeners",
            _LIST,
            ("PLAINTEXT://:9092",),
            "NAME://host:port to listen on; empty host = 127.0.0.1, 0.0.0.0 = all interfaces.",
        ),
        _d("advertised.listeners", _LIST, None, "Addresses given to clients (default: listeners)."),
        _d(
            "listener.security.protocol.map",
            _STR,
            "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL",
            "Security protocol of each listener name (PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL).",
        ),
        _d("controller.listener.names", _STR, "", "Listener names of the KRaft controller: not bound here."),
        _d("log.dirs", _STR, None, "Comma-separated data directories (default log.dir)."),
        _d(
            "log.dir",
            _STR,
            "./data/broker",
            "Data directory when log.dirs is unset (Kafka: /tmp/kafka-logs).",
        ),
        _d("num.partitions", _INT, 1, "Partitions of auto-created topics and of CreateTopics with -1.", 1),
        _d("default.replication.factor", _INT, 1, "Replication factor of new topics (must be 1 here)."),
        _d("auto.create.topics.enable", _BOOL, True, "Create unknown topics on metadata requests."),
        _d("delete.topic.enable", _BOOL, True, "Allow DeleteTopics."),
        _d("max.request.partition.size.limit", _INT, 2000,
           "Most partitions one DescribeTopicPartitions response carries.", 1),
        _d("message.max.bytes", _INT, 1048588, "Largest record batch (max.message.bytes default).", 0),
        _d("log.segment.bytes", _INT, 1073741824, "segment.bytes default.", 14),
        _d("log.roll.ms", _LONG, None, "segment.ms default (wins over log.roll.hours).", 1),
        _d("log.roll.hours", _INT, 168, "segment.ms default in hours.", 1),
        _d("log.roll.jitter.ms", _LONG, None, "segment.jitter.ms default.", 0),
        _d("log.roll.jitter.hours", _INT, 0, "segment.jitter.ms default in hours.", 0),
        _d(
            "log.retention.ms",
            _LONG,
            None,
            "retention.ms default (wins over minutes and hours); -1 = forever.",
        ),
        _d("log.retention.minutes", _INT, None, "retention.ms default in minutes (wins over hours)."),
        _d("log.retention.hours", _INT, 168, "retention.ms default in hours."),
        _d("log.retention.bytes", _LONG, -1, "retention.bytes default; -1 = no limit."),
        _d("log.retention.check.interval.ms", _LONG, 300000, "How often retention runs.", 1),
        _d("log.flush.interval.messages", _LONG, LONG_MAX, "flush.messages default.", 1),
        _d(
            "log.flush.interval.ms",
            _LONG,
            None,
            "flush.ms default (default log.flush.scheduler.interval.ms).",
            0,
        ),
        _d("log.flush.scheduler.interval.ms", _LONG, LONG_MAX, "How often the flusher checks logs.", 0),
        _d(
            "log.flush.offset.checkpoint.interval.ms",
            _INT,
            60000,
            "Interval of producer-state snapshots (the other checkpoints follow flushes).",
            0,
        ),
        _d(
            "log.flush.start.offset.checkpoint.interval.ms",
            _INT,
            60000,
            "How often every log's start offset is checkpointed (DeleteRecords survives a crash); 0 = not periodic.",
            0,
        ),
        _d("log.index.interval.bytes", _INT, 4096, "index.interval.bytes default.", 0),
        _d("log.index.size.max.bytes", _INT, 10485760, "segment.index.bytes default.", 12),
        _d("log.preallocate", _BOOL, False, "preallocate default (ignored)."),
        _d("log.segment.delete.delay.ms", _LONG, 60000, "file.delete.delay.ms default.", 0),
        _d(
            "log.message.timestamp.type",
            _STR,
            "CreateTime",
            "message.timestamp.type default.",
            None,
            ("CreateTime", "LogAppendTime"),
        ),
        _d(
            "log.message.timestamp.after.max.ms", _LONG, 3600000, "message.timestamp.after.max.ms default.", 0
        ),
        _d(
            "log.message.timestamp.before.max.ms",
            _LONG,
            LONG_MAX,
            "message.timestamp.before.max.ms default.",
            0,
        ),
        _d("log.cleanup.policy", _LIST, ("delete",), "cleanup.policy default.", None, ("compact", "delete")),
        _d("log.cleaner.enable", _BOOL, True, "Run the log cleaner for compacted topics."),
        _d("log.cleaner.threads", _INT, 1, "Cleaner threads.", 0),
        _d("log.cleaner.backoff.ms", _LONG, 15000, "Sleep when there is nothing to clean.", 0),
        _d("log.cleaner.dedupe.buffer.size", _LONG, 134217728, "Memory for the cleaner's key map."),
        _d("log.cleaner.io.buffer.size", _INT, 524288, "Cleaner I/O buffer.", 0),
        _d("log.cleaner.io.max.bytes.per.second", _DOUBLE, 1.7976931348623157e308, "Cleaner I/O throttle."),
        _d("log.cleaner.delete.retention.ms", _LONG, 86400000, "delete.retention.ms default.", 0),
        _d("log.cleaner.min.cleanable.ratio", _DOUBLE, 0.5, "min.cleanable.dirty.ratio default.", 0),
        _d("log.cleaner.min.compaction.lag.ms", _LONG, 0, "min.compaction.lag.ms default.", 0),
        _d("log.cleaner.max.compaction.lag.ms", _LONG, LONG_MAX, "max.compaction.lag.ms default.", 1),
        _d("log.local.retention.ms", _LONG, -2, "local.retention.ms default (tiered storage, unused).", -2),
        _d(
            "log.local.retention.bytes",
            _LONG,
            -2,
            "local.retention.bytes default (tiered storage, unused).",
            -2,
        ),
        _d(
            "compression.type",
            _STR,
            "producer",
            "compression.type default.",
            None,
            ("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"),
        ),
        _d("compression.gzip.level", _INT, -1, "compression.gzip.level default."),
        _d("compression.lz4.level", _INT, 9, "compression.lz4.level default."),
        _d("compression.zstd.level", _INT, 3, "compression.zstd.level default."),
        _d("min.insync.replicas", _INT, 1, "min.insync.replicas default.", 1),
        _d("unclean.leader.election.enable", _BOOL, False, "unclean.leader.election.enable default."),
        _d("num.recovery.threads.per.data.dir", _INT, 2, "Threads that open logs at start.", 1),
        _d("offsets.topic.num.partitions", _INT, 50, "Partitions of __consumer_offsets.", 1),
        _d(
            "offsets.topic.replication.factor",
            _SHORT,
            1,
            "Accepted; __consumer_offsets has one replica here.",
            1,
        ),
        _d("offsets.topic.segment.bytes", _INT, 104857600, "segment.bytes of __consumer_offsets.", 1),
        _d("offsets.retention.minutes", _INT, 10080, "How long committed offsets of empty groups live.", 1),
        _d("offsets.retention.check.interval.ms", _LONG, 600000, "How often stale offsets are expired.", 1),
        _d("offsets.commit.timeout.ms", _INT, 5000, "Offset commit timeout.", 1),
        _d("offsets.load.buffer.size", _INT, 5242880, "Read size when loading offsets.", 1),
        _d("offset.metadata.max.bytes", _INT, 4096, "Largest offset commit metadata string."),
        _d(
            "group.initial.rebalance.delay.ms",
            _INT,
            3000,
            "Wait for more members before the first rebalance.",
            0,
        ),
        _d("group.min.session.timeout.ms", _INT, 6000, "Smallest session timeout a member may ask for."),
        _d("group.max.session.timeout.ms", _INT, 1800000, "Largest session timeout a member may ask for."),
        _d("group.max.size", _INT, INT_MAX, "Most members of one group.", 1),
        # KIP-848 consumer groups (group.protocol=consumer); checked together in _check_consumer_groups.
        _d("group.consumer.session.timeout.ms", _INT, 45000, "Session timeout of consumer group members.", 1),
        _d("group.consumer.min.session.timeout.ms", _INT, 45000, "Smallest group.consumer.session.timeout.ms.", 1),
        _d("group.consumer.max.session.timeout.ms", _INT, 60000, "Largest group.consumer.session.timeout.ms.", 1),
        _d("group.consumer.heartbeat.interval.ms", _INT, 5000, "Heartbeat interval given to consumer group members.",
           1),
        _d("group.consumer.min.heartbeat.interval.ms", _INT, 5000, "Smallest group.consumer.heartbeat.interval.ms.", 1),
        _d("group.consumer.max.heartbeat.interval.ms", _INT, 15000, "Largest group.consumer.heartbeat.interval.ms.", 1),
        _d("group.consumer.max.size", _INT, INT_MAX, "Most members of one consumer group.", 1),
        _d("group.consumer.assignors", _LIST, CONSUMER_GROUP_ASSIGNORS, "Server-side assignors; the first is the "
           "default.", None, (*CONSUMER_GROUP_ASSIGNORS, "uniform", "range")),
        _d("transaction.state.log.num.partitions", _INT, 50, "Partitions of __transaction_state.", 1),
        _d("transaction.state.log.replication.factor", _SHORT, 1, "Accepted; one replica here.", 1),
        _d(
            "transaction.state.log.segment.bytes", _INT, 104857600, "segment.bytes of __transaction_state.", 1
        ),
        _d("transactional.id.expiration.ms", _INT, 604800000, "Idle transactional ids expire after this.", 1),
        _d(
            "transaction.max.timeout.ms",
            _INT,
            900000,
            "Largest transaction timeout a producer may ask for.",
            1,
        ),
        _d(
            "transaction.abort.timed.out.transaction.cleanup.interval.ms",
            _INT,
            10000,
            "How often transactions open past their timeout are aborted.",
            1,
        ),
        _d(
            "transaction.remove.expired.transaction.cleanup.interval.ms",
            _INT,
            3600000,
            "How often transactional ids idle for transactional.id.expiration.ms are removed.",
            1,
        ),
        _d(
            "transaction.partition.verification.enable",
            _BOOL,
            True,
            "Check that a transaction's first batch on a partition was added to it (KIP-890).",
        ),
        _d("producer.id.expiration.ms", _INT, 86400000, "Idle producer ids expire after this.", 1),
        _d("socket.request.max.bytes", _INT, 104857600, "Largest request frame.", 1),
        _d("socket.send.buffer.bytes", _INT, 102400, "SO_SNDBUF of client connections (-1 = OS default).", -1),
        _d(
            "socket.receive.buffer.bytes",
            _INT,
            -1,
            "SO_RCVBUF of client connections (-1 = OS default; Kafka's default is 102400).",
            -1,
        ),
        _d(
            "connections.max.idle.ms",
            _LONG,
            600000,
            "Close client connections with no traffic for this long (-1 = never).",
            -1,
        ),
        _d(
            "queued.max.request.bytes",
            _LONG,
            268435456,
            "Bytes of requests read and queued across all connections before the broker stops "
            "reading (0 or less = no limit, Kafka's default -1).",
        ),
        _d("max.connections", _INT, INT_MAX, "Most client connections; at the limit new ones wait.", 0),
        _d(
            "num.io.threads",
            _INT,
            8,
            "Threads that decompress and check compressed produce batches off the event loop "
            "(the rest of request handling runs on the event loop).",
            1,
        ),
        # Seaway's own key (Kafka has no such limit): docs/broker.md "Connection and resource limits".
        _d(
            "connections.max.decompressed.bytes.per.second",
            _LONG,
            DEFAULT_DECOMPRESSED_BYTES_PER_SECOND,
            "Per connection: bytes its compressed produce batches may unpack to per second; past it the "
            "connection is throttled (throttle_time_ms, its next compressed batch delayed), never refused "
            "(0 or less = no limit).",
            -1,
        ),
        # Seaway's own key (Kafka has no HTTP metrics port; jmx_exporter adds one): docs/metrics.md.
        _d("metrics.listener", _STR, "",
           "host:port (or https://host:port, TLS with the ssl.* settings) of the Prometheus /metrics listener "
           "(port 0: any free port); empty = off. With an authorizer, scrapes need a broker user's credentials."),
        _d("metrics.lag.window.intervals", _INT, 10,
           "Commits kept per group partition for the lag status (Burrow's storage intervals).", 1),
        _d("metrics.lag.min.distance.ms", _LONG, 1000,
           "Commits closer than this to the previous one replace it in the lag window (Burrow's min-distance).", 0),
        _d(
            "max.connections.per.ip",
            _INT,
            INT_MAX,
            "Most connections from one address; past it new ones are closed at once.",
            0,
        ),
        _d(
            "max.connections.per.ip.overrides",
            _STR,
            "",
            "Per-address or per-host exceptions to max.connections.per.ip: 'host:100,127.0.0.1:200'.",
        ),
        # Test-only fault injection (Seaway's own keys, off by default; never set in production).
        _d(
            "seaway.test.fault.drop.produce.response.after.append",
            _INT,
            0,
            "TEST ONLY: drop the connection after every Nth produce request is appended, before "
            "its response (0 = off).",
            0,
        ),
        _d(
            "seaway.test.fault.cleaner.pause.ms",
            _LONG,
            0,
            "TEST ONLY: the log cleaner sleeps this long around each segment swap (0 = off).",
            0,
        ),
    ]
    + [
        _d(name, config_type, default, doc, None, choices, sensitive)
        for name, config_type, default, doc, sensitive, choices in SECURITY_CONFIGS
    ]
}
"""Every broker config this broker types and validates, by Kafka name."""

IGNORED_KEYS = frozenset(
    {
        "num.network.threads",
        "background.threads",
        "queued.max.requests",
        "num.replica.fetchers",
        "num.replica.alter.log.dirs.threads",
        "process.roles",
        "inter.broker.protocol.version",
        "auto.leader.rebalance.enable",
        "leader.imbalance.check.interval.seconds",
        "leader.imbalance.per.broker.percentage",
        "log.message.format.version",
        "message.downconversion.enable",
        "request.timeout.ms",
        "socket.listen.backlog.size",
        "initial.broker.registration.timeout.ms",
        "broker.rack",
        "unstable.api.versions.enable",
        "unstable.feature.versions.enable",
        "group.coordinator.rebalance.protocols",
    }
)
IGNORED_PREFIXES = (
    "controller.",
    "metadata.",
    "replica.",
    "zookeeper.",
    "remote.",
    "quota.",
    "share.",
    "group.share.",
    "group.consumer.",
    "metric.",
    "metrics.",
    "broker.heartbeat",
    "broker.session",
    "kafka.metrics",
    "log.cleaner.io.buffer.load",
    "client.quota",
    "alter.",
    "create.topic.policy",
    "num.quota",
    "telemetry.",
    "transaction.",
    "group.coordinator.",
    "log.initial.task",
)

_LISTENER = re.compile(r"^([A-Za-z0-9_]+)://(\[[^\]]*\]|[^:\[\]]*):(\d+)$")
# Topic config default <- broker key, with the factor turning the broker unit into the topic unit.
_UNITS = {
    "log.retention.minutes": 60_000,
    "log.retention.hours": 3_600_000,
    "log.roll.hours": 3_600_000,
    "log.roll.jitter.hours": 3_600_000,
}


class ConfigError(SeawayError):
    """A broker config that cannot be used; the message names the key and the value."""


class BrokerConfig:
    """Typed broker settings plus the raw properties they came from (for DescribeConfigs)."""

    node_id: int
    log_dirs: list[Path]
    listeners: list[Listener]
    advertised_listeners: list[Listener]
    num_partitions: int
    default_replication_factor: int
    auto_create_topics_enable: bool
    delete_topic_enable: bool
    message_max_bytes: int
    log_retention_check_interval_ms: int
    log_flush_scheduler_interval_ms: int
    log_cleaner_enable: bool
    log_cleaner_threads: int
    log_cleaner_backoff_ms: int
    log_cleaner_dedupe_buffer_size: int
    num_recovery_threads_per_data_dir: int
    offsets_topic_num_partitions: int
    offsets_topic_segment_bytes: int
    offsets_retention_minutes: int
    offsets_retention_check_interval_ms: int
    offsets_commit_timeout_ms: int
    offset_metadata_max_bytes: int
    group_initial_rebalance_delay_ms: int
    group_min_session_timeout_ms: int
    group_max_session_timeout_ms: int
    group_max_size: int
    transaction_state_log_num_partitions: int
    transactional_id_expiration_ms: int
    transaction_max_timeout_ms: int
    producer_id_expiration_ms: int
    socket_request_max_bytes: int
    socket_send_buffer_bytes: int
    socket_receive_buffer_bytes: int
    connections_max_idle_ms: int
    queued_max_request_bytes: int
    max_connections: int
    num_io_threads: int
    connections_max_decompressed_bytes_per_second: int
    max_connections_per_ip: int
    max_connections_per_ip_overrides_map: dict[str, int]
    listener_protocols: dict[str, str]
    listener_security: dict[str, ListenerSecurity]
    super_users: frozenset[str]
    metadata_log_dir: Path
    connection_failed_authentication_delay_ms: int
    sasl_server_max_receive_size: int
    allow_everyone_if_no_acl_found: bool
    metrics_listener: str
    metrics_lag_window_intervals: int
    metrics_lag_min_distance_ms: int

    def __init__(self, props: Mapping[str, str] | None = None) -> None:
        self.raw: dict[str, str] = dict(props or {})
        self._values: dict[str, Any] = {}
        names = {n.upper() for n in re.findall(r"([A-Za-z0-9_]+)://", self.raw.get("listeners", "PLAINTEXT://"))}
        for key, raw in self.raw.items():
            reason = refusal(key, raw, names)
            if reason is not None:
                raise ConfigError(f"{reason} (Seaway's broker refuses to start rather than ignore it)")
        for key, raw in self.raw.items():
            definition = BROKER_CONFIG_DEFS.get(key)
            if definition is not None:
                self._values[key] = _parse(definition, raw)
        for key, definition in BROKER_CONFIG_DEFS.items():
            setattr(self, definition.attr, self.get(key))
        self.node_id = self._node_id()
        self.log_dirs = self._log_dirs()
        self.listeners, self.advertised_listeners = self._listeners()
        self._check_keys()
        self._check_consumer_groups()
        self.listener_security, self.super_users = (security := self._security()).listeners, security.super_users
        self.metadata_log_dir = Path(str(self.get("metadata.log.dir") or self.log_dirs[0]))
        self.max_connections_per_ip_overrides_map = self._connection_overrides()
        if 0 < self.queued_max_request_bytes < self.socket_request_max_bytes:
            # Kafka's memory pool refuses a size below the largest single request.
            raise ConfigError(
                f"queued.max.request.bytes={self.queued_max_request_bytes} must be at least "
                f"socket.request.max.bytes={self.socket_request_max_bytes} (or -1: no limit)"
            )
        if self.default_replication_factor != 1:
            raise ConfigError(
                f"default.replication.factor={self.default_replication_factor}: "
                "this is a single-node broker, "
                "so the replication factor must be 1"
            )
        self._default_log_config = self._build_default_log_config()

    def _check_keys(self) -> None:
        """Log ignored keys, warn about unknown ones; listener overrides are typed as what they override."""
        names = {name for name, _, _ in self.listeners}
        unknown = []
        for key, raw in self.raw.items():
            if key in BROKER_CONFIG_DEFS:
                continue
            target = override_target(key, names)
            if target is not None:
                if target in BROKER_CONFIG_DEFS:
                    self.parse_value(target, raw, key)  # a bad value fails here, naming the key
                continue
            if key in IGNORED_KEYS or key.startswith(IGNORED_PREFIXES):
                log.info("broker config %s is accepted and ignored on a single node", key)
            else:
                unknown.append(key)
        if unknown:
            log.warning("unknown broker config(s) ignored: %s", ", ".join(sorted(unknown)))

    def _check_consumer_groups(self) -> None:
        """Kafka's GroupCoordinatorConfig requirements between the group.consumer.* values."""
        p = "group.consumer."
        v = {k: self.get(p + k) for k in ("session.timeout.ms", "min.session.timeout.ms", "max.session.timeout.ms",
                                          "heartbeat.interval.ms", "min.heartbeat.interval.ms",
                                          "max.heartbeat.interval.ms")}
        for low, high in (("min.session.timeout.ms", "max.session.timeout.ms"),
                          ("min.session.timeout.ms", "session.timeout.ms"),
                          ("session.timeout.ms", "max.session.timeout.ms"),
                          ("min.heartbeat.interval.ms", "max.heartbeat.interval.ms"),
                          ("min.heartbeat.interval.ms", "heartbeat.interval.ms"),
                          ("heartbeat.interval.ms", "max.heartbeat.interval.ms")):
            if v[low] > v[high]:
                raise ConfigError(f"{p}{high}={v[high]} must be at least {p}{low}={v[low]}")
        if v["heartbeat.interval.ms"] >= v["session.timeout.ms"]:
            raise ConfigError(f"{p}heartbeat.interval.ms={v['heartbeat.interval.ms']} must be less than "
                              f"{p}session.timeout.ms={v['session.timeout.ms']}")

    def _security(self) -> BrokerSecurity:
        try:  # per listener: protocol, TLS context (key material loaded now), SASL mechanisms
            return resolve_security(self, self.listeners, self.listener_protocols)
        except SecurityConfigError as exc:
            raise ConfigError(str(exc)) from None

    @property
    def authorizer_enabled(self) -> bool:
        return bool(self.get("authorizer.class.name"))

    def parse_value(self, key: str, raw: str, shown_as: str | None = None) -> Any:
        """``raw`` typed as ``key``'s value; a ConfigError names ``shown_as`` (a listener override)."""
        return _parse(BROKER_CONFIG_DEFS[key], raw, shown_as)

    @classmethod
    def load(cls, path: str | Path | None = None, overrides: Mapping[str, str] | None = None) -> BrokerConfig:
        """Read ``path`` (a server.properties file; None for defaults) and apply ``overrides``."""
        props: dict[str, str] = {}
        if path is not None:
            try:
                props = load_properties_file(path)
            except PropertiesError as exc:
                raise ConfigError(f"{path}: {exc}") from None
        props.update(overrides or {})
        return cls(props)

    # -- lookups -------------------------------------------------------------------------

    @staticmethod
    def definitions() -> Mapping[str, BrokerConfigDef]:
        """Every broker config this broker knows, by name."""
        return BROKER_CONFIG_DEFS

    def get(self, key: str) -> Any:
        """The typed value of a known key (its default when unset)."""
        if key in self._values:
            return self._values[key]
        return BROKER_CONFIG_DEFS[key].default

    def source_of(self, key: str) -> str:
        """``"static"`` when set in the file or overrides, else ``"default"``."""
        return "static" if key in self.raw else "default"

    def value_string(self, key: str) -> str | None:
        """The value as DescribeConfigs shows it (None for an unset key without default)."""
        if key in ("node.id", "broker.id"):
            return str(self.node_id)  # one id, whichever of the two names set it
        if key in self.raw:
            return self.raw[key]
        return BROKER_CONFIG_DEFS[key].default_string()

    def default_log_config(self) -> LogConfig:
        """Topic-config defaults derived from the ``log.*`` broker keys (Kafka's synonyms)."""
        return self._default_log_config

    # -- derivations ---------------------------------------------------------------------

    def _node_id(self) -> int:
        node, broker = self._values.get("node.id"), self._values.get("broker.id")
        if node is not None and broker is not None and node != broker and broker != -1:
            raise ConfigError(f"node.id={node} and broker.id={broker} must match when both are set")
        value = node if node is not None else broker
        if value is None or value == -1:
            return 1
        if value < 0:
            raise ConfigError(f"node.id={value} must not be negative")
        return int(value)

    def _log_dirs(self) -> list[Path]:
        text = (
            self.raw.get("log.dirs") or self.raw.get("log.dir") or str(BROKER_CONFIG_DEFS["log.dir"].default)
        )
        dirs = [Path(item.strip()) for item in text.split(",") if item.strip()]
        if not dirs:
            raise ConfigError(f"log.dirs={text!r} names no directory")
        return dirs

    def _listeners(self) -> tuple[list[Listener], list[Listener]]:
        protocol_map = {}
        for item in str(self.get("listener.security.protocol.map")).split(","):
            name, sep, protocol = item.strip().partition(":")
            if not sep:
                raise ConfigError(f"listener.security.protocol.map entry {item!r} is not NAME:PROTOCOL")
            protocol_map[name.strip().upper()] = protocol.strip().upper()
        controllers = {
            n.strip().upper() for n in str(self.get("controller.listener.names")).split(",") if n.strip()
        }
        bad = next((f"{n}:{p}" for n, p in protocol_map.items() if p not in PROTOCOLS), None)
        if bad:
            raise ConfigError(f"listener.security.protocol.map: {bad} is not one of {', '.join(PROTOCOLS)}")
        self.listener_protocols = protocol_map
        listeners = _parse_listeners("listeners", self.get("listeners"), protocol_map)
        served = [entry for entry in listeners if entry[0] not in controllers]
        if not served:
            raise ConfigError(
                f"listeners={self.raw.get('listeners', '')!r} leaves no listener to serve clients on"
            )
        if "advertised.listeners" not in self.raw:
            return served, list(served)
        advertised = _parse_listeners("advertised.listeners", self.get("advertised.listeners"), protocol_map)
        names = {entry[0] for entry in listeners}
        for name, _, _ in advertised:
            if name not in names:
                raise ConfigError(f"advertised.listeners names {name}, which is not in listeners")
        return served, [entry for entry in advertised if entry[0] not in controllers]

    def _connection_overrides(self) -> dict[str, int]:
        """``max.connections.per.ip.overrides`` as {host or address: count} (Kafka's CSV map)."""
        text = str(self.get("max.connections.per.ip.overrides") or "")
        result: dict[str, int] = {}
        for item in (part.strip() for part in text.split(",")):
            if not item:
                continue
            host, sep, count = item.rpartition(":")
            host = host.strip().strip("[]")
            try:
                value = int(count.strip())
            except ValueError:
                value = -1
            if not sep or not host or value < 0:
                raise ConfigError(
                    f"Invalid value {text!r} for broker config max.connections.per.ip.overrides: "
                    f"{item!r} is not host:count with a count of at least 0"
                )
            result[host] = value
        if self.max_connections_per_ip == 0 and not result:
            raise ConfigError(
                "max.connections.per.ip can be set to zero only if max.connections.per.ip.overrides "
                "property is set."
            )
        return result

    def _build_default_log_config(self) -> LogConfig:
        props: dict[str, str] = {}
        origin: dict[str, str] = {}
        for name, definition in TOPIC_CONFIG_DEFS.items():
            for key in definition.synonyms:
                if key in self.raw:
                    value = self.get(key)
                    if key in _UNITS and value is not None:
                        value = value * _UNITS[key] if value >= 0 else -1
                    if name == "retention.ms" and isinstance(value, int) and value < 0:
                        value = -1
                    props[name] = value if isinstance(value, str) else convert_to_string(value) or ""
                    origin[name] = key
                    break
        try:
            return LogConfig.from_properties(props)
        except InvalidConfigError as exc:
            name = next((n for n in props if n in str(exc)), "")
            key = origin.get(name, "?")
            raise ConfigError(f"{key}={self.raw.get(key)!r} is invalid: {exc}") from None

    def __repr__(self) -> str:
        return f"BrokerConfig(node_id={self.node_id}, listeners={self.listeners}, log_dirs={self.log_dirs})"


def _parse(definition: BrokerConfigDef, raw: str, shown_as: str | None = None) -> Any:
    """``raw`` typed and validated as ``definition``'s value; a ConfigError in Kafka's words naming
    the key, or ``shown_as`` (the listener override that set it)."""
    try:
        return parse_broker_value(definition.key, raw)
    except ConfigException as exc:
        if shown_as is not None:
            exc = ConfigException.invalid(shown_as, exc.value, exc.reason)
        raise ConfigError(str(exc)) from None


def _parse_listeners(key: str, items: tuple[str, ...], protocol_map: Mapping[str, str]) -> list[Listener]:
    result: list[Listener] = []
    for item in items:
        match = _LISTENER.match(item)
        if match is None:
            raise ConfigError(f"{key}: {item!r} is not NAME://host:port")
        name, host, port = match.group(1).upper(), match.group(2).strip("[]"), int(match.group(3))
        if port > 65535:
            raise ConfigError(f"{key}: port {port} in {item!r} is out of range")
        protocol = protocol_map.get(name)
        if protocol is None:
            raise ConfigError(f"{key}: listener {name} is not in listener.security.protocol.map")
        if any(existing[0] == name for existing in result):
            raise ConfigError(f"{key}: listener name {name} appears twice")
        result.append((name, host, port))
    return result
