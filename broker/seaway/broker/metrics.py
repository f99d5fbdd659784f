"""The broker's Prometheus metrics: Kafka's JMX names as jmx_exporter's Kafka rules export them.

Kafka has no HTTP metrics port; operators run jmx_exporter with its ``kafka-2_0_0.yml``
rules, which turn ``kafka.server<type=BrokerTopicMetrics, name=MessagesInPerSec,
topic=t><>Count`` into ``kafka_server_brokertopicmetrics_messagesin_total{topic="t"}``.
Seaway serves the same names itself on ``metrics.listener`` (off unless set), so dashboards
and alerts written for Kafka work unchanged. docs/metrics.md lists every family. With an
authorizer the listener asks for a broker user's credentials and shows each scraper only the
topics and groups its ACLs let it describe (:mod:`seaway.broker.metrics_http`).

Why plain integers and a custom collector: the produce and fetch handlers run once per
request on the event loop, and prometheus_client's ``Counter.inc`` takes a lock per call.
Here a handler adds to a list slot in a dict (per topic per request, never per record) and
the numbers become metric families only when Prometheus scrapes, on the HTTP server's
thread. The scrape copies each dict with ``list(d.items())`` (atomic under the GIL), so
it never sees a dict change size under it; a counter read mid-request is at most one
request behind, which is what any scrape is.

Gauges (log size per partition, connections, groups by state) are computed at scrape
time from the live objects, so they cost nothing between scrapes.
"""

from __future__ import annotations

import bisect
import ssl
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol
from wsgiref.simple_server import WSGIServer

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector
from seaway.broker.handlers.registry import HANDLERS
from seaway.broker.lag_metrics import BrokerLag
from seaway.broker.metrics_http import BrokerUsers, MetricsAccess, WsgiApp, metrics_app, serve

if TYPE_CHECKING:
    from seaway.broker.context import BrokerContext

__all__ = [
    "LATENCY_BUCKETS_MS",
    "BrokerMetrics",
    "BrokerMetricsCollector",
    "MetricsEndpoint",
    "MetricsServer",
    "parse_metrics_listener",
]

LATENCY_BUCKETS_MS: tuple[float, ...] = (0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000)
"""Upper bounds (ms) of the request latency histogram; fetch long polls land in the top ones."""

_perf_ns = time.perf_counter_ns


_BOUNDS_NS: tuple[int, ...] = tuple(int(ms * 1_000_000) for ms in LATENCY_BUCKETS_MS)

# The slots of a topic's counter list (one list per topic: one dict lookup per request).
MESSAGES_IN, BYTES_IN, PRODUCE_REQUESTS, FAILED_PRODUCE, BYTES_OUT, FETCH_REQUESTS, FAILED_FETCH = range(7)
# A request stats list: non-cumulative bucket counts (the last one +Inf), then the sum in ns.
_SUM_NS = len(LATENCY_BUCKETS_MS) + 1


class BrokerMetrics:
    """The counters the hot paths update, one slot per topic or API (never per record).

    Plain lists of ints in dicts: a produce request costs one dict lookup per topic and one
    per request (measured in docs/metrics.md). Everything is written on the event loop thread
    only; the scrape thread only reads.
    """

    __slots__ = ("requests", "topics")

    def __init__(self) -> None:
        self.topics: dict[str, list[int]] = {}
        """Topic -> counters indexed by MESSAGES_IN ... FAILED_FETCH."""
        self.requests: dict[int, list[int]] = {}
        """API key -> latency bucket counts, then the summed latency in ns."""

    def _topic(self, topic: str) -> list[int]:
        slots = self.topics.get(topic)
        if slots is None:
            slots = self.topics[topic] = [0] * 7
        return slots

    def produced(self, topic: str, messages: int, nbytes: int, failed: int) -> None:
        """One produce request's share for ``topic``: records and bytes appended, partitions refused.

        Kafka counts TotalProduceRequestsPerSec once per topic of a request and
        FailedProduceRequestsPerSec once per failed partition append.
        """
        slots = self.topics.get(topic) or self._topic(topic)
        slots[MESSAGES_IN] += messages
        slots[BYTES_IN] += nbytes
        slots[PRODUCE_REQUESTS] += 1
        if failed:
            slots[FAILED_PRODUCE] += failed

    def fetched(self, responses: Iterable[Any]) -> None:
        """A fetch response's bytes out and failed partitions per topic (once per request)."""
        for topic in responses:
            nbytes = errors = 0
            for part in topic.partitions:
                if part.error_code:
                    errors += 1
                elif part.records:
                    nbytes += len(part.records)
            slots = self.topics.get(topic.topic) or self._topic(topic.topic)
            slots[FETCH_REQUESTS] += 1
            slots[BYTES_OUT] += nbytes
            if errors:
                slots[FAILED_FETCH] += errors

    def request_done(self, api_key: int, started_ns: int) -> None:
        """Count one answered request of ``api_key`` that started at ``started_ns`` (perf_counter_ns)."""
        elapsed = _perf_ns() - started_ns
        stats = self.requests.get(api_key)
        if stats is None:
            stats = self.requests[api_key] = [0] * (_SUM_NS + 1)
        stats[bisect.bisect_left(_BOUNDS_NS, elapsed)] += 1
        stats[_SUM_NS] += elapsed


class _Listener(Protocol):
    listener: str


_CLASSIC_STATES = ("PreparingRebalance", "CompletingRebalance", "Stable", "Dead", "Empty")


class BrokerMetricsCollector(Collector):
    """Turns :class:`BrokerMetrics` and the broker's live state into metric families per scrape."""

    def __init__(self, context: BrokerContext, connections: Callable[[], Iterable[_Listener]],
                 lag: BrokerLag | None = None) -> None:
        self._context = context
        self._connections = connections
        self._lag = lag

    def collect(self) -> Iterator[Metric]:
        metrics = self._context.metrics
        if metrics is not None:
            yield from self._topic_counters(metrics)
            yield from self._request_metrics(metrics)
        yield self._connection_count()
        yield from self._log_gauges()
        yield from self._group_gauges()
        if self._lag is not None:
            yield from self._lag.collect()

    @staticmethod
    def _topic_counters(m: BrokerMetrics) -> Iterator[Metric]:
        prefix = "kafka_server_brokertopicmetrics_"
        topics = sorted(m.topics.items())
        for slot, name, doc in (
            (MESSAGES_IN, "messagesin", "Records appended (MessagesInPerSec)."),
            (BYTES_IN, "bytesin", "Record batch bytes appended (BytesInPerSec)."),
            (BYTES_OUT, "bytesout", "Record bytes served to fetches (BytesOutPerSec)."),
            (PRODUCE_REQUESTS, "totalproducerequests", "Produce requests per topic (TotalProduceRequestsPerSec)."),
            (FETCH_REQUESTS, "totalfetchrequests", "Fetch requests per topic (TotalFetchRequestsPerSec)."),
            (FAILED_PRODUCE, "failedproducerequests", "Partition appends refused (FailedProduceRequestsPerSec)."),
            (FAILED_FETCH, "failedfetchrequests", "Partition reads failed (FailedFetchRequestsPerSec)."),
        ):
            family = CounterMetricFamily(prefix + name, doc, labels=["topic"])
            for topic, slots in topics:
                family.add_metric([topic], slots[slot])
            yield family

    @staticmethod
    def _request_metrics(m: BrokerMetrics) -> Iterator[Metric]:
        requests = CounterMetricFamily("kafka_network_requestmetrics_requests",
                                       "Requests answered per API (RequestsPerSec).", labels=["request"])
        latency = HistogramMetricFamily("kafka_network_requestmetrics_totaltimems",
                                        "Time from reading a request to sending its response, ms (TotalTimeMs).",
                                        labels=["request"])
        for api_key, stats in sorted(m.requests.items()):
            spec = HANDLERS.get(api_key)
            name = spec.name if spec is not None else str(api_key)
            snapshot = list(stats)
            counts, sum_ms = snapshot[:_SUM_NS], snapshot[_SUM_NS] / 1e6
            total = sum(counts)
            requests.add_metric([name], total)
            cumulative: list[tuple[str, float]] = []
            running = 0
            for bound, count in zip((*LATENCY_BUCKETS_MS, float("inf")), counts, strict=True):
                running += count
                cumulative.append(("+Inf" if bound == float("inf") else f"{bound:g}", running))
            latency.add_metric([name], cumulative, sum_value=sum_ms)
        yield requests
        yield latency

    def _connection_count(self) -> Metric:
        family = GaugeMetricFamily("kafka_server_socket_server_metrics_connection_count",
                                   "Open client connections per listener (socket-server-metrics connection-count).",
                                   labels=["listener"])
        counts: dict[str, int] = {}
        for conn in list(self._connections()):
            counts[conn.listener] = counts.get(conn.listener, 0) + 1
        for endpoint in self._context.endpoints:
            counts.setdefault(endpoint.name, 0)
        for listener, count in sorted(counts.items()):
            family.add_metric([listener], count)
        return family

    def _log_gauges(self) -> Iterator[Metric]:
        size = GaugeMetricFamily("kafka_log_log_size", "Bytes of a partition's segments (Log Size).",
                                 labels=["topic", "partition"])
        end = GaugeMetricFamily("kafka_log_log_logendoffset", "A partition's log end offset (LogEndOffset).",
                                labels=["topic", "partition"])
        start = GaugeMetricFamily("kafka_log_log_logstartoffset", "A partition's log start offset (LogStartOffset).",
                                  labels=["topic", "partition"])
        segments = GaugeMetricFamily("kafka_log_log_numlogsegments", "Segments of a partition (NumLogSegments).",
                                     labels=["topic", "partition"])
        logs = self._context.logs
        for topic, meta in sorted(logs.topics().items()):
            for partition in range(meta.num_partitions):
                plog = logs.get_log(topic, partition)
                if plog is None:
                    continue
                labels = [topic, str(partition)]
                size.add_metric(labels, plog.size_bytes)
                end.add_metric(labels, plog.log_end_offset)
                start.add_metric(labels, plog.log_start_offset)
                segments.add_metric(labels, len(plog.segments()))
        yield from (size, end, start, segments)

    def _group_gauges(self) -> Iterator[Metric]:
        coordinator = self._context.components.group_coordinator
        if coordinator is None:
            return
        counts = dict.fromkeys(_CLASSIC_STATES, 0)
        total = 0
        for group in list(coordinator.groups.values()):
            total += 1
            state = group.state.value
            counts[state] = counts.get(state, 0) + 1
        prefix = "kafka_coordinator_group_groupmetadatamanager_"
        yield GaugeMetricFamily(prefix + "numgroups", "Groups on this coordinator (NumGroups).", value=total)
        by_state = GaugeMetricFamily(
            "kafka_server_group_coordinator_metrics_group_count",
            "Groups by state, classic and KIP-848 consumer groups together (group-coordinator-metrics).",
            labels=["state"])
        for state, count in sorted(counts.items()):
            by_state.add_metric([state], count)
            if state in _CLASSIC_STATES:
                yield GaugeMetricFamily(prefix + "numgroups" + state.lower(),
                                        f"Groups in state {state} (NumGroups{state}).", value=count)
        yield by_state


@dataclass(frozen=True, slots=True)
class MetricsEndpoint:
    """Where ``/metrics`` listens: ``metrics.listener`` parsed."""

    host: str
    port: int
    https: bool = False

    def url(self, port: int | None = None) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{'https' if self.https else 'http'}://{host}:{self.port if port is None else port}/metrics"


def parse_metrics_listener(value: str) -> MetricsEndpoint | None:
    """``metrics.listener`` as an endpoint, None when empty (off); ValueError names the problem.

    Accepts ``host:port``, ``[v6]:port``, ``http://host:port`` or ``https://host:port`` (TLS with
    the broker's ``ssl.*`` settings); port 0 binds an ephemeral one.
    """
    text = value.strip()
    if not text:
        return None
    https = text.lower().startswith("https://")
    if https:
        text = text[len("https://"):]
    elif text.lower().startswith("http://"):
        text = text[len("http://"):]
    host, sep, port_text = text.rpartition(":")
    if not sep or not port_text.isdigit():
        raise ValueError(f"metrics.listener={value!r}: expected host:port (e.g. 127.0.0.1:9308) or "
                         "https://host:port")
    port = int(port_text)
    if port > 65535:
        raise ValueError(f"metrics.listener={value!r}: port {port} is out of range")
    host = host.strip("[]") or "127.0.0.1"
    return MetricsEndpoint(host, port, https)


class MetricsServer:
    """``/metrics`` over HTTP(S) on its own threads (:mod:`seaway.broker.metrics_http`).

    Threads, not the event loop: a slow scraper (or a large scrape) never stalls a produce.
    Prometheus's text format (and OpenMetrics, gzip) is all it serves; it reads no request body.
    With an authorizer, scrapes need a broker user's credentials and see what its ACLs let it
    describe.
    """

    def __init__(self, app: WsgiApp, endpoint: MetricsEndpoint, ssl_context: ssl.SSLContext | None = None) -> None:
        self._httpd: WSGIServer
        self._thread: threading.Thread
        self._httpd, self._thread = serve(app, endpoint.host, endpoint.port, ssl_context)
        self.host = endpoint.host
        self.port: int = self._httpd.server_port
        self.url = endpoint.url(self.port)

    @classmethod
    def for_broker(cls, context: BrokerContext, connections: Callable[[], Sequence[_Listener]],
                   endpoint: MetricsEndpoint, ssl_context: ssl.SSLContext | None = None) -> MetricsServer:
        cfg = context.config
        lag = BrokerLag(context, intervals=cfg.metrics_lag_window_intervals,
                        min_distance_ms=cfg.metrics_lag_min_distance_ms)
        collector = BrokerMetricsCollector(context, connections, lag)
        access = None
        if context.authorizer is not None:
            users = BrokerUsers(context.security_store,
                                [sec.plain_users for sec in cfg.listener_security.values() if sec.plain_users])
            delay_s = max(0, int(cfg.get("connection.failed.authentication.delay.ms"))) / 1000
            access = MetricsAccess(context.authorizer, users, context.principal_mapper, delay_s)
        return cls(metrics_app(collector, access), endpoint, ssl_context)

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)
