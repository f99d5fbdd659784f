"""Kafka's sampled statistics (``SampledStat``: ``Avg``, ``Max``, ``Frequencies``) with an injected clock.

A value counts for ``metrics.num.samples`` windows of ``metrics.sample.window.ms`` after the
sample it went into started, then drops out; an empty window reads NaN (average, maximum) or
0 (a share), as Kafka's stats read.
"""

from __future__ import annotations

import math
import time

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families
from seaway.connect.runtime.distributed.config import DistributedConfig
from seaway.connect.runtime.distributed.connect_protocol import NO_ERROR, ExtendedAssignment, encode_assignment
from seaway.connect.runtime.distributed.kafka_stores import KafkaConfigBackingStore
from seaway.connect.runtime.distributed.membership import WorkerMembership
from seaway.connect.runtime.metrics import (
    RebalanceMetrics,
    SampleConfig,
    SampledWindow,
    TaskMetrics,
    TaskSnapshot,
    WorkerCollector,
    WorkerMetricsGroup,
    WorkerSnapshot,
)

CONFIG = SampleConfig(window_ms=1000, samples=2)


def test_empty_window_reads_nan_and_zero_share() -> None:
    w = SampledWindow(CONFIG)
    assert math.isnan(w.avg(0)) and math.isnan(w.max(0))
    assert w.share(0) == 0.0 and w.count(0) == 0


def test_values_age_out_after_the_samples_span() -> None:
    w = SampledWindow(CONFIG)
    w.record(10, 0)
    w.record(20, 500)  # same sample (started at 0)
    assert w.avg(900) == 15 and w.max(900) == 20
    w.record(40, 1200)  # the first sample is complete: a second one starts at 1200
    assert w.avg(1500) == (10 + 20 + 40) / 3 and w.max(1500) == 40
    assert w.avg(2100) == 40 and w.max(2100) == 40  # the sample of 0 is 2100 ms old: past 2 x 1000
    w.record(1, 2300)  # complete again: reuses the oldest slot
    assert w.avg(2400) == (40 + 1) / 2 and w.max(2400) == 40
    assert math.isnan(w.avg(5000)) and math.isnan(w.max(5000))  # a lifetime average would still be 20.2


def test_share_is_the_frequency_of_ones() -> None:
    w = SampledWindow(CONFIG)
    for ok in (1.0, 1.0, 0.0, 1.0):
        w.record(ok, 100)
    assert w.share(200) == 0.75 and w.count(200) == 4


def test_rebalance_metrics_time_and_since_last() -> None:
    now = [0.0]
    r = RebalanceMetrics(CONFIG, clock=lambda: now[0])
    assert r.since_last_ms() == math.inf and r.epoch == -1 and not r.rebalancing
    r.started(3, "http://w1:8083", "SESSIONED")
    assert r.rebalancing and r.epoch == 3
    now[0] = 250.0
    r.succeeded()
    now[0] = 400.0
    assert not r.rebalancing and r.completed == 1 and r.since_last_ms() == 150
    assert r.time.avg(400) == 250 and r.time.max(400) == 250
    assert math.isnan(r.time.avg(2500))  # out of the window: Kafka's avg is not a lifetime average


def test_shares_are_each_bins_own_count_over_the_total() -> None:
    w = SampledWindow(CONFIG)
    for ok in (1.0, 1.0, 0.0):
        w.record(ok, 100)
    assert w.shares(200) == (2 / 3, 1 / 3)  # not 1 - 2/3 = 0.33333333333333337
    assert SampledWindow(CONFIG).shares(0) == (0.0, 0.0)


def test_slots_exist_before_any_record() -> None:
    """A scrape between the recorder's list appends could index past a shorter list: no appends at all."""
    w = SampledWindow(SampleConfig(window_ms=10, samples=3))
    assert w.count(0) == 0 and math.isnan(w.avg(0))
    for t in range(0, 100, 5):  # every slot used and reused
        w.record(t, t)
        assert w.count(t) >= 1 and w.max(t) == t


def test_startup_percentages_over_the_window() -> None:
    g = WorkerMetricsGroup(CONFIG)
    assert g.percentages("connector", 0) == (0.0, 0.0)  # Kafka's Frequencies with no outcome: 0, not NaN
    g.record("connector", True, 0)
    g.record("connector", False, 10)
    g.record("connector", True, 20)
    g.record("task", False, 20)
    assert g.percentages("connector", 30) == (2 / 3, 1 / 3)
    assert g.percentages("task", 30) == (0.0, 1.0)
    assert (g.connector_success, g.connector_failure, g.task_failure) == (2, 1, 1)  # totals: the worker's life
    assert g.percentages("connector", 5000) == (0.0, 0.0)  # aged out of the window


def test_rendered_text_parses_nan_inf_escaped_labels_and_exact_percentages() -> None:
    """What a Prometheus server reads: NaN averages (Kafka's empty Avg), +Inf, a leader URL that needs
    escaping, and a failure percentage that is exactly one in three."""
    m = TaskMetrics(CONFIG)
    start = time.perf_counter_ns()
    for ok in (True, True, False):
        m.commit_done(start, ok)
    task = TaskSnapshot(connector='c"1', task=0, kind="sink", status="RUNNING", metrics=m, record_failures=0,
                        partition_count=1)
    leader = 'http://a\\b"c\nd:8083'
    r = RebalanceMetrics(CONFIG, leader=lambda: leader)
    registry = CollectorRegistry()
    registry.register(WorkerCollector(WorkerSnapshot(connectors={}, tasks=[task],
                                                     startup=WorkerMetricsGroup(CONFIG), rebalance=r)))
    text = generate_latest(registry).decode()
    samples = {(s.name, tuple(sorted(s.labels.items()))): s.value
               for family in text_string_to_metric_families(text) for s in family.samples}
    ids = (("connector", 'c"1'), ("task", "0"))
    assert samples[("kafka_connect_connector_task_metrics_offset_commit_failure_percentage", ids)] == 1 / 3
    assert samples[("kafka_connect_connector_task_metrics_offset_commit_success_percentage", ids)] == 2 / 3
    assert math.isnan(samples[("kafka_connect_connector_task_metrics_batch_size_avg", ids)])
    assert math.isnan(samples[("kafka_connect_sink_task_metrics_put_batch_avg_time_ms", ids)])
    p = "kafka_connect_connect_worker_rebalance_metrics_"
    assert samples[(p + "time_since_last_rebalance_ms", ())] == math.inf
    assert math.isnan(samples[(p + "rebalance_avg_time_ms", ())])
    assert samples[(p + "leader_name", (("leader_name", leader),))] == 1
    w = "kafka_connect_connect_worker_metrics_"
    assert samples[(w + "connector_startup_success_percentage", ())] == 0
    assert samples[(w + "task_startup_failure_percentage", ())] == 0


class _Herder:
    """The membership's listener (the herder's side of AssignmentListener): records what it is told."""

    def __init__(self) -> None:
        self.revoked: list[str] = []

    def on_assignment(self, assignment: ExtendedAssignment, generation: int) -> None:
        pass

    def on_revoke_all(self, reason: str) -> None:
        self.revoked.append(reason)


async def test_leader_name_is_gone_once_the_membership_is_lost() -> None:
    """A worker whose membership expired knows no leader (its REST API answers 409 "no known leader"):
    leader-name must not keep naming the last one."""
    config = DistributedConfig({"group.id": "g", "config.storage.topic": "c", "offset.storage.topic": "o",
                                "status.storage.topic": "s", "key.converter": "StringConverter",
                                "value.converter": "StringConverter", "bootstrap.servers": "127.0.0.1:1"})
    store = KafkaConfigBackingStore("c", {"bootstrap.servers": "127.0.0.1:1"}, {"bootstrap.servers": "127.0.0.1:1"})
    herder = _Herder()
    m = WorkerMembership(config, "http://w1:8083", store, herder)
    leader = "http://w0:8083"
    mine = ExtendedAssignment(2, NO_ERROR, "member-0", leader, 5, connectors=("c",))
    await m.on_join_complete(7, "member-1", "member-0", "sessioned", encode_assignment(mine))
    assert (m.rebalance.leader_url, m.rebalance.epoch, m.rebalance.protocol) == (leader, 7, "SESSIONED")
    await m.on_join_prepare(7, "member-1", lost=True)
    assert herder.revoked == ["group membership lost"]
    assert m.leader_url is None and m.rebalance.leader_url is None
    registry = CollectorRegistry()
    registry.register(WorkerCollector(WorkerSnapshot(connectors={}, rebalance=m.rebalance)))
    assert "leader_name{" not in generate_latest(registry).decode()
