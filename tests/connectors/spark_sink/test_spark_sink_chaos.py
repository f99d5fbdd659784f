"""Crash safety with real worker processes (``seaway connect standalone``) killed with SIGKILL.

The worker and its Spark JVM form one process group; killing the group is a machine dying.
"""

from __future__ import annotations

import os
import random
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.connectors.spark_sink import lake_check
from tests.connectors.spark_sink.lake_worker import FAST_JVM, Worker
from tests.support.broker import BrokerProcess

BROKER = {"group.min.session.timeout.ms": "1000", "group.initial.rebalance.delay.ms": "0"}


def connector(topic: str, lake: Path, **extra: str) -> dict[str, str]:
    return {"name": "lake", "connector.class": "SparkParquetSink", "tasks.max": "2", "topics": topic,
            "lake.path": lake.as_uri(), "flush.size": "700", "rotate.schedule.interval.ms": "2000",
            "include.kafka.metadata": "true", "spark.master": "local[2]",
            "spark.conf.spark.driver.extraJavaOptions": FAST_JVM, "spark.conf.spark.ui.enabled": "false",
            "consumer.override.session.timeout.ms": "2000", "consumer.override.heartbeat.interval.ms": "500",
            **extra}


KILLS = int(os.environ.get("SEAWAY_SPARK_SINK_CHAOS_KILLS", "10"))


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_sigkill_ten_times_while_records_flow(spark: Any, tmp_path: Path) -> None:
    seed = int(os.environ.get("SEAWAY_CHAOS_SEED", time.time_ns() % 1_000_000))
    rng = random.Random(seed)
    print(f"chaos seed {seed}")
    topic, partitions, lake = "chaos", 6, tmp_path / "lake"
    with BrokerProcess(tmp_path / "broker", BROKER) as broker:
        lake_check.create_topic(broker.bootstrap, topic, partitions)
        lake_check.produce_json(broker.bootstrap, topic, 0, 3000, partitions)
        produced = [3000]
        flowing = threading.Event()
        flowing.set()

        def produce() -> None:
            while flowing.is_set():
                lake_check.produce_json(broker.bootstrap, topic, produced[0], 100, partitions)
                produced[0] += 100
                time.sleep(0.5)

        producer = threading.Thread(target=produce, daemon=True)
        producer.start()
        kills_while_writing = 0
        try:
            for n in range(KILLS):
                worker = Worker(tmp_path, broker.bootstrap, connector(topic, lake), n)
                try:
                    # even runs die while files are landing, odd ones at any moment after assignment
                    ready = worker.wait_for("Landed" if n % 2 == 0 else "lake offset", 120)
                    time.sleep(rng.uniform(0.0, 2.5) if n % 2 == 0 else rng.uniform(0.5, 5.0))
                    assert worker.proc.poll() is None, worker.output()[-3000:]
                    kills_while_writing += ready and "Landed" in worker.output()
                finally:
                    worker.kill()
        finally:
            flowing.clear()
            producer.join(30)
        ends = lake_check.end_offsets(broker.bootstrap, topic, partitions)
        assert sum(ends.values()) == produced[0]
        final = Worker(tmp_path, broker.bootstrap, connector(topic, lake), KILLS)
        try:
            lake_check.wait_landed(lake, topic, ends, 180)
        finally:
            final.stop()
        print(f"{produced[0]} records, {KILLS} kills ({kills_while_writing} after files had landed in that run)")
        assert kills_while_writing >= KILLS // 2
        assert lake_check.assert_lake_equals_topic(spark, lake, broker.bootstrap, topic, partitions) == produced[0]


@pytest.mark.timeout(300)
def test_fault_between_rename_and_commit_is_adopted(spark: Any, tmp_path: Path) -> None:
    topic, partitions, lake = "fault", 2, tmp_path / "lake"
    with BrokerProcess(tmp_path / "broker", BROKER) as broker:
        lake_check.create_topic(broker.bootstrap, topic, partitions)
        lake_check.produce_json(broker.bootstrap, topic, 0, 2000, partitions)
        ends = lake_check.end_offsets(broker.bootstrap, topic, partitions)
        field = {"partitioner.class": "field", "partition.field.name": "kind"}
        crashing = Worker(tmp_path, broker.bootstrap, connector(topic, lake, **field, **{
            "seaway.test.fault.exit.after.rename": "true", "tasks.max": "1"}), 0)
        try:
            assert crashing.proc.wait(120) == 77, crashing.output()[-3000:]
        finally:
            crashing.kill()
        visible = [p for p in lake.rglob("*.parquet") if "_tmp" not in p.parts]
        assert len(visible) == 1  # one file of a three-file set, made visible, not committed
        pending = list((lake / "_commits").rglob("pending-*.json"))
        assert len(pending) == 1 and not list((lake / "_commits").rglob("commit-*.json"))
        inode = visible[0].stat().st_ino
        worker = Worker(tmp_path, broker.bootstrap, connector(topic, lake, **field), 1)
        try:
            lake_check.wait_landed(lake, topic, ends, 150)
        finally:
            worker.stop()
        assert visible[0].stat().st_ino == inode  # adopted as it was, not rewritten
        assert "adopted file set" in worker.output()
        assert lake_check.assert_lake_equals_topic(spark, lake, broker.bootstrap, topic, partitions) == 2000
        assert not any((lake / "_tmp").rglob("*.parquet"))
