"""``GET /`` (server info) and ``GET /health`` (KIP-1017)."""

from __future__ import annotations

import importlib.metadata
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from seaway.connect.rest.deps import herder_of
from seaway.connect.rest.forwarding import HerderRoute

__all__ = ["router", "seaway_version"]

router = APIRouter(route_class=HerderRoute, tags=["root"])

HEALTHY = "Worker has completed startup and is ready to handle requests."
STARTING = "Worker is still starting up."


def seaway_version() -> str:
    """The installed ``seaway`` distribution's version (``GET /`` reports it)."""
    try:
        return importlib.metadata.version("seaway")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


@router.get("/", summary="Worker version and the Kafka cluster it belongs to")
async def server_info(request: Request) -> dict[str, Any]:
    herder = herder_of(request)
    return {"version": seaway_version(), "commit": request.app.state.commit,
            "kafka_cluster_id": herder.kafka_cluster_id}


@router.get("/health", summary="Whether the worker finished starting up")
async def health(request: Request) -> JSONResponse:
    herder = herder_of(request)
    try:
        ready = herder.is_ready()
    except Exception as exc:  # a broken herder is unhealthy, not a crash of the endpoint
        return JSONResponse({"status": "unhealthy", "message": f"Worker is unhealthy: {exc}"}, status_code=500)
    if not ready:
        return JSONResponse({"status": "starting", "message": STARTING}, status_code=503)
    return JSONResponse({"status": "healthy", "message": HEALTHY})
