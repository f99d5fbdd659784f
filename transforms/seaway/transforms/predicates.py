"""Predicates for conditional transforms: TopicNameMatches, HasHeaderKey, RecordIsTombstone.

The runtime applies ``transforms.<alias>`` to a record only when ``predicate.test(record) !=
negate`` (``transforms.<alias>.negate``, default false); :func:`seaway.transforms.util.should_apply`
is that rule.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from seaway.connect.api import CompositeValidator, ConfigDef, ConfigType, Importance, NonEmptyString, Predicate
from seaway.connect.api.transforms import R
from seaway.transforms.util import java_regex, regex_validator

__all__ = ["HasHeaderKey", "RecordIsTombstone", "TopicNameMatches"]

PATTERN = "pattern"
NAME = "name"


class TopicNameMatches(Predicate[R]):
    """True for records whose topic matches ``pattern`` entirely (Java ``Matcher.matches``)."""

    CONFIG_DEF = ConfigDef().define(
        PATTERN, ConfigType.STRING, validator=CompositeValidator.of(NonEmptyString(), regex_validator()),
        importance=Importance.MEDIUM,
        documentation="A Java regular expression for matching against the name of a record's topic.")

    def config(self) -> ConfigDef:
        return self.CONFIG_DEF

    def configure(self, configs: Mapping[str, Any]) -> None:
        self._pattern = re.compile(java_regex(self.CONFIG_DEF.parse(configs)[PATTERN]))

    def test(self, record: R) -> bool:
        return record.topic is not None and self._pattern.fullmatch(record.topic) is not None

    def __repr__(self) -> str:
        return f"TopicNameMatches{{pattern={self._pattern.pattern}}}"


class HasHeaderKey(Predicate[R]):
    """True for records with at least one header called ``name``."""

    CONFIG_DEF = ConfigDef().define(NAME, ConfigType.STRING, validator=NonEmptyString(),
                                    importance=Importance.MEDIUM, documentation="The header name.")

    def config(self) -> ConfigDef:
        return self.CONFIG_DEF

    def configure(self, configs: Mapping[str, Any]) -> None:
        self._name: str = self.CONFIG_DEF.parse(configs)[NAME]

    def test(self, record: R) -> bool:
        return record.headers.last_with_name(self._name) is not None

    def __repr__(self) -> str:
        return f"HasHeaderKey{{name='{self._name}'}}"


class RecordIsTombstone(Predicate[R]):
    """True for tombstones: records whose value is null."""

    CONFIG_DEF = ConfigDef()

    def config(self) -> ConfigDef:
        return self.CONFIG_DEF

    def configure(self, configs: Mapping[str, Any]) -> None:
        self.CONFIG_DEF.parse(configs)

    def test(self, record: R) -> bool:
        return record.value is None

    def __repr__(self) -> str:
        return "RecordIsTombstone{}"
