"""LakeSinkConnector: the connector half of every lake sink (Spark Parquet, S3, Iceberg, Delta).

A lake sink's connector does no work of its own. It checks the config when it starts, so a bad config
fails the connector once rather than each of its tasks; it hands every task the same config, because the
tasks share the topic-partitions through the consumer group (and keep their offsets in the lake), not
through their configs; and it validates configs for Kafka Connect's REST API with the sink's
:class:`~seaway.connectors.lake.config.ConfigRules`, so a create answers 400 naming the key. A sink
subclasses it with three class attributes and its aliases in the docstring.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Protocol

from seaway.connect.api import Config, ConfigDef, SinkConnector, Task
from seaway.connectors.lake.config import ConfigRules

__all__ = ["LakeSinkConnector", "ParsedConfig"]


class ParsedConfig(Protocol):
    """A sink's typed config class: ``from_props`` parses and cross-checks, raising ``ConfigError``."""

    @classmethod
    def from_props(cls, props: Mapping[str, str]) -> Any: ...


class LakeSinkConnector(SinkConnector):
    """Checks the config at start, gives each task the connector's config, validates with the sink's rules.

    Subclasses set :attr:`task`, :attr:`config_class` (whose ``from_props`` is the start check: the same
    parse the tasks make), :attr:`rules` and :attr:`plugin_version`.
    """

    task: ClassVar[type[Task]]
    config_class: ClassVar[type[ParsedConfig]]
    rules: ClassVar[ConfigRules]
    plugin_version: ClassVar[str]

    def __init__(self) -> None:
        self.props: dict[str, str] = {}

    def version(self) -> str:
        return self.plugin_version

    def start(self, props: Mapping[str, str]) -> None:
        self.config_class.from_props(props)
        self.props = dict(props)

    def task_class(self) -> type[Task]:
        return self.task

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self.props) for _ in range(max_tasks)]

    def stop(self) -> None:
        pass

    def config(self) -> ConfigDef:
        return self.rules.definition

    def validate(self, props: Mapping[str, str]) -> Config:
        return self.rules.validate(props)
