"""A real HDFS on loopback: Hadoop's own NameNode and DataNode, each in its own JVM, stopped by PID.

Not a mock and not an in-process MiniDFSCluster: ``org.apache.hadoop.hdfs.server.namenode.NameNode``
and ``...datanode.DataNode`` from ``hadoop-client-minicluster`` (the Hadoop version of pyspark's
client, see :mod:`tests.lake_cluster.jars`) run as separate processes, so a test can kill -9 the
DataNode, restart it, or stop the NameNode under a running sink, as an operator's outage would.

Everything lives in one scratch folder::

    <folder>/conf/core-site.xml, hdfs-site.xml    written at each start
    <folder>/hdfs.json                            the loopback ports, chosen free once and kept,
                                                  so a restarted NameNode is where clients look
    <folder>/name/, data/                         the NameNode's image, the DataNode's blocks
    <folder>/namenode.{pid,log}, datanode.{pid,log}

The NameNode is formatted on the first start only (a restart keeps the file system). One
DataNode, replication 1, permissions off, no safe-mode extension, a 1 s heartbeat. Readiness is
read from the daemons' JMX over HTTP: the NameNode out of safe mode with a live DataNode, the
DataNode registered and heartbeating.

By hand: ``python -m tests.lake_cluster hdfs start /tmp/hdfs`` prints ``fs.defaultFS``;
``... hdfs stop /tmp/hdfs`` stops both daemons.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

from tests.lake_cluster.daemon import Daemon, free_port, http_json, wait_until
from tests.lake_cluster.jars import HADOOP, check_hadoop_version

__all__ = ["DATANODE", "NAMENODE", "Hdfs"]

NAMENODE = "org.apache.hadoop.hdfs.server.namenode.NameNode"
DATANODE = "org.apache.hadoop.hdfs.server.datanode.DataNode"
#: small heaps and the serial collector: the daemons share two cores with Spark and the tests (C2 stays
#: on: with C1 alone every NameNode call of a lake commit took about twice as long)
JVM_FLAGS = ["-Xmx256m", "-XX:+UseSerialGC", "-XX:CICompilerCount=2", "-Djava.net.preferIPv4Stack=true"]
#: the daemons' log (on stdout, into <name>.log): INFO without the per-block and per-request lines
LOG4J = """log4j.rootLogger=INFO, out
log4j.appender.out=org.apache.log4j.ConsoleAppender
log4j.appender.out.layout=org.apache.log4j.PatternLayout
log4j.appender.out.layout.ConversionPattern=%d{ISO8601} %p %c{2}: %m%n
log4j.logger.BlockStateChange=WARN
log4j.logger.org.apache.hadoop.hdfs.StateChange=WARN
log4j.logger.http.requests=WARN
log4j.logger.org.apache.hadoop.hdfs.server.datanode.DataNode.clienttrace=WARN
log4j.logger.org.apache.hadoop.hdfs.server.namenode.FSNamesystem.audit=WARN
"""
PORTS = ("namenode.rpc", "namenode.http", "datanode.data", "datanode.http", "datanode.ipc")


def _site(props: dict[str, str]) -> str:
    body = "".join(f"  <property><name>{escape(k)}</name><value>{escape(v)}</value></property>\n"
                   for k, v in props.items())
    return f'<?xml version="1.0"?>\n<configuration>\n{body}</configuration>\n'


class Hdfs:
    """One NameNode and one DataNode in ``folder``; ``uri`` (``hdfs://127.0.0.1:<port>``) once started."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder.resolve()
        self.namenode = Daemon(self.folder, "namenode", NAMENODE)
        self.datanode = Daemon(self.folder, "datanode", DATANODE)
        self.ports = self._ports()

    def _ports(self) -> dict[str, int]:
        state = self.folder / "hdfs.json"
        if state.is_file():
            return {k: int(v) for k, v in json.loads(state.read_text()).items()}
        return {}

    @property
    def uri(self) -> str:
        """``fs.defaultFS`` of this HDFS."""
        return f"hdfs://127.0.0.1:{self.ports['namenode.rpc']}"

    def client_conf(self) -> dict[str, str]:
        """Hadoop client settings for a Spark talking to this HDFS (as ``spark.hadoop.<key>``)."""
        return {"fs.defaultFS": self.uri, "dfs.replication": "1", "dfs.client.use.datanode.hostname": "false"}

    # -- lifecycle ----------------------------------------------------------------------------------
    def start(self, timeout: float = 120.0) -> Hdfs:
        """Start both daemons (formatting a new folder first) and wait until HDFS takes writes."""
        check_hadoop_version()
        HADOOP.ensure()
        if not self.ports:
            self.folder.mkdir(parents=True, exist_ok=True)
            self.ports = {name: free_port() for name in PORTS}
            (self.folder / "hdfs.json").write_text(json.dumps(self.ports))
        self._write_conf()
        if not (self.folder / "name" / "current" / "VERSION").is_file():
            self._format()
        try:  # both JVMs start at once (the DataNode retries until the NameNode answers)
            self.namenode.start(self._java(NAMENODE))
            self.datanode.start(self._java(DATANODE))
            self.wait_namenode(timeout)
            self.wait_datanode(timeout)
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        """Stop both daemons (the DataNode first); the folder keeps the file system."""
        self.datanode.stop()
        self.namenode.stop()

    def __enter__(self) -> Hdfs:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start_namenode(self, timeout: float = 120.0) -> None:
        self.namenode.start(self._java(NAMENODE))
        self.wait_namenode(timeout)

    def stop_namenode(self, kill: bool = False) -> None:
        self.namenode.stop(kill=kill)

    def start_datanode(self, timeout: float = 120.0) -> None:
        self.datanode.start(self._java(DATANODE))
        self.wait_datanode(timeout)

    def stop_datanode(self, kill: bool = False) -> None:
        self.datanode.stop(kill=kill)

    def restart_datanode(self, timeout: float = 120.0, kill: bool = True) -> None:
        """A DataNode crash (kill -9 by default) and its restart on the same ports and blocks."""
        self.stop_datanode(kill=kill)
        self.start_datanode(timeout)

    # -- readiness ----------------------------------------------------------------------------------
    def _nn_bean(self, name: str) -> dict[str, Any]:
        url = f"http://127.0.0.1:{self.ports['namenode.http']}/jmx?qry=Hadoop:service=NameNode,name={name}"
        return dict(http_json(url)["beans"][0])

    def wait_namenode(self, timeout: float) -> None:
        """The NameNode answers RPCs: its JMX is up and it left startup (it may wait in safe mode for blocks)."""
        wait_until(lambda: self._nn_bean("NameNodeStatus")["State"] == "active", timeout,
                   "the HDFS NameNode did not start", lambda: self.namenode.pid() is not None, self.namenode.log)

    def _datanode_ready(self) -> bool:
        url = f"http://127.0.0.1:{self.ports['datanode.http']}/jmx?qry=Hadoop:service=DataNode,name=DataNodeInfo"
        actors = json.loads(http_json(url)["beans"][0]["BPServiceActorInfo"])
        registered = bool(actors) and all(a.get("ActorState") == "RUNNING" and a.get("NamenodeHaState") == "active"
                                          for a in actors)
        info = self._nn_bean("NameNodeInfo")
        return registered and info["Safemode"] == "" and self._nn_bean("FSNamesystemState")["NumLiveDataNodes"] >= 1

    def wait_datanode(self, timeout: float) -> None:
        """The DataNode is registered and heartbeating, and the NameNode is out of safe mode."""
        wait_until(self._datanode_ready, timeout, "the HDFS DataNode did not join",
                   lambda: self.datanode.pid() is not None and self.namenode.pid() is not None, self.datanode.log)

    # -- plumbing -----------------------------------------------------------------------------------
    def _java(self, main: str, *args: str) -> list[str]:
        java = shutil.which("java")
        if java is None:
            raise RuntimeError("java is needed to run HDFS (Java 17, as for PySpark)")
        return [java, *JVM_FLAGS, f"-Dhadoop.log.dir={self.folder}", "-cp",
                f"{self.folder / 'conf'}{os.pathsep}{HADOOP.lib / '*'}", main, *args]

    def _write_conf(self) -> None:
        p, f = self.ports, self.folder
        conf = f / "conf"
        conf.mkdir(parents=True, exist_ok=True)
        (conf / "log4j.properties").write_text(LOG4J)
        (conf / "core-site.xml").write_text(_site({
            "fs.defaultFS": self.uri, "hadoop.tmp.dir": str(f / "tmp"),
        }))
        (conf / "hdfs-site.xml").write_text(_site({
            "dfs.namenode.name.dir": (f / "name").as_uri(),
            "dfs.datanode.data.dir": (f / "data").as_uri(),
            "dfs.replication": "1",
            "dfs.namenode.rpc-address": f"127.0.0.1:{p['namenode.rpc']}",
            "dfs.namenode.http-address": f"127.0.0.1:{p['namenode.http']}",
            "dfs.datanode.address": f"127.0.0.1:{p['datanode.data']}",
            "dfs.datanode.http.address": f"127.0.0.1:{p['datanode.http']}",
            "dfs.datanode.ipc.address": f"127.0.0.1:{p['datanode.ipc']}",
            "dfs.datanode.hostname": "127.0.0.1",
            "dfs.namenode.datanode.registration.ip-hostname-check": "false",
            "dfs.permissions.enabled": "false",
            "dfs.namenode.safemode.extension": "0",
            "dfs.heartbeat.interval": "1",
            # no secondary NameNode runs: checkpointing is not part of what the tests prove
            "dfs.namenode.checkpoint.period": "86400",
            "dfs.datanode.du.reserved": "0",
        }))

    def _format(self) -> None:
        import subprocess

        done = subprocess.run(self._java(NAMENODE, "-format", "-force", "-nonInteractive"), capture_output=True,
                              text=True, timeout=120, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"formatting the NameNode failed ({done.returncode}):\n{done.stdout[-3000:]}"
                               f"{done.stderr[-3000:]}")
