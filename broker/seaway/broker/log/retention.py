"""Which old segments retention may delete, following Kafka's ``UnifiedLog.deleteOldSegments``.

Three rules, each selecting a prefix of the segment list (oldest first, stopping at the
first segment that does not qualify), applied in Kafka's order; the union of prefixes is
simply the longest one:

1. ``retention.ms``: a segment whose largest timestamp is older than ``now - retention.ms``
   (largest timestamp = newest batch maxTimestamp, or the file mtime when none);
2. ``retention.bytes``: oldest segments while the partition stays at or above the limit
   without them;
3. the log start offset (DeleteRecords): a segment wholly below it, i.e. the *next*
   segment starts at or before it.

Rules 1 and 2 apply only with ``delete`` in ``cleanup.policy``. The active segment may be
selected if it is not empty (the caller then rolls first, as Kafka does), never when empty.
Pure functions of the segment list so they are easy to test and reuse by the compactor.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from seaway.broker.log.config import LogConfig

__all__ = ["RetentionSegment", "segments_to_delete"]


class RetentionSegment(Protocol):
    """What retention needs to know about a segment."""

    @property
    def base_offset(self) -> int: ...
    @property
    def size(self) -> int: ...
    @property
    def largest_timestamp(self) -> int: ...


def _deletable(segments: Sequence[RetentionSegment]) -> Sequence[RetentionSegment]:
    """All segments but an empty active one."""
    if segments and segments[-1].size == 0:
        return segments[:-1]
    return segments


def _by_time(segments: Sequence[RetentionSegment], retention_ms: int, now_ms: int) -> int:
    if retention_ms < 0:
        return 0
    count = 0
    for segment in _deletable(segments):
        if now_ms - segment.largest_timestamp <= retention_ms:
            break
        count += 1
    return count


def _by_size(segments: Sequence[RetentionSegment], retention_bytes: int) -> int:
    if retention_bytes < 0:
        return 0
    excess = sum(segment.size for segment in segments) - retention_bytes
    count = 0
    for segment in _deletable(segments):
        if excess - segment.size < 0:
            break
        excess -= segment.size
        count += 1
    return count


def _by_start_offset(segments: Sequence[RetentionSegment], log_start_offset: int) -> int:
    count = 0
    for following in segments[1:]:
        if following.base_offset > log_start_offset:
            break
        count += 1
    return count


def segments_to_delete(
    segments: Sequence[RetentionSegment], config: LogConfig, now_ms: int, log_start_offset: int
) -> tuple[int, str]:
    """How many of the oldest segments to delete, and the rule that decided (for the log line)."""
    candidates = [(_by_start_offset(segments, log_start_offset), "log start offset")]
    if config.deletes:
        candidates.append((_by_time(segments, config.retention_ms, now_ms), "retention.ms"))
        candidates.append((_by_size(segments, config.retention_bytes), "retention.bytes"))
    return max(candidates, key=lambda pair: pair[0])
