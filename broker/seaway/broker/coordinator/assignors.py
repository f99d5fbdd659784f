"""Server-side assignors of KIP-848 consumer groups: ``uniform`` (the default) and ``range``.

The coordinator, not a group leader, computes every member's target assignment when the
group epoch moves (``group.consumer.assignors`` lists the assignors, the first being the
default; a member may ask for another with ``group.remote.assignor`` /
``ServerAssignor``). Both are deterministic functions of the members' subscriptions, the
partition counts and, for ``uniform``, the previous target.

- ``uniform`` (Kafka's ``UniformAssignor``): balanced and sticky. When every member
  subscribes to the same topics, each gets ``total // members`` partitions, the first
  ``total % members`` one more (members that already hold more go first, so fewer
  partitions move); a member keeps as much of its previous target as its quota allows and
  the rest is dealt out in (topic id, partition) order. With different subscriptions a
  partition goes to the eligible member holding the fewest, then partitions move from a
  member to an eligible one holding at least two fewer until none can: every member
  ends within one partition of every member that could have taken one of its partitions.
- ``range`` (Kafka's ``RangeAssignor``): per topic, the members subscribing to it sorted
  by instance id (else member id) get contiguous ranges, the first ``partitions %
  members`` one more; members subscribing to the same co-partitioned topics get the same
  partition numbers of each. Not sticky: a new member shifts the ranges.

Work is bounded by the group's partitions and members; nothing here allocates per record.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from seaway.broker.coordinator.consumer_records import Assignment

__all__ = ["ASSIGNORS", "Assignor", "MemberSpec", "RangeAssignor", "UniformAssignor", "assignor_named"]

TP = tuple[uuid.UUID, int]


@dataclass(frozen=True, slots=True)
class MemberSpec:
    """What an assignor knows of a member: its subscribed topic ids and its previous target."""

    member_id: str
    instance_id: str | None
    topics: frozenset[uuid.UUID]
    previous: Assignment


class Assignor(Protocol):
    name: str

    def assign(self, members: Sequence[MemberSpec], partitions: Mapping[uuid.UUID, int]) -> dict[str, Assignment]:
        """Every member's target; ``partitions`` is the partition count of each subscribed topic."""
        ...


class UniformAssignor:
    name = "uniform"

    def assign(self, members: Sequence[MemberSpec], partitions: Mapping[uuid.UUID, int]) -> dict[str, Assignment]:
        if not members:
            return {}
        first = members[0].topics
        if all(m.topics == first for m in members):
            return _homogeneous(members, [(t, p) for t in sorted(first) if t in partitions
                                          for p in range(partitions[t])])
        return _heterogeneous(members, partitions)


def _homogeneous(members: Sequence[MemberSpec], everything: list[TP]) -> dict[str, Assignment]:
    valid = set(everything)
    claimed: set[TP] = set()
    retained: dict[str, list[TP]] = {}
    for m in sorted(members, key=lambda m: m.member_id):
        mine = sorted(tp for tp in m.previous if tp in valid and tp not in claimed)
        claimed.update(mine)
        retained[m.member_id] = mine
    base, extra = divmod(len(everything), len(members))
    # Extra partitions go to the members that already hold the most: they move nothing.
    order = sorted(members, key=lambda m: (-len(retained[m.member_id]), m.member_id))
    quota = {m.member_id: base + (1 if i < extra else 0) for i, m in enumerate(order)}
    result: dict[str, list[TP]] = {}
    for m in order:
        result[m.member_id] = retained[m.member_id][:quota[m.member_id]]
    taken = {tp for tps in result.values() for tp in tps}
    free = iter(tp for tp in everything if tp not in taken)
    for m in sorted(members, key=lambda m: m.member_id):
        mine = result[m.member_id]
        while len(mine) < quota[m.member_id]:
            tp = next(free, None)
            if tp is None:
                break
            mine.append(tp)
    return {mid: frozenset(tps) for mid, tps in result.items()}


def _heterogeneous(members: Sequence[MemberSpec], partitions: Mapping[uuid.UUID, int]) -> dict[str, Assignment]:
    eligible: dict[TP, list[str]] = {}
    for m in sorted(members, key=lambda m: m.member_id):
        for topic in m.topics:
            for p in range(partitions.get(topic, 0)):
                eligible.setdefault((topic, p), []).append(m.member_id)
    result: dict[str, set[TP]] = {m.member_id: set() for m in members}
    owner: dict[TP, str] = {}
    for m in sorted(members, key=lambda m: m.member_id):
        for tp in sorted(m.previous):
            if tp in eligible and tp not in owner and m.member_id in eligible[tp]:
                owner[tp] = m.member_id
                result[m.member_id].add(tp)
    for tp in sorted((tp for tp in eligible if tp not in owner), key=lambda tp: (len(eligible[tp]), tp)):
        chosen = min(eligible[tp], key=lambda mid: (len(result[mid]), mid))
        owner[tp] = chosen
        result[chosen].add(tp)
    # Move partitions from a member to an eligible one holding at least two fewer, until
    # no such move is left; each move lowers the sum of squared counts, so this ends.
    for _ in range(len(owner) * 2 + 1):
        moved = False
        for mid in sorted(result, key=lambda x: (-len(result[x]), x)):
            for tp in sorted(result[mid]):
                takers = [o for o in eligible[tp] if len(result[o]) + 1 < len(result[mid])]
                if takers:
                    taker = min(takers, key=lambda o: (len(result[o]), o))
                    result[mid].discard(tp)
                    result[taker].add(tp)
                    moved = True
                    break
            if moved:
                break
        if not moved:
            break
    return {mid: frozenset(tps) for mid, tps in result.items()}


class RangeAssignor:
    name = "range"

    def assign(self, members: Sequence[MemberSpec], partitions: Mapping[uuid.UUID, int]) -> dict[str, Assignment]:
        result: dict[str, set[TP]] = {m.member_id: set() for m in members}
        ordered = sorted(members, key=lambda m: (m.instance_id or m.member_id, m.member_id))
        for topic in sorted({t for m in members for t in m.topics}):
            count = partitions.get(topic, 0)
            subscribers = [m.member_id for m in ordered if topic in m.topics]
            if not count or not subscribers:
                continue
            base, extra = divmod(count, len(subscribers))
            start = 0
            for i, mid in enumerate(subscribers):
                size = base + (1 if i < extra else 0)
                result[mid].update((topic, p) for p in range(start, start + size))
                start += size
        return {mid: frozenset(tps) for mid, tps in result.items()}


ASSIGNORS: dict[str, Assignor] = {"uniform": UniformAssignor(), "range": RangeAssignor()}
"""Assignors by the name clients send in ``group.remote.assignor``."""

_CLASS_NAMES = {
    "org.apache.kafka.coordinator.group.assignor.UniformAssignor": "uniform",
    "org.apache.kafka.coordinator.group.assignor.RangeAssignor": "range",
}


def assignor_named(name: str) -> Assignor | None:
    """An assignor by its short name or Kafka's class name (as ``group.consumer.assignors`` lists them)."""
    return ASSIGNORS.get(_CLASS_NAMES.get(name.strip(), name.strip()))
