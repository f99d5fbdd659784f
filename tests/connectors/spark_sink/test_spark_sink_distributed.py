"""The Spark sink on real distributed parts (issue 28): HDFS, s3a on moto's S3, a Spark standalone cluster.

Everything is the real thing on loopback, started by ``tests/lake_cluster`` and stopped by PID:
Hadoop's own NameNode and DataNode, PySpark's ``spark-class`` master and worker, moto's S3
server, a Seaway broker, and ``seaway connect standalone`` worker processes (each with its Spark
driver JVM, the Spark jobs running on the standalone cluster's executors).

* Exactly once across crashes: one worker runs two sinks of the same topic, one into an
  ``hdfs://`` lake and one into an ``s3a://`` lake, both with ``spark.master=spark://...``; while a
  producer keeps writing, the worker is SIGKILLed (with its driver JVM) ``KILLS`` times, every other
  time while files are landing, the others at a random moment after assignment, and the DataNode
  is killed under the first running sink (its HDFS writes fail and are retried) and restarted.
  Then ``spark.read.parquet`` of each lake equals the topic by (partition, offset): no duplicate,
  no gap, equal values. The driver's event log shows the sink's write jobs ran on the
  cluster's executors, not in the driver.
* A stopped NameNode: the task stays RUNNING, says why it waits, keeps its closed file sets in
  memory, and lands everything when the NameNode is back.

Sizes: ``SEAWAY_LAKE_CLUSTER_RECORDS`` (default 500,000: the issue's) and
``SEAWAY_LAKE_CLUSTER_KILLS`` (default 5); ``SEAWAY_CHAOS_SEED`` replays the random kill moments.
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from seaway.connect.runtime.herder import State
from seaway.connect.testing import EmbeddedConnect
from seaway.connectors.spark_sink import SparkParquetSinkConnector

from tests.connectors.spark_sink import lake_check
from tests.connectors.spark_sink.lake_worker import FAST_JVM, Worker
from tests.lake_cluster.hdfs import Hdfs
from tests.lake_cluster.jars import s3a_jars
from tests.lake_cluster.moto import MotoS3
from tests.lake_cluster.spark_session import jobs
from tests.lake_cluster.spark_standalone import SparkStandalone
from tests.support.broker import BrokerProcess

RECORDS = int(os.environ.get("SEAWAY_LAKE_CLUSTER_RECORDS", "500000"))
KILLS = int(os.environ.get("SEAWAY_LAKE_CLUSTER_KILLS", "5"))
PARTITIONS = 6
BROKER = {"group.min.session.timeout.ms": "1000", "group.initial.rebalance.delay.ms": "0"}
#: the retry message a task logs (and the runtime repeats) while its storage is down
RETRYING = "Could not write to "


def sink(name: str, topic: str, lake: str, extra_conf: dict[str, str], master: str = "local[2]") -> dict[str, str]:
    """A Spark sink connector's config; ``extra_conf`` goes to the session as ``spark.conf.*``."""
    return {"name": name, "connector.class": "SparkParquetSink", "tasks.max": "2", "topics": topic,
            "spark.master": master,
            "lake.path": lake, "flush.size": "20000", "rotate.schedule.interval.ms": "8000",
            "include.kafka.metadata": "true", "retry.backoff.ms": "1000",
            "consumer.override.session.timeout.ms": "6000", "consumer.override.heartbeat.interval.ms": "1000",
            **{f"spark.conf.{k}": v for k, v in extra_conf.items()}}


def session_conf(cluster: SparkStandalone, hdfs: Hdfs, s3: MotoS3, events: Path) -> dict[str, str]:
    """The worker's Spark session: the standalone cluster, HDFS and s3a clients, an event log."""
    return {**{k: v for k, v in cluster.driver_conf().items() if k != "spark.master"},
            "spark.executor.memory": "1g", "spark.driver.extraJavaOptions": FAST_JVM, "spark.ui.enabled": "false",
            "spark.jars": ",".join(s3a_jars()),
            **{f"spark.hadoop.{k}": v for k, v in {**hdfs.client_conf(), **s3.s3a_conf()}.items()},
            # fail over to the task's own retry quickly when a DataNode or the NameNode is down
            "spark.hadoop.ipc.client.connect.max.retries": "3", "spark.hadoop.dfs.client.socket-timeout": "10000",
            "spark.task.maxFailures": "2",
            "spark.eventLog.enabled": "true", "spark.eventLog.dir": events.as_uri(),
            "spark.eventLog.compress": "false", "spark.eventLog.rolling.enabled": "false"}


def read_s3a(spark: Any, s3: MotoS3) -> None:
    """Point this process's session at the moto server (the s3a client reads its settings per bucket)."""
    conf = spark._jsc.hadoopConfiguration()
    for key, value in s3.s3a_conf().items():
        conf.set(key, value)


@pytest.mark.slow
@pytest.mark.timeout(1500)
def test_hdfs_and_s3a_lakes_on_a_spark_cluster_exactly_once_across_kills_and_a_datanode_restart(
        spark: Any, hdfs: Hdfs, spark_cluster: SparkStandalone, s3: MotoS3, tmp_path: Path) -> None:
    seed = int(os.environ.get("SEAWAY_CHAOS_SEED", time.time_ns() % 1_000_000))
    rng = random.Random(seed)
    print(f"chaos seed {seed}")
    topic, bucket = "events", s3.new_bucket()
    lakes = {"hdfs": f"{hdfs.uri}/{tmp_path.name}/lake", "s3a": f"s3a://{bucket}/lake"}
    events = tmp_path / "spark-events"
    events.mkdir()
    conf = session_conf(spark_cluster, hdfs, s3, events)
    connectors = [sink(f"lake-{kind}", topic, uri, conf, spark_cluster.url) for kind, uri in lakes.items()]
    read_s3a(spark, s3)
    started = time.monotonic()
    with BrokerProcess(tmp_path / "broker", BROKER) as broker:
        lake_check.create_topic(broker.bootstrap, topic, PARTITIONS)
        # 40% before the first worker, 10% while the DataNode is down, the rest while each worker runs
        preload, outage = RECORDS * 2 // 5, RECORDS // 10
        rest = RECORDS - preload - outage
        chunks = [rest // KILLS + (1 if n < rest % KILLS else 0) for n in range(KILLS)]
        lake_check.produce_json(broker.bootstrap, topic, 0, preload, PARTITIONS)
        produced = preload
        for n in range(KILLS):
            worker = Worker(tmp_path, broker.bootstrap, connectors, n)
            producer = threading.Thread(target=lake_check.produce_json, daemon=True,
                                        args=(broker.bootstrap, topic, produced, chunks[n], PARTITIONS))
            producer.start()
            produced += chunks[n]
            try:
                # even runs die while files are landing, odd ones at any moment after assignment
                assert worker.wait_for("Landed" if n % 2 == 0 else "lake offset", 240), worker.output()[-4000:]
                if n == 0:  # a DataNode crash under a running sink, writes failing, then its restart
                    hdfs.stop_datanode(kill=True)
                    lake_check.produce_json(broker.bootstrap, topic, produced, outage, PARTITIONS)
                    produced += outage
                    retried = worker.wait_for(RETRYING + lakes["hdfs"], 120)
                    hdfs.start_datanode()
                    assert retried, worker.output()[-4000:]
                time.sleep(rng.uniform(0.0, 2.0) if n % 2 == 0 else rng.uniform(1.0, 6.0))
                assert worker.proc.poll() is None, worker.output()[-4000:]
            finally:
                worker.kill()
                producer.join(120)
        assert produced == RECORDS
        ends = lake_check.end_offsets(broker.bootstrap, topic, PARTITIONS)
        assert sum(ends.values()) == RECORDS
        final = Worker(tmp_path, broker.bootstrap, connectors, KILLS)
        try:
            for uri in lakes.values():
                lake_check.wait_landed_at(spark, uri, topic, ends, 420)
        finally:
            final.stop()
        landed = time.monotonic() - started
        assert final.proc.returncode is not None
        for kind, uri in lakes.items():
            assert lake_check.assert_table_equals_topic(spark, f"{uri}/{topic}", broker.bootstrap, topic,
                                                        PARTITIONS) == RECORDS, kind
    print(f"{RECORDS} records, {KILLS} kills, a DataNode restart; both lakes complete {landed:.0f} s after the start")
    # the sink's jobs ran on the standalone cluster's executors, never in the driver's JVM
    writes = [job for log in events.iterdir() for job in jobs(log) if job["description"].startswith(
        "seaway spark sink:") and "warm-up" not in job["description"] and job["executors"]]  # (a killed one has none)
    assert len(writes) > KILLS and all("driver" not in job["executors"] for job in writes), writes[:3]


@pytest.mark.timeout(600)
async def test_a_stopped_namenode_is_retried_and_nothing_is_lost(
        spark: Any, hdfs: Hdfs, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """The NameNode goes away under a running sink: RUNNING, a message naming the cause, then every record."""
    topic, partitions, count = "outage", 2, 6000
    lake = f"{hdfs.uri}/{tmp_path.name}/lake"
    caplog.set_level(logging.WARNING)
    caplog.set_level(logging.INFO, logger="seaway.connectors.lake.task")
    with BrokerProcess(tmp_path / "broker", BROKER) as broker:
        lake_check.create_topic(broker.bootstrap, topic, partitions)
        lake_check.produce_json(broker.bootstrap, topic, 0, count // 2, partitions)
        async with EmbeddedConnect(broker.bootstrap, tmp_path, plugins=[SparkParquetSinkConnector], worker_props={
                "value.converter": "org.apache.kafka.connect.json.JsonConverter",
                "value.converter.schemas.enable": "true"}) as connect:
            config = sink("outage-lake", topic, lake, {})
            config.update({"flush.size": "500", "rotate.schedule.interval.ms": "-1", "tasks.max": "1"})
            await connect.create_connector("outage-lake", config)
            await connect.wait_for_running("outage-lake", tasks=1, timeout=120)
            first = dict.fromkeys(range(partitions), count // 2 // partitions)
            await asyncio.to_thread(lake_check.wait_landed_at, spark, lake, topic, first, 120)
            hdfs.stop_namenode()
            try:
                lake_check.produce_json(broker.bootstrap, topic, count // 2, count // 2, partitions)
                deadline = time.monotonic() + 180
                while RETRYING + lake not in caplog.text and time.monotonic() < deadline:
                    await asyncio.sleep(0.5)
                assert RETRYING + lake in caplog.text, caplog.text[-3000:]
                status = await connect.herder.connector_status("outage-lake")
                assert [t.state for t in status.tasks] == [State.RUNNING]
                # e.g. "Could not write to hdfs://127.0.0.1:<port>/.../lake: java.net.ConnectException: Call From
                # ... to localhost:<port> failed on connection exception ...; 4 closed file sets (2000 records) wait
                # in memory; retrying every 1000 ms (retry.backoff.ms), from where the lake's commit log ends"
                # (the write that was running when it stopped may first say java.io.EOFException)
                refused = "java.net.ConnectException"
                while not any(refused in r.getMessage() for r in caplog.records) and time.monotonic() < deadline:
                    await asyncio.sleep(0.5)
                messages = [r.getMessage() for r in caplog.records if RETRYING + lake in r.getMessage()]
                assert any(refused in m and "Connection refused" in m for m in messages), messages
                assert all("closed file sets" in m and "retry.backoff.ms" in m for m in messages), messages
            finally:
                hdfs.start_namenode()
                hdfs.wait_datanode(120)
            ends = lake_check.end_offsets(broker.bootstrap, topic, partitions)
            await asyncio.to_thread(lake_check.wait_landed_at, spark, lake, topic, ends, 240)
            status = await connect.herder.connector_status("outage-lake")
            assert [t.state for t in status.tasks] == [State.RUNNING]
        assert "works again after" in caplog.text
        assert lake_check.assert_table_equals_topic(spark, f"{lake}/{topic}", broker.bootstrap, topic,
                                                    partitions) == count
