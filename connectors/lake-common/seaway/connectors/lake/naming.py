"""Deterministic data file names: topic, Kafka partition and offsets, so a replay writes the same names.

Two shapes, both Confluent's (``file.delim`` ``+``)::

    <topic>+<partition>+<start:020d>+<end:020d>.parquet      the Spark sink (Confluent's HDFS sink
                                                              shape, 20-digit offsets)
    <topic>+<partition>+<start:0{width}d><extension>          the S3 sink (Confluent's S3 sink:
                                                              start offset only, width from
                                                              filename.offset.zero.pad.width)

``start``/``end`` are the first and last Kafka offsets of the records in that file (in the
consumed coordinates, before SMTs). Either is parsed by :func:`parse_data_file_name`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["DataFileName", "data_file_name", "parse_data_file_name", "start_offset_file_name"]

_NAME = re.compile(r"^(?P<topic>[a-zA-Z0-9._-]+)\+(?P<partition>\d+)\+(?P<start>\d+)(?:\+(?P<end>\d+))?"
                   r"(?P<ext>(?:\.[A-Za-z0-9]+)*)$")


@dataclass(frozen=True, slots=True)
class DataFileName:
    """A parsed name; ``end`` is ``None`` for the start-offset-only shape."""

    topic: str
    partition: int
    start: int
    end: int | None
    extension: str = ""


def data_file_name(topic: str, partition: int, start: int, end: int, extension: str = ".parquet") -> str:
    """``<topic>+<partition>+<start:020d>+<end:020d><extension>``."""
    return f"{topic}+{partition}+{start:020d}+{end:020d}{extension}"


def start_offset_file_name(topic: str, partition: int, start: int, width: int, extension: str) -> str:
    """``<topic>+<partition>+<start zero-padded to width><extension>`` (Confluent's S3 object name)."""
    return f"{topic}+{partition}+{start:0{width}d}{extension}"


def parse_data_file_name(name: str) -> DataFileName | None:
    """Either shape back into its parts; ``None`` for any other name."""
    m = _NAME.match(name)
    if m is None:
        return None
    end = m["end"]
    return DataFileName(m["topic"], int(m["partition"]), int(m["start"]), int(end) if end is not None else None,
                        m["ext"])
