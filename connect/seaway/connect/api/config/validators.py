"""Validators and recommenders for :class:`ConfigDef` keys (Kafka's ``ConfigDef.Validator`` family).

The checks are the config engine's (:mod:`seaway.configdef.validators`); these thin subclasses
only make them raise Connect's :class:`ConfigError`, which plugins catch. A plugin's own
validator subclasses :class:`Validator` and raises ``ConfigError.invalid(name, value, reason)``;
``str(validator)`` describes the valid values. A recommender computes, from the other parsed
values, which values to suggest and whether the key is visible (UIs use both).
"""

from __future__ import annotations

from typing import ClassVar

from seaway.configdef import ConfigException, Recommender
from seaway.configdef import validators as _engine
from seaway.connect.api.errors import ConfigError

__all__ = [
    "CaseInsensitiveValidString",
    "CompositeValidator",
    "LambdaValidator",
    "ListSize",
    "NonEmptyString",
    "NonEmptyStringWithoutControlChars",
    "NonNullValidator",
    "Range",
    "Recommender",
    "ValidList",
    "ValidString",
    "Validator",
]


class Validator(_engine.Validator):
    """Checks one parsed config value; raises :class:`ConfigError`."""

    error: ClassVar[type[ConfigException]] = ConfigError


class Range(_engine.Range, Validator):
    """Numbers within ``[min, max]``; either bound may be ``None``."""


class ValidString(_engine.ValidString, Validator):
    """One of a fixed set of strings (case-sensitive)."""


class CaseInsensitiveValidString(_engine.CaseInsensitiveValidString, Validator):
    """One of a fixed set of strings, ignoring case."""


class ValidList(_engine.ValidList, Validator):
    """A LIST whose every item is one of a fixed set."""


class NonNullValidator(_engine.NonNullValidator, Validator):
    """Any value but null."""


class NonEmptyString(_engine.NonEmptyString, Validator):
    """A string that is not blank."""


class NonEmptyStringWithoutControlChars(_engine.NonEmptyStringWithoutControlChars, Validator):
    """A string that is not blank and holds no ISO control characters."""


class ListSize(_engine.ListSize, Validator):
    """A LIST of at most ``max_size`` items."""


class CompositeValidator(_engine.CompositeValidator, Validator):
    """All of several validators, in order."""


class LambdaValidator(_engine.LambdaValidator, Validator):
    """A validator from a function (``fn(name, value)`` raising :class:`ConfigError`) and a description."""
