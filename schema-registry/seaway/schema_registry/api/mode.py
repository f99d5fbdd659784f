"""``/mode``: READWRITE / READONLY / READONLY_OVERRIDE / IMPORT, global and per subject."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query
from seaway.schema_registry.api.common import Flag, get_service, json_body
from seaway.schema_registry.api.paths import SubjectRoute
from seaway.schema_registry.errors import ErrorCode, RegistryError
from seaway.schema_registry.service import RegistryService

__all__ = ["router"]

router = APIRouter(prefix="/mode", tags=["mode"], route_class=SubjectRoute)

Service = Annotated[RegistryService, Depends(get_service)]
Body = Annotated[Any, Depends(json_body)]
DefaultToGlobal = Annotated[Flag, Query(alias="defaultToGlobal")]


def _update(service: RegistryService, subject: str | None, body: Any, force: bool) -> dict[str, str]:
    if not isinstance(body, dict):
        raise RegistryError(ErrorCode.UNPROCESSABLE_ENTITY, "Request body must be a JSON object")
    return {"mode": service.set_mode(subject, body.get("mode"), force=force).value}


@router.get("")
def get_global_mode(service: Service) -> dict[str, str]:
    return {"mode": service.get_mode(None).value}


@router.put("")
def put_global_mode(service: Service, body: Body, force: Flag = False) -> dict[str, str]:
    return _update(service, None, body, force)


@router.delete("")
def delete_global_mode(service: Service, recursive: Flag = False) -> dict[str, str]:
    return {"mode": service.delete_mode(None).value}


@router.get("/{subject}")
def get_subject_mode(
    subject: str, service: Service, default_to_global: DefaultToGlobal = False
) -> dict[str, str]:
    return {"mode": service.get_mode(subject, default_to_global=default_to_global).value}


@router.put("/{subject}")
def put_subject_mode(subject: str, service: Service, body: Body, force: Flag = False) -> dict[str, str]:
    return _update(service, subject, body, force)


@router.delete("/{subject}")
def delete_subject_mode(subject: str, service: Service, recursive: Flag = False) -> dict[str, Any]:
    return {"mode": service.delete_mode(subject).value}
