"""The Iceberg sink's committer: one per connector, in the task that holds its first topic-partition.

As in Apache Iceberg's Kafka Connect sink, one task (the one whose assignment includes the first of the
connector's topic-partitions, sorted by topic and partition) runs the coordinator on a thread of its
own. Every ``iceberg.control.commit.interval-ms`` it sends START_COMMIT; each task answers with its data
files (DATA_WRITTEN) and with the partitions it holds (DATA_COMPLETE). When every partition of the
connector has answered, or ``iceberg.control.commit.timeout-ms`` has passed, it commits each table once
(:mod:`~seaway.connectors.lake_tables.iceberg_commit`: the chain check, the snapshot with the offsets) and
sends COMMIT_COMPLETE with each table's offsets. Tables are committed in parallel
(``iceberg.control.commit.threads``). So several tasks never race for a table's metadata, and a table
gets one snapshot per interval however many tasks write to it.

A committer that dies loses only what it held in memory: DATA_WRITTEN events not yet committed. Their
files stay out of every snapshot (orphans, for ``seaway lake expire --orphans``), and the tasks that sent
them see at the next COMMIT_COMPLETE that the table did not advance and replay those offsets.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from seaway.connect.api import TopicPartition
from seaway.connectors.lake_tables import control
from seaway.connectors.lake_tables.control import ControlChannel
from seaway.connectors.lake_tables.iceberg_commit import Written, chain, commit_written
from seaway.connectors.lake_tables.iceberg_config import IcebergSinkConfig
from seaway.connectors.lake_tables.iceberg_tables import IcebergTables
from seaway.connectors.lake_tables.offsets import table_offsets

__all__ = ["Coordinator"]

log = logging.getLogger(__name__)
#: commits an event may wait for an earlier one of its partition before it is dropped (its task replays)
_MAX_ROUNDS = 10
_ATTEMPTS = 5


def _offsets_json(offsets: Mapping[TopicPartition, int]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for tp, n in offsets.items():
        out.setdefault(tp.topic, {})[str(tp.partition)] = n
    return out


class Coordinator:
    """The committer's thread and state; ``partitions()`` tells which topic-partitions must answer."""

    def __init__(self, config: IcebergSinkConfig, settings: Mapping[str, Any],
                 partitions: Callable[[], set[TopicPartition]]) -> None:
        self.config = config
        self.partitions = partitions
        self.tables = IcebergTables(config)
        self._stop = threading.Event()
        self.channel = ControlChannel(settings, config.control_topic, config.connector,
                                      f"{config.control_group_prefix}{config.connector}-coord", self._stop)
        self.pending: list[Written] = []
        self.commit_id: str | None = None
        self.started = 0.0
        self.next_commit = time.monotonic() + config.commit_interval_ms / 1000
        self.reported: dict[str, set[TopicPartition]] = {}
        self._thread = threading.Thread(target=self._run, name=f"iceberg-coordinator-{config.connector}",
                                        daemon=True)
        self._pool = ThreadPoolExecutor(config.commit_threads, thread_name_prefix="iceberg-commit")
        self.failure: BaseException | None = None

    def start(self) -> None:
        log.info("%s: this task is the Iceberg committer (control topic %s, every %d ms)", self.config.connector,
                 self.config.control_topic, self.config.commit_interval_ms)
        self._thread.start()

    def stop(self, timeout: float = 30.0) -> None:
        """Stop the thread; it closes the control topic's clients itself when it ends (a commit under way
        is finished or, once it waits on Kafka, given up: the tables hold what was committed)."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout)
            if self._thread.is_alive():
                log.warning("%s: the Iceberg committer is still finishing a commit; it closes its clients when "
                            "done", self.config.connector)
                return
        elif not self._thread.ident:  # never started
            self._close()

    def _close(self) -> None:
        try:
            self._pool.shutdown(wait=True)
        finally:
            self.channel.close()

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                for event in self.channel.poll(0.1):
                    self._handle(event)
                now = time.monotonic()
                if self.commit_id is None:
                    if now >= self.next_commit:
                        self._start_commit()
                elif self._all_answered() or now - self.started >= self.config.commit_timeout_ms / 1000:
                    self._commit()
        except BaseException as e:  # the task sees it at its next put and fails
            if self._stop.is_set():
                log.info("%s: the Iceberg committer stopped during a commit: %s", self.config.connector, e)
            else:
                log.exception("%s: the Iceberg committer failed", self.config.connector)
                self.failure = e
        finally:
            self._close()

    def _handle(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == control.DATA_WRITTEN:
            self.pending.append(Written.from_event(event))
        elif kind == control.DATA_COMPLETE and event.get("commit_id") == self.commit_id:
            self.reported[str(event["member"])] = {TopicPartition(t, int(p)) for t, p in event["partitions"]}

    def _all_answered(self) -> bool:
        answered = set().union(*self.reported.values()) if self.reported else set()
        return self.partitions() <= answered

    def _start_commit(self) -> None:
        self.commit_id = str(uuid.uuid4())
        self.started = time.monotonic()
        self.reported = {}
        self.channel.send({"type": control.START_COMMIT, "commit_id": self.commit_id})

    def _commit(self) -> None:
        commit_id = self.commit_id
        assert commit_id is not None
        for event in self.channel.poll(0.0):  # what arrived while deciding
            self._handle(event)
        names = sorted({e.table for e in self.pending})
        results = dict(zip(names, self._pool.map(self._commit_table, names), strict=True))
        elapsed = time.monotonic() - self.started
        self.channel.send({"type": control.COMMIT_COMPLETE, "commit_id": commit_id,
                           "tables": {name: _offsets_json(offsets) for name, offsets in results.items()},
                           "members": sorted(self.reported)})
        log.info("%s: commit %s: %d tables, %d partitions answered, %.3f s", self.config.connector, commit_id,
                 len(names), len(set().union(*self.reported.values())) if self.reported else 0, elapsed)
        self.commit_id = None
        self.reported = {}
        self.next_commit = time.monotonic() + self.config.commit_interval_ms / 1000

    def _commit_table(self, name: str) -> dict[TopicPartition, int]:
        """Commit what chains onto table ``name``; its offsets afterwards."""
        from pyiceberg.exceptions import CommitFailedException

        events = [e for e in self.pending if e.table == name]
        id_columns = self.config.table(name).id_columns
        offsets: dict[TopicPartition, int] = {}
        for attempt in range(_ATTEMPTS):
            table = self.tables.load(name)
            if table is None:
                log.warning("%s: table %s is gone; dropping %d written sets for it", self.config.connector, name,
                            len(events))
                self._settled(events)
                return {}
            committed = table_offsets(table, self.config.connector)
            accepted, stale, overlapping, offsets = chain(events, committed)
            if not accepted:
                self._drop(overlapping, name, committed)
                self._settled(stale + overlapping)
                break
            try:
                unused = commit_written(table, self.config.connector, self.commit_id or "", accepted, offsets,
                                        id_columns)
            except CommitFailedException:
                if attempt + 1 == _ATTEMPTS:
                    raise
                log.info("%s: table %s changed while committing; checking again", self.config.connector, name)
                continue
            self._drop(overlapping, name, committed)
            self._settled(accepted + stale + overlapping)
            self._delete(table, unused)
            break
        for event in [e for e in self.pending if e.table == name]:
            event.rounds += 1
            if event.rounds > _MAX_ROUNDS:
                log.warning("%s: %s %s offsets %d..%d waited %d commits for earlier offsets; dropping it (its task "
                            "replays)", self.config.connector, name, event.tp, event.start, event.next - 1,
                            event.rounds)
                self._settled([event])
        return offsets

    def _settled(self, events: list[Written]) -> None:
        done = {id(e) for e in events}
        self.pending = [e for e in self.pending if id(e) not in done]

    def _drop(self, overlapping: list[Written], name: str, committed: Mapping[TopicPartition, int]) -> None:
        if not overlapping:
            return
        table = self.tables.cached(name)
        for event in overlapping:
            log.info("%s: %s %s offsets %d..%d overlap the table's %d; not added", self.config.connector, name,
                     event.tp, event.start, event.next - 1, committed.get(event.tp, -1))
        if table is not None:
            self._delete(table, [f["file_path"] for e in overlapping for f in e.files])

    @staticmethod
    def _delete(table: Any, paths: list[str]) -> None:
        for path in paths:
            try:
                table.io.delete(path)
            except Exception as e:  # an orphan then; seaway lake expire --orphans removes it
                log.debug("could not delete %s: %s", path, e)
