"""Exactly once through crashes: a streaming query topic -> Parquet, SIGKILLed three times while records flow.

The query runs in a process group of its own (stream_child.py: driver, JVM, Python workers);
each round waits until the restarted query has committed a new micro-batch, then kills the
whole group at a moment inside the next one. Records keep arriving throughout. A last run with
``Trigger.AvailableNow`` drains the topic; Spark's file sink log (``_spark_metadata``) decides
which files are the output, and it must hold every record of the topic exactly once.
"""

from __future__ import annotations

import contextlib
import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.connectors.spark_source.source_support import create_topic, end_offsets, produce, unique_topic
from tests.support.broker import BrokerProcess

KILLS = 3
PARTITIONS = 3
RATE = 500  # records/s while the query is killed and restarted


def commits(checkpoint: Path) -> int:
    folder = checkpoint / "commits"
    return sum(1 for p in folder.iterdir() if p.name.isdigit()) if folder.is_dir() else 0


class Flow:
    """Records numbered from 0, to partition i % 3, about RATE a second, until stopped."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        self.bootstrap, self.topic = bootstrap, topic
        self.sent = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="flow", daemon=True)
        self.error: BaseException | None = None

    def _records(self) -> Any:
        started = time.monotonic()
        while not self._stop.is_set():
            due = int((time.monotonic() - started) * RATE)
            while self.sent < due:
                yield {"topic": self.topic, "value": b"%d" % self.sent, "partition": self.sent % PARTITIONS}
                self.sent += 1
            time.sleep(0.02)

    def _run(self) -> None:
        try:
            produce(self.bootstrap, self._records(), {"linger.ms": 5})
        except BaseException as e:
            self.error = e

    def __enter__(self) -> Flow:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join(60)


def start_child(bootstrap: str, topic: str, out: Path, checkpoint: Path, log: Path, *extra: str) -> Any:
    with log.open("a") as sink:
        return subprocess.Popen([sys.executable, "-m", "tests.connectors.spark_source.stream_child", bootstrap, topic,
                                 str(out), str(checkpoint), *extra], stdout=sink, stderr=subprocess.STDOUT,
                                start_new_session=True, env={**os.environ, "PYSPARK_PYTHON": sys.executable})


def kill_group(proc: Any) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(30)


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_killed_three_times_every_record_lands_once(spark: Any, shared_broker: BrokerProcess, tmp_path: Path) -> None:
    bootstrap, topic = shared_broker.bootstrap, unique_topic("killed")
    create_topic(bootstrap, topic, PARTITIONS)
    out, checkpoint, log = tmp_path / "out", tmp_path / "checkpoint", tmp_path / "child.log"
    rng = random.Random(29)
    with Flow(bootstrap, topic) as flow:
        for round_ in range(KILLS):
            before = commits(checkpoint)
            child = start_child(bootstrap, topic, out, checkpoint, log)
            try:
                deadline = time.monotonic() + 240
                while commits(checkpoint) <= before:  # the restarted query committed a batch of its own
                    assert child.poll() is None, f"the query died by itself:\n{log.read_text()[-3000:]}"
                    assert time.monotonic() < deadline, f"no batch committed:\n{log.read_text()[-3000:]}"
                    time.sleep(0.1)
                time.sleep(rng.uniform(0.1, 1.2))  # somewhere inside the next batch
            finally:
                kill_group(child)
            print(f"round {round_}: killed after {commits(checkpoint)} committed batches, {flow.sent} records sent")
        assert flow.error is None
    total = flow.sent
    assert sum(end_offsets(bootstrap, topic, PARTITIONS).values()) == total
    final = start_child(bootstrap, topic, out, checkpoint, log, "--available-now")
    try:
        assert final.wait(300) == 0, log.read_text()[-3000:]
    finally:
        kill_group(final)
    landed = spark.read.parquet(str(out))
    rows = landed.count()
    distinct = landed.select("partition", "offset").distinct().count()
    values = {int(r["value"]) for r in landed.select("value").collect()}
    assert (rows, distinct) == (total, total), f"{rows} rows, {distinct} distinct (partition, offset), {total} sent"
    assert values == set(range(total))
    # files of batches a kill interrupted may lie in the folder too: Spark's file sink log keeps them out
    files = sum(1 for _ in out.glob("*.parquet"))
    print(f"{total} records, {commits(checkpoint)} batches, {files} files in the folder")
