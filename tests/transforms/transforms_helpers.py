"""Small builders shared by the SMT tests (records, configured transforms)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, TypeVar

from seaway.connect.api import ConnectRecord, Headers, Schema, SinkRecord, SourceRecord, TimestampType

__all__ = ["configured", "field_schema", "kept", "sink", "source"]

R = TypeVar("R", bound=ConnectRecord)


class _Configurable(Protocol):
    def configure(self, configs: Mapping[str, Any]) -> None: ...


C = TypeVar("C", bound=_Configurable)


def configured(cls: type[C], /, **configs: Any) -> C:
    """An instance of ``cls`` configured with ``configs`` (keys given with ``_`` for ``.``)."""
    instance = cls()
    instance.configure({k.replace("_", "."): v for k, v in configs.items()})
    return instance


def kept(record: R | None) -> R:
    """The record a transformation returned, for tests that expect it kept: None (dropped) fails the test.

    ``Transformation.apply`` returns ``R | None``; this is the check that lets a test read the result.
    """
    assert record is not None, "the transformation dropped the record"
    return record


def field_schema(schema: Schema | None, name: str) -> Schema:
    """The schema of field ``name`` of the struct ``schema``: a missing schema or field fails the test."""
    assert schema is not None, "the record has no schema"
    field = schema.field(name)
    assert field is not None, f"the schema has no field {name!r}"
    return field.schema


def sink(value: Any = None, value_schema: Schema | None = None, key: Any = None, key_schema: Schema | None = None,
         topic: str = "test", partition: int | None = 0, offset: int = 42, timestamp: int | None = 1_700_000_000_000,
         headers: Headers | None = None) -> SinkRecord:
    return SinkRecord(topic, partition, key_schema, key, value_schema, value, offset, timestamp,
                      TimestampType.CREATE_TIME, headers)


def source(value: Any = None, value_schema: Schema | None = None, key: Any = None,
           key_schema: Schema | None = None, topic: str = "test", timestamp: int | None = 1_700_000_000_000,
           headers: Headers | None = None) -> SourceRecord:
    return SourceRecord({"p": 1}, {"o": 2}, topic, 0, key_schema, key, value_schema, value, timestamp, headers)
