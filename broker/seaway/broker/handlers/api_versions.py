"""ApiVersions: the versions this broker serves, derived from the handler registry."""

from __future__ import annotations

from seaway.broker.context import RequestContext
from seaway.broker.handlers.registry import HANDLERS, handles
from seaway.protocol.errors import UnsupportedVersionError
from seaway.protocol.messages.api_versions_request import ApiVersionsRequest
from seaway.protocol.messages.api_versions_response import ApiVersion, ApiVersionsResponse

__all__ = ["api_versions_response", "unsupported_version_response"]


def _api_keys() -> list[ApiVersion]:
    return [
        ApiVersion(api_key=key, min_version=spec.min_version, max_version=spec.max_version)
        for key, spec in sorted(HANDLERS.items())
    ]


def api_versions_response() -> ApiVersionsResponse:
    return ApiVersionsResponse(error_code=0, api_keys=_api_keys())


def unsupported_version_response() -> ApiVersionsResponse:
    """Kafka's answer to an ApiVersions version it does not know: v0 + the ranges."""
    return ApiVersionsResponse(error_code=UnsupportedVersionError.code, api_keys=_api_keys())


@handles(ApiVersionsRequest, ApiVersionsResponse)
async def handle_api_versions(ctx: RequestContext, request: ApiVersionsRequest) -> ApiVersionsResponse:
    return api_versions_response()
