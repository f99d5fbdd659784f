"""Kafka Connect's task and worker metrics, as jmx_exporter names the JMX beans without rules.

Kafka Connect registers ``kafka.connect:type=sink-task-metrics,connector=c,task=0`` with
attributes such as ``sink-record-read-total``; jmx_exporter's default naming (domain, type,
attribute, lower-cased, ``-`` to ``_``) turns that into
``kafka_connect_sink_task_metrics_sink_record_read_total{connector="c",task="0"}``. A
string attribute (``status``) becomes a label of a series whose value is 1, as jmx_exporter
does for strings it is told to keep. docs/metrics.md lists every family.

Cost: each task thread owns one :class:`TaskMetrics` and adds to plain integers once per
batch (a poll, a put, a commit), never per record; nothing is locked. The REST server's
``/metrics`` reads them when scraped (:func:`collect_worker`); a reading mid-batch is one
batch behind, as any scrape is. Kafka averages over a 30 s sample window; these averages
and maxima are over the task's lifetime (documented deviation).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

__all__ = ["RECORDING", "TaskMetrics", "TaskSnapshot", "WorkerCollector", "WorkerSnapshot", "new_task_metrics"]

RECORDING = True
"""Whether new tasks record metrics. Benchmarks switch it off to measure what recording costs
(bench/connect_pipeline.py --metrics off); a worker always records."""

_perf_ns = time.perf_counter_ns


class TaskMetrics:
    """One task's counters, written by its thread only (see the module docstring)."""

    __slots__ = (
        "batch_max",
        "batch_records",
        "batches",
        "commit_failures",
        "commit_max_ns",
        "commit_ns",
        "commit_skips",
        "commits",
        "put_max_ns",
        "put_ns",
        "puts",
        "read",
        "sent",
    )

    def __init__(self) -> None:
        self.read = 0  # source: records polled; sink: records read from Kafka
        self.sent = 0  # source: records handed to the producer; sink: records given to put()
        self.batches = 0
        self.batch_records = 0
        self.batch_max = 0
        self.commits = 0
        self.commit_failures = 0
        self.commit_skips = 0
        self.commit_ns = 0
        self.commit_max_ns = 0
        self.puts = 0
        self.put_ns = 0
        self.put_max_ns = 0

    def batch(self, records: int) -> None:
        """A poll's (source) or consumer fetch's (sink) batch of ``records``."""
        self.read += records
        self.batches += 1
        self.batch_records += records
        if records > self.batch_max:
            self.batch_max = records

    def source_sent(self, records: int) -> None:
        self.sent += records

    def put_done(self, records: int, started_ns: int) -> None:
        """A successful ``SinkTask.put`` of ``records`` that started at ``started_ns``."""
        elapsed = _perf_ns() - started_ns
        self.sent += records
        self.puts += 1
        self.put_ns += elapsed
        if elapsed > self.put_max_ns:
            self.put_max_ns = elapsed

    def commit_done(self, started_ns: int, ok: bool) -> None:
        """An offset commit attempt that started at ``started_ns``: completed or failed."""
        elapsed = _perf_ns() - started_ns
        if ok:
            self.commits += 1
        else:
            self.commit_failures += 1
        self.commit_ns += elapsed
        if elapsed > self.commit_max_ns:
            self.commit_max_ns = elapsed

    def commit_skipped(self) -> None:
        """An offset commit with nothing new to commit (Kafka's offset-commit-skip)."""
        self.commit_skips += 1


def new_task_metrics() -> TaskMetrics | None:
    """A task's metrics, or None while :data:`RECORDING` is off."""
    return TaskMetrics() if RECORDING else None


@dataclass(frozen=True, slots=True)
class TaskSnapshot:
    """One task on this worker, as a scrape sees it."""

    connector: str
    task: int
    kind: str  # "source" | "sink"
    status: str  # Kafka's state name (RUNNING, PAUSED, FAILED, ...)
    metrics: TaskMetrics | None
    record_failures: int
    partition_count: int | None
    errors: Mapping[str, int] = field(default_factory=dict)
    """task-error-metrics other than total-record-failures, by attribute (see ``_ERROR_FAMILIES``)."""


@dataclass(frozen=True, slots=True)
class WorkerSnapshot:
    """The worker's connectors and tasks with their states, gathered by the REST route."""

    connectors: Mapping[str, str]  # name -> state of the connectors running on this worker
    connector_task_states: Mapping[str, list[str]]  # name -> every task's state (cluster-wide)
    tasks: list[TaskSnapshot] = field(default_factory=list)


def _ms(ns: int) -> float:
    return ns / 1e6


def _avg(total: float, count: int) -> float:
    return total / count if count else 0.0


class WorkerCollector(Collector):
    """Metric families of one :class:`WorkerSnapshot` (one scrape)."""

    def __init__(self, snapshot: WorkerSnapshot) -> None:
        self._snapshot = snapshot

    def collect(self) -> Iterator[Metric]:
        yield from self._worker()
        yield from self._connectors()
        yield from self._tasks()

    def _worker(self) -> Iterator[Metric]:
        s = self._snapshot
        p = "kafka_connect_connect_worker_metrics_"
        yield GaugeMetricFamily(p + "connector_count", "Connectors run by this worker.", value=len(s.connectors))
        yield GaugeMetricFamily(p + "task_count", "Tasks run by this worker.", value=len(s.tasks))
        by_state = {name: GaugeMetricFamily(p + f"connector_{name}_task_count",
                                            f"The connector's tasks in state {name} (cluster-wide).",
                                            labels=["connector"])
                    for name in ("total", "running", "paused", "failed", "unassigned", "destroyed", "restarting")}
        for connector, states in sorted(s.connector_task_states.items()):
            counts = dict.fromkeys(by_state, 0)
            counts["total"] = len(states)
            for state in states:
                key = state.lower()
                if key in counts:
                    counts[key] += 1
            for name, family in by_state.items():
                family.add_metric([connector], counts[name])
        yield from by_state.values()

    def _connectors(self) -> Iterator[Metric]:
        status = GaugeMetricFamily("kafka_connect_connector_metrics_status",
                                   "1 for the connector's status (connector-metrics status).",
                                   labels=["connector", "status"])
        for connector, state in sorted(self._snapshot.connectors.items()):
            status.add_metric([connector, state.lower()], 1)
        yield status

    def _tasks(self) -> Iterator[Metric]:
        labels = ["connector", "task"]
        ct = "kafka_connect_connector_task_metrics_"
        task_status = GaugeMetricFamily(ct + "status", "1 for the task's status.", labels=[*labels, "status"])
        batch_max = GaugeMetricFamily(ct + "batch_size_max", "Largest batch (records).", labels=labels)
        batch_avg = GaugeMetricFamily(ct + "batch_size_avg", "Mean batch size (records).", labels=labels)
        commit_max = GaugeMetricFamily(ct + "offset_commit_max_time_ms", "Slowest offset commit.", labels=labels)
        commit_avg = GaugeMetricFamily(ct + "offset_commit_avg_time_ms", "Mean offset commit time.", labels=labels)
        commit_ok = GaugeMetricFamily(ct + "offset_commit_success_percentage",
                                      "Share of offset commits that completed (0-1).", labels=labels)
        commit_bad = GaugeMetricFamily(ct + "offset_commit_failure_percentage",
                                       "Share of offset commits that failed (0-1).", labels=labels)
        so = "kafka_connect_source_task_metrics_"
        polled = CounterMetricFamily(so + "source_record_poll", "Records polled from the task.", labels=labels)
        written = CounterMetricFamily(so + "source_record_write", "Records handed to the producer.", labels=labels)
        si = "kafka_connect_sink_task_metrics_"
        read = CounterMetricFamily(si + "sink_record_read", "Records read from Kafka.", labels=labels)
        send = CounterMetricFamily(si + "sink_record_send", "Records given to put().", labels=labels)
        completions = CounterMetricFamily(si + "offset_commit_completion", "Offset commits completed.",
                                          labels=labels)
        skips = CounterMetricFamily(si + "offset_commit_skip", "Offset commits with nothing to commit.",
                                    labels=labels)
        put_max = GaugeMetricFamily(si + "put_batch_max_time_ms", "Slowest put().", labels=labels)
        put_avg = GaugeMetricFamily(si + "put_batch_avg_time_ms", "Mean put() time.", labels=labels)
        partitions = GaugeMetricFamily(si + "partition_count", "Partitions assigned to the task.", labels=labels)
        failures = GaugeMetricFamily("kafka_connect_task_error_metrics_total_record_failures",
                                     "Record processing failures (retries excluded).", labels=labels)
        error_families = {key: GaugeMetricFamily(f"kafka_connect_task_error_metrics_{key}", doc, labels=labels)
                          for key, doc in _ERROR_FAMILIES.items()}
        for t in sorted(self._snapshot.tasks, key=lambda t: (t.connector, t.task)):
            ids = [t.connector, str(t.task)]
            task_status.add_metric([*ids, t.status.lower()], 1)
            failures.add_metric(ids, t.record_failures)
            for key, family in error_families.items():
                if key in t.errors:
                    family.add_metric(ids, t.errors[key])
            m = t.metrics
            if m is None:
                continue
            attempts = m.commits + m.commit_failures
            batch_max.add_metric(ids, m.batch_max)
            batch_avg.add_metric(ids, _avg(m.batch_records, m.batches))
            commit_max.add_metric(ids, _ms(m.commit_max_ns))
            commit_avg.add_metric(ids, _avg(_ms(m.commit_ns), attempts))
            commit_ok.add_metric(ids, _avg(m.commits, attempts))
            commit_bad.add_metric(ids, _avg(m.commit_failures, attempts))
            if t.kind == "source":
                polled.add_metric(ids, m.read)
                written.add_metric(ids, m.sent)
            else:
                read.add_metric(ids, m.read)
                send.add_metric(ids, m.sent)
                completions.add_metric(ids, m.commits)
                skips.add_metric(ids, m.commit_skips)
                put_max.add_metric(ids, _ms(m.put_max_ns))
                put_avg.add_metric(ids, _avg(_ms(m.put_ns), m.puts))
                if t.partition_count is not None:
                    partitions.add_metric(ids, t.partition_count)
        yield from (task_status, batch_max, batch_avg, commit_max, commit_avg, commit_ok, commit_bad, polled, written,
                    read, send, completions, skips, put_max, put_avg, partitions, failures)
        yield from error_families.values()


_ERROR_FAMILIES = {
    "total_records_skipped": "Failed records skipped (errors.tolerance=all).",
    "total_retries": "Retried operations (retriable errors).",
    "last_error_timestamp": "Wall-clock ms of the last failure (0: none).",
    "total_errors_logged": "Failures logged (errors.log.enable).",
    "deadletterqueue_produce_requests": "Records sent to the dead letter queue topic.",
    "deadletterqueue_produce_failures": "Dead letter queue writes that failed.",
}


def _error_counts(operator: Any) -> dict[str, int]:
    """The task's error counters, from its RetryWithToleranceOperator and reporters (duck-typed)."""
    if operator is None:
        return {}
    counts = {"total_records_skipped": int(getattr(operator, "total_skipped", 0)),
              "total_retries": int(getattr(operator, "total_retries", 0)),
              "last_error_timestamp": int(getattr(operator, "last_error_ms", 0))}
    for reporter in list(getattr(operator, "reporters", ())):
        if hasattr(reporter, "logged"):
            counts["total_errors_logged"] = int(reporter.logged)
        if hasattr(reporter, "produce_requests"):
            counts["deadletterqueue_produce_requests"] = int(reporter.produce_requests)
            counts["deadletterqueue_produce_failures"] = int(reporter.produce_failures)
    counts.setdefault("total_errors_logged", 0)
    counts.setdefault("deadletterqueue_produce_requests", 0)
    counts.setdefault("deadletterqueue_produce_failures", 0)
    return counts


def task_snapshots(tasks: Iterable[tuple[Any, Any]], states: Mapping[tuple[str, int], str]) -> list[TaskSnapshot]:
    """Snapshots of ``(task id, WorkerTask)`` pairs; ``states`` from the herder's statuses."""
    out: list[TaskSnapshot] = []
    for task_id, worker_task in tasks:
        setup = getattr(worker_task, "setup", None)
        operator = getattr(setup, "operator", None)
        assignment = getattr(worker_task, "assignment", None)
        kind = "sink" if assignment is not None else "source"
        out.append(TaskSnapshot(
            connector=task_id.connector, task=task_id.task, kind=kind,
            status=states.get((task_id.connector, task_id.task), "UNASSIGNED"),
            metrics=getattr(worker_task, "metrics", None),
            record_failures=int(getattr(operator, "total_failures", 0)),
            partition_count=len(assignment) if assignment is not None else None,
            errors=_error_counts(operator),
        ))
    return out
