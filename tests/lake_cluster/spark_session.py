"""The SparkSession the lake tests read and write with: one per test process, with an event log and s3a.

Both Spark sink fixture modules (``tests/connectors/spark_sink`` and ``connectors/spark-sink/tests``)
build it through :func:`shared_test_session`, so whichever runs first builds the same session:

* ``local[2]``, the UI off, a 1 GB driver;
* Spark's **event log** in a folder of the test session (uncompressed, one file), which is how a
  test sees the jobs Spark ran (:func:`jobs`), e.g. that the sink's writes are Spark jobs;
* ``hadoop-aws`` on the class path when its jars are fetched (scripts/test.sh fetches them;
  ``mvn`` on the PATH fetches them here), so the process can read ``s3a://`` lakes.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.lake_cluster.jars import S3A, s3a_jars

__all__ = ["event_log", "jobs", "shared_test_session"]

def shared_test_session(events: Path) -> Any:
    """The process's shared session (built on first call; later calls get the same one)."""
    from seaway.connectors.spark_sink import shared_session

    events.mkdir(parents=True, exist_ok=True)
    conf = {"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "2", "spark.ui.showConsoleProgress": "false",
            "spark.driver.memory": "1g", "spark.eventLog.enabled": "true", "spark.eventLog.dir": events.as_uri(),
            "spark.eventLog.compress": "false", "spark.eventLog.rolling.enabled": "false"}
    if S3A.ready() or shutil.which("mvn"):
        conf["spark.jars"] = ",".join(s3a_jars())
    session = shared_session("local[2]", conf)
    session.sparkContext.setLogLevel("ERROR")
    return session


def event_log(spark: Any) -> Path:
    """The session's event log file (``<application id>.inprogress`` until the session stops)."""
    folder = Path(str(spark.sparkContext.getConf().get("spark.eventLog.dir")).removeprefix("file:"))
    running = folder / f"{spark.sparkContext.applicationId}.inprogress"
    return running if running.exists() else folder / str(spark.sparkContext.applicationId)


def jobs(log: Path) -> Iterator[dict[str, Any]]:
    """``SparkListenerJobStart`` events of an event log file, with their tasks' executors added.

    Each job is ``{"id", "description", "executors": {executor id, ...}}``; ``"driver"`` is the
    driver's own JVM (local mode), anything else an executor of a cluster.
    """
    started: dict[int, dict[str, Any]] = {}
    stage_job: dict[int, int] = {}
    with log.open(encoding="utf-8") as events:
        for line in events:
            event = json.loads(line)
            kind = event.get("Event")
            if kind == "SparkListenerJobStart":
                job = {"id": event["Job ID"], "executors": set(),
                       "description": (event.get("Properties") or {}).get("spark.job.description") or ""}
                started[event["Job ID"]] = job
                for stage in event.get("Stage IDs", ()):
                    stage_job[stage] = event["Job ID"]
            elif kind == "SparkListenerTaskEnd" and event.get("Stage ID") in stage_job:
                started[stage_job[event["Stage ID"]]]["executors"].add(event["Task Info"]["Executor ID"])
    yield from started.values()
