"""Every consumer group's lag, sampled in the background: the groups page's figures and each group's trend.

Every ``lag.sample.interval.ms`` (10 s) the watcher lists the groups, describes them (members
and their assignments), reads each group's committed offsets and every partition's end offset
(one ListOffsets for all), and keeps per group the last :data:`HISTORY` samples of its total lag
(the trend the group page draws) and per partition a Burrow window (:mod:`seaway.lag`).

The status is the one Seaway already computes:

* when the console knows the brokers' ``/metrics`` (``metrics.urls``), the brokers' own
  ``kafka_consumergroup_partition_status``, evaluated there from every commit with its
  commit timestamp (docs/metrics.md);
* otherwise what ``seaway groups describe --lag-samples N`` computes from its observations, over
  the last :data:`WINDOW` samples: lag 0 is OK, a lagging partition no member owns is STOPPED, a
  single observation is OK, else Burrow's rules (STALLED, WARNING, REWIND...).

The groups page reads these cached figures, so it answers in the same time for 100 groups as for
one; the group page asks the cluster afresh. At most :data:`MAX_GROUPS` groups are sampled.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from seaway.console.errors import ConsoleError
from seaway.console.kafka import KafkaGateway
from seaway.console.metrics import parse_families
from seaway.lag import LagStatus, PartitionWindow, group_status, offset_lag

__all__ = ["HISTORY", "MAX_GROUPS", "WINDOW", "GroupLag", "LagWatch", "PartitionLag"]

HISTORY = 60
WINDOW = 10
MAX_GROUPS = 5000
_CONCURRENCY = 16
_log = logging.getLogger(__name__)


@dataclass(slots=True)
class PartitionLag:
    topic: str
    partition: int
    committed: int | None
    end: int | None
    owner: str | None
    status: str

    @property
    def lag(self) -> int | None:
        return offset_lag(self.committed, self.end)


@dataclass(slots=True)
class GroupLag:
    """The latest sample of one group, and its history of (wall-clock ms, total lag)."""

    group_id: str
    state: str = "Unknown"
    members: int = 0
    total_lag: int | None = None
    status: str = "-"
    partitions: list[PartitionLag] = field(default_factory=list)
    history: deque[tuple[int, int]] = field(default_factory=lambda: deque(maxlen=HISTORY))
    sampled_ms: int = 0


MetricsText = Callable[[], Awaitable[str | None]]


class LagWatch:
    """Samples every group's lag; :meth:`start` in the app's lifespan, :meth:`stop` at its end."""

    def __init__(self, gateway: KafkaGateway, interval_s: float, broker_metrics: MetricsText | None = None) -> None:
        self.gateway = gateway
        self.interval_s = interval_s
        self._broker_metrics = broker_metrics
        self.groups: dict[str, GroupLag] = {}
        self._windows: dict[tuple[str, str, int], PartitionWindow] = {}
        self._task: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()
        self.last_error: str | None = None
        self.samples = 0

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="seaway-console-lag-watch")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    def poke(self) -> None:
        """Sample now (after a reset or a delete), not at the next tick."""
        self._wake.set()

    async def _run(self) -> None:
        while True:
            try:
                await self.sample()
                self.last_error = None
            except ConsoleError as exc:
                self.last_error = exc.message
            except Exception as exc:  # the watcher must outlive any one bad sample; say why it failed
                self.last_error = f"{type(exc).__name__}: {exc}"
                _log.exception("sampling consumer group lag failed")
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self.interval_s)

    async def _broker_statuses(self) -> dict[tuple[str, str, int], str] | None:
        if self._broker_metrics is None:
            return None
        text = await self._broker_metrics()
        if text is None:
            return None
        return await asyncio.to_thread(_statuses, text)

    async def sample(self) -> None:
        """Sample every group (the background tick)."""
        listings = (await self.gateway.groups())[:MAX_GROUPS]
        ids = [g.group_id for g in listings]
        descriptions = await self.gateway.describe_groups(ids)
        limit = asyncio.Semaphore(_CONCURRENCY)

        async def committed(group: str) -> dict[tuple[str, int], int]:
            async with limit:
                try:
                    return await self.gateway.committed(group)
                except ConsoleError:
                    return {}

        commits = dict(zip(ids, await asyncio.gather(*(committed(g) for g in ids)), strict=True))
        owners = {g: _owners(d) for g, d in descriptions.items()}
        partitions = {key for c in commits.values() for key in c} | {key for o in owners.values() for key in o}
        ends = await self.gateway.offsets(partitions, "latest")
        broker = await self._broker_statuses()
        now_ms = int(time.time() * 1000)
        for listing in listings:
            desc = descriptions.get(listing.group_id)
            self._apply(listing.group_id, listing.state, len(getattr(desc, "members", None) or []),
                        commits.get(listing.group_id, {}), owners.get(listing.group_id, {}), ends, broker, now_ms)
        for gone in set(self.groups) - set(ids):
            self.forget(gone)
        self.samples += 1

    async def sample_group(self, group: str, state: str, desc: object) -> GroupLag:
        """Sample one group now (its page): fresh offsets, added to its trend."""
        commits = await self.gateway.committed(group)
        owned = _owners(desc)
        ends = await self.gateway.offsets(set(commits) | set(owned), "latest")
        broker = await self._broker_statuses()
        return self._apply(group, state, len(getattr(desc, "members", None) or []), commits, owned, ends, broker,
                           int(time.time() * 1000))

    def forget(self, group: str) -> None:
        self.groups.pop(group, None)
        for key in [k for k in self._windows if k[0] == group]:
            del self._windows[key]

    def _apply(self, group: str, state: str, members: int, commits: dict[tuple[str, int], int],
               owners: dict[tuple[str, int], str], ends: dict[tuple[str, int], int],
               broker: dict[tuple[str, str, int], str] | None, now_ms: int) -> GroupLag:
        entry = self.groups.setdefault(group, GroupLag(group))
        entry.state, entry.members = state, members
        rows: list[PartitionLag] = []
        for topic, partition in sorted(set(commits) | set(owners)):
            offset, end = commits.get((topic, partition)), ends.get((topic, partition))
            window = self._windows.setdefault((group, topic, partition), PartitionWindow(WINDOW, 0))
            if offset is not None:
                window.add_commit(offset, now_ms, end)
            owner = owners.get((topic, partition))
            status = self._status(window, offset, end, owner, now_ms)
            if broker is not None and (group, topic, partition) in broker and status not in ("-", "OK"):
                status = broker[(group, topic, partition)]
            rows.append(PartitionLag(topic, partition, offset, end, owner, status))
        entry.partitions = rows
        lags = [r.lag for r in rows if r.lag is not None]
        entry.total_lag = sum(max(0, lag) for lag in lags) if lags else None
        statuses = [LagStatus(r.status) for r in rows if r.status in LagStatus.__members__]
        entry.status = group_status(statuses).value if statuses else "-"
        entry.sampled_ms = now_ms
        if entry.total_lag is not None:
            entry.history.append((now_ms, entry.total_lag))
        return entry

    @staticmethod
    def _status(window: PartitionWindow, offset: int | None, end: int | None, owner: str | None, now_ms: int) -> str:
        """``seaway groups describe``'s STATUS over the watcher's observations."""
        lag = offset_lag(offset, end)
        if lag is None:
            return "-"
        if lag <= 0:
            return LagStatus.OK.value
        if owner is None:
            return LagStatus.STOPPED.value
        if len(window.offsets) < 2:
            return LagStatus.OK.value
        return window.evaluate(now_ms).status.value


def _owners(desc: object) -> dict[tuple[str, int], str]:
    """(topic, partition) -> the client id of the member it is assigned to."""
    owned: dict[tuple[str, int], str] = {}
    for member in getattr(desc, "members", None) or []:
        assignment = getattr(member, "assignment", None)
        for tp in (assignment.topic_partitions if assignment else None) or []:
            owned[(tp.topic, tp.partition)] = member.client_id or member.member_id
    return owned


def _statuses(text: str) -> dict[tuple[str, str, int], str]:
    """The brokers' ``kafka_consumergroup_partition_status`` samples: (group, topic, partition) -> status."""
    out: dict[tuple[str, str, int], str] = {}
    for s in parse_families(text, ("kafka_consumergroup_partition_status",)):
        if s.value and {"consumergroup", "topic", "partition", "status"} <= s.labels.keys():
            try:
                key = (s.labels["consumergroup"], s.labels["topic"], int(s.labels["partition"]))
                out[key] = s.labels["status"].upper()
            except ValueError:
                continue
    return out
