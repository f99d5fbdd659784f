"""Validators and recommenders (Kafka's ``ConfigDef.Validator`` family), with Kafka's reasons.

A validator gets the *parsed* value and raises ``self.error.invalid(name, value, reason)`` if it
is not acceptable; ``str(validator)`` describes the valid values (the docs table's "Valid
values" column). ``error`` is :class:`ConfigException` here; a component whose callers catch
their own subclass of it (Connect's ``ConfigError``) rebinds ``error`` in thin subclasses, so
one implementation serves every component.

A recommender computes, from the other parsed values, which values to suggest and whether the
key is visible (Connect's UIs use both).
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Iterable, Mapping
from typing import Any, ClassVar, Self

from seaway.configdef.errors import ConfigException

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


class Validator(abc.ABC):
    """Checks one parsed config value."""

    error: ClassVar[type[ConfigException]] = ConfigException
    """The exception type raised; a component's subclasses may rebind it to their own subclass."""

    @abc.abstractmethod
    def ensure_valid(self, name: str, value: Any) -> None:
        """Raise :attr:`error` if ``value`` is invalid for key ``name``."""

    def __str__(self) -> str:
        return ""


class Recommender(abc.ABC):
    """Suggests values and visibility for a key from the other parsed values (Kafka's ``Recommender``)."""

    @abc.abstractmethod
    def valid_values(self, name: str, parsed_config: Mapping[str, Any]) -> list[Any]:
        """The values to recommend for ``name``; empty for no recommendation."""

    def visible(self, name: str, parsed_config: Mapping[str, Any]) -> bool:
        return True


class Range(Validator):
    """Numbers within ``[min, max]``; either bound may be ``None``."""

    def __init__(self, min: float | None, max: float | None) -> None:
        self.min, self.max = min, max

    @classmethod
    def at_least(cls, min: float) -> Self:
        return cls(min, None)

    @classmethod
    def between(cls, min: float, max: float) -> Self:
        return cls(min, max)

    def ensure_valid(self, name: str, value: Any) -> None:
        if value is None:
            raise self.error.invalid(name, value, "Value must be non-null")
        if self.min is not None and value < self.min:
            raise self.error.invalid(name, value, f"Value must be at least {self.min}")
        if self.max is not None and value > self.max:
            raise self.error.invalid(name, value, f"Value must be no more than {self.max}")

    def __str__(self) -> str:
        if self.min is None:
            return f"[...,{self.max}]"
        if self.max is None:
            return f"[{self.min},...]"
        return f"[{self.min},...,{self.max}]"


class ValidString(Validator):
    """One of a fixed set of strings (case-sensitive)."""

    def __init__(self, valid: Iterable[str]) -> None:
        self.valid = list(valid)

    @classmethod
    def in_(cls, *valid: str) -> Self:
        return cls(valid)

    def ensure_valid(self, name: str, value: Any) -> None:
        if value not in self.valid:
            raise self.error.invalid(name, value, "String must be one of: " + ", ".join(self.valid))

    def __str__(self) -> str:
        return "[" + ", ".join(self.valid) + "]"


class CaseInsensitiveValidString(Validator):
    """One of a fixed set of strings, ignoring case."""

    def __init__(self, valid: Iterable[str]) -> None:
        self.valid = list(valid)
        self._upper = {v.upper() for v in self.valid}

    @classmethod
    def in_(cls, *valid: str) -> Self:
        return cls(valid)

    def ensure_valid(self, name: str, value: Any) -> None:
        if not isinstance(value, str) or value.upper() not in self._upper:
            raise self.error.invalid(name, value, "String must be one of (case insensitive): " + ", ".join(self.valid))

    def __str__(self) -> str:
        return "(case insensitive) [" + ", ".join(self.valid) + "]"


class ValidList(Validator):
    """A LIST whose every item is one of a fixed set (the first bad item is named)."""

    def __init__(self, valid: Iterable[str]) -> None:
        self.valid = list(valid)

    @classmethod
    def in_(cls, *valid: str) -> Self:
        return cls(valid)

    def ensure_valid(self, name: str, value: Any) -> None:
        for item in value or ():
            if item not in self.valid:
                raise self.error.invalid(name, item, "String must be one of: " + ", ".join(self.valid))

    def __str__(self) -> str:
        return "[" + ", ".join(self.valid) + "]"


class NonNullValidator(Validator):
    def ensure_valid(self, name: str, value: Any) -> None:
        if value is None:
            raise self.error.invalid(name, value, "entry must be non null")

    def __str__(self) -> str:
        return "non-null value"


class NonEmptyString(Validator):
    def ensure_valid(self, name: str, value: Any) -> None:
        if value is not None and not str(value).strip():
            raise self.error.invalid(name, value, "String must be non-empty")

    def __str__(self) -> str:
        return "non-empty string"


class NonEmptyStringWithoutControlChars(Validator):
    def ensure_valid(self, name: str, value: Any) -> None:
        if value is None:
            return
        if not str(value).strip():
            raise self.error.invalid(name, value, "String may not be empty")
        if any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F for c in str(value)):
            raise self.error.invalid(name, value, "String may not contain control sequences")

    def __str__(self) -> str:
        return "non-empty string without ISO control characters"


class ListSize(Validator):
    def __init__(self, max_size: int) -> None:
        self.max_size = max_size

    @classmethod
    def at_most_of_size(cls, max_size: int) -> Self:
        return cls(max_size)

    def ensure_valid(self, name: str, value: Any) -> None:
        if value is not None and len(value) > self.max_size:
            raise self.error.invalid(name, value, f"exceeds maximum list size of [{self.max_size}].")

    def __str__(self) -> str:
        return f"List containing maximum of {self.max_size} elements"


class CompositeValidator(Validator):
    """All of several validators, in order."""

    def __init__(self, validators: Iterable[Validator]) -> None:
        self.validators = list(validators)

    @classmethod
    def of(cls, *validators: Validator) -> Self:
        return cls(validators)

    def ensure_valid(self, name: str, value: Any) -> None:
        for validator in self.validators:
            validator.ensure_valid(name, value)

    def __str__(self) -> str:
        return ", ".join(str(v) for v in self.validators)


class LambdaValidator(Validator):
    """A validator from a function (``fn(name, value)`` raising a :class:`ConfigException`) and a description."""

    def __init__(self, fn: Callable[[str, Any], None], doc: Callable[[], str] | str = "") -> None:
        self._fn = fn
        self._doc = doc

    @classmethod
    def with_(cls, fn: Callable[[str, Any], None], doc: Callable[[], str] | str = "") -> Self:
        return cls(fn, doc)

    def ensure_valid(self, name: str, value: Any) -> None:
        self._fn(name, value)

    def __str__(self) -> str:
        return self._doc() if callable(self._doc) else self._doc
