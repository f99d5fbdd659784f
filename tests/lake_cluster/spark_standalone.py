"""A Spark standalone cluster on loopback: PySpark's own ``spark-class`` master and one worker, stopped by PID.

The same jars the sink's driver runs (the pip-installed pyspark's ``jars/``), so a driver in a
Connect worker and the executors this worker launches agree on every class. The master and the
worker are ``org.apache.spark.deploy.master.Master`` and ``...deploy.worker.Worker`` started
through ``pyspark/bin/spark-class`` (which ``exec``\\ s the JVM: the PID is the JVM's), each in
its own session with its log and PID file in the cluster's folder::

    <folder>/spark.json                  the master's ports (chosen free once, kept for restarts)
    <folder>/master.{pid,log}, worker.{pid,log}
    <folder>/work/                       the worker's folder: one per application, with each
                                         executor's stdout/stderr

Readiness comes from the master's JSON status page (``/json/``: one ALIVE worker). Executors of
an application whose driver dies (a Connect worker killed with SIGKILL) are killed by the worker
as soon as the master sees the driver's connection drop, which frees the cores for the next one.

By hand: ``python -m tests.lake_cluster spark start /tmp/spark`` prints the master URL;
``... spark stop /tmp/spark`` stops both.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from tests.lake_cluster.daemon import Daemon, free_port, http_json, wait_until

__all__ = ["MASTER", "WORKER", "SparkStandalone", "spark_home"]

MASTER = "org.apache.spark.deploy.master.Master"
WORKER = "org.apache.spark.deploy.worker.Worker"
#: the daemons only schedule; executors get the application's own settings
DAEMON_ENV = {"SPARK_DAEMON_MEMORY": "256m",
              "SPARK_DAEMON_JAVA_OPTS": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Djava.net.preferIPv4Stack=true",
              "SPARK_LOCAL_IP": "127.0.0.1", "SPARK_MASTER_HOST": "127.0.0.1"}


def spark_home() -> Path:
    """The installed pyspark's folder: it is a Spark distribution (``bin/``, ``jars/``)."""
    import pyspark

    return Path(pyspark.__file__).resolve().parent


class SparkStandalone:
    """A master and one worker offering ``cores`` cores and ``memory`` to executors."""

    def __init__(self, folder: Path, cores: int = 2, memory: str = "2g") -> None:
        self.folder = folder.resolve()
        self.cores = cores
        self.memory = memory
        self.master = Daemon(self.folder, "master", MASTER)
        self.worker = Daemon(self.folder, "worker", WORKER)
        state = self.folder / "spark.json"
        self.ports: dict[str, int] = json.loads(state.read_text()) if state.is_file() else {}

    @property
    def url(self) -> str:
        """The master URL a driver sets as ``spark.master``."""
        return f"spark://127.0.0.1:{self.ports['master']}"

    @property
    def status_url(self) -> str:
        return f"http://127.0.0.1:{self.ports['master.http']}/json/"

    def status(self) -> dict[str, Any]:
        """The master's JSON status: workers, cores in use, active and completed applications."""
        return dict(http_json(self.status_url))

    def start(self, timeout: float = 120.0) -> SparkStandalone:
        if not self.ports:
            self.folder.mkdir(parents=True, exist_ok=True)
            self.ports = {"master": free_port(), "master.http": free_port(), "worker.http": free_port()}
            (self.folder / "spark.json").write_text(json.dumps(self.ports))
        (self.folder / "work").mkdir(parents=True, exist_ok=True)
        env = {**DAEMON_ENV, "SPARK_HOME": str(spark_home()), "SPARK_LOG_DIR": str(self.folder),
               "SPARK_WORKER_DIR": str(self.folder / "work"), "PYSPARK_PYTHON": os.environ.get(
                   "PYSPARK_PYTHON", _python())}
        spark_class = str(spark_home() / "bin" / "spark-class")
        try:
            self.master.start([spark_class, MASTER, "--host", "127.0.0.1", "--port", str(self.ports["master"]),
                               "--webui-port", str(self.ports["master.http"])], env)
            self.worker.start([spark_class, WORKER, self.url, "--host", "127.0.0.1", "--cores", str(self.cores),
                               "--memory", self.memory, "--work-dir", str(self.folder / "work"),
                               "--webui-port", str(self.ports["worker.http"])], env)
            wait_until(lambda: self.status()["aliveworkers"] >= 1, timeout,
                       "the Spark standalone master has no live worker",
                       lambda: self.master.pid() is not None and self.worker.pid() is not None, self.worker.log)
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        self.worker.stop()
        self.master.stop()

    def __enter__(self) -> SparkStandalone:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def wait_idle(self, timeout: float = 60.0) -> None:
        """Until no application holds cores (the last driver's executors are gone)."""
        wait_until(lambda: self.status()["coresused"] == 0 and not self.status()["activeapps"], timeout,
                   "applications still hold the Spark cluster's cores")

    def driver_conf(self) -> dict[str, str]:
        """What a driver on this machine sets to run its jobs here (``spark.conf.*`` of the sink)."""
        return {"spark.master": self.url, "spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1",
                "spark.cores.max": str(self.cores), "spark.executor.cores": str(self.cores)}


def _python() -> str:
    import sys

    return sys.executable
