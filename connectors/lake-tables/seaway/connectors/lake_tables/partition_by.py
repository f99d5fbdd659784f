"""Partition specs of the tables the sinks create: Iceberg's ``partition-by`` terms and the lake partitioners.

``iceberg.tables.default-partition-by`` (and ``iceberg.table.<t>.partition-by``) is a comma-separated list
of terms, as Apache Iceberg's Kafka Connect sink reads it: a column name (identity), ``year(col)``,
``month(col)``, ``day(col)``, ``hour(col)`` (also the plural spellings), ``bucket(col, N)`` and
``truncate(col, W)``. Commas inside parentheses do not split terms.

The lake sinks' ``partitioner.class`` maps to the same terms (:func:`partitioner_terms`), so a config
written for the Spark or S3 sink partitions a table the same way: ``field`` + ``partition.field.name`` ->
identity of each field (its last name for a dotted path: the folder name those sinks use), ``hourly`` /
``daily`` -> ``hour``/``day`` of ``timestamp.field`` (``timestamp.extractor=RecordField``) or of the
``kafka_timestamp`` column (``Record``), ``default`` -> unpartitioned (a table needs no folder per Kafka
partition).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the config module imports this one; pyiceberg loads only where a spec is built
    from pyiceberg.partitioning import PartitionSpec
    from pyiceberg.schema import Schema
    from seaway.connectors.lake import StorageConfig

__all__ = ["PARTITIONER_CLASS", "PartitionTerm", "parse_partition_by", "partition_spec", "partitioner_terms"]

#: the lake sinks' partitioner key (a partitioner maps to a partition spec)
PARTITIONER_CLASS = "partitioner.class"
_TERM = re.compile(r"^\s*(\w+)\s*\((.+)\)\s*$")
_SPLIT = re.compile(r",(?![^()]*\))")
_UNARY = {"year": "year", "years": "year", "month": "month", "months": "month", "day": "day", "days": "day",
          "hour": "hour", "hours": "hour"}


@dataclass(frozen=True, slots=True)
class PartitionTerm:
    """One partition field: a transform of a source column (``arg``: bucket count or truncate width)."""

    transform: str  # identity, year, month, day, hour, bucket, truncate
    column: str
    arg: int | None = None

    def __str__(self) -> str:
        if self.transform == "identity":
            return self.column
        if self.arg is None:
            return f"{self.transform}({self.column})"
        return f"{self.transform}({self.column}, {self.arg})"

    @property
    def field_name(self) -> str:
        """The partition field's name, as Iceberg names them (``ts_day``, ``id_bucket``, ``name_trunc``)."""
        suffix = {"identity": "", "bucket": "_bucket", "truncate": "_trunc"}.get(self.transform,
                                                                                  f"_{self.transform}")
        return self.column + suffix


def parse_partition_by(text: str) -> list[PartitionTerm]:
    """The terms of a ``partition-by`` value (``ValueError`` naming the bad term)."""
    terms: list[PartitionTerm] = []
    for raw in _SPLIT.split(text):
        term = raw.strip()
        if not term:
            continue
        m = _TERM.match(term)
        if m is None:
            if not re.fullmatch(r"[\w.]+", term):
                raise ValueError(f"{term!r} is not a column name or a transform such as day(ts) or bucket(id, 16)")
            terms.append(PartitionTerm("identity", term))
            continue
        name, args = m.group(1).lower(), [a.strip() for a in m.group(2).split(",")]
        if name in _UNARY:
            if len(args) != 1:
                raise ValueError(f"{term!r}: {name} takes one column")
            terms.append(PartitionTerm(_UNARY[name], args[0]))
        elif name in ("bucket", "truncate"):
            if len(args) != 2:
                raise ValueError(f"Invalid argument {m.group(2)}, should have 2 parts (column, number)")
            column, number = args
            if column.isdigit() and not number.isdigit():  # Spark's DDL order: bucket(16, id)
                column, number = number, column
            if not number.isdigit() or int(number) <= 0:
                raise ValueError(f"{term!r}: the {name} width must be a positive integer")
            terms.append(PartitionTerm(name, column, int(number)))
        elif name == "identity":
            terms.append(PartitionTerm("identity", args[0]))
        else:
            raise ValueError(f"Unsupported transform: {name}")
    return terms


def partitioner_terms(config: StorageConfig) -> list[PartitionTerm]:
    """``partitioner.class`` (of the lake sinks) as partition terms."""
    if config.partitioner == "field":
        return [PartitionTerm("identity", f.split(".")[-1]) for f in config.partition_fields]
    if config.partitioner == "time":
        transform = "hour" if config.partition_duration_ms == 3_600_000 else "day"
        column = config.timestamp_field if config.timestamp_extractor == "recordfield" else "kafka_timestamp"
        return [PartitionTerm(transform, column)]
    return []


def partition_spec(schema: Schema, terms: Iterable[PartitionTerm]) -> PartitionSpec:
    """The Iceberg partition spec of ``terms`` over ``schema`` (``ValueError`` naming a missing column)."""
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.transforms import (
        BucketTransform,
        DayTransform,
        HourTransform,
        IdentityTransform,
        MonthTransform,
        Transform,
        TruncateTransform,
        YearTransform,
    )

    fields = []
    for n, term in enumerate(terms):
        try:
            source = schema.find_field(term.column)
        except ValueError:
            raise ValueError(f"Partition term {term}: the table has no column {term.column!r} (columns: "
                             f"{', '.join(f.name for f in schema.fields)})") from None
        transform: Transform[Any, Any]
        if term.transform == "bucket":
            transform = BucketTransform(term.arg or 1)
        elif term.transform == "truncate":
            transform = TruncateTransform(term.arg or 1)
        else:
            transform = {"identity": IdentityTransform(), "year": YearTransform(), "month": MonthTransform(),
                         "day": DayTransform(), "hour": HourTransform()}[term.transform]
        if not transform.can_transform(source.field_type):
            raise ValueError(f"Partition term {term}: {term.transform} cannot transform {term.column} "
                             f"({source.field_type})")
        fields.append(PartitionField(source_id=source.field_id, field_id=1000 + n, transform=transform,
                                     name=term.field_name))
    return PartitionSpec(*fields)
