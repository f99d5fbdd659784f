"""pyiceberg ``DataFile`` <-> JSON, for DATA_WRITTEN events on the control topic.

A task writes Parquet data files into a table's location (with their column statistics, as any Iceberg
writer does) and the committer adds them to a snapshot, so the file's manifest entry travels between
processes: every field of Iceberg's ``data_file`` struct (path, format, partition tuple, counts, sizes,
per-column statistics, bounds as base64, split offsets), in the table's format version.
"""

from __future__ import annotations

import base64
import datetime
import decimal
import uuid
from typing import Any

from pyiceberg.manifest import DataFile, DataFileContent, FileFormat
from pyiceberg.typedef import Record

__all__ = ["data_file_from_json", "data_file_to_json"]

_SCALARS = (str, int, float, bool, type(None))


def _value_to_json(value: Any) -> Any:
    """A partition value (the transforms' results: ints, strings, bools, floats, bytes, decimals, uuids)."""
    if isinstance(value, _SCALARS):
        return value
    if isinstance(value, (bytes, bytearray)):
        return {"b64": base64.b64encode(value).decode("ascii")}
    if isinstance(value, decimal.Decimal):
        return {"decimal": str(value)}
    if isinstance(value, uuid.UUID):
        return {"uuid": str(value)}
    if isinstance(value, datetime.date):
        return {"date": value.isoformat()}
    raise TypeError(f"Cannot put a {type(value).__name__} partition value in a DATA_WRITTEN event")


def _value_from_json(value: Any) -> Any:
    if not isinstance(value, dict):
        return value
    if "b64" in value:
        return base64.b64decode(value["b64"])
    if "decimal" in value:
        return decimal.Decimal(value["decimal"])
    if "uuid" in value:
        return uuid.UUID(value["uuid"])
    return datetime.date.fromisoformat(value["date"])


def _int_map(values: dict[int, int] | None) -> dict[str, int] | None:
    return None if values is None else {str(k): int(v) for k, v in values.items()}


def _bytes_map(values: dict[int, bytes] | None) -> dict[str, str] | None:
    return None if values is None else {str(k): base64.b64encode(v).decode("ascii") for k, v in values.items()}


def data_file_to_json(data_file: DataFile) -> dict[str, Any]:
    """The manifest entry's fields as JSON-safe values."""
    return {
        "content": int(data_file.content), "file_path": data_file.file_path,
        "file_format": data_file.file_format.name,
        "partition": [_value_to_json(data_file.partition[i]) for i in range(len(data_file.partition))],
        "record_count": data_file.record_count, "file_size_in_bytes": data_file.file_size_in_bytes,
        "column_sizes": _int_map(data_file.column_sizes), "value_counts": _int_map(data_file.value_counts),
        "null_value_counts": _int_map(data_file.null_value_counts),
        "nan_value_counts": _int_map(data_file.nan_value_counts),
        "lower_bounds": _bytes_map(data_file.lower_bounds), "upper_bounds": _bytes_map(data_file.upper_bounds),
        "split_offsets": data_file.split_offsets, "sort_order_id": data_file.sort_order_id,
    }


def data_file_from_json(body: dict[str, Any], format_version: int, spec_id: int) -> DataFile:
    """A ``DataFile`` of the table's format version, from :func:`data_file_to_json`."""

    def ints(key: str) -> dict[int, int] | None:
        values = body.get(key)
        return None if values is None else {int(k): int(v) for k, v in values.items()}

    def blobs(key: str) -> dict[int, bytes] | None:
        values = body.get(key)
        return None if values is None else {int(k): base64.b64decode(v) for k, v in values.items()}

    data_file = DataFile.from_args(
        _table_format_version=format_version,  # type: ignore[arg-type]
        content=DataFileContent(body["content"]), file_path=body["file_path"],
        file_format=FileFormat[body["file_format"]],
        partition=Record(*[_value_from_json(v) for v in body["partition"]]),
        record_count=body["record_count"], file_size_in_bytes=body["file_size_in_bytes"],
        column_sizes=ints("column_sizes"), value_counts=ints("value_counts"),
        null_value_counts=ints("null_value_counts"), nan_value_counts=ints("nan_value_counts"),
        lower_bounds=blobs("lower_bounds"), upper_bounds=blobs("upper_bounds"), key_metadata=None,
        split_offsets=body.get("split_offsets"), equality_ids=None, sort_order_id=body.get("sort_order_id"),
    )
    data_file.spec_id = spec_id
    return data_file
