"""One SparkSession per worker process, shared by every task of the sink.

A JVM with Spark takes 10-20 s and hundreds of MB to start, so tasks never own one: the
first task to need Spark builds it (``spark.master`` and ``spark.conf.*`` of *that* task
apply), later tasks get the same session. A session that is already running in the process
(e.g. one a test or an embedding application made) is adopted as it is; then only runtime
SQL settings from ``spark.conf.*`` are applied and static ones are ignored with a warning.
The session is never stopped by a task: it lives as long as the worker process.

:func:`start_session_async` lets a task start the JVM in the background while the consumer
joins its group (both take seconds), and wait for it only when it first needs the lake.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
import threading
from collections.abc import Mapping
from concurrent.futures import Future
from pathlib import Path
from typing import Any

__all__ = ["shared_session", "start_session_async"]

log = logging.getLogger(__name__)
_lock = threading.Lock()
_session: Any = None

#: Settings the sink relies on; a ``spark.conf.*`` of the same name wins.
DEFAULTS = {
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
    "spark.sql.sources.partitionOverwriteMode": "static",
}
_BUILD_ONLY = {"spark.ui.enabled": "false", "spark.ui.showConsoleProgress": "false",
               "spark.sql.shuffle.partitions": "2"}


def _import_spark() -> Any:
    try:
        from pyspark.sql import SparkSession
    except ImportError as e:  # pragma: no cover - the distribution depends on pyspark
        raise ImportError("The Spark sink needs pyspark: pip install seaway-connector-spark-sink") from e
    return SparkSession


def shared_session(master: str = "local[*]", conf: Mapping[str, str] | None = None) -> Any:
    """The process's SparkSession, built on first use (thread-safe)."""
    global _session
    conf = dict(conf or {})
    with _lock:
        spark_session = _import_spark()
        if _session is not None and not _is_stopped(_session):
            return _session
        active = spark_session.getActiveSession()
        if active is None:
            builder = spark_session.builder.master(master).appName("seaway-spark-sink")
            for key, value in {**_BUILD_ONLY, **DEFAULTS, **conf}.items():
                builder = builder.config(key, value)
            active = builder.getOrCreate()
            log.info("Started SparkSession (master %s)", active.sparkContext.master)
            threading.Thread(target=_warm_up, args=(active,), name="spark-warm-up", daemon=True).start()
        else:
            log.info("Using the running SparkSession (master %s)", active.sparkContext.master)
        for key, value in {**DEFAULTS, **conf}.items():
            try:
                if active.conf.get(key, None) != value:
                    active.conf.set(key, value)
            except Exception as e:
                log.warning("Ignoring spark.conf %s=%s on the running SparkSession: %s", key, value, e)
        _session = active
        return active


def start_session_async(master: str, conf: Mapping[str, str]) -> Future[Any]:
    """:func:`shared_session` on a daemon thread; the future holds the session."""
    future: Future[Any] = Future()

    def run() -> None:
        try:
            future.set_result(shared_session(master, conf))
        except BaseException as e:
            future.set_exception(e)

    threading.Thread(target=run, name="spark-session-start", daemon=True).start()
    return future


def _warm_up(spark: Any) -> None:
    """One tiny Arrow -> Parquet job, so class loading and JIT of the write path happen now
    (in the background while the consumer joins) rather than in the first real write."""
    import pyarrow as pa

    folder = tempfile.mkdtemp(prefix="seaway-spark-warmup-")
    try:
        spark.createDataFrame(pa.table({"x": pa.array([1], pa.int64())})).write.mode("overwrite") \
            .parquet(Path(folder).as_uri() + "/out")
    except Exception as e:
        log.warning("Spark warm-up job failed: %s", e)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _is_stopped(session: Any) -> bool:
    try:
        return bool(session.sparkContext._jsc is None)
    except Exception:
        return True
