"""The registry's ``GET /metrics``: request latency per endpoint, schema and subject counts, leadership.

Confluent Schema Registry reports through JMX under ``kafka.schema.registry``:
``type=master-slave-role`` (1 on the leader), ``type=registered-count`` (schemas registered)
and ``type=jersey-metrics`` (per-endpoint request rates and latencies). The names here are
those beans as jmx_exporter's default rule spells them; the per-endpoint latency is a
Prometheus histogram labelled by method and route template rather than Jersey's
``<endpoint>.request-latency-avg`` attributes (docs/metrics.md).

The endpoint label is the matched route's template (``/subjects/{subject}/versions``), never
the raw path: paths come from the network, and a label per distinct path would let any client
grow the page without bound. Unmatched paths share one ``endpoint="unmatched"`` series.

Cost: one ASGI wrapper per request that reads a clock twice and adds to a list slot; the
families are built only when ``/metrics`` is scraped.
"""

from __future__ import annotations

import bisect
import time
from collections.abc import Awaitable, Callable, Iterator, MutableMapping
from typing import Any

from fastapi import FastAPI, Request, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector, CollectorRegistry
from seaway.schema_registry.service import RegistryService

__all__ = ["LATENCY_BUCKETS_MS", "RequestTimer", "install_metrics"]

LATENCY_BUCKETS_MS: tuple[float, ...] = (0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000)

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

_perf_ns = time.perf_counter_ns


class _EndpointStats:
    __slots__ = ("buckets", "errors", "sum_ms")

    def __init__(self) -> None:
        self.buckets = [0] * (len(LATENCY_BUCKETS_MS) + 1)
        self.sum_ms = 0.0
        self.errors = 0


class RequestTimer:
    """ASGI middleware: time from a request's arrival to its response's first byte, per endpoint."""

    def __init__(self, app: ASGIApp, stats: dict[tuple[str, str], _EndpointStats]) -> None:
        self.app = app
        self.stats = stats

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = _perf_ns()
        status = 500

        async def timed_send(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, timed_send)
        finally:
            route = scope.get("route")
            path = getattr(route, "path", None)
            key = (str(scope.get("method", "?")), path if isinstance(path, str) else "unmatched")
            stats = self.stats.get(key)
            if stats is None:
                stats = self.stats[key] = _EndpointStats()
            ms = (_perf_ns() - started) / 1e6
            stats.buckets[bisect.bisect_left(LATENCY_BUCKETS_MS, ms)] += 1
            stats.sum_ms += ms
            if status >= 400:
                stats.errors += 1


class RegistryCollector(Collector):
    """The registry's families, built per scrape from the service and the request stats."""

    def __init__(self, service: RegistryService, stats: dict[tuple[str, str], _EndpointStats]) -> None:
        self._service = service
        self._stats = stats

    def collect(self) -> Iterator[Metric]:
        service = self._service
        store = service.store
        leader = service.leadership.is_leader()
        yield GaugeMetricFamily("kafka_schema_registry_master_slave_role_master_slave_role",
                                "1 on the leader (the instance that writes), 0 on a follower.",
                                value=1 if leader else 0)
        subjects = [list(versions.values()) for versions in list(store.subjects.values())]
        live_subjects = sum(1 for versions in subjects if any(not v.deleted for v in versions))
        versions = sum(len(v) for v in subjects)
        schema_ids = {v.schema_id for versions in subjects for v in versions}
        yield GaugeMetricFamily("kafka_schema_registry_registered_count_registered_count",
                                "Schema versions registered under subjects (soft-deleted included).", value=versions)
        yield GaugeMetricFamily("seaway_schema_registry_schemas", "Distinct schemas (ids) used by subject versions.",
                                value=len(schema_ids))
        yield GaugeMetricFamily("seaway_schema_registry_subjects", "Subjects with a live (not deleted) version.",
                                value=live_subjects)
        latency = HistogramMetricFamily("kafka_schema_registry_jersey_metrics_request_latency_ms",
                                        "Time from a request's arrival to its response, ms, per endpoint.",
                                        labels=["method", "endpoint"])
        errors = CounterMetricFamily("kafka_schema_registry_jersey_metrics_request_error",
                                     "Responses with a 4xx or 5xx status, per endpoint.",
                                     labels=["method", "endpoint"])
        for (method, endpoint), stats in sorted(self._stats.items()):
            running = 0
            cumulative: list[tuple[str, float]] = []
            for bound, count in zip((*LATENCY_BUCKETS_MS, float("inf")), list(stats.buckets), strict=True):
                running += count
                cumulative.append(("+Inf" if bound == float("inf") else f"{bound:g}", running))
            latency.add_metric([method, endpoint], cumulative, sum_value=stats.sum_ms)
            errors.add_metric([method, endpoint], stats.errors)
        yield latency
        yield errors


def install_metrics(app: FastAPI, service: RegistryService) -> None:
    """Add ``GET /metrics`` and the request timer. Call before the authentication middleware
    is installed, so that it guards ``/metrics`` too and times only authenticated requests."""
    stats: dict[tuple[str, str], _EndpointStats] = {}
    registry = CollectorRegistry(auto_describe=False)
    registry.register(RegistryCollector(service, stats))

    async def metrics(request: Request) -> Response:
        return Response(generate_latest(registry), media_type=CONTENT_TYPE_LATEST)

    app.add_api_route("/metrics", metrics, methods=["GET"], include_in_schema=False)
    app.add_middleware(RequestTimer, stats=stats)
