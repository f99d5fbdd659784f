"""Three confluent-kafka consumer processes in one group: spread, failover, no loss,
cooperative-sticky, and a static member that restarts without a rebalance."""

from __future__ import annotations

import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from confluent_kafka import KafkaError, Message, Producer
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]  # re-exported without __all__

from tests.support.broker import BrokerProcess

pytestmark = pytest.mark.timeout(180)

WORKER = Path(__file__).with_name("grouptest_worker.py")
SESSION_MS = 6000
STATIC_SESSION_MS = 10000  # the restarted static member's join must land inside it, on a loaded box too
PARTITIONS = 6


@pytest.fixture(scope="module")
def gbroker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    overrides = {"group.initial.rebalance.delay.ms": "1000", "group.min.session.timeout.ms": "1000",
                 "offsets.topic.num.partitions": "5"}
    with BrokerProcess(tmp_path_factory.mktemp("groups-confluent"), overrides) as broker:
        yield broker


class Worker:
    def __init__(self, broker: BrokerProcess, topic: str, group: str, out: Path, **opts: str) -> None:
        self.out = out
        self.args = [sys.executable, str(WORKER), "--bootstrap", broker.bootstrap, "--topic", topic,
                     "--group", group, "--out", str(out)]
        for k, v in opts.items():
            self.args += [f"--{k.replace('_', '-')}", v]
        self.proc = subprocess.Popen(self.args)

    def spare(self) -> subprocess.Popen[bytes]:
        """The same worker started up to its join, once it is waiting for :meth:`take_over`.

        A loaded 2-core box can take seconds to start an interpreter and import the client;
        done beforehand, they are no longer inside the window a restart is timed against.
        """
        spare = subprocess.Popen([*self.args, "--wait-stdin"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert spare.stdout is not None
        with spare.stdout:  # the worker writes nothing else there
            assert spare.stdout.readline() == b"ready\n"
        return spare

    def take_over(self, spare: subprocess.Popen[bytes]) -> None:
        """``spare`` joins now and is this worker's process from here on."""
        assert spare.stdin is not None
        spare.stdin.close()  # end of file: the worker stops waiting and joins
        self.proc = spare

    def lines(self) -> list[str]:
        return self.out.read_text().splitlines() if self.out.exists() else []

    def events(self) -> list[str]:
        return [ln for ln in self.lines() if not ln.startswith(("R ", "E "))]

    def commit_errors(self) -> list[str]:
        return [ln for ln in self.lines() if ln.startswith("E ")]

    def assignment(self) -> set[int]:
        owned: set[int] = set()
        for ln in self.events():
            kind, _, parts = ln.partition(" ")
            ps = {int(p) for p in parts.split(",") if p}
            owned = owned | ps if kind == "ASSIGN" else owned - ps
        return owned

    def consumed(self) -> list[tuple[int, int]]:
        out = []
        for ln in self.lines():
            if ln.startswith("R "):
                _, p, o = ln.split()
                out.append((int(p), int(o)))
        return out

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@pytest.fixture
def workers() -> Iterator[list[Worker]]:
    started: list[Worker] = []
    yield started
    for w in started:
        if w.proc.poll() is None:
            w.proc.kill()
            w.proc.wait()


def wait_for(cond: Callable[[], bool], timeout: float, what: str) -> float:
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if cond():
            return time.monotonic() - start
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


def make_topic(broker: BrokerProcess) -> str:
    topic = f"t-{uuid.uuid4().hex[:10]}"
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic(topic, PARTITIONS, 1)])[topic].result(10)
    return topic


def produce(broker: BrokerProcess, topic: str, count: int, produced: set[tuple[int, int]]) -> None:
    p = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 5})

    def done(err: KafkaError | None, msg: Message) -> None:
        assert err is None, err
        partition, offset = msg.partition(), msg.offset()
        assert partition is not None and offset is not None
        produced.add((partition, offset))

    for i in range(count):
        p.produce(topic, value=b"v%d" % i, partition=i % PARTITIONS, on_delivery=done)
        if i % 1000 == 0:
            p.poll(0)
    assert p.flush(20) == 0


def spread_evenly(ws: list[Worker]) -> bool:
    parts = [w.assignment() for w in ws]
    return all(len(p) == PARTITIONS // len(ws) for p in parts) and len(set().union(*parts)) == PARTITIONS


def test_failover_after_sigkill_loses_nothing(gbroker: BrokerProcess, workers: list[Worker], tmp_path: Path) -> None:
    topic, group = make_topic(gbroker), f"g-{uuid.uuid4().hex[:8]}"
    produced: set[tuple[int, int]] = set()
    produce(gbroker, topic, 3000, produced)
    workers += [Worker(gbroker, topic, group, tmp_path / f"w{i}.txt", session_ms=str(SESSION_MS)) for i in range(3)]
    wait_for(lambda: spread_evenly(workers), 60, "a 2/2/2 spread")
    wait_for(lambda: len({r for w in workers for r in w.consumed()}) >= 1000, 60, "consumption to start")

    victim, survivors = workers[0], workers[1:]
    victim.proc.kill()
    victim.proc.wait()
    killed_at = time.monotonic()
    produce(gbroker, topic, 1200, produced)
    # The bound only limits how long a failure takes: a broker that never expired the dead
    # member would leave the survivors 2/2 for the 300 s max.poll.interval.ms (no rebalance).
    wait_for(lambda: spread_evenly(survivors), SESSION_MS / 1000 + 60, "the survivors to take over")
    print(f"partitions reassigned {time.monotonic() - killed_at:.1f}s after the SIGKILL")

    wait_for(lambda: {r for w in workers for r in w.consumed()} >= produced, 60, "every record to be consumed")
    seen = [r for w in workers for r in w.consumed()]
    assert set(seen) == produced  # nothing lost, nothing invented; re-reads allowed
    for w in survivors:
        w.stop()


def test_cooperative_sticky_keeps_owned_partitions(gbroker: BrokerProcess, workers: list[Worker],
                                                   tmp_path: Path) -> None:
    topic, group = make_topic(gbroker), f"g-{uuid.uuid4().hex[:8]}"
    workers += [Worker(gbroker, topic, group, tmp_path / f"c{i}.txt", strategy="cooperative-sticky")
                for i in range(3)]
    wait_for(lambda: spread_evenly(workers), 60, "a 2/2/2 cooperative spread")
    before = {id(w): (w.assignment(), len(w.events())) for w in workers[1:]}
    workers[0].stop()  # a clean leave
    wait_for(lambda: spread_evenly(workers[1:]), 60, "the survivors to take over")
    for w in workers[1:]:
        owned, seen = before[id(w)]
        later = w.events()[seen:]
        assert later and all(e.startswith("ASSIGN") for e in later), later  # incremental, no revocation
        assert owned < w.assignment()
    for w in workers[1:]:
        w.stop()


def test_static_member_restart_keeps_partitions(gbroker: BrokerProcess, workers: list[Worker],
                                                tmp_path: Path) -> None:
    topic, group = make_topic(gbroker), f"g-{uuid.uuid4().hex[:8]}"
    workers += [Worker(gbroker, topic, group, tmp_path / f"s{i}.txt", instance=f"inst-{i}",
                       session_ms=str(STATIC_SESSION_MS)) for i in range(3)]
    wait_for(lambda: spread_evenly(workers), 60, "a 2/2/2 spread of static members")
    others = {id(w): len(w.events()) for w in (workers[0], workers[2])}
    member = workers[1]
    owned = member.assignment()
    # The restart must rejoin before the old session runs out (else the broker rightly
    # rebalances); started beforehand, only the join itself is left inside that window.
    spare = member.spare()
    try:
        member.proc.kill()
        member.proc.wait()
        killed_at = time.monotonic()
        member.out.write_text("")  # the restarted process starts a fresh event log
        member.take_over(spare)
    finally:
        if member.proc is not spare:
            spare.kill()
            spare.wait()
            if spare.stdin is not None:
                spare.stdin.close()
    wait_for(lambda: member.assignment() == owned, 30, "the restarted static member to get its partitions back")
    # Stay past the old session's deadline: still no rebalance for anybody.
    time.sleep(max(0.0, killed_at + STATIC_SESSION_MS / 1000 + 1.5 - time.monotonic()))
    for w in (workers[0], workers[2]):
        assert len(w.events()) == others[id(w)], w.events()
    assert member.events() == [f"ASSIGN {','.join(str(p) for p in sorted(owned))}"]
    for w in workers:
        w.stop()
