"""Small builders shared by the SMT tests (records, configured transforms)."""

from __future__ import annotations

from typing import Any

from seaway.connect.api import Headers, Schema, SinkRecord, SourceRecord, TimestampType

__all__ = ["configured", "sink", "source"]


def configured(cls: type, **configs: Any) -> Any:
    """An instance of ``cls`` configured with ``configs`` (keys given with ``_`` for ``.``)."""
    instance = cls()
    instance.configure({k.replace("_", "."): v for k, v in configs.items()})
    return instance


def sink(value: Any = None, value_schema: Schema | None = None, key: Any = None, key_schema: Schema | None = None,
         topic: str = "test", partition: int | None = 0, offset: int = 42, timestamp: int | None = 1_700_000_000_000,
         headers: Headers | None = None) -> SinkRecord:
    return SinkRecord(topic, partition, key_schema, key, value_schema, value, offset, timestamp,
                      TimestampType.CREATE_TIME, headers)


def source(value: Any = None, value_schema: Schema | None = None, key: Any = None,
           key_schema: Schema | None = None, topic: str = "test", timestamp: int | None = 1_700_000_000_000,
           headers: Headers | None = None) -> SourceRecord:
    return SourceRecord({"p": 1}, {"o": 2}, topic, 0, key_schema, key, value_schema, value, timestamp, headers)
