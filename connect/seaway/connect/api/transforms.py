"""Single Message Transforms and predicates (``org.apache.kafka.connect.transforms``).

A :class:`Transformation` changes one record at a time; a chain of them runs between the task
and the converter (source: after ``poll``; sink: before ``put``). A :class:`Predicate` decides
whether a transformation applies to a record (``transforms.<alias>.predicate`` and ``.negate``).

Both are configured once with their own props (``transforms.<alias>.*``, prefix stripped) and
then called from one task thread; each task has its own instances. ``apply`` must not modify
its input: return a copy made with ``record.new_record(...)``, the input itself if nothing
changes, or ``None`` to drop the record. Cache derived schemas per input schema (schemas are
hashable) instead of rebuilding them per record.
"""

from __future__ import annotations

import abc
from collections.abc import Mapping
from typing import Any, Generic, TypeVar

from seaway.connect.api.config.definition import ConfigDef
from seaway.connect.api.records import ConnectRecord

__all__ = ["Predicate", "R", "Transformation"]

R = TypeVar("R", bound=ConnectRecord)


class Transformation(abc.ABC, Generic[R]):
    """Kafka's ``Transformation<R>``; ``R`` is ``SourceRecord``, ``SinkRecord`` or ``ConnectRecord``."""

    @abc.abstractmethod
    def configure(self, configs: Mapping[str, Any]) -> None:
        """Called once before ``apply``; raise ``ConfigError`` for a bad config."""

    @abc.abstractmethod
    def apply(self, record: R) -> R | None:
        """The transformed record, or ``None`` to drop it. Raise ``DataError`` for unusable data."""

    @abc.abstractmethod
    def config(self) -> ConfigDef:
        """The transformation's config keys."""

    def close(self) -> None:
        """Release resources. Default: nothing."""


class Predicate(abc.ABC, Generic[R]):
    """Kafka's ``Predicate<R>``: a condition on records for conditional transformations."""

    @abc.abstractmethod
    def configure(self, configs: Mapping[str, Any]) -> None:
        """Called once before ``test``."""

    @abc.abstractmethod
    def test(self, record: R) -> bool:
        """Whether the record matches."""

    @abc.abstractmethod
    def config(self) -> ConfigDef:
        """The predicate's config keys."""

    def close(self) -> None:
        """Release resources. Default: nothing."""
