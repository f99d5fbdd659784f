"""Checks of user-supplied offsets for ``PATCH /connectors/{c}/offsets`` (Kafka's ``MirrorUtils.validate*``).

The mirror connectors keep their positions in Connect's offsets like any source connector:
the source connector under ``{"cluster", "topic", "partition"}`` with ``{"offset": <upstream
offset of the last record sent>}``, the checkpoint and heartbeat connectors under their own
partitions with ``{"offset": 0}``. An altered offset must have that shape.

Messages quote the maps and values as Kafka's do, Java's ``toString`` of what Jackson read
(``{cluster=a, topic=t}`` in the request's order, ``null``), never a Python dict.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from seaway.connect.api import ConnectError, java_string

__all__ = ["validate_offsets"]

_INT_MAX = 2**31 - 1


def _map(values: Mapping[str, Any]) -> str:
    """Java's ``LinkedHashMap.toString()``: Jackson keeps a JSON object's order."""
    return "{" + ", ".join(f"{k}={java_string(v)}" for k, v in values.items()) + "}"


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def validate_offsets(offsets: Sequence[tuple[Mapping[str, Any] | None, Mapping[str, Any] | None]],
                     string_keys: Sequence[str], *, only_zero: bool, partition_key: bool = True) -> None:
    """Raise :class:`ConnectError` naming what is wrong; ``None`` offsets (resets) are always fine."""
    for partition, offset in offsets:
        if offset is None:
            continue
        if partition is None:
            raise ConnectError("Source partitions may not be null")
        for key in string_keys:
            if key not in partition:
                raise ConnectError(f"Source partition {_map(partition)} is missing the '{key}' key, which is required")
            if not isinstance(partition[key], str):
                raise ConnectError(f"Source partition {_map(partition)} has an invalid value "
                                   f"{java_string(partition[key])} for the '{key}' key, which must be a string")
        if partition_key:
            if "partition" not in partition:
                raise ConnectError(f"Source partition {_map(partition)} is missing the 'partition' key, which is "
                                   "required")
            value = partition["partition"]
            if not _is_int(value) or value > _INT_MAX:
                raise ConnectError(f"Source partition {_map(partition)} has an invalid value {java_string(value)} "
                                   "for the 'partition' key, which must be an integer")
            if value < 0:
                raise ConnectError(f"Source partition {_map(partition)} has an invalid value {java_string(value)} "
                                   "for the 'partition' key, which cannot be negative")
        if "offset" not in offset:
            raise ConnectError(f"Source offset {_map(offset)} for source partition {_map(partition)} is missing the "
                               "'offset' key, which is required")
        number = offset["offset"]
        if not _is_int(number):
            raise ConnectError(f"Source offset {_map(offset)} for source partition {_map(partition)} has an invalid "
                               f"value {java_string(number)} for the 'offset' key, which must be an integer")
        if only_zero and number != 0:
            raise ConnectError(f"Source offset {_map(offset)} for source partition {_map(partition)} has an invalid "
                               f"value {java_string(number)} for the 'offset' key; the only accepted value is 0")
        if not only_zero and number < 0:
            raise ConnectError(f"Source offset {_map(offset)} for source partition {_map(partition)} has an invalid "
                               f"value {java_string(number)} for the 'offset' key, which cannot be negative")
