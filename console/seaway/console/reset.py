"""Resetting a group's offsets with kafka-consumer-groups.sh's options, dry run first.

The same plan ``seaway groups reset-offsets`` computes (Kafka's ``prepareOffsetsToReset``):

=================  ===============================================================
``to-earliest``    each partition's earliest offset
``to-latest``      each partition's end offset
``to-current``     the committed offset (the end where there is none)
``to-offset``      the offset given, kept within [earliest, end]
``shift-by``       committed + N (N may be negative), kept within [earliest, end]
``to-datetime``    the first offset at or after a time (``YYYY-MM-DDTHH:mm:SS[.sss][zone]``, UTC
                   unless a zone is given); a partition with nothing after it: its end
``by-duration``    as ``to-datetime`` with now minus a duration (``PnDTnHnMnS``)
=================  ===============================================================

The scope is every partition the group has offsets for, or the topics (``t``) and partitions
(``t:0,1``) given. A plan is shown before anything changes (the dry run); executing it
requires the group to be inactive (``Empty``), as Kafka's tool does, and is refused otherwise
with Kafka's message.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from confluent_kafka import KafkaError
from seaway.cli.cluster import CliError
from seaway.cli.groups import kafka_state, parse_datetime, parse_duration_ms
from seaway.console.errors import BackendError, ConsoleError
from seaway.console.kafka import KafkaGateway

__all__ = ["METHODS", "PlanRow", "ResetRequest", "inactive_or_refuse", "plan_reset"]

METHODS = ("to-earliest", "to-latest", "to-current", "to-offset", "shift-by", "to-datetime", "by-duration")


@dataclass(frozen=True, slots=True)
class ResetRequest:
    method: str
    topics: tuple[str, ...] = ()
    """Empty: every partition with a committed offset (``--all-topics``)."""
    value: str = ""
    """The offset, shift, time or duration the method takes."""


@dataclass(frozen=True, slots=True)
class PlanRow:
    topic: str
    partition: int
    current: int | None
    new: int
    note: str = ""


def _bad(message: str) -> ConsoleError:
    return ConsoleError(message, 400)


def _int(text: str, what: str) -> int:
    try:
        return int(text.strip())
    except ValueError:
        raise _bad(f"{what} must be an integer, not {text.strip()!r}") from None


async def _scope(gateway: KafkaGateway, topics: Sequence[str], committed: dict[tuple[str, int], int]
                 ) -> list[tuple[str, int]]:
    if not topics:
        if not committed:
            raise _bad("the group has no committed offsets: name the topics to reset")
        return sorted(committed)
    known = await gateway.topics()
    found: list[tuple[str, int]] = []
    for arg in topics:
        topic, sep, parts = arg.strip().partition(":")
        info = known.get(topic)
        if info is None:
            raise _bad(f'The partitions "{topic}" do not exist')  # Kafka's tool's words
        ids = [p.id for p in info.partitions]
        if not sep:
            found += [(topic, p) for p in ids]
            continue
        for part in parts.split(","):
            partition = _int(part, f"partition in {arg.strip()!r}")
            if partition not in ids:
                raise _bad(f'The partitions "{topic}-{partition}" do not exist')
            found.append((topic, partition))
    return sorted(dict.fromkeys(found))


async def plan_reset(gateway: KafkaGateway, group: str, request: ResetRequest) -> list[PlanRow]:
    """The new offset of every partition in scope (nothing is changed)."""
    if request.method not in METHODS:
        raise _bad(f"unknown reset method {request.method!r}; expected one of {', '.join(METHODS)}")
    committed = await gateway.committed(group)
    partitions = await _scope(gateway, request.topics, committed)
    marks = await gateway.watermarks(partitions)
    missing = [f"{t}-{p}" for t, p in partitions if (t, p) not in marks]
    if missing:
        raise ConsoleError(f"no offsets from the cluster for {', '.join(missing)}", 502)

    def clamp(key: tuple[str, int], offset: int) -> tuple[int, str]:
        low, high = marks[key]
        if offset > high:
            return high, f"{offset} is past the end; set to {high}"
        if offset < low:
            return low, f"{offset} is before the earliest offset; set to {low}"
        return offset, ""

    rows: list[PlanRow] = []
    method = request.method
    if method in ("to-datetime", "by-duration"):
        try:
            ts = (parse_datetime(request.value) if method == "to-datetime"
                  else int(time.time() * 1000) - parse_duration_ms(request.value))
        except CliError as exc:
            raise _bad(str(exc)) from None
        by_time = await gateway.offsets(partitions, "for_timestamp", ts)
        for key in partitions:
            offset = by_time.get(key, -1)
            note = "" if offset >= 0 else "no record at or after the time: its end"
            rows.append(PlanRow(key[0], key[1], committed.get(key), offset if offset >= 0 else marks[key][1], note))
        return rows
    for key in partitions:
        current = committed.get(key)
        note = ""
        if method == "to-earliest":
            new = marks[key][0]
        elif method == "to-latest":
            new = marks[key][1]
        elif method == "to-current":
            new = current if current is not None else marks[key][1]
        elif method == "to-offset":
            new, note = clamp(key, _int(request.value, "the offset"))
        else:  # shift-by
            if current is None:
                raise _bad(f"Cannot shift offset for partition {key[0]}-{key[1]} since there is no current "
                           "committed offset")
            new, note = clamp(key, current + _int(request.value, "the shift"))
        rows.append(PlanRow(key[0], key[1], current, new, note))
    return rows


async def inactive_or_refuse(gateway: KafkaGateway, group: str) -> None:
    """Kafka's rule: offsets are reset only while the group has no members."""
    try:
        desc = await gateway.describe_group(group)
    except BackendError as exc:
        if exc.code == KafkaError.GROUP_ID_NOT_FOUND:
            return
        raise
    state = kafka_state(desc.state)
    if state not in ("Empty", "Dead"):
        raise ConsoleError(f"Assignments can only be reset if the group '{group}' is inactive, but the current "
                           f"state is {state}.", 409)
