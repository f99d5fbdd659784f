"""The incremental cooperative assignor (KIP-415) and the eager one, driven round by round."""

from __future__ import annotations

from seaway.connect.runtime.distributed.assignor import (
    IncrementalCooperativeAssignor,
    MemberAllocation,
    Work,
    eager_assign,
)
from seaway.connect.runtime.distributed.connect_protocol import ExtendedAssignment
from seaway.connect.runtime.herder import ConnectorTaskId

T = ConnectorTaskId


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Cluster:
    """Plays the members: each reports what it holds; applies assignments like a worker does."""

    def __init__(self, connectors: dict[str, int], max_delay_ms: int = 0) -> None:
        self.clock = Clock()
        self.assignor = IncrementalCooperativeAssignor(max_delay_ms, self.clock)
        self.connectors = connectors
        self.held: dict[str, Work] = {}
        self.generation = 0
        self.last: dict[str, ExtendedAssignment] = {}

    def join(self, *members: str) -> None:
        for m in members:
            self.held.setdefault(m, Work())

    def kill(self, member: str) -> None:
        del self.held[member]

    def rebalance(self) -> dict[str, ExtendedAssignment]:
        self.generation += 1
        tasks = [T(c, i) for c, n in self.connectors.items() for i in range(n)]
        members = {m: MemberAllocation(m, f"http://{m}", frozenset(w.connectors), frozenset(w.tasks))
                   for m, w in self.held.items()}
        out = self.assignor.assign(leader=min(self.held), leader_url="u", config_offset=1, version=1,
                                   connectors=list(self.connectors), tasks=tasks, members=members,
                                   last_completed_generation=self.generation - 1, generation=self.generation)
        for m, a in out.items():
            w = self.held[m]
            w.connectors = (w.connectors - set(a.revoked_connectors)) | set(a.connectors)
            w.tasks = (w.tasks - set(a.revoked_tasks)) | set(a.tasks)
        self.last = out
        return out

    def counts(self) -> dict[str, tuple[int, int]]:
        return {m: (len(w.connectors), len(w.tasks)) for m, w in sorted(self.held.items())}

    def everything_once(self) -> bool:
        connectors = [c for w in self.held.values() for c in w.connectors]
        tasks = [t for w in self.held.values() for t in w.tasks]
        expected = {T(c, i) for c, n in self.connectors.items() for i in range(n)}
        return sorted(connectors) == sorted(self.connectors) and sorted(tasks) == sorted(expected)


def test_fresh_group_spreads_connectors_and_tasks_evenly() -> None:
    c = Cluster({"a": 3, "b": 3})
    c.join("w1", "w2", "w3")
    out = c.rebalance()
    assert c.everything_once()
    assert sorted(n for _, n in c.counts().values()) == [2, 2, 2]
    assert sorted(n for n, _ in c.counts().values()) == [0, 1, 1]
    assert all(a.delay == 0 and not a.revoked_tasks for a in out.values())


def test_lost_worker_waits_for_the_delay_then_its_work_is_reassigned() -> None:
    c = Cluster({"a": 3, "b": 3}, max_delay_ms=5000)
    c.join("w1", "w2", "w3")
    c.rebalance()
    lost = c.held["w3"].copy()
    c.kill("w3")
    out = c.rebalance()
    assert all(a.delay == 5000 for a in out.values())
    assert not any(set(a.tasks) & lost.tasks for a in out.values())  # nobody gets it yet
    c.clock.now += 2.0
    out = c.rebalance()  # a rebalance during the wait announces the remaining time
    assert all(a.delay == 3000 for a in out.values())
    c.clock.now += 3.5
    out = c.rebalance()
    assert all(a.delay == 0 for a in out.values())
    assert c.everything_once()
    assert sum(n for _, n in c.counts().values()) == 6


def test_worker_returning_within_the_delay_gets_the_lost_work() -> None:
    c = Cluster({"a": 2, "b": 2}, max_delay_ms=5000)
    c.join("w1", "w2", "w3")
    c.rebalance()
    lost = c.held["w3"].copy()
    c.kill("w3")
    c.rebalance()
    c.join("w3-again")  # a new member id, empty: becomes a candidate
    out = c.rebalance()
    assert out["w3-again"].delay > 0 and not out["w3-again"].tasks
    c.clock.now += 6
    out = c.rebalance()
    assert set(out["w3-again"].tasks) == lost.tasks
    assert set(out["w3-again"].connectors) == lost.connectors
    assert c.everything_once()


def test_no_delay_configured_reassigns_lost_work_at_once() -> None:
    c = Cluster({"a": 4}, max_delay_ms=0)
    c.join("w1", "w2")
    c.rebalance()
    c.kill("w2")
    out = c.rebalance()
    assert out["w1"].delay == 0
    assert c.everything_once() and c.counts() == {"w1": (1, 4)}


def test_new_worker_triggers_revocations_then_a_second_round_hands_them_out() -> None:
    c = Cluster({"a": 6})
    c.join("w1", "w2")
    c.rebalance()
    assert sorted(n for _, n in c.counts().values()) == [3, 3]
    c.join("w3")
    out = c.rebalance()
    revoked = [t for a in out.values() for t in a.revoked_tasks]
    assert len(revoked) == 2 and not out["w3"].tasks
    out = c.rebalance()  # the revoking members rejoin at once
    assert sorted(out["w3"].tasks) == sorted(revoked)
    assert all(not a.revoked_tasks for a in out.values())
    assert c.everything_once() and sorted(n for _, n in c.counts().values()) == [2, 2, 2]
    out = c.rebalance()  # balanced: nothing moves any more
    assert all(not a.tasks and not a.revoked_tasks and not a.connectors for a in out.values())


def test_deleted_connector_is_revoked_from_its_holder() -> None:
    c = Cluster({"a": 2, "b": 2})
    c.join("w1", "w2")
    c.rebalance()
    holder = next(m for m, w in c.held.items() if "b" in w.connectors)
    del c.connectors["b"]
    out = c.rebalance()
    assert out[holder].revoked_connectors == ("b",)
    assert {t.connector for a in out.values() for t in a.revoked_tasks} == {"b"}
    assert c.everything_once()


def test_duplicated_work_is_revoked_from_every_holder_then_reassigned_once() -> None:
    c = Cluster({"a": 2})
    c.join("w1", "w2")
    c.rebalance()
    c.held["w1"].tasks.add(T("a", 0))
    c.held["w2"].tasks.add(T("a", 0))
    out = c.rebalance()
    assert T("a", 0) in out["w1"].revoked_tasks and T("a", 0) in out["w2"].revoked_tasks
    c.rebalance()
    assert c.everything_once()


def test_successive_revocations_back_off_instead_of_revoking_again() -> None:
    c = Cluster({"a": 6}, max_delay_ms=5000)
    c.join("w1", "w2")
    c.rebalance()
    c.join("w3")
    out = c.rebalance()  # revokes
    for m, a in out.items():  # members that ignore their revocations keep the group unbalanced
        c.held[m].tasks |= set(a.revoked_tasks)
    out = c.rebalance()
    assert all(a.delay == 1 for a in out.values())  # 1 ms x 40^0
    assert not any(a.revoked_tasks for a in out.values())
    out = c.rebalance()  # the next round revokes again...
    assert any(a.revoked_tasks for a in out.values())
    for m, a in out.items():
        c.held[m].tasks |= set(a.revoked_tasks)
    out = c.rebalance()  # ... and the backoff grows: 1 ms x 40^1
    assert all(a.delay == 40 for a in out.values())


def test_eager_round_robin_connectors_then_tasks() -> None:
    shares = eager_assign(["b", "a"], [T("a", 1), T("a", 0), T("b", 0)], ["m2", "m1"])
    assert shares["m1"].connectors == {"a"} and shares["m2"].connectors == {"b"}
    # the circular iterator continues after the connectors: a-0 -> m1, a-1 -> m2, b-0 -> m1
    assert shares["m1"].tasks == {T("a", 0), T("b", 0)} and shares["m2"].tasks == {T("a", 1)}
