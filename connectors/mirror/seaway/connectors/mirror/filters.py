"""Which topics, groups and topic config properties are mirrored (Kafka's ``Default*Filter``).

Each filter reads its include/exclude lists from the connector config: comma-separated names
or regular expressions, an exclude winning over an include, an empty list matching nothing.
A pattern must match the whole name (Java's ``Matcher.matches``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = [
    "CONFIG_PROPERTIES_EXCLUDE",
    "CONFIG_PROPERTIES_EXCLUDE_DEFAULT",
    "GROUPS",
    "GROUPS_DEFAULT",
    "GROUPS_EXCLUDE",
    "GROUPS_EXCLUDE_DEFAULT",
    "TOPICS",
    "TOPICS_DEFAULT",
    "TOPICS_EXCLUDE",
    "TOPICS_EXCLUDE_DEFAULT",
    "USE_DEFAULTS_FROM",
    "ConfigPropertyFilter",
    "DefaultConfigPropertyFilter",
    "DefaultGroupFilter",
    "DefaultTopicFilter",
    "GroupFilter",
    "TopicFilter",
    "compile_pattern_list",
    "filter_instance",
]

TOPICS = "topics"
TOPICS_DEFAULT = ".*"
TOPICS_EXCLUDE = "topics.exclude"
TOPICS_EXCLUDE_DEFAULT = r".*[\-\.]internal, .*\.replica, __.*"
GROUPS = "groups"
GROUPS_DEFAULT = ".*"
GROUPS_EXCLUDE = "groups.exclude"
GROUPS_EXCLUDE_DEFAULT = "console-consumer-.*, connect-.*, __.*"
CONFIG_PROPERTIES_EXCLUDE = "config.properties.exclude"
CONFIG_PROPERTIES_EXCLUDE_DEFAULT = (r"follower\.replication\.throttled\.replicas, "
                                     r"leader\.replication\.throttled\.replicas, "
                                     r"message\.timestamp\.difference\.max\.ms, "
                                     r"message\.timestamp\.type, "
                                     r"unclean\.leader\.election\.enable, "
                                     r"min\.insync\.replicas")
USE_DEFAULTS_FROM = "use.defaults.from"


def _as_list(value: Any, default: str) -> list[str]:
    if value is None:
        value = default
    if isinstance(value, list | tuple):
        return [str(v).strip() for v in value]
    text = str(value)
    return [] if not text.strip() else [item.strip() for item in text.split(",")]


def compile_pattern_list(fields: list[str]) -> re.Pattern[str] | None:
    """One pattern matching any of ``fields``; None (matches nothing) for an empty list.

    :class:`re.error` for a bad expression (the config's validator reports it naming the key).
    """
    fields = [f for f in fields if f]
    if not fields:
        return None
    return re.compile("|".join(f"(?:{f})" for f in fields))


def _matches(pattern: re.Pattern[str] | None, name: str) -> bool:
    return pattern is not None and pattern.fullmatch(name) is not None


class TopicFilter:
    """Decides whether a topic is mirrored (Kafka's ``TopicFilter``)."""

    def configure(self, props: Mapping[str, Any]) -> None:
        """Read the filter's settings from the connector config."""

    def should_replicate_topic(self, topic: str) -> bool:
        raise NotImplementedError


class GroupFilter:
    """Decides whether a consumer group's offsets are checkpointed (Kafka's ``GroupFilter``)."""

    def configure(self, props: Mapping[str, Any]) -> None:
        """Read the filter's settings from the connector config."""

    def should_replicate_group(self, group: str) -> bool:
        raise NotImplementedError


class ConfigPropertyFilter:
    """Decides which topic config properties are copied to remote topics."""

    def configure(self, props: Mapping[str, Any]) -> None:
        """Read the filter's settings from the connector config."""

    def should_replicate_config_property(self, prop: str) -> bool:
        raise NotImplementedError

    def should_replicate_source_default(self, prop: str) -> bool:
        """Whether a property left at the source cluster's default is copied (else the target's default applies)."""
        return False


class DefaultTopicFilter(TopicFilter):
    """``topics`` (default ``.*``) minus ``topics.exclude`` (default: internal and ``.replica`` topics)."""

    def __init__(self) -> None:
        self.include = compile_pattern_list(_as_list(None, TOPICS_DEFAULT))
        self.exclude = compile_pattern_list(_as_list(None, TOPICS_EXCLUDE_DEFAULT))

    def configure(self, props: Mapping[str, Any]) -> None:
        self.include = compile_pattern_list(_as_list(props.get(TOPICS), TOPICS_DEFAULT))
        self.exclude = compile_pattern_list(_as_list(props.get(TOPICS_EXCLUDE), TOPICS_EXCLUDE_DEFAULT))

    def should_replicate_topic(self, topic: str) -> bool:
        return _matches(self.include, topic) and not _matches(self.exclude, topic)


class DefaultGroupFilter(GroupFilter):
    """``groups`` (default ``.*``) minus ``groups.exclude`` (console consumers, Connect's sinks, ``__*``)."""

    def __init__(self) -> None:
        self.include = compile_pattern_list(_as_list(None, GROUPS_DEFAULT))
        self.exclude = compile_pattern_list(_as_list(None, GROUPS_EXCLUDE_DEFAULT))

    def configure(self, props: Mapping[str, Any]) -> None:
        self.include = compile_pattern_list(_as_list(props.get(GROUPS), GROUPS_DEFAULT))
        self.exclude = compile_pattern_list(_as_list(props.get(GROUPS_EXCLUDE), GROUPS_EXCLUDE_DEFAULT))

    def should_replicate_group(self, group: str) -> bool:
        return _matches(self.include, group) and not _matches(self.exclude, group)


class DefaultConfigPropertyFilter(ConfigPropertyFilter):
    """Every property but ``config.properties.exclude``; defaults from ``use.defaults.from`` (``target``)."""

    def __init__(self) -> None:
        self.exclude = compile_pattern_list(_as_list(None, CONFIG_PROPERTIES_EXCLUDE_DEFAULT))
        self.use_defaults_from = "target"

    def configure(self, props: Mapping[str, Any]) -> None:
        self.exclude = compile_pattern_list(_as_list(props.get(CONFIG_PROPERTIES_EXCLUDE),
                                                     CONFIG_PROPERTIES_EXCLUDE_DEFAULT))
        self.use_defaults_from = str(props.get(USE_DEFAULTS_FROM) or "target").strip()

    def should_replicate_config_property(self, prop: str) -> bool:
        return not _matches(self.exclude, prop)

    def should_replicate_source_default(self, prop: str) -> bool:
        return self.use_defaults_from == "source"


def filter_instance(cls: type, base: type, props: Mapping[str, Any]) -> Any:
    """An instance of a configured filter class, checked to be a ``base`` and configured with ``props``."""
    instance: Any = cls()
    if not issubclass(cls, base):
        raise TypeError(f"{cls.__name__} is not a {base.__name__}")
    instance.configure(props)
    return instance
