"""``/compatibility``: test a schema against a subject without registering it."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends
from seaway.schema_registry.api.common import Flag, get_service, json_body, schema_request
from seaway.schema_registry.api.paths import SubjectRoute
from seaway.schema_registry.compatibility import CompatibilityResult
from seaway.schema_registry.service import RegistryService, parse_version

__all__ = ["router"]

router = APIRouter(prefix="/compatibility", tags=["compatibility"], route_class=SubjectRoute)

Service = Annotated[RegistryService, Depends(get_service)]
Body = Annotated[Any, Depends(json_body)]


def _response(result: CompatibilityResult, verbose: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"is_compatible": result.is_compatible}
    if verbose and result.messages:
        out["messages"] = result.messages
    return out


@router.post("/subjects/{subject}/versions/{version}")
def check_version(
    subject: str, version: str, service: Service, body: Body, normalize: Flag = False, verbose: Flag = False
) -> dict[str, Any]:
    spec = parse_version(version)
    result = service.test_compatibility(subject, spec, schema_request(body), normalize=normalize)
    return _response(result, verbose)


@router.post("/subjects/{subject}/versions")
def check_versions(
    subject: str, service: Service, body: Body, normalize: Flag = False, verbose: Flag = False
) -> dict[str, Any]:
    result = service.test_compatibility(subject, None, schema_request(body), normalize=normalize)
    return _response(result, verbose)
