"""The message browser: read a topic's records by partition, offset or time, decode them, filter them.

A browse is planned first (:func:`plan_browse`: the topic, the partitions, each one's range from
ListOffsets), so a query that cannot be read is refused before the page starts, then read
(:func:`read`): one confluent-kafka Consumer that joins no group and commits nothing assigns the
partitions at their start offsets and reads until every partition reached the end it had when
the browse began (``enable.partition.eof``), enough records matched, the scan budget is spent, or
the time budget runs out. Each batch (:data:`BATCH` records) is decoded, filtered and rendered to
HTML in a worker thread and handed on at once, so the page streams: one chunk per batch.

Where reading starts (``mode``):

* ``newest`` (default): the last records of each partition, shown newest first (by timestamp,
  then offset): each partition is read from ``end - n`` to its end, then merged;
* ``oldest``: from each partition's earliest offset;
* ``offset``: from an offset (clamped to [earliest, end]) in the chosen partition, or in every one;
* ``timestamp``: from the first record at or after a time (ListOffsets by timestamp).

``filter`` keeps records whose key, value or a header contains the text (case-insensitive),
scanning at most :data:`MAX_SCAN` records.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from confluent_kafka import Consumer, KafkaError, TopicPartition
from seaway.console.decoding import Decoded, FrameDecoder, show_bytes
from seaway.console.errors import ConsoleError
from seaway.console.kafka import KafkaGateway
from seaway.kafka_clients import STREAMING_CONSUMER

__all__ = ["BATCH", "DLQ_PREFIX", "MAX_SCAN", "MODES", "BrowsePlan", "BrowseQuery", "Record", "plan_browse", "read"]

BATCH = 500
MAX_SCAN = 100_000
"""Records one browse reads at most (a filter that matches little stops here)."""
TIME_BUDGET_S = 10.0
MODES = ("newest", "oldest", "offset", "timestamp")
DLQ_PREFIX = "__connect.errors."
"""Headers Kafka Connect adds to a dead letter queue's records (errors.deadletterqueue.context.headers.enable)."""


@dataclass(frozen=True, slots=True)
class BrowseQuery:
    topic: str
    partition: int | None = None
    mode: str = "newest"
    offset: int | None = None
    timestamp_ms: int | None = None
    limit: int = 100
    filter: str = ""


@dataclass(slots=True)
class Record:
    partition: int
    offset: int
    timestamp_ms: int
    timestamp_type: int
    key: Decoded
    value: Decoded
    headers: list[tuple[str, str]] = field(default_factory=list)

    @property
    def error_context(self) -> list[tuple[str, str]]:
        """Kafka Connect's dead-letter-queue headers (``__connect.errors.*``), without the prefix."""
        return [(k[len(DLQ_PREFIX):], v) for k, v in self.headers if k.startswith(DLQ_PREFIX)]

    @property
    def other_headers(self) -> list[tuple[str, str]]:
        return [(k, v) for k, v in self.headers if not k.startswith(DLQ_PREFIX)]

    def matches(self, needle: str) -> bool:
        if not needle:
            return True
        return any(needle in (text or "").lower() for text in (self.key.text, self.value.text)) or any(
            needle in k.lower() or needle in v.lower() for k, v in self.headers)


async def _starts(gateway: KafkaGateway, query: BrowseQuery, partitions: Sequence[int],
                  marks: dict[tuple[str, int], tuple[int, int]]) -> dict[int, tuple[int, int]]:
    """partition -> (start offset, end offset) for the partitions that hold something to read."""
    topic = query.topic
    wanted: dict[int, int] = {}
    if query.mode == "timestamp":
        if query.timestamp_ms is None:
            raise ConsoleError("a time is needed to read from a timestamp", 400)
        found = await gateway.offsets([(topic, p) for p in partitions], "for_timestamp", query.timestamp_ms)
        wanted = {p: found.get((topic, p), -1) for p in partitions}
        wanted = {p: (o if o >= 0 else marks[(topic, p)][1]) for p, o in wanted.items() if (topic, p) in marks}
    for p in partitions:
        if (topic, p) not in marks:
            continue
        low, high = marks[(topic, p)]
        if query.mode == "newest":
            per = query.limit if not query.filter else max(query.limit, MAX_SCAN // max(1, len(partitions)))
            wanted[p] = max(low, high - per)
        elif query.mode == "oldest":
            wanted[p] = low
        elif query.mode == "offset":
            if query.offset is None:
                raise ConsoleError("an offset is needed to read from an offset", 400)
            wanted[p] = min(max(query.offset, low), high)
    return {p: (start, marks[(topic, p)][1]) for p, start in wanted.items() if start < marks[(topic, p)][1]}


def _headers(raw: Any) -> list[tuple[str, str]]:
    if not raw:
        return []
    out = []
    for key, value in raw:
        out.append((key, "null" if value is None else show_bytes(value)[0]))
    return out


def _decode_batch(messages: list[Any], decoder: FrameDecoder, needle: str) -> list[Record]:
    out: list[Record] = []
    for m in messages:
        ts_type, ts = m.timestamp()
        record = Record(m.partition(), m.offset(), ts, ts_type, decoder.decode(m.key()), decoder.decode(m.value()),
                        _headers(m.headers()))
        if record.matches(needle):
            out.append(record)
    return out


@dataclass(frozen=True, slots=True)
class BrowsePlan:
    """Where each partition's reading starts and ends (``partition -> (start, end)``)."""

    query: BrowseQuery
    ranges: dict[int, tuple[int, int]]


async def plan_browse(gateway: KafkaGateway, query: BrowseQuery) -> BrowsePlan:
    """Check the query against the topic and find each partition's range; ConsoleError when it cannot be read."""
    info = await gateway.topic(query.topic)
    if info is None:
        raise ConsoleError(f"topic {query.topic} does not exist", 404)
    partitions = [p.id for p in info.partitions]
    if query.partition is not None:
        if query.partition not in partitions:
            raise ConsoleError(f"topic {query.topic} has no partition {query.partition}", 400)
        partitions = [query.partition]
    marks = await gateway.watermarks([(query.topic, p) for p in partitions])
    return BrowsePlan(query, await _starts(gateway, query, partitions, marks))


Render = Callable[[list[Record]], str]


async def read(gateway: KafkaGateway, decoder: FrameDecoder, plan: BrowsePlan,
               render: Render) -> AsyncGenerator[tuple[int, str], None]:
    """(rows, HTML) per batch of matching records, decoded and rendered in a worker thread.

    ``newest``: one batch, newest first, at the end. A failure while reading raises ConsoleError.
    """
    query = plan.query
    if not plan.ranges:
        return
    needle = query.filter.lower()
    consumer = Consumer(gateway.client_config(**{
        "group.id": "seaway-console-browser", "enable.auto.commit": False, "enable.partition.eof": True,
        "auto.offset.reset": "latest", "fetch.wait.max.ms": 100, "queued.max.messages.kbytes": 16384,
        **STREAMING_CONSUMER, "isolation.level": "read_committed"}))
    try:
        consumer.assign([TopicPartition(query.topic, p, start) for p, (start, _) in plan.ranges.items()])
        pending = set(plan.ranges)
        ends = {p: end for p, (_, end) in plan.ranges.items()}
        collected: list[Record] = []
        scanned = shown = 0
        deadline = time.monotonic() + TIME_BUDGET_S
        while pending and scanned < MAX_SCAN and time.monotonic() < deadline:
            batch = await asyncio.to_thread(consumer.consume, BATCH, 0.2)
            records = []
            for m in batch:
                partition = cast(int, m.partition())
                err = m.error()
                if err is not None:
                    if err.code() == KafkaError._PARTITION_EOF:
                        pending.discard(partition)
                        continue
                    if err.fatal() or err.code() in (KafkaError.TOPIC_AUTHORIZATION_FAILED,
                                                     KafkaError.UNKNOWN_TOPIC_OR_PART):
                        raise ConsoleError(f"reading {query.topic}: {err.name()}: {err.str()}", 502)
                    continue
                offset = cast(int, m.offset())
                if offset >= ends[partition]:
                    pending.discard(partition)  # appended since the browse began: not part of it
                    continue
                records.append(m)
                if offset >= ends[partition] - 1:
                    pending.discard(partition)
            if not records:
                continue
            scanned += len(records)
            for schema_id in decoder.unknown_ids([v for m in records for v in (m.key(), m.value())]):
                await decoder.learn(schema_id)
            if query.mode == "newest":
                collected += await asyncio.to_thread(_decode_batch, records, decoder, needle)
                continue
            room = query.limit - shown
            rows, html = await asyncio.to_thread(_decode_and_render, records, decoder, needle, room, render)
            shown += rows
            if rows:
                yield rows, html
            if shown >= query.limit:
                return
        if query.mode == "newest" and collected:
            collected.sort(key=lambda r: (r.timestamp_ms, r.offset), reverse=True)
            newest = collected[: query.limit]
            yield len(newest), await asyncio.to_thread(render, newest)
    finally:
        await asyncio.to_thread(consumer.close)


def _decode_and_render(messages: list[Any], decoder: FrameDecoder, needle: str, room: int,
                       render: Render) -> tuple[int, str]:
    matched = _decode_batch(messages, decoder, needle)[:room]
    return len(matched), render(matched) if matched else ""
