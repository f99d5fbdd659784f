"""Key figures from the Prometheus ``/metrics`` the broker, the workers and the registry already serve.

The health page scrapes each endpoint when it is shown (it refreshes itself every few seconds)
and turns counters into rates against the previous scrape of the same URL: throughput from
the broker's ``BrokerTopicMetrics`` and the workers' task counters, request latency from the
latency histograms (the mean over the interval, and the 99th percentile bucket), rebalances
from Connect's rebalance counter. Names are those docs/metrics.md lists (Kafka's JMX names as
jmx_exporter spells them), so a Kafka broker behind jmx_exporter's usual rules works as well.

The parser reads only the families asked for, line by line: a broker with a thousand topics
exports tens of thousands of samples and ``prometheus_client``'s full parser would cost the
page a large share of its budget.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

__all__ = ["Sample", "Scrape", "Snapshot", "broker_figures", "connect_figures", "parse_families",
           "registry_figures", "topic_sizes"]

_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


@dataclass(frozen=True, slots=True)
class Sample:
    name: str
    labels: Mapping[str, str]
    value: float


def _value(text: str) -> float:
    text = text.strip().split(" ")[0]
    if text in ("NaN", "+Inf", "-Inf"):
        return float(text.replace("Inf", "inf").replace("NaN", "nan"))
    return float(text)


def parse_families(text: str, prefixes: Iterable[str]) -> list[Sample]:
    """The samples whose name starts with one of ``prefixes`` (a malformed line is skipped)."""
    wanted = tuple(prefixes)
    out: list[Sample] = []
    for line in text.splitlines():
        if not line or line[0] == "#" or not line.startswith(wanted):
            continue
        brace = line.find("{")
        try:
            if brace >= 0:
                close = line.rindex("}")
                name, labels = line[:brace], dict(_LABEL.findall(line[brace + 1:close]))
                value = _value(line[close + 1:])
            else:
                name, _, rest = line.partition(" ")
                labels, value = {}, _value(rest)
        except ValueError:
            continue
        out.append(Sample(name, labels, value))
    return out


def _total(samples: Iterable[Sample], name: str, **match: str) -> float | None:
    values = [s.value for s in samples if s.name == name and all(s.labels.get(k) == v for k, v in match.items())]
    return sum(values) if values else None


@dataclass
class Scrape:
    """One scrape: when, and the totals the figures are computed from."""

    at: float
    totals: dict[str, float] = field(default_factory=dict)


@dataclass
class Snapshot:
    """What the page shows for one endpoint: figures (name -> text) and whether it answered."""

    url: str
    up: bool
    figures: dict[str, str] = field(default_factory=dict)
    error: str | None = None


def _rate(now: Scrape, before: Scrape | None, key: str) -> float | None:
    if before is None or key not in now.totals or key not in before.totals or now.at <= before.at:
        return None
    return max(0.0, (now.totals[key] - before.totals[key]) / (now.at - before.at))


def _p99_bucket(samples: Iterable[Sample], name: str) -> float | None:
    """The upper bound of the bucket holding the 99th percentile, summed over every label set."""
    buckets: dict[float, float] = {}
    for s in samples:
        if s.name == name and "le" in s.labels:
            le = math.inf if s.labels["le"] == "+Inf" else float(s.labels["le"])
            buckets[le] = buckets.get(le, 0.0) + s.value
    if not buckets:
        return None
    total = buckets.get(math.inf, max(buckets.values()))
    if total <= 0:
        return None
    for le in sorted(buckets):
        if buckets[le] >= 0.99 * total:
            return le
    return None


def _fmt(value: float | None, unit: str = "", digits: int = 1) -> str:
    if value is None or math.isnan(value):
        return "—"
    if math.isinf(value):
        return "> max bucket"
    if abs(value) >= 1e6:
        return f"{value / 1e6:.{digits}f} M{unit}"
    if abs(value) >= 1e4:
        return f"{value / 1e3:.{digits}f} k{unit}"
    return f"{value:.{digits}f}{(' ' + unit) if unit else ''}"


def _latency(samples: list[Sample], family: str, now: Scrape, before: Scrape | None, **match: str
             ) -> tuple[str, str]:
    sum_key, count_key = f"{family}_sum{match}", f"{family}_count{match}"
    now.totals[sum_key] = _total(samples, f"{family}_sum", **match) or 0.0
    now.totals[count_key] = _total(samples, f"{family}_count", **match) or 0.0
    mean: float | None = None
    if before is not None and count_key in before.totals:
        count = now.totals[count_key] - before.totals[count_key]
        if count > 0:
            mean = (now.totals[sum_key] - before.totals[sum_key]) / count
    elif now.totals[count_key] > 0:
        mean = now.totals[sum_key] / now.totals[count_key]
    return _fmt(mean, "ms"), _fmt(_p99_bucket([s for s in samples if all(s.labels.get(k) == v
                                                                            for k, v in match.items())],
                                              f"{family}_bucket"), "ms", 0)


def broker_figures(text: str, before: Scrape | None) -> tuple[dict[str, str], Scrape]:
    samples = parse_families(text, ("kafka_server_brokertopicmetrics_", "kafka_network_requestmetrics_",
                                    "kafka_server_socket_server_metrics_connection_count",
                                    "kafka_coordinator_group_groupmetadatamanager_numgroups"))
    now = Scrape(time.monotonic())
    for key in ("messagesin_total", "bytesin_total", "bytesout_total"):
        now.totals[key] = _total(samples, f"kafka_server_brokertopicmetrics_{key}") or 0.0
    produce_mean, produce_p99 = _latency(samples, "kafka_network_requestmetrics_totaltimems", now, before,
                                         request="Produce")
    fetch_mean, fetch_p99 = _latency(samples, "kafka_network_requestmetrics_totaltimems", now, before,
                                     request="Fetch")
    figures = {
        "messages in": _fmt(_rate(now, before, "messagesin_total"), "/s"),
        "bytes in": _fmt(_rate(now, before, "bytesin_total"), "B/s"),
        "bytes out": _fmt(_rate(now, before, "bytesout_total"), "B/s"),
        "produce latency (mean / p99)": f"{produce_mean} / {produce_p99}",
        "fetch latency (mean / p99)": f"{fetch_mean} / {fetch_p99}",
        "connections": _fmt(_total(samples, "kafka_server_socket_server_metrics_connection_count"), digits=0),
        "groups": _fmt(_total(samples, "kafka_coordinator_group_groupmetadatamanager_numgroups"), digits=0),
    }
    return figures, now


def connect_figures(text: str, before: Scrape | None) -> tuple[dict[str, str], Scrape]:
    samples = parse_families(text, ("kafka_connect_connect_worker_", "kafka_connect_source_task_metrics_source_record",
                                    "kafka_connect_sink_task_metrics_sink_record"))
    now = Scrape(time.monotonic())
    now.totals["written"] = _total(samples, "kafka_connect_source_task_metrics_source_record_write_total") or 0.0
    now.totals["sent"] = _total(samples, "kafka_connect_sink_task_metrics_sink_record_send_total") or 0.0
    rebalances = _total(samples, "kafka_connect_connect_worker_rebalance_metrics_completed_rebalances_total")
    figures = {
        "connectors": _fmt(_total(samples, "kafka_connect_connect_worker_metrics_connector_count"), digits=0),
        "tasks": _fmt(_total(samples, "kafka_connect_connect_worker_metrics_task_count"), digits=0),
        "source records written": _fmt(_rate(now, before, "written"), "/s"),
        "sink records sent": _fmt(_rate(now, before, "sent"), "/s"),
        "rebalances": _fmt(rebalances, digits=0),
        "rebalancing": "yes" if _total(samples, "kafka_connect_connect_worker_rebalance_metrics_rebalancing") else "no",
        "failed task starts": _fmt(_total(samples, "kafka_connect_connect_worker_metrics_task_startup_failure_total"),
                                   digits=0),
    }
    return figures, now


def registry_figures(text: str, before: Scrape | None) -> tuple[dict[str, str], Scrape]:
    samples = parse_families(text, ("kafka_schema_registry_", "seaway_schema_registry_"))
    now = Scrape(time.monotonic())
    now.totals["errors"] = _total(samples, "kafka_schema_registry_jersey_metrics_request_error_total") or 0.0
    mean, p99 = _latency(samples, "kafka_schema_registry_jersey_metrics_request_latency_ms", now, before)
    leader = _total(samples, "kafka_schema_registry_master_slave_role_master_slave_role")
    figures = {
        "role": "—" if leader is None else ("leader" if leader else "follower"),
        "subjects": _fmt(_total(samples, "seaway_schema_registry_subjects"), digits=0),
        "schemas": _fmt(_total(samples, "seaway_schema_registry_schemas"), digits=0),
        "request latency (mean / p99)": f"{mean} / {p99}",
        "errors": _fmt(_rate(now, before, "errors"), "/s", 2),
    }
    return figures, now


def topic_sizes(text: str) -> dict[tuple[str, int], int]:
    """Bytes per (topic, partition) from the broker's ``kafka_log_log_size`` gauges."""
    out: dict[tuple[str, int], int] = {}
    for s in parse_families(text, ("kafka_log_log_size",)):
        if s.name == "kafka_log_log_size" and "topic" in s.labels and "partition" in s.labels:
            try:
                out[(s.labels["topic"], int(s.labels["partition"]))] = int(s.value)
            except ValueError:
                continue
    return out
