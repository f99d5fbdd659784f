"""``/config``: compatibility level, global and per subject.

Confluent's asymmetry is kept on purpose: PUT takes ``{"compatibility": L}`` and echoes it,
GET answers ``{"compatibilityLevel": L}``.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query
from seaway.schema_registry.api.common import Flag, get_service, json_body
from seaway.schema_registry.api.paths import SubjectRoute
from seaway.schema_registry.errors import ErrorCode, RegistryError
from seaway.schema_registry.service import RegistryService

__all__ = ["router"]

router = APIRouter(prefix="/config", tags=["config"], route_class=SubjectRoute)

Service = Annotated[RegistryService, Depends(get_service)]
Body = Annotated[Any, Depends(json_body)]
DefaultToGlobal = Annotated[Flag, Query(alias="defaultToGlobal")]


def _update(service: RegistryService, subject: str | None, body: Any) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise RegistryError(ErrorCode.UNPROCESSABLE_ENTITY, "Request body must be a JSON object")
    normalize = body.get("normalize")
    if normalize is not None and not isinstance(normalize, bool):
        raise RegistryError(ErrorCode.UNPROCESSABLE_ENTITY, "Field 'normalize' must be a boolean")
    level = body.get("compatibility", body.get("compatibilityLevel"))
    return service.set_config(subject, level, normalize)


@router.get("")
def get_global_config(service: Service) -> dict[str, Any]:
    return service.get_config(None)


@router.put("")
def put_global_config(service: Service, body: Body) -> dict[str, Any]:
    return _update(service, None, body)


@router.delete("")
def delete_global_config(service: Service) -> dict[str, Any]:
    return service.delete_config(None)


@router.get("/{subject}")
def get_subject_config(
    subject: str, service: Service, default_to_global: DefaultToGlobal = False
) -> dict[str, Any]:
    return service.get_config(subject, default_to_global=default_to_global)


@router.put("/{subject}")
def put_subject_config(subject: str, service: Service, body: Body) -> dict[str, Any]:
    return _update(service, subject, body)


@router.delete("/{subject}")
def delete_subject_config(subject: str, service: Service) -> dict[str, Any]:
    return service.delete_config(subject)
