"""All partition logs of the broker: discovery, topic lifecycle, maintenance, shutdown.

On disk, per log dir (Kafka's layout where Kafka has one):

- ``<topic>-<partition>/`` one directory per partition log, holding its segments, its
  checkpoints and ``partition.metadata`` (``version: 0`` / ``topic_id: <base64 uuid>``);
- ``meta.properties`` (``version=1``, ``cluster.id``, ``node.id``, ``directory.id``);
- ``.kafka_cleanshutdown`` written after every log closed cleanly, removed once loaded:
  present at load means no recovery scan is needed;
- ``<topic>-<partition>.<uuid>-delete/`` a deleted partition not yet removed.

Topic metadata Kafka keeps in its KRaft metadata log (names, ids, partition counts,
config overrides) lives in ``__seaway_topics.json`` in the first log dir, replaced
crash-safely (temp file, fsync, rename, fsync dir) on every change.

Threading: topic operations take the manager's lock and do disk I/O (fsync of the
metadata file, flush of deleted logs); the server should call them off the event loop.
``get_log`` is a dict lookup, safe anywhere.
"""

from __future__ import annotations

import base64
import json
import logging
import os
import re
import shutil
import threading
import uuid
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from seaway.broker.log.config import LogConfig
from seaway.broker.log.partition_log import PartitionLog
from seaway.broker.log.recovery import fsync_dir, write_atomic
from seaway.errors import SeawayError
from seaway.protocol.errors import (
    InvalidPartitionsError,
    InvalidTopicException,
    TopicAlreadyExistsError,
    UnknownTopicOrPartitionError,
)

__all__ = [
    "INTERNAL_TOPICS",
    "LOG_START_CHECKPOINT_INTERVAL_KEY",
    "LogDirError",
    "LogManager",
    "TopicMetadata",
    "validate_topic_name",
]

log = logging.getLogger("seaway.broker.log")

INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state"})
LOG_START_CHECKPOINT_INTERVAL_KEY = "log.flush.start.offset.checkpoint.interval.ms"
"""Kafka's interval of the periodic log start offset checkpoint (:meth:`LogManager.start_checkpoints`)."""
METADATA_FILE = "__seaway_topics.json"
CLEAN_SHUTDOWN_FILE = ".kafka_cleanshutdown"
META_PROPERTIES = "meta.properties"
PARTITION_METADATA = "partition.metadata"
_LEGAL_TOPIC = re.compile(r"[a-zA-Z0-9._-]+")
_MAX_TOPIC_LENGTH = 249


class LogDirError(SeawayError):
    """A log dir that cannot be used (another node's or another cluster's data)."""


def validate_topic_name(name: str) -> None:
    """Kafka's ``Topic.validate``: legal characters, length, not ``.`` or ``..``."""
    if not name:
        raise InvalidTopicException("Topic name is illegal, it can't be empty")
    if name in (".", ".."):
        raise InvalidTopicException('Topic name cannot be "." or ".."')
    if len(name) > _MAX_TOPIC_LENGTH:
        raise InvalidTopicException(
            f"Topic name is illegal, it can't be longer than {_MAX_TOPIC_LENGTH} characters, "
            f"topic name: {name}"
        )
    if not _LEGAL_TOPIC.fullmatch(name):
        raise InvalidTopicException(
            f"Topic name {name!r} is illegal, it contains a character other than "
            "ASCII alphanumerics, '.', '_' and '-'"
        )


def kafka_uuid(value: uuid.UUID) -> str:
    """Kafka's ``Uuid.toString``: url-safe base64 of the 16 bytes, no padding."""
    return base64.urlsafe_b64encode(value.bytes).decode().rstrip("=")


def parse_kafka_uuid(text: str) -> uuid.UUID:
    return uuid.UUID(bytes=base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))


@dataclass
class TopicMetadata:
    """What the broker knows about a topic besides its data."""

    name: str
    topic_id: uuid.UUID
    num_partitions: int
    config_overrides: dict[str, str] = field(default_factory=dict)
    is_internal: bool = False

    def to_json(self) -> dict[str, object]:
        return {
            "topic_id": str(self.topic_id),
            "num_partitions": self.num_partitions,
            "configs": self.config_overrides,
            "is_internal": self.is_internal,
        }

    @classmethod
    def from_json(cls, name: str, data: Mapping[str, object]) -> TopicMetadata:
        configs = data.get("configs") or {}
        assert isinstance(configs, dict)
        return cls(
            name,
            uuid.UUID(str(data["topic_id"])),
            int(str(data["num_partitions"])),
            {str(k): str(v) for k, v in configs.items()},
            bool(data.get("is_internal", False)),
        )


class LogManager:
    """Owns every :class:`PartitionLog`; see the module docstring for the on-disk layout."""

    def __init__(
        self,
        log_dirs: list[Path],
        default_config: LogConfig,
        *,
        recovery_threads: int = 1,
        node_id: int | None = None,
    ) -> None:
        if not log_dirs:
            raise LogDirError("at least one log dir is required")
        self.log_dirs = [Path(d) for d in log_dirs]
        self.default_config = default_config
        self.recovery_threads = max(1, recovery_threads)
        self.node_id = node_id
        self.cluster_id = ""
        self.flush_requested = threading.Event()
        """Set when a log reached ``flush.messages``; the maintenance thread may wait on it."""
        self._lock = threading.RLock()
        self._topics: dict[str, TopicMetadata] = {}
        self._logs: dict[tuple[str, int], PartitionLog] = {}
        self._checkpoints_stop = threading.Event()
        self._checkpoints: threading.Thread | None = None

    # -- loading -------------------------------------------------------------------------

    def load(self) -> None:
        """Discover and open (recovering as needed) every partition in the log dirs."""
        for directory in self.log_dirs:
            directory.mkdir(parents=True, exist_ok=True)
        self._load_meta_properties()
        clean = {d: (d / CLEAN_SHUTDOWN_FILE).exists() for d in self.log_dirs}
        self._topics = self._read_metadata()
        found: dict[tuple[str, int], Path] = {}
        for directory in self.log_dirs:
            for child in sorted(directory.iterdir()):
                key = self._partition_dir_key(child)
                if key is not None:
                    found[key] = child
        for (topic, partition), path in sorted(found.items()):
            meta = self._topics.get(topic)
            if meta is None:
                meta = self._topics[topic] = TopicMetadata(
                    topic, self._read_topic_id(path) or uuid.uuid4(), 0, {}, topic in INTERNAL_TOPICS
                )
                log.warning("topic %s found on disk but not in %s; adopting it", topic, METADATA_FILE)
            meta.num_partitions = max(meta.num_partitions, partition + 1)

        def open_one(key: tuple[str, int]) -> PartitionLog:
            path = found.get(key) or self._new_partition_dir(*key)
            return self._open_log(self._topics[key[0]], key[1], path, clean.get(path.parent, False))

        keys = [(name, p) for name, meta in self._topics.items() for p in range(meta.num_partitions)]
        with ThreadPoolExecutor(self.recovery_threads, thread_name_prefix="log-recovery") as pool:
            self._logs = dict(zip(keys, pool.map(open_one, keys), strict=True))
        self._write_metadata()
        for directory, was_clean in clean.items():
            if was_clean:
                (directory / CLEAN_SHUTDOWN_FILE).unlink()
                fsync_dir(directory)
        log.info(
            "loaded %d partitions of %d topics from %s",
            len(self._logs),
            len(self._topics),
            ", ".join(map(str, self.log_dirs)),
        )

    def _partition_dir_key(self, child: Path) -> tuple[str, int] | None:
        if not child.is_dir():
            return None
        if child.name.endswith("-delete"):
            log.info("removing deleted partition dir %s", child)
            shutil.rmtree(child, ignore_errors=True)
            return None
        if child.name == "__cluster_metadata-0":
            return None  # the security store's log (seaway.broker.security.store), not a topic
        topic, dash, partition = child.name.rpartition("-")
        if not dash or not partition.isdigit() or not topic or not _LEGAL_TOPIC.fullmatch(topic):
            log.warning("ignoring %s: not a <topic>-<partition> directory", child)
            return None
        return topic, int(partition)

    def _load_meta_properties(self) -> None:
        cluster_ids = set()
        for directory in self.log_dirs:
            path = directory / META_PROPERTIES
            if path.exists():
                props = dict(
                    line.split("=", 1)
                    for line in path.read_text().splitlines()
                    if "=" in line and not line.startswith("#")
                )
                stored = props.get("node.id", "").strip()
                if self.node_id is None and stored.lstrip("-").isdigit():
                    self.node_id = int(stored)
                elif stored and stored != str(self.node_id):
                    raise LogDirError(f"{path} belongs to node.id {stored}, not {self.node_id}")
                cluster_ids.add(props.get("cluster.id", "").strip())
        cluster_ids.discard("")
        if len(cluster_ids) > 1:
            raise LogDirError(f"log dirs belong to different clusters: {sorted(cluster_ids)}")
        self.cluster_id = cluster_ids.pop() if cluster_ids else kafka_uuid(uuid.uuid4())
        for directory in self.log_dirs:
            path = directory / META_PROPERTIES
            if not path.exists():
                write_atomic(
                    path,
                    (
                        f"version=1\ncluster.id={self.cluster_id}\n"
                        f"node.id={1 if self.node_id is None else self.node_id}\n"
                        f"directory.id={kafka_uuid(uuid.uuid4())}\n"
                    ).encode(),
                )

    def _read_metadata(self) -> dict[str, TopicMetadata]:
        path = self.log_dirs[0] / METADATA_FILE
        if not path.exists():
            return {}
        data = json.loads(path.read_text())
        return {name: TopicMetadata.from_json(name, entry) for name, entry in data["topics"].items()}

    def _write_metadata(self) -> None:
        data = {"version": 1, "topics": {name: meta.to_json() for name, meta in sorted(self._topics.items())}}
        write_atomic(self.log_dirs[0] / METADATA_FILE, json.dumps(data, indent=1).encode())

    @staticmethod
    def _read_topic_id(path: Path) -> uuid.UUID | None:
        try:
            for line in (path / PARTITION_METADATA).read_text().splitlines():
                if line.startswith("topic_id:"):
                    return parse_kafka_uuid(line.split(":", 1)[1].strip())
        except (OSError, ValueError):
            return None
        return None

    def _new_partition_dir(self, topic: str, partition: int) -> Path:
        """Place a new partition in the log dir holding the fewest (Kafka's rule)."""
        counts = dict.fromkeys(self.log_dirs, 0)
        for log_ in self._logs.values():
            if log_.directory.parent in counts:
                counts[log_.directory.parent] += 1
        return min(self.log_dirs, key=lambda d: counts[d]) / f"{topic}-{partition}"

    def _open_log(self, meta: TopicMetadata, partition: int, path: Path, clean: bool) -> PartitionLog:
        config = LogConfig.from_properties(meta.config_overrides, self.default_config)
        partition_log = PartitionLog.open(
            path, config, topic=meta.name, partition=partition, had_clean_shutdown=clean
        )
        if self._read_topic_id(path) != meta.topic_id:
            write_atomic(
                path / PARTITION_METADATA, f"version: 0\ntopic_id: {kafka_uuid(meta.topic_id)}\n".encode()
            )
        partition_log.on_flush_needed = lambda _log: self.flush_requested.set()
        return partition_log

    # -- topics --------------------------------------------------------------------------

    def topics(self) -> dict[str, TopicMetadata]:
        with self._lock:
            return dict(self._topics)

    def get_log(self, topic: str, partition: int) -> PartitionLog | None:
        return self._logs.get((topic, partition))

    def topic_config(self, name: str) -> LogConfig:
        """The effective config of a topic (defaults with its overrides)."""
        with self._lock:
            meta = self._require(name)
            return LogConfig.from_properties(meta.config_overrides, self.default_config)

    def _require(self, name: str) -> TopicMetadata:
        meta = self._topics.get(name)
        if meta is None:
            raise UnknownTopicOrPartitionError(f"topic {name} does not exist")
        return meta

    def create_topic(
        self, name: str, num_partitions: int, configs: Mapping[str, str] | None = None
    ) -> TopicMetadata:
        """Create a topic and its partition logs; validated as Kafka validates CreateTopics."""
        validate_topic_name(name)
        overrides = dict(configs or {})
        LogConfig.from_properties(overrides, self.default_config)
        if num_partitions < 1:
            raise InvalidPartitionsError(f"number of partitions must be at least 1, got {num_partitions}")
        with self._lock:
            if name in self._topics:
                raise TopicAlreadyExistsError(f"Topic '{name}' already exists.")
            for existing in self._topics:
                if existing.replace(".", "_") == name.replace(".", "_"):
                    raise InvalidTopicException(f"Topic '{name}' collides with existing topic: {existing}")
            meta = TopicMetadata(name, uuid.uuid4(), num_partitions, overrides, name in INTERNAL_TOPICS)
            self._topics[name] = meta
            self._write_metadata()
            for partition in range(num_partitions):
                self._logs[(name, partition)] = self._open_log(
                    meta, partition, self._new_partition_dir(name, partition), True
                )
            log.info(
                "created topic %s with %d partitions (id %s)", name, num_partitions, kafka_uuid(meta.topic_id)
            )
            return meta

    def delete_topic(self, name: str) -> None:
        """Forget a topic and remove its files (renamed to ``*-delete`` first, as Kafka)."""
        with self._lock:
            meta = self._require(name)
            del self._topics[name]
            doomed = [
                self._logs.pop((name, p)) for p in range(meta.num_partitions) if (name, p) in self._logs
            ]
            self._write_metadata()
        for partition_log in doomed:
            partition_log.close(flush=False)
            target = partition_log.directory.with_name(
                f"{partition_log.directory.name}.{uuid.uuid4().hex}-delete"
            )
            os.replace(partition_log.directory, target)
            fsync_dir(target.parent)
            shutil.rmtree(target, ignore_errors=True)
        log.info("deleted topic %s", name)

    def add_partitions(self, name: str, new_total: int) -> None:
        """Grow a topic to ``new_total`` partitions (never shrink, as Kafka)."""
        with self._lock:
            meta = self._require(name)
            if new_total <= meta.num_partitions:
                raise InvalidPartitionsError(
                    f"Topic currently has {meta.num_partitions} partitions, "
                    f"{new_total} would not be an increase."
                )
            old_total, meta.num_partitions = meta.num_partitions, new_total
            self._write_metadata()
            for partition in range(old_total, new_total):
                self._logs[(name, partition)] = self._open_log(
                    meta, partition, self._new_partition_dir(name, partition), True
                )

    def alter_topic_config(self, name: str, configs: Mapping[str, str]) -> None:
        """Replace a topic's overrides (validated first), persist, apply to its open logs."""
        overrides = dict(configs)
        config = LogConfig.from_properties(overrides, self.default_config)
        with self._lock:
            meta = self._require(name)
            meta.config_overrides = overrides
            self._write_metadata()
            for partition in range(meta.num_partitions):
                partition_log = self._logs.get((name, partition))
                if partition_log is not None:
                    partition_log.update_config(config)

    # -- maintenance ---------------------------------------------------------------------

    def run_maintenance(self, now_ms: int) -> None:
        """Retention and policy flushes for every log; one failing log does not stop others."""
        self.flush_requested.clear()
        for partition_log in list(self._logs.values()):
            try:
                partition_log.apply_retention(now_ms)
                partition_log.maybe_flush(now_ms)
            except (OSError, SeawayError):
                log.exception("maintenance of %r failed", partition_log)

    def start_checkpoints(self, interval_ms: int) -> None:
        """Checkpoint every log's start offset every ``interval_ms`` on a thread, until :meth:`close`.

        Kafka's ``log.flush.start.offset.checkpoint.interval.ms`` (60 s): DeleteRecords moves a
        log start in memory only, so without this a kill -9 before the next retention pass
        (``log.retention.check.interval.ms``, 5 minutes) or flush brought the deleted records
        back. Only logs whose start moved write anything. ``interval_ms`` <= 0: no periodic
        checkpoint (flushes, retention passes and :meth:`close` still write it).
        """
        if interval_ms <= 0 or self._checkpoints is not None:
            return
        self._checkpoints = threading.Thread(target=self._checkpoint_loop, args=(interval_ms / 1000.0,),
                                             name="log-start-offset-checkpoint", daemon=True)
        self._checkpoints.start()

    def _checkpoint_loop(self, interval_s: float) -> None:
        while not self._checkpoints_stop.wait(interval_s):
            self.checkpoint_log_start_offsets()

    def checkpoint_log_start_offsets(self) -> None:
        """Write the start offset checkpoint of every log whose start moved; one failing log does not stop others."""
        for partition_log in list(self._logs.values()):
            try:
                partition_log.checkpoint_log_start_offset()
            except OSError:
                log.exception("log start offset checkpoint of %r failed", partition_log)

    def close(self) -> None:
        """Flush and close every log, then mark each log dir as cleanly shut down.

        Never raises: a log that fails to close is logged and its dir gets no marker (so
        the next start recovers it, as Kafka leaves a failed dir unmarked); every other
        log still closes and every other dir is marked. A clean stop exits 0. Closing a
        log checkpoints its start offset (its flush does), as Kafka's shutdown does.
        """
        self._checkpoints_stop.set()
        if self._checkpoints is not None:
            self._checkpoints.join()
            self._checkpoints = None
        with self._lock:
            logs, self._logs = list(self._logs.values()), {}
        failed: set[Path] = set()
        for partition_log in logs:
            try:
                partition_log.close()
            except Exception:
                log.exception("closing %r failed; its log dir will be recovered at the next start", partition_log)
                failed.add(partition_log.directory.parent)
        for directory in self.log_dirs:
            if directory.exists() and directory not in failed:
                try:
                    write_atomic(directory / CLEAN_SHUTDOWN_FILE, b"")
                except OSError:
                    log.exception("cannot write the clean-shutdown marker of %s", directory)
