"""``/subjects``: list, register, look up, read and delete subject versions."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import Response
from seaway.schema_registry.api.common import (
    Flag,
    RegistryJSONResponse,
    get_service,
    json_body,
    needs_parse,
    page,
    query_flag,
    query_value,
    raw_schema_response,
    read_body,
    response_cache,
    schema_request,
    schema_request_body,
    version_json,
)
from seaway.schema_registry.api.paths import SubjectRoute, path_param
from seaway.schema_registry.service import RegistryService, parse_version
from starlette.concurrency import run_in_threadpool

__all__ = ["lookup", "router"]

router = APIRouter(prefix="/subjects", tags=["subjects"], route_class=SubjectRoute)

Service = Annotated[RegistryService, Depends(get_service)]
Body = Annotated[Any, Depends(json_body)]


async def lookup(request: Request) -> Response:
    """``POST /subjects/{subject}``: what serializers ask when a producer starts.

    A hot route (see ``api/__init__.py``): on the event loop when the text was seen before;
    query parameters (``normalize``, ``deleted``, ``format``) read by hand.
    """
    subject = path_param(request, "subject")
    service: RegistryService = request.app.state.service
    normalize, deleted = query_flag(request, "normalize"), query_flag(request, "deleted")
    format = query_value(request, "format")
    schema = schema_request_body(await read_body(request))
    sv = service.lookup_nowait(subject, schema, normalize=normalize, deleted=deleted)
    if sv is None:  # a new text to parse, or the state lock is busy: off the event loop
        sv = await run_in_threadpool(service.lookup, subject, schema, normalize=normalize, deleted=deleted)
    if needs_parse(format, sv.schema_type, sv.references):
        return RegistryJSONResponse(await run_in_threadpool(version_json, service, sv, format))
    return response_cache(request).version(sv)


@router.get("")
def list_subjects(
    service: Service,
    subject_prefix: Annotated[str, Query(alias="subjectPrefix")] = "",
    deleted: Flag = False,
    deleted_only: Annotated[Flag, Query(alias="deletedOnly")] = False,
    offset: int = 0,
    limit: int = -1,
) -> list[str]:
    prefix = "" if subject_prefix in (":*:", ":.:") else subject_prefix
    return page(service.list_subjects(prefix, deleted=deleted, deleted_only=deleted_only), offset, limit)


@router.get("/{subject}/versions")
def list_versions(
    subject: str,
    service: Service,
    deleted: Flag = False,
    deleted_only: Annotated[Flag, Query(alias="deletedOnly")] = False,
    deleted_as_negative: Annotated[Flag, Query(alias="deletedAsNegative")] = False,
    offset: int = 0,
    limit: int = -1,
) -> list[int]:
    if deleted_as_negative:
        versions = service.list_versions(subject, deleted=True)
        soft = set(service.list_versions(subject, deleted_only=True)) if versions else set()
        numbers = [-v if v in soft else v for v in versions]
    else:
        numbers = service.list_versions(subject, deleted=deleted, deleted_only=deleted_only)
    return page(numbers, offset, limit)


@router.post("/{subject}/versions")
def register(
    subject: str,
    service: Service,
    body: Body,
    normalize: Flag = False,
    format: str | None = None,
    force: Flag = False,
) -> dict[str, Any]:
    return {"id": service.register(subject, schema_request(body), normalize=normalize)}


@router.get("/{subject}/versions/{version}")
def get_version(
    subject: str, version: str, service: Service, deleted: Flag = False, format: str | None = None
) -> dict[str, Any]:
    return version_json(
        service, service.get_version(subject, parse_version(version), deleted=deleted), format
    )


@router.get("/{subject}/versions/{version}/schema")
def get_version_schema(
    subject: str, version: str, service: Service, deleted: Flag = False, format: str | None = None
) -> Response:
    sv = service.get_version(subject, parse_version(version), deleted=deleted)
    return raw_schema_response(service, sv.stored, format)


@router.get("/{subject}/versions/{version}/referencedby")
def referenced_by(
    subject: str, version: str, service: Service, offset: int = 0, limit: int = -1
) -> list[int]:
    return page(service.referenced_by(subject, parse_version(version)), offset, limit)


@router.delete("/{subject}")
def delete_subject(subject: str, service: Service, permanent: Flag = False) -> list[int]:
    return service.delete_subject(subject, permanent=permanent)


@router.delete("/{subject}/versions/{version}")
def delete_version(subject: str, version: str, service: Service, permanent: Flag = False) -> int:
    return service.delete_version(subject, parse_version(version), permanent=permanent)
