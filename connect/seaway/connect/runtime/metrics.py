"""Kafka Connect's task and worker metrics, as jmx_exporter names the JMX beans without rules.

Kafka Connect registers ``kafka.connect:type=sink-task-metrics,connector=c,task=0`` with
attributes such as ``sink-record-read-total``; jmx_exporter's default naming (domain, type,
attribute, lower-cased, ``-`` to ``_``) turns that into
``kafka_connect_sink_task_metrics_sink_record_read_total{connector="c",task="0"}``. A
string attribute (``status``, ``leader-name``) becomes a label of a series whose value is 1,
as jmx_exporter does for strings it is told to keep. docs/metrics.md lists every family.

Cost: each task thread owns one :class:`TaskMetrics` and records once per batch (a poll, a
put, a commit), never per record; nothing is locked. The REST server's ``/metrics`` reads
them when scraped (:class:`WorkerCollector`); a reading mid-batch is one batch behind, as any
scrape is. Averages, maxima and percentages are over Kafka's sampled window
(:class:`SampledWindow`: ``metrics.num.samples`` samples of ``metrics.sample.window.ms``),
totals over the worker's life, as Kafka's ``Avg``/``Max``/``Frequencies`` and
``CumulativeSum``.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

if TYPE_CHECKING:
    from seaway.connect.runtime.herder import ConnectorTaskId
    from seaway.connect.runtime.worker import StatusListener
    from seaway.connect.runtime.worker_settings import WorkerSettings

__all__ = ["RECORDING", "RebalanceMetrics", "SampleConfig", "SampledWindow", "StartupListener", "TaskMetrics",
           "TaskSnapshot", "WorkerCollector", "WorkerMetricsGroup", "WorkerSnapshot", "new_task_metrics"]

RECORDING = True
"""Whether new tasks record metrics. Benchmarks switch it off to measure what recording costs
(bench/connect_pipeline.py --metrics off); a worker always records."""

_perf_ns = time.perf_counter_ns


def _now_ms() -> float:
    """The clock of the sampled windows: monotonic milliseconds (the same clock as the task timings)."""
    return _perf_ns() / 1e6


@dataclass(frozen=True, slots=True)
class SampleConfig:
    """Kafka's ``MetricConfig`` for sampled stats: the worker's ``metrics.sample.window.ms`` and
    ``metrics.num.samples`` (Kafka's defaults 30000 and 2: a statistic covers the last 30-60 s)."""

    window_ms: int = 30_000
    samples: int = 2

    @classmethod
    def of(cls, settings: WorkerSettings) -> SampleConfig:
        """From a worker's parsed settings."""
        return cls(settings.metrics_sample_window_ms, settings.metrics_num_samples)


DEFAULT_SAMPLES = SampleConfig()


class SampledWindow:
    """Kafka's ``SampledStat`` holding count, total and maximum per sample: ``Avg`` and ``Max`` at once.

    A value goes into the current sample; a sample older than ``window_ms`` is complete and
    the next record starts a new one, reusing the oldest of ``samples`` slots. A reading
    combines the samples started less than ``samples * window_ms`` ago (Kafka purges older
    ones before combining; here they are skipped, so a scrape never writes and needs no lock
    against the recording thread). The slots exist from the start (never appended to: a
    scrape between two appends would index past the shorter list) and a reused slot is
    emptied before its new start is set. With no value in that span the average and maximum
    are NaN, as Kafka's ``Avg``/``Max`` report.
    """

    __slots__ = ("_config", "_counts", "_current", "_maxima", "_starts", "_totals")

    def __init__(self, config: SampleConfig = DEFAULT_SAMPLES) -> None:
        self._config = config
        n = config.samples
        self._starts: list[float] = [-math.inf] * n  # -inf: never started, never live
        self._counts: list[int] = [0] * n
        self._totals: list[float] = [0.0] * n
        self._maxima: list[float] = [-math.inf] * n
        self._current = 0

    def record(self, value: float, now_ms: float) -> None:
        c = self._config
        i = self._current
        if self._starts[i] == -math.inf:  # the very first record
            self._starts[i] = now_ms
        elif now_ms - self._starts[i] >= c.window_ms:  # complete: advance (Kafka's SampledStat.advance)
            i = (i + 1) % c.samples
            self._counts[i], self._totals[i], self._maxima[i] = 0, 0.0, -math.inf  # emptied before it is live
            self._starts[i] = now_ms
            self._current = i
        self._counts[i] += 1
        self._totals[i] += value
        if value > self._maxima[i]:
            self._maxima[i] = value

    def _live(self, now_ms: float) -> Iterator[int]:
        expire = self._config.samples * self._config.window_ms
        return (i for i, start in enumerate(list(self._starts)) if now_ms - start < expire)

    def count(self, now_ms: float | None = None) -> int:
        now = _now_ms() if now_ms is None else now_ms
        return sum(self._counts[i] for i in self._live(now))

    def avg(self, now_ms: float | None = None) -> float:
        now = _now_ms() if now_ms is None else now_ms
        live = list(self._live(now))
        count = sum(self._counts[i] for i in live)
        return sum(self._totals[i] for i in live) / count if count else math.nan

    def max(self, now_ms: float | None = None) -> float:
        now = _now_ms() if now_ms is None else now_ms
        live = [i for i in self._live(now) if self._counts[i]]
        return max(self._maxima[i] for i in live) if live else math.nan

    def share(self, now_ms: float | None = None) -> float:
        """Of values 1.0 (yes) and 0.0 (no): the share of yes, 0 when empty (Kafka's ``Frequencies``)."""
        return self.shares(now_ms)[0]

    def shares(self, now_ms: float | None = None) -> tuple[float, float]:
        """Of values 1.0 (yes) and 0.0 (no): the shares of yes and of no, both 0 when empty.

        Each is its own count over the total, as Kafka's ``Frequencies`` computes every bin
        (``1 - yes`` would read 0.33333333333333337 for one failure in three).
        """
        now = _now_ms() if now_ms is None else now_ms
        live = list(self._live(now))
        count = sum(self._counts[i] for i in live)
        if not count:
            return 0.0, 0.0
        yes = round(sum(self._totals[i] for i in live))  # a whole number: the values are 1.0s and 0.0s
        return yes / count, (count - yes) / count


class TaskMetrics:
    """One task's counters and windows, written by its thread only (see the module docstring)."""

    __slots__ = ("batch_size", "commit_failures", "commit_ok", "commit_skips", "commit_time", "commits",
                 "put_time", "puts", "read", "sent")

    def __init__(self, config: SampleConfig = DEFAULT_SAMPLES) -> None:
        self.read = 0  # source: records polled; sink: records read from Kafka
        self.sent = 0  # source: records handed to the producer; sink: records given to put()
        self.commits = 0
        self.commit_failures = 0
        self.commit_skips = 0
        self.puts = 0
        self.batch_size = SampledWindow(config)  # batch-size-avg/-max
        self.commit_time = SampledWindow(config)  # offset-commit-avg/max-time-ms
        self.commit_ok = SampledWindow(config)  # 1 per completed commit, 0 per failed: the two percentages
        self.put_time = SampledWindow(config)  # put-batch-avg/max-time-ms

    def batch(self, records: int) -> None:
        """A poll's (source) or consumer fetch's (sink) batch of ``records``."""
        self.read += records
        self.batch_size.record(records, _now_ms())

    def source_sent(self, records: int) -> None:
        self.sent += records

    def put_done(self, records: int, started_ns: int) -> None:
        """A successful ``SinkTask.put`` of ``records`` that started at ``started_ns``."""
        now_ns = _perf_ns()
        self.sent += records
        self.puts += 1
        self.put_time.record((now_ns - started_ns) / 1e6, now_ns / 1e6)

    def commit_done(self, started_ns: int, ok: bool) -> None:
        """An offset commit attempt that started at ``started_ns``: completed or failed."""
        now_ns = _perf_ns()
        now_ms = now_ns / 1e6
        if ok:
            self.commits += 1
        else:
            self.commit_failures += 1
        self.commit_time.record((now_ns - started_ns) / 1e6, now_ms)
        self.commit_ok.record(1.0 if ok else 0.0, now_ms)

    def commit_skipped(self) -> None:
        """An offset commit with nothing new to commit (Kafka's offset-commit-skip)."""
        self.commit_skips += 1


def new_task_metrics(config: SampleConfig = DEFAULT_SAMPLES) -> TaskMetrics | None:
    """A task's metrics, or None while :data:`RECORDING` is off."""
    return TaskMetrics(config) if RECORDING else None


class WorkerMetricsGroup:
    """Kafka's ``WorkerMetricsGroup``: connector and task startup attempts, successes and failures.

    Recorded through :class:`StartupListener`, one per start of a connector or task (Kafka
    wraps the status listener the same way): its first startup report is a success, a
    failure before any is a failure; both are attempts. Several threads start things, so the
    counts are locked (a start is rare). The success/failure percentages are Kafka's
    ``Frequencies.forBooleanValues`` over the sample window: each outcome is recorded as 1.0
    (success) or 0.0 (failure) and a percentage is its share, 0 with no outcome in the window.
    """

    def __init__(self, config: SampleConfig = DEFAULT_SAMPLES) -> None:
        self.sample_config = config
        self._lock = threading.Lock()
        self.connector_success = 0
        self.connector_failure = 0
        self.task_success = 0
        self.task_failure = 0
        self.connector_results = SampledWindow(config)  # connector-startup-success/failure-percentage
        self.task_results = SampledWindow(config)  # task-startup-success/failure-percentage

    def record(self, kind: str, ok: bool, now_ms: float | None = None) -> None:
        now = _now_ms() if now_ms is None else now_ms
        with self._lock:  # one writer at a time: a window is single-writer (see SampledWindow)
            name = f"{kind}_{'success' if ok else 'failure'}"
            setattr(self, name, getattr(self, name) + 1)
            results: SampledWindow = getattr(self, f"{kind}_results")
            results.record(1.0 if ok else 0.0, now)

    def percentages(self, kind: str, now_ms: float | None = None) -> tuple[float, float]:
        """(success, failure) shares of ``kind``'s startups in the sample window, both 0 when none."""
        results: SampledWindow = getattr(self, f"{kind}_results")
        return results.shares(now_ms)

    def listener(self, delegate: StatusListener) -> StartupListener:
        return StartupListener(self, delegate)


class StartupListener:
    """The herder's status listener for one start, counting its outcome (Kafka's
    ``WorkerMetricsGroup.ConnectorStatusListener`` / ``TaskStatusListener``)."""

    def __init__(self, group: WorkerMetricsGroup, delegate: StatusListener) -> None:
        self._group = group
        self._delegate = delegate
        self._started = False
        self._suspended = False  # the connector paused or stopped before it ever started

    def _outcome(self, kind: str, ok: bool) -> None:
        if not self._started:
            self._started = ok
            self._group.record(kind, ok)

    def on_connector_startup(self, connector: str) -> None:
        # Kafka's WorkerConnector reports onStartup only when it starts from INIT; started
        # after a pause or stop (a connector created PAUSED or STOPPED, then resumed) it
        # reports onResume, which WorkerMetricsGroup does not count: no attempt, no success,
        # and a later failure still counts as a startup failure, as there.
        if not self._suspended:
            self._outcome("connector", True)
        self._delegate.on_connector_startup(connector)

    def on_connector_pause(self, connector: str) -> None:
        self._suspended = self._suspended or not self._started
        self._delegate.on_connector_pause(connector)

    def on_connector_stop(self, connector: str) -> None:
        self._suspended = self._suspended or not self._started
        self._delegate.on_connector_stop(connector)

    def on_connector_failure(self, connector: str, error: BaseException) -> None:
        self._outcome("connector", False)
        self._delegate.on_connector_failure(connector, error)

    def on_connector_shutdown(self, connector: str) -> None:
        self._delegate.on_connector_shutdown(connector)

    def on_task_startup(self, task_id: ConnectorTaskId) -> None:
        self._outcome("task", True)
        self._delegate.on_task_startup(task_id)

    def on_task_pause(self, task_id: ConnectorTaskId) -> None:
        self._delegate.on_task_pause(task_id)

    def on_task_resume(self, task_id: ConnectorTaskId) -> None:
        self._delegate.on_task_resume(task_id)

    def on_task_failure(self, task_id: ConnectorTaskId, error: BaseException) -> None:
        self._outcome("task", False)
        self._delegate.on_task_failure(task_id, error)

    def on_task_shutdown(self, task_id: ConnectorTaskId) -> None:
        self._delegate.on_task_shutdown(task_id)

    def on_topic(self, task_id: ConnectorTaskId, topic: str) -> None:
        self._delegate.on_topic(task_id, topic)

    def __getattr__(self, name: str) -> Any:  # anything else the herder's listener offers
        return getattr(self._delegate, name)


class RebalanceMetrics:
    """Kafka's ``DistributedHerder.HerderMetrics`` (connect-worker-rebalance-metrics).

    A rebalance starts when the worker receives its assignment (epoch = the generation) and
    succeeds once the herder has started its work; its time is that span, as Kafka measures
    it. Written and read on the herder's event loop.
    """

    def __init__(self, config: SampleConfig = DEFAULT_SAMPLES, clock: Callable[[], float] = _now_ms,
                 leader: Callable[[], str | None] | None = None) -> None:
        self._clock = clock
        self._leader = leader
        self._leader_url: str | None = None
        self.epoch = -1
        self.protocol: str | None = None
        self.rebalancing = False
        self.completed = 0
        self.time = SampledWindow(config)
        self._started_ms = 0.0
        self._last_completed_ms: float | None = None

    @property
    def leader_url(self) -> str | None:
        """leader-name: the leader as the worker knows it now, read from ``leader`` when given.

        Kafka's ``leaderUrl()`` reads the herder's current assignment; a copy taken at the
        last assignment would keep naming a leader after the worker lost its membership (the
        membership forgets it then, and the REST API answers "no known leader").
        """
        return self._leader() if self._leader is not None else self._leader_url

    def started(self, generation: int, leader_url: str | None, protocol: str | None) -> None:
        self.epoch = generation
        self._leader_url = leader_url
        self.protocol = protocol
        self.rebalancing = True
        self._started_ms = self._clock()

    def succeeded(self) -> None:
        now = self._clock()
        self.rebalancing = False
        self.completed += 1
        self.time.record(max(0.0, now - self._started_ms), now)
        self._last_completed_ms = now

    def since_last_ms(self) -> float:
        """time-since-last-rebalance-ms: +Inf before the first completed rebalance, as Kafka."""
        last = self._last_completed_ms
        return math.inf if last is None else self._clock() - last


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
    tasks: list[TaskSnapshot] = field(default_factory=list)  # the tasks running on this worker
    startup: WorkerMetricsGroup | None = None
    rebalance: RebalanceMetrics | None = None
    """Distributed workers only (Kafka's standalone herder has no rebalance metrics either)."""


class WorkerCollector(Collector):
    """Metric families of one :class:`WorkerSnapshot` (one scrape)."""

    def __init__(self, snapshot: WorkerSnapshot) -> None:
        self._snapshot = snapshot

    def collect(self) -> Iterator[Metric]:
        yield from self._worker()
        yield from self._rebalance()
        yield from self._connectors()
        yield from self._tasks()

    def _worker(self) -> Iterator[Metric]:
        s = self._snapshot
        p = "kafka_connect_connect_worker_metrics_"
        yield GaugeMetricFamily(p + "connector_count", "Connectors run by this worker.", value=len(s.connectors))
        yield GaugeMetricFamily(p + "task_count", "Tasks run by this worker.", value=len(s.tasks))
        by_state = {name: GaugeMetricFamily(p + f"connector_{name}_task_count",
                                            f"The connector's tasks on this worker in state {name}.",
                                            labels=["connector"])
                    for name in ("total", "running", "paused", "failed", "unassigned", "destroyed", "restarting")}
        for connector, counts in sorted(_task_counts(s.tasks, by_state).items()):
            for name, family in by_state.items():
                family.add_metric([connector], counts[name])
        yield from by_state.values()
        startup = s.startup
        if startup is not None:
            for kind, plural in (("connector", "Connectors"), ("task", "Tasks")):
                ok, bad = getattr(startup, f"{kind}_success"), getattr(startup, f"{kind}_failure")
                yield CounterMetricFamily(p + f"{kind}_startup_attempts", f"{plural} this worker tried to start.",
                                          value=ok + bad)
                yield CounterMetricFamily(p + f"{kind}_startup_success", f"{plural} started.", value=ok)
                yield CounterMetricFamily(p + f"{kind}_startup_failure", f"{plural} that failed to start.",
                                          value=bad)
                ok_share, bad_share = startup.percentages(kind)
                yield GaugeMetricFamily(p + f"{kind}_startup_success_percentage",
                                        f"Share (0-1) of the {kind} startups in the sample window that succeeded.",
                                        value=ok_share)
                yield GaugeMetricFamily(p + f"{kind}_startup_failure_percentage",
                                        f"Share (0-1) of the {kind} startups in the sample window that failed.",
                                        value=bad_share)

    def _rebalance(self) -> Iterator[Metric]:
        r = self._snapshot.rebalance
        if r is None:
            return
        p = "kafka_connect_connect_worker_rebalance_metrics_"
        yield CounterMetricFamily(p + "completed_rebalances", "Rebalances this worker completed.", value=r.completed)
        yield GaugeMetricFamily(p + "rebalancing", "1 while a rebalance is under way.", value=int(r.rebalancing))
        yield GaugeMetricFamily(p + "epoch", "The group generation of the last assignment.", value=r.epoch)
        yield GaugeMetricFamily(p + "time_since_last_rebalance_ms", "Since the last completed rebalance (+Inf: none).",
                                value=r.since_last_ms())
        yield GaugeMetricFamily(p + "rebalance_avg_time_ms", "Mean rebalance time over the sample window.",
                                value=r.time.avg())
        yield GaugeMetricFamily(p + "rebalance_max_time_ms", "Longest rebalance over the sample window.",
                                value=r.time.max())
        leader = GaugeMetricFamily(p + "leader_name", "1, labelled with the leader's REST URL.",
                                   labels=["leader_name"])
        if r.leader_url:
            leader.add_metric([r.leader_url], 1)
        yield leader
        protocol = GaugeMetricFamily(p + "connect_protocol", "1, labelled with the Connect protocol in use.",
                                     labels=["connect_protocol"])
        if r.protocol:
            protocol.add_metric([r.protocol], 1)
        yield protocol

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
        now = _now_ms()
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
            batch_max.add_metric(ids, m.batch_size.max(now))
            batch_avg.add_metric(ids, m.batch_size.avg(now))
            commit_max.add_metric(ids, m.commit_time.max(now))
            commit_avg.add_metric(ids, m.commit_time.avg(now))
            ok_share, bad_share = m.commit_ok.shares(now)
            commit_ok.add_metric(ids, ok_share)
            commit_bad.add_metric(ids, bad_share)
            if t.kind == "source":
                polled.add_metric(ids, m.read)
                written.add_metric(ids, m.sent)
            else:
                read.add_metric(ids, m.read)
                send.add_metric(ids, m.sent)
                completions.add_metric(ids, m.commits)
                skips.add_metric(ids, m.commit_skips)
                put_max.add_metric(ids, m.put_time.max(now))
                put_avg.add_metric(ids, m.put_time.avg(now))
                if t.partition_count is not None:
                    partitions.add_metric(ids, t.partition_count)
        yield from (task_status, batch_max, batch_avg, commit_max, commit_avg, commit_ok, commit_bad, polled, written,
                    read, send, completions, skips, put_max, put_avg, partitions, failures)
        yield from error_families.values()


def _task_counts(tasks: Iterable[TaskSnapshot], names: Iterable[str]) -> dict[str, dict[str, int]]:
    """Per connector, its tasks on this worker: the total and how many are in each state.

    Kafka's ``Worker.ConnectorStatusMetricsGroup`` counts the tasks of the worker's own task
    map (their states from the herder), so the sum over the workers of a cluster is the
    connector's task count; a connector with no task here has no series on this worker.
    """
    out: dict[str, dict[str, int]] = {}
    keys = list(names)
    for t in tasks:
        counts = out.setdefault(t.connector, dict.fromkeys(keys, 0))
        counts["total"] += 1
        state = t.status.lower()
        if state in counts and state != "total":
            counts[state] += 1
    return out


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
