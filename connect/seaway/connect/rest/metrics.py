"""``GET /metrics``: the worker's Kafka Connect metrics in Prometheus text format.

Served by the REST app itself (no second port), so it sits behind the same HTTPS and basic
authentication as every other endpoint. Each scrape gathers the herder's statuses (the
states of this worker's connectors and tasks) and reads the per-task counters of the tasks this worker runs
(:mod:`seaway.connect.runtime.metrics`); nothing is computed between scrapes.
"""

from __future__ import annotations

import logging

from fastapi import APIRouter, Request, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from prometheus_client.registry import CollectorRegistry
from seaway.connect.api.errors import NotFoundError
from seaway.connect.rest.deps import herder_of
from seaway.connect.runtime.herder import Herder, HerderError
from seaway.connect.runtime.metrics import RebalanceMetrics, WorkerCollector, WorkerSnapshot, task_snapshots

__all__ = ["router", "worker_snapshot"]

log = logging.getLogger(__name__)

router = APIRouter(tags=["metrics"])


async def worker_snapshot(herder: Herder) -> WorkerSnapshot:
    """The connectors and tasks of this worker with their states, for one scrape."""
    connector_states: dict[str, str] = {}
    by_task: dict[tuple[str, int], str] = {}
    for name in await herder.connectors():
        try:
            status = await herder.connector_status(name)
        except (HerderError, NotFoundError):
            # deleted meanwhile, or no status yet (a worker that has read the connector's config but not
            # yet its first status record: right after a create, on every worker but the one running it):
            # not a scrape failure, the connector is left out of this scrape
            continue
        connector_states[name] = status.connector.state.value
        for t in status.tasks:
            by_task[(name, t.id)] = t.state.value
    worker = getattr(herder, "worker", None)  # the standalone and distributed herders run a Worker
    if worker is None:
        return WorkerSnapshot(connectors=connector_states)
    local = {name: connector_states.get(name, "UNASSIGNED") for name in list(worker.connectors)}
    tasks = task_snapshots(list(worker.tasks.items()), by_task)
    rebalance = getattr(getattr(herder, "membership", None), "rebalance", None)  # distributed workers only
    return WorkerSnapshot(connectors=local, tasks=tasks,
                          startup=getattr(worker, "metrics_group", None),
                          rebalance=rebalance if isinstance(rebalance, RebalanceMetrics) else None)


@router.get("/metrics", summary="Kafka Connect metrics in Prometheus text format",
            response_class=Response, responses={200: {"content": {CONTENT_TYPE_LATEST: {}}}})
async def metrics(request: Request) -> Response:
    snapshot = await worker_snapshot(herder_of(request))
    registry = CollectorRegistry(auto_describe=False)
    registry.register(WorkerCollector(snapshot))
    return Response(generate_latest(registry), media_type=CONTENT_TYPE_LATEST)
