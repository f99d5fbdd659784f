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
import os
import shutil
import tempfile
import threading
from collections.abc import Mapping
from concurrent.futures import Future
from pathlib import Path
from typing import Any

__all__ = ["shared_session", "start_session_async", "wait_warmed"]

log = logging.getLogger(__name__)
_lock = threading.Lock()
_session: Any = None
_warmed = threading.Event()
#: The warm-up: rounds of the sink's write path, each this many rows (~4 MB of Arrow).
WARM_UP_ROUNDS = 4
WARM_UP_ROWS = 20_000

#: Settings the sink relies on; a ``spark.conf.*`` of the same name wins.
#: ``localRelationThreshold`` 0: below it (48 MB by default) ``createDataFrame(arrow_table)``
#: turns every row into a JVM object on the driver's py4j thread and ships the rows inside the
#: tasks, which costs several times the Parquet write (mostly GC); at 0 the Arrow batches go to
#: the executors as bytes and are read there, columnar, in parallel.
DEFAULTS = {
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.sql.execution.arrow.localRelationThreshold": "0",
    "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
    "spark.sql.sources.partitionOverwriteMode": "static",
}
#: Set only when this module builds the session. The two committer settings skip Hadoop's
#: second rename pass and the ``_SUCCESS`` marker of each job: the sink writes into its own
#: staging folder and makes files visible with its own commit protocol (writer.py), so
#: Spark's job commit protects nothing here; they save ~10-20% of a small job's time.
#: The JVM gets the throughput collector with GC threads for half the cores: the driver shares
#: the machine with the worker's Python task threads, and G1's default GC threads on every core
#: took CPU from them while a write ran (bench/lake_sink.py on 2 cores: 107-121k -> 122-133k
#: records/s). ``spark.conf.spark.driver.extraJavaOptions`` replaces this.
_BUILD_ONLY = {"spark.ui.enabled": "false", "spark.ui.showConsoleProgress": "false",
               "spark.sql.shuffle.partitions": "2",
               "spark.hadoop.mapreduce.fileoutputcommitter.algorithm.version": "2",
               "spark.hadoop.mapreduce.fileoutputcommitter.marksuccessfuljobs": "false",
               "spark.driver.extraJavaOptions":
                   f"-XX:+UseParallelGC -XX:ParallelGCThreads={max(1, (os.cpu_count() or 2) // 2)}"}


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
            _warmed.clear()
            threading.Thread(target=_warm_up, args=(active,), name="spark-warm-up", daemon=True).start()
        else:
            log.info("Using the running SparkSession (master %s)", active.sparkContext.master)
            _warmed.set()
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
    """Run the sink's own write path (:func:`~.writer.spark_write`) a few times on made-up rows.

    A fresh JVM interprets the Arrow -> row -> Parquet code and compiles it as it gets hot:
    the first real writes then cost seconds of JIT compilation each (measured: a 25,000-row
    write took ~9 s in a fresh JVM, ~0.6 s warm). Doing it here, in the background while the
    consumer joins its group, moves that cost off the first file sets.
    """
    from seaway.connectors.spark_sink.writer import spark_write

    folder = tempfile.mkdtemp(prefix="seaway-spark-warmup-")
    try:
        table = _warm_up_table(WARM_UP_ROWS)
        for i in range(WARM_UP_ROUNDS):
            spark_write(spark, table, f"{Path(folder).as_uri()}/{i}", "snappy")
    except Exception as e:
        log.warning("Spark warm-up job failed: %s", e)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        _warmed.set()


def _warm_up_table(rows: int) -> Any:
    """Rows with the column types records usually have (and two output files, as a real write)."""
    import datetime
    import decimal

    import pyarrow as pa
    from seaway.connectors.spark_sink.writer import FILE_COLUMN

    ids = list(range(rows))
    text = [f"{i:08d}" + "x" * (i % 100) for i in ids]
    return pa.table({
        "id": pa.array(ids, pa.int64()), "n": pa.array([i % 1000 for i in ids], pa.int32()),
        "small": pa.array([i % 100 for i in ids], pa.int16()), "tiny": pa.array([i % 100 for i in ids], pa.int8()),
        "x": pa.array([i * 0.5 for i in ids], pa.float64()), "f": pa.array([i * 0.25 for i in ids], pa.float32()),
        "ok": pa.array([i % 2 == 0 for i in ids], pa.bool_()),
        "kind": pa.array([("a", "b", "c")[i % 3] for i in ids], pa.string()),
        "text": pa.array([None if i % 7 == 0 else t for i, t in zip(ids, text, strict=True)], pa.string()),
        "blob": pa.array([t.encode() for t in text], pa.binary()),
        "at": pa.array([1_700_000_000_000 + i for i in ids], pa.int64()).cast(pa.timestamp("ms", tz="UTC")),
        "day": pa.array([datetime.date(2024, 1, 1 + i % 28) for i in ids], pa.date32()),
        "price": pa.array([decimal.Decimal(i) / 100 for i in ids], pa.decimal128(12, 2)),
        "tags": pa.array([[i, i + 1] for i in ids], pa.list_(pa.int64())),
        "attrs": pa.array([[("k", t)] for t in text], pa.map_(pa.string(), pa.string())),
        "inner": pa.array([{"a": i, "b": t} for i, t in zip(ids, text, strict=True)],
                          pa.struct([("a", pa.int64()), ("b", pa.string())])),
        FILE_COLUMN: pa.array([i * 2 // rows for i in ids], pa.int32()),
    })


def wait_warmed(timeout: float | None = None) -> bool:
    """Whether the warm-up of the session this process started has finished (waiting up to ``timeout``).

    True at once when no warm-up was started (an adopted session). For benchmarks that want
    a worker's steady state, and for tests; tasks never wait for it.
    """
    if _session is None:
        return True
    return _warmed.wait(timeout)


def _is_stopped(session: Any) -> bool:
    try:
        return bool(session.sparkContext._jsc is None)
    except Exception:
        return True
