"""RegexRouter: rename the topic when the *whole* topic matches ``regex``.

``replacement`` uses Java's syntax, as in Kafka configs: ``$1`` (or ``$12`` when there are at
least 12 groups, else group 1 then ``2``), ``${name}`` for a named group, and ``\\$`` / ``\\\\``
for a literal ``$`` / backslash. It is compiled once, checked against the regex's groups at
configure time, and expanded per record. A topic that does not match is left unchanged.
The regex itself is Python ``re`` syntax, which agrees with Java's for the usual
constructs (classes, groups, ``(?<name>...)`` needs Python's ``(?P<name>...)``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from seaway.connect.api import ConfigDef, ConfigError, ConfigType, Importance, Transformation
from seaway.connect.api.transforms import R
from seaway.transforms.util import java_regex, regex_validator

__all__ = ["JavaReplacement", "RegexRouter"]

REGEX = "regex"
REPLACEMENT = "replacement"

CONFIG_DEF = (
    ConfigDef()
    .define(REGEX, ConfigType.STRING, validator=regex_validator(), importance=Importance.HIGH,
            documentation="Regular expression to use for matching.")
    .define(REPLACEMENT, ConfigType.STRING, importance=Importance.HIGH,
            documentation="Replacement string."))

_Part = str | int


class JavaReplacement:
    """A Java ``Matcher.replaceFirst`` replacement string, compiled for one pattern."""

    __slots__ = ("_parts",)

    def __init__(self, replacement: str, pattern: re.Pattern[str]) -> None:
        parts: list[_Part] = []
        literal: list[str] = []
        i, n = 0, len(replacement)
        while i < n:
            c = replacement[i]
            if c == "\\":
                i += 1
                if i >= n:
                    raise ValueError("character to be escaped is missing")
                literal.append(replacement[i])
                i += 1
            elif c == "$":
                i += 1
                if i >= n:
                    raise ValueError("Illegal group reference: group index is missing")
                if literal:
                    parts.append("".join(literal))
                    literal = []
                if replacement[i] == "{":
                    end = replacement.find("}", i)
                    if end < 0:
                        raise ValueError("named capturing group is missing trailing '}'")
                    name = replacement[i + 1:end]
                    if name not in pattern.groupindex:
                        raise ValueError(f"No group with name {{{name}}}")
                    parts.append(pattern.groupindex[name])
                    i = end + 1
                else:
                    if not replacement[i].isdigit():
                        raise ValueError("Illegal group reference")
                    group = int(replacement[i])
                    i += 1
                    while i < n and replacement[i].isdigit() and group * 10 + int(replacement[i]) <= pattern.groups:
                        group = group * 10 + int(replacement[i])
                        i += 1
                    if group > pattern.groups:
                        raise ValueError(f"No group {group}")
                    parts.append(group)
            else:
                literal.append(c)
                i += 1
        if literal:
            parts.append("".join(literal))
        self._parts = tuple(parts)

    def expand(self, match: re.Match[str]) -> str:
        return "".join(p if isinstance(p, str) else (match.group(p) or "") for p in self._parts)


class RegexRouter(Transformation[R]):
    """Update the record topic using a regex and replacement (Kafka's ``RegexRouter``)."""

    def config(self) -> ConfigDef:
        return CONFIG_DEF

    def configure(self, configs: Mapping[str, Any]) -> None:
        values = CONFIG_DEF.parse(configs)
        try:
            self._regex = re.compile(java_regex(values[REGEX]))
        except re.error as e:
            raise ConfigError.invalid(REGEX, values[REGEX], f"Invalid regex: {e}") from None
        try:
            self._replacement = JavaReplacement(values[REPLACEMENT], self._regex)
        except ValueError as e:
            raise ConfigError.invalid(REPLACEMENT, values[REPLACEMENT], str(e)) from None

    def apply(self, record: R) -> R | None:
        topic = record.topic
        if self._regex.fullmatch(topic) is None:
            return record
        routed = self._regex.sub(self._replacement.expand, topic, count=1)
        return record.new_record(topic=routed)
