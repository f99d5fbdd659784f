"""Issue 20's proof: kill -9 of a worker running an exactly-once FileStreamSource, 10 times, mid-file.

One distributed worker (``exactly.once.source.support=enabled``) reads a 1,000,000-line file
into a one-partition topic. Ten times, once the worker (re)started and its committed records
passed the next of ten kill points spread over the first half of the file (the k-th at k/20 of
the lines, plus a random part of a fortieth), it is frozen with SIGSTOP at once, and killed with
SIGKILL inside an open transaction (if the freeze did not land inside one, it is thawed and frozen
again the moment one is open: see ``freeze_inside_a_transaction``), then started again on the
same config; the last run reads the rest. The kill points are positions in the topic, not
instants, and each kill is checked to leave part of the file unread (the source offsets the next
run resumes from, read from the offsets topic while no worker runs): a worker restarted on a quiet
machine reads hundreds of thousands of lines a second, and CI saw one read the last third of the
file between passing the 8th kill point and its kill when the points spanned 10/12 of the file
and the freeze came up to 0.1 s (plus two watermark queries) later. At the end the topic, read
with ``read_committed``, must hold every line exactly once and in order; read uncommitted, it
must hold more (the aborted transactions of the killed workers), which shows the kills did land
inside transactions. The offsets the task resumed from were written in the same transactions as
the records, so a crash can neither lose a line nor repeat one.

It runs on Seaway's broker only: against Apache Kafka 4.3.1 it passes too (80-90 s), which
the suite's time budget does not afford; run it there by changing the parametrization. With
``exactly.once.source.support=disabled`` the same loop left 552,885 duplicates (checked once by hand).
"""

from __future__ import annotations

import random
import signal
import time
import uuid
from pathlib import Path

import pytest

from tests.connect.distributed.dist_support import WorkerProcess, dump_logs, wait_for, wait_settled
from tests.connect.exactly_once.eos_support import (
    Broker,
    StableEnd,
    create_topic,
    eos_worker_props,
    freeze_inside_a_transaction,
    lines,
    read_values,
    source_offsets,
    start_worker,
    write_lines,
)

LINES = 1_000_000
KILLS = 10


def kill_point(kill: int) -> int:
    """The last stable offset the ``kill``-th run (from 0) must pass before it is killed: the k-th
    of ``KILLS`` points spread over the first half of the file, so even the last run leaves half
    of it (500,000 lines) between its kill and the end."""
    return (kill + 1) * LINES // (2 * KILLS)


def _stop_once_past(worker: WorkerProcess, lso: StableEnd, point: int, within: float) -> None:
    """SIGSTOP ``worker`` the moment its committed records pass ``point`` (no sleep in between:
    a restarted worker reads ~10,000 lines in the time of one watermark query)."""
    assert worker.proc is not None
    deadline = time.monotonic() + within
    while lso() <= point:
        assert time.monotonic() < deadline, f"the worker did not commit records past offset {point} in {within} s"
    worker.proc.send_signal(signal.SIGSTOP)


def _kill_inside_a_transaction(worker: WorkerProcess, lso: StableEnd, high: StableEnd) -> None:
    """Kill the stopped ``worker``, inside an open transaction when it holds one (records in the
    log above the last stable offset), else thawed and frozen again the moment one is open."""
    assert worker.proc is not None
    time.sleep(0.3)  # an EndTxn in flight at the freeze lands
    if high() <= lso():
        worker.proc.send_signal(signal.SIGCONT)
        freeze_inside_a_transaction(worker, lso, high, 5)  # after 5 s, killed wherever it is
    worker.kill()


def _position(worker: WorkerProcess) -> int:
    """The file position in the connector's committed offsets (GET /connectors/{c}/offsets)."""
    offsets = worker.get("/connectors/lines/offsets").json()["offsets"]
    return int(offsets[0]["offset"]["position"]) if offsets else 0


@pytest.mark.parametrize("eos_broker", ["seaway"], indirect=True)  # Apache Kafka: by hand (see the docstring)
@pytest.mark.timeout(420)
def test_kill9_ten_times_while_reading_a_file_every_line_once_in_order(eos_broker: Broker, broker_kind: str,
                                                                       tmp_path: Path) -> None:
    bootstrap = eos_broker.bootstrap
    topic = f"eos-lines-{uuid.uuid4().hex[:8]}"
    create_topic(bootstrap, topic)
    source = tmp_path / "input.txt"
    write_lines(source, LINES)
    props = eos_worker_props(bootstrap, f"eos-kill-{uuid.uuid4().hex[:8]}")
    worker = start_worker(tmp_path / "worker", props, broker_kind)
    workers = [worker]
    rng = random.Random(20)
    try:
        wait_settled([worker])
        reply = worker.request("PUT", "/connectors/lines/config", json={
            "connector.class": "FileStreamSource", "file": str(source), "topic": topic,
            "exactly.once.support": "required", "tasks.max": "1"})
        assert reply.status_code == 201, reply.text
        size = source.stat().st_size
        lso = StableEnd(bootstrap, topic)
        high = StableEnd(bootstrap, topic, isolation="read_uncommitted")
        try:
            for kill in range(KILLS):
                # past the kill point: the run has committed transactions of its own (each run resumes
                # below the next point: its predecessor was killed just past the previous one)
                point = max(kill_point(kill), lso()) + rng.randrange(LINES // (4 * KILLS))
                _stop_once_past(worker, lso, point, 180)
                _kill_inside_a_transaction(worker, lso, high)
                # what the next run resumes from (read with no worker running): short of the end of
                # the file, or this kill landed after the work and the loop proves less. (The topic's
                # offsets count aborted records and markers too, so they cannot tell.)
                resumed_from = source_offsets(bootstrap, props["offset.storage.topic"], "lines")[-1]["position"]
                assert resumed_from < size, f"run {kill + 1} read the whole file before its kill"
                worker = WorkerProcess(tmp_path / "worker", props).start()
                workers.append(worker)
        finally:
            lso.close()
            high.close()
        wait_for(lambda: _position(worker) == size, 180, 0.2, "the last run to reach the end of the file")
        committed = read_values(bootstrap, topic)
        if committed != lines(LINES):
            seen = set(committed)
            missing = sum(1 for line in lines(LINES) if line not in seen)
            pytest.fail(f"read_committed holds {len(committed)} records for {LINES} lines: {missing} missing, "
                        f"{len(committed) - len(seen)} duplicated, in order: {committed == sorted(committed)}")
        everything = read_values(bootstrap, topic, isolation="read_uncommitted")
        assert len(everything) > LINES, "no kill landed inside a transaction: the test proved nothing"
        assert worker.get("/connectors/lines/status").json()["tasks"][0]["state"] == "RUNNING"
    except BaseException:
        dump_logs(workers[-2:], 60)
        raise
    finally:
        worker.stop()
