"""Zombie fencing (KIP-618): old task generations cannot commit, and ``PUT /connectors/{c}/fence``.

* A worker frozen with SIGSTOP while its exactly-once task has a transaction open loses the
  task to the other worker; thawed, the zombie's commit is refused by the broker (its
  producer was fenced when the new instance initialised the same transactional id): the
  topic holds every count once, in order, and the zombie logs that it was fenced.
* A new generation of task configs fences every producer of the previous one before any of
  its tasks starts: an open transaction under an old task's transactional id is aborted and
  its producer can no longer commit; ``tasks-fencing-<c>`` records the new task count.
* ``/fence`` by hand: signed (KIP-507) 204 and the same effect; unsigned 400, a wrong
  signature 403, an unknown connector 404, a sink connector 400 (Kafka's codes); a follower
  forwards it to the leader.
"""

from __future__ import annotations

import signal
import uuid
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import KafkaException, Producer

from tests.connect.distributed.dist_support import WorkerProcess, dump_logs, start_all, wait_for, wait_settled
from tests.connect.exactly_once.eos_support import (
    EOS_CONNECTORS,
    Broker,
    StableEnd,
    config_records,
    create_internal_topics,
    create_topic,
    eos_worker_props,
    freeze_inside_a_transaction,
    read_values,
    session_key,
    signed,
)

COUNTER = f"{EOS_CONNECTORS}.CounterSource"


def _statuses(worker: WorkerProcess, name: str) -> dict[str, Any]:
    reply = worker.get(f"/connectors/{name}/status")
    return reply.json() if reply.status_code == 200 else {}


def _task_owner(worker: WorkerProcess, name: str, task: int = 0) -> str | None:
    """The worker id running ``name``'s task, once it is RUNNING."""
    tasks = _statuses(worker, name).get("tasks") or []
    for t in tasks:
        if t["id"] == task and t["state"] == "RUNNING":
            return str(t["worker_id"])
    return None


def _counts(values: list[bytes]) -> list[int]:
    return [int(v) for v in values]


def _zombie(bootstrap: str, transactional_id: str, topic: str) -> Producer:
    """A producer holding ``transactional_id`` with an open transaction that wrote b"zombie" (flushed)."""
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": transactional_id})
    producer.init_transactions(30)
    producer.begin_transaction()
    producer.produce(topic, b"zombie", partition=0)
    assert producer.flush(30) == 0
    return producer


def _fenced(producer: Producer) -> bool:
    try:
        producer.commit_transaction(30)
    except KafkaException as e:
        return bool(e.args[0].fatal()) and "fenced" in str(e).lower()
    return False


@pytest.mark.timeout(240)
def test_a_task_of_an_old_generation_cannot_commit_after_a_rebalance(eos_broker: Broker, broker_kind: str,
                                                                      tmp_path: Path) -> None:
    bootstrap = eos_broker.bootstrap
    topic = f"eos-counts-{uuid.uuid4().hex[:8]}"
    create_topic(bootstrap, topic)
    group = f"eos-zombie-{uuid.uuid4().hex[:8]}"
    props = [eos_worker_props(bootstrap, group) for _ in range(2)]
    if broker_kind == "kafka":
        create_internal_topics(bootstrap, props[0])
    workers = [WorkerProcess(tmp_path / f"w{i}", p) for i, p in enumerate(props)]
    start_all(workers)
    zombie: WorkerProcess | None = None
    try:
        leader = wait_settled(workers)
        reply = leader.request("PUT", "/connectors/counts/config", json={
            "connector.class": COUNTER, "topic": topic, "tasks.max": "1", "batch": "20", "interval.ms": "10",
            "transaction.boundary": "interval", "transaction.boundary.interval.ms": "400",
            "exactly.once.support": "required"})
        assert reply.status_code == 201, reply.text
        owner_id = wait_for(lambda: _task_owner(leader, "counts"), 60, what="the task to run")
        zombie = next(w for w in workers if w.worker_id == owner_id)
        survivor = next(w for w in workers if w is not zombie)
        lso = StableEnd(bootstrap, topic)
        high = StableEnd(bootstrap, topic, isolation="read_uncommitted")
        try:
            wait_for(lambda: lso() > 200, 60, what="the task to commit a few transactions")
            assert freeze_inside_a_transaction(zombie, lso, high, 60), "no open transaction with records seen in 60 s"
            assert zombie.proc is not None
            wait_for(lambda: _task_owner(survivor, "counts") == survivor.worker_id, 60,
                     what="the task to move to the other worker")
            moved_at = lso()
            wait_for(lambda: lso() > moved_at + 100, 60, what="the new instance to commit")
            zombie.proc.send_signal(signal.SIGCONT)
            wait_for(lambda: any("was fenced out" in line for line in zombie.output), 60,
                     what="the zombie's commit to be refused (fenced)")
            written = lso()
            wait_for(lambda: lso() > written + 100, 60, what="the new instance to go on committing")
        finally:
            lso.close()
            high.close()
        assert survivor.request("PUT", "/connectors/counts/stop").status_code == 204
        wait_for(lambda: not _statuses(survivor, "counts").get("tasks"), 60, what="the connector to stop")
        counts = _counts(read_values(bootstrap, topic))
        assert counts == list(range(len(counts))), "a count is missing, repeated or out of order"
        assert len(counts) > 300
        everything = read_values(bootstrap, topic, isolation="read_uncommitted")
        assert len(everything) > len(counts), "the zombie's open transaction should be in the log, aborted"
    except BaseException:
        dump_logs(workers, 80)
        raise
    finally:
        for w in workers:
            if w.proc is not None and w.alive:
                w.proc.send_signal(signal.SIGCONT)
            w.stop()


@pytest.mark.timeout(240)
def test_a_new_generation_fences_the_old_one_and_the_fence_endpoint(eos_broker: Broker, broker_kind: str,
                                                                   tmp_path: Path) -> None:
    bootstrap = eos_broker.bootstrap
    topic = f"eos-gen-{uuid.uuid4().hex[:8]}"
    create_topic(bootstrap, topic, partitions=2)
    group = f"eos-fence-{uuid.uuid4().hex[:8]}"
    props = [eos_worker_props(bootstrap, group) for _ in range(2)]
    if broker_kind == "kafka":
        create_internal_topics(bootstrap, props[0])
    workers = [WorkerProcess(tmp_path / f"w{i}", p) for i, p in enumerate(props)]
    start_all(workers)
    configs = props[0]["config.storage.topic"]
    try:
        leader = wait_settled(workers)
        follower = next(w for w in workers if w is not leader)
        reply = leader.request("PUT", "/connectors/gen/config", json={
            "connector.class": COUNTER, "topic": topic, "tasks.max": "2", "batch": "10", "interval.ms": "50"})
        assert reply.status_code == 201, reply.text
        wait_for(lambda: _task_owner(leader, "gen", 0) and _task_owner(leader, "gen", 1), 60,
                 what="both tasks to run")
        records = config_records(bootstrap, configs)
        assert ("tasks-fencing-gen", {"task-count": 2}) in records, records

        # a new generation: stop (zero tasks), a zombie with task 1's transactional id, resume
        assert leader.request("PUT", "/connectors/gen/stop").status_code == 204
        wait_for(lambda: not _statuses(leader, "gen").get("tasks"), 60, what="the tasks to stop")
        old = _zombie(bootstrap, f"{group}-gen-1", topic)
        assert leader.request("PUT", "/connectors/gen/resume").status_code == 202
        wait_for(lambda: _task_owner(leader, "gen", 0) and _task_owner(leader, "gen", 1), 60,
                 what="the new generation to run")
        assert _fenced(old), "the old generation's producer could still commit"

        # /fence by hand, through the follower (forwarded to the leader), signed with the session key
        assert leader.request("PUT", "/connectors/gen/stop").status_code == 204
        wait_for(lambda: not _statuses(leader, "gen").get("tasks"), 60, what="the tasks to stop again")
        old = _zombie(bootstrap, f"{group}-gen-0", topic)
        unsigned = follower.request("PUT", "/connectors/gen/fence")
        assert unsigned.status_code == 400, unsigned.text
        assert unsigned.json()["message"] == "Internal request missing required signature"
        key = session_key(bootstrap, configs)
        forged = follower.request("PUT", "/connectors/gen/fence", headers=signed(b"not the key"))
        assert forged.status_code == 403, forged.text
        assert follower.request("PUT", "/connectors/nope/fence", headers=signed(key)).status_code == 404
        fenced = follower.request("PUT", "/connectors/gen/fence", headers=signed(key))
        assert fenced.status_code == 204, fenced.text
        assert _fenced(old), "/fence left the old producer able to commit"
        counts = [v for k, v in config_records(bootstrap, configs) if k == "tasks-fencing-gen"]
        assert counts[-1] == {"task-count": 0}, counts
        assert leader.request("PUT", "/connectors/gen/fence", headers=signed(key)).status_code == 204  # nothing pending

        sink = leader.request("PUT", "/connectors/sink/config", json={
            "connector.class": "FileStreamSink", "file": str(tmp_path / "sink.txt"), "topics": topic})
        assert sink.status_code == 201, sink.text
        not_source = leader.request("PUT", "/connectors/sink/fence", headers=signed(key))
        assert not_source.status_code == 400 and "is not a source connector" in not_source.json()["message"]

        values = read_values(bootstrap, topic) + read_values(bootstrap, topic, partition=1)
        assert b"zombie" not in values
    except BaseException:
        dump_logs(workers, 80)
        raise
    finally:
        for w in workers:
            w.stop()
