"""The published OpenAPI document, made to say what the API really answers.

FastAPI documents every route with its success response plus a 422 "validation error" that
this API never sends (validation errors are Kafka's 400s, see :mod:`seaway.connect.rest.errors`).
:func:`install_openapi` replaces that with the error responses each operation can give, all
with Kafka Connect's ``{"error_code", "message"}`` body, so a client generated from the
document (or a conformance checker such as schemathesis) sees the real contract:

====  ======================================================================================
400   malformed input: bad JSON, a wrong type in a query or path parameter, an invalid config
403   ``/topics`` endpoints with topic tracking (or its reset) disabled
404   an unknown connector, task, plugin or logger (any path with a ``{parameter}``)
409   ``/connectors/...``: the connector exists, or a rebalance is under way (distributed mode)
413   a request body over ``rest.request.max.bytes``
415   a POST/PUT/PATCH body not declared as JSON
500   a herder call that timed out or failed unexpectedly (as Kafka's 500 with the message)
503   ``/health`` while the worker starts
====  ======================================================================================
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

__all__ = ["ERROR_SCHEMA", "error_statuses", "install_openapi"]

ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "title": "ErrorMessage",
    "properties": {"error_code": {"type": "integer"}, "message": {"type": "string"}},
    "required": ["error_code", "message"],
}
"""Kafka Connect's ``ErrorMessage``."""

_DESCRIPTIONS = {
    400: "Bad request", 403: "Forbidden", 404: "Not found", 409: "Conflict", 413: "Request body too large",
    415: "Unsupported media type", 500: "Internal server error", 503: "Worker still starting",
}
_BODY_METHODS = frozenset({"post", "put", "patch"})


def error_statuses(method: str, path: str, operation: dict[str, Any]) -> set[int]:
    """The error statuses ``method path`` can answer (the table in the module docstring)."""
    statuses = {500}
    if operation.get("parameters") or "requestBody" in operation or method in _BODY_METHODS:
        statuses.add(400)
    if "{" in path:
        statuses.add(404)
    if path.startswith("/connectors"):
        statuses.add(409)
    if method in _BODY_METHODS:
        statuses |= {413, 415}
    if path.endswith(("/topics", "/topics/reset")):
        statuses.add(403)
    if path == "/health":
        statuses.add(503)
    return statuses


def _document(schema: dict[str, Any]) -> dict[str, Any]:
    components = schema.setdefault("components", {}).setdefault("schemas", {})
    components.pop("HTTPValidationError", None)
    components.pop("ValidationError", None)
    components["ErrorMessage"] = ERROR_SCHEMA
    error = {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorMessage"}}}
    for path, operations in schema.get("paths", {}).items():
        for method, operation in operations.items():
            responses: dict[str, Any] = operation.setdefault("responses", {})
            responses.pop("422", None)
            for status in sorted(error_statuses(method, path, operation)):
                responses.setdefault(str(status), {"description": _DESCRIPTIONS[status], "content": error})
    _link_created_connectors(schema.get("paths", {}))
    return schema


def _link_created_connectors(paths: dict[str, Any]) -> None:
    """OpenAPI links from a created connector to every operation on ``/connectors/{connector}...``.

    They tell clients (and stateful testers) that the name in a create response is what those
    paths take: ``POST /connectors`` answers 201 with ``{"name": ...}``.
    """
    links: dict[str, Any] = {}
    for path, operations in paths.items():
        if not path.startswith("/connectors/{connector}"):
            continue
        for operation in operations.values():
            parameters = {"connector": "$response.body#/name"}
            if "{task}" in path:
                parameters["task"] = "0"
            links[operation["operationId"]] = {"operationId": operation["operationId"], "parameters": parameters}
    created = paths.get("/connectors", {}).get("post", {}).get("responses", {}).get("201")
    if created is not None and links:
        created["links"] = links


def install_openapi(app: FastAPI) -> None:
    """Serve the corrected document at ``app.openapi_url`` (built once, on first request)."""

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = _document(get_openapi(
                title=app.title, version=app.version, description=app.description, routes=app.routes))
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
