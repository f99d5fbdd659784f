"""``/``, ``/contexts`` and ``/v1/metadata/*``: the small endpoints."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

__all__ = ["SERVER_VERSION", "router"]

SERVER_VERSION = "0.1.0"

router = APIRouter(tags=["root"])


@router.get("/")
def root() -> dict[str, Any]:
    return {}


@router.get("/contexts")
def contexts(offset: int = 0, limit: int = -1) -> list[str]:
    """Only the default context exists: qualified subjects (``:.ctx:name``) are plain names here."""
    return ["."]


@router.get("/v1/metadata/id")
def metadata_id(request: Request) -> dict[str, Any]:
    settings = request.app.state.settings
    cluster_id = getattr(request.app.state.service.log, "cluster_id", None) or ""
    return {
        "scope": {
            "path": [],
            "clusters": {
                "kafka-cluster": cluster_id,
                "schema-registry-cluster": settings.schema_registry_group_id,
            },
        }
    }


@router.get("/v1/metadata/version")
def metadata_version() -> dict[str, Any]:
    return {"version": SERVER_VERSION, "commitId": ""}
