"""One SparkSession per worker process, shared by every task of the sink.

A JVM with Spark takes 10-20 s and hundreds of MB to start, so tasks never own one: the
first task to need Spark builds it (``spark.master`` and ``spark.conf.*`` of *that* task
apply), later tasks get the same session. A session that is already running in the process
(e.g. one a test or an embedding application made) is adopted as it is; then only runtime
SQL settings from ``spark.conf.*`` are applied and static ones are ignored with a warning.

Tasks hold the session while they run (:func:`acquire_session_async` in ``start``,
:func:`release_session` in ``stop``). When the last holder lets go, the session, and the JVM
it runs in (~800 MB), is stopped after ``spark.session.idle.timeout.ms`` (default a minute:
a connector restart or reconfiguration, which stops and starts its tasks within seconds, keeps
the warm JVM); a task that starts meanwhile cancels the stop, and one that starts later starts
a new JVM. A session this module did not build (adopted), or one an application asked for
through :func:`shared_session`, is never stopped here: its owner stops it.

:func:`acquire_session_async` lets a task start the JVM in the background while the consumer
joins its group (both take seconds), and wait for it only when it first needs the lake.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
import threading
import uuid
from collections.abc import Mapping
from concurrent.futures import Future
from pathlib import Path
from typing import Any

__all__ = ["acquire_session_async", "jvm_pid", "release_session", "shared_session", "start_session_async",
           "wait_warmed"]

log = logging.getLogger(__name__)
_lock = threading.Lock()  # building and stopping the session: _session, _owned
_state = threading.Lock()  # who holds it: _holders, _idle_timeout_ms, _idle_stop (never held for long)
_session: Any = None
_warmed = threading.Event()
_holders = 0  # tasks holding the session (acquire_session_async without release_session yet)
_owned = False  # this module built the session (not adopted) and no application pinned it
_idle_timeout_ms = 60_000  # of the task that released last
_idle_stop: threading.Timer | None = None
#: How long an idle stop waits for the warm-up job to finish before stopping the session anyway.
WARM_UP_WAIT_S = 60.0
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
    """The process's SparkSession, built on first use (thread-safe); never stopped when idle.

    For applications and tests that use the session themselves; tasks use
    :func:`acquire_session_async` so that the JVM goes away when no task needs it.
    """
    return _get_or_build(master, conf, pin=True)


def _get_or_build(master: str, conf: Mapping[str, str] | None, *, pin: bool, warm_up_in: str | None = None) -> Any:
    """The session (built if none runs); ``pin``: an application's, never stopped when idle."""
    global _session, _owned
    conf = dict(conf or {})
    with _lock:
        spark_session = _import_spark()
        if _session is not None and not _is_stopped(_session):
            _owned = _owned and not pin
            return _session
        active = spark_session.getActiveSession()
        if active is None:
            builder = spark_session.builder.master(master).appName("seaway-spark-sink")
            for key, value in {**_BUILD_ONLY, **DEFAULTS, **conf}.items():
                builder = builder.config(key, value)
            active = builder.getOrCreate()
            _owned = not pin
            log.info("Started SparkSession (master %s)", active.sparkContext.master)
            _warmed.clear()
            threading.Thread(target=_warm_up, args=(active, warm_up_in), name="spark-warm-up", daemon=True).start()
        else:
            log.info("Using the running SparkSession (master %s)", active.sparkContext.master)
            _owned = False
            _warmed.set()
        for key, value in {**DEFAULTS, **conf}.items():
            try:
                if active.conf.get(key, None) != value:
                    active.conf.set(key, value)
            except Exception as e:
                log.warning("Ignoring spark.conf %s=%s on the running SparkSession: %s", key, value, e)
        _session = active
    with _state:
        if _holders == 0:  # every holder let go while it started: it is idle already
            _schedule_idle_stop()
    return active


def start_session_async(master: str, conf: Mapping[str, str]) -> Future[Any]:
    """:func:`shared_session` on a daemon thread; the future holds the session."""
    return _in_thread(lambda: shared_session(master, conf))


def acquire_session_async(master: str, conf: Mapping[str, str], warm_up_in: str | None = None) -> Future[Any]:
    """Hold the process's session (built on a daemon thread if none runs); the future holds it.

    Every call needs one :func:`release_session` (a task: ``start`` / ``stop``). ``warm_up_in``: a
    folder URI the warm-up jobs of a new session write into (the task's lake, so that on a cluster
    the executors write where they can: a folder on the worker's own disk may not exist for them).
    """
    global _holders, _idle_stop
    with _state:
        _holders += 1
        if _idle_stop is not None:
            _idle_stop.cancel()
            _idle_stop = None
    return _in_thread(lambda: _get_or_build(master, conf, pin=False, warm_up_in=warm_up_in))


def release_session(idle_timeout_ms: int) -> None:
    """Let go of the session; the last holder's ``idle_timeout_ms`` (-1: never) schedules its stop."""
    global _holders, _idle_timeout_ms
    with _state:
        _holders = max(0, _holders - 1)
        _idle_timeout_ms = idle_timeout_ms
        if _holders == 0:
            _schedule_idle_stop()


def _schedule_idle_stop() -> None:
    """(Re)start the idle timer; with ``_state`` held. A session still being built schedules it when built."""
    global _idle_stop
    if _session is None or not _owned or _idle_timeout_ms < 0:
        return
    if _idle_stop is not None:
        _idle_stop.cancel()
    _idle_stop = threading.Timer(_idle_timeout_ms / 1000, _stop_if_idle)
    _idle_stop.name, _idle_stop.daemon = "spark-session-idle-stop", True
    log.info("No Spark sink task uses the SparkSession: stopping it in %d ms unless one starts", _idle_timeout_ms)
    _idle_stop.start()


def _stop_if_idle() -> None:
    """Timer thread: stop the session and its JVM if still nobody holds it."""
    global _session, _idle_stop
    _warmed.wait(WARM_UP_WAIT_S)  # a warm-up job still running would fail noisily
    with _lock:
        with _state:
            if _holders > 0 or threading.current_thread() is not _idle_stop:
                return  # a task took it again (or a newer timer took over)
            _idle_stop = None
        if _session is None or not _owned:
            return
        session, _session = _session, None
        pid = jvm_pid()
        try:
            session.stop()
        except Exception as e:
            log.warning("Stopping the idle SparkSession failed: %s", e)
        _stop_gateway()
        log.info("Stopped the idle SparkSession and its JVM (pid %s)", pid)


def _stop_gateway() -> None:
    """End the py4j gateway JVM (PySpark keeps it after ``SparkSession.stop()``) so its memory is freed.

    Spark's gateway process exits when its stdin reaches EOF; the next session launches a new one.
    """
    from pyspark import SparkContext

    # PySpark keeps its py4j gateway and JVM view in private class attributes, with no public API to end them
    gateway = SparkContext._gateway  # noqa: SLF001 - see above
    if gateway is None:
        return
    proc = getattr(gateway, "proc", None)
    try:
        gateway.shutdown()
    except Exception as e:
        log.debug("py4j gateway shutdown: %s", e)
    # cleared, so that the next session launches a new gateway (PySpark reuses a non-None one)
    SparkContext._gateway = None  # noqa: SLF001 - see above
    SparkContext._jvm = None  # noqa: SLF001 - see above
    if proc is None:
        return
    try:
        if proc.stdin is not None:
            proc.stdin.close()
        proc.wait(30)
    except Exception as e:  # TimeoutExpired or a pipe error: make sure it goes
        log.warning("The Spark JVM did not exit on its own (%s): killing it", e)
        proc.kill()
        proc.wait()


def jvm_pid() -> int | None:
    """The pid of the Spark JVM this process launched, if one runs (for operators and tests)."""
    try:
        from pyspark import SparkContext
    except ImportError:
        return None
    proc = getattr(SparkContext._gateway, "proc", None)  # noqa: SLF001 - PySpark's py4j gateway (no public API)
    return None if proc is None or proc.poll() is not None else int(proc.pid)


def _in_thread(build: Any) -> Future[Any]:
    future: Future[Any] = Future()

    def run() -> None:
        try:
            future.set_result(build())
        except BaseException as e:
            future.set_exception(e)

    threading.Thread(target=run, name="spark-session-start", daemon=True).start()
    return future


def _warm_up(spark: Any, folder_uri: str | None = None) -> None:
    """Run the sink's own write path (:func:`~.writer.spark_write`) a few times on made-up rows.

    A fresh JVM interprets the Arrow -> row -> Parquet code and compiles it as it gets hot:
    the first real writes then cost seconds of JIT compilation each (measured: a 25,000-row
    write took ~9 s in a fresh JVM, ~0.6 s warm). Doing it here, in the background while the
    consumer joins its group, moves that cost off the first file sets; on a cluster it also
    starts the executors. The jobs write into ``<folder_uri>/_warmup-<uuid>`` (a temp folder
    of the worker's disk when none is given), deleted afterwards.
    """
    from seaway.connectors.spark_sink.writer import spark_write

    local = tempfile.mkdtemp(prefix="seaway-spark-warmup-") if folder_uri is None else None
    root = Path(local).as_uri() if local is not None else f"{folder_uri}/_warmup-{uuid.uuid4().hex}"
    try:
        table = _warm_up_table(WARM_UP_ROWS)
        half = WARM_UP_ROWS // 2
        for i in range(WARM_UP_ROUNDS):  # two output files per job, as a real write has several
            spark_write(spark, [table.slice(0, half), table.slice(half)], f"{root}/{i}", "snappy", "warm-up")
    except Exception as e:
        log.warning("Spark warm-up job failed: %s", e)
    finally:
        if local is not None:
            shutil.rmtree(local, ignore_errors=True)
        else:
            _delete_folder(spark, root)
        _warmed.set()


def _delete_folder(spark: Any, uri: str) -> None:
    try:
        path = spark._jvm.org.apache.hadoop.fs.Path(uri)  # noqa: SLF001 - PySpark's py4j JVM view (no public API)
        hadoop_conf = spark._jsc.hadoopConfiguration()  # noqa: SLF001 - PySpark's Java SparkContext (no public API)
        path.getFileSystem(hadoop_conf).delete(path, True)
    except Exception as e:
        log.warning("Could not delete the warm-up folder %s: %s", uri, e)


def _warm_up_table(rows: int) -> Any:
    """Rows with the column types records usually have."""
    import datetime
    import decimal

    import pyarrow as pa

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
        # SparkContext.stop() clears its Java context; PySpark has no public "stopped" flag
        return bool(session.sparkContext._jsc is None)  # noqa: SLF001 - see above
    except Exception:
        return True
