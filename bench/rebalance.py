"""Distributed Connect: failover time after kill -9, and create-to-RUNNING time, on 3 worker processes.

Run from the repository root::

    .venv/bin/python bench/rebalance.py [--session-ms 3000] [--delay-ms 2000] [--heartbeat-ms 300] [--creates 3]

Starts a broker and three ``seaway connect distributed`` workers on loopback, then measures:

- ``create -> RUNNING``: from ``POST /connectors`` (to a follower) of a FileStreamSink with
  ``tasks.max=6`` until the connector and its 6 tasks are RUNNING, spread over the 3 workers.
  The path: leader writes the config, rebalance, owner starts the connector, task configs
  published (signed POST to the leader if the owner is a follower), second rebalance, tasks
  start. Target: <= 2 s.
- ``failover``: from SIGKILL of a follower that runs tasks until all of its connectors and
  tasks are RUNNING on the other workers. The floor is ``session.timeout.ms`` (the
  coordinator notices the death) + ``scheduled.rebalance.max.delay.ms`` (the leader waits
  for the worker to come back). Target: <= floor + 2 s.

The figures are printed next to the configured timeouts, the floor they cannot beat.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # for tests.support
    sys.path.insert(0, str(ROOT))

from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]  # noqa: E402

from tests.connect.distributed.dist_support import (  # noqa: E402
    BROKER_OVERRIDES,
    WorkerProcess,
    free_port,
    start_all,
    wait_for,
    worker_properties,
)
from tests.support.broker import BrokerProcess  # noqa: E402


def _placements(worker: WorkerProcess, name: str, tasks: int) -> list[tuple[str, str, str]] | None:
    response = worker.get(f"/connectors/{name}/status")
    if response.status_code != 200:
        return None
    status = response.json()
    if len(status["tasks"]) != tasks:
        return None
    out = [(name, status["connector"]["state"], status["connector"]["worker_id"])]
    out += [(f"{name}-{t['id']}", t["state"], t["worker_id"]) for t in status["tasks"]]
    return out


def _running(worker: WorkerProcess, names: list[str], tasks: int, avoid: str | None = None) -> Any:
    everything = []
    for name in names:
        placed = _placements(worker, name, tasks)
        if placed is None:
            return None
        everything += placed
    ok = all(state == "RUNNING" and wid != avoid for _, state, wid in everything)
    return everything if ok else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--session-ms", type=int, default=3000)
    parser.add_argument("--delay-ms", type=int, default=2000)
    parser.add_argument("--heartbeat-ms", type=int, default=300)
    parser.add_argument("--creates", type=int, default=3)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="seaway-bench-rebalance-"))
    with BrokerProcess(tmp / "broker", overrides=BROKER_OVERRIDES) as broker:
        group = f"bench-{uuid.uuid4().hex[:6]}"
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        admin.create_topics([NewTopic(f"{group}-in", 6, 1)])[f"{group}-in"].result(30)
        workers = [WorkerProcess(tmp / f"w{i}", worker_properties(
            broker.bootstrap, free_port(), group, session_ms=args.session_ms, heartbeat_ms=args.heartbeat_ms,
            delay_ms=args.delay_ms)) for i in range(3)]
        start_all(workers)
        try:
            wait_for(lambda: sum(w.is_leader() for w in workers) == 1, 30, what="a leader")
            time.sleep(1.0)  # let the group settle after the three joins
            follower = next(w for w in workers if not w.is_leader())
            creates, names = [], []
            for i in range(args.creates):
                name = f"sink{i}"
                started = time.monotonic()
                response = follower.request("POST", "/connectors", json={"name": name, "config": {
                    "connector.class": "FileStreamSink", "file": str(tmp / f"{name}.txt"),
                    "topics": f"{group}-in", "tasks.max": "6"}})
                assert response.status_code == 201, response.text
                placed = wait_for(lambda n=name: _running(follower, [n], 6), 30, interval=0.01,
                                  what=f"{name} RUNNING")
                creates.append(time.monotonic() - started)
                names.append(name)
                spread = len({wid for _, _, wid in placed})
                print(f"create -> RUNNING ({name}, 6 tasks over {spread} workers): {creates[-1]:.2f} s")
                time.sleep(1.0)
            placed = wait_for(lambda: _running(follower, names, 6), 30, what="all RUNNING")
            victim = next(w for w in workers if not w.is_leader() and w is not follower
                          and any(wid == w.worker_id for _, _, wid in placed))
            held = [item for item, _, wid in placed if wid == victim.worker_id]
            time.sleep(1.0)
            victim.kill()
            killed = time.monotonic()
            wait_for(lambda: _running(follower, names, 6, avoid=victim.worker_id), 60, interval=0.01,
                     what="failover")
            failover = time.monotonic() - killed
        finally:
            for w in workers:
                w.kill()
    floor = (args.session_ms + args.delay_ms) / 1000
    print()
    print(f"configured: session.timeout.ms={args.session_ms} scheduled.rebalance.max.delay.ms={args.delay_ms} "
          f"heartbeat.interval.ms={args.heartbeat_ms}")
    print(f"create -> RUNNING (6 tasks, 3 workers): median {statistics.median(creates):.2f} s, "
          f"best {min(creates):.2f} s   target <= 2.00 s")
    print(f"failover after kill -9 ({len(held)} items: {', '.join(held)}): {failover:.2f} s   "
          f"floor {floor:.2f} s (session + delay), target <= {floor + 2:.2f} s, "
          f"above the floor by {failover - floor:+.2f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
