"""``/schemas``: schemas by global id, the listing, and the supported types."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import Response
from seaway.schema_registry.api.common import (
    Flag,
    JavaInt,
    RegistryJSONResponse,
    get_service,
    needs_parse,
    page,
    path_int,
    query_flag,
    query_value,
    raw_schema_response,
    response_cache,
    stored_schema_json,
    version_json,
)
from seaway.schema_registry.errors import schema_not_found
from seaway.schema_registry.schemas import SCHEMA_TYPES
from seaway.schema_registry.service import RegistryService
from starlette.concurrency import run_in_threadpool

__all__ = ["get_schema", "router"]

router = APIRouter(prefix="/schemas", tags=["schemas"])

Service = Annotated[RegistryService, Depends(get_service)]


async def get_schema(request: Request) -> Response:
    """``GET /schemas/ids/{schema_id}``: what every deserializer asks for each new id.

    A hot route (see ``api/__init__.py``): answered on the event loop from cached bytes, its
    path and query parameters (``subject``, ``format``, ``fetchMaxId``) read by hand, because
    FastAPI's per-parameter validation costs more than the answer itself.
    """
    schema_id = path_int(request, "schema_id")
    service: RegistryService = request.app.state.service
    format = query_value(request, "format")
    fetch_max_id = query_flag(request, "fetchMaxId")
    stored = service.find_schema(schema_id)
    if stored is None:
        raise schema_not_found(schema_id)
    parse = needs_parse(format, stored.schema_type, stored.references)
    if not fetch_max_id and not parse:
        return response_cache(request).schema(stored)
    if parse:
        out = await run_in_threadpool(stored_schema_json, service, stored, format)
    else:
        out = stored_schema_json(service, stored, format)
    if fetch_max_id:
        out["maxId"] = service.store.max_id
    return RegistryJSONResponse(out)


@router.get("")
def list_schemas(
    service: Service,
    subject_prefix: Annotated[str, Query(alias="subjectPrefix")] = "",
    deleted: Flag = False,
    latest_only: Annotated[Flag, Query(alias="latestOnly")] = False,
    offset: int = 0,
    limit: int = -1,
) -> list[dict[str, Any]]:
    versions = service.list_schemas(subject_prefix, deleted=deleted, latest_only=latest_only)
    return [version_json(service, sv) for sv in page(versions, offset, limit)]


@router.get("/types")
def schema_types() -> list[str]:
    """The schema types this registry serves, in Confluent's order."""
    return list(SCHEMA_TYPES)


@router.get("/ids/{schema_id}/schema")
def get_raw_schema(
    schema_id: JavaInt, service: Service, subject: str | None = None, format: str | None = None
) -> Response:
    return raw_schema_response(service, service.get_schema(schema_id), format)


@router.get("/ids/{schema_id}/subjects")
def get_schema_subjects(
    schema_id: JavaInt,
    service: Service,
    subject: str | None = None,
    deleted: Flag = False,
    offset: int = 0,
    limit: int = -1,
) -> list[str]:
    subjects = sorted({sv.subject for sv in service.schema_usages(schema_id, deleted=deleted)})
    if subject is not None:
        subjects = [s for s in subjects if s == subject]
    return page(subjects, offset, limit)


@router.get("/ids/{schema_id}/versions")
def get_schema_versions(
    schema_id: JavaInt,
    service: Service,
    subject: str | None = None,
    deleted: Flag = False,
    offset: int = 0,
    limit: int = -1,
) -> list[dict[str, Any]]:
    usages = service.schema_usages(schema_id, deleted=deleted)
    pairs = [{"subject": sv.subject, "version": sv.version} for sv in usages if subject in (None, sv.subject)]
    return page(pairs, offset, limit)
