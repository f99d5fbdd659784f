"""A connector's configuration, parsed once into a frozen, typed value (Kafka's ``ConnectorConfig``).

The path of one config through Connect::

    REST body / connector file        dict[str, str], as the user wrote it
      -> herder.validate_sync         ConfigDef.validate: every error, each naming its key (400)
      -> config store                 the same dict: the connect-configs record, placeholders kept
      -> worker.connector_config      placeholders resolved, then ConnectorConfig.parse: once
      -> WorkerConnector              Connector.start(config.props)
      -> connector_task_configs       config.tasks_max, config.tasks_max_enforce
      -> TaskSetup                    converters, SMT chain, error handling, topics, client overrides

A herder parses when a connector or task starts (placeholders are resolved then, as Kafka
resolves them at every start, so a rotated secret is picked up by a restart) and hands the
value on; nothing after it reads a key or a default from the dict again. The raw dicts stay
where Kafka's contract has them: REST bodies, connect-configs records, and what
``Connector.start`` / ``Task.start`` receive.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any

from seaway.connect.api import ConfigDef, ConfigError, Connector, SinkConnector, TransactionBoundary
from seaway.connect.runtime.config import enrich, sink_config_def, source_config_def
from seaway.connect.runtime.plugins import PluginKind, Plugins

__all__ = [
    "CLIENTS",
    "ConnectorConfig",
    "ErrorHandling",
    "ExactlyOnce",
    "PluginSpec",
    "PredicateSpec",
    "TopicCreation",
    "TopicCreationGroup",
    "TransformSpec",
    "connector_definition",
]

CLIENTS = ("producer", "consumer", "admin")
"""The clients a connector may override settings of (``<client>.override.*``)."""

Props = Mapping[str, Any]


def _frozen(props: Mapping[str, Any]) -> Props:
    return MappingProxyType(dict(props))


def _with_prefix(props: Mapping[str, Any], prefix: str) -> dict[str, Any]:
    n = len(prefix)
    return {k[n:]: v for k, v in props.items() if k.startswith(prefix)}


def connector_definition(plugins: Plugins, connector_class: type[Connector], props: Mapping[str, Any]) -> ConfigDef:
    """The framework ConfigDef of ``props``: sink or source keys, enriched with its SMTs' and predicates' keys.

    Validation (``validate_sync``) and parsing (:meth:`ConnectorConfig.parse`) both use it, so
    a config that validates is parsed against the very same keys.
    """
    sink = issubclass(connector_class, SinkConnector)
    return enrich(plugins, sink_config_def(plugins) if sink else source_config_def(plugins), props)


def declared_converter(plugins: Plugins, connector_class: type[Connector], key: str) -> type | None:
    """The converter a connector's own ConfigDef gives ``key`` (``key.converter``...) as default, if any.

    A Seaway extension: a connector whose records are only right with one converter (the mirror
    connectors pass bytes through and declare ByteArrayConverter, as Kafka's MirrorMaker sets it)
    gets it when its config names none, whatever the worker's default.
    """
    declared = connector_class().config().config_keys().get(key)
    if declared is None or not isinstance(declared.default, str) or not declared.default:
        return None
    return plugins.find(PluginKind.HEADER_CONVERTER if key == "header.converter" else PluginKind.CONVERTER,
                        declared.default)


@dataclass(frozen=True, slots=True)
class PluginSpec:
    """A converter a connector config names: its class and the props it is configured with."""

    cls: type
    props: Props


@dataclass(frozen=True, slots=True)
class PredicateSpec:
    """``predicates.<alias>.type`` and the predicate's own ``predicates.<alias>.*`` props."""

    alias: str
    type_name: str
    props: Props


@dataclass(frozen=True, slots=True)
class TransformSpec:
    """One stage of the SMT chain: ``transforms.<alias>.type|predicate|negate`` and its own props."""

    alias: str
    type_name: str
    props: Props
    predicate: str | None
    negate: bool


@dataclass(frozen=True, slots=True)
class ErrorHandling:
    """``errors.*``: retries, tolerance, logging and (sinks only) the dead letter queue."""

    retry_timeout_ms: int
    retry_delay_max_ms: int
    tolerate_all: bool
    log_enable: bool
    log_include_messages: bool
    dlq_topic: str = ""
    dlq_replication_factor: int = 3
    dlq_context_headers: bool = False


@dataclass(frozen=True, slots=True)
class TopicCreationGroup:
    """A ``topic.creation.<group>`` (or ``default``): which topics it matches and how they are created."""

    name: str
    include: tuple[str, ...]
    exclude: tuple[str, ...]
    partitions: int
    replication_factor: int
    configs: Props

    def matches(self, topic: str) -> bool:
        return (any(re.fullmatch(p, topic) for p in self.include)
                and not any(re.fullmatch(p, topic) for p in self.exclude))


@dataclass(frozen=True, slots=True)
class ExactlyOnce:
    """A source connector's KIP-618 keys: what it asks for and where its transactions end.

    Acted on only by a distributed worker with ``exactly.once.source.support=enabled``;
    ``offsets_topic`` (``offsets.storage.topic``) by any distributed worker.
    """

    required: bool = False
    transaction_boundary: TransactionBoundary = TransactionBoundary.POLL
    transaction_boundary_interval_ms: int | None = None
    offsets_topic: str | None = None

    @classmethod
    def parse(cls, values: Mapping[str, Any]) -> ExactlyOnce:
        interval = values["transaction.boundary.interval.ms"]
        topic = values["offsets.storage.topic"]
        return cls(required=str(values["exactly.once.support"]).lower() == "required",
                   transaction_boundary=TransactionBoundary(str(values["transaction.boundary"]).lower()),
                   transaction_boundary_interval_ms=None if interval is None else int(interval),
                   offsets_topic=str(topic).strip() or None if topic is not None else None)


_GROUP_RESERVED = frozenset({"include", "exclude", "partitions", "replication.factor"})


@dataclass(frozen=True, slots=True)
class TopicCreation:
    """A source connector's ``topic.creation.*`` (KIP-158): groups in order, ``default`` last."""

    groups: tuple[TopicCreationGroup, ...]

    def match(self, topic: str) -> tuple[int, int, dict[str, str]] | None:
        """``(partitions, replication factor, topic configs)`` of the first group matching ``topic``."""
        for group in self.groups:
            if group.matches(topic):
                return group.partitions, group.replication_factor, dict(group.configs)
        return None

    @classmethod
    def parse(cls, values: Mapping[str, Any], props: Mapping[str, Any]) -> TopicCreation | None:
        """None unless ``topic.creation.default.partitions`` and ``.replication.factor`` are both set."""
        default_partitions = values["topic.creation.default.partitions"]
        default_rf = values["topic.creation.default.replication.factor"]
        if default_partitions is None or default_rf is None:
            return None
        groups = []
        for name in [*values["topic.creation.groups"], "default"]:
            prefix = f"topic.creation.{name}."
            params = _with_prefix(props, prefix)
            include = (".*",) if name == "default" else _split(params.get("include"))
            exclude = () if name == "default" else _split(params.get("exclude"))
            groups.append(TopicCreationGroup(
                name, include, exclude, _int(prefix + "partitions", params.get("partitions", default_partitions)),
                _int(prefix + "replication.factor", params.get("replication.factor", default_rf)),
                _frozen({k: str(v) for k, v in params.items() if k not in _GROUP_RESERVED})))
        return cls(tuple(groups))


def _split(value: Any) -> tuple[str, ...]:
    return tuple(v.strip() for v in str(value or "").split(",") if v.strip())


def _int(name: str, value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        raise ConfigError.invalid(name, value, "Not a number of type INT") from None


@dataclass(frozen=True, slots=True)
class ConnectorConfig:
    """A connector's framework config, parsed and typed; build it with :meth:`parse`.

    ``raw`` is the config as stored (config-provider placeholders unresolved: what REST and
    logs show), ``props`` the resolved one (what ``Connector.start`` receives). Sink-only
    fields are empty for a source connector, ``topic_creation`` is None and ``exactly_once`` the
    defaults for a sink.
    """

    name: str
    connector_class: type[Connector]
    tasks_max: int
    tasks_max_enforce: bool
    key_converter: PluginSpec | None
    value_converter: PluginSpec | None
    header_converter: PluginSpec | None
    predicates: tuple[PredicateSpec, ...]
    transforms: tuple[TransformSpec, ...]
    errors: ErrorHandling
    topics: tuple[str, ...]
    topics_regex: str
    topic_creation: TopicCreation | None
    exactly_once: ExactlyOnce
    client_overrides: Mapping[str, Props]
    raw: Props
    props: Props
    definition: ConfigDef

    @property
    def is_sink(self) -> bool:
        return issubclass(self.connector_class, SinkConnector)

    @property
    def consumer_group(self) -> str:
        """A sink's consumer group as the offsets API finds it: ``consumer.override.group.id`` or ``connect-<name>``."""
        return str(self.client_overrides["consumer"].get("group.id") or f"connect-{self.name}")

    @classmethod
    def parse(cls, plugins: Plugins, props: Mapping[str, Any], *, raw: Mapping[str, Any] | None = None,
              name: str | None = None) -> ConnectorConfig:
        """Parse resolved ``props`` once; :class:`ConfigError` names the first bad key.

        ``raw`` is the stored config ``props`` was resolved from (default: ``props`` itself);
        ``name`` the connector's name as its herder stores it (default: the parsed ``name``,
        which ConfigDef trims), the key every status, task id and client id uses.
        """
        class_name = props.get("connector.class")
        if not class_name:
            raise ConfigError("Connector config contains no connector type", name="connector.class")
        connector_class: type[Connector] = plugins.find(PluginKind.CONNECTOR, str(class_name))
        sink = issubclass(connector_class, SinkConnector)
        definition = connector_definition(plugins, connector_class, props)
        values = definition.parse(props)

        def value(key: str) -> Any:
            try:
                return values[key]
            except KeyError:
                raise ConfigError(f"Unknown configuration '{key}'", name=key) from None

        def converter(key: str) -> PluginSpec | None:
            converter_class = values[key]
            if converter_class is None:  # none named: the connector may declare the one its records need
                converter_class = declared_converter(plugins, connector_class, key)
            return None if converter_class is None else PluginSpec(converter_class,
                                                                   _frozen(_with_prefix(props, key + ".")))

        predicates = tuple(PredicateSpec(alias, str(value(f"predicates.{alias}.type")),
                                         _frozen(_with_prefix(props, f"predicates.{alias}.")))
                           for alias in values["predicates"])
        transforms = tuple(TransformSpec(alias, str(value(f"transforms.{alias}.type")),
                                         _frozen(_with_prefix(props, f"transforms.{alias}.")),
                                         value(f"transforms.{alias}.predicate") or None,
                                         bool(value(f"transforms.{alias}.negate")))
                           for alias in values["transforms"])
        errors = ErrorHandling(
            retry_timeout_ms=int(values["errors.retry.timeout"]),
            retry_delay_max_ms=int(values["errors.retry.delay.max.ms"]),
            tolerate_all=str(values["errors.tolerance"]).lower() == "all",
            log_enable=bool(values["errors.log.enable"]),
            log_include_messages=bool(values["errors.log.include.messages"]))
        if sink:
            errors = replace(errors, dlq_topic=str(values["errors.deadletterqueue.topic.name"] or ""),
                             dlq_replication_factor=int(values["errors.deadletterqueue.topic.replication.factor"]),
                             dlq_context_headers=bool(values["errors.deadletterqueue.context.headers.enable"]))
        # Kafka's clients parse their configs with a ConfigDef, which trims every value; librdkafka does not
        overrides = {client: _frozen({k: str(v).strip() for k, v in _with_prefix(props, f"{client}.override.").items()})
                     for client in CLIENTS}
        return cls(
            name=str(values["name"]) if name is None else name, connector_class=connector_class,
            tasks_max=int(values["tasks.max"]),
            tasks_max_enforce=bool(values["tasks.max.enforce"]), key_converter=converter("key.converter"),
            value_converter=converter("value.converter"), header_converter=converter("header.converter"),
            predicates=predicates, transforms=transforms, errors=errors,
            topics=tuple(values["topics"]) if sink else (),
            topics_regex=str(values["topics.regex"] or "") if sink else "",
            topic_creation=None if sink else TopicCreation.parse(values, props),
            exactly_once=ExactlyOnce() if sink else ExactlyOnce.parse(values),
            client_overrides=MappingProxyType(overrides), raw=_frozen(props if raw is None else raw),
            props=_frozen(props), definition=definition)
