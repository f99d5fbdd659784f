"""Kafka's sampled statistics (``SampledStat``: ``Avg``, ``Max``, ``Frequencies``) with an injected clock.

A value counts for ``metrics.num.samples`` windows of ``metrics.sample.window.ms`` after the
sample it went into started, then drops out; an empty window reads NaN (average, maximum) or
0 (a share), as Kafka's stats read.
"""

from __future__ import annotations

import math

from seaway.connect.runtime.metrics import RebalanceMetrics, SampleConfig, SampledWindow

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
