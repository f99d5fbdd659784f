"""Who runs which connector and task: Kafka's Incremental Cooperative Assignor (KIP-415).

The group leader runs :meth:`IncrementalCooperativeAssignor.assign` once per rebalance. Members
keep running their work across rebalances; each one receives only what is *new* for it plus
what it must *revoke*. The leader remembers the assignment it handed out last round and
derives, per round::

    configured = connectors and tasks in the config snapshot
    active     = what members report they run (their metadata's allocation)
    deleted    = (previous | active) - configured             -> revoked from holders
    duplicated = held by more than one member                 -> revoked from all holders
    lost       = previous - active - deleted                  -> see below
    created    = configured - previous - active               -> to the least-loaded members

Lost work (its member vanished) is reassigned at once when every previous member is still
here (an assignment a member missed) or when ``scheduled.rebalance.max.delay.ms`` is 0.
Otherwise the leader waits that long, so a restarting worker can get its own work back: the
assignment carries the remaining delay and every member rejoins when it expires. Members
seen empty during the wait become candidates; at expiry lost work is round-robined over the
candidates still present, else assigned as new work.

Load balancing: when no delay is pending each member should hold between floor(total/n) and
ceil(total/n) connectors (and, separately, tasks); the excess is revoked. Revoking members
rejoin immediately, and the second round hands the revoked work out as new work. If two
consecutive rounds would revoke, an exponential backoff (1 ms x 40^k, capped at the max
delay) is imposed instead.

:func:`eager_assign` is Kafka's ``EagerAssignor`` for ``connect.protocol=eager``: all work is
revoked at every rebalance and round-robined over the sorted members.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TypeVar

from seaway.connect.runtime.distributed.connect_protocol import NO_ERROR, ExtendedAssignment
from seaway.connect.runtime.herder import ConnectorTaskId

__all__ = ["IncrementalCooperativeAssignor", "MemberAllocation", "Work", "eager_assign"]

log = logging.getLogger(__name__)
T = TypeVar("T", str, ConnectorTaskId)


@dataclass(slots=True)
class Work:
    """A set of connectors and tasks (one member's share, or a category like "lost")."""

    connectors: set[str] = field(default_factory=set)
    tasks: set[ConnectorTaskId] = field(default_factory=set)

    def __bool__(self) -> bool:
        return bool(self.connectors or self.tasks)

    def copy(self) -> Work:
        return Work(set(self.connectors), set(self.tasks))

    def __or__(self, other: Work) -> Work:
        return Work(self.connectors | other.connectors, self.tasks | other.tasks)

    def __sub__(self, other: Work) -> Work:
        return Work(self.connectors - other.connectors, self.tasks - other.tasks)

    def __and__(self, other: Work) -> Work:
        return Work(self.connectors & other.connectors, self.tasks & other.tasks)


@dataclass(frozen=True, slots=True)
class MemberAllocation:
    """What the leader learns about a member from its JoinGroup metadata."""

    member_id: str
    url: str
    connectors: frozenset[str] = frozenset()
    tasks: frozenset[ConnectorTaskId] = frozenset()

    def work(self) -> Work:
        return Work(set(self.connectors), set(self.tasks))


def _union(works: Iterable[Work]) -> Work:
    out = Work()
    for w in works:
        out.connectors |= w.connectors
        out.tasks |= w.tasks
    return out


def eager_assign(connectors: Iterable[str], tasks: Iterable[ConnectorTaskId],
                 members: Iterable[str]) -> dict[str, Work]:
    """Kafka's EagerAssignor: sorted connectors, then sorted tasks, one circular pass over sorted members."""
    ids = sorted(members)
    out = {m: Work() for m in ids}
    if not ids:
        return out
    i = 0
    for name in sorted(connectors):
        out[ids[i % len(ids)]].connectors.add(name)
        i += 1
    for task in sorted(tasks):
        out[ids[i % len(ids)]].tasks.add(task)
        i += 1
    return out


class IncrementalCooperativeAssignor:
    """The leader's assignment state across rounds; one instance per worker (used while leader)."""

    BACKOFF_INITIAL_MS = 1
    BACKOFF_MULTIPLIER = 40

    def __init__(self, max_delay_ms: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.max_delay_ms = max_delay_ms
        self._clock = clock
        self._previous: dict[str, Work] = {}
        self._previous_generation = -1
        self._previous_revocation = False
        self._successive_revocations = 0
        self._scheduled_at: float | None = None
        self._candidates: set[str] = set()
        self._lost_pending = Work()
        self.current: dict[str, Work] = {}
        """Every member's full assignment after the last round (the leader's view of owners)."""

    def assign(self, *, leader: str, leader_url: str, config_offset: int, version: int,
               connectors: Iterable[str], tasks: Iterable[ConnectorTaskId],
               members: Mapping[str, MemberAllocation], last_completed_generation: int,
               generation: int) -> dict[str, ExtendedAssignment]:
        """One round: ``connectors``/``tasks`` are the configured work in the leader's snapshot."""
        now = self._clock()
        if self._previous_generation != last_completed_generation:
            log.debug("assignor: generation %d is not the one we assigned (%d); starting from members' reports",
                      last_completed_generation, self._previous_generation)
            self._previous = {m: a.work() for m, a in members.items()}
            self._lost_pending = Work()
            self._previous_revocation = False
        configured = Work(set(connectors), set(tasks))
        held = {m: a.work() for m, a in members.items()}
        active = _union(held.values())
        previous = _union(self._previous.values()) | self._lost_pending
        deleted = (previous | active) - configured
        duplicated = self._duplicated(held)
        revoke = {m: w & (deleted | duplicated) for m, w in held.items()}
        lost = previous - active - deleted
        created = configured - previous - active
        following = {m: held[m] - revoke[m] for m in held}
        new = {m: Work() for m in held}
        to_assign = created.copy()
        delay = self._handle_lost(lost, set(self._previous), following, new, to_assign, now)
        self._assign_least_loaded(to_assign, following, new)
        revoking = any(revoke.values())
        if delay == 0 and not revoking:
            balancing = self._balancing_revocations(following, new)
            if any(balancing.values()):
                backoff = 0
                if self._previous_revocation:
                    self._successive_revocations += 1
                    backoff = min(self.max_delay_ms, self.BACKOFF_INITIAL_MS
                                  * self.BACKOFF_MULTIPLIER ** (self._successive_revocations - 1))
                if backoff > 0:
                    delay = backoff
                    log.info("assignor: revoked in the previous round too; delaying revocations %d ms", delay)
                else:
                    for m, w in balancing.items():
                        revoke[m] = revoke[m] | w
                        following[m] = following[m] - w
                    revoking = True
            else:
                self._successive_revocations = 0
        self._previous_revocation = revoking
        self._previous = {m: following[m].copy() for m in held}
        self._previous_generation = generation
        self.current = {m: w.copy() for m, w in following.items()}
        return {m: ExtendedAssignment(
            version, NO_ERROR, leader, leader_url, config_offset,
            tuple(sorted(new[m].connectors)), tuple(sorted(new[m].tasks)),
            tuple(sorted(revoke[m].connectors)), tuple(sorted(revoke[m].tasks)), delay) for m in held}

    @staticmethod
    def _duplicated(held: Mapping[str, Work]) -> Work:
        seen, dup = Work(), Work()
        for w in held.values():
            dup.connectors |= seen.connectors & w.connectors
            dup.tasks |= seen.tasks & w.tasks
            seen = seen | w
        return dup

    def _handle_lost(self, lost: Work, previous_members: set[str], following: dict[str, Work],
                     new: dict[str, Work], to_assign: Work, now: float) -> int:
        """Decide about lost work; returns the delay (ms) to announce, 0 for none."""
        empty = {m for m, w in following.items() if not w}
        if not lost:
            self._reset_delay()
            return 0
        if self._scheduled_at is None:
            if self.max_delay_ms == 0 or previous_members <= set(following):
                self._absorb(to_assign, lost)
                self._reset_delay()
                return 0
            self._scheduled_at = now + self.max_delay_ms / 1000
            self._candidates = set(empty)
            self._lost_pending = lost.copy()
            log.info("assignor: lost %s; waiting %d ms before reassigning", _describe(lost), self.max_delay_ms)
            return self.max_delay_ms
        if now >= self._scheduled_at:
            candidates = sorted(m for m in self._candidates | empty if m in following)
            if candidates:
                items: list[str | ConnectorTaskId] = [*sorted(lost.connectors), *sorted(lost.tasks)]
                for i, item in enumerate(items):
                    target = candidates[i % len(candidates)]
                    if isinstance(item, str):
                        new[target].connectors.add(item)
                        following[target].connectors.add(item)
                    else:
                        new[target].tasks.add(item)
                        following[target].tasks.add(item)
            else:
                self._absorb(to_assign, lost)
            log.info("assignor: reassigning lost %s", _describe(lost))
            self._reset_delay()
            return 0
        self._candidates |= empty
        self._lost_pending = lost.copy()
        return max(1, math.ceil((self._scheduled_at - now) * 1000))

    @staticmethod
    def _absorb(target: Work, extra: Work) -> None:
        target.connectors |= extra.connectors
        target.tasks |= extra.tasks

    def _reset_delay(self) -> None:
        self._scheduled_at = None
        self._candidates = set()
        self._lost_pending = Work()

    @staticmethod
    def _assign_least_loaded(work: Work, following: dict[str, Work], new: dict[str, Work]) -> None:
        if not following:
            return
        for name in sorted(work.connectors):
            target = min(sorted(following), key=lambda m: len(following[m].connectors))
            following[target].connectors.add(name)
            new[target].connectors.add(name)
        for task in sorted(work.tasks):
            target = min(sorted(following), key=lambda m: len(following[m].tasks))
            following[target].tasks.add(task)
            new[target].tasks.add(task)

    @staticmethod
    def _balancing_revocations(following: dict[str, Work], new: dict[str, Work]) -> dict[str, Work]:
        """Per resource type, bring every member within [floor, ceil] of the average, revoking held items."""
        out = {m: Work() for m in following}
        if len(following) < 2:
            return out
        connectors = _balance({m: set(w.connectors) for m, w in following.items()},
                              {m: set(w.connectors) for m, w in new.items()})
        tasks = _balance({m: set(w.tasks) for m, w in following.items()},
                         {m: set(w.tasks) for m, w in new.items()})
        for m in out:
            out[m].connectors |= connectors.get(m, set())
            out[m].tasks |= tasks.get(m, set())
        return out


def _balance(loads: dict[str, set[T]], fresh: dict[str, set[T]]) -> dict[str, set[T]]:
    """What to revoke so that every member ends within [floor, ceil] once the revoked items are handed out.

    Only items a member already ran (not ``fresh`` ones given this round) are revoked.
    """
    total = sum(len(v) for v in loads.values())
    floor, rem = divmod(total, len(loads))
    ceil = floor + (1 if rem else 0)
    out: dict[str, set[T]] = {m: set() for m in loads}

    def take(m: str) -> bool:
        revocable = sorted(loads[m] - fresh.get(m, set()), key=str)
        if not revocable:
            return False
        loads[m].discard(revocable[-1])
        out[m].add(revocable[-1])
        return True

    for m in sorted(loads):
        while len(loads[m]) > ceil and take(m):
            pass
    while sum(len(v) for v in out.values()) < sum(max(0, floor - len(v)) for v in loads.values()):
        donors = sorted((m for m in loads if len(loads[m]) > floor), key=lambda m: (-len(loads[m]), m))
        if not any(take(m) for m in donors):
            break
    return out


def _describe(work: Work) -> str:
    return f"connectors {sorted(work.connectors)} and tasks {[str(t) for t in sorted(work.tasks)]}"
