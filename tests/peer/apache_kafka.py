"""Apache Kafka's own broker, Connect worker and command-line tools as subprocesses on loopback.

Used by the peer conformance tests (``tests/peer/``) and ``bench/peer_kafka.py``. Every
JVM runs from the jars ``tests.peer.jars`` fetched, with a config the code writes here:

- :class:`KafkaBroker`: a single-node KRaft broker (``process.roles=broker,controller``),
  storage formatted with Kafka's ``StorageTool`` first (once: started again, after
  :meth:`~JvmProcess.stop` or :meth:`~JvmProcess.kill`, it keeps its data), heap ``-Xmx1g -Xms1g`` (what
  ``kafka-server-start.sh`` gives it; plenty for one node on a 2-core, 24 GiB machine).
- :class:`KafkaConnect`: ``ConnectDistributed`` with the given worker properties and
  ``connect-distributed.sh``'s heap (``-Xms256m -Xmx2g``); ready once it has joined its
  group and its REST API answers ``GET /connectors``.
- :func:`create_internal_topics`: a Connect worker's three compacted topics, created
  and visible before a Seaway worker starts on Apache Kafka (finding P-X1).
- :func:`run_tool`: one CLI tool (``kafka.admin.ConfigCommand``,
  ``org.apache.kafka.tools.TopicCommand``, ...) run to completion with a timeout.

Each process writes its output to a log file in its folder (the tail is kept in memory
for error messages), has a start timeout and stops with SIGTERM then SIGKILL. Kafka picks
no port of its own here (port 0 would be advertised as is), so ports come from
:func:`free_port`.
"""

from __future__ import annotations

import base64
import collections
import ctypes
import os
import signal
import subprocess
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import httpx

from tests.peer.jars import LIB, classpath
from tests.support.ports import free_port

__all__ = [
    "JvmProcess",
    "KafkaBroker",
    "KafkaConnect",
    "ProcStats",
    "create_internal_topics",
    "free_port",
    "proc_stats",
    "run_tool",
]

JVM_SERVER_OPTS = ["-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20", "-XX:InitiatingHeapOccupancyPercent=35",
                   "-XX:+ExplicitGCInvokesConcurrent", "-Djava.awt.headless=true"]
"""What ``kafka-run-class.sh`` gives a server JVM by default."""

JVM_TOOL_OPTS = ["-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto",
                 "-Xlog:disable", "-Xlog:all=warning:stderr", "-Djava.awt.headless=true"]
"""A CLI tool lives a second or two: C1 only and the serial GC start it fastest."""

LOG4J2 = """status = error
appender.out.type = Console
appender.out.name = OUT
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = {level}
rootLogger.appenderRef.out.ref = OUT
logger.reflections.name = org.reflections
logger.reflections.level = ERROR
"""



def _write_properties(path: Path, props: Mapping[str, str]) -> Path:
    path.write_text("".join(f"{k}={v}\n" for k, v in props.items()), encoding="utf-8")
    return path


def _log4j(directory: Path, level: str = "INFO") -> str:
    path = directory / "log4j2.properties"
    path.write_text(LOG4J2.format(level=level), encoding="utf-8")
    return f"-Dlog4j2.configurationFile={path}"


@dataclass(frozen=True)
class ProcStats:
    """A process's resident memory now and at its peak, and CPU time so far (``/proc``)."""

    rss_bytes: int
    peak_rss_bytes: int
    cpu_seconds: float


def proc_stats(pid: int) -> ProcStats:
    """``VmRSS`` and ``VmHWM`` of ``/proc/<pid>/status``; user+system CPU seconds of every thread."""
    memory = {"VmRSS:": 0, "VmHWM:": 0}
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as f:
            for line in f:
                key = line.split(None, 1)[0] if line.strip() else ""
                if key in memory:
                    memory[key] = int(line.split()[1]) * 1024
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        ticks = int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of stat)
    except (OSError, ValueError, IndexError):
        return ProcStats(memory["VmRSS:"], memory["VmHWM:"], 0.0)
    return ProcStats(memory["VmRSS:"], memory["VmHWM:"], ticks / os.sysconf("SC_CLK_TCK"))


class JvmProcess:
    """A JVM subprocess whose output goes to ``<directory>/<name>.log`` (last lines kept).

    ``markers`` are texts the log pump watches for in every line, so :meth:`logged` finds
    them even after hundreds of lines of config dumps have pushed them out of ``tail``.
    """

    markers: tuple[str, ...] = ()

    def __init__(self, directory: Path, name: str) -> None:
        self.directory = directory
        self.name = name
        self.log_path = directory / f"{name}.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self.tail: collections.deque[str] = collections.deque(maxlen=400)
        self.found: set[str] = set()
        self._seen = threading.Condition()
        self._pump: threading.Thread | None = None

    def _spawn(self, args: Sequence[str]) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        with self._seen:  # a restart: what the last run logged must not count for this one
            self.tail.clear()
            self.found.clear()
        self.proc = subprocess.Popen(["java", *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     cwd=self.directory, preexec_fn=_die_with_parent)
        proc = self.proc

        def pump() -> None:
            assert proc.stdout is not None
            with proc.stdout, open(self.log_path, "ab") as log:
                for raw in proc.stdout:
                    log.write(raw)
                    log.flush()
                    line = raw.decode("utf-8", "replace")
                    with self._seen:
                        self.tail.append(line)
                        self.found.update(m for m in self.markers if m in line)
                        self._seen.notify_all()
            with self._seen:
                self._seen.notify_all()

        self._pump = threading.Thread(target=pump, name=f"{self.name}-log", daemon=True)
        self._pump.start()

    def wait_until(self, ready: Callable[[], bool], timeout: float, what: str) -> None:
        """Poll ``ready`` until true; on timeout or exit, kill and raise with the log's tail."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.alive:
                break
            if ready():
                return
            with self._seen:
                self._seen.wait(0.1)
        self.kill()
        raise RuntimeError(f"{self.name} did not become {what} within {timeout:.0f}s (log {self.log_path}):\n"
                           + "".join(list(self.tail)[-60:]))

    def logged(self, text: str) -> bool:
        """Whether the log has shown ``text`` (ever, for a marker; else within ``tail``)."""
        with self._seen:
            return text in self.found or any(text in line for line in self.tail)

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stats(self) -> ProcStats:
        return proc_stats(self.pid)

    def stop(self, timeout: float = 30.0) -> None:
        """SIGTERM (Kafka's clean shutdown hook), then SIGKILL after ``timeout`` seconds."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._join()

    def kill(self) -> None:
        """SIGKILL, as ``kill -9`` would."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self._join()

    def _join(self) -> None:
        if self._pump is not None:
            self._pump.join(5)


def _die_with_parent() -> None:
    """In the child before exec: SIGKILL it when the thread that started it dies.

    A test run killed by its timeout (pytest-timeout exits the process without teardown)
    must not leave a 1 GiB JVM running on a shared two-core machine.
    """
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


_PR_SET_PDEATHSIG = 1


def _cluster_id() -> str:
    """What ``kafka-storage random-uuid`` prints: 16 random bytes, URL-safe base64, no padding,
    never starting with ``-`` (Kafka's ``Uuid.randomUuid`` draws again: such an id reads as an option)."""
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode("ascii").rstrip("=")
        if not text.startswith("-"):
            return text


class KafkaBroker(JvmProcess):
    """A single-node KRaft Apache Kafka broker; ``bootstrap`` is ``127.0.0.1:<port>``."""

    markers = ("Kafka Server started",)

    ELR_OFF = ("eligible.leader.replicas.version=0",)
    """Formatted without eligible leader replicas (KIP-966), on by default since Kafka 4.1. They
    are about replication, which a single node (and Seaway) has none of, and with them on the
    controller sets a cluster-wide ``min.insync.replicas=1`` that then shows in every topic's
    and broker's config listing, a difference that says nothing about Seaway."""

    def __init__(self, directory: Path, overrides: Mapping[str, str] | None = None,
                 heap: Sequence[str] = ("-Xmx1g", "-Xms1g"), features: Sequence[str] = ELR_OFF) -> None:
        super().__init__(directory, "kafka-broker")
        self.features = tuple(features)
        self.port = free_port()
        self.controller_port = free_port()
        self.bootstrap = f"127.0.0.1:{self.port}"
        self.heap = tuple(heap)
        self.props = {
            "process.roles": "broker,controller",
            "node.id": "1",
            "controller.quorum.voters": f"1@127.0.0.1:{self.controller_port}",
            "listeners": f"PLAINTEXT://127.0.0.1:{self.port},CONTROLLER://127.0.0.1:{self.controller_port}",
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{self.port}",
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "PLAINTEXT",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
            "log.dirs": str(directory / "data"),
            "num.partitions": "1",
            "offsets.topic.replication.factor": "1",
            "offsets.topic.num.partitions": "50",
            "transaction.state.log.replication.factor": "1",
            "transaction.state.log.min.isr": "1",
            "share.coordinator.state.topic.replication.factor": "1",
            "share.coordinator.state.topic.min.isr": "1",
        }
        self.props.update(overrides or {})

    def start(self, timeout: float = 90.0) -> KafkaBroker:
        """Format the storage unless a previous start did (a restart keeps its data), then start."""
        self.directory.mkdir(parents=True, exist_ok=True)
        config = _write_properties(self.directory / "server.properties", self.props)
        log4j = _log4j(self.directory)
        if not (Path(self.props["log.dirs"]) / "meta.properties").is_file():
            formatted = subprocess.run(
                ["java", *JVM_TOOL_OPTS, log4j, "-cp", classpath(), "kafka.tools.StorageTool", "format",
                 f"--cluster-id={_cluster_id()}", "-c", str(config), *(f"--feature={f}" for f in self.features)],
                capture_output=True, text=True, timeout=120, check=False)
            if formatted.returncode != 0:
                raise RuntimeError(f"kafka-storage format failed:\n{formatted.stdout}\n{formatted.stderr}")
        self._spawn([*self.heap, *JVM_SERVER_OPTS, log4j, "-cp", classpath(), "kafka.Kafka", str(config)])
        self.wait_until(lambda: self.logged("Kafka Server started"), timeout, "ready")
        return self

    def __enter__(self) -> KafkaBroker:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class KafkaConnect(JvmProcess):
    """Apache Kafka's distributed Connect worker; ``url`` is its REST URL.

    ``props`` are the worker properties (Kafka's names; ``listeners`` must be set). Plugins
    are found with ``plugin.discovery=service_load``: the FileStream connectors sit on the
    classpath with their ``META-INF/services`` manifests, and reflective scanning of ~90
    jars would add tens of seconds to every start on two cores.
    """

    markers = ("Joined group at generation",)

    def __init__(self, directory: Path, props: Mapping[str, str], heap: Sequence[str] = ("-Xms256m", "-Xmx2g"),
                 name: str = "kafka-connect") -> None:
        super().__init__(directory, name)
        self.props = {"plugin.discovery": "service_load", **props}
        self.url = self.props["listeners"]
        self.heap = tuple(heap)

    def start(self, timeout: float = 120.0) -> KafkaConnect:
        self.directory.mkdir(parents=True, exist_ok=True)
        config = _write_properties(self.directory / "connect-distributed.properties", self.props)
        self._spawn([*self.heap, *JVM_SERVER_OPTS, _log4j(self.directory), "-cp", classpath(),
                     "org.apache.kafka.connect.cli.ConnectDistributed", str(config)])
        self.wait_until(self._answers, timeout, "ready (GET /connectors -> 200 after joining its group)")
        return self

    def _answers(self) -> bool:
        if not self.logged("Joined group at generation"):
            return False
        try:
            return httpx.get(self.url + "/connectors", timeout=5).status_code == 200
        except httpx.HTTPError:
            return False

    @property
    def worker_id(self) -> str:
        return self.url.split("://", 1)[1]

    def __enter__(self) -> KafkaConnect:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def run_tool(main_class: str, *args: str, timeout: float = 90.0, stdin: str | None = None,
             cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run one of Kafka's tools (its main class) to completion; its exit code is not checked.

    Logging goes to stderr at WARN so stdout holds only what the tool prints. The first
    run also dumps the classes it loaded into a CDS archive beside the jars, which later
    runs map: on two busy cores that nearly halves a tool's start (~1.3 s to ~0.7 s).
    ``-Xshare:auto`` makes the JVM ignore an archive that does not fit (other jars).
    """
    def run(*extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["java", *JVM_TOOL_OPTS, *extra, _tool_log4j(), "-cp", classpath(), main_class, *args],
                              input=stdin, capture_output=True, text=True, timeout=timeout, check=False, cwd=cwd)

    archive = LIB / "tools.jsa"
    if archive.is_file():
        return run(f"-XX:SharedArchiveFile={archive}")
    if _archive_failed or not _archive_lock.acquire(blocking=False):
        return run()
    try:  # this run dumps the archive, to a private name renamed into place once complete
        partial = archive.with_name(f"tools.jsa.{os.getpid()}")
        done = run(f"-XX:ArchiveClassesAtExit={partial}")
        if done.returncode == 0 and partial.is_file():
            os.replace(partial, archive)
        else:
            _give_up_archive(partial)
        return done
    finally:
        _archive_lock.release()


_archive_lock = threading.Lock()
_archive_failed = False


def _give_up_archive(partial: Path) -> None:
    global _archive_failed
    _archive_failed = True
    partial.unlink(missing_ok=True)


def _tool_log4j() -> str:
    path = Path(tempfile.gettempdir()) / f"seaway-peer-tools-log4j2-{os.getuid()}.properties"
    text = LOG4J2.format(level="WARN").replace("appender.out.type = Console\n",
                                               "appender.out.type = Console\nappender.out.target = SYSTEM_ERR\n")
    if not path.is_file() or path.read_text(encoding="utf-8") != text:
        tmp = path.with_suffix(f".{os.getpid()}")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    return f"-Dlog4j2.configurationFile={path}"


def create_internal_topics(bootstrap: str, props: Mapping[str, str], timeout: float = 30.0) -> None:
    """Create a worker's three compacted internal topics and wait until metadata lists them.

    Apache Kafka may not serve a topic's metadata right after creating it (finding P-X1 in
    docs/performance.md, "Conformance"; Seaway's worker now waits for it). Created here
    first, the worker finds them existing and these tests do not depend on that wait.
    """
    from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]  # re-exported without __all__

    admin = AdminClient({"bootstrap.servers": bootstrap})
    sizes = {props["config.storage.topic"]: 1, props["offset.storage.topic"]: int(props["offset.storage.partitions"]),
             props["status.storage.topic"]: int(props["status.storage.partitions"])}
    new = [NewTopic(name, n, 1, config={"cleanup.policy": "compact"}) for name, n in sizes.items()]
    for future in admin.create_topics(new, operation_timeout=timeout).values():
        future.result(timeout)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        topics = admin.list_topics(timeout=timeout).topics
        if all(name in topics and topics[name].error is None and len(topics[name].partitions) == n
               for name, n in sizes.items()):
            return
        time.sleep(0.1)
    raise RuntimeError(f"internal topics {sorted(sizes)} not visible after {timeout}s")
