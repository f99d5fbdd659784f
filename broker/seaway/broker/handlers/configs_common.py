"""What DescribeConfigs, AlterConfigs and IncrementalAlterConfigs share.

Topic configs come from :mod:`seaway.broker.log.config` (one table for parsing,
validation, defaults and synonyms); broker configs from :mod:`seaway.broker.config`.
A topic's stored state is only its *override set*: every alter computes the new
override set, validates it laid over the broker defaults (so a bad value is refused
naming the key, before anything changes) and then hands the whole set to the log
manager, which persists it and swaps the partitions' :class:`LogConfig`.

Broker configs are static on this single node (``server.properties`` plus
``--override``): alters of broker resources are refused with INVALID_REQUEST unless
they would change nothing.
"""

from __future__ import annotations

import enum
import logging
from collections import Counter
from collections.abc import Iterable, Mapping

from seaway.broker.context import BrokerContext
from seaway.broker.log.config import (
    TOPIC_CONFIG_DEFS,
    ConfigEntry,
    ConfigSource,
    LogConfig,
    describe_topic_configs,
    synonym_chain,
)
from seaway.configdef import ConfigType
from seaway.protocol.errors import (
    InvalidConfigError,
    InvalidRequestError,
    KafkaProtocolError,
    KafkaStorageError,
    UnknownTopicOrPartitionError,
)

__all__ = [
    "ConfigOp",
    "ResourceType",
    "broker_config_entries",
    "check_broker_resource",
    "check_unique_keys",
    "error_of",
    "is_list_config",
    "refuse_broker_change",
    "store_topic_overrides",
    "topic_config_entries",
    "topic_overrides",
    "unsupported_resource",
    "validate_topic_overrides",
]

log = logging.getLogger("seaway.broker.admin")


class ResourceType(enum.IntEnum):
    """``ConfigResource.Type`` codes on the wire."""

    UNKNOWN = 0
    TOPIC = 2
    BROKER = 4
    BROKER_LOGGER = 8
    CLIENT_METRICS = 16
    GROUP = 32


class ConfigOp(enum.IntEnum):
    """IncrementalAlterConfigs ``AlterConfigOp.OpType`` codes."""

    SET = 0
    DELETE = 1
    APPEND = 2
    SUBTRACT = 3


def error_of(exc: KafkaProtocolError) -> tuple[int, str]:
    """(error code, message) for a response, the message never empty."""
    return exc.code, str(exc) or exc.name


def topic_overrides(broker: BrokerContext, name: str) -> dict[str, str]:
    """The topic's own configs; UNKNOWN_TOPIC_OR_PARTITION when it does not exist."""
    meta = broker.logs.topics().get(name)
    if meta is None:
        raise UnknownTopicOrPartitionError(f"Topic '{name}' does not exist.")
    return dict(meta.config_overrides)


def validate_topic_overrides(broker: BrokerContext, overrides: Mapping[str, str | None]) -> LogConfig:
    """The effective config ``overrides`` would give; INVALID_CONFIG naming the bad key."""
    nulls = sorted(k for k, v in overrides.items() if v is None)
    if nulls:
        raise InvalidConfigError(f"Null value not supported for topic configs: {','.join(nulls)}")
    values = {k: v for k, v in overrides.items() if v is not None}
    return LogConfig.from_properties(values, broker.config.default_log_config())


def topic_config_entries(broker: BrokerContext, overrides: Mapping[str, str]) -> list[ConfigEntry]:
    """Every topic config with its value, source and synonyms, for a topic with ``overrides``."""
    effective = validate_topic_overrides(broker, overrides)
    return describe_topic_configs(effective, overrides, broker.config.raw, _broker_defaults(broker))


def _broker_defaults(broker: BrokerContext) -> dict[str, str]:
    """The broker keys that have a default, as strings (Kafka's ``staticDefaultConfigs``): a key
    whose default is null (``log.retention.ms``, ``log.roll.ms``) is no DEFAULT_CONFIG synonym."""
    out = {}
    for key, definition in broker.config.definitions().items():
        default = definition.default_string()
        if default is not None:
            out[key] = default
    return out


def check_broker_resource(broker: BrokerContext, name: str) -> bool:
    """Validate a BROKER resource name; True for this node, False for ``""`` (cluster default).

    Kafka answers INVALID_REQUEST for a name that is not an integer or names another broker.
    """
    if name == "":
        return False
    try:
        node = int(name)
    except ValueError:
        raise InvalidRequestError(f"Broker id must be an integer, but it is: {name}") from None
    if node != broker.node_id:
        raise InvalidRequestError(
            f"Unexpected broker id, expected {broker.node_id} or empty string, but received {name}"
        )
    return True


def broker_config_entries(broker: BrokerContext, this_node: bool) -> list[ConfigEntry]:
    """The broker's configs: every known key with its value, source and synonyms, as Kafka lists them.

    The cluster-default resource (``this_node`` False) holds only dynamic defaults, and
    this broker has none, so it is empty, as on a Kafka cluster nobody altered. Synonyms
    follow Kafka's ``configSynonyms`` (see :func:`synonym_chain`): the key's synonym group,
    static values first, then non-null defaults; a key without either lists none.
    """
    if not this_node:
        return []
    config = broker.config
    defaults = _broker_defaults(broker)
    entries: list[ConfigEntry] = []
    for key, definition in sorted(config.definitions().items()):
        hidden = definition.is_sensitive
        synonyms = [(name, None if hidden else value, source)
                    for name, value, source in synonym_chain(_broker_synonyms(key), key, config.raw, defaults)]
        entries.append(
            ConfigEntry(
                name=key,
                value=None if hidden else config.value_string(key),
                source=synonyms[0][2] if synonyms else ConfigSource.DEFAULT_CONFIG,
                type=definition.type,
                doc=definition.doc,
                read_only=True,
                is_sensitive=hidden,
                synonyms=tuple(synonyms),
            )
        )
    return entries


_BROKER_SYNONYMS = (
    ("log.roll.ms", "log.roll.hours"),
    ("log.roll.jitter.ms", "log.roll.jitter.hours"),
    ("log.retention.ms", "log.retention.minutes", "log.retention.hours"),
)


def _broker_synonyms(key: str) -> tuple[str, ...]:
    """Kafka's ``DynamicBrokerConfig.brokerConfigSynonyms``: the keys that set the same thing."""
    if key == "log.flush.interval.ms":  # only this one: the scheduler interval is merely its default
        return ("log.flush.interval.ms", "log.flush.scheduler.interval.ms")
    return next((group for group in _BROKER_SYNONYMS if key in group), (key,))


def check_unique_keys(names: Iterable[str]) -> None:
    """Kafka refuses a resource that names the same config twice."""
    dupes = sorted(k for k, n in Counter(names).items() if n > 1)
    if dupes:
        raise InvalidRequestError(f"Error due to duplicate config keys: {', '.join(dupes)}")


def refuse_broker_change(keys: Iterable[str]) -> None:
    """Broker configs are static here: any real change is INVALID_REQUEST, saying why."""
    changed = sorted(set(keys))
    if changed:
        raise InvalidRequestError(
            "Broker configs are static on this single-node broker (server.properties and --override, "
            f"applied at start); dynamic updates are not supported: {', '.join(changed)}"
        )


def is_list_config(name: str) -> bool:
    definition = TOPIC_CONFIG_DEFS.get(name)
    return definition is not None and definition.type is ConfigType.LIST


def store_topic_overrides(broker: BrokerContext, name: str, overrides: Mapping[str, str | None],
                          validate_only: bool) -> None:
    """Validate ``overrides`` as the topic's whole override set and, unless validating, store it.

    Blocking (the log manager fsyncs its metadata): call it off the event loop.
    """
    validate_topic_overrides(broker, overrides)
    if validate_only:
        return
    values = {k: v for k, v in overrides.items() if v is not None}
    try:
        broker.logs.alter_topic_config(name, values)
    except OSError as exc:
        raise KafkaStorageError(f"Storing the configs of topic '{name}' failed: {exc}") from exc
    log.info("topic %s configs now %s", name, values or "{}")


def unsupported_resource(kind: int) -> InvalidRequestError:
    label = ResourceType(kind).name if kind in ResourceType.__members__.values() else str(kind)
    return InvalidRequestError(f"Unsupported resource type {label}: this broker has TOPIC and BROKER configs")
